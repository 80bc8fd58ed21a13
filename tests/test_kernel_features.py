"""A step kernel compiled with only the optional parts a world uses (soil beds, pins, belts, RFT plates:
``taichi_terra.init``'s ``specialize``, on by default) steps that world exactly as the kernel with every part.

Reference: the kernel with every part, which the rest of the suite runs (``conftest.py`` turns ``specialize``
off). The parts are left out by compile-time switches around code that a world without them never reaches, and
Taichi runs without fast math on cpu, so the two kernels do the same floating-point operations: every
checkpointed array must be equal bit for bit, not merely close. Two worlds set every switch both ways: a
four-bar closed by a pin, pressing a ball into a soil bed (soil and pins in; belts and RFT out), and a tracked
robot driving over sand with RFT plates on its hull and a free box in the sand beside it (belts and RFT in;
soil and pins out)."""
import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.bodies.tracked_robot import tracked_robot_urdf
from taichi_terra.kernels.common.arrays import FEATURES

from helpers import specializing
from test_pins import _four_bar_on_soil


def _tracked_robot_in_sand():
    """The tracked robot on flat ground, sprockets pushed at 5 and 3 N m, with RFT plates under its hull and
    a free box falling into loose sand (a tenth of the default stresses; row mode: its sand rows are solved in
    the sweeps) whose surface lies 20 cm above the ground, about 7 mm above the hull's underside."""
    world = tt.World(dt=1e-3, n_envs=2)
    world.add_ground(0.0)
    world.add_granular_medium(0.2, zeta=0.375, mode="row")
    system = world.add_articulated_system(tracked_robot_urdf(), position=(0.0, 0.0, 0.2))
    world.add_plates(system, "base", count=60)
    box = world.add_box(0.08, 0.08, 0.08, 0.4)
    world.add_plates(box, count=24)
    box.set_position([0.6, 0.6, 0.3])
    tau = np.zeros((2, system.get_dof()))
    for k, name in enumerate(("left_sprocket", "right_sprocket")):
        tau[:, system.get_generalized_velocity_index(name)] = (5.0, 3.0)[k]
    system.set_generalized_force(tau)
    return world


@pytest.mark.parametrize("make, parts", [
    (lambda: _four_bar_on_soil()[0], ("soil", "pins")),
    (_tracked_robot_in_sand, ("belts", "rft")),
], ids=["soil-and-pins", "belts-and-rft"])
def test_a_kernel_with_only_the_parts_a_world_uses_steps_it_bit_for_bit(make, parts):
    runs = {}
    for on in (True, False):
        with specializing(on):
            world = make()
            world.build()
            assert world._step_variant()[-1] == (parts if on else FEATURES)
            out = []
            for _chunk in range(3):
                world.step(100)
                out.append(world.checkpoint().arrays)
            runs[on] = out
    moved = False
    for special, shared in zip(runs[True], runs[False]):
        assert special.keys() == shared.keys()
        for name in shared:
            np.testing.assert_array_equal(special[name], shared[name], err_msg=name)
    for name in ("q", "u"):
        moved |= bool(np.any(runs[False][0][name] != runs[False][-1][name]))
    assert moved  # (the worlds move: the comparison is not of states at rest)
