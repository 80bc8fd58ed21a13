"""Benchmark scenes, shared by taichi_terra and the peer engines so both run the same work.

Terrain: 101 x 101 samples of z = 0.1 sin(pi x) cos(pi y) over 10 m x 10 m centred at the origin.
Bodies: a 0.1 m, 1 kg sphere or a 0.2 m, 1 kg cube, released at rest; friction 0.8, restitution 0,
dt = 1e-3 s, gravity -9.81 m/s^2. Env 0 starts at (0.25, 0.15, 0.3), the peer's single world; the
other envs start at scattered points of the same terrain, so the batch holds different contact states.
"""
from __future__ import annotations

import math

import numpy as np

SAMPLES = 101
SIZE = 10.0
DT = 1e-3
FRICTION = 0.8
START = (0.25, 0.15, 0.3)
SHAPES = ("sphere", "box")


def terrain_heights() -> np.ndarray:
    """Heights [m], index iy * 101 + ix, sample (ix, iy) at x = -5 + 0.1 ix, y = -5 + 0.1 iy."""
    xs = np.linspace(-SIZE / 2, SIZE / 2, SAMPLES)
    X, Y = np.meshgrid(xs, xs, indexing="xy")  # X[iy, ix]
    return (0.1 * np.sin(math.pi * X) * np.cos(math.pi * Y)).reshape(-1)


def start_positions(n_envs: int) -> np.ndarray:
    """Start positions [m], shape (n_envs, 3): env 0 at START, the rest on a golden-ratio scatter."""
    k = np.arange(n_envs)
    x = -4.0 + 8.0 * np.mod(k * 0.6180339887 + 0.53125, 1.0)
    y = -4.0 + 8.0 * np.mod(k * 0.7548776662 + 0.51875, 1.0)
    pos = np.stack([x, y, np.full(n_envs, START[2])], axis=1)
    pos[0] = START
    return pos


def build_taichi_terra(shape: str, n_envs: int):
    """The scene in taichi_terra; returns (world, body)."""
    import taichi_terra as tt

    world = tt.World(dt=DT, n_envs=n_envs)
    world.set_default_material(FRICTION, 0.0)
    world.add_heightmap(SAMPLES, SAMPLES, SIZE, SIZE, 0.0, 0.0, terrain_heights())
    if shape == "sphere":
        body = world.add_sphere(0.1, 1.0)
    elif shape == "box":
        body = world.add_box(0.2, 0.2, 0.2, 1.0)
    else:
        raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")
    body.set_position(start_positions(n_envs))
    return world, body
