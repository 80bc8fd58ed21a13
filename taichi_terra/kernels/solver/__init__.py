"""The contact solver: rows and their seam to the links, the rigid contact law, impacts, resting friction."""
