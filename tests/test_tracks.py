"""Tracks in a URDF (``taichi_terra/bodies/tracks.py``): the ``<track>`` element, every rule of
``spec/tracks.md`` with the error it gives, and the belt's collision geometry against closed forms (outer
tangents of the wheels' discs)."""
import math

import numpy as np
import pytest

from taichi_terra.bodies.urdf import URDFError, parse_urdf

INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'
            '</inertial>')
SPROCKET = ('<link name="sprocket_link">{inertial}{collision}</link>'
            '<joint name="sprocket" type="continuous"><parent link="base"/><child link="sprocket_link"/>'
            '<origin xyz="0.5 0.14 0"/><axis xyz="{axis}"/></joint>')
FLIPPER = (f'<link name="flipper">{INERTIAL}</link>'
           '<joint name="flipper_joint" type="revolute"><parent link="base"/><child link="flipper"/>'
           '<origin xyz="0.5 0.3 0"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="10"/>'
           '</joint>')


def tracked(track: str, *, collision: str = "", axis: str = "0 1 0", extra: str = "") -> str:
    """A body with a sprocket joint at (0.5, 0.14, 0), a flipper, a mount fixed to the body, and ``track``."""
    return (f'<robot name="tracked"><link name="base">{INERTIAL}</link>'
            + SPROCKET.format(inertial=INERTIAL, collision=collision, axis=axis) + FLIPPER
            + '<link name="mount"/><joint name="mount_joint" type="fixed"><parent link="base"/>'
              '<child link="mount"/><origin xyz="0 -0.3 0.1" rpy="0 0 1.5707963267948966"/></joint>'
            + extra + track + '</robot>')


def side_track(wheels: str = '<wheel joint="sprocket" radius="0.178"/><wheel xyz="-0.5 0.14 0" radius="0.178"/>',
               drives: str = '<drive joint="sprocket" gain="0.178"/>', attrs: str = 'link="base"',
               axis: str = '<axis xyz="0 1 0"/>', name: str = "left") -> str:
    return f'<track name="{name}" {attrs} width="0.08" thickness="0.015">{axis}{wheels}{drives}</track>'


def _outer_face(shape):
    """The outward normal (the box's z) and the offset of a box's outer face (normal . point)."""
    n = shape.rotation[:, 2]
    return n, n @ shape.position + 0.5 * shape.params[2]


def test_the_spec_example_belt_is_two_cylinders_and_two_runs():
    """Reference: the spec's side track (wheels of 0.178 m at x = +-0.5 m, belt 0.015 m thick, 0.08 m wide):
    a cylinder of radius 0.193 m around each wheel, axis along y, and a box 1 m long along the upper and
    the lower run, 0.193 m deep from the outer surface (z = +-0.193 m) in to the wheel centres. The loop runs
    counter-clockwise seen from +y: forwards (+x) on top, backwards below."""
    model = parse_urdf(tracked(side_track()))
    (track,) = model.tracks
    assert track.name == "left" and track.link == "base"
    np.testing.assert_allclose(track.axis, [0, 1, 0])
    assert [w.joint for w in track.wheels] == ["sprocket", None]
    np.testing.assert_allclose(track.wheels[0].center, [0.5, 0.14, 0.0])
    assert [(d.joint, d.gain) for d in track.drives] == [("sprocket", 0.178)]
    assert sorted(track.wrapped) == [0, 1]
    cylinders = [s for s in track.shapes if s.kind == "cylinder"]
    boxes = [s for s in track.shapes if s.kind == "box"]
    assert len(cylinders) == 2 and len(boxes) == 2
    for c in cylinders:
        np.testing.assert_allclose(c.params, [0.193, 0.08])
        np.testing.assert_allclose(abs(c.rotation[:, 2] @ [0, 1, 0]), 1.0)
    np.testing.assert_allclose(sorted(c.position[0] for c in cylinders), [-0.5, 0.5])
    for b in boxes:
        np.testing.assert_allclose(b.params, [1.0, 0.08, 0.193], atol=1e-12)
        np.testing.assert_allclose(np.linalg.det(b.rotation), 1.0)
        n, h = _outer_face(b)
        assert abs(abs(n[2]) - 1.0) < 1e-12
        assert h == pytest.approx(0.193, abs=1e-12)  # the outer surface
        np.testing.assert_allclose(b.position[[0, 1]], [0.0, 0.14], atol=1e-12)
        travel = b.rotation[:, 0]
        assert travel[0] * n[2] > 0  # top (n = +z) runs along +x, bottom along -x


def test_a_road_wheel_on_a_run_adds_no_cylinder_and_a_small_one_inside_is_rejected():
    """Reference: the same belt with a third wheel of the same radius at x = 0: it touches both straight runs
    only, so the belt keeps two cylinders and two 1 m boxes. A wheel of 0.1 m there lies inside the belt."""
    road = '<wheel joint="sprocket" radius="0.178"/><wheel xyz="0 0.14 0" radius="0.178"/>' \
           '<wheel xyz="-0.5 0.14 0" radius="0.178"/>'
    (track,) = parse_urdf(tracked(side_track(wheels=road))).tracks
    assert sorted(track.wrapped) == [0, 2]
    assert [s.kind for s in track.shapes].count("cylinder") == 2
    np.testing.assert_allclose([s.params[0] for s in track.shapes if s.kind == "box"], [1.0, 1.0])
    inner = road.replace('<wheel xyz="0 0.14 0" radius="0.178"/>', '<wheel xyz="0 0.14 0" radius="0.1"/>')
    with pytest.raises(URDFError, match=r"<string>: track 'left': wheel 1 lies inside the belt"):
        parse_urdf(tracked(side_track(wheels=inner)))


def test_unequal_wheels_give_runs_tangent_to_both():
    """Reference: outer common tangents of two discs. A flipper track with wheels of 0.16 m at x = 0 and
    0.088 m at x = 0.35 m (in the flipper's frame) and a 0.015 m belt: each run's length is
    sqrt(d^2 - (R1 - R2)^2) = sqrt(0.35^2 - 0.072^2) m, its outer face is tangent to both grown discs
    (their centres lie R1 and R2 inside it), and its box reaches in to the nearer centre (depth R2)."""
    xml = tracked('<track name="flip" link="flipper" width="0.08" thickness="0.015"><axis xyz="0 1 0"/>'
                  '<wheel xyz="0 0 0" radius="0.16"/><wheel xyz="0.35 0 0" radius="0.088"/>'
                  '<drive joint="sprocket" gain="0.178"/><drive joint="flipper_joint" gain="-0.178"/></track>')
    (track,) = parse_urdf(xml).tracks
    assert track.link == "flipper"
    assert [d.gain for d in track.drives] == [0.178, -0.178]
    r1, r2 = 0.175, 0.103
    boxes = [s for s in track.shapes if s.kind == "box"]
    assert len(boxes) == 2
    for b in boxes:
        assert b.params[0] == pytest.approx(math.sqrt(0.35 ** 2 - (r1 - r2) ** 2), rel=1e-12)
        assert b.params[2] == pytest.approx(r2, rel=1e-12)
        n, h = _outer_face(b)
        assert h - n @ [0.0, 0.0, 0.0] == pytest.approx(r1, abs=1e-12)
        assert h - n @ [0.35, 0.0, 0.0] == pytest.approx(r2, abs=1e-12)


def test_a_track_on_a_merged_link_is_placed_in_its_owner():
    """Reference: the fixed joint's placement. A track on ``mount`` (fixed to the base at (0, -0.3, 0.1),
    turned 90 degrees about z) has its wheels and axis in the base frame: mount's x is the base's y."""
    xml = tracked('<track name="m" link="mount" width="0.05"><axis xyz="0 1 0"/>'
                  '<wheel xyz="0 0 0" radius="0.05"/><wheel xyz="0.2 0 0" radius="0.05"/>'
                  '<drive joint="sprocket" gain="0.05"/></track>')
    (track,) = parse_urdf(xml).tracks
    assert track.link == "base" and track.thickness == 0.0
    np.testing.assert_allclose(track.axis, [-1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(track.wheels[1].center, [0.0, -0.1, 0.1], atol=1e-12)


_RULES = [
    (tracked(side_track(attrs='link="nowhere"')), "unknown link 'nowhere'"),
    (tracked(side_track(wheels='<wheel joint="nope" radius="0.1"/><wheel xyz="-0.5 0.14 0" radius="0.1"/>')),
     "wheel joint 'nope' is not a movable joint of the robot"),
    (tracked(side_track(drives='<drive joint="nope" gain="1"/>')),
     "drive joint 'nope' is not a revolute, continuous or prismatic joint"),
    (tracked(side_track(drives='<drive joint="mount_joint" gain="1"/>')),
     "drive joint 'mount_joint' is not a revolute, continuous or prismatic joint"),
    (tracked(side_track(wheels='<wheel joint="sprocket" radius="0.178"/><wheel xyz="-0.5 0.15 0" radius="0.178"/>')),
     "wheel 1 lies 0.01 m off the plane of the first wheel"),
    (tracked(side_track(wheels='<wheel joint="sprocket" radius="0.178"/><wheel xyz="0.45 0.14 0" radius="0.05"/>')),
     "wheel 1 lies inside wheel 0"),
    (tracked(side_track(), axis="0 0 1"), "the axis of wheel joint 'sprocket' is not parallel to the track's axis"),
    (tracked(side_track(drives="")), "a track needs at least one <drive>"),
    (tracked(side_track(drives='<drive joint="sprocket" gain="0"/>')), "drive joint 'sprocket' has a zero gain"),
    (tracked(side_track(), collision='<collision><geometry><cylinder radius="0.17" length="0.05"/></geometry>'
                                     '</collision>'),
     "wheel link 'sprocket_link' has its own collision geometry"),
    (tracked(side_track(wheels='<wheel joint="sprocket" radius="0.178"/>')),
     "a track needs at least two <wheel>, got 1"),
    (tracked(side_track(attrs='link="flipper"')), "wheel joint 'sprocket' is not a child joint of link 'flipper'"),
    (tracked(side_track(axis="")), "<track> lacks its <axis>"),
    (tracked(side_track(wheels='<wheel joint="sprocket" radius="0"/><wheel xyz="-0.5 0.14 0" radius="1"/>')),
     "a wheel radius must be > 0"),
    (tracked(side_track() + side_track()), "duplicate track name"),
]


@pytest.mark.parametrize("xml,rule", _RULES, ids=[rule.split("'")[0].strip() or rule for _xml, rule in _RULES])
def test_every_rule_of_the_spec_rejects_with_the_file_track_and_rule(xml, rule):
    with pytest.raises(URDFError, match=r"^<string>: track '\w+': " + rule):
        parse_urdf(xml)


def test_a_flipper_belt_on_the_wheel_link_is_not_the_wheels_own_geometry():
    """Reference: the spec ("the belt of another track on the wheel link ... is not the wheel's own
    geometry; the order of the <track> elements does not matter"): a track whose wheel is the flipper's
    joint is accepted while the flipper carries a track of its own, in either order."""
    side = side_track(wheels='<wheel joint="flipper_joint" radius="0.16"/><wheel xyz="-0.5 0.3 0" radius="0.16"/>')
    flip = ('<track name="flip" link="flipper" width="0.08"><axis xyz="0 1 0"/><wheel xyz="0 0 0" radius="0.16"/>'
            '<wheel xyz="0.35 0 0" radius="0.088"/><drive joint="flipper_joint" gain="-0.178"/></track>')
    for xml in (tracked(side + flip), tracked(flip + side)):
        assert sorted(t.name for t in parse_urdf(xml).tracks) == ["flip", "left"]


def test_the_belt_loop_is_the_hull_of_the_grown_wheels_and_its_marks_move_with_the_belt():
    """Reference: the loop around two wheels of 0.193 m (with the belt) 1 m apart is two 1 m runs and two half
    circles: 2 + 2 pi 0.193 m long. Tread marks are spread evenly around it, lie on the outer surface (on a
    run 0.193 m from the wheel plane's centre line, on an arc 0.193 m from its wheel centre), span the width,
    and a travel of d moves each one d along the loop: on the upper run, forwards (+x)."""
    (track,) = parse_urdf(tracked(side_track())).tracks
    assert track.perimeter() == pytest.approx(2.0 + 2.0 * math.pi * 0.193, rel=1e-12)
    marks = track.marks(0.0, 0.1)
    assert len(marks) == round(track.perimeter() / 0.1)
    np.testing.assert_allclose(marks[:, 1, :] - marks[:, 0, :], [[0.0, 0.08, 0.0]] * len(marks), atol=1e-12)
    mid = marks.mean(axis=1) - [0.0, 0.14, 0.0]  # (the belt's mid-plane is y = 0.14)
    x, z = mid[:, 0], mid[:, 2]
    on_run = np.abs(x) <= 0.5 + 1e-12
    np.testing.assert_allclose(np.abs(z[on_run]), 0.193, atol=1e-12)
    ends = ~on_run
    np.testing.assert_allclose(np.hypot(np.abs(x[ends]) - 0.5, z[ends]), 0.193, atol=1e-12)
    top = np.flatnonzero(on_run & (z > 0) & (x < 0.4))[0]
    moved = track.marks(0.05, 0.1).mean(axis=1)[top]
    np.testing.assert_allclose(moved - marks.mean(axis=1)[top], [0.05, 0.0, 0.0], atol=1e-12)
