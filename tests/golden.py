"""Golden trajectories: short runs of the scenes a rewrite of the step core must not change, recorded once into
``tests/data/golden.npz`` and replayed by ``tests/test_golden.py`` (cpu, f64).

    python tests/golden.py            # record every case again (only when the physics is meant to change)

Each case builds its world, then steps it in chunks and takes a snapshot after each chunk: every body's position,
orientation (w, x, y, z), linear and angular velocity in every env, soil histories, planar poses and velocities.
Forces a case applies (a drag) are set before each chunk from the state, as a controller would.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "golden.npz"


def _bodies_snapshot(world) -> np.ndarray:
    """(n_envs, n_bodies, 13): position, quaternion, linear and angular velocity."""
    cols = [np.concatenate([b.get_position(), b.get_orientation(), b.get_linear_velocity(),
                            b.get_angular_velocity()], axis=1) for b in world.bodies]
    return np.stack(cols, axis=1)


def _sine_heights() -> np.ndarray:
    """The benchmark terrain: 101 x 101 samples over 10 m x 10 m, 0.1 sin(pi x) cos(pi y) [m]."""
    xs = np.linspace(-5.0, 5.0, 101)
    X, Y = np.meshgrid(xs, xs, indexing="xy")
    return (0.1 * np.sin(math.pi * X) * np.cos(math.pi * Y)).reshape(-1)


def _on_sine(shape: str):
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=2)
    world.set_default_material(0.8, 0.0)
    world.add_heightmap(101, 101, 10.0, 10.0, 0.0, 0.0, _sine_heights())
    body = world.add_sphere(0.1, 1.0) if shape == "sphere" else world.add_box(0.2, 0.2, 0.2, 1.0)
    body.set_position(np.array([[0.25, 0.15, 0.3], [-1.3, 2.2, 0.3]]))
    body.set_linear_velocity(np.array([[0.0, 0.0, 0.0], [0.8, -0.3, 0.0]]))
    return world, None


def _box_pile():
    import taichi_terra as tt

    world = tt.World(dt=1e-3)
    world.add_ground()
    rng = np.random.default_rng(7)
    for layer in range(3):
        for i in range(4):
            b = world.add_box(0.2, 0.2, 0.2, 1.0)
            shift = 0.1 * (layer % 2)
            b.set_position([(i % 2) * 0.201 + shift + rng.uniform(-0.01, 0.01),
                            (i // 2) * 0.201 + shift + rng.uniform(-0.01, 0.01), 0.1 + 0.2005 * layer])
            b.set_orientation([math.cos(0.05 * layer), 0.0, 0.0, math.sin(0.05 * layer)])
    return world, None


def _soil_material():
    import taichi_terra as tt

    return tt.SoilMaterial(bekker_kphi=1.2e5, sinkage_exponent=1.0, elastic_stiffness=4e5, damping=2e3,
                           friction_coefficient=0.5, shear_displacement=0.02)


def _soil_plate():
    import taichi_terra as tt

    world = tt.World(dt=1e-3)
    world.add_deformable_terrain(41, 41, 1.0, 1.0, 0.0, 0.0, np.zeros(41 * 41), _soil_material())
    plate = world.add_box(0.4, 0.3, 0.1, 30.0)
    plate.set_position([0.013, -0.007, 0.0505])
    return world, None


def _dragged_sled():
    import taichi_terra as tt

    world = tt.World(dt=1e-3)
    world.add_deformable_terrain(61, 31, 1.5, 0.75, 0.0, 0.0, np.zeros(61 * 31), _soil_material())
    sled = world.add_box(0.3, 0.2, 0.08, 20.0)
    sled.set_position([-0.45, 0.0, 0.045])

    def drive(w):  # hold 0.6 m/s along x from 0.1 s on, and the lane; as a controller would, once per chunk
        if w.time >= 0.1:
            v = sled.get_linear_velocity(0)
            sled.set_external_force([20.0 * 10.0 * (0.6 - v[0]) + 0.5 * 20.0 * 9.81, -20.0 * 10.0 * v[1], 0.0])

    return world, drive


def _cradle():
    import taichi_terra as tt

    world = tt.World(dt=1e-3)
    world.set_material_pair_prop("steel", "steel", 0.0, 1.0)
    world.set_material_pair_prop("steel", "default", 0.0, 0.0)
    world.add_ground()
    balls = [world.add_sphere(0.05, 1.0, material="steel") for _ in range(5)]
    for k, b in enumerate(balls):
        b.set_position([0.1 * k, 0.0, 0.05])
    balls[0].set_position([-0.3, 0.0, 0.05])
    balls[0].set_linear_velocity([1.0, 0.0, 0.0])
    return world, None


def _planar_push():
    from taichi_terra import planar

    world = planar.World(dt=0.1, n_envs=2)
    robot = world.add_rectangle(0.6, 0.4, kinematics="diff", mass=20.0, friction=1.0)
    for i in range(10):
        world.add_rectangle(0.3, 0.3, mass=1.0, friction=0.5, position=(0.5 + 0.31 * i, 0.0))
    world.add_linestring([(3.94, -1.0), (3.94, 1.0)])
    robot.set_command(np.array([[0.5, 0.0], [0.45, 0.05]]))
    return world, None


#: case -> (builder returning (world, controller or None), steps per chunk, chunks)
CASES = {
    "sphere_on_sine_map": (lambda: _on_sine("sphere"), 150, 4),
    "box_on_sine_map": (lambda: _on_sine("box"), 150, 4),
    "box_pile": (_box_pile, 150, 4),
    "soil_plate": (_soil_plate, 100, 4),
    "dragged_sled_on_soil": (_dragged_sled, 100, 5),
    "newtons_cradle": (_cradle, 100, 4),
    "planar_push": (_planar_push, 5, 5),
}


def run(case: str) -> dict:
    """Run ``case`` and return its snapshots, arrays with the chunk axis first."""
    build, steps, chunks = CASES[case]
    world, controller = build()
    snaps: dict = {}
    for _ in range(chunks):
        if controller is not None:
            controller(world)
        world.step(steps)
        if getattr(world, "is_planar", False):
            snap = {"poses": world.get_poses(), "velocities": world.get_velocities()}
        else:
            snap = {"bodies": _bodies_snapshot(world)}
            for hm in world.heightmaps:
                if hm.is_soil:
                    for key, value in hm.get_soil_state(0).items():
                        snap[f"soil{hm.index}_{key}"] = value
        for key, value in snap.items():
            snaps.setdefault(key, []).append(np.asarray(value, float))
    return {key: np.stack(v) for key, v in snaps.items()}


def record() -> None:
    import taichi_terra as tt

    tt.init(arch="cpu", precision="f64")
    out = {}
    for case in CASES:
        for key, value in run(case).items():
            out[f"{case}/{key}"] = value
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **out)
    print(f"wrote {DATA} ({DATA.stat().st_size / 1024:.0f} KiB, {len(out)} arrays)")


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.exit("usage: python tests/golden.py  (records every case)")
    record()
