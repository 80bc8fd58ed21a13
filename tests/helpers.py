"""Scene builders shared by the physics tests."""
import contextlib
import math

import numpy as np

import taichi_terra as tt

G = 9.81


@contextlib.contextmanager
def specializing(on: bool):
    """``taichi_terra.init``'s ``specialize`` set to ``on`` for the worlds compiled inside, set back to the
    suite's (off, ``conftest.py``) after."""
    from taichi_terra import backend

    cfg = backend.config()
    tt.init(cfg["arch"], cfg["precision"], cfg["threads"], specialize=on)
    try:
        yield
    finally:
        tt.init(cfg["arch"], cfg["precision"], cfg["threads"], specialize=False)

#: the standing pose of tests/data/urdf/quadruped.urdf: hip abduction, hip flexion, knee of each leg [rad]
STAND = [0.0, 0.6, -1.2] * 4


def rot_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def flat_map(world, nx, ny, x_size, y_size, **kw):
    """A flat height map (all heights 0) centred on its frame origin."""
    return world.add_heightmap(nx, ny, x_size, y_size, 0.0, 0.0, np.zeros(nx * ny), **kw)


def slope_world(angle, friction, shape, gravity=(0.0, 0.0, -G), rotate_map=True, n_envs=1):
    """A flat 14 m x 4 m map tilted by ``angle`` about y (downhill towards +x), or left flat with
    gravity given by the caller. Returns (world, body, map rotation R). The body starts at rest, touching
    the surface at map-frame x = -5.5 m (mid-cell)."""
    world = tt.World(dt=1e-3, gravity=gravity, n_envs=n_envs)
    world.set_material_pair_prop("body", "slope", friction, 0.0)
    hm = flat_map(world, 15, 5, 14.0, 4.0, material="slope")
    R = rot_y(angle) if rotate_map else np.eye(3)
    hm.set_orientation(R)
    if shape == "sphere":
        body = world.add_sphere(0.1, 1.0, material="body")
        local, orient = np.array([-5.5, 0.0, 0.1]), np.eye(3)
    elif shape == "box":
        body = world.add_box(0.2, 0.2, 0.2, 1.0, material="body")
        local, orient = np.array([-5.5, 0.0, 0.1]), np.eye(3)
    elif shape == "capsule":  # lying with its axis along y, so it rolls downhill
        body = world.add_capsule(0.1, 0.3, 1.0, material="body")
        local, orient = np.array([-5.5, 0.0, 0.1]), rot_x(math.pi / 2)
    elif shape == "cylinder":  # lying on its side, axis along y
        body = world.add_cylinder(0.1, 0.3, 1.0, material="body")
        local, orient = np.array([-5.5, 0.0, 0.1]), rot_x(math.pi / 2)
    else:
        raise ValueError(shape)
    body.set_position(R @ local)
    body.set_orientation(R @ orient)
    return world, body, R
