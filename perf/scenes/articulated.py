"""Articulated systems: a hanging 60-link chain, and the 30 kg quadruped of ``tests/data/urdf/quadruped.urdf``
standing under PD on a height map (shared with MuJoCo, ``perf/peers/mujoco_articulated.py``) or on a soil bed."""
from __future__ import annotations

import re

import numpy as np

from ..timing import ROOT

URDF = ROOT / "tests" / "data" / "urdf"
#: the quadruped's standing joint angles (hip abduction, hip flexion, knee of each leg) [rad]
STAND = [0.0, 0.6, -1.2] * 4
#: where the free quadruped's trunk settles on its bed [m] (measured at 1.5 s, tolerance 1e-6 m/s)
FREE_TRUNK_HEIGHT = 0.40396


def chain_world(n_envs: int):
    """``make_chain_urdf(60)`` on a fixed base at 10 m, every joint at 0.05 rad; returns (world, system)."""
    import taichi_terra as tt
    from taichi_terra.bodies.urdf import make_chain_urdf

    world = tt.World(dt=1e-3, n_envs=n_envs)
    system = world.add_articulated_system(make_chain_urdf(60), base="fixed", position=(0.0, 0.0, 10.0))
    system.set_generalized_coordinate(np.full(60, 0.05))
    return world, system


def _stand(system, free: int) -> None:
    q = system.get_generalized_coordinate(0)
    q[q.size - 12:] = STAND
    system.set_generalized_coordinate(q)
    system.set_pd_gains(np.r_[np.zeros(free), np.full(12, 300.0)], np.r_[np.zeros(free), np.full(12, 20.0)])
    system.set_pd_target(q, np.zeros(free + 12))


def quadruped_world(n_envs: int, joint_friction: bool = True):
    """The quadruped at (0, 0, 0.46) m on a 65 x 65 height map over 4 m x 4 m, z = 0.02 sin(2 x), PD towards
    STAND (kp 300 N m/rad, kd 20 N m s/rad); without its URDF's Coulomb joint friction if not
    ``joint_friction``. Returns (world, system)."""
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    n = 65
    x = np.linspace(-2.0, 2.0, n)
    world.add_heightmap(n, n, 4.0, 4.0, 0.0, 0.0, (0.02 * np.sin(2.0 * x)[None, :] * np.ones((n, 1))).ravel())
    xml = (URDF / "quadruped.urdf").read_text()
    if not joint_friction:  # (Coulomb joint friction rows take more sweeps: see docs/limitations.md)
        xml = re.sub(r'friction="[^"]*"', 'friction="0"', xml)
    system = world.add_articulated_system(xml, position=(0.0, 0.0, 0.46))
    _stand(system, 6)
    return world, system


def quadruped_soil_world(n_envs: int, base: str = "floating", height: float = 0.45):
    """The quadruped standing under PD on a 1 m soil bed of 41 x 41 samples (kphi 2e7, n 1), its ``base``
    "floating" or "fixed" at ``height`` [m]. Returns (world, system)."""
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    n = 41
    mat = tt.SoilMaterial(bekker_kphi=2e7, sinkage_exponent=1.0, damping=2e4)
    world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n), mat)
    system = world.add_articulated_system((URDF / "quadruped.urdf").read_text(), base=base,
                                          position=(0.0, 0.0, height))
    _stand(system, 6 if base == "floating" else 0)
    return world, system


def quadruped_fixed_world(n_envs: int):
    """The quadruped welded to the world at its trunk 2 mm below where the free one settles, its feet pressed
    into the same bed: what the feet's soil takes without the trunk coupling them."""
    return quadruped_soil_world(n_envs, "fixed", FREE_TRUNK_HEIGHT - 0.002)
