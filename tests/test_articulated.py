"""Articulated systems without contacts: mass matrix, bias forces, forward dynamics and frames against
Pinocchio, closed forms (pendulum period, PD step responses, energy of a double pendulum), drives, batch
invariance, checkpoints and bad input. Contacts on links are in ``test_articulated_contacts.py``, the tree
solves in ``test_tree_solve.py``, joint limits, friction and effort limits in ``test_joint_limits.py``.

Every world here has at least two envs, so one compiled variant of the step kernel with the tree stages
serves the whole module (and the three others)."""
import math
import re
from pathlib import Path

import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.bodies.urdf import URDFError, make_chain_urdf
from helpers import STAND

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
    before = (system.get_generalized_coordinate(), system.get_generalized_velocity(),
              system.get_pd_gains() + system.get_pd_target())
    with pytest.raises(error, match=match):
        call(system)
    after = (system.get_generalized_coordinate(), system.get_generalized_velocity(),
             system.get_pd_gains() + system.get_pd_target())
    for a, b in zip(before[:2] + before[2], after[:2] + after[2]):
        np.testing.assert_array_equal(a, b)


def test_pd_targets_read_back_as_they_were_set_per_env():
    """``get_pd_target`` returns what ``set_pd_target`` took, per env and for all envs, before and after the
    build; a floating base's seven entries read 0 (they are no target)."""
    world, system = _quadruped_world(2)
    q = np.tile(system.get_generalized_coordinate(0), (2, 1))
    q[:, 7:] = [np.linspace(-0.5, 0.5, 12), np.linspace(0.2, -0.2, 12)]
    v = np.arange(36.0).reshape(2, 18) * 0.1
    v[:, :6] = 0.0
    system.set_pd_target(q, v)
    pos, vel = system.get_pd_target()
    assert pos.shape == (2, 19) and np.all(pos[:, :7] == 0.0)
    np.testing.assert_array_equal(pos[:, 7:], q[:, 7:])
    np.testing.assert_array_equal(vel, v)
    system.set_pd_target(q[0], -v[0], env=1)
    np.testing.assert_array_equal(system.get_pd_target(1)[1], -v[0])
    np.testing.assert_array_equal(system.get_pd_target(0)[1], v[0])
    world.build()
    np.testing.assert_array_equal(system.get_pd_target()[0][:, 7:], q[[0, 0], 7:])  # (env 1 took env 0's)
    system.set_pd_target(q[::-1], 2.0 * v)
    np.testing.assert_array_equal(system.get_pd_target()[0][:, 7:], q[::-1, 7:])
    np.testing.assert_array_equal(system.get_pd_target()[1], 2.0 * v)


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
    assert world.articulated_systems == []
    world.add_articulated_system((DATA / "arm6.urdf").read_text(), base="fixed")
    world.step(1)
    with pytest.raises(RuntimeError):
        world.add_articulated_system((DATA / "arm6.urdf").read_text(), base="fixed")
    assert len(world.articulated_systems) == 1
