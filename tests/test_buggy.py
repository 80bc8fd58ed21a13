"""The off-road buggy of ``taichi_terra.bodies.buggy``: its URDF loads as the design says (896 kg, the joints
and limits the generator wrote), and on a soil bed it comes to rest on its four wheels, which then carry its
weight; its one steering input turns both front wheels.

One world (a small bed around the car, at the scene's 4 cm spacing and soil) serves the physics tests."""

import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.bodies import buggy as mb
from taichi_terra.bodies.urdf import parse_urdf

G = 9.81
SOIL = dict(bekker_kphi=2.0e6, elastic_stiffness=2.0e7, damping=4.0e4, sinkage_exponent=1.1, cohesion=100.0)
SPACING = 0.04  # [m]
BED_X, BED_Y = 3.2, 2.0  # [m]: the car's 2.2 m x 1.5 m wheel footprint with room around it


def test_committed_urdf_is_the_generators_and_loads():
    """The file in the repository is what the generator writes now; it parses into 28 links and 33 velocity
    coordinates (6 base, 5 per rear corner, 6 per front corner, the rack and two 2-hinge tie rods)."""
    assert mb.URDF_PATH.read_text() == mb.buggy_urdf()
    model = parse_urdf(mb.URDF_PATH)
    assert model.n_dof == 6 + 2 * 5 + 2 * 6 + 1 + 4
    assert len(model.links) == 28
    joints = {j.name: j for j in model.joints}
    for c in ("rl", "rr"):  # rear drives: continuous with an effort limit
        assert joints[f"{c}_wheel_joint"].type == "continuous"
        assert joints[f"{c}_wheel_joint"].effort == mb.DRIVE_EFFORT
    assert joints["steering_rack_joint"].type == "prismatic"
    assert (joints["steering_rack_joint"].lower, joints["steering_rack_joint"].upper) == (-mb.RACK_LIMIT, mb.RACK_LIMIT)
    wheels = {link.name: link.collisions[0] for link in model.links if link.name.endswith("_wheel")}
    for name, shape in wheels.items():
        width = mb.FRONT_WIDTH if name[0] == "f" else mb.REAR_WIDTH
        assert shape.kind == "cylinder"
        np.testing.assert_array_equal(shape.params, [0.3611, width])
        np.testing.assert_allclose(shape.rotation[:, 2], [0.0, -1.0, 0.0], atol=1e-8)  # axle along y (rpy: 9 digits)


def test_total_mass_is_896_kg():
    """Sum of the link masses after the parser merges nothing (no fixed joints): 896 kg to 1e-9, the chassis
    745.4 kg of it."""
    model = parse_urdf(mb.URDF_PATH)
    assert model.total_mass == pytest.approx(896.0, rel=1e-9)
    assert mb.total_mass() == pytest.approx(896.0, rel=1e-9)
    assert model.links[model.link_index("chassis")].mass == 745.4


@pytest.fixture(scope="module")
def settled():
    """The buggy standing on a small soil bed for 3 s (it starts with its wheels on the undeformed surface and
    sinks in; the drives hold the rear wheels still, the rack at 0). Yields (world, bed, buggy, normal force
    of the soil in each of the last 200 steps [N])."""
    world = tt.World(dt=1e-3)
    nx, ny = round(BED_X / SPACING) + 1, round(BED_Y / SPACING) + 1
    bed = world.add_deformable_terrain(nx, ny, BED_X, BED_Y, 0.0, 0.0, np.zeros(nx * ny), tt.SoilMaterial(**SOIL))
    buggy = mb.add_buggy(world)
    world.step(2800)
    forces = []
    for _ in range(200):
        world.step()
        forces.append(bed.get_soil_step_stats(0)["normal_force"])
    yield world, bed, buggy, np.array(forces)


def test_buggy_at_rest_on_soil_carries_its_weight(settled):
    """Reference: statics of the whole car. At rest, the soil's total normal force on the car (the beds's
    step statistics: loaded quadrature points only) equals m g; once settled, in each of the last 200 steps
    to 1e-3 relative. Only the four wheels touch the soil, each carrying a share, and the loops stay closed
    (pin gaps below 1e-6 m)."""
    world, bed, buggy, forces = settled
    weight = buggy.mass * G
    np.testing.assert_allclose(forces / weight, 1.0, atol=1e-3)
    contacts = world.get_contacts(0)
    per_wheel = {}
    for imp, nrm, label, link in zip(contacts.impulses, contacts.normals, contacts.static, contacts.link_b):
        fn = float(imp @ nrm) / world.dt
        if label == "soil:0" and fn > 0.0:
            per_wheel[link[1]] = per_wheel.get(link[1], 0.0) + fn
    assert set(per_wheel) == {f"{c}_wheel" for c in mb.CORNERS}, per_wheel
    assert sum(per_wheel.values()) == pytest.approx(forces[-1], rel=1e-12)
    for name, f in per_wheel.items():
        assert 0.15 * weight < f < 0.35 * weight, (name, f)
    assert max(pin.get_gap(0) for pin in buggy.pins) < 1e-6
    u = buggy.system.get_generalized_velocity(0)
    assert np.abs(u[:3]).max() < 1e-3  # at rest (chassis speed below 1 mm/s)


def test_axle_loads_follow_the_centre_of_mass(settled):
    """Reference: moment balance about the rear axle, front load = m g (x_com - x_rear) / wheelbase with the
    design's centre of mass (43.4 % front). On soil the rear sinks about 10 mm deeper than the front: a pitch
    of about 0.005 rad moves the centre of mass (about 0.5 m above the wheel contacts) 2 to 3 mm back over
    the 2.2 m wheelbase, about 1e-3 of the split; the check allows 2e-3."""
    world, _bed, buggy, _forces = settled
    contacts = world.get_contacts(0)
    front = sum(float(imp @ nrm) for imp, nrm, label, link in zip(contacts.impulses, contacts.normals,
                                                                  contacts.static, contacts.link_b)
                if label == "soil:0" and link[1] in ("fl_wheel", "fr_wheel")) / world.dt
    share = mb.static_loads()["front_share"]
    assert front / (buggy.mass * G) == pytest.approx(share, abs=2e-3)


def test_one_rack_steers_both_front_wheels(settled):
    """The rack is the only steering input: moved 2 cm to the right (the car's left turn), both knuckles turn
    left, by about rack / lever (the steering arm's reach behind the kingpin), the inner (left) wheel more
    than the outer (Ackermann arms), and the rear knuckle-less corners do not steer."""
    world, _bed, buggy, _forces = settled
    rack = -0.02  # [m]
    start = world.checkpoint()
    try:
        buggy.set_commands(rack=rack)
        world.step(600)
        q = buggy.system.get_generalized_coordinate(0)
        gap = max(pin.get_gap(0) for pin in buggy.pins)
    finally:  # (the next tests start from the car standing straight)
        world.restore(start)
        buggy.set_commands(rack=0.0)
    left, right = (q[1 + i] for i in buggy.steer)
    assert q[1 + buggy.rack] == pytest.approx(rack, abs=1e-3)
    expected = mb.rack_to_steer(rack)
    assert expected > 0.0
    assert left > right > 0.0
    assert 0.5 * (left + right) == pytest.approx(expected, rel=0.1)
    assert gap < 1e-6


def test_the_scenes_sweep_tolerance_keeps_the_ruts_within_its_error_bound():
    """Reference: the sweeps' stopping test. The scene sweeps to ``SOLVER_TOLERANCE`` (1e-4 m/s) where the world
    defaults to 1e-6 m/s: a row's velocity may be off by the tolerance, so a soil sample's sinkage by at most
    ``tol dt`` per step and a body by ``tol dt`` per step, each step's error adding at worst in the same sense.
    Driving off from standstill at 0.8 m/s for 1 s on both settings, every sample's sinkage and the chassis'
    position must agree within ``(1e-4 + 1e-6) m/s x 1 s`` = 0.101 mm, and the looser setting must take
    fewer sweeps: at most 0.8 times as many (measured with the soil groups of solver/soil_group.py: 2503
    against 3860 sweeps; 0.5 times before them)."""
    runs = []
    length = 4.8  # [m]: the wheels' footprints from x = -1.8 m to about +1.8 m after 1 s
    for tol in (mb.SOLVER_TOLERANCE, 1e-6):
        world = tt.World(dt=1e-3)
        world.solver.tolerance = tol
        nx, ny = round(length / SPACING) + 1, round(BED_Y / SPACING) + 1
        bed = world.add_deformable_terrain(nx, ny, length, BED_Y, 0.0, 0.0, np.zeros(nx * ny),
                                           tt.SoilMaterial(**SOIL))
        buggy = mb.add_buggy(world, position=(-0.4, 0.0, mb.RIDE_HEIGHT), speed=0.8)
        sweeps = 0
        for _ in range(1000):
            world.step()
            sweeps += int(world.get_solver_sweeps(0))
        runs.append((bed.get_soil_state(0)["sinkage"], buggy.system.get_generalized_coordinate(0)[:3], sweeps))
    bound = (mb.SOLVER_TOLERANCE + 1e-6) * 1.0
    (sink_a, pos_a, sweeps_a), (sink_b, pos_b, sweeps_b) = runs
    assert sink_b.max() > 0.03  # (the wheels are in the soil: ruts of centimetres)
    assert np.abs(sink_a - sink_b).max() < bound
    assert np.abs(pos_a - pos_b).max() < bound
    assert pos_a[0] > -0.4 + 0.5  # (it drove off: more than 0.5 m in the second)
    assert sweeps_a < 0.8 * sweeps_b, (sweeps_a, sweeps_b)



def test_pin_blocks_take_fewer_sweeps_and_keep_the_pin_forces_physical(settled):
    """Solving each tree's pins together and letting the rows on its links push it with its pins held
    (``SolverConfig.pin_block``, solver/pin_block.py; that it reaches the same state as sweeping the pins one
    by one is tests/test_pins.py's check) must take fewer than half the sweeps when the car drives off for
    0.3 s at the default tolerance (measured: 5.4 against 18 a step). Reference for the forces: statics of a
    corner.
    No pin carries more than the car's weight (each holds part of one corner's quarter of it, about 2.2 kN;
    a factor that kept impulse along a wishbone's hinge axis, which moves nothing, reported 41 kN there)."""
    world, _bed, buggy, _forces = settled
    weight = buggy.mass * G
    assert max(np.linalg.norm(pin.get_force(0)) for pin in buggy.pins) < weight

    def check():
        assert max(np.linalg.norm(pin.get_force(0)) for pin in buggy.pins) < weight

    sweeps = {block: _drive_off_sweeps(world, buggy, "pin_block", block, check) for block in (True, False)}
    assert sweeps[True] < 0.5 * sweeps[False], sweeps


def test_soil_group_reaches_the_blocks_fixed_point_in_fewer_sweeps(settled):
    """Solving the four wheels' soil blocks together (``SolverConfig.tree_soil_block``, solver/soil_group.py)
    changes how the sweeps reach the step's fixed point, not the point. Reference: the same step with each
    wheel's block on its own, both swept to 1e-12 m/s: the generalized velocities agree to 1e-9 (a step's
    velocity change is about 1e-2 m/s). Driving off for 0.3 s at the default tolerance, the group (from the
    second sweep of a step on) takes fewer sweeps: less than 0.8 times as many (measured: 1081 against 1613;
    6.2 against 11.5 a step over 3 s from standstill on the scene's bed, ``perf.bench_solver``)."""
    world, _bed, buggy, _forces = settled
    sweeps = {group: _drive_off_sweeps(world, buggy, "tree_soil_block", group) for group in (True, False)}
    start = world.checkpoint()
    saved = (world.solver.tree_soil_block, world.solver.tolerance, world.solver.max_sweeps)
    u = {}
    try:
        buggy.set_commands(speed=0.8)
        world.step(300)
        mid = world.checkpoint()
        for group in (True, False):
            world.restore(mid)
            world.solver.tree_soil_block = group
            world.solver.tolerance, world.solver.max_sweeps = 1e-12, 100000
            world.step()
            u[group] = buggy.system.get_generalized_velocity(0).copy()
    finally:
        world.restore(start)
        world.solver.tree_soil_block, world.solver.tolerance, world.solver.max_sweeps = saved
        buggy.set_commands(speed=0.0)
    np.testing.assert_allclose(u[True], u[False], rtol=0.0, atol=1e-9)
    assert sweeps[True] < 0.8 * sweeps[False], sweeps


def _drive_off_sweeps(world, buggy, setting, value, check=None):
    """The sweeps the settled car takes driving off at 0.8 m/s for 0.3 s with the solver's ``setting`` at
    ``value`` (``check()`` after every step); the world, the setting and the command are as before after."""
    start = world.checkpoint()
    saved = getattr(world.solver, setting)
    sweeps = 0
    try:
        setattr(world.solver, setting, value)
        buggy.set_commands(speed=0.8)  # (after the restore: a checkpoint holds the drives' targets too)
        for _ in range(300):
            world.step()
            sweeps += int(world.get_solver_sweeps(0))
            if check is not None:
                check()
    finally:
        world.restore(start)
        setattr(world.solver, setting, saved)
        buggy.set_commands(speed=0.0)
    return sweeps


def test_hard_steering_of_a_spinning_buggy_in_the_air_keeps_its_angular_momentum():
    """Reference: conservation of angular momentum. Eight buggies in the air without gravity spin at 6 rad/s
    about the vertical through their centre of mass (no linear momentum), and their racks take a random
    steering step every 50 ms for 1 s: the steering loops' forces are internal, so each car's angular
    momentum about the vertical (the floating base's yaw row of M u) stays within 1e-3 (the step's
    integration error: 1e-4 measured). Pin blocks on (the default). Before the factor of a tree's pins pivoted
    on the largest diagonal entry, three of the eight cars lost all their spin in one step: a wishbone pin's
    redundant direction, which turns with the car among the rows' world axes, left the pins' vertical rows as
    rounding; before its warm starts dropped their parts along that direction, the cars spun up to 1e9."""
    n = 8
    world = tt.World(dt=1e-3, n_envs=n, gravity=(0.0, 0.0, 0.0))
    buggy = mb.add_buggy(world, position=(0.0, 0.0, 2.0))
    world.build()
    system = buggy.system
    u = system.get_generalized_velocity()
    u[:, 5] = 6.0  # [rad/s] about z through the base origin ...
    u[:, 1] = -6.0 * mb.static_loads()["x_com"]  # ... with the origin circling the centre of mass
    system.set_generalized_velocity(u)

    def spin():
        return np.array([(system.get_mass_matrix(e) @ system.get_generalized_velocity(e))[5] for e in range(n)])

    before = spin()
    rng = np.random.default_rng(0)
    for _k in range(20):
        q = np.tile(buggy.q_target, (n, 1))
        q[:, 1 + buggy.rack] = mb.steer_to_rack(0.35 * rng.uniform(-1.0, 1.0, n))
        system.set_pd_target(q, np.tile(buggy.u_target, (n, 1)))
        world.step(50)
        np.testing.assert_allclose(spin(), before, rtol=1e-3)
