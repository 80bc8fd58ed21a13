"""The world's clock: simulated time and steps taken, shared by the parts that report "nothing before the first
step" and restored with a checkpoint."""
from __future__ import annotations


class Clock:
    """Simulated time [s] since the start and steps taken (both as a checkpoint restores them)."""

    def __init__(self):
        self.time = 0.0
        self.steps = 0

    def advance(self, n_steps: int, dt: float) -> None:
        """Count ``n_steps`` steps of ``dt`` [s]."""
        self.time += n_steps * dt
        self.steps += n_steps
