"""Bodies on a 20-degree slope built from a rotated height map."""
import math

import numpy as np
import pytest

from helpers import G, slope_world

ANGLE = math.radians(20.0)


def _along_slope(body, R, start_local):
    """Map-frame displacement of the body's centre from its start [m]."""
    return R.T @ body.get_position(0) - start_local


def test_sphere_rolls_without_slipping():
    """Reference: a solid sphere rolling without slip accelerates at (5/7) g sin(theta), so it travels
    (5/14) g sin(theta) t^2 = 4.793 m in 2 s (semi-implicit Euler adds a relative O(dt / t) = 5e-4)."""
    world, ball, R = slope_world(ANGLE, 0.8, "sphere")
    world.step(2000)
    d = _along_slope(ball, R, np.array([-5.5, 0.0, 0.1]))
    expected = 5.0 / 14.0 * G * math.sin(ANGLE) * 2.0 ** 2
    assert expected == pytest.approx(4.793, abs=1e-3)
    assert d[0] == pytest.approx(expected, rel=0.01)
    assert abs(d[1]) < 1e-9 and abs(d[2]) < 1e-3  # stays on the surface
    # rolling: the contact point is at rest, v = w x (r n)
    v = R.T @ ball.get_linear_velocity(0)
    w = R.T @ ball.get_angular_velocity(0)
    slip = v + np.cross(w, np.array([0.0, 0.0, -0.1]))
    assert np.linalg.norm(slip) < 1e-3 * np.linalg.norm(v)


@pytest.mark.parametrize("shape", ["capsule", "cylinder"])
def test_round_bodies_roll_at_the_closed_form_rate(shape):
    """Reference: a body of radius r rolling without slip down a slope accelerates at
    g sin(theta) / (1 + I_axis / (m r^2)) (2/3 g sin(theta) for a solid cylinder)."""
    world, body, R = slope_world(ANGLE, 0.8, shape)
    world.step(1000)
    d = _along_slope(body, R, np.array([-5.5, 0.0, 0.1]))
    i_axis = body.inertia[2, 2]
    a = G * math.sin(ANGLE) / (1.0 + i_axis / (body.mass * 0.1 ** 2))
    assert d[0] == pytest.approx(0.5 * a * 1.0 ** 2, rel=0.01)
    assert abs(d[2]) < 1e-3


def test_box_held_by_friction():
    """Reference: static friction holds a block when mu >= tan(theta) (0.8 > 0.364): it creeps < 1 mm."""
    world, box, R = slope_world(ANGLE, 0.8, "box")
    world.step(2000)
    d = _along_slope(box, R, np.array([-5.5, 0.0, 0.1]))
    assert np.linalg.norm(d) < 1e-3


def test_box_slides_with_coulomb_friction():
    """Reference: a sliding block accelerates at g (sin(theta) - mu cos(theta)): (1/2) a t^2 = 1.180 m in
    2 s for mu = 0.3."""
    world, box, R = slope_world(ANGLE, 0.3, "box")
    world.step(2000)
    d = _along_slope(box, R, np.array([-5.5, 0.0, 0.1]))
    expected = 0.5 * G * (math.sin(ANGLE) - 0.3 * math.cos(ANGLE)) * 2.0 ** 2
    assert d[0] == pytest.approx(expected, rel=0.02)
    assert abs(d[1]) < 1e-6


@pytest.mark.parametrize("shape,friction", [("sphere", 0.8), ("box", 0.3), ("capsule", 0.8)])
def test_rotated_map_equals_rotated_gravity(shape, friction):
    """Reference: the height-map spec's invariance: a scene on a rotated map moves like the same scene on
    the unrotated map with gravity rotated the other way, to rounding error (1e-9 m here)."""
    w_rot, b_rot, R = slope_world(ANGLE, friction, shape)
    w_flat, b_flat, _ = slope_world(ANGLE, friction, shape, gravity=R.T @ np.array([0.0, 0.0, -G]),
                                    rotate_map=False)
    w_rot.step(1000)
    w_flat.step(1000)
    np.testing.assert_allclose(b_rot.get_position(0), R @ b_flat.get_position(0), atol=1e-9, rtol=0)
    np.testing.assert_allclose(b_rot.get_rotation_matrix(0), R @ b_flat.get_rotation_matrix(0), atol=1e-9,
                               rtol=0)
    assert np.linalg.norm(b_flat.get_position(0) - [-5.5, 0.0, 0.1]) > 0.1  # it did move
