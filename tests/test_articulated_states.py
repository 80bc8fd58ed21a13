"""``World.get_articulated_states``: every system's state in one call. Reference: the systems' own getters, and the
base twist turned into the base frame by hand."""
import math

import numpy as np
import pytest

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


PLATE = ('<robot name="plate"><link name="body"><inertial><mass value="20"/>'
         '<inertia ixx="0.6" iyy="0.27" izz="0.87" ixy="0" ixz="0" iyz="0"/></inertial>'
         '<collision><geometry><box size="0.4 0.6 0.02"/></geometry></collision></link></robot>')


def test_link_contact_forces_and_sinkage_of_a_plate_robot_on_two_soils():
    """Reference: a one-link robot (a 20 kg, 0.4 x 0.6 m plate) settled on soil: its link's contact force
    balances its weight (m g up, to 1e-3), and its sinkage is Bekker's m g / (A kphi) of each env's soil (1 %),
    as deep as the link has sunk (1e-6 m)."""
    world = tt.World(dt=1e-3, n_envs=2)
    n = 51
    bed = world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n),
                                       tt.SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, damping=3e4))
    bed.set_material(tt.SoilMaterial(bekker_kphi=2e5, sinkage_exponent=1.0, damping=3e4), env=1)
    robot = world.add_articulated_system(PLATE, base="floating", position=(0.01, 0.01, 0.01))
    world.solver.tolerance = 1e-10
    world.step(1500)
    force = world.get_link_contact_forces(robot)
    sinkage = world.get_link_sinkage(robot)
    assert force.shape == (2, 1, 3) and sinkage.shape == (2, 1)
    for env, kphi in enumerate((1e5, 2e5)):
        np.testing.assert_allclose(force[env, 0], [0.0, 0.0, 20.0 * 9.81], rtol=0, atol=1e-3 * 20.0 * 9.81)
        assert sinkage[env, 0] == pytest.approx(20.0 * 9.81 / (0.24 * kphi), rel=0.01)
        sunk = 0.01 - robot.get_generalized_coordinate(env)[2]
        assert sinkage[env, 0] == pytest.approx(sunk, abs=1e-6)
    np.testing.assert_array_equal(world.get_link_sinkage(robot, env=1), sinkage[1])
    with pytest.raises(ValueError, match="system"):
        world.get_link_contact_forces(tt.World(dt=1e-3).add_articulated_system(PLATE))


def test_link_contact_forces_count_shape_pairs_on_either_side_as_the_contact_set_does():
    """Reference: the contact set of each env (``get_contacts``: impulses act on side b, the opposite on side
    a), summed per link over the step by hand: a plate robot on the ground under two boxes (each env with its
    own box masses), whose contacts with the boxes are shape pairs. Settled, the link's contact forces
    balance its own weight alone (the ground carries the boxes through it: m g up, to 1e-3)."""
    world = tt.World(dt=1e-3, n_envs=2)
    world.add_ground()
    robot = world.add_articulated_system(PLATE, base="floating", position=(0.0, 0.0, 0.0105))
    boxes = [world.add_box(0.1, 0.1, 0.1, 1.0), world.add_box(0.1, 0.1, 0.1, 2.0)]
    boxes[0].set_position([-0.1, 0.0, 0.0705])
    boxes[1].set_position([0.1, 0.1, 0.0705])
    world.set_body_mass(boxes[1], 4.0, env=1)
    world.step(400)
    force = world.get_link_contact_forces(robot)
    for env in range(2):
        contacts = world.get_contacts(env)
        mine, with_boxes = np.zeros(3), 0
        for k in range(len(contacts)):
            if contacts.link_b[k] == (0, "body"):
                mine += contacts.impulses[k]
                with_boxes += int(contacts.body_a[k] >= 0)
            if contacts.link_a[k] == (0, "body"):
                mine -= contacts.impulses[k]
                with_boxes += 1
        assert with_boxes >= 2  # (both boxes touch the link)
        np.testing.assert_allclose(force[env, 0], mine / 1e-3, rtol=0, atol=1e-9 * np.abs(mine).max() / 1e-3)
        np.testing.assert_allclose(force[env, 0], [0.0, 0.0, 20.0 * 9.81], rtol=0, atol=1e-3 * 20.0 * 9.81)
