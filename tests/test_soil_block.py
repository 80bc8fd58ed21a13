"""Soil blocks (``kernels/solver/soil_block.py``): the soil points under one body solved together on its six
velocities reach the fixed point of the row-by-row sweep.

Reference: the row-by-row sweep of the same step run to convergence (``soil_block=False``, tolerance 1e-13 m/s).
"""
import numpy as np
import pytest

import taichi_terra as tt

G = 9.81
SOIL = dict(bekker_kphi=1.2e5, sinkage_exponent=1.0, elastic_stiffness=4e5, damping=2e3, friction_coefficient=0.5,
            shear_displacement=0.02)


@pytest.fixture(scope="module")
def three_bodies():
    """A plate resting, a sled dragged at 0.5 m/s and a wheel (axle along y) pushed along x at its axle, each
    on its own lane of one soil bed, stepped until each is loaded and moving (0.4 s, 1 ms steps)."""
    world = tt.World(dt=1e-3, n_envs=1)
    n_x, n_y = 81, 49
    world.add_deformable_terrain(n_x, n_y, 2.0, 1.2, 0.0, 0.0, np.zeros(n_x * n_y), tt.SoilMaterial(**SOIL))
    plate = world.add_box(0.3, 0.2, 0.05, 15.0)
    sled = world.add_box(0.3, 0.2, 0.08, 20.0)
    wheel = world.add_cylinder(0.12, 0.1, 10.0)
    plate.set_position([0.3, -0.35, 0.03])
    sled.set_position([-0.6, 0.0, 0.045])
    wheel.set_position([-0.6, 0.35, 0.125])
    wheel.set_orientation([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    for k in range(8):
        sled.set_external_force([20.0 * (0.5 - sled.get_linear_velocity(0)[0]) + 0.5 * 20.0 * G, 0.0, 0.0])
        wheel.set_external_force([10.0 * (0.5 - wheel.get_linear_velocity(0)[0]) * 5.0, 0.0, 0.0])
        world.step(50)
    return world, {"plate": plate, "sled": sled, "wheel": wheel}


def _velocities(bodies) -> dict:
    return {name: np.concatenate([b.get_linear_velocity(0), b.get_angular_velocity(0)]) for name, b in bodies.items()}


def test_soil_block_reaches_the_row_by_row_fixed_point(three_bodies):
    """The same step solved by the soil blocks and row by row, both to 1e-13 m/s: every body's linear and
    angular velocity agree to 1e-9 (m/s, rad/s), the bed carries the same load, and the blocks take fewer
    sweeps (warm-started from the last step, row by row takes 6 here, the blocks 2)."""
    world, bodies = three_bodies
    assert all(b.get_position(0)[2] < 0.2 for b in bodies.values())
    snap = world.checkpoint()
    tol, cap = world.solver.tolerance, world.solver.max_sweeps
    solved = {}
    try:
        for block in (False, True):
            world.restore(snap)
            world.solver.tolerance, world.solver.max_sweeps, world.solver.soil_block = 1e-13, 200000, block
            world.step(1)
            force = world.get_contacts(0).impulses.sum(axis=0) / world.dt
            solved[block] = (_velocities(bodies), force, world.get_solver_sweeps(0))
    finally:
        world.restore(snap)
        world.solver.tolerance, world.solver.max_sweeps, world.solver.soil_block = tol, cap, True
    assert solved[False][2] < 200000  # (the reference converged)
    moving = 0
    for name in bodies:
        np.testing.assert_allclose(solved[True][0][name], solved[False][0][name], rtol=0, atol=1e-9)
        moving += np.abs(solved[False][0][name][:3]).max() > 0.1
    assert moving == 2  # the sled and the wheel move; the plate rests
    np.testing.assert_allclose(solved[True][1], solved[False][1], rtol=0, atol=1e-8 * np.abs(solved[False][1]).max())
    assert solved[True][2] < solved[False][2]
