"""Golden trajectories (``tests/golden.py``): the recorded runs replay to 1e-12 on cpu f64. A rewrite of the step
core that keeps the physics must keep these; one that changes the physics on purpose records them again."""
import numpy as np
import pytest
from golden import CASES, DATA, run


@pytest.fixture(scope="module")
def recorded():
    with np.load(DATA) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("case", list(CASES))
def test_replay_matches_the_recording(case, recorded):
    """Reference: the same run recorded before the change. Every snapshot (body states in every env, soil
    histories, planar poses and velocities) agrees to 1e-12 (m, m/s, rad/s; quaternion components)."""
    got = run(case)
    keys = sorted(k.split("/", 1)[1] for k in recorded if k.startswith(f"{case}/"))
    assert keys == sorted(got), (keys, sorted(got))
    for key in keys:
        want = recorded[f"{case}/{key}"]
        assert got[key].shape == want.shape, key
        np.testing.assert_allclose(got[key], want, rtol=0.0, atol=1e-12, err_msg=f"{case}: {key}")


def test_recording_moves():
    """The cases are not trivial: every body moved or sank and the cradle passed its momentum on; a replay that
    froze the world would not match."""
    with np.load(DATA) as data:
        sphere = data["sphere_on_sine_map/bodies"]
        assert np.linalg.norm(sphere[-1, :, 0, :3] - sphere[0, :, 0, :3], axis=1).min() > 0.01
        cradle = data["newtons_cradle/bodies"]
        assert cradle[-1, 0, 4, 7] > 0.9 and abs(cradle[-1, 0, 0, 7]) < 0.05  # last ball leaves, first stops
        assert data["soil_plate/soil0_sinkage"][-1].max() > 1e-3
        sled = data["dragged_sled_on_soil/bodies"]
        assert sled[-1, 0, 0, 0] - sled[0, 0, 0, 0] > 0.1
        assert data["dragged_sled_on_soil/soil0_plastic_sinkage"][-1].max() > 1e-4
        push = data["planar_push/poses"]
        assert push[-1, 0, 0, 0] - push[0, 0, 0, 0] > 0.3
