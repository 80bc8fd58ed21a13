"""Joint limits, Coulomb joint friction and effort limits of articulated systems, and free bodies beside link
shapes. References: statics and Coulomb's law. Worlds of two envs, as in ``test_articulated.py``."""
import math

import numpy as np
import pytest

import taichi_terra as tt
from test_articulated import _link_urdf, _point_link, _revolute


def _limited_arm(lower, upper):
    """A 1 kg point mass 0.5 m out along x on a hinge about y: gravity turns it towards positive angles."""
    joint = ('<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>'
             f'<limit lower="{lower}" upper="{upper}" velocity="100" effort="100"/></joint>')
    xml = _link_urdf("arm", joint, '<link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>'
                                    '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/>'
                                    '</inertial></link>')
    world = tt.World(dt=1e-3, n_envs=2)
    return world, world.add_articulated_system(xml, base="fixed", position=(0.0, 0.0, 1.0))


def test_joint_at_its_limit_holds_the_load():
    """Reference: statics at a joint limit. A horizontal arm (m g l = 4.905 N m about the hinge) resting on its
    upper limit 0 stays there: the limit row leaves at most the slop (1e-4 rad) of overlap and no motion; an
    arm released 0.5 rad above it swings down and stops at the limit without passing it by more than the
    slop (the row is speculative: it sees the limit coming within one step)."""
    world, arm = _limited_arm(-1.0, 0.0)
    world.step(1000)
    x, v = arm.get_generalized_coordinate()[:, 0], arm.get_generalized_velocity()[:, 0]
    assert np.all(x <= 1e-4 + 1e-12) and np.all(x > -1e-9)
    np.testing.assert_allclose(v, 0.0, atol=1e-9)
    world, arm = _limited_arm(-1.0, 0.0)
    arm.set_generalized_coordinate([-0.5])
    peak = -1.0
    for _ in range(100):
        world.step(10)
        peak = max(peak, arm.get_generalized_coordinate(0)[0])
    assert peak <= 1e-4 + 1e-12
    assert arm.get_generalized_coordinate(0)[0] == pytest.approx(0.0, abs=1e-4)
    assert abs(arm.get_generalized_velocity(0)[0]) < 1e-6


def test_a_lower_limit_stops_a_driven_joint():
    """Reference: the limit as a wall. A hinge driven by -5 N m towards its lower limit -0.3 rad stops there
    (within the slop) and stays; without the limit it would turn past -3 rad in the same second."""
    xml_joint = ('<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>'
                 '<limit lower="-0.3" upper="0.3" velocity="100" effort="100"/></joint>')
    xml = _link_urdf("lim", xml_joint, _point_link("arm", 1.0, 0.0, 0.01))
    world = tt.World(dt=1e-3, n_envs=2)
    arm = world.add_articulated_system(xml, base="fixed")
    arm.set_generalized_force([-5.0])
    world.step(1000)
    x = arm.get_generalized_coordinate()[:, 0]
    assert np.all(x >= -0.3 - 1e-4 - 1e-12) and np.all(x < -0.3 + 1e-9)


def test_coulomb_joint_friction_holds_then_slides():
    """Reference: Coulomb friction F = 0.5 N m on a hinge (I = 0.01 kg m^2): under 0.3 N m it does not turn at
    all; under 1.0 N m it turns with (tau - F) / I = 50 rad/s^2, u = n dt 50 after n steps (semi-implicit
    Euler, exact for a constant acceleration)."""
    xml = _link_urdf("fric", _revolute("hinge", "base", "arm", "0 0 1", extra='<dynamics friction="0.5"/>'),
                     '<link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
                     '<inertia ixx="1e-9" iyy="1e-9" izz="1e-9" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    world = tt.World(dt=1e-3, n_envs=2)
    arm = world.add_articulated_system(xml, base="fixed")
    arm.set_generalized_force(np.array([[0.3], [1.0]]))
    world.step(100)
    u = arm.get_generalized_velocity()[:, 0]
    assert abs(u[0]) < 1e-12 and abs(arm.get_generalized_coordinate(0)[0]) < 1e-12
    assert u[1] == pytest.approx(100 * 1e-3 * (1.0 - 0.5) / (0.01 + 1e-9), rel=1e-9)


def test_joint_friction_holds_a_double_pendulum_still_and_warm_starts():
    """Reference: statics. Two horizontal links on hinges about y (1 kg at 0.1 m from each hinge, the second
    hinge 0.2 m out): gravity turns them with 9.81 (1 x 0.1 + 1 x 0.3) = 3.924 N m at the first hinge and
    0.981 N m at the second, less than their Coulomb friction of 5 and 2 N m, so neither turns. The two
    friction rows are coupled through the mass matrix; starting from the last step's impulses, every step
    after the first few takes at most two sweeps (the first corrects what the last step left within its
    tolerance, the second finds that no velocity changed), where a cold start takes dozens."""
    link = ('<link name="{}"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
            '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    joints = (_revolute("hinge1", "base", "arm1", "0 1 0", extra='<dynamics friction="5"/>')
              + _revolute("hinge2", "arm1", "arm2", "0 1 0", extra='<dynamics friction="2"/>')
              .replace('<origin xyz="0 0 0.0"/>', '<origin xyz="0.2 0 0"/>'))
    world = tt.World(dt=1e-3, n_envs=2)
    arm = world.add_articulated_system(_link_urdf("fric2", joints, link.format("arm1") + link.format("arm2")),
                                       base="fixed")
    world.step(20)
    sweeps = []
    for _ in range(20):
        world.step(1)
        sweeps.append(world.get_solver_sweeps(0))
    world.step(160)
    # each step's sweep stops once no row changes the velocities by more than the tolerance [rad/s here]
    tol = world.solver.tolerance
    assert np.abs(arm.get_generalized_velocity()).max() < 10 * tol
    assert np.abs(arm.get_generalized_coordinate()).max() < 200 * 1e-3 * 10 * tol
    assert max(sweeps) <= 2
    snap = world.checkpoint()
    world.solver.warm_start = False
    world.step(1)
    assert world.get_solver_sweeps(0) > 20  # (86 measured)
    world.restore(snap)


def test_effort_limit_holds_a_stiff_drive_at_its_limit():
    """Reference: a PD drive (kp = 1e4 N m/rad towards 1 rad) on a hinge with effort limit 2 N m and
    I = 0.01 kg m^2 saturates: the joint accelerates at exactly 2 / I = 200 rad/s^2, u = 200 n dt after n
    steps, and the drive reports 2 N m; without the limit it would apply about 1e4 N m at once."""
    joint = ('<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>'
             '<limit lower="-10" upper="10" velocity="100" effort="2"/></joint>')
    xml = _link_urdf("effort", joint, '<link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
                                      '<inertia ixx="1e-9" iyy="1e-9" izz="1e-9" ixy="0" ixz="0" iyz="0"/>'
                                      '</inertial></link>')
    world = tt.World(dt=1e-3, n_envs=2)
    arm = world.add_articulated_system(xml, base="fixed")
    arm.set_pd_gains([1e4], [10.0])
    arm.set_pd_target([1.0], [0.0])
    world.step(10)
    inertia = 0.01 + 1e-9
    np.testing.assert_allclose(arm.get_generalized_velocity()[:, 0], 10 * 1e-3 * 2.0 / inertia, rtol=1e-12)
    np.testing.assert_allclose(arm.get_generalized_force()[:, 0], 2.0, rtol=1e-12)


def test_a_drive_stalled_by_a_contact_holds_its_effort_limit():
    """Reference: statics of a lever. A hinge at height 0.1 m (axis y) carries a 0.5 m arm (1 kg, centre of
    mass 0.25 m out) with a sphere of 0.05 m at its tip resting on the ground; a stiff PD drive (kp 1e4 N m/rad)
    asks for an angle below the ground, far beyond its 2 N m effort limit. The velocity update alone sees
    nothing to push against; the contact holds the arm, so the drive asks for more than its limit after the
    sweep and is held at it from the next step on: it reports 2 N m, and the frictionless ground pushes on the
    tip with ``N = (tau + m g 0.25 cos a) / (0.5 cos a)`` (moments about the hinge, the arm at angle ``a``)."""
    tip = ('<link name="arm"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>'
           '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>'
           '<collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.05"/></geometry></collision></link>')
    joint = ('<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/>'
             '<axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="100" effort="2"/></joint>')
    world = tt.World(dt=1e-3, solver=tt.SolverConfig(tolerance=1e-10, max_sweeps=200))
    world.set_material_pair_prop("ice", "default", 0.0, 0.0)  # (friction at the tip would make it indeterminate)
    world.add_ground(0.0, material="ice")
    arm = world.add_articulated_system(_link_urdf("lever", joint, tip), base="fixed")
    angle = math.asin((0.1 - 0.05) / 0.5)  # the tip sphere on the ground: hinge 0.1 m up, tip 0.05 m up
    arm.set_generalized_coordinate([angle])
    arm.set_pd_gains([1e4], [10.0])
    arm.set_pd_target([angle + 0.5], [0.0])  # (positive about y turns the tip down)
    world.step(200)
    assert abs(arm.get_generalized_velocity(0)[0]) < 1e-8
    assert arm.get_generalized_force(0)[0] == pytest.approx(2.0, rel=1e-12)
    lever = 0.5 * math.cos(angle)
    normal = world.get_contacts(0).impulses[:, 2].sum() / 1e-3
    assert normal == pytest.approx((2.0 + 9.81 * 0.25 * math.cos(angle)) / lever, rel=1e-6)


def test_free_bodies_keep_their_own_loads_beside_link_shapes():
    """Reference: Newton's second law, ``v = F t / m``, for two free boxes with their own external forces in a
    world whose articulated system carries three collision shapes (the body-load rows of the shapes on links
    come after the free bodies'; a world with more shapes on links than free bodies was once refused at build,
    and one with fewer gave the free bodies' loads to the links' rows)."""
    shapes = "".join(f'<collision><origin xyz="{k} 0 0"/><geometry><sphere radius="0.1"/></geometry></collision>'
                     for k in range(3))
    robot = (f'<robot name="three"><link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" '
             f'izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>{shapes}</link></robot>')
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    boxes = [world.add_box(0.1, 0.1, 0.1, mass) for mass in (1.0, 2.0)]
    for k, box in enumerate(boxes):
        box.set_position((0.0, 2.0 + k, 0.0))
        box.set_external_force((1.0 + k, 0.0, 0.0))
    world.add_articulated_system(robot, position=(0.0, -2.0, 0.0))
    world.step(100)
    for k, box in enumerate(boxes):
        np.testing.assert_allclose(box.get_linear_velocity(0), [(1.0 + k) * 0.1 / box.mass, 0.0, 0.0], rtol=1e-12)
