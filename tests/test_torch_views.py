"""torch tensors over the world's state (``taichi_terra/torch_views.py``): on cpu they share the world's memory.
Reference: the world's numpy getters and setters, and free fall under the semi-implicit Euler step."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import taichi_terra as tt  # noqa: E402
from taichi_terra import torch_views  # noqa: E402
from helpers import G  # noqa: E402


def _world(n_envs=4):
    world = tt.World(dt=1e-3, n_envs=n_envs)
    world.add_ground()
    boxes = [world.add_box(0.2, 0.2, 0.2, 1.0) for _ in range(3)]
    for k, box in enumerate(boxes):
        box.set_position([0.5 * k, 0.0, 2.0 + k])
    return world, boxes


def test_the_views_share_the_worlds_memory_both_ways():
    """The tensors equal the numpy getters; after a step the same tensors hold the new state (no call); a
    velocity written into a tensor is what the next step starts from: a box given 1 m/s along x in env 2
    moves 1 mm in that env's next 1 ms step and no other env moves along x."""
    world, boxes = _world()
    views = torch_views.state(world)
    assert not torch_views.describe(world)["copied"]
    state = world.get_state()
    for name, tensor in views.items():
        assert tensor.shape == state[name].shape
        np.testing.assert_array_equal(tensor.numpy(), state[name])
    before = views["position"].clone()
    world.step(1)
    np.testing.assert_array_equal(views["position"].numpy(), world.get_state()["position"])
    assert not torch.equal(views["position"], before)
    views["linear_velocity"][2, 1] = torch.tensor([1.0, 0.0, 0.0], dtype=views["linear_velocity"].dtype)
    x0 = views["position"][:, 1, 0].clone()
    world.step(1)
    moved = (views["position"][:, 1, 0] - x0).numpy()
    assert moved[2] == pytest.approx(1e-3, abs=1e-15)
    np.testing.assert_array_equal(np.delete(moved, 2), 0.0)
    assert boxes[1].get_linear_velocity(2)[0] == 1.0


def test_loads_written_in_place_act_in_the_next_step():
    """Reference: a force along +z equal to the box's weight cancels gravity: written through the ``loads``
    tensor for env 0 only, that box keeps its vertical velocity while env 1's falls on (dv = -g dt)."""
    world, boxes = _world(2)
    loads = torch_views.loads(world)
    assert loads["force"].shape == (2, 3, 3)
    loads["force"][0, 0, 2] = G * 1.0
    np.testing.assert_array_equal(boxes[0].get_external_force(0), [0.0, 0.0, G])
    world.step(1)
    assert boxes[0].get_linear_velocity(0)[2] == pytest.approx(0.0, abs=1e-12)
    assert boxes[0].get_linear_velocity(1)[2] == pytest.approx(-G * 1e-3, rel=1e-12)


def test_an_articulated_systems_coordinates_as_tensors():
    """Reference: ``get_generalized_coordinate`` and ``get_generalized_velocity``, before and after steps."""
    link = ('<link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>'
            '<inertia ixx="4e-5" iyy="4e-5" izz="4e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    joint = ('<joint name="hinge" type="continuous"><parent link="base"/><child link="bob"/>'
             '<axis xyz="0 1 0"/></joint>')
    world = tt.World(dt=1e-3, n_envs=2)
    arm = world.add_articulated_system(f'<robot name="pendulum"><link name="base"/>{link}{joint}</robot>',
                                       base="fixed", position=(0.0, 0.0, 1.0))
    arm.set_generalized_coordinate(np.array([0.3]))
    views = torch_views.articulated_state(world, arm)
    world.step(20)
    np.testing.assert_array_equal(views["q"].numpy(), arm.get_generalized_coordinate())
    np.testing.assert_array_equal(views["u"].numpy(), arm.get_generalized_velocity())
    assert np.abs(views["u"].numpy()).max() > 0.0
    views["q"][1, 0] = 0.0  # (env 1 put at rest at the bottom through the tensor)
    views["u"][1, 0] = 0.0
    world.step(5)
    assert arm.get_generalized_coordinate(1)[0] == 0.0
    with pytest.raises(ValueError, match="system"):
        torch_views.articulated_state(tt.World(dt=1e-3), arm)
