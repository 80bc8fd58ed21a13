"""The planar (2D) contact world: geometry, contacts and motion."""
