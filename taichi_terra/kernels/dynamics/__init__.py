"""Dynamics of the links: free velocities and the position update."""
