"""Bodies settling on a deformable soil bed (the bodies: ``perf/scenes/soil_bodies.py``)."""
from __future__ import annotations

import numpy as np

from . import soil_bodies

MATERIALS = ("linear", "nonlinear")


def material(kind: str):
    """The bench's soil: ``linear`` (kphi 1e5, n 1) or ``nonlinear`` (kphi 2e5, n 1.1), damping 3e4."""
    import taichi_terra as tt

    if kind == "linear":
        return tt.SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, damping=3e4)
    if kind == "nonlinear":
        return tt.SoilMaterial(bekker_kphi=2e5, sinkage_exponent=1.1, damping=3e4)
    raise ValueError(f"material must be one of {MATERIALS}, got {kind!r}")


def plate_world(n_envs: int):
    """The 20 kg plate on a 1 m bed of 41 x 41 samples at 2.5 cm (about 400 samples under it), linear soil;
    returns (world, sinkage(env) [m])."""
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    k = 41
    world.add_deformable_terrain(k, k, 1.0, 1.0, 0.0, 0.0, np.zeros(k * k), material("linear"))
    return world, soil_bodies.build("rigid", world, (0.0125, 0.0125))


def loaded_10k_world(n_envs: int):
    """A 200 kg, 1 m x 1 m plate released touching a 1.2 m bed of 121 x 121 samples at 1 cm, linear soil: 10,000
    samples under it (its edges midway between samples), each a soil row of the step; returns (world,
    sinkage(env) [m])."""
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    n = 121
    world.add_deformable_terrain(n, n, 1.2, 1.2, 0.0, 0.0, np.zeros(n * n), material("linear"))
    plate = world.add_box(1.0, 1.0, 0.05, 200.0)
    plate.set_position([0.005, 0.005, 0.025])
    return world, lambda env: -float(plate.get_position(env)[2] - 0.025)


def bed_world(n_envs: int, body: str = "rigid", kind: str = "nonlinear", start: str = "warm"):
    """Body ``body`` (``soil_bodies.KINDS``) released touching a 1.2 m bed of 103 x 103 samples (1.18 cm
    spacing, 1,734 samples under the plate), soil ``kind``, the terrain rows warm-started or not (``start``);
    returns (world, bed, sinkage(env) [m], material)."""
    import taichi_terra as tt

    mat = material(kind)
    n = 103  # spacing 1.2 / 102 m: the plate spans 34 x 51 spacings
    dx = 1.2 / (n - 1)
    world = tt.World(dt=1e-3, n_envs=n_envs)
    world.solver.terrain_warm_start = start == "warm"
    bed = world.add_deformable_terrain(n, n, 1.2, 1.2, 0.0, 0.0, np.zeros(n * n), mat)
    sinkage = soil_bodies.build(body, world, (0.5 * dx, 0.5 * dx))  # (plate x edges midway between samples)
    return world, bed, sinkage, mat


def stage_plate_world(n_envs: int):
    """The 20 kg, 0.4 x 0.6 m plate on a 103 x 103 bed (one static pair)."""
    import taichi_terra as tt

    n = 103
    w = tt.World(dt=1e-3, n_envs=n_envs)
    w.add_deformable_terrain(n, n, 1.2, 1.2, 0.0, 0.0, np.zeros(n * n), material("nonlinear"))
    w.add_box(0.4, 0.6, 0.02, 20.0).set_position([0.6 / (n - 1), 0.6 / (n - 1), 0.01])
    return w
