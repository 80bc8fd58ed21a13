"""Static terrain: height maps."""
