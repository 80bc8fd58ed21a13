"""The divergence watch: an env whose state blows up is found after the step it happens in, reported, stood still
and put back on its own, while the other envs run on untouched."""
import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.bodies.urdf import make_chain_urdf


def _boxes(n_envs=8, **kwargs):
    world = tt.World(dt=1e-3, n_envs=n_envs, **kwargs)
    world.add_ground()
    boxes = [world.add_box(0.2, 0.2, 0.2, 1.0), world.add_box(0.2, 0.2, 0.2, 1.0)]
    boxes[0].set_position([0.0, 0.0, 0.1])
    boxes[1].set_position([0.5, 0.0, 0.3])
    return world, boxes


def _state(world):
    arrays = world.checkpoint().arrays
    return arrays["q"].copy(), arrays["u"].copy()


def test_a_1e300_newton_force_in_env_3_of_8_is_reported_for_env_3_alone_and_the_others_match_bit_for_bit():
    """Reference: the same world without the force (envs share nothing, so the other seven must match it bit for
    bit) and the closed form of the first step: 1e300 N on 1 kg for 1 ms moves the box 1e294 m, past the bound."""
    clean, _ = _boxes()
    world, boxes = _boxes()
    start = world.checkpoint()
    boxes[1].set_external_force([1e300, 0.0, 0.0], env=3)
    world.step(30)
    clean.step(30)
    assert world.get_diverged() == {3: {"step": 1, "body": "body 1", "what": "a position out of bounds", "stage": None}}
    others = np.arange(8) != 3
    (q, u), (q0, u0) = _state(world), _state(clean)
    assert np.array_equal(q[others], q0[others]) and np.array_equal(u[others], u0[others])
    # env 3 stood still after its first step: one step's motion (1e294 m), not thirty steps' (about 3e295 m)
    assert boxes[1].get_position(3)[0] == pytest.approx(1e294, rel=1e-6)

    # put env 3 back at the start: the force goes with the rest of its state, and it runs as the clean world did
    world.reset_envs([3], start)
    assert world.get_diverged() == {}
    world.step(30)
    q, u = _state(world)
    assert np.array_equal(q[3], q0[3]) and np.array_equal(u[3], u0[3])
    clean.step(30)
    q1, u1 = _state(clean)
    assert np.array_equal(q[others], q1[others]) and np.array_equal(u[others], u1[others])


def test_raise_mode_names_the_env_the_body_and_the_first_bad_step():
    world, boxes = _boxes(n_envs=4, on_divergence="raise")
    world.step(5)
    boxes[0].set_external_force([0.0, 0.0, 1e300], env=2)
    with pytest.raises(tt.DivergenceError, match=r"env 2 diverged after its step 6: a position out of bounds of "
                                                 r"body 0"):
        world.step(10)
    assert list(world.get_diverged()) == [2]


def test_a_falling_box_passes_the_speed_limit_at_the_step_the_closed_form_gives():
    """Reference: semi-implicit Euler in free fall, v_k = k g dt: over 0.5 m/s first at k = 51 (0.50031 m/s)."""
    world = tt.World(dt=1e-3)
    box = world.add_box(0.2, 0.2, 0.2, 1.0)
    box.set_position([0.0, 0.0, 10.0])
    world.speed_limit = 0.5
    world.step(80)
    assert world.get_diverged() == {0: {"step": 51, "body": "body 0", "what": "a speed over the limit", "stage": None}}
    assert -box.get_linear_velocity(0)[2] == pytest.approx(51 * 9.81e-3, rel=1e-12)  # (it stood still from there)


def test_an_articulated_system_is_watched_too():
    """A two-link chain released at 0.5 rad swings faster than a 1 rad/s limit within its first half second; the
    report names the system."""
    world = tt.World(dt=1e-3)
    chain = world.add_articulated_system(make_chain_urdf(2), base="fixed", position=(0.0, 0.0, 1.0))
    chain.set_generalized_coordinate(np.full(2, 0.5))
    world.speed_limit = 1.0
    world.step(500)
    found = world.get_diverged()
    assert list(found) == [0] and found[0]["body"] == chain.model.name and found[0]["what"] == "a speed over the limit"
    assert 1 < found[0]["step"] < 500


