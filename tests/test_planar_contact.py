"""Planar contact physics. Each test names the sentence of the planar-contact spec (IR-SIM's contact mode) or the
law it checks. Overlaps are measured independently with shapely: a polygon shrunk by ``tol`` that no longer meets
the other shape overlaps it by less than ``tol``."""
import math

import numpy as np
import pytest
import shapely
from shapely import affinity

from taichi_terra import planar

SLOP = planar.CONTACT_SLOP
G = 9.81


def shape_at(obj, env=0):
    """The object's polygons / segments at its pose, as one shapely geometry (circles are not used here)."""
    x, y, th = obj.get_pose(env)
    parts = []
    for p in obj._spec.pieces:
        geom = shapely.Polygon(p.vertices) if p.kind == 1 else shapely.LineString(p.vertices)
        parts.append(affinity.translate(affinity.rotate(geom, th, origin=(0, 0), use_radians=True), x, y))
    return shapely.GeometryCollection(parts)


def overlap_below(a, b, tol, env=0):
    """True when objects a and b (a with area) overlap by less than ``tol`` [m]."""
    return not shape_at(a, env).buffer(-tol).intersects(shape_at(b, env))


# -- separation shared by inverse mass ----------------------------------------------------------------------------

@pytest.mark.parametrize("m_a,m_b", [(1.0, 1.0), (1.0, 3.0)])
def test_overlapping_circles_separate_in_inverse_proportion_to_mass(m_a, m_b):
    """Spec: 'a moves by depth * w_a / (w_a + w_b) and b by the rest, where w is the inverse mass'; the pair is
    left one slop apart. Friction 0 so nothing coasts; the moves are exact up to rounding."""
    w = planar.World(dt=0.1, friction=0.0)
    a = w.add_circle(0.5, position=(0.0, 0.0), mass=m_a)
    b = w.add_circle(0.5, position=(0.8, 0.0), mass=m_b)
    w.step()
    d = 0.2 + SLOP
    wa, wb = 1 / m_a, 1 / m_b
    assert a.get_pose(0) == pytest.approx([-d * wa / (wa + wb), 0.0, 0.0], abs=1e-12)
    assert b.get_pose(0) == pytest.approx([0.8 + d * wb / (wa + wb), 0.0, 0.0], abs=1e-12)
    assert b.get_pose(0)[0] - a.get_pose(0)[0] == pytest.approx(1.0 + SLOP, abs=1e-12)
    c = w.get_contact_list(0)
    assert len(c) == 1 and c[0].depth == pytest.approx(d, abs=1e-12)
    assert c[0].normal == pytest.approx([-1.0, 0.0])  # from b toward a


def test_passive_passive_push_conserves_linear_momentum():
    """Position-based projection weighted by inverse mass conserves linear momentum (m_a dx_a + m_b dx_b = 0),
    and velocities are the position change over the step. A 2 kg disc at 3 m/s hits a 1 kg disc obliquely."""
    w = planar.World(dt=0.05, friction=0.0)
    a = w.add_circle(0.3, position=(0.0, 0.0), mass=2.0)
    b = w.add_circle(0.2, position=(0.6, 0.15), mass=1.0)
    a.set_velocity([3.0, 0.0, 0.0])
    p0 = 2.0 * np.array([3.0, 0.0])
    for _ in range(4):
        w.step()
        v = w.get_velocities(0)
        assert 2.0 * v[0, :2] + 1.0 * v[1, :2] == pytest.approx(p0, abs=1e-12)
    assert w.get_velocities(0)[1, 0] > 0.5  # the push did happen
    assert np.linalg.norm(a.get_pose(0)[:2] - b.get_pose(0)[:2]) >= 0.5  # and left no overlap


# -- a robot pushing a row of boxes into a wall ---------------------------------------------------------------------

def push_row(iterations=planar.CONTACT_ITERATIONS, n_envs=1, n_boxes=10, wall_gap=0.5):
    w = planar.World(dt=0.1, n_envs=n_envs, iterations=iterations)
    robot = w.add_rectangle(0.6, 0.4, kinematics="diff", mass=20.0, friction=1.0, position=(0.0, 0.0))
    boxes = [w.add_rectangle(0.3, 0.3, mass=1.0, friction=0.5, position=(0.5 + 0.31 * i, 0.0))
             for i in range(n_boxes)]
    wall_x = 0.5 + 0.31 * (n_boxes - 1) + 0.15 + wall_gap
    wall = w.add_linestring([(wall_x, -1.0), (wall_x, 1.0)], friction=0.5)
    robot.set_command([0.5, 0.0])
    return w, robot, boxes, wall, wall_x


def test_robot_pushes_row_of_boxes_flush_against_wall_and_stops():
    """Spec: 'a chain pushed into a wall settles ... and the robot stops behind them'. After 25 steps of 5 cm
    (1.25 m of drive for 0.64 m of free travel): no pair overlaps by more than the slop, the boxes are packed
    against the wall (each one slop apart, within rounding), and the robot is at rest behind them."""
    w, robot, boxes, wall, wall_x = push_row()
    w.step(25)
    objs = [robot, *boxes, wall]
    for i in range(len(objs) - 1):
        assert overlap_below(objs[i], objs[i + 1], SLOP), i
    xs = np.array([b.get_pose(0)[0] for b in boxes])
    assert xs[-1] + 0.15 == pytest.approx(wall_x, abs=2 * SLOP)
    assert np.diff(xs) == pytest.approx(np.full(9, 0.3), abs=2 * SLOP)
    assert robot.get_pose(0)[0] + 0.3 == pytest.approx(xs[0] - 0.15, abs=2 * SLOP)
    assert np.abs(w.get_poses(0)[1:11, 1:]).max() < 1e-12  # nothing turned or left the line
    assert np.abs(robot.get_velocity(0)).max() < 1e-9  # stopped: its drive's 0.5 m/s is cancelled
    assert w.get_sweeps(0) <= 2  # settled in one sweep (the second confirms)


def test_chain_pushed_into_wall_settles_within_one_sweep():
    """Spec: 'a body that was just pressed against something it cannot move only yields tangentially for the rest
    of the sweep ... so that a chain pushed into a wall settles in one sweep'. With iterations = 1 the robot
    keeps driving 5 cm into a packed row every step, and one sweep leaves no overlap above the slop."""
    w, robot, boxes, wall, wall_x = push_row(iterations=1, n_boxes=4, wall_gap=0.0)
    robot.set_pose([0.5 - 0.15 - 0.3 - 0.05, 0.0, 0.0])  # touching: the first step drives 5 cm into the row
    for b, i in zip(boxes, range(4)):
        b.set_pose([wall_x - 0.15 - 0.3 * (3 - i), 0.0, 0.0])
    for _ in range(5):
        w.step()
        objs = [robot, *boxes, wall]
        for i in range(len(objs) - 1):
            assert overlap_below(objs[i], objs[i + 1], SLOP), i
    assert boxes[-1].get_pose(0)[0] + 0.15 == pytest.approx(wall_x, abs=2 * SLOP)


# -- traction against ground friction -------------------------------------------------------------------------------

@pytest.mark.parametrize("robot_mass,speed,pushes", [(2.0, 0.5, False), (2.0, 1.5, False), (20.0, 0.5, True)])
def test_robot_stalls_when_traction_is_below_ground_friction_of_the_box(robot_mass, speed, pushes):
    """Spec: 'A driven object pushes a passive body without yielding to it provided its traction, friction * mass,
    is at least the body's ground friction; a body it cannot overcome stalls it.' Box: 10 kg, mu 0.5: 49 N.
    Robot mu 1: 2 kg gives 19.6 N (stalls), 20 kg gives 196 N (pushes the box along at its own speed).
    A stalled robot's force is its drive's momentum per step, m v / dt (XPBD: multiplier m d over dt^2 with
    d = v dt), capped at its traction: 10 N at 0.5 m/s, min(30, 19.62) N at 1.5 m/s."""
    w = planar.World(dt=0.1)
    robot = w.add_rectangle(0.6, 0.4, kinematics="diff", mass=robot_mass, friction=1.0)
    box = w.add_rectangle(0.4, 0.4, mass=10.0, friction=0.5, position=(0.5 + 1e-3, 0.0))
    robot.set_command([speed, 0.0])
    w.step(10)
    if pushes:
        assert box.get_pose(0)[0] > 0.5 + 0.4  # moved along
        assert box.get_pose(0)[0] - robot.get_pose(0)[0] == pytest.approx(0.5, abs=1e-3)
    else:
        assert box.get_pose(0)[:2] == pytest.approx([0.5 + 1e-3, 0.0], abs=1e-12)
        assert robot.get_pose(0)[0] == pytest.approx(1e-3 - SLOP, abs=1e-9)  # stopped at the box
        (report,) = box.get_contact_reports(0)
        assert report.force == pytest.approx(min(robot_mass * speed / 0.1, 1.0 * robot_mass * G), rel=1e-9)


def test_steady_push_force_equals_ground_friction_of_the_box():
    """XPBD force = multiplier / dt^2. Pushing at a steady speed the box coasts between pushes, losing mu g dt of
    speed, so the push per step restores mu m g dt of momentum: the force is the box's ground friction mu m g."""
    w = planar.World(dt=0.1)
    robot = w.add_rectangle(0.6, 0.4, kinematics="diff", mass=20.0, friction=1.0)
    box = w.add_rectangle(0.4, 0.4, mass=2.0, friction=0.3, position=(0.5 + 1e-3, 0.0))
    robot.set_command([0.4, 0.0])
    w.step(8)
    (report,) = box.get_contact_reports(0)
    assert report.force == pytest.approx(0.3 * 2.0 * G, rel=1e-9)
    assert report.normal == pytest.approx([1.0, 0.0])  # from the robot toward the box
    assert report.other is robot


# -- immovable objects: sliding and sticking ------------------------------------------------------------------------

def test_robot_pressed_into_wall_slides_along_it():
    """Spec: 'An immovable object stops whatever presses on it, which then slides along the surface: a robot
    always.' An omni robot driving at 45 degrees into a wall keeps its tangential 0.3 m/s along it."""
    w = planar.World(dt=0.1)
    robot = w.add_circle(0.2, kinematics="omni", mass=5.0, position=(0.79, 0.0))
    w.add_linestring([(1.0, -2.0), (1.0, 2.0)])
    robot.set_command([0.3, 0.3])
    w.step(10)
    x, y, _ = robot.get_pose(0)
    assert x == pytest.approx(0.8 - SLOP, abs=1e-9)
    assert y == pytest.approx(0.3, abs=1e-9)
    assert robot.get_velocity(0)[:2] == pytest.approx([0.0, 0.3], abs=1e-9)


@pytest.mark.parametrize("mu,slides", [(0.5, True), (1.0, False)])
def test_passive_disc_pushed_obliquely_into_wall_slides_only_outside_friction_cone(mu, slides):
    """Spec: 'a passive body [slides] only when the push leaves the friction cone of the two surfaces' (mean
    coefficient). A robot disc pushes a disc resting on a wall along a normal 30 degrees off the wall's:
    tangential/normal = tan 30 = 0.577, which leaves a cone of 0.5 and stays inside one of 1.0."""
    w = planar.World(dt=0.1, friction=mu)
    wall = w.add_linestring([(1.0, -2.0), (1.0, 2.0)])
    disc = w.add_circle(0.2, mass=1.0, position=(0.8, 0.0))
    robot = w.add_circle(0.2, kinematics="omni", mass=50.0, friction=1.0,
                         position=(0.8 - 0.4 * math.cos(math.radians(30)), -0.4 * math.sin(math.radians(30))))
    robot.set_command([0.1 * math.cos(math.radians(30)), 0.1 * math.sin(math.radians(30))])
    w.step()
    x, y, _ = disc.get_pose(0)
    assert x <= 0.8 + 1e-12  # never pushed into the wall
    assert np.linalg.norm(robot.get_pose(0)[:2] - disc.get_pose(0)[:2]) >= 0.4 - 1e-12  # nor left in the robot
    assert [r.other for r in disc.get_contact_reports(0)] == [wall, robot]  # the wall pair is swept first
    if slides:
        assert y > 1e-3
    else:
        assert y == pytest.approx(0.0, abs=1e-12)  # it sticks: the robot yields instead


# -- turning --------------------------------------------------------------------------------------------------------

def test_off_centre_push_turns_box_as_the_torque_says():
    """Spec: 'A push that misses a body's center also turns it: the contact point and normal give a torque, shared
    through each body's moment of inertia.' A robot pushes a free box along +x at a point 0.1 m above its
    centre: torque r x F < 0, so the box turns clockwise; the depth splits between translation (1/m) and
    rotation (arm^2 / I) as in position-based rigid-body dynamics (Mueller et al. 2020): dtheta = m arm dx / I
    for one projection (one sweep), with arm = r x n at the reported point and normal."""
    w = planar.World(dt=0.1, friction=0.0, iterations=1)
    robot = w.add_rectangle(0.2, 0.2, kinematics="omni", mass=1000.0, friction=100.0, position=(-0.31, 0.2))
    box = w.add_rectangle(0.4, 0.4, mass=1.0)
    robot.set_command([0.5, 0.0])
    w.step()
    x, y, th = box.get_pose(0)
    (c,) = box.get_contact_reports(0)
    arm = (c.point[0] - 0.0) * c.normal[1] - (c.point[1] - 0.0) * c.normal[0]  # r x n at the start
    assert c.normal == pytest.approx([1.0, 0.0])
    assert th < 0.0
    assert th == pytest.approx(arm * x / box.inertia * box.mass, rel=1e-9)
    assert box.inertia == pytest.approx(1.0 * (0.4 ** 2 + 0.4 ** 2) / 12)


def test_sliding_and_spinning_box_slow_down_under_ground_friction():
    """Spec: 'Passive bodies keep the velocity a push gave them and coast to a stop under ground friction ... a
    spinning passive body slows under friction like a sliding one' (at its radius of gyration): Coulomb
    deceleration mu g, so v_k = v0 - k mu g dt and omega_k = omega0 - k mu g dt / r_g until they stop."""
    w = planar.World(dt=0.1, friction=0.2)
    box = w.add_rectangle(0.4, 0.4, mass=2.0)
    box.set_velocity([3.0, 4.0, 6.0])  # 5 m/s along (0.6, 0.8)
    r_g = math.sqrt(box.inertia / box.mass)
    brake = 0.2 * G * 0.1
    for k in range(1, 30):
        w.step()
        v = box.get_velocity(0)
        speed = max(0.0, 5.0 - k * brake)
        assert v[:2] == pytest.approx(speed * np.array([0.6, 0.8]), abs=1e-12)
        assert v[2] == pytest.approx(max(0.0, 6.0 - k * brake / r_g), abs=1e-12)
    assert np.all(box.get_velocity(0) == 0.0)


def test_resting_contact_neither_pushes_nor_pulls():
    """Spec: 'A pair resting within REST_TOLERANCE of each other needs no correction but still blocks.' Two boxes
    3 micrometres apart at rest, and one 3 micrometres from a wall: nothing moves, the contacts are reported
    with a non-positive depth and no force. (Exactly touching bodies count as overlapping by zero and are
    pushed one slop apart.)"""
    w = planar.World(dt=0.1)
    wall = w.add_linestring([(0.0, -1.0), (0.0, 1.0)])
    a = w.add_rectangle(0.4, 0.4, mass=1.0, position=(0.2 + 3e-6, 0.0))
    b = w.add_rectangle(0.4, 0.4, mass=1.0, position=(0.6 + 6e-6, 0.0))
    w.step(3)
    assert a.get_pose(0)[0] == 0.2 + 3e-6 and b.get_pose(0)[0] == 0.6 + 6e-6
    assert np.all(w.get_velocities(0) == 0.0)
    c = w.get_contacts(0)
    assert c.count[0] == 2 and {(int(i), int(j)) for i, j in zip(c.a[0], c.b[0])} == {(0, 1), (1, 2)}
    assert np.all(c.depth[0] <= 1e-12) and np.all(c.force[0] == 0.0)
    assert wall.get_contact_reports(0)[0].other is a


def test_bounce_leaves_at_restitution_times_approach_speed():
    """Spec: restitution is applied when the step time is given; a pair separates at the mean restitution of its
    two objects times its approach speed (here e = (1 + 0.6) / 2 = 0.8, no friction)."""
    w = planar.World(dt=0.01, friction=0.0)
    w.add_linestring([(1.0, -1.0), (1.0, 1.0)], restitution=1.0)
    disc = w.add_circle(0.1, mass=1.0, position=(0.5, 0.0), restitution=0.6)
    disc.set_velocity([2.0, 0.0, 0.0])
    w.step(30)
    assert disc.get_velocity(0)[:2] == pytest.approx([-1.6, 0.0], abs=1e-9)


# -- obstacles of every shape ---------------------------------------------------------------------------------------

def test_non_convex_obstacle_and_grid_map_block_robot_without_overlap():
    """Spec: 'Non-convex polygons are triangulated with a constrained Delaunay triangulation, so every shape takes
    part, including ... grid maps.' A robot drives into the inner corner of a static L and another into a wall
    of an occupancy grid: both end stopped, with no overlap above the slop. (A robot held by a wall turns
    through its inertia; pressed flat against it, its heading chatters by a few milliradians as its two front
    corners take turns, so 'stopped at the wall' is checked to 1 cm.)"""
    w = planar.World(dt=0.1)
    ell = w.add_polygon([(0, 0), (2, 0), (2, 0.5), (0.5, 0.5), (0.5, 2), (0, 2)], kind="static",
                        position=(1.0, 1.0))
    r1 = w.add_rectangle(0.4, 0.3, kinematics="diff", mass=10.0, position=(2.5, 2.5), angle=-3 * math.pi / 4)
    occ = np.zeros((20, 20), bool)
    occ[12:14, :] = True  # a wall 0.2 m thick at x = -4.8 .. -4.6 (0.1 m cells from x0 = -6)
    grid = w.add_grid_map(occ, 0.1, origin=(-6.0, -1.0))
    r2 = w.add_rectangle(0.4, 0.3, kinematics="diff", mass=10.0, position=(-5.5, 0.0), angle=0.2)
    w.set_commands([[0.5, 0.0], [0.5, 0.0]])
    w.step(40)
    assert len(ell._spec.pieces) == 4  # the L is split into triangles
    for robot, obstacle in ((r1, ell), (r2, grid)):
        assert overlap_below(robot, obstacle, SLOP)
        assert shape_at(robot).distance(shape_at(obstacle)) < 1e-2  # it got there and was stopped
    assert r2.get_pose(0)[0] < -4.8


def test_compound_body_and_polygon_mass_properties_follow_closed_forms():
    """Mass properties from the pieces: a rectangle has I = m (w^2 + h^2) / 12; an L made of two rectangles
    has the parallel-axis sum of its parts; a disc m r^2 / 2; a compound of a disc and a square is the
    area-weighted sum."""
    w = planar.World()
    rect = w.add_rectangle(0.6, 0.2, mass=3.0)
    assert rect.inertia == pytest.approx(3.0 * (0.36 + 0.04) / 12, rel=1e-12)
    ell = w.add_polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)], mass=3.0)
    parts = [((1.0, 0.5), 2.0, 1.0), ((0.5, 1.5), 1.0, 1.0)]  # (centre, w, h) of two rectangles of area 2 and 1
    com = (2 * np.array(parts[0][0]) + np.array(parts[1][0])) / 3
    inertia = sum(m * ((pw ** 2 + ph ** 2) / 12 + np.sum((np.array(c) - com) ** 2))
                  for (c, pw, ph), m in zip(parts, (2.0, 1.0)))
    assert ell.center_of_mass == pytest.approx(com, abs=1e-12)
    assert ell.inertia == pytest.approx(inertia, rel=1e-12)
    disc = w.add_circle(0.3, mass=2.0)
    assert disc.inertia == pytest.approx(0.5 * 2.0 * 0.09, rel=1e-12)
    comp = w.add_compound([("circle", (0.0, 0.0), 0.5), shapely.box(1.0, -0.5, 2.0, 0.5)], mass=1.0)
    a1, a2 = math.pi * 0.25, 1.0
    c = np.array([a2 * 1.5 / (a1 + a2), 0.0])
    expect = (a1 * (0.5 * 0.25 + c[0] ** 2) + a2 * (2.0 / 12 + (1.5 - c[0]) ** 2)) / (a1 + a2)
    assert comp.center_of_mass == pytest.approx(c, abs=1e-12)
    assert comp.inertia == pytest.approx(expect, rel=1e-12)
