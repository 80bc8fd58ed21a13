"""The wrenches joints transmit (inverse dynamics after each step) and the drive forces reported with them.

References: statics (a link held out horizontally, a quadruped's trunk standing on four legs) and the
equations of motion themselves (a joint's transmitted moment along its axis is the generalized force its
drive applied). Worlds of two envs: the step kernel variant test_articulated.py compiles."""
import re
from pathlib import Path

import numpy as np
import pytest

import taichi_terra as tt

DATA = Path(__file__).parent / "data" / "urdf"
G = 9.81


def _held_arm(mass=2.0, d=0.4):
    urdf = ('<robot name="arm"><link name="base"/><link name="arm"><inertial><origin xyz="{d} 0 0"/>'
            '<mass value="{m}"/><inertia ixx="1e-3" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.5"/>'
            '<axis xyz="0 1 0"/></joint></robot>').format(d=d, m=mass)
    world = tt.World(dt=1e-3, n_envs=2)
    arm = world.add_articulated_system(urdf, base="fixed")
    arm.set_pd_gains([1e4], [1e2])
    arm.set_pd_target([0.0], [0.0])
    arm.set_compute_inverse_dynamics(True)
    return world, arm


def test_a_link_held_out_horizontally_transmits_its_weight_and_moment():
    """Reference: statics. A 2 kg link with its centre of mass 0.4 m out on a hinge, held near horizontal by
    a stiff PD drive, at rest after 2 s: the hinge carries the weight, force (0, 0, m g), and the moment
    (r x m g z) about its anchor, r the centre of mass's offset (the drive's sag included). What is left of
    the settling motion (the drive is critically damped within 0.1 s) is far below 1e-9 relative."""
    world, arm = _held_arm()
    world.step(2000)
    rot = arm.get_frame_orientation("arm")
    anchor = np.array([0.0, 0.0, 0.5])
    r = arm.get_frame_position("arm") + rot @ [0.4, 0.0, 0.0] - anchor
    weight = np.array([0.0, 0.0, 2.0 * G])
    np.testing.assert_allclose(arm.get_force_at_joint_in_world_frame()[:, 0], np.tile(weight, (2, 1)), rtol=0,
                               atol=1e-9 * 2.0 * G)
    np.testing.assert_allclose(arm.get_torque_at_joint_in_world_frame()[:, 0], np.cross(r, weight), rtol=0,
                               atol=1e-9 * 0.8 * G)
    # along the axis, the moment is what the drive applied (its kp times the sag)
    np.testing.assert_allclose(arm.get_torque_at_joint_in_world_frame()[:, 0, 1], arm.get_generalized_force()[:, 0],
                               rtol=1e-9)


def test_quadruped_joints_transmit_what_their_drives_apply_and_carry_the_trunk():
    """Reference: the equations of motion, S^T f = tau, joint by joint, and the trunk's statics. The 30 kg
    quadruped stands under PD on flat ground (joint friction off, so that only drives act along the axes);
    during a step with the feet in contact, each joint's transmitted moment along its axis equals the
    generalized force its drive and damping applied, less its rotor inertia times its acceleration, to 1e-9
    of the largest (the contact impulses on the
    shanks are accounted for, or the knees and hips would differ by them). Once settled, the four hips
    together push the trunk up with its weight: their transmitted forces into the legs sum to -m_trunk g z."""
    xml = re.sub(r'friction="[^"]*"', 'friction="0"', (DATA / "quadruped.urdf").read_text())
    world = tt.World(dt=1e-3, n_envs=2)
    world.add_ground()
    robot = world.add_articulated_system(xml, position=(0.0, 0.0, 0.45))
    stand = [0.0, 0.6, -1.2] * 4
    q = robot.get_generalized_coordinate(0)
    q[7:] = stand
    robot.set_generalized_coordinate(q)
    robot.set_pd_gains(np.r_[np.zeros(6), np.full(12, 300.0)], np.r_[np.zeros(6), np.full(12, 20.0)])
    robot.set_pd_target(q, np.zeros(18))
    robot.set_compute_inverse_dynamics(True)
    world.step(1500)
    joints = robot.model.joints
    axes = np.stack([robot.get_frame_orientation(j.child) @ j.axis for j in joints], axis=1)  # (envs, 12, 3)
    u0 = robot.get_generalized_velocity()[:, 6:]
    world.step(1)
    assert len(world.get_contacts(0)) > 0
    along = np.einsum("ejk,ejk->ej", robot.get_torque_at_joint_in_world_frame(), axes)
    rotor = np.array([j.rotor_inertia for j in joints])  # the motor's own inertia takes its share first
    applied = robot.get_generalized_force()[:, 6:] - rotor * (robot.get_generalized_velocity()[:, 6:] - u0) / world.dt
    assert rotor.any()
    np.testing.assert_allclose(along, applied, rtol=0, atol=1e-9 * np.abs(applied).max())
    hips = [k for k, j in enumerate(joints) if j.name.endswith("hip_abd")]
    trunk = robot.model.links[0].mass * G
    total = robot.get_force_at_joint_in_world_frame()[:, hips].sum(axis=1)
    np.testing.assert_allclose(total, np.tile([0.0, 0.0, -trunk], (2, 1)), rtol=0, atol=1e-4 * trunk)


def test_inverse_dynamics_needs_switching_on_and_a_step():
    world, arm = _held_arm()
    with pytest.raises(RuntimeError, match="no step has been taken"):
        arm.get_torque_at_joint_in_world_frame()
    with pytest.raises(ValueError, match="on must be True or False"):
        arm.set_compute_inverse_dynamics("yes")
    world.step(1)
    arm.set_compute_inverse_dynamics(False)
    with pytest.raises(RuntimeError, match="inverse dynamics is off"):
        arm.get_force_at_joint_in_world_frame()
