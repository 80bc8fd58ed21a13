"""Contact detection: broadphase, shape pairs against the ground, height maps and each other, ray casts."""
