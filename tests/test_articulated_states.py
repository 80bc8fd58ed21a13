"""``World.get_articulated_states``: every system's state in one call. Reference: the systems' own getters, and the
base twist turned into the base frame by hand."""
import math

import numpy as np

import taichi_terra as tt

LINK = ('<link name="{name}"><inertial><origin xyz="0 0 {z}"/><mass value="1"/>'
        '<inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>')
ROBOT = ('<robot name="r">' + LINK.format(name="base", z=0.0) + LINK.format(name="arm", z=0.2)
         + '<joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/></joint>'
         + '</robot>')


def test_every_systems_state_in_one_call_with_the_base_twist_in_the_base_frame():
    world = tt.World(dt=1e-3, n_envs=2, gravity=(0.0, 0.0, 0.0))
    rover = world.add_articulated_system(ROBOT, base="floating", position=(1.0, 2.0, 3.0))
    arm = world.add_articulated_system(ROBOT, base="fixed", position=(0.0, 0.0, 1.0))
    yaw = math.pi / 2  # env 1's rover turned 90 degrees about z, moving along world x and spinning about z
    q = rover.get_generalized_coordinate()
    q[1, 3:7] = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
    rover.set_generalized_coordinate(q)
    u = np.zeros((2, 7))
    u[1, 0:6] = (1.0, 0.0, 0.0, 0.0, 0.0, 0.5)
    rover.set_generalized_velocity(u)
    states = world.get_articulated_states()
    assert len(states) == 2
    s = states[0]
    np.testing.assert_array_equal(s["q"], rover.get_generalized_coordinate())
    np.testing.assert_array_equal(s["u"], rover.get_generalized_velocity())
    np.testing.assert_array_equal(s["base_position"], rover.get_generalized_coordinate()[:, 0:3])
    np.testing.assert_allclose(s["base_linear_velocity"][1], [0.0, -1.0, 0.0], atol=1e-15)  # (x world = -y base)
    np.testing.assert_allclose(s["base_angular_velocity"][1], [0.0, 0.0, 0.5], atol=1e-15)
    np.testing.assert_array_equal(s["base_linear_velocity"][0], 0.0)
    fixed = states[1]
    assert fixed["q"].shape == (2, 1) and fixed["u"].shape == (2, 1)
    np.testing.assert_allclose(fixed["base_position"], [[0.0, 0.0, 1.0]] * 2, atol=1e-15)
    np.testing.assert_allclose(fixed["base_orientation"], [[1.0, 0.0, 0.0, 0.0]] * 2, atol=1e-15)
    np.testing.assert_array_equal(fixed["base_angular_velocity"], 0.0)
    world.step(10)
    after = world.get_articulated_states()[1]
    np.testing.assert_array_equal(after["q"], arm.get_generalized_coordinate())
