"""What the getters of the last step report, after ``World.restore``: a checkpoint keeps the step's outputs
(the drives' generalized forces, the joints' transmitted wrenches, the RFT plates' forces and loads) with the
state, so every such getter returns after ``restore(cp)`` what it returned when ``cp`` was taken, not what
the last step taken before the restore left. Reference: the values read at the checkpoint itself."""
import numpy as np

import taichi_terra as tt


def _arm():
    """A hinged 2 kg link under a PD drive whose target moves, inverse dynamics on, two envs."""
    urdf = ('<robot name="arm"><link name="base"/><link name="arm"><inertial><origin xyz="0.4 0 0"/>'
            '<mass value="2"/><inertia ixx="1e-3" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.5"/>'
            '<axis xyz="0 1 0"/></joint></robot>')
    world = tt.World(dt=1e-3, n_envs=2)
    arm = world.add_articulated_system(urdf, base="fixed")
    arm.set_pd_gains([1e3], [1e1])
    arm.set_pd_target([0.3], [0.0])
    arm.set_compute_inverse_dynamics(True)
    return world, arm


def test_restore_brings_back_the_drive_forces_and_joint_wrenches_of_the_checkpoint():
    world, arm = _arm()
    world.step(10)
    cp = world.checkpoint()
    getters = (arm.get_generalized_force, arm.get_force_at_joint_in_world_frame,
               arm.get_torque_at_joint_in_world_frame)
    then = [g() for g in getters]
    world.step(40)
    for g, value in zip(getters, then):
        assert not np.array_equal(g(), value)  # (the arm is still swinging towards its target)
    world.restore(cp)
    for g, value in zip(getters, then):
        np.testing.assert_array_equal(g(), value)


def test_restore_before_the_first_step_brings_back_the_feed_forward_force():
    world, arm = _arm()
    arm.set_generalized_force([[0.5], [0.7]])
    cp = world.checkpoint()
    world.step(5)
    world.restore(cp)
    np.testing.assert_array_equal(arm.get_generalized_force(), [[0.5], [0.7]])


def test_restore_brings_back_the_plate_forces_and_loads_of_the_checkpoint():
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    world.add_granular_medium(0.0, zeta=3.75, smoothing=1.0)  # (RFT-SiM's play sand [N/cm^3])
    box = world.add_box(0.1, 0.06, 0.04, 2.0)
    box.set_position((0.0, 0.0, -0.05))
    box.set_linear_velocity((0.02, 0.0, -0.05))
    world.add_plates(box, count=100)
    world.step(3)
    cp = world.checkpoint()
    loads, forces = world.get_plate_loads(0), world.get_plate_forces(0)
    world.step(40)
    assert not np.array_equal(world.get_plate_loads(0)[0], loads[0])
    world.restore(cp)
    for now, then in zip(world.get_plate_loads(0), loads):
        np.testing.assert_array_equal(now, then)
    for key, value in world.get_plate_forces(0).items():
        np.testing.assert_array_equal(value, forces[key])
