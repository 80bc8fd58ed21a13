"""Ray casts against rotated height maps, soil beds, the ground and every shape; batched casts equal single ones."""
import math

import numpy as np
import pytest
import trimesh

import taichi_terra as tt
from helpers import rot_x, rot_y


def rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def test_ray_onto_a_rotated_map_hits_where_the_spec_formulas_say():
    """Reference: the spec's surface point o + R ((x, y, getHeight(x, y)) - o) and normal R getNormal(x, y).
    A ray cast at that point against the normal hits it, with that normal, at the distance it started from."""
    rng = np.random.default_rng(5)
    world = tt.World()
    hm = world.add_heightmap(9, 7, 4.0, 3.0, 0.5, -0.2, rng.uniform(-0.2, 0.2, 63))
    R = rot_z(0.4) @ rot_y(0.35) @ rot_x(-0.2)
    hm.set_orientation(R)
    o = np.array([0.3, -0.4, 0.8])
    hm.set_position(o)
    for x, y in rng.uniform(-1.2, 1.2, (12, 2)) + o[:2] + [0.5, -0.2]:
        s = o + R @ (np.array([x, y, hm.get_height(x, y)]) - o)
        n = R @ hm.get_normal(x, y)
        hit = world.ray_test(s + 0.7 * n, -n, 2.0)
        assert hit is not None and hit.kind == "heightmap" and hit.object is hm
        assert np.allclose(hit.point, s, atol=1e-9) and hit.distance == pytest.approx(0.7, abs=1e-9)
        assert np.allclose(hit.normal, n, atol=1e-9)
    # from below the surface (inside the terrain) nothing is hit: the map is one-sided
    x, y = 0.6, -0.5
    s = o + R @ (np.array([x, y, hm.get_height(x, y)]) - o)
    n = R @ hm.get_normal(x, y)
    assert world.ray_test(s - 0.3 * n, n, 2.0) is None


def test_rays_hit_each_shape_at_its_closed_form_distance():
    """Rays along -x from x = 5 towards bodies centred on the x axis at different y: the hit is at the
    shape's surface (sphere r, box half size, capsule r, cylinder r, mesh hull vertex), normal +x."""
    world = tt.World()
    shapes = [(world.add_sphere(0.3, 1.0), 0.3), (world.add_box(0.4, 0.2, 0.2, 1.0), 0.2),
              (world.add_capsule(0.15, 0.5, 1.0), 0.15), (world.add_cylinder(0.25, 0.3, 1.0), 0.25),
              (world.add_mesh(trimesh.creation.box(extents=(0.6, 0.2, 0.2)), 1.0), 0.3)]
    for k, (body, _r) in enumerate(shapes):
        body.set_position([0.0, 2.0 * k, 1.0])
    for k, (body, r) in enumerate(shapes):
        hit = world.ray_test([5.0, 2.0 * k, 1.0], [-2.0, 0.0, 0.0], 10.0)
        assert hit.kind == "body" and hit.object is body
        assert hit.distance == pytest.approx(5.0 - r, abs=1e-12)
        assert np.allclose(hit.normal, [1.0, 0.0, 0.0], atol=1e-12)
    # inside a body: that body is ignored; too short: nothing
    assert world.ray_test([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], 10.0) is None
    assert world.ray_test([5.0, 0.0, 1.0], [-1.0, 0.0, 0.0], 4.0) is None
    # a rotated box: the ray meets the face turned towards it
    box = shapes[1][0]
    box.set_orientation(rot_z(math.pi / 2))  # now 0.4 long along y, 0.2 along x
    hit = world.ray_test([-5.0, 2.0, 1.0], [1.0, 0.0, 0.0], 10.0)
    assert hit.object is box and hit.distance == pytest.approx(5.0 - 0.1, abs=1e-12)
    assert np.allclose(hit.normal, [-1.0, 0.0, 0.0], atol=1e-12)


def test_ground_holes_and_soil_beds():
    world = tt.World()
    world.add_ground(-0.5)
    h = np.zeros(9)
    h[4] = np.nan  # every triangle of this 3 x 3 map touches the centre: all holes
    world.add_heightmap(3, 3, 1.0, 1.0, 3.0, 0.0, h)
    bed = world.add_deformable_terrain(5, 5, 1.0, 1.0, 0.0, 0.0, np.zeros(25), tt.SoilMaterial())
    world.build()
    hit = world.ray_test([3.1, 0.1, 1.0], [0.0, 0.0, -1.0], 5.0)
    assert hit.kind == "ground" and hit.distance == pytest.approx(1.5)
    s = np.zeros(25)
    s[12] = 0.08  # the centre sample sinks 8 cm
    bed.set_soil_state(s, s, np.zeros(25))
    hit = world.ray_test([0.0, 0.0, 1.0], [0.0, 0.0, -1.0], 5.0)
    assert hit.object is bed and hit.point[2] == pytest.approx(-0.08, abs=1e-12)


def test_batched_casts_equal_single_casts_in_every_env():
    """A planar lidar of 24 rays from three envs with different body poses: ray_test_batch, one launch,
    gives what ray_test gives ray by ray."""
    rng = np.random.default_rng(2)
    world = tt.World(n_envs=3)
    world.add_ground()
    world.add_heightmap_from_matrix(4.0, 4.0, 0.0, 0.0, rng.uniform(0.0, 0.1, (9, 9)))
    bodies = [world.add_sphere(0.2, 1.0), world.add_box(0.3, 0.3, 0.3, 1.0), world.add_cylinder(0.15, 0.4, 1.0)]
    for b in bodies:
        b.set_position(np.column_stack([rng.uniform(-1.5, 1.5, (3, 2)), np.full(3, 0.3)]))
    ang = np.linspace(0.0, 2.0 * np.pi, 24, endpoint=False)
    dirs = np.column_stack([np.cos(ang), np.sin(ang), np.full(24, -0.3)])
    origins = np.tile([0.0, 0.0, 0.5], (24, 1))
    out = world.ray_test_batch(origins, dirs, 3.0)
    assert out["distance"].shape == (3, 24) and out["point"].shape == (3, 24, 3)
    kinds = {None: 0, "ground": 1, "heightmap": 2, "body": 3}
    for e in range(3):
        for r in range(24):
            single = world.ray_test(origins[r], dirs[r], 3.0, env=e)
            if single is None:
                assert not out["hit"][e, r] and out["distance"][e, r] == np.inf
                continue
            assert out["hit"][e, r] and out["kind"][e, r] == kinds[single.kind] and out["index"][e, r] == single.index
            assert out["distance"][e, r] == single.distance
            assert np.array_equal(out["point"][e, r], single.point)
            assert np.array_equal(out["normal"][e, r], single.normal)
    assert 1 in out["kind"] or 2 in out["kind"]
    assert 3 in out["kind"]  # some rays meet bodies


def test_rays_hit_the_shapes_on_articulated_links():
    """Reference: geometry. A fixed hinge at 1 m height carries a 0.4 x 0.1 x 0.1 m box link centred 0.3 m out
    along x. A ray straight down at x = 0.3 m meets the box's top face at z = 1.05 m while the arm is level,
    reported as a link with its system and name; with the arm turned 90 degrees about y (pointing down) the
    same ray misses the arm and meets the ground, and a ray down at x = 0 meets the box's end nearest the hinge
    at z = 0.9 m."""
    urdf = ('<robot name="arm"><link name="base"/><link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="1"/>'
            '<inertia ixx="1e-3" iyy="1e-2" izz="1e-2" ixy="0" ixz="0" iyz="0"/></inertial><collision>'
            '<origin xyz="0.3 0 0"/><geometry><box size="0.4 0.1 0.1"/></geometry></collision></link>'
            '<joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><origin xyz="0 0 1"/>'
            '<axis xyz="0 1 0"/></joint></robot>')
    world = tt.World(n_envs=2)
    world.add_ground()
    arm = world.add_articulated_system(urdf, base="fixed")
    arm.set_generalized_coordinate(np.array([[0.0], [np.pi / 2]]))  # env 1: about +y, x turns towards -z
    hits = world.ray_test_batch([[0.3, 0.0, 2.0], [0.0, 0.0, 0.95]], [[0.0, 0.0, -1.0]] * 2, 5.0)
    assert hits["kind"][0, 0] == 4 and hits["distance"][0, 0] == pytest.approx(0.95, abs=1e-12)
    np.testing.assert_allclose(hits["normal"][0, 0], [0.0, 0.0, 1.0], atol=1e-12)
    assert hits["kind"][1, 0] == 1 and hits["distance"][1, 0] == pytest.approx(2.0, abs=1e-12)
    assert hits["kind"][1, 1] == 4 and hits["point"][1, 1, 2] == pytest.approx(0.9, abs=1e-12)
    hit = world.ray_test([0.3, 0.0, 2.0], [0.0, 0.0, -1.0], 5.0, env=0)
    assert hit.kind == "link" and hit.object == (arm, "arm")
