"""Shape-shape contacts, stacking and fast bodies (the height-map spec's rigid world)."""
import numpy as np
import pytest

import taichi_terra as tt


@pytest.mark.parametrize("gap", [0.0, 1e-3])
def test_newtons_cradle_passes_the_momentum_to_the_last_ball(gap):
    """Reference: momentum and energy conservation for a chain of equal balls with e = 1: the first ball stops
    and the last one leaves with its speed, within 2 %. With the balls exactly touching, the impact crosses the
    whole chain within one step (one wave of impacts per contact); with 1 mm gaps, one contact after another."""
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    world.set_default_material(0.0, 1.0)
    r = 0.05
    balls = [world.add_sphere(r, 1.0) for _ in range(5)]
    for i, b in enumerate(balls):
        b.set_position([(2 * r + gap) * i, 0.0, 1.0])
    balls[0].set_position([-0.2, 0.0, 1.0])
    balls[0].set_linear_velocity([1.0, 0.0, 0.0])
    world.step(600)
    v = np.array([b.get_linear_velocity(0)[0] for b in balls])
    assert v[-1] == pytest.approx(1.0, rel=0.02)
    assert np.abs(v[:-1]).max() < 0.02
    assert v.sum() == pytest.approx(1.0, abs=1e-9)  # momentum
    assert (v ** 2).sum() == pytest.approx(1.0, rel=1e-6)  # energy (e = 1)


def test_box_landing_flat_bounces_straight():
    """Reference: restitution on a symmetric impact. A box dropped flat with e = 0.5 on the ground hits with
    all four corners at once; solved together they send it up at e times the impact speed with no spin (to
    the sweeps' tolerance: no corner's velocity is left off by more than it)."""
    world = tt.World(dt=1e-3)
    world.set_default_material(0.5, 0.5)
    world.add_ground()
    box = world.add_box(0.2, 0.2, 0.2, 1.0)
    box.set_position([0.0, 0.0, 0.1 + 0.2])
    speeds = []
    for _ in range(400):
        world.step()
        speeds.append(box.get_linear_velocity(0)[2])
    k = int(np.argmax(np.diff(speeds)))  # the impact step
    impact = -speeds[k]
    assert impact == pytest.approx(np.sqrt(2 * 9.81 * 0.2), rel=0.01)
    assert speeds[k + 1] == pytest.approx(0.5 * impact, rel=1e-6)
    # a corner is 0.1 sqrt(2) m from the centre
    assert np.abs(box.get_angular_velocity(0)).max() * 0.1 * np.sqrt(2.0) < world.solver.tolerance


def test_box_on_box_and_cylinder_on_box_rest_for_5_s():
    """Reference: static equilibrium. A box resting on a box (four corner contacts) and a cylinder lying on a
    box (a line of contact) move less than 1 mm in 5 s."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    base1 = world.add_box(0.4, 0.4, 0.2, 2.0)
    base1.set_position([0.0, 0.0, 0.1])
    top = world.add_box(0.2, 0.2, 0.2, 1.0)
    top.set_position([0.05, 0.02, 0.3])
    base2 = world.add_box(0.6, 0.3, 0.1, 2.0)
    base2.set_position([2.0, 0.0, 0.05])
    cyl = world.add_cylinder(0.08, 0.2, 1.0)
    cyl.set_position([2.0, 0.0, 0.18])
    cyl.set_orientation([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # axis along y
    start = [top.get_position(0), cyl.get_position(0)]
    world.step(5000)
    assert np.linalg.norm(top.get_position(0) - start[0]) < 1e-3
    assert np.linalg.norm(cyl.get_position(0) - start[1]) < 1e-3
    c = world.get_contacts(0)
    pairs = list(zip(c.body_a.tolist(), c.body_b.tolist()))
    assert sum(1 for a, b in pairs if {a, b} == {base1.index, top.index}) == 4
    assert sum(c.impulses[i] @ c.normals[i] for i, (a, b) in enumerate(pairs)
               if {a, b} == {base1.index, top.index}) / world.dt == pytest.approx(9.81, rel=1e-3)


def test_pyramid_of_ten_boxes_stands():
    """Rows of 4, 3, 2 and 1 boxes: after 5 s every box is within 1 mm of where it settled (0.1 mm start gaps)."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    s = 0.2
    boxes = []
    for row, n in enumerate([4, 3, 2, 1]):
        for k in range(n):
            b = world.add_box(s, s, s, 1.0)
            b.set_position([(k - (n - 1) / 2) * (s + 0.002), 0.0, s / 2 + row * s + 1e-4])
            boxes.append(b)
    world.step(500)
    settled = np.array([b.get_position(0) for b in boxes])
    world.step(4500)
    assert np.abs(np.array([b.get_position(0) for b in boxes]) - settled).max() < 1e-3
    assert world.get_contact_overflow(0) == 0


def test_capsule_rolls_off_a_box_edge():
    """A lying capsule given a spin rolls across a box's top and drops off its edge onto the ground."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    box = world.add_box(1.0, 1.0, 0.2, 10.0)
    box.set_position([0.0, 0.0, 0.1])
    cap = world.add_capsule(0.05, 0.3, 1.0)
    cap.set_position([0.3, 0.0, 0.25])
    cap.set_orientation([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # axis along y: rolls along x
    cap.set_linear_velocity([0.4, 0.0, 0.0])
    cap.set_angular_velocity([0.0, 8.0, 0.0])  # rolling without slip: v = w r
    heights = []
    for _ in range(30):
        world.step(100)
        heights.append(cap.get_position(0)[2])
    assert heights[0] == pytest.approx(0.25, abs=1e-3)  # on the box
    assert cap.get_position(0)[0] > 0.5  # past the edge
    assert heights[-1] == pytest.approx(0.05, abs=2e-3)  # on the ground


@pytest.mark.parametrize("target", ["heightmap", "thin box"])
def test_fast_sphere_does_not_tunnel(target):
    """A 2 cm sphere at 30 m/s (3 cm per 1 ms step, more than its diameter and three times the 1 cm box) is
    stopped at the surface whatever the phase of its steps relative to the obstacle: speculative contacts
    reach as far as the pair can move in a step."""
    ends = []
    for phase in np.linspace(0.0, 0.03, 7):
        world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
        if target == "heightmap":
            world.add_heightmap(5, 5, 2.0, 2.0, 0.0, 0.0, np.zeros(25))
            top = 0.0
        else:
            world.add_box(1.0, 1.0, 0.01, 1e6).set_position([0.0, 0.0, 0.0])
            top = 0.005
        ball = world.add_sphere(0.01, 0.01)
        ball.set_position([0.1, 0.1, 0.5 + phase])
        ball.set_linear_velocity([0.0, 0.0, -30.0])
        world.step(40)
        ends.append(ball.get_position(0)[2])
        assert world.get_contact_overflow(0) == 0
    assert np.allclose(ends, top + 0.01, atol=1e-4)


@pytest.mark.parametrize("angle", [90.0, 35.0])
def test_crossed_beams_rest_on_each_other(angle):
    """Reference: static equilibrium. A beam laid across another (at 90 and 35 degrees) touches it only where
    the two faces overlap, with no corner of either inside the other: it must rest on the lower beam's top
    face (centre at 0.15 m), carried by contacts at the corners of the overlap, and not sink through it."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    low = world.add_box(1.0, 0.1, 0.1, 5.0)
    low.set_position([0.0, 0.0, 0.05])
    up = world.add_box(1.0, 0.1, 0.1, 1.0)
    a = np.radians(angle)
    up.set_orientation([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
    up.set_position([0.0, 0.0, 0.1505])
    world.step(2000)
    assert up.get_position(0)[2] == pytest.approx(0.15, abs=1e-3)
    c = world.get_contacts(0)
    beam = [i for i in range(len(c)) if {int(c.body_a[i]), int(c.body_b[i])} == {low.index, up.index}]
    assert len(beam) == 4  # the corners of the overlap parallelogram
    force = sum(abs(c.impulses[i] @ c.normals[i]) for i in beam) / world.dt
    assert force == pytest.approx(9.81, rel=1e-3)


def _rot_z(angle):
    c, s = np.cos(angle), np.sin(angle)
    return [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]


@pytest.mark.parametrize("kind", ["box_on_mesh", "mesh_on_box", "mesh_on_mesh"])
def test_crossed_mesh_beams_rest_on_each_other(kind):
    """Reference: static equilibrium. Beams made as convex meshes, crossed at 35 degrees, touch only where
    their faces overlap (no vertex of either inside the other): the upper one rests on the lower one's top
    face (centre at 0.15 m) on the four corners of the overlap, which carry its weight."""
    import trimesh

    world = tt.World(dt=1e-3)
    world.add_ground()
    beam = trimesh.creation.box(extents=(1.0, 0.1, 0.1))
    low = world.add_mesh(beam, 5.0) if kind != "mesh_on_box" else world.add_box(1.0, 0.1, 0.1, 5.0)
    low.set_position([0.0, 0.0, 0.05])
    up = world.add_mesh(beam, 1.0) if kind != "box_on_mesh" else world.add_box(1.0, 0.1, 0.1, 1.0)
    up.set_orientation(_rot_z(np.radians(35.0)))
    up.set_position([0.0, 0.0, 0.1505])
    world.step(2000)
    assert up.get_position(0)[2] == pytest.approx(0.15, abs=1e-3)
    c = world.get_contacts(0)
    pair = [i for i in range(len(c)) if {int(c.body_a[i]), int(c.body_b[i])} == {low.index, up.index}]
    assert len(pair) == 4
    force = sum(abs(c.impulses[i] @ c.normals[i]) for i in pair) / world.dt
    assert force == pytest.approx(9.81, rel=1e-3)


def test_cylinder_standing_on_two_beams_rests_on_the_chords():
    """Reference: static equilibrium. A cylinder (r = 0.15 m, eight rim points per cap) stands on two
    parallel beams 4 cm wide, 0.2 m apart, turned 22.5 degrees from its rim points: no rim point lies over a
    beam and no beam corner under the cap, yet the cap rests on the two strips where the beams cross it
    (its centre 0.05 m above the beam tops' 0.1 m), carried by the four corners of each strip."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    beams = []
    for y in (-0.1, 0.1):
        b = world.add_box(1.0, 0.04, 0.1, 5.0)
        b.set_orientation(_rot_z(np.radians(22.5)))
        b.set_position(np.array(_rot_z(np.radians(22.5))) @ [0.0, y, 0.0] + [0.0, 0.0, 0.05])
        beams.append(b)
    cyl = world.add_cylinder(0.15, 0.1, 2.0)
    cyl.set_position([0.0, 0.0, 0.1505])
    world.step(2000)
    assert cyl.get_position(0)[2] == pytest.approx(0.15, abs=1e-3)
    assert np.abs(cyl.get_orientation(0)[1:]).max() < 1e-3  # still upright
    c = world.get_contacts(0)
    on = [i for i in range(len(c)) if cyl.index in (int(c.body_a[i]), int(c.body_b[i]))]
    for b in beams:
        assert sum(1 for i in on if b.index in (int(c.body_a[i]), int(c.body_b[i]))) == 4
    force = sum(abs(c.impulses[i] @ c.normals[i]) for i in on) / world.dt
    assert force == pytest.approx(2.0 * 9.81, rel=1e-3)


def test_tilted_cylinder_rests_on_its_true_rim():
    """Reference: the geometry of a circle. A cylinder leaning 30 degrees with its lower rim on a box face
    touches it at the rim's lowest point, which lies between two of the eight stored rim points: the contact
    is that point (depth measured from it), not the lower of the two neighbouring rim points."""
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    world.add_ground(-5.0)
    base = world.add_box(1.0, 1.0, 0.2, 5.0)
    base.set_position([0.0, 0.0, -0.1])
    r, h = 0.15, 0.1
    cyl = world.add_cylinder(r, h, 1.0)
    tilt = np.radians(30.0)
    spin = np.radians(22.5)  # puts the lowest rim point halfway between two stored rim points
    rot = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(tilt), -np.sin(tilt)], [0.0, np.sin(tilt), np.cos(tilt)]]) \
        @ np.array(_rot_z(spin))
    lowest = r * np.sin(tilt) + 0.5 * h * np.cos(tilt)  # centre height above the rim's lowest point
    cyl.set_orientation(rot)
    cyl.set_position([0.0, 0.0, lowest - 1e-4])
    world.step(1)
    c = world.get_contacts(0)
    on = [i for i in range(len(c)) if cyl.index in (int(c.body_a[i]), int(c.body_b[i]))]
    assert max(c.depths[i] for i in on) == pytest.approx(1e-4, abs=1e-9)


def test_log_resting_on_a_parallel_log_stays_level():
    """Reference: static equilibrium. A cylinder lying on a parallel, longer cylinder touches it along a
    line: both ends of the common stretch carry it (half the weight each), so it stays level instead of
    pivoting on one point."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    along_x = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]  # cylinder axis along x
    low = world.add_cylinder(0.1, 1.0, 20.0)
    low.set_orientation(along_x)
    low.set_position([0.0, 0.0, 0.1])
    up = world.add_cylinder(0.1, 0.6, 1.0)
    up.set_orientation(along_x)
    up.set_position([0.1, 0.0, 0.3005])
    world.step(1000)
    assert up.get_position(0)[2] == pytest.approx(0.3, abs=1e-3)
    assert np.abs(up.get_angular_velocity(0)).max() < 1e-6
    c = world.get_contacts(0)
    pair = [i for i in range(len(c)) if {int(c.body_a[i]), int(c.body_b[i])} == {low.index, up.index}]
    assert len(pair) == 2
    f = sorted(abs(c.impulses[i] @ c.normals[i]) / world.dt for i in pair)
    assert f == pytest.approx([0.5 * 9.81, 0.5 * 9.81], rel=1e-3)
    assert sorted(c.positions[i][0] for i in pair) == pytest.approx([-0.2, 0.4], abs=1e-9)


def test_mesh_with_many_sided_cap_stands_on_a_box():
    """Reference: static equilibrium. A mesh cylinder with 32-sided caps (more vertices than a face holds)
    stands upright on a box on its sample points: it neither tips nor sinks in 2 s."""
    import trimesh

    world = tt.World(dt=1e-3)
    world.add_ground()
    base = world.add_box(0.6, 0.6, 0.1, 5.0)
    base.set_position([0.0, 0.0, 0.05])
    can = world.add_mesh(trimesh.creation.cylinder(radius=0.1, height=0.2, sections=32), 1.0)
    can.set_position([0.0, 0.0, 0.2005])
    world.step(2000)
    assert can.get_position(0)[2] == pytest.approx(0.2, abs=1e-3)
    assert np.abs(can.get_orientation(0)[1:]).max() < 1e-4
