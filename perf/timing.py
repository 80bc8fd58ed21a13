"""Timing helpers shared by the benchmarks: a world's first step (compilation included) and one timed round of
steps from a checkpoint."""
from __future__ import annotations

import time


def first_step(world) -> float:
    """Wall time [s] of ``world``'s first step, compilation included."""
    import taichi as ti

    t = time.perf_counter()
    world.step()
    ti.sync()
    return time.perf_counter() - t


def round_rate(world, snap, steps: int) -> float:
    """Env-steps per second of ``steps`` steps of ``world`` from checkpoint ``snap`` (every env counted)."""
    import taichi as ti

    world.restore(snap)
    ti.sync()
    t = time.perf_counter()
    world.step(steps)
    ti.sync()
    return world.n_envs * steps / (time.perf_counter() - t)
