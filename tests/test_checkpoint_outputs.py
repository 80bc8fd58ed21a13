"""What the getters of the last step report, after ``World.restore``: a checkpoint keeps the step's outputs
(the drives' generalized forces, the joints' transmitted wrenches, the RFT plates' forces and loads) with the
state, so every such getter returns after ``restore(cp)`` what it returned when ``cp`` was taken, not what
the last step taken before the restore left. Reference: the values read at the checkpoint itself."""
import numpy as np

import taichi_terra as tt
from test_joint_wrenches import _held_arm


def _arm():
    """The held arm of the joint-wrench tests (a hinged 2 kg link under a stiff PD drive, inverse dynamics on,
    two envs), its target moved to 0.3 rad so that it swings."""
    world, arm = _held_arm()
    arm.set_pd_target([0.3], [0.0])
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
