"""Height-map point queries (get_height, get_contact_height, get_normal, get_color) against closed forms.

Reference: /work/shared/spec/heightmap.md ("Position and orientation", "Querying the surface", the
HeightMap class description). Pure Python queries: nothing is stepped.
"""
import math

import numpy as np
import pytest

import taichi_terra as tt

# a 4 x 3 grid, 3 m x 1 m, centred at (0.25, -0.5): nodes at x = -1.25 + i, y = -1 + 0.5 j (exact in binary)
NX, NY, XS, YS, CX, CY = 4, 3, 3.0, 1.0, 0.25, -0.5
X0, Y0, DX, DY = CX - XS / 2, CY - YS / 2, XS / (NX - 1), YS / (NY - 1)


def rot(axis, angle):
    """Rotation matrix about a unit axis (Rodrigues)."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def make(heights, **kw):
    world = tt.World()
    return world.add_heightmap(NX, NY, XS, YS, CX, CY, heights, **kw)


def plane(a=0.3, b=-0.7, c=0.25):
    """The map sampling z = a x + b y + c at its nodes (identity pose)."""
    xs, ys = X0 + DX * np.arange(NX), Y0 + DY * np.arange(NY)
    return make([a * xs[i] + b * ys[j] + c for j in range(NY) for i in range(NX)]), (a, b, c)


def samples(rng, n=60, margin=0.0):
    """n random (x, y) over the grid rectangle grown by ``margin`` (identity pose)."""
    xs = rng.uniform(X0 - margin, X0 + XS + margin, n)
    return np.column_stack([xs, rng.uniform(Y0 - margin, Y0 + YS + margin, n)])


def test_layout_index_is_y_times_x_samples_plus_x():
    """Spec: sample (x, y) is heights[y * xSamples + x]; index 0 at the minimum x and y of the grid."""
    h = np.arange(NX * NY, dtype=float) * 10.0
    hm = make(h)
    assert (hm.x_samples, hm.y_samples, hm.center_x, hm.center_y) == (NX, NY, CX, CY)
    for j in range(NY):
        for i in range(NX):
            assert hm.get_height(X0 + i * DX, Y0 + j * DY) == 10.0 * (j * NX + i)
    assert hm.get_height(X0, Y0) == 0.0  # minimum x and y
    assert hm.get_height(X0 + XS, Y0) == 10.0 * (NX - 1)
    assert hm.get_height(X0, Y0 + YS) == 10.0 * (NY - 1) * NX
    np.testing.assert_array_equal(hm.get_heights(), h)


def test_nodes_return_the_sample_exactly(rng):
    """Spec: heights are interpolated over the grid, so at a node the query is that sample, bit for bit
    (every node, corners and the max-x / max-y edges included), for arbitrary sample values."""
    for _ in range(20):
        h = rng.normal(size=NX * NY) * 3.0
        hm = make(h)
        got = np.array([[hm.get_height(X0 + i * DX, Y0 + j * DY) for i in range(NX)] for j in range(NY)])
        np.testing.assert_array_equal(got, h.reshape(NY, NX))
        assert hm.get_contact_height(X0 + XS, Y0 + YS) == h[-1]


def test_from_matrix_equals_flat_construction(rng):
    """Spec: heightIn(i, j) is the sample at x index i and y index j, i.e. heights[j * xSamples + i]."""
    m = rng.normal(size=(NX, NY))
    world = tt.World()
    a = world.add_heightmap_from_matrix(XS, YS, CX, CY, m)
    b = world.add_heightmap(NX, NY, XS, YS, CX, CY, m.T.reshape(-1))
    assert (a.x_samples, a.y_samples) == (NX, NY)
    np.testing.assert_array_equal(a.get_heights(), b.get_heights())
    for i in range(NX):
        for j in range(NY):
            assert a.get_heights()[j * NX + i] == m[i, j]
    for x, y in samples(rng, 30, margin=0.5):
        assert a.get_height(x, y) == b.get_height(x, y)
        np.testing.assert_array_equal(a.get_normal(x, y), b.get_normal(x, y))


def test_plane_is_reproduced_exactly(rng):
    """Closed form: linear interpolation on triangles is exact for z = a x + b y + c, and the normal of
    that plane is (-a, -b, 1) / |(-a, -b, 1)| everywhere on the grid."""
    hm, (a, b, c) = plane()
    n_ref = np.array([-a, -b, 1.0]) / math.sqrt(a * a + b * b + 1.0)
    for x, y in np.vstack([samples(rng), [[X0, Y0], [X0 + XS, Y0 + YS], [X0 + 0.5, Y0 + 0.25]]]):
        assert abs(hm.get_height(x, y) - (a * x + b * y + c)) < 1e-12
        assert abs(hm.get_contact_height(x, y) - (a * x + b * y + c)) < 1e-12
        np.testing.assert_allclose(hm.get_normal(x, y), n_ref, rtol=0, atol=1e-12)
        assert abs(np.linalg.norm(hm.get_normal(x, y)) - 1.0) < 1e-14


def test_triangles_split_along_the_xy_diagonal():
    """Module docs: a cell is split along the diagonal from its (x, y) to its (x+1, y+1) corner. With only
    sample (1, 0) raised to 1, the height at cell fractions (u, v) is u - v below the diagonal, 0 above."""
    h = np.zeros(NX * NY)
    h[1] = 1.0
    hm = make(h)
    for u, v in ((0.75, 0.25), (0.5, 0.0), (0.25, 0.75), (0.5, 0.5)):
        assert hm.get_height(X0 + u * DX, Y0 + v * DY) == pytest.approx(max(u - v, 0.0), abs=1e-15)
    np.testing.assert_allclose(hm.get_normal(X0 + 0.25 * DX, Y0 + 0.75 * DY), [0, 0, 1], atol=1e-15)
    n = np.array([-1.0 / DX, 1.0 / DY, 1.0])
    np.testing.assert_allclose(hm.get_normal(X0 + 0.75 * DX, Y0 + 0.25 * DY), n / np.linalg.norm(n), atol=1e-15)


def test_outside_points_use_the_nearest_edge(rng):
    """Spec (getHeight): points outside the map use the nearest edge samples, i.e. the query at the point
    clamped onto the grid rectangle."""
    h = rng.normal(size=NX * NY)
    hm = make(h)
    for x, y in samples(rng, 80, margin=3.0):
        cx, cy = min(max(x, X0), X0 + XS), min(max(y, Y0), Y0 + YS)
        assert hm.get_height(x, y) == hm.get_height(cx, cy)
        np.testing.assert_array_equal(hm.get_normal(x, y), hm.get_normal(cx, cy))
    for (x, y), k in (((X0 - 5.0, Y0 - 5.0), 0), ((X0 + XS + 5.0, Y0 + YS + 5.0), -1),
                      ((X0 - 5.0, Y0 + YS + 1.0), (NY - 1) * NX), ((X0 + XS + 1.0, Y0 - 2.0), NX - 1)):
        assert hm.get_height(x, y) == pytest.approx(h[k], abs=1e-12)  # beyond a corner: that corner


def test_set_position_shifts_the_grid(rng):
    """Spec: the queries read the grid centred at position + (centerX, centerY); z raises all heights."""
    h = rng.normal(size=NX * NY)
    ref, moved = make(h), make(h)
    p = np.array([2.0, -3.0, 0.5])
    moved.set_position(*p)
    np.testing.assert_array_equal(moved.get_position(), p)
    for x, y in samples(rng, 40, margin=0.5):
        assert abs(moved.get_height(x + p[0], y + p[1]) - (ref.get_height(x, y) + p[2])) < 1e-12
        np.testing.assert_allclose(moved.get_normal(x + p[0], y + p[1]), ref.get_normal(x, y), atol=1e-12)
    moved.set_position(p + 1.0)  # one 3-vector
    assert abs(moved.get_height(X0 + 3.0, Y0 - 2.0) - (h[0] + 1.5)) < 1e-12
    np.testing.assert_allclose(moved.get_com_position(), [CX + 3.0, CY - 2.0, 1.5], atol=1e-15)


@pytest.mark.parametrize("rotation", [rot([0, 1, 0], 0.3), rot([1, 2, 3], 2.0), rot([1, 0, 0], math.pi)])
def test_queries_ignore_the_orientation(rng, rotation):
    """Spec: getHeight/getContactHeight/getNormal/getColor ignore the orientation by design."""
    h = rng.normal(size=NX * NY)
    colors = rng.uniform(size=(NX * NY, 3))
    hm = make(h, colors=colors)
    hm.set_position(0.5, 1.0, -0.25)
    pts = samples(rng, 30, margin=0.5) + [0.5, 1.0]
    before = [(hm.get_height(x, y), hm.get_contact_height(x, y), hm.get_normal(x, y), hm.get_color(x, y))
              for x, y in pts]
    hm.set_orientation(rotation)
    np.testing.assert_allclose(hm.get_rotation_matrix(), rotation, atol=1e-12)
    for (x, y), (hh, ch, n, col) in zip(pts, before):
        assert (hm.get_height(x, y), hm.get_contact_height(x, y)) == (hh, ch)
        np.testing.assert_array_equal(hm.get_normal(x, y), n)
        np.testing.assert_array_equal(hm.get_color(x, y), col)


def test_com_position_follows_the_pose():
    """Spec: getComPosition() is the world position of the grid centre, position + R (centerX, centerY, 0);
    a new map has the identity pose, so it is (centerX, centerY, 0)."""
    hm = make(np.zeros(NX * NY))
    np.testing.assert_array_equal(hm.get_com_position(), [CX, CY, 0.0])
    np.testing.assert_array_equal(hm.get_orientation(), [1.0, 0.0, 0.0, 0.0])
    o, r = np.array([1.0, -2.0, 0.5]), rot([0, 0, 1], 0.5 * math.pi)
    hm.set_orientation(r)  # order does not matter
    hm.set_position(o)
    np.testing.assert_allclose(hm.get_com_position(), o + r @ [CX, CY, 0.0], atol=1e-12)
    np.testing.assert_allclose(hm.get_com_position(), [1.0 + 0.5, -2.0 + 0.25, 0.5], atol=1e-12)


@pytest.mark.parametrize("rotation", [rot([0, 1, 0], 0.35), rot([1, -1, 2], 1.1), rot([1, 0, 0], 0.5 * math.pi)])
def test_rotated_surface_formula_lies_on_the_map(rng, rotation):
    """Spec ("Querying the surface"): the surface point above (x, y) of the unrotated map is
    s = o + R((x, y, h) - o), h = getHeight(x, y). Its map-frame coordinates R^T (s - o) lie on the surface
    of the identity-pose map, and s + eps R n (n = getNormal) is above it (unrotated z > getHeight)."""
    h = rng.normal(size=NX * NY)
    ref, hm = make(h), make(h)
    o = np.array([0.75, -1.5, 0.4])
    hm.set_position(o)
    hm.set_orientation(rotation)
    r = hm.get_rotation_matrix()
    for x, y in samples(rng, 30) + o[:2]:
        s = o + r @ (np.array([x, y, hm.get_height(x, y)]) - o)
        p = r.T @ (s - o)  # map frame
        assert abs(p[2] - ref.get_height(p[0], p[1])) < 1e-12
        above = o + r.T @ (s + 1e-3 * r @ hm.get_normal(x, y) - o)  # unrotated coordinates
        assert above[2] > hm.get_height(above[0], above[1])


def test_rotated_plane_surface_point_closed_form():
    """Closed form: on the plane map z = a x + b y + c (map frame), the spec's surface point for the
    rotated map is o + R (x - ox, y - oy, a (x - ox) + b (y - oy) + c), and its normal R n."""
    hm, (a, b, c) = plane()
    o, r = np.array([2.0, 1.0, -0.5]), rot([0, 1, 0], -0.4)
    hm.set_position(o)
    hm.set_orientation(r)
    for x, y in ((2.0, 0.5), (1.5, 0.75), (3.5, 0.1)):
        s = o + r @ (np.array([x, y, hm.get_height(x, y)]) - o)
        mx, my = x - o[0], y - o[1]
        np.testing.assert_allclose(s, o + r @ [mx, my, a * mx + b * my + c], atol=1e-12)
        n = np.array([-a, -b, 1.0]) / math.sqrt(a * a + b * b + 1.0)
        np.testing.assert_allclose(r @ hm.get_normal(x, y), r @ n, atol=1e-12)


def test_get_color_interpolates_vertex_colors(rng):
    """Spec (getColor): the base colour, interpolated like the height; per-vertex colours given with
    colors= use the same layout (index y * xSamples + x). Each channel equals the height query of a map
    whose samples are that channel; an affine colour field is reproduced exactly."""
    colors = rng.uniform(size=(NX * NY, 3))
    hm = make(np.zeros(NX * NY), colors=colors)
    channels = [make(colors[:, k]) for k in range(3)]
    for x, y in samples(rng, 40, margin=0.5):
        np.testing.assert_allclose(hm.get_color(x, y), [ch.get_height(x, y) for ch in channels], atol=1e-15)
    np.testing.assert_allclose(hm.get_color(X0 + DX, Y0 + 2 * DY), colors[2 * NX + 1], atol=1e-15)
    xs, ys = X0 + DX * np.arange(NX), Y0 + DY * np.arange(NY)
    affine = np.array([[0.5 + 0.1 * xs[i], 0.5 + 0.2 * ys[j], 0.3] for j in range(NY) for i in range(NX)])
    hm2 = make(np.zeros(NX * NY), colors=affine)
    for x, y in samples(rng, 20):
        np.testing.assert_allclose(hm2.get_color(x, y), [0.5 + 0.1 * x, 0.5 + 0.2 * y, 0.3], atol=1e-12)
    one = make(np.zeros(NX * NY), colors=(0.1, 0.2, 0.3))
    np.testing.assert_allclose(one.get_color(0.0, -0.5), [0.1, 0.2, 0.3], atol=1e-15)
    default = make(np.zeros(NX * NY))
    assert np.all((default.get_color(0.0, 0.0) >= 0.0) & (default.get_color(0.0, 0.0) <= 1.0))
