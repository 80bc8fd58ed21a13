"""Resting contact, stacking and one-sided terrain."""
import math

import numpy as np
import pytest

import taichi_terra as tt
from helpers import G, flat_map, rot_x, slope_world


def test_plate_rests_with_weight_supported():
    """Reference: static equilibrium, the contact impulses sum to m g dt per step (196.2 N for 20 kg)."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    plate = world.add_box(0.4, 0.6, 0.02, 20.0)
    plate.set_position([0.0, 0.0, 0.011])  # dropped from 1 mm
    world.step(1000)
    c = world.get_contacts(0)
    normal_force = np.sum(c.impulses[:, 2]) / world.dt
    assert normal_force == pytest.approx(20.0 * G, rel=1e-3)
    assert np.max(c.depths) < 1e-3
    assert 0.01 - plate.get_position(0)[2] < 1e-3
    assert np.all(c.body_b == plate.index) and np.all(c.body_a == -1) and c.static[0] == "ground"
    np.testing.assert_allclose(c.normals, np.tile([0.0, 0.0, 1.0], (len(c), 1)))


def test_stack_of_five_boxes_stands():
    """Reference: static equilibrium of a stack; the top box must not drift by 1 cm in 5 s."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    boxes = []
    for k in range(5):
        b = world.add_box(0.2, 0.2, 0.2, 1.0)
        b.set_position([0.0, 0.0, 0.1 + 0.2 * k])
        boxes.append(b)
    world.step(5000)
    for k, b in enumerate(boxes):
        assert np.linalg.norm(b.get_position(0) - [0.0, 0.0, 0.1 + 0.2 * k]) < 1e-2
    assert np.linalg.norm(boxes[-1].get_linear_velocity(0)) < 1e-3
    assert world.get_contact_overflow(0) == 0


@pytest.mark.parametrize("shape", ["sphere", "box", "capsule", "cylinder", "mesh"])
def test_body_below_heightmap_leaves_through_surface(shape):
    """Reference: one-sidedness (height-map spec): everything below the surface is inside the terrain and
    is pushed back out through it, along the map's +z, to rest on top (here at the bottom of a bowl)."""
    import trimesh

    world = tt.World(dt=1e-3)
    xs = np.linspace(-2.0, 2.0, 21)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    hm = world.add_heightmap_from_matrix(4.0, 4.0, 0.0, 0.0, 0.1 * (X ** 2 + Y ** 2))
    body = {"sphere": lambda: world.add_sphere(0.1, 1.0),
            "box": lambda: world.add_box(0.2, 0.2, 0.2, 1.0),
            "capsule": lambda: world.add_capsule(0.1, 0.2, 1.0),
            "cylinder": lambda: world.add_cylinder(0.1, 0.2, 1.0),
            "mesh": lambda: world.add_mesh(trimesh.creation.icosphere(subdivisions=1, radius=0.1), 1.0)}[shape]()
    x, y = 0.05, -0.03
    start = np.array([x, y, hm.get_height(x, y) - 0.15])
    body.set_position(start)
    path = []
    for _ in range(100):
        world.step(10)
        path.append(body.get_position(0))
    path = np.array(path)
    emerged = np.argmax(path[:, 2] > [hm.get_height(px, py) for px, py in path[:, :2]])
    assert emerged > 0
    assert np.linalg.norm(path[emerged, :2] - start[:2]) < 0.05  # left upwards, not sideways
    p = path[-1]
    assert p[2] > hm.get_height(p[0], p[1]) + 0.05  # resting on top: centre above the surface
    assert np.linalg.norm(p[:2]) < 0.5 and p[2] < 0.25  # still in the bowl (a capsule tips over and rolls)


def test_slope_and_wall_scene():
    """Reference: the height-map spec's scene. A box and a cylinder rest on a 20-degree map (mu = 0.8 >
    tan 20 deg); a ball, a capsule and a small sphere roll or slide down and stop against a wall map (a map
    rotated 90 degrees about x) at the foot of the slope."""
    angle = math.radians(20.0)
    world = tt.World(dt=1e-3)
    slope = flat_map(world, 13, 17, 6.0, 8.0)
    slope.set_orientation(rot_x(angle))  # local +y goes uphill; downhill is world -y
    wall = flat_map(world, 13, 7, 6.0, 3.0)
    wall.set_orientation(rot_x(-math.pi / 2))  # surface normal along world +y
    wall_y = -3.0
    wall.set_position([0.0, wall_y, -1.0])
    R = rot_x(angle)

    def on_slope(body, x, y_local, lift):
        body.set_position(R @ np.array([x, y_local, lift]))
        body.set_orientation(R)

    box = world.add_box(0.3, 0.3, 0.3, 2.0)
    on_slope(box, -1.5, 1.0, 0.15)
    cyl = world.add_cylinder(0.15, 0.3, 2.0)
    on_slope(cyl, 1.5, 1.0, 0.15)
    ball = world.add_sphere(0.2, 1.0)
    on_slope(ball, -0.5, 2.5, 0.2)
    cap = world.add_capsule(0.1, 0.4, 1.0)
    on_slope(cap, 0.5, 2.5, 0.1)
    cap.set_orientation(R @ np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]))  # axis along x
    small = world.add_sphere(0.05, 0.2)
    on_slope(small, 2.0, 3.0, 0.05)
    start = {b.index: b.get_position(0) for b in (box, cyl)}
    world.step(5000)
    for b in (box, cyl):
        assert np.linalg.norm(b.get_position(0) - start[b.index]) < 0.01
    for b, radius in ((ball, 0.2), (cap, 0.1), (small, 0.05)):
        p = b.get_position(0)
        assert p[1] == pytest.approx(wall_y + radius, abs=2e-3)  # touching the wall
        # resting in the corner: tangent to the slope plane z = y tan(angle) and to the wall
        assert p[2] == pytest.approx((wall_y + radius) * math.tan(angle) + radius / math.cos(angle), abs=2e-3)
        assert np.linalg.norm(b.get_linear_velocity(0)) < 0.02


@pytest.mark.parametrize("first", ["sphere", "capsule"])
def test_sphere_rests_on_a_lying_capsule_whatever_the_creation_order(first):
    """Reference: static equilibrium on the capsule's top line, z = r_capsule + r_capsule + r_sphere; the
    result must not depend on which body was created first."""
    world = tt.World()
    world.add_ground()

    def capsule():
        c = world.add_capsule(0.05, 0.6, 50.0)
        c.set_position([0.0, 0.0, 0.05])
        c.set_orientation([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # axis along y
        return c

    def sphere():
        s = world.add_sphere(0.05, 0.1)
        s.set_position([0.0, 0.1, 0.16])
        return s

    bodies = [capsule(), sphere()] if first == "capsule" else [sphere(), capsule()]
    ball = bodies[1] if first == "capsule" else bodies[0]
    world.step(400)
    assert ball.get_position(0)[2] == pytest.approx(0.15, abs=1e-3)


@pytest.mark.parametrize("top", ["capsule_on_box", "capsule_on_capsule", "box_on_capsule"])
def test_crossed_resting_pairs(top):
    """Reference: static equilibrium of a body lying across another (segment-segment and segment-box
    closest points, not only end points)."""
    world = tt.World()
    world.add_ground()
    across = [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]  # capsule axis along y
    along = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]  # capsule axis along x
    if top == "capsule_on_box":
        low = world.add_box(0.1, 0.1, 0.2, 10.0)
        low.set_position([0.0, 0.0, 0.1])
        up = world.add_capsule(0.05, 0.6, 0.5)
        up.set_orientation(across)
        expected = 0.25
    elif top == "capsule_on_capsule":
        low = world.add_capsule(0.05, 0.6, 10.0)
        low.set_position([0.0, 0.0, 0.05])
        low.set_orientation(along)
        up = world.add_capsule(0.05, 0.6, 0.5)
        up.set_orientation(across)
        expected = 0.15
    else:
        low = world.add_capsule(0.05, 0.6, 10.0)
        low.set_position([0.0, 0.0, 0.05])
        low.set_orientation(along)
        up = world.add_box(0.1, 0.1, 0.1, 0.5)
        expected = 0.15
    up.set_position([0.0, 0.0, expected + 0.002])
    world.step(500)
    assert up.get_position(0)[2] == pytest.approx(expected, abs=1e-3)


def test_cylinder_rolls_on_a_box_like_on_the_ground():
    """Reference: a cylinder rolling on a flat face keeps its axis at height r and its speed (no rim
    polygon bumps): the same as on the ground plane, within 1e-4 m and 1 %."""
    results = []
    for support in ("ground", "box"):
        world = tt.World()
        world.set_default_material(0.8, 0.0)
        world.add_ground()
        top = 0.0
        if support == "box":
            slab = world.add_box(4.0, 1.0, 0.2, 1000.0)
            slab.set_position([1.0, 0.0, 0.1])
            top = 0.2
        cyl = world.add_cylinder(0.1, 0.2, 1.0)
        cyl.set_orientation([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # axis along y
        cyl.set_position([0.0, 0.0, top + 0.1])
        cyl.set_linear_velocity([1.0, 0.0, 0.0])
        cyl.set_angular_velocity([0.0, 10.0, 0.0])  # rolling: w = v / r
        heights = []
        for _ in range(50):
            world.step(20)
            heights.append(cyl.get_position(0)[2] - top)
        results.append((np.array(heights), cyl.get_linear_velocity(0)[0]))
    for heights, vx in results:
        np.testing.assert_allclose(heights, 0.1, atol=1e-4)
        assert vx == pytest.approx(1.0, rel=0.01)


@pytest.mark.parametrize("shape", ["box", "cylinder", "mesh"])
def test_ridge_between_samples_holds_a_body(shape):
    """Reference: contact geometry. The ridge line runs between samples 1 m apart (none under the 0.2 m
    body), so only the triangle edge along the crest can hold it: after landing, its bottom sits on the
    crest (z = 0.5 m) to within 1 mm, not on the slopes 5 cm lower. (Balanced on a knife edge, it may
    later tip over, which is physics; the check is made 0.2 s after release.)"""
    import trimesh

    n = 5
    xs = np.linspace(-2.0, 2.0, n)
    X, _ = np.meshgrid(xs, xs, indexing="ij")
    world = tt.World()
    world.add_heightmap_from_matrix(4.0, 4.0, 0.0, 0.0, 0.5 - 0.5 * np.abs(X))
    body = {"box": lambda: world.add_box(0.2, 0.2, 0.2, 1.0),
            "cylinder": lambda: world.add_cylinder(0.1, 0.2, 1.0),
            "mesh": lambda: world.add_mesh(trimesh.creation.box(extents=(0.2, 0.2, 0.2)), 1.0)}[shape]()
    body.set_position([0.0, 0.5, 0.61])
    world.step(200)
    assert body.get_position(0)[2] - 0.1 == pytest.approx(0.5, abs=1e-3)


def _tangential(c, i):
    return c.impulses[i] - c.normals[i] * (c.impulses[i] @ c.normals[i])


def test_resting_boxes_report_no_internal_friction():
    """Reference: static equilibrium with the least tangential impulses (kernels/solver/relax.py). A box resting
    on the ground and a box resting on it need no friction at all: the sweep's self-cancelling tangential
    impulses (before: 0.55 to 0.8 of each contact's normal impulse) are removed, and the motion is unchanged
    (both stay put). The sweeps run to 1e-10 m/s, so that what is checked is the converged solution (at the
    default 1e-6 m/s, an unconverged part of order tolerance x mass remains)."""
    world = tt.World(dt=1e-3, solver=tt.SolverConfig(tolerance=1e-10))
    world.add_ground()
    low = world.add_box(0.4, 0.4, 0.2, 2.0)
    low.set_position([0.0, 0.0, 0.1])
    top = world.add_box(0.2, 0.2, 0.2, 1.0)
    top.set_position([0.03, -0.02, 0.3])
    world.step(1000)
    c = world.get_contacts(0)
    assert len(c) == 8
    for i in range(len(c)):
        assert np.linalg.norm(_tangential(c, i)) < 1e-9 * (c.impulses[i] @ c.normals[i])
    assert np.linalg.norm(top.get_linear_velocity(0)) < 1e-9


def test_box_held_on_a_slope_shares_the_friction_evenly():
    """Reference: statics on a 20 degree slope with friction 0.8 > tan 20: the contacts carry m g sin 20
    along the slope and m g cos 20 across it in total; the least tangential impulses with that total and no
    twist are equal at the four corners."""
    angle = np.radians(20.0)
    world, box, R = slope_world(angle, 0.8, "box")
    world.step(500)
    c = world.get_contacts(0)
    assert len(c) == 4
    t = np.array([_tangential(c, i) for i in range(4)]) / world.dt
    n = np.array([c.impulses[i] @ c.normals[i] for i in range(4)]) / world.dt
    assert np.linalg.norm(t.sum(axis=0)) == pytest.approx(G * np.sin(angle), rel=1e-6)
    assert n.sum() == pytest.approx(G * np.cos(angle), rel=1e-6)
    np.testing.assert_allclose(t, np.tile(t.mean(axis=0), (4, 1)), atol=1e-9)


def test_sliding_box_keeps_coulomb_friction_at_each_corner():
    """Reference: Coulomb's law. A box dragged along the ground by 0.9 m g with friction 0.5 slides; each
    corner's friction opposes the slip with 0.5 times that corner's normal force (no redistribution)."""
    world = tt.World(dt=1e-3)
    world.set_default_material(0.5, 0.0)
    world.add_ground()
    box = world.add_box(0.2, 0.2, 0.2, 1.0)
    box.set_position([0.0, 0.0, 0.1])
    box.set_external_force([0.9 * G, 0.0, 0.0])
    world.step(300)
    assert box.get_linear_velocity(0)[0] > 0.5
    c = world.get_contacts(0)
    for i in range(len(c)):
        fn = c.impulses[i] @ c.normals[i]
        if fn > 0.0:
            t = _tangential(c, i)
            assert np.linalg.norm(t) == pytest.approx(0.5 * fn, rel=1e-9)
            assert t[0] < 0.0 and abs(t[1]) < 1e-9 * fn


@pytest.mark.parametrize("shape", ["sphere", "box"])
def test_heightmap_contacts_start_within_the_margin_above_the_highest_sample(shape):
    """Reference: the speculative-contact rule, a contact exists once a shape comes within the contact margin
    of the surface. On a flat map (every sample at 0.1 m, so the map's highest sample is the surface) a body
    0.5 margins above it has a contact of depth -0.5 margin, and one 1.5 margins above it has none: the whole
    pair is rejected only beyond the margin."""
    world = tt.World(dt=1e-3)
    margin = world.solver.contact_margin
    world.add_heightmap_from_matrix(4.0, 4.0, 0.0, 0.0, np.full((21, 21), 0.1))
    make = {"sphere": lambda: world.add_sphere(0.1, 1.0), "box": lambda: world.add_box(0.2, 0.2, 0.2, 1.0)}[shape]
    near, far = make(), make()
    near.set_position([-1.0, 0.0, 0.2 + 0.5 * margin])
    far.set_position([1.0, 0.0, 0.2 + 1.5 * margin])
    world.step(1)
    c = world.get_contacts(0)
    assert len(c) > 0 and set(c.body_b) == {near.index}
    np.testing.assert_allclose(c.depths, -0.5 * margin, rtol=1e-9)


def _point_triangle_distance(p, a, b, c):
    """Exact distance [m] from each point of ``p`` (k, 3) to triangle abc (``_closest_points_on_triangles``
    with the one triangle given to every point)."""
    k = len(p)
    tile = lambda v: np.broadcast_to(v, (k, 3))  # noqa: E731
    return np.linalg.norm(p - _closest_points_on_triangles(p, tile(a), tile(b), tile(c))[0], axis=1)


def test_steep_capsule_touches_the_nearest_triangle_of_a_bumpy_map():
    """Reference: the least distance from the capsule's segment to every triangle of the map, by brute force
    (the segment sampled every 0.05 mm, each sample's exact distance to each of the 512 triangles). The
    capsule stands at 60 degrees with its lower end among the bumps and its upper end far above the map:
    the deepest contact found is r minus that distance, at the same place."""
    n, size = 17, 1.6
    xs = np.linspace(-size / 2, size / 2, n)
    hz = 0.02 * np.sin(7.0 * xs)[None, :] * np.cos(5.0 * xs)[:, None]  # [y, x]
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    world.add_heightmap(n, n, size, size, 0.0, 0.0, hz.ravel())
    r, length = 0.03, 0.5
    cap = world.add_capsule(r, length, 1.0)
    tilt = math.radians(30.0)  # axis 60 degrees above the horizontal, leaning towards +x
    rot = np.array([[math.cos(tilt), 0.0, math.sin(tilt)], [0.0, 1.0, 0.0], [-math.sin(tilt), 0.0, math.cos(tilt)]])
    axis = rot @ np.array([0.0, 0.0, 1.0])
    low = np.array([0.13, -0.07, 0.0])
    low[2] = 0.02 * math.sin(7.0 * low[0]) * math.cos(5.0 * low[1]) + r - 0.006  # about 6 mm into the bump
    cap.set_position(low + axis * length / 2)
    cap.set_orientation(rot)
    world.step(1)
    c = world.get_contacts(0)
    assert len(c) >= 1
    samples = low + np.outer(np.linspace(0.0, length, 10001), axis)
    best, where = np.inf, None
    for iy in range(n - 1):
        for ix in range(n - 1):
            v = lambda i, j: np.array([xs[i], xs[j], hz[j, i]])  # noqa: E731
            for a, b, cc in ((v(ix, iy), v(ix + 1, iy), v(ix + 1, iy + 1)),
                             (v(ix, iy), v(ix + 1, iy + 1), v(ix, iy + 1))):
                d = _point_triangle_distance(samples, a, b, cc)
                k = int(np.argmin(d))
                if d[k] < best:
                    best, where = d[k], samples[k]
    assert best < r  # (the scene is as meant: the lower end overlaps the map)
    deepest = int(np.argmax(c.depths))
    # sampling error: the distance along the segment is smooth at its minimum, so 0.05 mm steps miss it by
    # far less than 1e-6 m
    assert c.depths[deepest] == pytest.approx(r - best, abs=1e-6)
    # the segment point it pushes: the contact's map point plus the normal times the gap; the brute force
    # locates its minimum along the segment only to within about a millimetre (the distance is flat there)
    seg_point = c.positions[deepest] + c.normals[deepest] * (r - c.depths[deepest])
    assert np.linalg.norm(seg_point - where) < 2e-3


def _closest_points_on_triangles(p, a, b, c):
    """Closest point to ``p`` on each triangle (rows of a, b, c, counter-clockwise seen from +z): the
    projection where it falls inside, else the nearest point of the nearest edge."""
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    h = np.einsum("ij,ij->i", p - a, n)
    q = p - h[:, None] * n
    inside = np.ones(len(a), bool)
    for e0, e1 in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(e1 - e0, q - e0), n) >= 0.0
    best, where = np.full(len(a), np.inf), q.copy()
    for e0, e1 in ((a, b), (b, c), (c, a)):
        d = e1 - e0
        s = np.clip(np.einsum("ij,ij->i", p - e0, d) / np.einsum("ij,ij->i", d, d), 0.0, 1.0)
        on = e0 + s[:, None] * d
        dist = np.linalg.norm(p - on, axis=1)
        closer = ~inside & (dist < best)
        best[closer], where[closer] = dist[closer], on[closer]
    return where, n, inside


def test_spheres_on_a_bumpy_map_touch_every_local_minimum_of_the_distance():
    """Reference: the contact rule of a sphere on a height map, applied by brute force to all 512 triangles: a
    contact where the distance from the centre to the surface has a local minimum within the margin (a
    triangle's closest point, kept on an edge or a vertex only where no triangle touching it comes closer, and
    once where two triangles share it), at depth r minus that distance. 48 spheres in 48 envs, at random places
    among the bumps and near the grid's samples and edges, where the edge and vertex points must be filtered."""
    n, size = 17, 1.6
    xs = np.linspace(-size / 2, size / 2, n)
    hz = 0.03 * np.sin(7.0 * xs)[None, :] * np.cos(5.0 * xs)[:, None]  # [y, x]
    n_envs = 48
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0), n_envs=n_envs)
    world.add_heightmap(n, n, size, size, 0.0, 0.0, hz.ravel())
    r = 0.04  # (with the margin, its box spans at most two cells of 0.1 m)
    margin = world.solver.contact_margin
    ball = world.add_sphere(r, 1.0)
    rng = np.random.default_rng(3)
    xy = rng.uniform(-0.6, 0.6, (n_envs, 2))
    xy[:16] = xs[rng.integers(2, n - 2, (16, 2))] + rng.uniform(-0.02, 0.02, (16, 2))  # near samples
    xy[16:24, 0] = xs[rng.integers(2, n - 2, 8)] + rng.uniform(-1e-3, 1e-3, 8)  # near the lines between
    surface = 0.03 * np.sin(7.0 * xy[:, 0]) * np.cos(5.0 * xy[:, 1])
    centres = np.c_[xy, surface + r + rng.uniform(-0.01, 0.004, n_envs)]
    ball.set_position(centres)
    world.step(1)  # (the contacts of the step, found before it moves the spheres)
    tri = []
    for iy in range(n - 1):
        for ix in range(n - 1):
            v = lambda i, j: np.array([xs[i], xs[j], hz[j, i]])  # noqa: E731
            tri += [(v(ix, iy), v(ix + 1, iy), v(ix + 1, iy + 1)), (v(ix, iy), v(ix + 1, iy + 1), v(ix, iy + 1))]
    a, b, c = (np.array(t) for t in zip(*tri))
    tol = 1e-9 * 0.2
    n_edge = n_filtered = 0
    for env in range(n_envs):
        centre = centres[env]
        foot, normal, inside = _closest_points_on_triangles(centre, a, b, c)
        dist = np.linalg.norm(centre - foot, axis=1)
        above = np.einsum("ij,ij->i", centre - a, normal) > 0.0
        want = []
        for k in np.flatnonzero(above & (dist < r + margin)):
            if not inside[k]:  # an edge or vertex point: no triangle touching it may come closer
                touching = np.linalg.norm(_closest_points_on_triangles(foot[k], a, b, c)[0] - foot[k], axis=1) < tol
                if np.any(touching & (dist < dist[k] - tol)):
                    n_filtered += 1
                    continue
                n_edge += 1
            if all(np.linalg.norm(foot[k] - point) >= 1e-9 for point, _ in want):  # (two sides of one edge: one)
                want.append((foot[k], r - dist[k]))
        got = world.get_contacts(env)
        assert len(got) == len(want), (env, len(got), len(want))
        for point, depth in want:
            k = int(np.argmin(np.linalg.norm(got.positions - point, axis=1)))
            assert np.linalg.norm(got.positions[k] - point) < 1e-12 and got.depths[k] == pytest.approx(depth, abs=1e-12)
    assert n_edge > 0 and n_filtered > 0  # (the filter kept edge or vertex points and dropped others)


def test_a_long_box_on_a_flat_fine_height_map_rests_on_its_corners():
    """Reference: statics of a box on a plane. A 1 m x 0.08 m box (a tracked robot's belt run) lies slightly
    pitched on a flat height map of 2 cm samples: the plane meets the box at its corners, which carry its
    weight (normal impulses summing to ``m g dt``), and no map sample along the edge of its footprint counts
    as a ridge poking into it (on flat ground a sample's neighbour outside the footprint has no depth, so
    each such sample used to look like a local maximum: about 100 contacts for 32 slots, the rest dropped)."""
    world = tt.World(dt=1e-3)
    nx, ny = 81, 21
    world.add_heightmap(nx, ny, 1.6, 0.4, 0.0, 0.0, np.full(nx * ny, 0.1))
    box = world.add_box(1.0, 0.08, 0.1, 5.0)
    c, s = np.cos(0.003), np.sin(0.003)
    box.set_orientation(np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]))
    box.set_position((0.013, 0.007, 0.1 + 0.05 + 0.0015 - 1e-4))
    world.step(300)
    assert world.get_contact_overflow(0) == 0
    contacts = world.get_contacts(0)
    assert len(contacts) <= 8
    assert contacts.impulses[:, 2].sum() == pytest.approx(5.0 * 9.81 * 1e-3, rel=1e-3)
