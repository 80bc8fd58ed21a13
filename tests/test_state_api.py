"""world.get_state / world.set_state: every body of every env in one call each way (the control-loop API)."""
import numpy as np
import pytest

import taichi_terra as tt


def _world(n_envs=3):
    w = tt.World(n_envs=n_envs)
    w.add_ground()
    bodies = [w.add_sphere(0.1, 1.0), w.add_box(0.2, 0.2, 0.2, 2.0), w.add_capsule(0.05, 0.2, 1.0)]
    for k, b in enumerate(bodies):
        b.set_position(np.array([[0.5 * k, 0.1 * e, 0.3 + 0.1 * k] for e in range(n_envs)]))
        b.set_linear_velocity([0.1 * k, 0.0, 0.0])
    return w, bodies


def _per_body(bodies):
    return {"position": np.stack([b.get_position() for b in bodies], axis=1),
            "orientation": np.stack([b.get_orientation() for b in bodies], axis=1),
            "linear_velocity": np.stack([b.get_linear_velocity() for b in bodies], axis=1),
            "angular_velocity": np.stack([b.get_angular_velocity() for b in bodies], axis=1)}


@pytest.mark.parametrize("built", [False, True])
def test_get_state_equals_the_body_getters(built):
    """Reference: the per-body getters. Before the build and after steps, get_state returns the same
    numbers, shaped (n_envs, n_bodies, k), as copies that later steps do not change."""
    w, bodies = _world()
    if built:
        w.step(20)
    state = w.get_state()
    want = _per_body(bodies)
    assert set(state) == set(want)
    for name in want:
        assert state[name].shape == want[name].shape
        np.testing.assert_array_equal(state[name], want[name])
    if built:
        before = {k: v.copy() for k, v in state.items()}
        w.step(5)
        for name in state:
            np.testing.assert_array_equal(state[name], before[name])
        assert not np.array_equal(w.get_state()["position"], before["position"])


def test_set_state_replays_like_the_body_setters():
    """Reference: the per-body setters and determinism. Setting every body with one call, then stepping,
    gives bit for bit the trajectory of setting the same values body by body."""
    w1, b1 = _world()
    w2, b2 = _world()
    w1.step(10)
    w2.step(10)
    rng = np.random.default_rng(3)
    pos = rng.uniform(0.2, 0.6, (3, 3, 3))
    # unit quaternions whose norm is exactly 1 in floating point (both paths then keep them as they are)
    quat = np.array([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5], [0.5, -0.5, 0.5, -0.5]])[rng.integers(0, 3, (3, 3))]
    vel = rng.normal(size=(3, 3, 3))
    w1.set_state(position=pos, orientation=quat, linear_velocity=vel)
    for k, b in enumerate(b2):
        b.set_position(pos[:, k])
        b.set_orientation(quat[:, k])
        b.set_linear_velocity(vel[:, k])
    np.testing.assert_array_equal(w1.get_state()["orientation"], w2.get_state()["orientation"])
    w1.step(30)
    w2.step(30)
    for name, value in w1.get_state().items():
        np.testing.assert_array_equal(value, w2.get_state()[name])


def test_set_state_for_one_env_or_all_envs_alike():
    """Reference: the arguments. (n_bodies, k) with env=i sets that env only; with env=None every env."""
    w, bodies = _world()
    w.build()
    before = w.get_state()
    target = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    w.set_state(position=target, env=1)
    got = w.get_state()["position"]
    np.testing.assert_array_equal(got[1], target)
    np.testing.assert_array_equal(got[[0, 2]], before["position"][[0, 2]])
    w.set_state(angular_velocity=target)
    np.testing.assert_array_equal(w.get_state()["angular_velocity"], np.broadcast_to(target, (3, 3, 3)))
    np.testing.assert_allclose(np.linalg.norm(w.get_state()["orientation"], axis=-1), 1.0, rtol=0, atol=1e-15)


def test_set_state_normalises_quaternions_from_any_layout():
    """Reference: q / |q| in closed form. Quaternions far from unit length (down to 1e-6, up to 1e200, where
    |q|^2 overflows) are normalised; strided, Fortran-ordered and integer arrays set the same numbers as
    C-contiguous float64 ones."""
    w, _bodies = _world()
    w.build()
    raw = np.array([[2.0, 0.0, 0.0, 0.0], [1e-6, 1e-6, 0.0, 0.0], [0.0, 3e200, 4e200, 0.0]])
    want = np.array([[1.0, 0.0, 0.0, 0.0], [0.5 ** 0.5, 0.5 ** 0.5, 0.0, 0.0], [0.0, 0.6, 0.8, 0.0]])
    w.set_state(orientation=raw)
    got = w.get_state()["orientation"]
    np.testing.assert_allclose(got, np.broadcast_to(want, got.shape), rtol=0, atol=4e-16)
    pos = np.arange(27, dtype=np.float64).reshape(3, 3, 3)
    layouts = [pos, np.asfortranarray(pos), np.concatenate([pos, pos], axis=-1)[..., 1::2] * 0 + pos,
               np.zeros((3, 3, 7))[..., 2:5] + pos, pos.astype(np.int64), pos.astype(np.float32)]
    for arr in layouts:
        w.set_state(position=np.zeros((3, 3)))
        w.set_state(position=arr)
        np.testing.assert_array_equal(w.get_state()["position"], pos)
    w.set_state(**w.get_state())  # get_state's own (strided) arrays: setting them back changes nothing
    np.testing.assert_array_equal(w.get_state()["position"], pos)
    big = np.zeros((3, 3, 7))
    big[..., 2:5] = 1e200  # finite, though the sum of squares overflows: accepted as given
    w.set_state(position=big[..., 2:5], linear_velocity=-big[..., 2:5].copy())
    assert (w.get_state()["position"] == 1e200).all() and (w.get_state()["linear_velocity"] == -1e200).all()


def test_one_step_per_call_replays_many_steps_per_call():
    """Reference: determinism. step() called n times gives bit for bit what step(n) gives."""
    w1, _ = _world()
    w2, _ = _world()
    for _ in range(25):
        w1.step()
    w2.step(25)
    for name, value in w1.get_state().items():
        np.testing.assert_array_equal(value, w2.get_state()[name])
