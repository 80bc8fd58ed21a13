"""Belts in the step (``kernels/belts/rows.py``, ``spec/tracks.md`` "Dynamics" and "Conveyors"): a contact on a
belt has the Jacobian ``J_link + t g^T``, so the belt grips, pushes with ``tau / g``, slides beyond ``mu W``,
does no work, stalls its drives against a wall and carries boxes on a conveyor. Each test names its
reference: a closed form of rigid-body mechanics with Coulomb friction, or a balance law.

The robot is :func:`~taichi_terra.bodies.tracked_robot.tracked_robot_urdf`'s (32 kg: a 30 kg body and two
1 kg sprockets of 0.016 kg m^2 about their axes, belts of 1 m footprints 0.28 m apart on wheels of 0.178 m).
"""
import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.bodies.tracked_robot import TrackedRobotDesign, tracked_robot_urdf
from taichi_terra.bodies.urdf import URDFError
from helpers import block_saves_sweeps_to_the_row_by_row_solution, step_against_row_by_row

DT = 0.002
R = 0.178  # sprocket pitch radius = the drives' gain [m]
THICK = 0.015
MU = 0.8  # the default friction
G = 9.81
TOL = 1e-9  # the solver's sweep tolerance in these worlds [m/s]
#: Gauss-Seidel stops once no row's velocity moved by more than TOL in a sweep; the velocities it leaves are
#: within a few TOL of the converged ones (rho / (1 - rho) TOL for a convergence rate rho per sweep): 10 TOL
#: covers rho up to 0.9
SETTLED = 10 * TOL


def _world(n_envs=1):
    return tt.World(dt=DT, n_envs=n_envs, solver=tt.SolverConfig(tolerance=TOL, max_sweeps=400))
SPROCKETS = ("left_sprocket", "right_sprocket")


def _robot(world, material=None, **design):
    return world.add_articulated_system(tracked_robot_urdf(TrackedRobotDesign(**design), material=material),
                                        position=(0.0, 0.0, R + THICK + 1e-4))


def _dofs(system, names=SPROCKETS):
    return [system.get_generalized_velocity_index(n) for n in names]


def _velocity_drive(system, target, kd=50.0):
    """A velocity PD on both sprockets: ``target`` [rad/s], one per env or one for all."""
    nv = system.get_dof()
    kd_v, vt = np.zeros(nv), np.zeros((system.get_generalized_coordinate().shape[0], nv))
    kd_v[_dofs(system)] = kd
    vt[:, _dofs(system)] = np.asarray(target, float).reshape(-1, 1)
    system.set_pd_gains(np.zeros(nv), kd_v)
    system.set_pd_target(np.zeros((system.get_generalized_coordinate().shape[0], system.get_generalized_coordinate_dim())), vt)


@pytest.fixture(scope="module")
def cruising():
    """Two envs on flat ground, sprockets velocity-controlled at 5 and 3 rad/s, after 0.6 s."""
    world = _world(2)
    world.add_ground(0.0)
    system = _robot(world)
    _velocity_drive(system, [5.0, 3.0])
    world.step(300)
    return world, system


def test_gripping_belts_run_the_robot_at_the_sprocket_rim_speed(cruising):
    """Reference: a belt that grips moves the robot at the belt speed ``s = r u_sprocket`` (spec): 5 rad/s on
    a 0.178 m pitch radius runs at 0.89 m/s, 3 rad/s at 0.534 m/s; with no load on flat rigid ground the
    velocity drives hold their targets. Both envs step in one world, each at its own speed."""
    world, system = cruising
    u = system.get_generalized_velocity()
    for env, omega in ((0, 5.0), (1, 3.0)):
        np.testing.assert_allclose(u[env, _dofs(system)], omega, atol=SETTLED / R)
        assert u[env, 0] == pytest.approx(R * omega, abs=SETTLED)
        assert np.abs(u[env, 1:6]).max() < SETTLED
        for track, sprocket in (("left", 0), ("right", 1)):  # s = g^T u
            speed = system.get_track_speed(system.get_track_index(track), env=env)
            assert speed == pytest.approx(R * u[env, _dofs(system)[sprocket]], rel=1e-12)
            assert speed == pytest.approx(R * omega, abs=SETTLED)
    np.testing.assert_allclose(system.get_track_speed(0), R * np.array([5.0, 3.0]), atol=SETTLED)


def test_an_env_steps_the_same_beside_others_as_alone(cruising):
    """Reference: batch invariance (each env's sweep is serial and its own): env 0 of the two-env world,
    stepped alone in a world of one env, ends bit for bit the same."""
    world2, system2 = cruising
    world = _world()
    world.add_ground(0.0)
    system = _robot(world)
    _velocity_drive(system, 5.0)
    world.step(300)
    np.testing.assert_array_equal(system.get_generalized_coordinate(0), system2.get_generalized_coordinate(0))
    np.testing.assert_array_equal(system.get_generalized_velocity(0), system2.get_generalized_velocity(0))


def test_ground_carries_the_weight_and_coincident_belt_contacts_are_merged(cruising):
    """Reference: vertical force balance at constant velocity (the normal impulses sum to ``M g dt``), and the
    spec's rule for coincident contacts: at each end of a footprint the box of the run and the wheel's
    cylinder touch, at both edges of the belt, at the same place of its mid-plane (where the belt takes
    contacts with static geometry) with the same normal; the deeper one carries the impulse, the others
    report zero and are flagged merged, and no two unmerged contacts of a belt lie within 1 % of its width
    on the mid-plane. The weight balance holds to the momentum the sweep's tolerance leaves, ``M SETTLED``."""
    world, system = cruising
    bodies = system.collision_bodies()
    for env in range(2):
        c = world.get_contacts(env)
        assert c.impulses[:, 2].sum() == pytest.approx(system.total_mass * G * DT, abs=system.total_mass * SETTLED)
        assert c.merged.any()
        assert np.all(c.impulses[c.merged] == 0.0)
        tracks = system.get_tracks()
        for track in tracks:
            mine = np.isin(c.body_b, track["collision_bodies"])
            rot = system.get_frame_orientation(track["link"], env=env)
            axis = rot @ track["axis"]
            mid = system.get_frame_position(track["link"], env=env) + rot @ bodies[track["collision_bodies"][0]][2]
            on_mid_plane = c.positions - ((c.positions - mid) @ axis)[:, None] * axis
            kept = on_mid_plane[mine & ~c.merged]
            gaps = np.linalg.norm(kept[:, None] - kept[None], axis=-1) + np.eye(len(kept))
            assert gaps.min() > 0.01 * track["width"]
            for p in on_mid_plane[mine & c.merged]:
                assert np.linalg.norm(kept - p, axis=1).min() <= 0.01 * track["width"]


def test_the_contact_block_solves_the_belts_contacts_together():
    """Reference: the converged solution of the same step swept row by row (``contact_block=False``, 1e-14 m/s,
    no sweep cap). The belts' contacts are contact-block members (``kernels/solver/block.py``): a robot
    starting to drive, whose light sprockets against its heavy body took about half the error out per sweep
    one by one, while its belts slip at some contacts and grip at others. The velocities end within
    ``SETTLED`` of the row-by-row solution, in at most half the sweeps over its first 100 steps (measured: 384
    against 4,792 over both envs)."""
    world = _world(2)
    world.add_ground(0.0)
    system = _robot(world)
    world.step(50)  # (settled on the ground)
    _velocity_drive(system, [5.0, 3.0])
    block_saves_sweeps_to_the_row_by_row_solution(world, system, 100, (1, 40, 60), SETTLED, reference_sweeps=1000000)


def test_driving_over_the_sine_map_takes_a_few_sweeps_to_the_converged_solution():
    """Reference: the converged solution of the same step swept row by row (``contact_block=False``, 1e-14 m/s,
    up to a million sweeps). The robot with its flippers of ``reference_scenes.tracked_ridges_world`` (the
    benchmarks' ``tracked`` scene) drives at 4 rad/s over a map of 2 cm sine waves 3 m long, at the world's
    tolerance of 1e-6 m/s: its belts slide at some contacts and grip at others, and the contact block solves
    them together in each sweep (``kernels/solver/active_set.py``). Over its first 0.8 s the steps take at most
    5 sweeps on average (measured: 3.81, one step at the 100-sweep cap as it lands; 9.57 when the block took
    sticking contacts only), and at 0.3, 0.5 and 0.7 s the step ends within 10 tolerances of the converged one
    (measured: 1.2e-10 m/s at most)."""
    from taichi_terra.reference_scenes import tracked_ridges_world

    world, system = tracked_ridges_world(1)
    tol = world.solver.tolerance
    sweeps = []
    for k in range(400):
        if k in (150, 250, 350):
            u, reference = step_against_row_by_row(world, system, reference_sweeps=1000000)
            assert np.abs(u - reference).max() < 10 * tol, k
        world.step()
        sweeps.append(int(world.get_solver_sweeps(0)))
    assert np.mean(sweeps) <= 5.0


@pytest.fixture(scope="module")
def pushed():
    """From rest, a feed-forward torque on both sprockets: 10 N m in env 0 (grips), 40 N m in env 1 (2 tau / g
    = 449 N is beyond mu M g = 251 N: slides). Records the contacts and velocities of 25 steps."""
    world = _world(2)
    world.add_ground(0.0)
    system = _robot(world)
    world.step(50)  # settle on the ground
    tau = np.zeros((2, system.get_dof()))
    tau[0, _dofs(system)] = 10.0
    tau[1, _dofs(system)] = 40.0
    system.set_generalized_force(tau)
    u0 = system.get_generalized_velocity()
    record = []
    for _ in range(25):
        world.step()
        vel = [system.get_frame_velocity("base", env=e) for e in range(2)]
        record.append((world.get_contacts(0), system.get_generalized_velocity(), vel,
                       system.get_frame_position("base", env=0), system.get_frame_orientation("base", env=0)))
    return world, system, u0, record


def test_a_drive_torque_pushes_with_tau_over_g_up_to_mu_w(pushed):
    """Reference (spec, Newton's second law): a gripping belt pushes with ``tau / g`` per drive, and the robot
    accelerates with its mass plus the reflected inertia ``I / g^2`` of each drive:
    ``a = (2 tau / g) / (M + 2 I / g^2)`` = 3.4038 m/s^2 at 10 N m (the rotor inertia adds 1.01 kg to 32 kg).
    Beyond ``mu M g`` the belts slide and the robot accelerates at ``mu g`` while the sprockets spin up.
    The velocities are the solver's to its tolerance: the acceleration over 25 steps to SETTLED / 0.05 s."""
    _world, system, u0, record = pushed
    u = record[-1][1]
    t = 25 * DT
    mass, inertia = system.total_mass, 0.016
    a_grip = (2 * 10.0 / R) / (mass + 2 * inertia / R ** 2)
    assert (u[0, 0] - u0[0, 0]) / t == pytest.approx(a_grip, abs=SETTLED / t)
    assert (u[1, 0] - u0[1, 0]) / t == pytest.approx(MU * G, abs=SETTLED / t)
    rim = R * u[1, _dofs(system)]
    assert np.all(rim > u[1, 0] + 1.0)  # the belts slide backwards over the ground
    np.testing.assert_allclose(R * u[0, _dofs(system)], u[0, 0], atol=SETTLED)  # ... and grip in env 0


def test_the_belt_does_no_work(pushed):
    """Reference: the belt is an ideal massless transmission (spec): in every step, the power the ground's
    traction delivers to the robot's body, ``sum lambda . v_link / dt`` (each contact where the body takes it,
    on the belt's mid-plane), equals the power the drives deliver into the belts, ``-sum s (t . lambda) / dt``
    (the belts' pull on the drive joints is ``g (t . lambda)``); the two differ by ``sum lambda . v_c / dt``,
    which the sticking contacts keep within the solver's tolerance."""
    _world, system, _u0, record = pushed
    tracks = system.get_tracks()
    for contacts, u, vel, origin, rot in record:
        v, w = vel[0]
        axis = rot @ np.array([0.0, 1.0, 0.0])
        traction = drive = bound = 0.0
        for k, track in enumerate(tracks):
            s = R * u[0, _dofs(system)[k]]  # (tracks and sprockets: left, right)
            mid_y = 0.14 if track["name"] == "left" else -0.14
            for i in np.flatnonzero(np.isin(contacts.body_b, track["collision_bodies"])):
                lam = contacts.impulses[i]
                local = rot.T @ (contacts.positions[i] - origin)
                local[1] = mid_y
                traction += lam @ (v + np.cross(w, rot @ local)) / DT
                t_dir = np.cross(axis, -contacts.normals[i])
                drive -= s * (t_dir @ lam) / DT
                bound += np.linalg.norm(lam) * SETTLED / DT
        assert traction > 0.0  # (the robot is being pushed forward)
        assert traction == pytest.approx(drive, abs=bound)


def test_a_robot_against_a_wall_stalls_its_drives_at_their_limit():
    """Reference: static equilibrium (spec: a robot that cannot move holds its belts still and its drives
    stall at their torque limit). Velocity drives asking for 5 rad/s with a 20 N m effort limit push the
    robot against a frictionless wall: the belts stand still, each drive applies 20 N m, each sprocket joint
    transmits that torque (inverse dynamics, the belt's pull included), and the wall pushes back with the
    belts' traction 2 tau / g = 224.7 N (to the force the sweep's tolerance leaves, ``M SETTLED / dt``)."""
    wall = ('<robot name="wall"><link name="slab"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" '
            'ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry><box size="0.2 2 1"/></geometry></collision>'
            '</link></robot>')
    world = _world()
    world.add_material("floor")
    world.add_ground(0.0, material="floor")
    system = _robot(world, effort=20.0, material="rubber")
    world.add_articulated_system(wall, base="fixed", position=(0.85, 0.0, 0.5))
    world.set_material_pair_prop("rubber", "floor", MU, 0.0)
    world.set_material_pair_prop("rubber", "default", 0.0, 0.0)  # the wall's
    system.set_compute_inverse_dynamics(True)
    _velocity_drive(system, 5.0)
    world.step(400)
    u = system.get_generalized_velocity(0)
    assert np.abs(u[_dofs(system)]).max() < SETTLED
    assert abs(system.get_track_speed(0, env=0)) < SETTLED and abs(u[0]) < SETTLED
    np.testing.assert_allclose(system.get_generalized_force(0)[_dofs(system)], 20.0, rtol=1e-12)
    torque = system.get_torque_at_joint_in_world_frame(0)
    names = system.get_joint_names()
    for name in SPROCKETS:
        assert torque[names.index(name), 1] == pytest.approx(20.0, abs=R * system.total_mass * SETTLED / DT)
    c = world.get_contacts(0)
    on_wall = np.array([a is not None and a[0] == 1 or (b is not None and b[0] == 1)
                        for a, b in zip(c.link_a, c.link_b)])
    assert on_wall.any()
    push = c.impulses[on_wall].sum(axis=0) / DT
    assert abs(push[0]) == pytest.approx(2 * 20.0 / R, abs=system.total_mass * SETTLED / DT)


CONVEYOR = ('<robot name="conveyor"><link name="world"/><joint name="mount" type="fixed"><parent link="world"/>'
            '<child link="frame"/><origin xyz="0 0 0.5"/></joint><link name="frame"/>'
            '<link name="roller_link"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" '
            'ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<joint name="roller" type="continuous"><parent link="frame"/><child link="roller_link"/>'
            '<origin xyz="1 0 0"/><axis xyz="0 1 0"/><limit effort="1000" velocity="100"/></joint>'
            '<track name="belt" link="frame" width="0.5" thickness="0.02"><axis xyz="0 1 0"/>'
            '<wheel joint="roller" radius="0.1"/><wheel xyz="-1 0 0" radius="0.1"/>'
            '<drive joint="roller" gain="0.1"/></track></robot>')


def test_a_conveyor_carries_a_box_at_belt_speed_and_its_drive_feels_the_friction():
    """Reference: Coulomb friction on a box dropped onto a moving belt (the spec's conveyor: a track on a fixed
    base): while it slides it accelerates at ``mu g`` and the belt's drive holds ``g mu m g`` = 1.57 N m
    against its friction (roller at 5 rad/s, gain 0.1 m: belt at 0.5 m/s); then the box rides at the belt
    speed along the upper run (+x) and the drive needs no torque. The drive's torque is the belt's pull
    ``g mu lambda_n / dt`` plus the roller's ``I du / dt``; the normal impulse ``lambda_n`` is the box's weight
    to the sweep's tolerance, so the pull is ``g mu m g`` to ``g mu m SETTLED / dt``."""
    world = _world()
    world.add_ground(0.0)
    box = world.add_box(0.2, 0.2, 0.2, 2.0)
    box.set_position((-0.5, 0.0, 0.5 + 0.12 + 0.1 + 1e-9))
    conveyor = world.add_articulated_system(CONVEYOR, base="fixed")
    conveyor.set_pd_gains([0.0], [200.0])
    conveyor.set_pd_target([0.0], [5.0])
    conveyor.set_generalized_velocity([5.0])
    world.step(9)
    u_roller = conveyor.get_generalized_velocity(0)[0]
    world.step()
    v = box.get_linear_velocity(0)
    assert v[0] == pytest.approx(MU * G * 10 * DT, abs=SETTLED)
    rotor = 0.01 * (conveyor.get_generalized_velocity(0)[0] - u_roller) / DT
    assert conveyor.get_generalized_force(0)[0] == pytest.approx(0.1 * MU * 2.0 * G + rotor,
                                                                  abs=0.1 * MU * 2.0 * SETTLED / DT)
    world.step(90)
    np.testing.assert_allclose(box.get_linear_velocity(0), [0.5, 0.0, 0.0], atol=SETTLED)
    assert abs(conveyor.get_generalized_force(0)[0]) < SETTLED
    assert conveyor.get_track_speed(0, env=0) == pytest.approx(0.5, abs=1e-9)


def test_track_queries_and_their_bad_input():
    """Reference: the spec's API (getTracks, getTrackIndex, getTrackSpeed) and a flipper's belt speed
    ``r (u_sprocket - u_flipper)`` from its two drives."""
    world = _world()
    system = world.add_articulated_system(tracked_robot_urdf(flippers=True), position=(0, 0, 1))
    names = [t["name"] for t in system.get_tracks()]
    assert names == ["left", "left_flipper", "right", "right_flipper"]
    k = system.get_track_index("left_flipper")
    assert k == 1 and system.get_track_index("nope") == -1
    flipper = system.get_tracks()[k]
    assert flipper["link"] == "left_flipper" and system.get_body_names()[flipper["link_index"]] == "left_flipper"
    assert [(d["joint"], d["gain"]) for d in flipper["drives"]] == [("left_sprocket", R), ("left_flipper_joint", -R)]
    u = np.zeros(system.get_dof())
    iu = {d["joint"]: d["velocity_index"] for d in flipper["drives"]}
    u[iu["left_sprocket"]], u[iu["left_flipper_joint"]] = 4.0, 1.5
    system.set_generalized_velocity(u)
    assert system.get_track_speed(k, env=0) == pytest.approx(R * (4.0 - 1.5), rel=1e-12)
    world.build()
    bodies = [b for t in system.get_tracks() for b in t["collision_bodies"]]
    assert len(bodies) == len(set(bodies)) and all(world._model.body_links[b][0] == 0 for b in bodies)
    with pytest.raises(ValueError, match="index must be in"):
        system.get_track_speed(4)
    with pytest.raises(TypeError, match="index must be an int"):
        system.get_track_speed("left")
    with pytest.raises(TypeError, match="name must be a str"):
        system.get_track_index(3)
    with pytest.raises(ValueError, match="spacing must exceed width"):
        TrackedRobotDesign(spacing=0.05)
    with pytest.raises(ValueError, match="length must be > 0"):
        TrackedRobotDesign(length=0.0)


def test_a_track_with_more_drives_than_the_step_takes_is_rejected():
    """Reference: a belt's drives are held in fixed slots (four); a fifth drive is refused when the world is
    built, with the track named, and nothing is added."""
    joints = "".join(f'<link name="l{i}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" '
                     f'ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j{i}" type="continuous">'
                     f'<parent link="base"/><child link="l{i}"/><origin xyz="{i} 0 0"/><axis xyz="0 1 0"/></joint>'
                     for i in range(5))
    urdf = ('<robot name="many"><link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" '
            'izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>' + joints +
            '<track name="belt" link="base" width="0.1" thickness="0.01"><axis xyz="0 1 0"/>'
            '<wheel xyz="0 0 0" radius="0.1"/><wheel xyz="1 0 0" radius="0.1"/>'
            + "".join(f'<drive joint="j{i}" gain="0.1"/>' for i in range(5)) + '</track></robot>')
    world = _world()
    with pytest.raises(URDFError, match="track 'belt': .*at most 4 <drive>"):
        world.add_articulated_system(urdf)
    assert world.articulated_systems == []


def test_tracked_robots_replay_from_checkpoints_and_round_trip_through_world_xml(tmp_path):
    """Reference: determinism (a checkpoint restores every state the step reads, the drives held at their
    effort limit included, so the steps after it replay bit for bit) and the world XML's round trip (the
    robot's URDF with its tracks comes back, and both worlds run their belts alike)."""
    world = _world()
    world.add_ground(0.0)
    system = _robot(world, effort=3.0)  # (the drives accelerate at their limit: held from step to step)
    _velocity_drive(system, 5.0)
    world.step(40)
    assert np.all(system.get_generalized_force(0)[_dofs(system)] == 3.0)
    snap = world.checkpoint()
    world.step(30)
    first = system.get_generalized_coordinate(0), system.get_generalized_velocity(0)
    world.restore(snap)
    world.step(30)
    np.testing.assert_array_equal(system.get_generalized_coordinate(0), first[0])
    np.testing.assert_array_equal(system.get_generalized_velocity(0), first[1])
    path = tmp_path / "tracked.xml"
    tt.export_world_xml(world, str(path))
    loaded = tt.load_world_xml(str(path), solver=tt.SolverConfig(tolerance=TOL, max_sweeps=400))
    (copy,) = loaded.articulated_systems
    assert [t["name"] for t in copy.get_tracks()] == ["left", "right"]
    held = system.get_held_drives(0)
    assert np.all(held[[system.get_joint_names().index(j) for j in ("left_sprocket", "right_sprocket")]] == 1.0)
    np.testing.assert_array_equal(copy.get_held_drives(0), held)
    world.step(400)
    loaded.step(400)
    for k in range(2):
        assert copy.get_track_speed(k, env=0) == pytest.approx(system.get_track_speed(k, env=0), abs=SETTLED)


def test_the_spec_example_robot_with_flippers_drives_over_a_row_of_steps():
    """Reference: the spec's example (``scenes/tracked_robot_steps.py``: the templated robot, flippers tipped
    up, sprockets at 4 rad/s): it climbs three 0.12 m steps, 0.7 m deep, and ends on the top, its belts at
    the sprockets' rim speed and its body level there (the footprints' middle a belt's outer radius above the
    0.36 m top, to the 1 mm the belt presses into the map's 2 cm triangles at its ends)."""
    import types

    from scenes import tracked_robot_steps as scene

    built = scene.build(types.SimpleNamespace(envs=2))
    world, robot = built.world, built.world.articulated_systems[0]
    world.step(2500)
    for env in range(2):
        q = robot.get_generalized_coordinate(env)
        top_from = scene.FIRST + (scene.N_STEPS - 1) * scene.RUN
        assert q[0] - 0.5 - (R + THICK) > top_from  # the whole robot past the last rise
        assert q[2] == pytest.approx(scene.RISE * scene.N_STEPS + R + THICK, abs=1e-3)
        assert robot.get_track_speed(0, env=env) == pytest.approx(R * scene.SPROCKET_SPEED, rel=1e-3)


def test_a_self_contact_on_a_belt_has_the_delassus_block_of_the_belt_jacobian():
    """Reference: the definition of a contact row's Delassus block, ``W = F^T J M^-1 J^T F``, with the belt's
    Jacobian of the spec (``J = J_link + t g^T`` on the belt's side). A sphere on a second link of the
    tracked robot (a mast turning about z, a slider along it; self-collision on) is pressed onto the left
    belt's upper run, whose surface runs along the body's x axis at ``s = g u_sprocket``. ``J`` comes from the
    link velocities the API reports for unit generalized velocities (and the belt speed for the sprocket's),
    ``M`` from ``get_mass_matrix`` (no gains: ``M~ = M``); both sides are links of one tree, so the block
    holds the cross terms of the two links and of the belt with the slider. In zero gravity, after one
    step, the solved impulse obeys Coulomb's law at that row: the belt slides under the sphere at the cone's
    rim, the slip opposing the friction."""
    top = R + THICK
    mast = ('<link name="mast"><inertial><origin xyz="0 0 0.2"/><mass value="2"/><inertia ixx="0.02" iyy="0.02" '
            'izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<joint name="turn" type="continuous"><parent link="base"/><child link="mast"/>'
            '<origin xyz="0.3 0.14 0.3"/><axis xyz="0 0 1"/></joint>'
            '<link name="slider"><inertial><mass value="1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" '
            'ixz="0" iyz="0"/></inertial><collision><geometry><sphere radius="0.03"/></geometry></collision></link>'
            '<joint name="lift" type="prismatic"><parent link="mast"/><child link="slider"/>'
            f'<origin xyz="-0.1 0 {top + 0.03 - 0.3 - 5e-5}"/><axis xyz="0 0 1"/>'
            '<limit lower="-1" upper="1" effort="100" velocity="10"/></joint>')
    world = tt.World(dt=DT, gravity=(0.0, 0.0, 0.0), solver=tt.SolverConfig(tolerance=TOL, max_sweeps=400))
    system = world.add_articulated_system(tracked_robot_urdf().replace("</robot>", mast + "</robot>"),
                                          position=(0.0, 0.0, 1.0), self_collision=True)
    nv = system.get_dof()
    iv = {n: system.get_generalized_velocity_index(n) for n in ("lift", "turn", "left_sprocket")}
    u = np.zeros(nv)
    u[[iv["lift"], iv["turn"], iv["left_sprocket"]]] = -0.3, 0.5, 6.0
    u[3:6] = 0.1, -0.2, 0.3
    system.set_generalized_velocity(u)
    q0 = system.get_generalized_coordinate(0)
    world.step()
    c = world.get_contacts(0)
    assert len(c) == 1 and c.link_a[0] == (0, "base") and c.link_b[0] == (0, "slider")
    kind, belt_a, belt_b = (world._scratch.block("scratch_i", "row", k)[0, 0, 0] for k in ("kind", "belt_a", "belt_b"))
    assert (kind, belt_a, belt_b) == (0, system.get_track_index("left"), -1)  # (ROW_CONTACT, side a's belt)
    block = world._scratch.block("scratch_f", "row", "delassus")[0, 0].reshape(3, 3)
    frame = world._scratch.block("scratch_f", "row", "frame")[0, 0].reshape(3, 3)
    np.testing.assert_array_equal(frame[:, 0], c.normals[0])
    u_after = system.get_generalized_velocity(0)

    system.set_generalized_coordinate(q0)  # (the step's rows were built in this configuration)
    p = c.positions[0]
    t = system.get_frame_orientation("base", 0)[:, 0]

    def relative_velocity(vel):  # side b's point less side a's point and belt
        system.set_generalized_velocity(vel)
        point = {}
        for link in ("base", "slider"):
            v, w = system.get_frame_velocity(link, 0)
            point[link] = v + np.cross(w, p - system.get_frame_position(link, 0))
        return point["slider"] - point["base"] - system.get_track_speed(0, env=0) * t

    jac = np.column_stack([relative_velocity(np.eye(nv)[i]) for i in range(nv)])
    delassus = frame.T @ jac @ np.linalg.solve(system.get_mass_matrix(0), jac.T) @ frame
    np.testing.assert_allclose(block, delassus, rtol=0, atol=1e-12 * np.abs(delassus).max())

    lam = c.impulses[0] @ frame  # (n, t1, t2)
    slip = relative_velocity(u_after) @ frame
    assert lam[0] > 0.0 and slip[0] == pytest.approx(0.0, abs=SETTLED)
    assert np.hypot(lam[1], lam[2]) == pytest.approx(MU * lam[0], rel=1e-12)
    speed = np.hypot(*slip[1:])  # (each slip component within SETTLED of the converged one)
    np.testing.assert_allclose(lam[1:] / np.hypot(*lam[1:]), -slip[1:] / speed, rtol=0, atol=SETTLED / speed)
