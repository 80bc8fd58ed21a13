"""Per-env parameters: each env's soil material and material-pair friction and restitution, set for every env or
for one, read back per env, kept by checkpoints, and read by the kernels env by env."""
import math

import numpy as np
import pytest

import taichi_terra as tt
from helpers import G

KPHI = [1.0e5 * (1.0 + 0.25 * k) for k in range(8)]  # [Pa/m], n = 1: one material per env
PLATE_MASS, PLATE_X, PLATE_Y = 20.0, 0.4, 0.6


def _plate_on_soil(n_envs: int, kphis):
    """A 20 kg, 0.4 x 0.6 m plate on a 1 m bed of 4 cm spacing (its edges midway between samples: the
    quadrature area is exactly 0.24 m^2), one soil material per env (``kphis``, linear soil, strong damper)."""
    world = tt.World(dt=1e-3, n_envs=n_envs)
    n = 26
    bed = world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n), _soil(kphis[0]))
    for env, kphi in enumerate(kphis):
        bed.set_material(_soil(kphi), env=env)
    plate = world.add_box(PLATE_X, PLATE_Y, 0.02, PLATE_MASS)
    plate.set_position([0.02, 0.02, 0.01])
    return world, bed, plate


def _soil(kphi: float) -> tt.SoilMaterial:
    return tt.SoilMaterial(bekker_kphi=kphi, sinkage_exponent=1.0, damping=3e4)


def test_each_env_sinks_into_its_own_soil_as_a_world_of_its_own():
    """Reference: Bekker's plate sinkage s = m g / (A kphi) (n = 1, kc = 0) of each env's own material, within
    1 % after 1.5 s of quasistatic loading; and the same run as 8 one-env worlds, each with its env's
    material: every env's plate where its own world puts it, bit for bit (the kernels read each env's
    material, and nothing of one env reaches another)."""
    world, bed, plate = _plate_on_soil(8, KPHI)
    world.solver.tolerance = 1e-10
    for env, kphi in enumerate(KPHI):
        assert bed.get_material(env).bekker_kphi == kphi
    world.step(300)
    early = np.array([plate.get_position(env) for env in range(8)])
    for env, kphi in enumerate(KPHI):
        alone, _bed, one = _plate_on_soil(1, [kphi])
        alone.solver.tolerance = 1e-10
        alone.step(300)
        np.testing.assert_array_equal(one.get_position(0), early[env])
    world.step(1200)
    for env, kphi in enumerate(KPHI):
        expected = PLATE_MASS * G / (PLATE_X * PLATE_Y * kphi)
        assert -(plate.get_position(env)[2] - 0.01) == pytest.approx(expected, rel=0.01)


TAN = 0.5  # the tilt of gravity: a box slides where friction < 0.5


def test_each_env_slides_or_sticks_by_its_own_friction():
    """Reference: a block on an incline (here gravity tilted by atan 0.5 over flat ground) slides where
    mu < tan(theta), with acceleration g (sin theta - mu cos theta), and sticks elsewhere. Five envs, five
    friction coefficients of the box's material against the ground, set env by env: from 0.05 s to 0.45 s
    each box moves a (0.45^2 - 0.05^2) / 2 and ends at speed 0.45 a (within 1 mm and 1 cm/s: the box's
    first steps settle its contacts), or not at all (1 um)."""
    theta = math.atan(TAN)
    world = tt.World(dt=1e-3, n_envs=5, gravity=(G * math.sin(theta), 0.0, -G * math.cos(theta)))
    world.add_material("rubber")
    world.add_ground()
    box = world.add_box(0.2, 0.2, 0.1, 2.0, material="rubber")
    box.set_position([0.0, 0.0, 0.05])
    mus = (0.1, 0.3, 0.45, 0.6, 0.9)
    for env, mu in enumerate(mus):
        world.set_material_pair_prop("rubber", "default", mu, 0.0, env=env)
    for env, mu in enumerate(mus):
        assert world.get_material_pair_prop("default", "rubber", env) == (mu, 0.0)
    world.step(50)
    start = np.array([box.get_position(env)[0] for env in range(5)])
    world.step(400)
    for env, mu in enumerate(mus):
        moved = box.get_position(env)[0] - start[env]
        if mu < TAN:
            a = G * (math.sin(theta) - mu * math.cos(theta))
            assert box.get_linear_velocity(env)[0] == pytest.approx(0.45 * a, abs=1e-2)
            assert moved == pytest.approx(a * (0.45 ** 2 - 0.05 ** 2) / 2.0, abs=1e-3)
        else:
            assert abs(moved) < 1e-6


def test_each_env_falls_with_its_own_gravity():
    """Reference: free fall under the semi-implicit Euler step, v_n = g n dt and z_n = z_0 + g dt^2 n (n + 1) / 2
    (to rounding), for each env's own gravity: set for every env, then for two envs apart (one before the
    build, one after), read back per env."""
    world = tt.World(dt=1e-3, n_envs=3, gravity=(0.0, 0.0, -9.81))
    ball = world.add_sphere(0.1, 1.0)
    ball.set_position([0.0, 0.0, 10.0])
    world.set_gravity([0.0, 0.0, -1.62], env=1)  # (the Moon's, before the build)
    assert world.get_gravity(1).tolist() == [0.0, 0.0, -1.62]
    world.build()
    world.set_gravity([0.5, 0.0, -3.71], env=2)  # (Mars' with a wind, after it)
    gravities = [(0.0, 0.0, -9.81), (0.0, 0.0, -1.62), (0.5, 0.0, -3.71)]
    n, dt = 200, 1e-3
    world.step(n)
    for env, g in enumerate(gravities):
        np.testing.assert_array_equal(world.get_gravity(env), g)
        expected = np.array([0.0, 0.0, 10.0]) + np.array(g) * dt * dt * n * (n + 1) / 2.0
        np.testing.assert_allclose(ball.get_position(env), expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ball.get_linear_velocity(env), np.array(g) * n * dt, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(world.gravity, gravities[0])


def test_a_checkpoint_restores_each_envs_parameters():
    """Reference: the values set. A checkpoint taken with env 2's soil and friction set apart, then every env
    set otherwise, then restored: env 2 reads its values again, the others theirs."""
    world, bed, plate = _plate_on_soil(3, [1e5, 1e5, 1e5])
    world.build()
    world.set_material_pair_prop("default", "default", 0.3, 0.1, env=2)
    bed.set_material(_soil(3e5), env=2)
    world.set_gravity([0.0, 0.0, -5.0], env=2)
    saved = world.checkpoint()
    world.set_material_pair_prop("default", "default", 0.9, 0.0)
    bed.set_material(_soil(7e5))
    world.set_gravity([0.0, 0.0, -1.0])
    assert world.get_material_pair_prop("default", "default", 2) == (0.9, 0.0)
    assert bed.get_material(2).bekker_kphi == 7e5
    world.restore(saved)
    assert world.get_material_pair_prop("default", "default", 2) == (0.3, 0.1)
    assert world.get_material_pair_prop("default", "default", 0) == (0.8, 0.0)
    assert bed.get_material(2).bekker_kphi == 3e5
    assert bed.get_material(0).bekker_kphi == 1e5
    assert world.get_gravity(2).tolist() == [0.0, 0.0, -5.0]
    assert world.get_gravity(0)[2] == -G


def test_bad_per_env_parameters_are_refused_and_change_nothing():
    """Reference: the rules in the setters' docstrings; every env's values after each refusal."""
    world, bed, plate = _plate_on_soil(2, [1e5, 2e5])
    world.build()
    def held():
        return ([bed.get_material(env) for env in range(2)],
                [world.get_material_pair_prop("default", "default", env) for env in range(2)],
                [world.get_gravity(env).tolist() for env in range(2)])

    before = held()
    for call, error, words in (
            (lambda: bed.set_material(_soil(1e5), env=2), ValueError, "env must be in [0, 2)"),
            (lambda: bed.set_material(_soil(1e5), env=1.0), TypeError, "env must be None or an int"),
            (lambda: bed.set_material({"bekker_kphi": 1e5}, env=0), TypeError, "SoilMaterial"),
            (lambda: bed.get_material(None), TypeError, "env must be an int"),
            (lambda: world.set_material_pair_prop("default", "ice", 0.1, 0.0, env=0), ValueError, "unknown material"),
            (lambda: world.set_material_pair_prop("default", "default", -0.1, 0.0, env=0), ValueError, "friction"),
            (lambda: world.set_material_pair_prop("default", "default", 0.5, 1.5, env=1), ValueError, "restitution"),
            (lambda: world.set_material_pair_prop("default", "default", 0.5, 0.0, env=-1), ValueError, "env"),
            (lambda: world.get_material_pair_prop("default", "default", 5), ValueError, "env"),
            (lambda: world.set_gravity([0.0, -9.81], env=0), ValueError, "gravity"),
            (lambda: world.set_gravity([0.0, 0.0, -9.81], env=2), ValueError, "env"),
            (lambda: world.get_gravity(None), TypeError, "env must be an int")):
        with pytest.raises(error, match=words.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
            call()
        assert held() == before


def test_randomize_draws_each_envs_soil_friction_and_gravity_reproducibly():
    """Reference: Bekker's plate sinkage m g / (A kphi) of each env's drawn stiffness (within 1 %), the ranges
    given, and the seed: two worlds randomised from generators of one seed hold the same values bit for bit;
    a redraw for two envs changes those alone."""
    worlds = []
    for _ in range(2):
        world, bed, plate = _plate_on_soil(4, [1e5] * 4)
        world.add_material("rubber")
        world.solver.tolerance = 1e-10
        drawn = tt.randomize(world, np.random.default_rng(7), soil={"bekker_kphi": (8e4, 3e5)},
                             friction={("rubber", "default"): (0.2, 1.0)},
                             gravity=((0.0, 0.0, -10.0), (0.0, 0.0, -9.6)))
        worlds.append((world, bed, plate, drawn))
    (world, bed, plate, drawn), (other, other_bed, _plate, other_drawn) = worlds
    kphi = drawn["soil"]["bekker_kphi"]
    np.testing.assert_array_equal(kphi, other_drawn["soil"]["bekker_kphi"])
    assert np.all((kphi >= 8e4) & (kphi <= 3e5)) and len(set(kphi.tolist())) == 4
    for env in range(4):
        assert bed.get_material(env).bekker_kphi == kphi[env] == other_bed.get_material(env).bekker_kphi
        assert bed.get_material(env).damping == 3e4  # (the fields not drawn: the bed's material for every env)
        mu = drawn["friction"][("rubber", "default")][env]
        assert 0.2 <= mu <= 1.0
        assert world.get_material_pair_prop("rubber", "default", env) == (mu, 0.0)
        np.testing.assert_array_equal(world.get_gravity(env), drawn["gravity"][env])
        np.testing.assert_array_equal(other.get_gravity(env), drawn["gravity"][env])
    world.step(1500)
    for env in range(4):
        expected = PLATE_MASS * -drawn["gravity"][env][2] / (PLATE_X * PLATE_Y * kphi[env])
        assert -(plate.get_position(env)[2] - 0.01) == pytest.approx(expected, rel=0.01)
    again = tt.randomize(world, np.random.default_rng(8), soil={"bekker_kphi": (8e4, 3e5)}, envs=[1, 3])
    assert again["envs"].tolist() == [1, 3]
    for env in range(4):
        want = again["soil"]["bekker_kphi"][[1, 3].index(env)] if env in (1, 3) else kphi[env]
        assert bed.get_material(env).bekker_kphi == want


def test_randomize_refuses_bad_ranges_and_changes_nothing():
    """Reference: the rules of ``randomize``'s docstring; every env's values after each refusal."""
    world, bed, plate = _plate_on_soil(2, [1e5, 2e5])
    world.build()
    before = [bed.get_material(env) for env in range(2)], [world.get_gravity(env).tolist() for env in range(2)]
    rng = np.random.default_rng(0)
    for kwargs, error, words in (
            ({"soil": {"bekker_kphi": (3e5, 1e5)}}, ValueError, "lo <= hi"),
            ({"soil": {"stiffness": (1e5, 2e5)}}, ValueError, "unknown field"),
            ({"soil": {"bekker_kphi": (1e5, 2e5), "sinkage_exponent": (-1.0, -0.5)}}, ValueError, "sinkage_exponent"),
            ({"friction": {("default", "ice"): (0.1, 0.2)}}, ValueError, "unknown material"),
            ({"friction": {("default", "default"): (-0.1, 0.2)}}, ValueError, ">= 0"),
            ({"gravity": ((0.0, 0.0, -9.0), (0.0, 0.0, -10.0))}, ValueError, "lo <= hi"),
            ({"gravity": (0.0, -9.81)}, ValueError, "3-vectors"),
            ({"soil": {"bekker_kphi": (1e5, 2e5)}, "envs": [0, 0]}, ValueError, "repeat"),
            ({"soil": {"bekker_kphi": (1e5, 2e5)}, "envs": [2]}, ValueError, "env must be in"),
            ({"soil": {"bekker_kphi": "wide"}}, TypeError, "pair of numbers")):
        with pytest.raises(error, match=words):
            tt.randomize(world, rng, **kwargs)
        assert ([bed.get_material(env) for env in range(2)], [world.get_gravity(env).tolist() for env in range(2)]) \
            == before
    with pytest.raises(TypeError, match="Generator"):
        tt.randomize(world, 42, soil={"bekker_kphi": (1e5, 2e5)})


def test_each_env_pushes_into_its_own_sand():
    """Reference: the RFT centroid rule for a fully buried box moving straight down (``test_rft.py``): its bottom
    face alone resists, with zeta z_bottom A_bottom (Li's az(0, pi/2) = 1), z_bottom measured from each env's
    own surface. Three envs: the medium as added, another zeta (set after the build), and another zeta and
    surface height (set before it)."""
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0), n_envs=3)
    sand = world.add_granular_medium(0.0, zeta=3.75, smoothing=1.0)
    box = world.add_box(0.1, 0.06, 0.04, 2.0)
    box.set_position((0.0, 0.0, -0.1))
    box.set_linear_velocity((0.0, 0.0, -0.05))
    world.add_plates(box, count=400)
    world.set_medium_params(sand, zeta=2.0, surface_height=0.05, env=2)
    world.build()
    world.set_medium_params(sand, zeta=5.8, env=1)
    assert world.get_medium_params(sand, 1)["zeta"] == 5.8
    assert world.get_medium_params(sand, 2) == {"zeta": 2.0, "surface_height": 0.05,
                                                "coefficients": sand.coefficients}
    world.step()
    for env, (zeta, surface) in enumerate([(3.75, 0.0), (5.8, 0.0), (2.0, 0.05)]):
        total = world.get_plate_forces(env)["force"].sum(axis=0)
        bottom = zeta * 1e6 * (surface + 0.12) * (0.1 * 0.06)
        np.testing.assert_allclose(total, [0.0, 0.0, bottom], rtol=0, atol=1e-9 * bottom)
    with pytest.raises(ValueError, match="zeta"):
        world.set_medium_params(sand, zeta=0.0, surface_height=0.3, env=0)
    assert world.get_medium_params(sand, 0) == {"zeta": 3.75, "surface_height": 0.0,
                                                "coefficients": sand.coefficients}
    with pytest.raises(ValueError, match="medium"):
        world.set_medium_params(tt.World(dt=1e-3).add_granular_medium(0.0), zeta=1.0)
    drawn = tt.randomize(world, np.random.default_rng(3), sand={"zeta": (0.5, 5.8), "surface_height": (0.0, 0.02)})
    for env in range(3):
        params = world.get_medium_params(sand, env)
        assert params["zeta"] == drawn["sand"]["zeta"][env] and 0.5 <= params["zeta"] <= 5.8
        assert params["surface_height"] == drawn["sand"]["surface_height"][env]
    with pytest.raises(ValueError, match="unknown parameter"):
        tt.randomize(world, np.random.default_rng(3), sand={"density": (1.0, 2.0)})


def test_each_env_moves_its_own_masses():
    """Reference: Newton's second law, v = F t / m and w = tau t / I (inertia scaled with the mass), for a free
    box and a one-link floating robot in zero gravity, each pushed by the same force in three envs of three
    masses (set before and after the build)."""
    world = tt.World(dt=1e-3, n_envs=3, gravity=(0.0, 0.0, 0.0))
    box = world.add_box(0.2, 0.2, 0.2, 2.0)
    link = ('<robot name="r"><link name="body"><inertial><mass value="5"/>'
            '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')
    robot = world.add_articulated_system(link, base="floating", position=(3.0, 0.0, 0.0))
    world.set_body_mass(box, 4.0, env=1)
    world.set_link_mass(robot, "body", 10.0, env=1)
    assert world.get_body_mass(box, 1) == 4.0 and world.get_body_mass(box, 0) == 2.0
    world.build()
    world.set_body_mass(box, 1.0, env=2)
    world.set_link_mass(robot, "body", 2.5, env=2)
    box.set_external_force([1.0, 0.0, 0.0])
    box.set_external_torque([0.0, 0.0, 0.01])
    tau = np.zeros(robot.get_dof())
    tau[0] = 1.0
    robot.set_generalized_force(tau)
    world.step(100)
    izz = 2.0 * (0.2 ** 2 + 0.2 ** 2) / 12.0
    for env, (m_box, m_link) in enumerate([(2.0, 5.0), (4.0, 10.0), (1.0, 2.5)]):
        assert world.get_body_mass(box, env) == pytest.approx(m_box, rel=1e-15)
        assert world.get_link_mass(robot, "body", env) == pytest.approx(m_link, rel=1e-15)
        assert box.get_linear_velocity(env)[0] == pytest.approx(1.0 * 0.1 / m_box, rel=1e-12)
        assert box.get_angular_velocity(env)[2] == pytest.approx(0.01 * 0.1 / (izz * m_box / 2.0), rel=1e-9)
        assert robot.get_generalized_velocity(env)[0] == pytest.approx(1.0 * 0.1 / m_link, rel=1e-12)
    saved = world.checkpoint()
    world.set_body_mass(box, 8.0)
    assert world.get_body_mass(box, 2) == 8.0
    world.restore(saved)
    assert world.get_body_mass(box, 2) == pytest.approx(1.0, rel=1e-15)
    for call, error, words in ((lambda: world.set_body_mass(box, 0.0), ValueError, "mass"),
                               (lambda: world.set_link_mass(robot, "leg", 1.0), ValueError, "link must be one of"),
                               (lambda: world.set_body_mass(box, 1.0, env=3), ValueError, "env")):
        with pytest.raises(error, match=words):
            call()
    assert world.get_body_mass(box, 0) == 2.0
    drawn = tt.randomize(world, np.random.default_rng(5), mass_scale=(0.5, 2.0))
    assert drawn["mass_scale"].shape == (3, 2)
    for env in range(3):
        box_f, link_f = drawn["mass_scale"][env]
        assert 0.5 <= box_f <= 2.0 and 0.5 <= link_f <= 2.0
        assert world.get_body_mass(box, env) == pytest.approx(2.0 * box_f, rel=1e-14)
        assert world.get_link_mass(robot, "body", env) == pytest.approx(5.0 * link_f, rel=1e-14)
