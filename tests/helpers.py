"""Scene builders shared by the physics tests."""
import contextlib
import math

import numpy as np
import pytest

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


def sweeps_with_and_without_block(world, start, steps: int) -> dict:
    """The solver sweeps ``world`` takes over ``steps`` steps from the checkpoint ``start`` (all envs summed),
    with the contact block (key True) and without (False); the block is left on, the state at the end of the
    run without it."""
    sweeps = {}
    for together in (True, False):
        world.restore(start)
        world.solver.contact_block = together
        total = 0
        for _ in range(steps):
            world.step(1)
            total += world.get_solver_sweeps().sum()
        sweeps[together] = total
    world.solver.contact_block = True
    return sweeps


def step_against_row_by_row(world, system, reference_sweeps: int = 100000, check=None):
    """The generalized velocities of ``system`` after one step of ``world`` from its current state as it is set
    up, and after the same step swept row by row to convergence (``contact_block`` off, 1e-14 m/s, at most
    ``reference_sweeps`` sweeps): ``(u, reference)``. ``check(world)``, if given, runs after the first. The
    world is left in its state before the step, with its solver settings."""
    solver = world.solver
    saved = (solver.tolerance, solver.max_sweeps, solver.contact_block)
    snap = world.checkpoint()
    try:
        world.step(1)
        u = system.get_generalized_velocity()
        if check is not None:
            check(world)
        world.restore(snap)
        solver.tolerance, solver.max_sweeps, solver.contact_block = 1e-14, reference_sweeps, False
        world.step(1)
        reference = system.get_generalized_velocity()
    finally:
        world.restore(snap)
        solver.tolerance, solver.max_sweeps, solver.contact_block = saved
    return u, reference

def block_saves_sweeps_to_the_row_by_row_solution(world, system, steps: int, checks, bound: float,
                                                  reference_sweeps: int = 100000) -> None:
    """From ``world``'s present state: over ``steps`` steps the contact block takes at most half the sweeps of
    the rows one by one, and after each of ``checks`` steps (run one after the other) the next step ends within
    ``bound`` of the same step swept row by row to convergence (:func:`step_against_row_by_row`)."""
    start = world.checkpoint()
    sweeps = sweeps_with_and_without_block(world, start, steps)
    assert sweeps[True] <= 0.5 * sweeps[False]
    world.restore(start)
    for k in checks:
        world.step(k)
        u, reference = step_against_row_by_row(world, system, reference_sweeps=reference_sweeps)
        assert np.abs(u - reference).max() < bound


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


# ------------------------------------------------------------------ bad input (a rejected call changes nothing)
SETTERS = ("position", "orientation", "linear_velocity", "angular_velocity", "external_force", "external_torque")


def bad_input_scene(n_envs=2, build=False):
    """A world with a ground, a height map and two bodies whose state is not the default."""
    w = tt.World(dt=1e-3, n_envs=n_envs)
    w.add_ground(0.0)
    w.add_heightmap(3, 2, 2.0, 1.0, 0.0, 0.0, np.arange(6.0))
    for i, b in enumerate((w.add_sphere(0.1, 1.0), w.add_box(0.2, 0.3, 0.4, 2.0))):
        b.set_position([i, 0.5, 1.0 + i])
        b.set_orientation([1.0, 0.1 * i, 0.2, 0.0])
        b.set_linear_velocity([0.1, -0.2, 0.3 * i])
        b.set_angular_velocity([0.0, 0.4, i])
        b.set_external_force([1.0, 2.0, i])
        b.set_external_torque([0.0, i, -1.0])
    if build:
        w.build()
    return w


def snapshot(w):
    """Everything observable about the topology and the per-body state."""
    bodies = [{q: getattr(b, f"get_{q}")().tolist() for q in SETTERS} for b in w.bodies]
    hms = [(h.get_position().tolist(), h.get_orientation().tolist(), h.get_heights().tolist()) for h in w.heightmaps]
    ground = None if w.ground is None else (w.ground.height, w.ground.material)
    return (w.built, len(w.bodies), bodies, hms, ground, w.materials.names, w.time, w.gravity.tolist())


@contextlib.contextmanager
def unchanged(w):
    before = snapshot(w)
    yield
    assert snapshot(w) == before, "a rejected call changed the world"


def rejects(w, *cases):
    """Each (call, exception, message fragment) raises, and together they leave ``w`` unchanged."""
    with unchanged(w):
        for call, exc, match in cases:
            with pytest.raises(exc, match=match):
                call()
