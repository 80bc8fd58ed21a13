"""Free rigid bodies: on the sine terrain (shared with MuJoCo, ``perf/peers/mujoco_peer.py``), boxes on the ground
(spread or piled), a stack, and the one-env worlds whose static narrowphase is the largest share of a step.

The sine terrain: 101 x 101 samples of z = 0.1 sin(pi x) cos(pi y) over 10 m x 10 m centred at the origin.
Bodies: a 0.1 m, 1 kg sphere or a 0.2 m, 1 kg cube, released at rest; friction 0.8, restitution 0, dt = 1e-3 s,
gravity -9.81 m/s^2. Env 0 starts at (0.25, 0.15, 0.3), the peer's single world; the other envs start at
scattered points of the same terrain, so the batch holds different contact states.
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
LOOP_BODIES = 10


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


def _sine_terrain(n_envs: int):
    import taichi_terra as tt

    world = tt.World(dt=DT, n_envs=n_envs)
    world.set_default_material(FRICTION, 0.0)
    world.add_heightmap(SAMPLES, SAMPLES, SIZE, SIZE, 0.0, 0.0, terrain_heights())
    return world


def sine_world(n_envs: int, shape: str = "sphere"):
    """A sphere or a box (``shape``) on the sine terrain; returns (world, body)."""
    world = _sine_terrain(n_envs)
    if shape == "sphere":
        body = world.add_sphere(0.1, 1.0)
    elif shape == "box":
        body = world.add_box(0.2, 0.2, 0.2, 1.0)
    else:
        raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")
    body.set_position(start_positions(n_envs))
    return world, body


def control_loop_world(n_envs: int):
    """``LOOP_BODIES`` spheres in a row on the sine terrain."""
    world = _sine_terrain(n_envs)
    for k in range(LOOP_BODIES):
        world.add_sphere(0.1, 1.0).set_position([-3.6 + 0.8 * k, 0.15 * (k % 3), 0.3])
    return world


def boxes_world(n_envs: int, boxes: int = 27, layout: str = "bricks"):
    """``boxes`` 0.2 m boxes of 1 kg on the ground: ``spread`` on a grid 1 m apart (each touches only the
    ground) or ``bricks``, layers of side/2 x side/2 boxes, every other layer shifted by half a box."""
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    world.add_ground()
    side = int(np.ceil(np.sqrt(boxes)))
    for k in range(boxes):
        b = world.add_box(0.2, 0.2, 0.2, 1.0)
        if layout == "spread":
            b.set_position([(k % side) * 1.0, (k // side) * 1.0, 0.1])
        else:
            per = max(1, (side // 2) ** 2)
            layer, i = divmod(k, per)
            row = max(1, side // 2)
            shift = 0.1 * (layer % 2)
            b.set_position([(i % row) * 0.201 + shift, (i // row) * 0.201 + shift, 0.1 + 0.2005 * layer])
    return world


def stack_world(n_envs: int):
    """Five 20 cm boxes stacked on the ground, each 1 cm off the one below (rigid contacts resting)."""
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    world.add_ground()
    for k in range(5):
        world.add_box(0.2, 0.2, 0.2, 1.0).set_position([0.01 * k, 0.0, 0.1 + 0.2 * k])
    return world


def stage_boxes_world(n_envs: int):
    """1000 boxes on a 32-wide grid on the ground."""
    import taichi_terra as tt

    w = tt.World(dt=1e-3, n_envs=n_envs)
    w.add_ground()
    for k in range(1000):
        w.add_box(0.2, 0.2, 0.2, 1.0).set_position([(k % 32) * 1.0, (k // 32) * 1.0, 0.1])
    return w


def stage_heightmap_world(n_envs: int):
    """32 spheres and 32 boxes on a 64 x 64 height map of waves 0.1 m high."""
    import taichi_terra as tt

    w = tt.World(dt=1e-3, n_envs=n_envs)
    n = 64
    x = np.linspace(0.0, 6.0, n)
    w.add_heightmap(n, n, 6.4, 6.4, 0.0, 0.0, (0.1 * np.sin(x)[None, :] * np.ones((n, 1))).ravel())
    for k in range(64):
        b = w.add_sphere(0.1, 1.0) if k % 2 else w.add_box(0.2, 0.2, 0.2, 1.0)
        b.set_position([(k % 8) * 0.7 - 2.5, (k // 8) * 0.7 - 2.5, 0.25])
    return w
