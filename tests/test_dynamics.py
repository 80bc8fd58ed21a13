"""Free-body dynamics against closed forms."""
import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.validation import quat_to_matrix


def test_free_fall_matches_semi_implicit_euler():
    """Reference: semi-implicit Euler, v_n = v0 + n g dt, z_n = z0 + n dt v0 + g dt^2 n (n + 1) / 2."""
    dt, g, n = 1e-3, -9.81, 500
    world = tt.World(dt=dt, gravity=(0.0, 0.0, g))
    ball = world.add_sphere(0.1, 2.0)
    ball.set_position([0.3, -0.2, 10.0])
    ball.set_linear_velocity([1.0, 0.5, 2.0])
    world.step(n)
    z = 10.0 + n * dt * 2.0 + g * dt * dt * n * (n + 1) / 2.0
    np.testing.assert_allclose(ball.get_position(0), [0.3 + n * dt, -0.2 + 0.5 * n * dt, z], atol=1e-12, rtol=0)
    np.testing.assert_allclose(ball.get_linear_velocity(0), [1.0, 0.5, 2.0 + n * dt * g], atol=1e-12, rtol=0)


def test_torque_free_spin_conserves_angular_momentum_and_energy():
    """Reference: Euler's equations without torque conserve L = R I R^T w exactly; the implicit
    gyroscopic step keeps |L| to O(dt) drift and never gains energy (Bullet's implicit gyroscopic
    integrator)."""
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    box = world.add_box(0.1, 0.3, 0.6, 1.0)  # three distinct principal moments
    box.set_angular_velocity([0.1, 3.0, 0.2])  # near the unstable intermediate axis
    inertia = box.inertia

    def momentum_energy():
        r = quat_to_matrix(box.get_orientation(0))
        w = box.get_angular_velocity(0)
        iw = r @ inertia @ r.T
        return iw @ w, 0.5 * w @ iw @ w

    l0, e0 = momentum_energy()
    world.step(2000)
    l1, e1 = momentum_energy()
    assert np.linalg.norm(l1 - l0) < 0.02 * np.linalg.norm(l0)
    assert e1 <= e0 * (1.0 + 1e-9)
    assert e1 > 0.9 * e0


def test_external_force_and_torque_accelerate_as_newton_euler():
    """Reference: a = F / m and, for a sphere at rest, dw/dt = tau / I (no gyroscopic term)."""
    dt, n = 1e-3, 100
    world = tt.World(dt=dt, gravity=(0.0, 0.0, 0.0))
    ball = world.add_sphere(0.2, 3.0)
    ball.set_external_force([6.0, 0.0, -3.0])
    ball.set_external_torque([0.0, 0.0, 0.48])
    world.step(n)
    inertia = 0.4 * 3.0 * 0.2 ** 2
    np.testing.assert_allclose(ball.get_linear_velocity(0), [2.0 * n * dt, 0.0, -1.0 * n * dt], atol=1e-12)
    np.testing.assert_allclose(ball.get_angular_velocity(0), [0.0, 0.0, 0.48 / inertia * n * dt], atol=1e-12)
    np.testing.assert_allclose(ball.get_external_force(0), [6.0, 0.0, -3.0])


@pytest.mark.parametrize("add", ["sphere", "box", "capsule", "cylinder"])
def test_shape_inertia_closed_forms(add):
    """Reference: textbook solid-body inertias (sphere 2/5 m r^2, box m (b^2 + c^2) / 12, cylinder
    m (3 r^2 + h^2) / 12 and m r^2 / 2); the capsule is checked against a numerical integration."""
    world = tt.World()
    m = 2.0
    if add == "sphere":
        body = world.add_sphere(0.3, m)
        expected = np.eye(3) * 0.4 * m * 0.09
    elif add == "box":
        body = world.add_box(0.2, 0.4, 0.6, m)
        expected = np.diag([m * (0.16 + 0.36), m * (0.04 + 0.36), m * (0.04 + 0.16)]) / 12.0
    elif add == "cylinder":
        body = world.add_cylinder(0.1, 0.5, m)
        expected = np.diag([m * (0.03 + 0.25) / 12.0, m * (0.03 + 0.25) / 12.0, 0.5 * m * 0.01])
    else:
        body = world.add_capsule(0.1, 0.4, m)
        # Monte Carlo-free check: integrate the capsule's density on a fine grid
        r, h = 0.1, 0.4
        xs = np.linspace(-r, r, 81)
        zs = np.linspace(-h / 2 - r, h / 2 + r, 241)
        X, Y, Z = np.meshgrid(xs, xs, zs, indexing="ij")
        d = np.sqrt(X ** 2 + Y ** 2 + (np.abs(Z) - np.minimum(np.abs(Z), h / 2)) ** 2)
        inside = d <= r
        rho = m / inside.sum()
        expected = np.diag([rho * np.sum((Y ** 2 + Z ** 2)[inside]), rho * np.sum((X ** 2 + Z ** 2)[inside]),
                            rho * np.sum((X ** 2 + Y ** 2)[inside])])
        np.testing.assert_allclose(body.inertia, expected, rtol=0.02)
        return
    np.testing.assert_allclose(body.inertia, expected, rtol=1e-12)


def test_mesh_inertia_matches_box():
    """Reference: a box given as a triangle mesh has the closed-form box inertia and its centre of
    mass at the origin of the body."""
    import trimesh

    world = tt.World()
    mesh = trimesh.creation.box(extents=(0.2, 0.4, 0.6))
    mesh.apply_translation([1.0, 2.0, 3.0])
    body = world.add_mesh(mesh, 2.0)
    m = 2.0
    expected = np.diag([m * (0.16 + 0.36), m * (0.04 + 0.36), m * (0.04 + 0.16)]) / 12.0
    np.testing.assert_allclose(body.inertia, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.mean(body.shape.points, axis=0), 0.0, atol=1e-12)


def test_mesh_from_file_rests_on_ground(tmp_path):
    """Reference: static equilibrium. A convex mesh loaded from an STL file lands flat on its largest face
    and its contacts carry its weight, m g."""
    import trimesh

    path = tmp_path / "prism.stl"
    trimesh.creation.box(extents=(0.3, 0.2, 0.1)).export(path)
    world = tt.World(dt=1e-3)
    world.add_ground()
    body = world.add_mesh(str(path), 1.5)
    body.set_position([0.0, 0.0, 0.06])
    world.step(800)
    c = world.get_contacts(0)
    assert np.sum(c.impulses[:, 2]) / world.dt == pytest.approx(1.5 * 9.81, rel=1e-3)
    assert body.get_position(0)[2] == pytest.approx(0.05, abs=1e-3)
    np.testing.assert_allclose(quat_to_matrix(body.get_orientation(0))[:, 2], [0.0, 0.0, 1.0], atol=1e-6)
