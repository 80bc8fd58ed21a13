"""Planar world API: kinematics, batches, checkpoints, reports, grid maps, limits and bad input."""
import math

import numpy as np
import pytest
import shapely

from taichi_terra import planar
from taichi_terra.planar.shapes import grid_boundary


def ten_boxes(n_envs):
    w = planar.World(dt=0.1, n_envs=n_envs)
    robot = w.add_rectangle(0.6, 0.4, kinematics="diff", mass=20.0, friction=1.0)
    for i in range(10):
        w.add_rectangle(0.3, 0.3, mass=1.0, position=(0.5 + 0.31 * i, 0.02 * (i % 3)), angle=0.1 * (i % 2))
    w.add_linestring([(-1.3, -1.5), (4.9, -1.5), (4.9, 1.5), (-1.3, 1.5), (-1.3, -1.5)])
    return w, robot


def test_batch_of_16_envs_equals_16_single_env_runs():
    """Each env is an independent world: 16 envs with different commands give, env by env, bit for bit the
    results of 16 one-env worlds (the contact step runs each env's sweeps in the same order)."""
    rng = np.random.default_rng(3)
    cmds = np.column_stack([rng.uniform(0.2, 0.8, 16), rng.uniform(-0.6, 0.6, 16)])
    w, _ = ten_boxes(16)
    w.set_commands(cmds[:, None, :])
    w.step(20)
    poses, vels, contacts = w.get_poses(), w.get_velocities(), w.get_contacts()
    assert len({poses[e].tobytes() for e in range(16)}) == 16  # the envs really differ
    for e in range(16):
        one, robot = ten_boxes(1)
        robot.set_command(cmds[e])
        one.step(20)
        assert np.array_equal(one.get_poses(0), poses[e])
        assert np.array_equal(one.get_velocities(0), vels[e])
        c = one.get_contacts(0)
        n = contacts.count[e]
        assert c.count[0] == n
        assert np.array_equal(c.a[0, :n], contacts.a[e, :n]) and np.array_equal(c.force[0, :n], contacts.force[e, :n])


def test_checkpoint_restore_replays_bit_for_bit():
    w, robot = ten_boxes(2)
    robot.set_command([0.6, 0.3])
    w.step(5)
    ck = w.checkpoint()
    w.step(10)
    first = (w.get_poses().copy(), w.get_velocities().copy(), w.get_contacts().force.copy(), w.time)
    w.restore(ck)
    assert w.time == pytest.approx(0.5)
    w.step(10)
    assert np.array_equal(first[0], w.get_poses()) and np.array_equal(first[1], w.get_velocities())
    assert np.array_equal(first[2], w.get_contacts().force) and first[3] == w.time
    with pytest.raises(TypeError, match="checkpoint"):
        w.restore({"pose": 1})


@pytest.mark.parametrize("kin,cmd", [("diff", (0.4, 0.5)), ("omni", (0.3, -0.2)), ("acker", (0.4, 0.3))])
def test_driven_kinematics_follow_their_models(kin, cmd):
    """Explicit Euler steps of the kinematics models (IR-SIM's): diff (v, omega): x += v cos th dt, y += v sin th dt,
    th += omega dt; omni (vx, vy) body frame: position += R(th) (vx, vy) dt, heading held; acker (v, steer): like
    diff with omega = v tan(steer) / L, the steering angle set to the command after the step."""
    dt, n = 0.1, 12
    w = planar.World(dt=dt, gravity=9.81)
    kw = {"wheelbase": 0.5} if kin == "acker" else {}
    robot = w.add_circle(0.2, kinematics=kin, mass=1.0, angle=0.3, **kw)
    robot.set_command(cmd)
    x, y, th, steer = 0.0, 0.0, 0.3, 0.0
    for _ in range(n):
        w.step()
        if kin == "omni":
            x += (cmd[0] * math.cos(th) - cmd[1] * math.sin(th)) * dt
            y += (cmd[0] * math.sin(th) + cmd[1] * math.cos(th)) * dt
        else:
            omega = cmd[1] if kin == "diff" else cmd[0] * math.tan(steer) / 0.5
            x, y, th = x + cmd[0] * math.cos(th) * dt, y + cmd[0] * math.sin(th) * dt, th + omega * dt
            steer = cmd[1] if kin == "acker" else 0.0
    assert robot.get_pose(0) == pytest.approx([x, y, math.atan2(math.sin(th), math.cos(th))], abs=1e-12)
    if kin == "acker":
        assert robot.get_steering(0) == pytest.approx(cmd[1])


def test_contact_reports_per_pair_and_per_object_agree():
    """Per-object reports are the per-pair contacts seen from each side: the normal flips for b, the point, depth
    and force are shared; the arrays for all envs hold the same rows as the lists."""
    w, robot = ten_boxes(3)
    robot.set_command([0.5, 0.0])
    w.step(8)
    c, oc = w.get_contacts(), w.get_object_contacts()
    assert np.array_equal(oc.count, 2 * c.count)
    for e in range(3):
        lst = w.get_contact_list(e)
        assert len(lst) == c.count[e] > 0
        for k, obj in enumerate(w.objects):
            reps = obj.get_contact_reports(e)
            rows = np.flatnonzero(oc.owner[e] == k)
            assert len(reps) == len(rows) == oc.per_object[e, k]
            for r, i in zip(reps, rows):
                assert r.other.index == oc.other[e, i]
                assert np.array_equal(r.normal, oc.normal[e, i]) and r.force == oc.force[e, i]
                assert np.array_equal(r.point, oc.point[e, i]) and r.depth == oc.depth[e, i]
        for con in lst:
            ra, rb = con.report(con.a), con.report(con.b)
            assert np.array_equal(ra.normal, -rb.normal) and ra.other is con.b and rb.other is con.a
    with pytest.raises(ValueError, match="one of the contact's objects"):
        lst[0].report(w.objects[-1] if lst[0].a is not w.objects[-1] and lst[0].b is not w.objects[-1] else robot)


def test_grid_boundary_merges_edges_and_indexes_them_in_buckets():
    """An occupied 3 x 2 block has a boundary of 4 merged segments; a bucket lists every segment whose box meets
    it; cell (ix, iy) spans origin + res * [ix, ix + 1] x [iy, iy + 1]."""
    occ = np.zeros((10, 6), bool)
    occ[2:5, 1:3] = True
    g = grid_boundary(occ, 0.5, np.array([1.0, -1.0]), bucket_cells=4)
    segs = {tuple(map(tuple, np.round(s, 9))) for s in g.segments}
    assert segs == {((2.0, -0.5), (2.0, 0.5)), ((3.5, -0.5), (3.5, 0.5)),
                    ((2.0, -0.5), (3.5, -0.5)), ((2.0, 0.5), (3.5, 0.5))}
    assert g.shape == (3, 2) and g.cell == 2.0
    for bucket in range(6):
        bx, by = divmod(bucket, 2)
        box = shapely.box(1.0 + 2 * bx, -1.0 + 2 * by, 3.0 + 2 * bx, 1.0 + 2 * by)
        listed = set(g.items[g.offsets[bucket]:g.offsets[bucket + 1]])
        assert listed == {s for s, seg in enumerate(g.segments) if shapely.LineString(seg).intersects(box)}


def test_full_pair_table_counts_what_it_drops():
    w = planar.World(dt=0.1, max_pairs=3)
    for i in range(6):
        w.add_circle(0.3, mass=1.0, position=(0.5 * i, 0.0))
    w.step()
    assert w.max_pairs == 3
    assert w.get_pair_overflow(0) == 2  # 5 neighbouring pairs, 3 kept
    assert planar.World().max_pairs == 1


def test_sweeps_stop_when_nothing_moves_and_respect_the_limit():
    w = planar.World(dt=0.1, iterations=3)
    for i in range(8):  # a tight row of overlapping discs needs many sweeps
        w.add_circle(0.3, mass=1.0, position=(0.4 * i, 0.0))
    w.step()
    assert w.get_sweeps(0) == 3
    w2 = planar.World(dt=0.1)
    w2.add_circle(0.3, mass=1.0)
    w2.add_circle(0.3, mass=1.0, position=(2.0, 0.0))
    w2.step()
    assert w2.get_sweeps(0) == 1  # nothing overlapped: one sweep


def test_draw_data_shapes():
    w, robot = ten_boxes(1)
    w.add_circle(0.1, mass=1.0, position=(0.0, 1.0))
    w.step()
    d = w.draw_data(0)
    assert d["triangles"].shape == (11 * 2, 3, 2) and d["circles"].shape == (1, 2)
    assert d["segments"].shape == (4, 2, 2) and d["object_kind"].tolist() == [2] + [1] * 10 + [0, 1]
    assert d["poses"].shape == (13, 3) and d["bounds"][0] <= -1.3 and d["bounds"][2] >= 4.9


def test_geometry_is_the_shape_at_its_pose():
    """Reference: the builder's shapes. A posed rectangle keeps its area and has its centroid at the pose; an L
    (non-convex, split into triangles) merges back into one polygon of its area; a disc's 64-gon has the area
    r^2 (64/2) sin(2 pi/64); a wall is a line; every env has its own pose."""
    w = planar.World(n_envs=2)
    box = w.add_rectangle(0.4, 0.2, mass=1.0, position=(1.0, 2.0))
    ell = w.add_polygon([(0, 0), (0.5, 0), (0.5, 0.1), (0.1, 0.1), (0.1, 0.4), (0, 0.4)], mass=1.0)
    disc = w.add_circle(0.3, mass=1.0, position=(-1.0, 0.0))
    wall = w.add_linestring([(3, -1), (3, 1)])
    box.set_pose([-2.0, 0.5, math.pi / 2], env=1)
    g0, g1 = box.get_geometry(0), box.get_geometry(1)
    assert g0.area == pytest.approx(0.08) and g1.area == pytest.approx(0.08)
    assert np.allclose(g0.centroid.coords[0], (1.0, 2.0)) and np.allclose(g1.centroid.coords[0], (-2.0, 0.5))
    assert np.allclose(g1.bounds, (-2.1, 0.3, -1.9, 0.7))  # turned a quarter: 0.2 wide, 0.4 high
    assert ell.get_geometry().geom_type == "Polygon" and ell.get_geometry().area == pytest.approx(0.5 * 0.1 + 0.1 * 0.3)
    assert disc.get_geometry().area == pytest.approx(0.09 * 32 * math.sin(2 * math.pi / 64))
    assert shapely.get_type_id(wall.get_geometry()) == 1 and wall.get_geometry().length == pytest.approx(2.0)
    for bad, err in ((None, TypeError), (2, ValueError), (1.0, TypeError)):
        with pytest.raises(err, match="env"):
            box.get_geometry(bad)
    with pytest.raises(ValueError, match="circle_sides"):
        disc.get_geometry(0, circle_sides=3)


# -- bad input -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,err,match", [
    ({"dt": 0.0}, ValueError, "dt"), ({"n_envs": 0}, ValueError, "n_envs"), ({"gravity": -1.0}, ValueError, "gravity"),
    ({"friction": -0.1}, ValueError, "friction"), ({"restitution": 1.5}, ValueError, "restitution"),
    ({"iterations": 0}, ValueError, "iterations"), ({"slop": float("nan")}, ValueError, "slop"),
    ({"max_pairs": 0}, ValueError, "max_pairs"), ({"dt": "1"}, TypeError, "dt"),
])
def test_bad_world_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        planar.World(**kwargs)


@pytest.mark.parametrize("call,err,match", [
    (lambda w: w.add_polygon([(0, 0), (1, 0), (2, 0)]), ValueError, "area"),  # collinear
    (lambda w: w.add_polygon([(0, 0), (1, 1), (1, 0), (0, 1)]), ValueError, "self-intersection"),  # bow tie
    (lambda w: w.add_polygon([(0, 0), (1, 0)]), ValueError, "vertices"),
    (lambda w: w.add_polygon([(0, 0), (1, 0), (np.nan, 1)]), ValueError, "vertices"),
    (lambda w: w.add_circle(-1.0), ValueError, "radius"),
    (lambda w: w.add_rectangle(1.0, 0.0), ValueError, "height"),
    (lambda w: w.add_circle(1.0, mass=-2.0), ValueError, "mass"),
    (lambda w: w.add_circle(1.0, mass=0.0), ValueError, "mass"),
    (lambda w: w.add_circle(1.0, friction=-0.5), ValueError, "friction"),
    (lambda w: w.add_circle(1.0, restitution=2.0), ValueError, "restitution"),
    (lambda w: w.add_circle(1.0, inertia=0.0), ValueError, "inertia"),
    (lambda w: w.add_circle(1.0, kinematics="tank"), ValueError, "kinematics"),
    (lambda w: w.add_circle(1.0, kind="driven"), ValueError, "kinematics is required"),
    (lambda w: w.add_circle(1.0, kind="passive", kinematics="diff"), ValueError, "not allowed"),
    (lambda w: w.add_circle(1.0, kind="ghost"), ValueError, "kind"),
    (lambda w: w.add_circle(1.0, kind="static", mass=3.0), ValueError, "immovable"),
    (lambda w: w.add_circle(1.0, kinematics="diff", wheelbase=1.0), ValueError, "wheelbase"),
    (lambda w: w.add_circle(1.0, position=(0, 1, 2)), ValueError, "position"),
    (lambda w: w.add_circle(1.0, colour="red"), TypeError, "unknown object option.*colour"),
    (lambda w: w.add_rectangle(1.0, 1.0, kinematics="acker", wheelbase=0.0), ValueError, "wheelbase"),
    (lambda w: w.add_linestring([(0, 0), (1, 0)], kind="passive"), ValueError, "area"),
    (lambda w: w.add_linestring([(0, 0), (0, 0)]), ValueError, "distinct"),
    (lambda w: w.add_compound([]), ValueError, "parts"),
    (lambda w: w.add_compound([("circle", (0, 0), -1.0)]), ValueError, "radius"),
    (lambda w: w.add_compound(["box"]), TypeError, "parts"),
    (lambda w: w.add_grid_map(np.zeros((4, 4)), 0.1), ValueError, "no occupied"),
    (lambda w: w.add_grid_map(np.ones(4), 0.1), ValueError, "occupancy"),
    (lambda w: w.add_grid_map(np.ones((2, 2)), -0.1), ValueError, "resolution"),
])
def test_bad_objects_raise_and_add_nothing(call, err, match):
    w = planar.World()
    w.add_circle(0.5, mass=1.0)
    with pytest.raises(err, match=match):
        call(w)
    assert len(w.objects) == 1


def test_bad_commands_states_and_envs():
    w = planar.World(n_envs=2)
    robot = w.add_rectangle(0.4, 0.3, kinematics="diff", mass=1.0)
    box = w.add_rectangle(0.3, 0.3, mass=1.0, position=(1, 0))
    grid = w.add_grid_map(np.ones((2, 2)), 0.1, origin=(5, 5))
    wall = w.add_linestring([(3, -1), (3, 1)])
    before = robot.get_command()
    for bad in ([1.0], [[1.0, 2.0, 3.0]], np.zeros((3, 2)), [np.nan, 0.0], "fast"):
        with pytest.raises((ValueError, TypeError), match="command"):
            robot.set_command(bad)
    with pytest.raises(ValueError, match="commands must have shape"):
        w.set_commands(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="only driven"):
        box.set_command([1.0, 0.0])
    with pytest.raises(ValueError, match="cannot be moved"):
        grid.set_pose([0, 0, 0])
    with pytest.raises(ValueError, match="only passive"):
        wall.set_velocity([1, 0, 0])
    with pytest.raises(ValueError, match="by its command"):
        robot.set_velocity([1, 0, 0])
    with pytest.raises(ValueError, match="env"):
        robot.get_pose(env=2)
    with pytest.raises(ValueError, match="pose"):
        box.set_pose([0, 0])
    assert np.array_equal(robot.get_command(), before)
    w.step()
    with pytest.raises(RuntimeError, match="add objects before"):
        w.add_circle(0.1)
    robot.set_command([0.5, 0.1], env=1)  # after the build: written to the arrays
    assert robot.get_command(1) == pytest.approx([0.5, 0.1]) and robot.get_command(0) == pytest.approx([0, 0])
    with pytest.raises(RuntimeError, match="no objects"):
        planar.World().step()
