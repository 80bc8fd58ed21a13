"""Batched height scans (``World.scan_heights``): the terrain's height under points carried by a body, in every
env, against the surfaces' own samples."""
import math

import numpy as np
import pytest

import taichi_terra as tt

N = 41  # samples per side of the 4 m maps: 0.1 m apart


def _grid():
    xs = np.linspace(-2.0, 2.0, N)
    return np.meshgrid(xs, xs, indexing="xy")  # (y, x) order: heights[y * N + x]


def _world(heights, ground=None, n_envs=3):
    world = tt.World(dt=1e-3, n_envs=n_envs)
    if ground is not None:
        world.add_ground(ground)
    world.add_heightmap(N, N, 4.0, 4.0, 0.0, 0.0, heights.reshape(-1))
    probe = world.add_sphere(0.05, 1.0)
    return world, probe


def _place(probe, x, y, yaw, z=3.0):
    for env in range(len(x)):
        probe.set_position([x[env], y[env], z], env=env)
        c, s = math.cos(yaw[env]), math.sin(yaw[env])
        probe.set_orientation(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), env=env)


def test_a_scan_reads_each_sample_of_a_sine_map_where_the_body_carries_it():
    """Reference: the map's own samples (a vertical ray at a sample meets the surface at its height, to
    rounding). Three envs, the probe at three places and yaws (0, 90 and 210 degrees); the scan's points are
    offsets in its yaw-aligned frame, turned into the world by its yaw: each must land on a sample."""
    gx, gy = _grid()
    heights = 0.3 * np.sin(1.3 * gx) * np.cos(0.7 * gy)
    world, probe = _world(heights)
    _place(probe, [0.0, 0.5, -0.3], [0.0, -0.2, 0.4], [0.0, math.pi / 2, math.radians(210.0)])
    offsets = np.array([[a, b] for a in (-0.5, 0.0, 0.3, 1.0) for b in (-0.4, 0.0, 0.7)])
    scan = world.scan_heights(offsets, probe)
    assert scan.shape == (3, len(offsets))
    for env, (px, py, yaw) in enumerate([(0.0, 0.0, 0.0), (0.5, -0.2, math.pi / 2),
                                          (-0.3, 0.4, math.radians(210.0))]):
        c, s = math.cos(yaw), math.sin(yaw)
        wx = px + c * offsets[:, 0] - s * offsets[:, 1]
        wy = py + s * offsets[:, 0] + c * offsets[:, 1]
        ix, iy = np.rint((wx + 2.0) / 0.1).astype(int), np.rint((wy + 2.0) / 0.1).astype(int)
        on_sample = (np.abs(wx - (-2.0 + 0.1 * ix)) < 1e-9) & (np.abs(wy - (-2.0 + 0.1 * iy)) < 1e-9)
        expected = 0.3 * np.sin(1.3 * wx) * np.cos(0.7 * wy)
        np.testing.assert_allclose(scan[env][on_sample], heights[iy, ix][on_sample], atol=1e-9)
        # between samples the surface is the map's triangles: within the sine's curvature over a cell
        np.testing.assert_allclose(scan[env], expected, atol=0.3 * 1.3 ** 2 * 0.1 ** 2)
        assert on_sample.sum() >= (12 if env < 2 else 0)
    np.testing.assert_array_equal(world.scan_heights(offsets, probe, env=1), scan[1])


def test_a_scan_over_a_gap_reads_the_surface_below_or_the_fill_never_the_edge():
    """Reference: a flat map at 0.5 m with a 1 m square hole (its samples NaN) over a ground plane at -0.2 m:
    points over the hole read the ground, points beside it the map, points off the map the ground; without
    the ground, the fill value. Near the hole's edge (5 cm in) the ground is read, not the edge as a wall."""
    gx, gy = _grid()
    heights = np.full_like(gx, 0.5)
    hole = (np.abs(gx) <= 0.5 + 1e-9) & (np.abs(gy) <= 0.5 + 1e-9)
    heights[hole] = np.nan
    points = np.array([[0.0, 0.0], [0.35, 0.0], [1.0, 1.0], [-1.5, 0.2], [3.0, 0.0]])
    for ground, far in ((-0.2, -0.2), (None, -7.0)):
        world, probe = _world(heights, ground, n_envs=1)
        _place(probe, [0.0], [0.0], [0.0])
        scan = world.scan_heights(points, probe, env=0, fill=-7.0)
        below = -0.2 if ground is not None else -7.0
        np.testing.assert_allclose(scan, [below, below, 0.5, 0.5, far], atol=1e-9)
        nan_fill = world.scan_heights(points, probe, env=0)
        assert np.isnan(nan_fill[0]) == (ground is None)


def test_a_scan_reads_a_step_and_a_sunk_soil_bed():
    """Reference: a step map (0 m, then 0.2 m from x = 0.5 m): its two levels on either side; and a soil bed
    under a plate that sank: the scan at each sample reads the bed's deformed surface
    (``get_surface_heights``), in each env its own sinkage."""
    gx, gy = _grid()
    world, probe = _world(np.where(gx >= 0.5 - 1e-9, 0.2, 0.0), n_envs=1)
    _place(probe, [0.0], [0.0], [0.0])
    np.testing.assert_allclose(world.scan_heights([[0.2, 0.0], [0.8, 0.1], [-1.0, 0.0]], probe, env=0),
                               [0.0, 0.2, 0.0], atol=1e-9)
    world = tt.World(dt=1e-3, n_envs=2)
    n = 21
    bed = world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n),
                                       tt.SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, damping=3e4))
    bed.set_material(tt.SoilMaterial(bekker_kphi=3e5, sinkage_exponent=1.0, damping=3e4), env=1)
    plate = world.add_box(0.4, 0.4, 0.02, 20.0)
    plate.set_position([0.025, 0.025, 0.01])
    world.step(400)
    xs = np.linspace(-0.5, 0.5, n)
    pts = np.array([[x, y] for y in xs[6:15:2] for x in xs[6:15:2]])
    for env in range(2):
        at = plate.get_position(env)
        rel = pts - at[:2]  # (the plate does not turn: offsets in its frame are world offsets)
        scan = world.scan_heights(rel, plate, env=env)
        surface = bed.get_surface_heights(env).reshape(n, n)
        idx = np.rint((pts + 0.5) / 0.05).astype(int)
        np.testing.assert_allclose(scan, surface[idx[:, 1], idx[:, 0]], atol=1e-9)
        assert scan.min() < -1e-3  # (it sank)
    assert world.scan_heights(rel, plate, env=0).min() < world.scan_heights(rel, plate, env=1).min()


def test_bad_scans_are_refused():
    gx, _gy = _grid()
    world, probe = _world(np.zeros_like(gx), n_envs=2)
    for call, error, words in (
            (lambda: world.scan_heights([[0.0, 0.0, 0.0]], probe), ValueError, "shape"),
            (lambda: world.scan_heights([[np.nan, 0.0]], probe), ValueError, "finite"),
            (lambda: world.scan_heights([[0.0, 0.0]], "probe"), TypeError, "frame"),
            (lambda: world.scan_heights([[0.0, 0.0]], probe, env=2), ValueError, "env"),
            (lambda: world.scan_heights([[0.0, 0.0]], probe, fill=np.inf), ValueError, "fill")):
        with pytest.raises(error, match=words):
            call()
