"""Granular media by resistive force theory: the force law of one plate and the plates' forces in a step."""
