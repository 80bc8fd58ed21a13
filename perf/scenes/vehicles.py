"""Vehicles: the tracked robot on ridges (``taichi_terra.reference_scenes``), the off-road buggy of
``scenes/buggy_soil.py`` on its soil bed, and the soil-ruts scene of ``scenes/soil_ruts.py``."""
from __future__ import annotations

import importlib.util
import math
import types

import numpy as np

from ..timing import ROOT

DT = 1e-3  # [s], the buggy scene's
SOIL = dict(bekker_kphi=2.0e6, elastic_stiffness=2.0e7, damping=4.0e4, sinkage_exponent=1.1, cohesion=100.0)


def tracked_world(n_envs: int, *, speed: float | None = None, plain: bool = False):
    """The tracked robot with flippers on the ridges, its sprockets at ``speed`` [rad/s] (None: 4 rad/s);
    ``plain``: its belts' shapes as plain collision shapes of their links (:func:`plain_urdf`). Returns
    (world, system)."""
    from taichi_terra.bodies.tracked_robot import tracked_robot_urdf
    from taichi_terra.reference_scenes import SPROCKET_SPEED, tracked_ridges_world

    urdf = plain_urdf(tracked_robot_urdf(flippers=True)) if plain else None
    return tracked_ridges_world(n_envs, speed=SPROCKET_SPEED if speed is None else speed, urdf=urdf)


def _rpy(r: np.ndarray) -> tuple:
    """URDF roll, pitch, yaw of rotation ``r`` (``r = Rz(yaw) Ry(pitch) Rx(roll)``)."""
    pitch = math.asin(-max(-1.0, min(1.0, r[2, 0])))
    return math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])


def plain_urdf(urdf: str) -> str:
    """``urdf`` with every ``<track>`` removed and its belt's shapes added to its link as ``<collision>``."""
    import xml.etree.ElementTree as ET

    from taichi_terra.bodies.urdf import parse_urdf

    tracks = parse_urdf(urdf).tracks
    root = ET.fromstring(urdf)
    for elem in root.findall("track"):
        root.remove(elem)
    links = {link.get("name"): link for link in root.findall("link")}
    for track in tracks:
        for shape in track.shapes:
            col = ET.SubElement(links[track.link], "collision")
            r, p, y = _rpy(shape.rotation)
            ET.SubElement(col, "origin", xyz=" ".join(map(repr, map(float, shape.position))), rpy=f"{r!r} {p!r} {y!r}")
            geom = ET.SubElement(col, "geometry")
            if shape.kind == "box":
                ET.SubElement(geom, "box", size=" ".join(map(repr, map(float, shape.params))))
            else:
                ET.SubElement(geom, "cylinder", radius=repr(float(shape.params[0])),
                              length=repr(float(shape.params[1])))
    return ET.tostring(root, encoding="unicode")


def make_buggy():
    """``taichi_terra.bodies.buggy``, imported."""
    from taichi_terra.bodies import buggy

    return buggy


def _bed_and_buggy(n_envs: int, size: tuple, spacing: float, x0: float):
    import taichi_terra as tt

    mb = make_buggy()
    world = tt.World(dt=DT, n_envs=n_envs)
    nx, ny = round(size[0] / spacing) + 1, round(size[1] / spacing) + 1
    world.add_deformable_terrain(nx, ny, size[0], size[1], 0.0, 0.0, np.zeros(nx * ny), tt.SoilMaterial(**SOIL))
    buggy = mb.add_buggy(world, position=(x0, 0.0, mb.RIDE_HEIGHT), speed=0.8)
    return world, buggy


def buggy_world(n_envs: int, spacing: float = 0.04):
    """The scene's bed (16 m x 6 m at ``spacing`` [m]) and the buggy at its start, its rear drives requesting
    0.8 m/s and its wheels straight; returns (world, buggy)."""
    return _bed_and_buggy(n_envs, (16.0, 6.0), spacing, -6.0)


def buggy_50m_world(n_envs: int):
    """The buggy driving off on a 50 m x 50 m bed at 5 cm (1001 x 1001 samples, about a million: the size of
    Project Chrono's SCM benchmark patch)."""
    return _bed_and_buggy(n_envs, (50.0, 50.0), 0.05, -20.0)[0]


def buggy_on_ground(n_envs: int):
    """The buggy standing on the ground plane (nothing stepped: what a viewer draws); returns (world, buggy)."""
    import taichi_terra as tt

    world = tt.World(n_envs=n_envs)
    world.add_ground()
    return world, make_buggy().add_buggy(world)


def soil_ruts_module():
    """``scenes/soil_ruts.py``, loaded as a module."""
    spec = importlib.util.spec_from_file_location("soil_ruts", ROOT / "scenes" / "soil_ruts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ruts_world(n_envs: int, seconds: float = 6.0):
    """``scenes/soil_ruts.py``'s scene (a sled, a wheel and a ball on a 7,865-sample bed) for a timeline of
    ``seconds``; returns (world, scene), whose ``controller(world)`` the scene applies every 50 steps."""
    scene = soil_ruts_module().build(types.SimpleNamespace(envs=n_envs, seconds=seconds))
    return scene.world, scene
