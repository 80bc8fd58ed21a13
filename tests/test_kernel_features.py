"""A step kernel compiled with only the optional parts a world uses (soil beds, pins, belts, RFT plates:
``taichi_terra.init``'s ``specialize``, on by default) steps that world exactly as the kernel with every part.

Reference: the kernel with every part, which the rest of the suite runs (``conftest.py`` turns ``specialize``
off). The parts are left out by compile-time switches around code that a world without them never reaches, and
Taichi runs without fast math on cpu, so the two kernels do the same floating-point operations: every
checkpointed array must be equal bit for bit, not merely close. Two worlds set every switch both ways: a
four-bar closed by a pin, pressing a ball into a soil bed (soil and pins in; belts and RFT out), and a tracked
robot driving over sand with RFT plates on its hull and a free box in the sand beside it (belts and RFT in;
soil and pins out).

The same worlds, and one of free bodies on a soil bed, step to the same bits in the GPU layout
(``World.step_layout = "staged"``: a launch per stage, some over items), whose stage functions are the fused
kernel's."""
import contextlib

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


def _free_bodies_on_soil():
    """Three 0.1 m boxes stacked 1 cm apart over a soil bed (21 x 21 samples, 0.4 m), a short cylinder on the
    top one and a ball beside them, with RFT plates on the top box over a sand surface: the broadphase's
    shape-shape pairs (the cylinder on the box finds 9 contacts, more than a pair's room in the GPU layout:
    ``kernels/step.py`` ``place_shape_pairs``), the soil quadrature and history over the bed's sample rows and
    the plates' stage, without trees. The bed's surface differs per env (env 1's tilts by 2 %): each env's
    quadrature reads its own heights."""
    world = tt.World(dt=1e-3, n_envs=2)
    n = 21
    x = np.tile(np.linspace(-0.2, 0.2, n), n)
    world.add_deformable_terrain(n, n, 0.4, 0.4, 0.0, 0.0, np.stack([np.zeros(n * n), 0.02 * x]),
                                 tt.SoilMaterial(bekker_kphi=2e6, sinkage_exponent=1.0, damping=1e3))
    world.add_granular_medium(0.25, zeta=0.375)
    for k in range(3):
        world.add_box(0.1, 0.1, 0.1, 1.0).set_position([0.003 * k, 0.0, 0.051 + 0.11 * k])
    world.add_plates(world.bodies[2], count=24)
    world.add_cylinder(0.045, 0.03, 0.3).set_position([0.005, 0.0, 0.051 + 0.22 + 0.05 + 0.0155])
    world.add_sphere(0.05, 0.5).set_position([0.15, 0.05, 0.06])
    return world


WORLDS = {"soil-and-pins": (lambda: _four_bar_on_soil()[0], ("soil", "pins")),
          "belts-and-rft": (_tracked_robot_in_sand, ("belts", "rft")),
          "free-bodies": (_free_bodies_on_soil, ("soil", "rft"))}
_RUNS: dict = {}


@contextlib.contextmanager
def _splitting(on: bool):
    """Within: the GPU layout splits the shape pairs and the soil quadratures of any world (``on``)."""
    from taichi_terra.kernels import step

    saved = step.SPLIT_SHAPE_PAIRS, step.SPLIT_FOOTPRINT
    if on:
        step.SPLIT_SHAPE_PAIRS = step.SPLIT_FOOTPRINT = 1
    try:
        yield
    finally:
        step.SPLIT_SHAPE_PAIRS, step.SPLIT_FOOTPRINT = saved


def _checkpoints(name: str, specialize: bool, layout: str = "fused") -> list:
    """The arrays of world ``name`` (:data:`WORLDS`) after 100, 200 and 300 steps, with a kernel specialised to
    its parts or not, in step layout ``layout`` (``"split"``: the GPU layout with every split it has, whatever
    the world's size: ``kernels/step.py`` ``SPLIT_SHAPE_PAIRS`` and ``SPLIT_FOOTPRINT`` set to 1); each run once
    per process."""
    key = (name, specialize, layout)
    if key not in _RUNS:
        make, parts = WORLDS[name]
        with specializing(specialize), _splitting(layout == "split"):
            world = make()
            world.step_layout = "staged" if layout == "split" else layout
            world.build()
            if layout == "fused" and name != "free-bodies":
                assert world._step_variant()[-1] == (parts if specialize else FEATURES)
            out = []
            for _chunk in range(3):
                world.step(100)
                assert world.get_diverged() == {}
                out.append(world.checkpoint().arrays)
        _RUNS[key] = out
    return _RUNS[key]


def _assert_same_and_moving(runs, reference):
    for run, ref in zip(runs, reference):
        assert run.keys() == ref.keys()
        for name in ref:
            np.testing.assert_array_equal(run[name], ref[name], err_msg=name)
    moved = False
    for name in ("q", "u"):
        moved |= bool(np.any(reference[0][name] != reference[-1][name]))
    assert moved  # (the worlds move: the comparison is not of states at rest)


@pytest.mark.parametrize("name", ["soil-and-pins", "belts-and-rft"])
def test_a_kernel_with_only_the_parts_a_world_uses_steps_it_bit_for_bit(name):
    _assert_same_and_moving(_checkpoints(name, True), _checkpoints(name, False))


@pytest.mark.parametrize("name,layout", [(name, "staged") for name in WORLDS]
                         + [("soil-and-pins", "split"), ("free-bodies", "split")])
def test_the_gpu_layout_steps_a_world_bit_for_bit_as_the_fused_kernel(name, layout):
    """Reference: the fused step kernel (one thread runs each env's whole step), which the rest of the suite
    runs on cpu. The GPU layout (``World.step_layout = "staged"``, ``kernels/step.py`` ``gpu_launches``)
    launches the same stage functions one by one, the static contact pairs over (env, pair), a soil pair's
    quadrature over (env, pair, footprint row), the shape-shape pairs over (env, table entry), the soil
    history's row parts over (env, sample row), the sweeps 8 per launch (one with tracks or trees on soil), the RFT plates
    before the step: on cpu, where both run without fast math, every checkpointed array after 100, 200 and
    300 steps must equal the fused kernel's bit for bit. The same kernels run on lavapipe (the vulkan tests
    of ``test_precision.py``)."""
    _assert_same_and_moving(_checkpoints(name, False, layout), _checkpoints(name, False))
