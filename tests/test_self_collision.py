"""Self-collision between the links of one articulated system (opt-in; never a link with its parent).

A fixed base carries a stiffly held arm; a second, undriven arm on its end falls under gravity. With
self-collision on it comes to rest on the base; off, it swings through. Worlds of two envs: the step kernel
variant test_articulated.py compiles."""
import numpy as np
import pytest

import taichi_terra as tt

G = 9.81


def _box_link(name, mass, size, centre):
    sx, sy, sz = size
    i = [mass * (sy * sy + sz * sz) / 12, mass * (sx * sx + sz * sz) / 12, mass * (sx * sx + sy * sy) / 12]
    c = " ".join(map(str, centre))
    return (f'<link name="{name}"><inertial><origin xyz="{c}"/><mass value="{mass}"/>'
            f'<inertia ixx="{i[0]}" iyy="{i[1]}" izz="{i[2]}" ixy="0" ixz="0" iyz="0"/></inertial>'
            f'<collision><origin xyz="{c}"/><geometry><box size="{sx} {sy} {sz}"/></geometry></collision></link>')


ARMS = ('<robot name="folding">' + _box_link("base", 5.0, (1.0, 0.4, 0.1), (0.0, 0.0, 0.05))
        + _box_link("arm1", 1.0, (0.3, 0.05, 0.05), (0.15, 0.0, 0.0))
        + _box_link("arm2", 1.0, (0.6, 0.05, 0.05), (0.3, 0.0, 0.0))
        + '<joint name="j1" type="continuous"><parent link="base"/><child link="arm1"/><origin xyz="-0.4 0 0.6"/>'
          '<axis xyz="0 1 0"/></joint>'
        + '<joint name="j2" type="continuous"><parent link="arm1"/><child link="arm2"/><origin xyz="0.3 0 0"/>'
          '<axis xyz="0 1 0"/></joint></robot>')


def _world(self_collision):
    world = tt.World(dt=1e-3, n_envs=2)
    arms = world.add_articulated_system(ARMS, base="fixed", self_collision=self_collision)
    arms.set_pd_gains([1e4, 0.0], [1e2, 0.0])
    arms.set_pd_target([0.0, 0.0], [0.0, 0.0])
    return world, arms


def _tip_z(arms):
    rot = arms.get_frame_orientation("arm2", 0)
    return (arms.get_frame_position("arm2", 0) + rot @ [0.6, 0.0, -0.025])[2]


def test_a_falling_link_rests_on_its_own_base_with_self_collision():
    """Reference: statics and geometry. The undriven arm falls about its hinge onto the base's top face (z =
    0.1 m) and stays there: at rest after 3 s its lower tip edge is no deeper in the face than the contact
    slop, every contact is between the arm and the base (the arm and its parent overlap at the hinge and are
    never paired), and the contact forces balance gravity's moment about the free hinge (no drive there):
    sum (r_c - h) x F_c + (r_com - h) x m g = 0 along the axis, to 1e-6 of gravity's moment."""
    world, arms = _world(True)
    world.step(3000)
    assert np.abs(arms.get_generalized_velocity()).max() < 1e-6
    assert _tip_z(arms) > 0.1 - 1e-3
    contacts = world.get_contacts(0)
    assert len(contacts) > 0
    assert {frozenset((a[1], b[1])) for a, b in zip(contacts.link_a, contacts.link_b)} == {frozenset(("base", "arm2"))}
    hinge = arms.get_frame_position("arm2", 0)
    rot = arms.get_frame_orientation("arm2", 0)
    com = arms.get_frame_position("arm2", 0) + rot @ [0.3, 0.0, 0.0]
    gravity = np.cross(com - hinge, [0.0, 0.0, -G])[1]
    sign = np.array([1.0 if b[1] == "arm2" else -1.0 for b in contacts.link_b])  # the impulse acts on side b
    forces = contacts.impulses * sign[:, None] / world.dt
    held = np.cross(contacts.positions - hinge, forces).sum(axis=0)[1]
    assert held + gravity == pytest.approx(0.0, abs=1e-6 * abs(gravity))


def test_without_self_collision_the_link_swings_through_its_base():
    world, arms = _world(False)
    lowest = np.inf
    for _ in range(60):
        world.step(20)
        lowest = min(lowest, _tip_z(arms))
    assert lowest < 0.05  # through the base's top face (z = 0.1 m)
    assert len(world.get_contacts(0)) == 0


def test_self_collision_must_be_a_bool():
    world = tt.World(dt=1e-3, n_envs=2)
    with pytest.raises(ValueError, match="self_collision must be True or False"):
        world.add_articulated_system(ARMS, base="fixed", self_collision="yes")
    assert world.articulated_systems == []
