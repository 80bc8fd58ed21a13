"""Articulated systems without contacts: mass matrix, bias forces, forward dynamics and frames against
Pinocchio, closed forms (pendulum period, PD step responses, energy of a double pendulum), drives, limits,
batch invariance, checkpoints and bad input.

Every world here has at least two envs, so one compiled variant of the step kernel with the tree stages
serves the whole module."""
import math
import re
from pathlib import Path

import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.bodies.urdf import URDFError, make_chain_urdf
from helpers import STAND, step_against_row_by_row, sweeps_with_and_without_block

DATA = Path(__file__).parent / "data" / "urdf"
G = 9.81


def _inertial(mass, xyz, ixx, iyy, izz, ixy, ixz, iyz):
    return (f'<inertial><origin xyz="{xyz}"/><mass value="{mass}"/><inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" '
            f'ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial>')


#: a floating body with two branches: a prismatic carriage carrying a hinged arm that carries a second
#: slider, and a wheel; tilted joint frames, off-axis centres of mass, products of inertia, damping and a
#: rotor inertia (the sliders' limits, which urdfdom requires, are far enough that no joint row is made)
SLIDER = (
    '<robot name="slider">'
    f'<link name="body">{_inertial(2.0, "0.05 0 0", 0.02, 0.03, 0.04, 0.001, 0.0, 0.002)}</link>'
    f'<link name="carriage">{_inertial(0.7, "0 0.02 0.01", 0.003, 0.004, 0.005, 0.0002, 0.0, 0.0)}</link>'
    f'<link name="arm">{_inertial(0.4, "0.1 0 0", 0.001, 0.006, 0.006, 0.0, 0.0003, 0.0)}</link>'
    f'<link name="tip">{_inertial(0.2, "0 0 0.03", 0.0005, 0.0004, 0.0003, 0.0, 0.0, 0.0001)}</link>'
    f'<link name="wheel">{_inertial(0.3, "0 0 0", 0.002, 0.002, 0.003, 0.0, 0.0, 0.0)}</link>'
    '<joint name="slide" type="prismatic"><parent link="body"/><child link="carriage"/>'
    '<origin xyz="0.1 0 0.05" rpy="0.1 0.2 0.3"/><axis xyz="1 0 0"/><limit lower="-5" upper="5" effort="100" velocity="100"/>'
    '<dynamics damping="0.3"/></joint>'
    '<joint name="swing" type="continuous"><parent link="carriage"/><child link="arm"/>'
    '<origin xyz="0 0.05 0" rpy="0 0.5 0"/><axis xyz="0 0 1"/><dynamics damping="0.02" rotor_inertia="0.01"/></joint>'
    '<joint name="lift" type="prismatic"><parent link="arm"/><child link="tip"/>'
    '<origin xyz="0.2 0 0"/><axis xyz="0 0.6 0.8"/><limit lower="-5" upper="5" effort="100" velocity="100"/>'
    '</joint>'
    '<joint name="wheel_spin" type="continuous"><parent link="body"/><child link="wheel"/>'
    '<origin xyz="-0.1 0.1 0" rpy="1.5707963 0 0"/><axis xyz="0 0 1"/><dynamics damping="0.05"/></joint>'
    '</robot>')


def _robots():
    return [("arm6", (DATA / "arm6.urdf").read_text(), "fixed"),
            ("quadruped", (DATA / "quadruped.urdf").read_text(), "floating"),
            ("chain60", make_chain_urdf(60), "fixed"),
            ("slider", SLIDER, "floating")]


@pytest.fixture(scope="module")
def oracle_module():
    return pytest.importorskip("pinocchio_oracle")


def _link_urdf(name: str, joints: str, links: str) -> str:
    return f'<robot name="{name}"><link name="base"/>{links}{joints}</robot>'


def _point_link(name: str, mass: float, com_z: float, i_com: float) -> str:
    return (f'<link name="{name}"><inertial><origin xyz="0 0 {com_z}"/><mass value="{mass}"/>'
            f'<inertia ixx="{i_com}" iyy="{i_com}" izz="{i_com}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def _revolute(name: str, parent: str, child: str, axis: str, z: float = 0.0, extra: str = "") -> str:
    return (f'<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 {z}"/><axis xyz="{axis}"/>{extra}</joint>')


# ------------------------------------------------------------------ against Pinocchio
@pytest.mark.parametrize("name,xml,base", _robots(), ids=[r[0] for r in _robots()])
def test_mass_matrix_bias_and_forward_dynamics_match_pinocchio(name, xml, base, oracle_module):
    """Reference: Pinocchio 4 (crba, nonLinearEffects, aba) on the same URDF, at three random states per
    env, converted to our coordinates (tests/pinocchio_oracle.py). Both evaluate the same closed
    expressions, so they agree to rounding: 1e-9 relative to the largest entry. One step's velocity change
    is the forward dynamics with the joint damping implicit, ``(M + dt D) du/dt = tau - h - D u`` (a short
    step, so that no joint reaches its velocity limit, which would clamp it; Coulomb joint friction set to 0,
    since its rows would hold the joints)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    dt = 1e-5
    xml = re.sub(r'friction="[^"]*"', 'friction="0"', xml)  # (joint friction rows: their own test below)
    world = tt.World(dt=dt, n_envs=3)
    system = world.add_articulated_system(xml, base=base)
    oracle = oracle_module.PinocchioOracle(xml, system)
    states = [oracle_module.random_state(system, rng) for _ in range(3)]
    tau = rng.uniform(-2.0, 2.0, (3, system.get_dof()))
    if system.floating:
        tau[:, :6] = rng.uniform(-20.0, 20.0, (3, 6))  # a wrench on the base (world force, torque)
    system.set_generalized_coordinate(np.stack([q for q, _u in states]))
    system.set_generalized_velocity(np.stack([u for _q, u in states]))
    system.set_generalized_force(tau)
    damping = np.array([0.0] * (6 if system.floating else 0) + [j.damping for j in system.model.joints])
    for env, (q, u) in enumerate(states):
        m_ref, h_ref = oracle.mass_matrix(q), oracle.nonlinearities(q, u)
        np.testing.assert_allclose(system.get_mass_matrix(env), m_ref, rtol=0, atol=1e-9 * np.abs(m_ref).max())
        np.testing.assert_allclose(system.get_nonlinearities(env), h_ref, rtol=0, atol=1e-9 * np.abs(h_ref).max())
    world.step(1)
    u1 = system.get_generalized_velocity()
    for env, (q, u) in enumerate(states):
        m_ref, h_ref = oracle.mass_matrix(q), oracle.nonlinearities(q, u)
        expected = np.linalg.solve(m_ref + dt * np.diag(damping), tau[env] - h_ref - damping * u)
        if not damping.any():
            np.testing.assert_allclose(expected, oracle.forward_dynamics(q, u, tau[env]), rtol=1e-9,
                                       atol=1e-9 * np.abs(expected).max())
        np.testing.assert_allclose((u1[env] - u) / dt, expected, rtol=0, atol=1e-8 * np.abs(expected).max())


def test_a_tree_without_rows_takes_the_articulated_body_algorithm():
    """Reference: the dense solve ``u' = u + (M + dt (K_d + D) + dt^2 K_p)^-1 dt (tau - h - D u)`` with the
    implicit PD drive and damping (``solver_math.md``, "Implicit PD") from ``get_mass_matrix`` and
    ``get_nonlinearities``. A tree that no contact, joint limit, joint friction or pin acts on skips its mass
    matrix and factor and takes the articulated-body algorithm, O(links); in exact arithmetic it is the same
    solve, so they agree to rounding (1e-12 of the velocity change). Here a 12-link chain (fixed base) and the
    quadruped (floating base, drives, damping, rotor inertias; joint friction off) in the air, each at a random
    state, one stepped on ground contact too: only that one builds its mass matrix."""
    dt, kp, kd = 1e-3, 300.0, 20.0
    rng = np.random.default_rng(5)
    world = tt.World(dt=dt, n_envs=2)
    world.add_ground()
    chain = world.add_articulated_system(make_chain_urdf(12), base="fixed", position=(3.0, 0.0, 3.0))
    xml = re.sub(r'friction="[^"]*"', 'friction="0"', (DATA / "quadruped.urdf").read_text())
    quad = world.add_articulated_system(xml, position=(0.0, 0.0, 0.45))
    q = quad.get_generalized_coordinate(0)
    q[3:7] = np.array([0.9, 0.1, -0.2, 0.3]) / np.linalg.norm([0.9, 0.1, -0.2, 0.3])
    q[7:] = STAND
    qs = np.stack([q, q])
    qs[0, 2] = 2.0  # env 0 in the air, env 1 with its feet on the ground
    quad.set_generalized_coordinate(qs)
    chain.set_generalized_coordinate(rng.uniform(-0.5, 0.5, (2, 12)))
    chain.set_generalized_velocity(rng.normal(0.0, 1.0, (2, 12)))
    quad.set_generalized_velocity(rng.normal(0.0, 0.2, (2, 18)))
    gains = (np.r_[np.zeros(6), np.full(12, kp)], np.r_[np.zeros(6), np.full(12, kd)])
    quad.set_pd_gains(*gains)
    q_target = q.copy()
    q_target[7:] += rng.uniform(-0.03, 0.03, 12)  # (drives well within their 33.5 N m effort limit)
    quad.set_pd_target(q_target, np.zeros(18))
    damping = np.r_[np.zeros(6), [j.damping for j in quad.model.joints]]
    drives = {id(chain): (np.zeros(12), np.zeros(12), np.zeros(12)), id(quad): (*gains, damping)}
    expected = {}
    for system in (chain, quad):
        kps, kds, dmp = drives[id(system)]
        u = system.get_generalized_velocity(0)
        q0 = system.get_generalized_coordinate(0)
        m, h = system.get_mass_matrix(0), system.get_nonlinearities(0)
        tau = np.zeros_like(u)
        if system is quad:
            tau[6:] = kp * (q_target[7:] - q0[7:] - dt * u[6:]) - kd * u[6:]
        m_tilde = m + np.diag(dt * (kds + dmp) + dt * dt * kps)
        expected[id(system)] = (u, np.linalg.solve(m_tilde, dt * (tau - h - dmp * u)))
    world.step(1)
    factored = world._scratch.block("scratch_i", "tree_step", "factored")[:, :, 0]
    assert factored.tolist() == [[0, 0], [0, 1]]
    for system in (chain, quad):
        u, du = expected[id(system)]
        np.testing.assert_allclose(system.get_generalized_velocity(0) - u, du, rtol=0,
                                   atol=1e-12 * np.abs(du).max())


def test_link_frames_match_pinocchio(oracle_module):
    """Reference: Pinocchio's frame placements and LOCAL_WORLD_ALIGNED frame velocities of every link of
    the floating quadruped at a random state, to 1e-12 m and 1e-12 m/s relative."""
    pin = oracle_module.pin
    xml = (DATA / "quadruped.urdf").read_text()
    world = tt.World(n_envs=2)
    system = world.add_articulated_system(xml)
    oracle = oracle_module.PinocchioOracle(xml, system)
    q, u = oracle_module.random_state(system, np.random.default_rng(5))
    system.set_generalized_coordinate(q, env=1)
    system.set_generalized_velocity(u, env=1)
    model, data = oracle.model, oracle.data
    qp, vp = oracle.q_pin(q), oracle.v_pin(q, u)
    pin.forwardKinematics(model, data, qp, vp)
    pin.updateFramePlacements(model, data)
    for link in system.get_body_names():
        fid = model.getFrameId(link)
        np.testing.assert_allclose(system.get_frame_position(link, env=1), data.oMf[fid].translation, atol=1e-12)
        np.testing.assert_allclose(system.get_frame_orientation(link, env=1), data.oMf[fid].rotation, atol=1e-12)
        vel = pin.getFrameVelocity(model, data, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        v, w = system.get_frame_velocity(link, env=1)
        np.testing.assert_allclose(v, vel.linear, atol=1e-12 * max(1.0, np.abs(vel.linear).max()))
        np.testing.assert_allclose(w, vel.angular, atol=1e-12 * max(1.0, np.abs(vel.angular).max()))


# ------------------------------------------------------------------ closed forms
def _pendulum(n_envs=2, dt=1e-3, length=0.5, mass=1.0, i_com=4e-5, gravity=(0.0, 0.0, -G)):
    xml = _link_urdf("pendulum", _revolute("hinge", "base", "bob", "0 1 0"),
                     _point_link("bob", mass, -length, i_com))
    world = tt.World(dt=dt, n_envs=n_envs, gravity=gravity)
    return world, world.add_articulated_system(xml, base="fixed", position=(0.0, 0.0, 1.0))


def test_pendulum_small_angle_period():
    """Reference: T = 2 pi sqrt(I_pivot / (m g l)) (1 + theta0^2 / 16) for a compound pendulum, I_pivot =
    I_com + m l^2. Semi-implicit Euler shifts the frequency by (w dt)^2 / 24 = 8e-7 relative; zero crossings
    interpolated between steps: 2e-5 relative over three periods."""
    length, mass, i_com, theta0 = 0.5, 1.0, 4e-5, 0.02
    world, pend = _pendulum(length=length, mass=mass, i_com=i_com)
    pend.set_generalized_coordinate([theta0])
    period = 2 * math.pi * math.sqrt((i_com + mass * length ** 2) / (mass * G * length)) * (1 + theta0 ** 2 / 16)
    angles = []
    for _ in range(int(3.2 * period / world.dt)):
        world.step(1)
        angles.append(pend.get_generalized_coordinate(0)[0])
    a = np.array(angles)
    t = (np.arange(len(a)) + 1) * world.dt
    k = np.nonzero((a[:-1] > 0) & (a[1:] <= 0))[0]  # downward crossings, once per period
    crossings = t[k] + (t[k + 1] - t[k]) * a[k] / (a[k] - a[k + 1])
    assert len(crossings) >= 3
    assert np.diff(crossings).mean() == pytest.approx(period, rel=2e-5)


def _double_pendulum(dt):
    links = _point_link("l1", 1.0, -0.5, 1e-3) + _point_link("l2", 1.0, -0.5, 1e-3)
    joints = _revolute("j1", "base", "l1", "0 1 0") + _revolute("j2", "l1", "l2", "0 1 0", z=-0.5)
    world = tt.World(dt=dt, n_envs=2)
    return world, world.add_articulated_system(_link_urdf("double", joints, links), base="fixed")


def _energy(system, env=0) -> float:
    u = system.get_generalized_velocity(env)
    kinetic = 0.5 * u @ system.get_mass_matrix(env) @ u
    potential = 0.0
    for link, com in (("l1", -0.5), ("l2", -0.5)):
        p = system.get_frame_position(link, env) + system.get_frame_orientation(link, env) @ [0.0, 0.0, com]
        potential += 1.0 * G * p[2]
    return kinetic + potential


def test_double_pendulum_energy_error_is_the_integrators_first_order_error():
    """Reference: energy conservation of a frictionless double pendulum released horizontal (chaotic
    motion), 10 s. Semi-implicit Euler with a configuration-dependent mass matrix is a first-order method:
    its energy error is O(dt) (measured 0.46, 0.19 and 0.10 J at dt = 1e-3, 5e-4 and 2.5e-4). An error in the
    dynamics would leave an energy error that does not shrink with dt; so the error must halve when dt
    halves (ratios 1.5 to 3), and stay below 5 % of the energy released by a fall of both links (14.7 J) at
    dt = 1e-3."""
    worst = []
    for dt in (1e-3, 5e-4, 2.5e-4):
        world, system = _double_pendulum(dt)
        system.set_generalized_coordinate([math.pi / 2, 0.0])
        e0 = _energy(system)
        errors = []
        for _ in range(100):
            world.step(int(round(0.1 / dt)))
            errors.append(abs(_energy(system) - e0))
        worst.append(max(errors))
    scale = 1.0 * G * 0.5 + 1.0 * G * 1.0
    assert worst[0] < 0.05 * scale
    assert 1.5 < worst[0] / worst[1] < 3.0 and 1.5 < worst[1] / worst[2] < 3.0


def _pd_link(dt, kp, kd):
    """A 1 kg point mass at 0.1 m on a vertical hinge (gravity does no work): I = 0.01 kg m^2."""
    xml = _link_urdf("pd", _revolute("hinge", "base", "arm", "0 0 1"),
                     '<link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
                     '<inertia ixx="1e-9" iyy="1e-9" izz="1e-9" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    world = tt.World(dt=dt, n_envs=2)
    system = world.add_articulated_system(xml, base="fixed")
    system.set_pd_gains([kp], [kd])
    system.set_pd_target([0.1], [0.0])
    return world, system


@pytest.mark.parametrize("zeta", [0.2, 2.0])
def test_pd_step_response_matches_the_second_order_solution(zeta):
    """Reference: x'' + 2 zeta w x' + w^2 x = w^2 x_t with w = sqrt(kp / I) = 100 rad/s, under- and
    overdamped, from rest at 0 towards x_t = 0.1 rad, dt = 1e-4. The implicit drive is backward Euler in the
    velocity: each mode c e^(lambda t) of the solution gains a relative error lambda^2 dt^2 / 2 per step, so
    its error is |c| |lambda|^2 (dt / 2) t e^(Re lambda t) <= |c| |lambda|^2 dt / (2 e |Re lambda|); the sum
    over the modes, with 20 % for the higher-order terms (|lambda| dt <= 0.04), bounds the error (measured:
    80 % and 50 % of it)."""
    inertia, kp, dt = 0.01 + 1e-9, 100.0, 1e-4
    w = math.sqrt(kp / inertia)
    kd = 2 * zeta * math.sqrt(kp * inertia)
    world, system = _pd_link(dt, kp, kd)
    xs = []
    for _ in range(1000):
        world.step(1)
        xs.append(system.get_generalized_coordinate(0)[0])
    t = (np.arange(1000) + 1) * dt
    if zeta < 1:
        wd = w * math.sqrt(1 - zeta ** 2)
        exact = 0.1 * (1 - np.exp(-zeta * w * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta ** 2) * np.sin(wd * t)))
        modes = [(0.1 / math.sqrt(1 - zeta ** 2), w, zeta * w)]  # (|c|, |lambda|, |Re lambda|)
    else:
        r1, r2 = -w * (zeta - math.sqrt(zeta ** 2 - 1)), -w * (zeta + math.sqrt(zeta ** 2 - 1))
        exact = 0.1 * (1 + (r2 * np.exp(r1 * t) - r1 * np.exp(r2 * t)) / (r1 - r2))
        modes = [(abs(0.1 * r2 / (r1 - r2)), -r1, -r1), (abs(0.1 * r1 / (r1 - r2)), -r2, -r2)]
    bound = 1.2 * sum(c * lam ** 2 * dt / (2 * math.e * re) for c, lam, re in modes)
    assert np.abs(np.array(xs) - exact).max() < bound
    # what the drive applied in the last step: kp (x_t - x) - kd x' at the end of the step
    x, xd = system.get_generalized_coordinate(0)[0], system.get_generalized_velocity(0)[0]
    assert system.get_generalized_force(0)[0] == pytest.approx(kp * (0.1 - x) - kd * xd, rel=1e-9, abs=1e-12)


def test_stiff_pd_is_stable_at_a_large_step():
    """Reference: the issue's stiffness, kp = 1e4 N m/rad and kd = 1e2 N m s/rad on a 1 kg link
    (I = 0.01 kg m^2, w dt = 1 at dt = 1e-3, where an explicit drive diverges): overdamped (zeta = 5), so the
    joint creeps to its target without overshoot, within 1e-6 rad of it after 0.5 s (slow pole
    -kp / kd = -100 /s gives e^-50)."""
    world, system = _pd_link(1e-3, 1e4, 1e2)
    xs = []
    for _ in range(500):
        world.step(1)
        xs.append(system.get_generalized_coordinate(0)[0])
    xs = np.array(xs)
    assert np.all(np.isfinite(xs))
    assert xs.max() <= 0.1 + 1e-12
    assert np.all(np.diff(xs) >= -1e-15)
    assert abs(xs[-1] - 0.1) < 1e-6


def test_velocity_limit_clamps_the_joint_speed():
    """Reference: the URDF's velocity limit, 2 rad/s: a hinge pushed by 10 N m (which alone would reach
    10 rad/s in 0.01 s) turns at exactly the limit."""
    xml = _link_urdf("vlim", '<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>'
                             '<axis xyz="0 0 1"/><limit lower="-100" upper="100" velocity="2" effort="50"/></joint>',
                     _point_link("arm", 1.0, 0.0, 0.01))
    world = tt.World(dt=1e-3, n_envs=2)
    system = world.add_articulated_system(xml, base="fixed")
    system.set_generalized_force([10.0])
    world.step(50)
    np.testing.assert_array_equal(system.get_generalized_velocity()[:, 0], [2.0, 2.0])
    assert system.get_generalized_coordinate(0)[0] < 50 * 1e-3 * 2.0 + 1e-12


# ------------------------------------------------------------------ batching, checkpoints
def _quadruped_world(n_envs):
    world = tt.World(dt=1e-3, n_envs=n_envs)
    system = world.add_articulated_system((DATA / "quadruped.urdf").read_text(), position=(0.0, 0.0, 0.5))
    return world, system


def test_batch_invariance_and_checkpoint_replay():
    """Reference: an env's result does not depend on the envs beside it, and a restored checkpoint replays
    bit for bit: a falling quadruped under PD with random joint states, env 0 of a 2-env world against
    env 3 of a 4-env world."""
    rng = np.random.default_rng(3)
    q = np.zeros(19)
    q[:3], q[3] = (0.0, 0.0, 0.5), 1.0
    q[7:] = np.array(STAND) + rng.uniform(-0.3, 0.3, 12)
    u = rng.uniform(-1.0, 1.0, 18)
    kp = np.r_[np.zeros(6), np.full(12, 50.0)]
    kd = np.r_[np.zeros(6), np.full(12, 1.0)]
    results = []
    for n, env in ((2, 0), (4, 3)):
        world, system = _quadruped_world(n)
        system.set_generalized_coordinate(q, env=env)
        system.set_generalized_velocity(u, env=env)
        system.set_pd_gains(kp, kd)
        system.set_pd_target(np.r_[q[:7], np.zeros(12)], np.zeros(18))
        world.step(100)
        results.append((system.get_generalized_coordinate(env), system.get_generalized_velocity(env)))
        snap = world.checkpoint()
        world.step(50)
        first = system.get_generalized_coordinate()
        world.restore(snap)
        world.step(50)
        np.testing.assert_array_equal(system.get_generalized_coordinate(), first)
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])



def test_env_loop_spread_gives_every_thread_envs_and_changes_no_result():
    """Reference: the chunking rule of Taichi's cpu loops (at least 512 iterations per chunk), and batch
    invariance. The step's env loop takes 512 / k iterations per env for chunks of k consecutive envs, about
    four chunks per thread; one per env on a GPU, in a serial loop and once the envs fill the chunks. Env 5
    of a 9-env world (256 iterations per env) steps exactly as a 1-env world (the serial loop)."""
    from taichi_terra.kernels.step import env_spread

    assert env_spread(64, "cpu", 2, False) == 64  # chunks of 8 envs: 8 chunks
    assert env_spread(1024, "cpu", 2, False) == 4  # chunks of 128 envs
    assert env_spread(4096, "cpu", 2, False) == 1
    assert env_spread(9, "cpu", 2, False) == 256  # chunks of 2 envs
    assert env_spread(1, "cpu", 2, True) == 1 and env_spread(64, "cuda", 2, False) == 1
    rng = np.random.default_rng(5)
    q = np.zeros(19)
    q[:3], q[3] = (0.0, 0.0, 0.5), 1.0
    q[7:] = np.array(STAND) + rng.uniform(-0.3, 0.3, 12)
    u = rng.uniform(-1.0, 1.0, 18)
    results = []
    for n, env in ((1, 0), (9, 5)):
        world, system = _quadruped_world(n)
        world.add_ground()
        system.set_generalized_coordinate(q, env=env)
        system.set_generalized_velocity(u, env=env)
        system.set_pd_gains(np.r_[np.zeros(6), np.full(12, 50.0)], np.r_[np.zeros(6), np.full(12, 1.0)])
        system.set_pd_target(np.r_[q[:7], np.zeros(12)], np.zeros(18))
        world.step(300)
        results.append(np.r_[system.get_generalized_coordinate(env), system.get_generalized_velocity(env)])
    assert len(world.get_contacts(5)) > 0  # (it landed: contacts and rows in the compared steps)
    np.testing.assert_array_equal(results[0], results[1])

def test_a_free_falling_floating_base_follows_the_parabola():
    """Reference: with no drive the quadruped's centre of mass falls as a point, z = z0 - g t^2 / 2 (the
    semi-implicit Euler sum adds g dt t / 2), and its momentum about the centre of mass stays zero."""
    world, system = _quadruped_world(2)
    q = system.get_generalized_coordinate(0)
    q[7:] = STAND  # (within every joint's limits: no limit row acts)
    system.set_generalized_coordinate(q)
    masses = sum(link.mass for link in system.model.links)

    def com(env=0):
        total = np.zeros(3)
        for link in system.model.links:
            total += link.mass * (system.get_frame_position(link.name, env)
                                  + system.get_frame_orientation(link.name, env) @ link.com)
        return total / masses

    c0 = com()
    world.step(200)
    t = 0.2
    expected = c0[2] - 0.5 * G * t * (t + world.dt)
    assert com()[2] == pytest.approx(expected, abs=1e-9)
    np.testing.assert_allclose(com()[:2], c0[:2], atol=1e-12)


def test_a_one_link_urdf_moves_exactly_as_the_free_box():
    """Reference: the free body, of which a one-link tree on a floating joint is the special case. A box
    thrown spinning onto the ground, once by ``add_box`` and once as a one-link URDF of the same mass,
    inertia and shape (centre of mass at the link origin), agrees to 1e-12 through flight, impacts,
    sliding and rest; in env 1 a constant force and torque push both (``set_external_force`` /
    ``set_external_torque`` on the box, the base entries of ``set_generalized_force`` on the system). The
    tree's contact block is off: it solves the box's sticking corners together, which free bodies do not, so
    the sweeps would end elsewhere within their tolerance (1.3e-7 apart over these 0.6 s)."""
    m, (sx, sy, sz) = 2.0, (0.4, 0.3, 0.2)
    inertia = [m / 12 * (sy * sy + sz * sz), m / 12 * (sx * sx + sz * sz), m / 12 * (sx * sx + sy * sy)]
    urdf = (f'<robot name="box"><link name="box"><inertial><mass value="{m}"/><inertia ixx="{inertia[0]!r}" '
            f'iyy="{inertia[1]!r}" izz="{inertia[2]!r}" ixy="0" ixz="0" iyz="0"/></inertial><collision>'
            f'<geometry><box size="{sx} {sy} {sz}"/></geometry></collision></link></robot>')
    box_world, link_world = tt.World(dt=1e-3, n_envs=2), tt.World(dt=1e-3, n_envs=2)
    box_world.add_ground()
    link_world.add_ground()
    box = box_world.add_box(sx, sy, sz, m)
    system = link_world.add_articulated_system(urdf)
    link_world.solver.contact_block = False
    quat = np.array([0.9, 0.2, 0.3, 0.1]) / np.linalg.norm([0.9, 0.2, 0.3, 0.1])
    pos, v, w = np.array([0.0, 0.0, 0.5]), np.array([1.0, 0.5, 0.0]), np.array([3.0, -2.0, 5.0])
    force, torque = np.array([2.0, -1.0, 3.0]), np.array([0.1, 0.2, -0.3])
    for env in range(2):
        box.set_position(pos, env)
        box.set_orientation(quat, env)
        box.set_linear_velocity(v, env)
        box.set_angular_velocity((1 + env) * w, env)
        system.set_generalized_coordinate(np.r_[pos, quat], env)
        system.set_generalized_velocity(np.r_[v, (1 + env) * w], env)
    box.set_external_force(force, 1)
    box.set_external_torque(torque, 1)
    system.set_generalized_force(np.r_[force, torque], 1)
    worst = 0.0
    for _ in range(12):
        box_world.step(50)
        link_world.step(50)
        q_box = np.c_[box.get_position(), box.get_orientation()]
        u_box = np.c_[box.get_linear_velocity(), box.get_angular_velocity()]
        worst = max(worst, np.abs(q_box - system.get_generalized_coordinate()).max(),
                    np.abs(u_box - system.get_generalized_velocity()).max())
    assert worst < 1e-12
    assert box.get_position(0)[2] == pytest.approx(sz / 2, abs=1e-6)  # it landed and came to rest on a face
    assert np.abs(box.get_angular_velocity(0)).max() < 1e-9


def test_a_link_with_two_shapes_over_one_soil_sample_loads_it_once():
    """Reference: the free body on the same soil bed. A one-link URDF whose link carries the same box twice
    (two collision elements) settles onto a soil bed exactly as ``add_box`` does: where both shapes lie
    over a bed sample, the soil there is loaded once, through the lower shape, not once per shape (which
    would carry the box on twice the area and halve its sinkage)."""
    m, (sx, sy, sz) = 2.0, (0.3, 0.3, 0.1)
    inertia = [m / 12 * (sy * sy + sz * sz), m / 12 * (sx * sx + sz * sz), m / 12 * (sx * sx + sy * sy)]
    box_xml = f'<collision><geometry><box size="{sx} {sy} {sz}"/></geometry></collision>'
    urdf = (f'<robot name="box"><link name="box"><inertial><mass value="{m}"/><inertia ixx="{inertia[0]!r}" '
            f'iyy="{inertia[1]!r}" izz="{inertia[2]!r}" ixy="0" ixz="0" iyz="0"/></inertial>{box_xml}{box_xml}'
            '</link></robot>')
    n = 21
    mat = tt.SoilMaterial(bekker_kphi=2e5, sinkage_exponent=1.0, damping=1000.0)
    box_world, link_world = tt.World(dt=1e-3, n_envs=2), tt.World(dt=1e-3, n_envs=2)
    beds = [w.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n), mat) for w in (box_world, link_world)]
    box = box_world.add_box(sx, sy, sz, m)
    system = link_world.add_articulated_system(urdf)
    start = np.array([0.013, -0.021, sz / 2 + 0.002])  # (off the grid lines: cells cut by the outline)
    box.set_position(start)
    system.set_generalized_coordinate(np.r_[start, 1.0, 0.0, 0.0, 0.0])
    worst = 0.0
    for _ in range(6):
        box_world.step(100)
        link_world.step(100)
        q_box = np.c_[box.get_position(), box.get_orientation()]
        worst = max(worst, np.abs(q_box - system.get_generalized_coordinate()).max())
    assert worst < 1e-12
    sink = [bed.get_soil_state(0)["sinkage"].max() for bed in beds]
    assert sink[1] == pytest.approx(sink[0], rel=0, abs=1e-12) and sink[0] > 1e-3  # (m g / (kphi A) = 1.1 mm)


# ------------------------------------------------------------------ API and bad input
def test_api_names_indices_and_dimensions():
    """The description calls follow the URDF: names in tree order, velocity indices after the base's six."""
    world, system = _quadruped_world(2)
    assert system.get_dof() == 18 and system.get_generalized_coordinate_dim() == 19
    names = system.get_joint_names()
    assert len(names) == 12 and len(system.get_body_names()) == 13
    assert [system.get_generalized_velocity_index(n) for n in names] == list(range(6, 18))
    q = system.get_generalized_coordinate(0)
    np.testing.assert_array_equal(q[:7], [0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0])
    assert system.total_mass == pytest.approx(30.0)
    assert world.articulated_systems == [system] and world.pins == []


@pytest.mark.parametrize("call,error,match", [
    (lambda s: s.set_generalized_coordinate(np.zeros(18)), ValueError, r"q must have shape \(19,\)"),
    (lambda s: s.set_generalized_coordinate(np.r_[np.zeros(7), np.full(12, np.nan)]), ValueError, "finite"),
    (lambda s: s.set_generalized_coordinate(np.zeros(19)), ValueError, "quaternion"),
    (lambda s: s.set_generalized_velocity(np.zeros((3, 18))), ValueError, r"u must have shape"),
    (lambda s: s.set_pd_gains(-np.ones(18), np.zeros(18)), ValueError, "kp must be >= 0"),
    (lambda s: s.set_pd_gains(np.ones(18), np.zeros(18)), ValueError, "floating base has no drive"),
    (lambda s: s.set_pd_target(np.zeros(19), np.ones(18)), ValueError, "floating base has no drive"),
    (lambda s: s.get_frame_position("nope"), ValueError, "link must be one of"),
    (lambda s: s.get_generalized_velocity_index("nope"), ValueError, "joint must be one of"),
    (lambda s: s.get_mass_matrix(env=5), ValueError, "env"),
    (lambda s: s.set_held_drives(np.full(12, 0.5)), ValueError, r"held: every entry must be -1, 0 or \+1"),
])
def test_bad_calls_raise_and_change_nothing(call, error, match):
    world, system = _quadruped_world(2)
    before = (system.get_generalized_coordinate(), system.get_generalized_velocity(), system.get_pd_gains())
    with pytest.raises(error, match=match):
        call(system)
    after = (system.get_generalized_coordinate(), system.get_generalized_velocity(), system.get_pd_gains())
    for a, b in zip(before[:2] + before[2], after[:2] + after[2]):
        np.testing.assert_array_equal(a, b)


def test_held_drives_need_an_effort_limit_and_apply_before_and_after_the_build():
    """A drive can only be held at an effort limit it has; a held flag set before the build is in the state
    the first step reads, and one set after it replaces the recorded one."""
    import re
    world = tt.World(n_envs=2)
    text = re.sub(r'effort="[^"]*"', "", (DATA / "arm6.urdf").read_text(), count=1)  # (its first joint: none)
    system = world.add_articulated_system(text, base="fixed")
    names = system.get_joint_names()
    with pytest.raises(ValueError, match=f"held: joints without an effort limit \\({names[0]}\\)"):
        system.set_held_drives(np.r_[1.0, np.zeros(len(names) - 1)])
    system.set_held_drives(np.r_[0.0, -1.0, np.zeros(len(names) - 2)], env=1)
    world.build()
    np.testing.assert_array_equal(system.get_held_drives(1), np.r_[0.0, -1.0, np.zeros(len(names) - 2)])
    assert not system.get_held_drives(0).any()
    system.set_held_drives(np.zeros(len(names)), env=1)
    assert not system.get_held_drives().any()


def test_bad_urdf_or_placement_adds_nothing():
    world = tt.World(n_envs=2)
    with pytest.raises(URDFError, match="joint 'j'"):
        world.add_articulated_system('<robot name="r"><link name="a"/><joint name="j" type="revolute">'
                                     '<parent link="a"/><child link="missing"/></joint></robot>')
    with pytest.raises(URDFError, match="track 'belt': a track needs at least one <drive>"):
        world.add_articulated_system((DATA / "arm6.urdf").read_text().replace(
            "</robot>", '<track name="belt" link="base_link" width="0.1"><axis xyz="0 1 0"/>'
                        '<wheel xyz="0 0 0" radius="0.1"/><wheel xyz="0.5 0 0" radius="0.1"/></track></robot>'))
    with pytest.raises(ValueError, match="base must be"):
        world.add_articulated_system((DATA / "arm6.urdf").read_text(), base="welded")
    with pytest.raises(ValueError, match="position must be"):
        world.add_articulated_system((DATA / "arm6.urdf").read_text(), position=(0.0, 1.0))
    assert world._systems == []
    world.add_articulated_system((DATA / "arm6.urdf").read_text(), base="fixed")
    world.step(1)
    with pytest.raises(RuntimeError):
        world.add_articulated_system((DATA / "arm6.urdf").read_text(), base="fixed")
    assert len(world._systems) == 1


# ------------------------------------------------------------------ contacts on links
def _standing_quadruped(ground: str):
    """The 30 kg quadruped under PD (kp 300 N m/rad, kd 20 N m s/rad) at its standing pose, dropped 1 cm onto
    flat ground, a bumpy height map or a soil bed."""
    world = tt.World(dt=1e-3, n_envs=2)
    bed = None
    if ground == "plane":
        world.add_ground()
    elif ground == "heightmap":
        n = 41
        x = np.linspace(-1.0, 1.0, n)
        heights = 0.01 * np.sin(3.0 * x)[None, :] * np.cos(2.0 * x)[:, None]
        world.add_heightmap(n, n, 2.0, 2.0, 0.0, 0.0, heights.ravel())
    else:
        n = 41
        mat = tt.SoilMaterial(bekker_kphi=2e7, sinkage_exponent=1.0, damping=2e4)
        bed = world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n), mat)
    system = world.add_articulated_system((DATA / "quadruped.urdf").read_text(), position=(0.0, 0.0, 0.45))
    q = system.get_generalized_coordinate(0)
    q[7:] = STAND
    system.set_generalized_coordinate(q)
    system.set_pd_gains(np.r_[np.zeros(6), np.full(12, 300.0)], np.r_[np.zeros(6), np.full(12, 20.0)])
    system.set_pd_target(q, np.zeros(18))
    return world, system, bed


@pytest.mark.parametrize("ground,settle,drift,balance", [("plane", 2000, 1e-5, 1e-6), ("heightmap", 2000, 1e-5, 1e-6),
                                                        ("soil", 5000, 1e-5, 1e-3)])
def test_quadruped_stands_under_pd_without_drift(ground, settle, drift, balance):
    """Reference: statics. After settling, the base moves less than 1e-5 m in the next 0.5 s, every contact
    is on a foot (reported with its link), and the contact forces carry the robot's weight m g = 294.3 N: to
    1e-6 on rigid ground; on the soil bed, which still creeps under its damping, to 1e-3. On the bed the feet
    sink about 3.6 cm, then the soil springs back to about 3.2 cm and the base settles in a slow, decaying
    wobble (it moves 9e-5 m between 2.5 and 3 s, 1.9e-5 m between 4 and 4.5 s, 4e-6 m between 5 and
    5.5 s): settled for 5 s."""
    world, system, bed = _standing_quadruped(ground)
    world.step(settle)
    before = system.get_generalized_coordinate(0)[:3]
    world.step(500)
    after = system.get_generalized_coordinate(0)[:3]
    assert np.abs(after - before).max() < drift
    contacts = world.get_contacts(0)
    assert len(contacts) > 0
    feet = {link for _system, link in contacts.link_b}
    assert feet == {"FL_shank", "FR_shank", "RL_shank", "RR_shank"}  # (the foot spheres merged into the shanks)
    weight = system.total_mass * G
    lift = contacts.impulses[:, 2].sum() / world.dt
    assert lift == pytest.approx(weight, rel=balance)
    if bed is not None:
        assert bed.get_soil_step_stats(0)["normal_force"] == pytest.approx(weight, rel=balance)
        assert bed.get_soil_state(0)["sinkage"].max() > 0.01  # the feet sank in: 3 cm at these loads


def test_sweeps_stop_on_settled_velocities_near_the_converged_solution():
    """Reference: the converged solution of the same step (tolerance 1e-14, 30,000 sweeps at most). While the
    quadruped settles on the bumpy map its four feet and twelve PD-held legs are redundant rows whose impulses
    keep drifting where nothing moves; the sweeps stop once the generalized velocities settle instead: when
    a sweep's largest velocity change c is within the tolerance and c rho / (1 - rho) is too, rho the ratio
    of the last two sweeps' changes (at most 0.75), so c <= tol / 3 where the changes shrink slowly. With a
    linear rate of convergence of at most 0.9, what is left is then at most 9 c <= 3 tolerances, and where
    the changes shrink fast (rho well below 0.75) about c rho / (1 - rho) <= 1 tolerance; so the generalized
    velocities are within 10 tolerances of the converged ones, in far fewer sweeps than the cap (the
    converged solves take thousands): fewer than 50. (Standing on a soil bed the feet converge at about 0.98
    a sweep, and the sweeps stop further away: docs/physics/solver.md.)"""
    world, system, _bed = _standing_quadruped("heightmap")
    tol = world.solver.tolerance
    done = 0
    for at in (100, 300, 600):
        world.step(at - done)
        done = at
        snap = world.checkpoint()
        world.step(1)
        u, sweeps = system.get_generalized_velocity(), world.get_solver_sweeps()
        world.restore(snap)
        world.solver.tolerance, world.solver.max_sweeps = 1e-14, 30000
        world.step(1)
        reference = system.get_generalized_velocity()
        world.restore(snap)
        world.solver.tolerance, world.solver.max_sweeps = tol, 100
        assert np.all(sweeps < 50)
        assert np.abs(u - reference).max() < 10 * tol


def test_quadruped_on_soil_never_takes_the_sweep_cap():
    """Reference: the converged solution of the same step (1e-12 m/s, 100,000 sweeps at most). Standing on the
    soil bed, the two loaded points under a foot can pass shear between them that the legs take up slowly:
    such steps used to take the 100-sweep cap (15 of 2,000) and end 5e-4 m/s from the converged velocities.
    From its 8th sweep (``LATE_SWEEP``) a step solves the feet's soil together in stages of stiffer anchors
    (``kernels/solver/soil_group.py``, "Slow steps"). Over 2 s no step reaches the cap (measured: 44 sweeps
    at most), and the slowest step ends nearer the converged velocities than the same step stopped before
    the stages: measured 2.2e-5 against 1.5e-4 m/s (its reference took 40,723 sweeps); asserted at most half."""
    from taichi_terra.kernels.solver.soil_group import LATE_SWEEP

    world, system, _bed = _standing_quadruped("soil")
    tol, cap = world.solver.tolerance, world.solver.max_sweeps
    start = world.checkpoint()
    sweeps = []
    for _ in range(2000):
        world.step(1)
        sweeps.append(int(world.get_solver_sweeps().max()))
    assert max(sweeps) < cap
    slowest = int(np.argmax(sweeps))
    assert sweeps[slowest] > LATE_SWEEP  # (the stages ran in it)
    world.restore(start)
    world.step(slowest)
    snap = world.checkpoint()
    u = {}
    for name, tolerance, most in (("own", tol, cap), ("before", tol, LATE_SWEEP - 1), ("reference", 1e-12, 100000)):
        world.restore(snap)
        world.solver.tolerance, world.solver.max_sweeps = tolerance, most
        world.step(1)
        u[name] = system.get_generalized_velocity()
    world.solver.tolerance, world.solver.max_sweeps = tol, cap
    own, before = (np.abs(u[k] - u["reference"]).max() for k in ("own", "before"))
    assert own <= 0.5 * before


def test_contact_block_reaches_the_row_by_row_solution_in_fewer_sweeps():
    """Reference: the converged solution of the same step swept row by row (``contact_block=False``,
    tolerance 1e-14, no sweep cap). Solving the four sticking feet together leaves the generalized velocities
    within 10 tolerances of it, as the row-by-row sweeps do (the same bound as above: the stop test is the
    same), while the quadruped settles on the bumpy map; over the same 200 steps it takes at most half the
    row-by-row sweeps (about 7 per step one by one, 2 to 3 with the block once the feet stick)."""
    world, system, _bed = _standing_quadruped("heightmap")
    tol = world.solver.tolerance
    world.step(100)
    start = world.checkpoint()
    sweeps = sweeps_with_and_without_block(world, start, 200)
    assert sweeps[True] <= 0.5 * sweeps[False]
    world.restore(start)
    for steps in (1, 150, 250):
        world.step(steps)
        u, reference = step_against_row_by_row(world, system)
        assert np.abs(u - reference).max() < 10 * tol


def test_contact_block_gives_way_where_a_slipping_foot_makes_it_cycle():
    """Reference: the converged row-by-row solution of the same step (tolerance 1e-13). In the walking scene
    a foot slips at 0.465 s while two others stick; solving the sticking two together in every sweep then
    cycled (after 200,000 sweeps a knee was still 1.6 rad/s off), since Coulomb friction is not a
    minimization. Once a sweep's net velocity change stops shrinking, the step goes on row by row, and the
    block's step converges to the same solution (to 1e-9) in about as many sweeps as the rows' own."""
    import types

    from scenes import quadruped_terrain as scene

    built = scene.build(types.SimpleNamespace(envs=2))
    world, robot = built.world, built.world._systems[0]
    period = round(scene.CONTROL_PERIOD / world.dt)
    for k in range(464):
        if k % period == 0:
            built.controller(world)
        world.step(1)
    snap = world.checkpoint()
    solved = {}
    for together in (False, True):
        world.restore(snap)
        world.solver.tolerance, world.solver.max_sweeps, world.solver.contact_block = 1e-13, 20000, together
        world.step(1)
        solved[together] = (robot.get_generalized_velocity(), world.get_solver_sweeps())
    assert np.all(solved[False][1] < 2000) and np.all(solved[True][1] < 2000)
    assert np.abs(solved[True][0] - solved[False][0]).max() < 1e-9


def _block_solved_both(world):
    """Both arm links touch the ground, both are block members and the block solved them together."""
    assert {link for _system, link in world.get_contacts(0).link_b} == {"l1", "l2"}
    assert world._scratch.block("scratch_i", "block_state", "count")[0, 0, 0] == 2
    assert world._scratch.block("scratch_i", "block_state", "solved")[0, 0, 0] == 3


def test_contact_block_solves_redundant_contacts_with_its_diagonal_raised():
    """Reference: the converged row-by-row solution of the same step (``contact_block=False``, 1e-14 m/s).
    A fixed-base arm of two hinged links about y lies with the sphere at each link's end on the ground, both
    sticking (friction 2): six contact rows on two dofs, so the block's 6 x 6 system of two sticking members
    has rank two (plus the 1e-9 regularization of each row) and its plain elimination is refused. It is
    solved again with its diagonal raised (``kernels/solver/active_set.py``) and used: the velocities it
    leaves are within 10 tolerances of the converged ones (the bound of the stop test, as for the quadruped),
    at the start of the drop and at rest, and the arm ends where the row-by-row sweeps leave it to within
    that bound times the time run."""
    sphere = '<collision><origin xyz="0.4 0 0"/><geometry><sphere radius="0.05"/></geometry></collision>'
    links = "".join(f'<link name="l{k}"><inertial><origin xyz="0.2 0 0"/><mass value="1"/><inertia ixx="1e-3" '
                    f'iyy="1e-2" izz="1e-2" ixy="0" ixz="0" iyz="0"/></inertial>{sphere}</link>' for k in (1, 2))
    joints = ('<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/></joint>'
              '<joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="0.4 0 0"/>'
              '<axis xyz="0 1 0"/></joint>')
    runs = []
    for together in (True, False):
        world = tt.World(dt=1e-3, n_envs=2)
        world.set_default_material(2.0, 0.0)  # (at 0.8 the outer sphere slides at the edge of its cone)
        world.add_ground()
        arm = world.add_articulated_system(_link_urdf("arm2", joints, links), base="fixed",
                                           position=(0.0, 0.0, 0.0499))
        world.solver.contact_block = together
        tol = world.solver.tolerance
        for steps in (1, 199):
            world.step(steps)
            if together:
                u, reference = step_against_row_by_row(world, arm, check=_block_solved_both)
                assert np.abs(u - reference).max() < 10 * tol
        runs.append(np.concatenate([arm.get_generalized_coordinate(), arm.get_generalized_velocity()], axis=1))
    np.testing.assert_allclose(runs[0], runs[1], rtol=0.0, atol=10 * tol * 200 * 1e-3)


def test_capsule_ends_inside_a_sphere_of_their_link_are_trimmed():
    """Reference: set geometry. Each shank capsule (r = 0.02 m, 0.25 m) ends at the centre of its 0.025 m foot
    sphere: it is shortened there by R - r = 5 mm, so that every point of the capsule as written lies in the
    trimmed capsule or in the sphere (the link's union of shapes is the same). Standing on the bumpy map, the
    feet then make the only contacts: before, each shank's end sat exactly one contact margin (5 mm) above
    the ground and took a speculative row beside its foot's that never carried load."""
    from taichi_terra.bodies.articulated import _trim_capsule

    rng = np.random.default_rng(3)
    axis = np.array([0.0, 0.6, 0.8])
    top, foot = np.array([0.1, 0.0, 0.0]), np.array([0.1, 0.15, 0.2])  # the segment's ends (0.25 m apart)
    centre, length = _trim_capsule(0.5 * (top + foot), axis, 0.02, 0.25, foot, 0.025)
    assert length == pytest.approx(0.245, abs=1e-15)
    np.testing.assert_allclose(centre, 0.5 * (top + foot - 0.005 * axis), atol=1e-15)
    s = rng.uniform(0.0, 1.0, 20000)
    offsets = rng.normal(size=(20000, 3))
    offsets *= (0.02 * rng.uniform(0.0, 1.0, 20000) ** (1 / 3) / np.linalg.norm(offsets, axis=1))[:, None]
    points = top + s[:, None] * (foot - top) + offsets  # points of the capsule as written
    t = np.clip((points - (centre - 0.5 * length * axis)) @ axis, 0.0, length)
    in_trimmed = np.linalg.norm(points - (centre - 0.5 * length * axis) - t[:, None] * axis, axis=1) <= 0.02 + 1e-12
    in_sphere = np.linalg.norm(points - foot, axis=1) <= 0.025 + 1e-12
    assert np.all(in_trimmed | in_sphere) and not np.all(in_trimmed)
    # left as written: a sphere 3 cm beyond the end (the end is outside it); one holding the whole segment
    for sphere_centre, radius in ((foot + 0.03 * axis, 0.025), (0.5 * (top + foot), 0.5)):
        c2, l2 = _trim_capsule(0.5 * (top + foot), axis, 0.02, 0.25, sphere_centre, radius)
        assert l2 == 0.25 and np.array_equal(c2, 0.5 * (top + foot))

    world, system, _bed = _standing_quadruped("heightmap")
    spheres = [b for b, (_link, shape, _p, _r) in enumerate(system.collision_bodies())
               if shape.type == tt.ShapeType.SPHERE]
    world.step(300)
    contacts = world.get_contacts(0)
    assert len(contacts) == 4 and sorted(contacts.body_b) == spheres


def test_step_matrix_inverse_matches_numpy():
    """Reference: the definition, M~^-1 with M~ = M + dt (K_d + D) + dt^2 K_p (numpy's inverse of the mass matrix
    the API reports, with the drive gains and joint damping). The standing quadruped's rows need far more than
    nv / 3 = 6 columns of M~^-1 (six per foot, one per friction row), so its factor comes with all of it; the
    entries agree to nv kappa eps of the largest (an inverse from a Cholesky factor is backward stable)."""
    world, system, _bed = _standing_quadruped("heightmap")
    world.step(100)
    dt = world.dt
    damping = np.r_[np.zeros(6), [j.damping for j in system.model.joints]]
    kps, kds = np.r_[np.zeros(6), np.full(12, 300.0)], np.r_[np.zeros(6), np.full(12, 20.0)]
    m_tilde = system.get_mass_matrix(0) + np.diag(dt * (kds + damping) + dt * dt * kps)
    world.step(1)
    assert world._scratch.block("scratch_i", "tree_step", "inverse")[0, 0, 0] == 1
    assert not world._scratch.block("scratch_f", "tree_dof", "saturated")[0].any()
    inverse = world._scratch.block("scratch_f", "tree_inverse", "inverse")[0, :, 0].reshape(18, 18)
    reference = np.linalg.inv(m_tilde)
    bound = 18 * np.linalg.cond(m_tilde) * np.finfo(float).eps * np.abs(reference).max()
    np.testing.assert_allclose(inverse, reference, rtol=0, atol=bound)
    np.testing.assert_array_equal(inverse, inverse.T)


def test_link_response_columns_match_numpy_through_six_joints():
    """Reference: the definitions B = M~^-1 J^T and Phi = J B (numpy: the inverse of M~ = M + dt (K_d + D) +
    dt^2 K_p from the mass matrix the API reports; J's columns from the frame velocities the API reports for
    unit generalized velocities, as (angular, linear at the root's origin), the spatial velocity the columns
    act on). The arm's last link touches a height map, so its step forms all of M~^-1 and takes the link's six
    columns from it along a path of six one-dof joints: two passes of three, the second adding to the first. Entries
    agree to nv times the inverse's bound (nv kappa eps of its largest) times the largest of J."""
    world = tt.World(dt=1e-3)
    ground = world.add_heightmap(5, 5, 4.0, 4.0, 0.0, 0.0, np.zeros(25))
    arm = world.add_articulated_system((DATA / "arm6.urdf").read_text(), base="fixed", position=(0.0, 0.0, 1.0))
    q = np.array([0.3, -0.6, 0.9, 0.4, -0.7, 0.2])
    kp, kd = np.full(6, 50.0), np.full(6, 2.0)
    arm.set_generalized_coordinate(q)
    arm.set_pd_gains(kp, kd)
    arm.set_pd_target(q, np.zeros(6))
    nv, dt = arm.get_dof(), world.dt
    damping = np.array([j.damping for j in arm.model.joints])
    m_tilde = arm.get_mass_matrix(0) + np.diag(dt * (kd + damping) + dt * dt * kp)
    root = arm.get_frame_position("base_link", 0)
    jac = np.zeros((6, nv))
    for k in range(nv):
        arm.set_generalized_velocity(np.eye(nv)[k])
        v, w = arm.get_frame_velocity("link6", 0)
        jac[:3, k], jac[3:, k] = w, v + np.cross(w, root - arm.get_frame_position("link6", 0))
    arm.set_generalized_velocity(np.zeros(nv))
    ground.set_position([0.0, 0.0, arm.get_frame_position("link6", 0)[2]])  # through the last link's shape
    world.step(1)
    assert "link6" in [link[1] for link in world.get_contacts(0).link_b if link is not None]
    assert world._scratch.block("scratch_i", "tree_step", "inverse")[0, 0, 0] == 1
    assert not world._scratch.block("scratch_f", "tree_dof", "saturated")[0].any()
    row = arm.get_body_names().index("link6")  # (one tree: its joint rows start at 0, nv response rows each)
    columns = world._scratch.block("scratch_f", "link_response", "column")[0, row * nv:(row + 1) * nv]
    phi = world._scratch.block("scratch_f", "link_dyn", "phi")[0, row].reshape(6, 6)
    inverse = np.linalg.inv(m_tilde)
    bound = nv * (nv * np.linalg.cond(m_tilde) * np.finfo(float).eps * np.abs(inverse).max()) * np.abs(jac).max()
    np.testing.assert_allclose(columns, inverse @ jac.T, rtol=0, atol=bound)
    np.testing.assert_allclose(phi, jac @ inverse @ jac.T, rtol=0, atol=6 * bound * np.abs(jac).max())
    np.testing.assert_array_equal(phi, phi.T)


def test_dof_structure_of_a_branched_tree_and_a_refused_order():
    """Reference: the definitions, by hand. A fixed root carrying two arms (dofs 0-1 and 2-4, the second arm
    branching after its first joint): each dof's subtree ends where the next branch starts, a run is a
    stretch of dofs each the parent of the next, and ``up`` the dof above a run. Joints whose subtree is not
    a consecutive stretch of dofs (not depth-first) are refused, since the factor's rows assume it."""
    from taichi_terra.kernels.common.layout import JOINT_FIXED_ROOT, JOINT_REVOLUTE
    from taichi_terra.model import _dof_structure

    def rows(parents):
        return [{"type": JOINT_FIXED_ROOT, "parent": -1, "dof": 0}] + [
            {"type": JOINT_REVOLUTE, "parent": p, "dof": k} for k, p in enumerate(parents)]

    # joint rows 1..5 move dofs 0..4; row 3 (dof 2) hangs from the root, rows 4 and 5 both from row 3
    end, run, up = _dof_structure(rows([0, 1, 0, 3, 3]), 5)
    assert end.tolist() == [2, 2, 5, 4, 5]
    assert run.tolist() == [0, 0, 2, 2, 4]
    assert up.tolist() == [-1, -1, -1, -1, 2]
    with pytest.raises(ValueError, match="depth-first"):
        _dof_structure(rows([0, 0, 1]), 3)  # dof 2 belongs under dof 0, after dof 1's branch


def test_sparse_factor_solves_match_numpy_on_a_branched_tree():
    """Reference: the definitions, with numpy's inverse of M~ = M + dt (K_d + D) + dt^2 K_p from the mass matrix
    the API reports. The quadruped without joint friction: in env 0 one rear foot touches a small height
    map, six columns of M~^-1, not more than nv / 3, so the step solves the foot link's six response columns
    B = M~^-1 J^T with the factor (J from the API's frame velocities at unit generalized velocities); in
    env 1, up in the air, only that leg's knee is at its limit, and its row takes its dof's column of
    M~^-1 by the four-column solve. The leg's dofs follow another leg's, so its path to the root is two runs
    of dofs. Entries agree to nv times the inverse's bound (nv kappa eps of its largest), times the
    largest of J for B."""
    from taichi_terra.kernels.common.layout import ROW_LIMIT

    xml = re.sub(r'friction="[^"]*"', 'friction="0"', (DATA / "quadruped.urdf").read_text())
    world = tt.World(dt=1e-3, n_envs=2)
    ground = world.add_heightmap(3, 3, 0.1, 0.1, 10.0, 10.0, np.zeros(9))  # (moved under the foot below)
    system = world.add_articulated_system(xml, position=(0.0, 0.0, 0.6))
    nv, dt = system.get_dof(), world.dt
    knee = system.get_generalized_velocity_index("RL_knee")
    qs = np.tile(system.get_generalized_coordinate(0), (2, 1))
    qs[:, 7:] = STAND
    qs[1, 2] = 2.0
    qs[1, 1 + knee] = -0.9 - 1e-4  # (the knee's upper limit is -0.9 rad)
    kp, kd = np.r_[np.zeros(6), np.full(12, 300.0)], np.r_[np.zeros(6), np.full(12, 20.0)]
    system.set_generalized_coordinate(qs)
    system.set_pd_gains(kp, kd)
    system.set_pd_target(qs, np.zeros((2, nv)))
    shank = system.get_body_names().index("RL_shank")
    foot = [p for link, shape, p, _r in system.collision_bodies()
            if link == shank and shape.type == tt.ShapeType.SPHERE][0]
    world.step(1)  # (the frames of the pose)
    system.set_generalized_coordinate(qs)
    centre = system.get_frame_position("RL_shank", 0) + system.get_frame_orientation("RL_shank", 0) @ foot
    ground.set_position(centre - np.array([10.0, 10.0, 0.0]))  # (its samples through the foot sphere's centre)
    damping = np.r_[np.zeros(6), [j.damping for j in system.model.joints]]
    m_tilde = [system.get_mass_matrix(env) + np.diag(dt * (kd + damping) + dt * dt * kp) for env in range(2)]
    root = system.get_frame_position("trunk", 0)
    jac = np.zeros((6, nv))
    for k in range(nv):
        system.set_generalized_velocity(np.tile(np.eye(nv)[k], (2, 1)))
        v, w = system.get_frame_velocity("RL_shank", 0)
        jac[:3, k], jac[3:, k] = w, v + np.cross(w, root - system.get_frame_position("RL_shank", 0))
    system.set_generalized_velocity(np.zeros((2, nv)))
    world.step(1)
    assert list(world.get_contacts(0).link_b) == [(0, "RL_shank")]  # (system 0)
    assert len(world.get_contacts(1)) == 0
    scratch = world._scratch
    assert scratch.block("scratch_i", "tree_step", "factored")[:, 0, 0].tolist() == [1, 1]
    assert scratch.block("scratch_i", "tree_step", "inverse")[:, 0, 0].tolist() == [0, 0]
    assert not scratch.block("scratch_f", "tree_dof", "saturated").any()
    inverse = [np.linalg.inv(m) for m in m_tilde]
    bound = [nv * (nv * np.linalg.cond(m) * np.finfo(float).eps * np.abs(i).max()) for m, i in zip(m_tilde, inverse)]
    columns = scratch.block("scratch_f", "link_response", "column")[0, shank * nv:(shank + 1) * nv]
    np.testing.assert_allclose(columns, inverse[0] @ jac.T, rtol=0, atol=bound[0] * np.abs(jac).max())
    assert scratch.block("scratch_i", "row", "kind")[1, 0, 0] == ROW_LIMIT
    column = scratch.block("scratch_f", "tree_inverse", "inverse")[1, knee * nv:(knee + 1) * nv, 0]
    np.testing.assert_allclose(column, inverse[1][knee], rtol=0, atol=bound[1])


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
