"""Resistive force theory: boxes carrying plates in sand, and the hexapod of ``scenes/hexapod_sand.py``."""
from __future__ import annotations

import importlib.util

import numpy as np

from ..timing import ROOT

ZETA = 3.75  # N/cm^3, RFT-SiM's play sand
DT = 1e-3  # s
PLATE_SCENES = ("12288", "6x500")


def plate_world(n_envs: int = 1, scene: str = "12288", mode: str = "force", gravity=(0.0, 0.0, 0.0),
                smoothing: float = 1.0, mass: float = 1.0):
    """A world with flat sand at z = 0 and bodies carrying plates, set moving: ``scene`` "12288" (four 10 cm
    cubes, plate area 2e-5 m^2: 3,072 plates each) or "6x500" (six 10 x 8 x 5 cm boxes, 8e-5 m^2: 500 each), of
    ``mass`` [kg] each. Body 0 is upright and moves straight down (horizontal plates with no horizontal
    velocity); the others are turned (body 1 about z only) and move and spin (seeded). Returns (world, bodies,
    plate sets)."""
    import taichi_terra as tt

    if scene not in PLATE_SCENES:
        raise ValueError(f"scene must be one of {PLATE_SCENES}, got {scene!r}")
    rng = np.random.default_rng(3)
    world = tt.World(dt=DT, gravity=gravity, n_envs=n_envs)
    world.add_granular_medium(0.0, zeta=ZETA, smoothing=smoothing, mode=mode)
    size, area, count = ((0.1, 0.1, 0.1), 2e-5, 4) if scene == "12288" else ((0.1, 0.08, 0.05), 8e-5, 6)
    bodies, sets = [], []
    for i in range(count):
        body = world.add_box(*size, mass)
        body.set_position((0.3 * i, 0.0, (-0.09, -0.03, -0.12, -0.06, -0.02, -0.15)[i]))
        if i == 0:
            body.set_linear_velocity((0.0, 0.0, -0.05))
        else:
            quat = (np.r_[np.cos(0.35), 0.0, 0.0, np.sin(0.35)] if i == 1 else rng.normal(size=4))
            body.set_orientation(quat)
            body.set_linear_velocity(rng.uniform(-0.1, 0.1, 3) - [0.0, 0.0, 0.03])
            body.set_angular_velocity(rng.uniform(-1.0, 1.0, 3))
        bodies.append(body)
        sets.append(world.add_plates(body, area=area))
    return world, bodies, sets


def walking_world(n_envs: int, mode: str = "row"):
    """The "6x500" boxes at 2 kg, upright (turned about z), their bottoms 2 mm deep, each sliding at 0.1 m/s in
    its own direction and sinking at 0.05 m/s, under gravity with smoothing 0.1 (RFT-SiM's); ``mode`` "force"
    or "row". (Buried deep, a light box takes far more than its weight from the sand: explicit forces then throw
    it out.) Returns (world, bodies, plate sets)."""
    world, bodies, sets = plate_world(n_envs, "6x500", mode, gravity=(0.0, 0.0, -9.81), smoothing=0.1, mass=2.0)
    for i, body in enumerate(bodies):
        yaw = 0.5 * i
        body.set_orientation((np.cos(0.5 * yaw), 0.0, 0.0, np.sin(0.5 * yaw)))
        body.set_position((0.3 * i, 0.0, 0.025 - 0.002))
        body.set_linear_velocity((0.1 * np.cos(1.1 * i), 0.1 * np.sin(1.1 * i), -0.05))
        body.set_angular_velocity((0.0, 0.0, 0.0))
    return world, bodies, sets


def hexapod_module():
    """``scenes/hexapod_sand.py``, loaded as a module."""
    spec = importlib.util.spec_from_file_location("hexapod_sand", ROOT / "scenes" / "hexapod_sand.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hexapod_world(n_envs: int):
    """The hexapod in row-mode sand with 500 plates per foot; returns (world, robot, the scene's module), whose
    ``set_gait(robot, time)`` sets its servo targets."""
    import taichi_terra as tt

    hexapod = hexapod_module()
    world = tt.World(dt=DT, n_envs=n_envs)
    world.add_granular_medium(0.0, zeta=ZETA, smoothing=1.0, mode="row")
    robot = hexapod.add_hexapod(world, 0.0, plates=500)
    return world, robot, hexapod
