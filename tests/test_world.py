"""World-level behaviour: checkpoints, batch invariance, materials, contacts API, backend."""
import subprocess
import sys

import numpy as np
import pytest

import taichi_terra as tt
from helpers import G


def _mixed_world(n_envs):
    """Shapes of every kind dropped on a wavy height map and the ground."""
    import trimesh

    world = tt.World(dt=1e-3, n_envs=n_envs)
    world.add_ground(-0.5)
    xs = np.linspace(-1.0, 1.0, 11)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    world.add_heightmap_from_matrix(2.0, 2.0, 0.0, 0.0, 0.05 * np.sin(3 * X) * np.cos(2 * Y))
    bodies = [world.add_sphere(0.08, 1.0), world.add_box(0.15, 0.1, 0.12, 1.5), world.add_capsule(0.05, 0.15, 0.7),
              world.add_cylinder(0.07, 0.1, 0.9),
              world.add_mesh(trimesh.creation.icosphere(subdivisions=1, radius=0.08), 0.8)]
    return world, bodies


def _randomize(world, bodies, rng, env=None):
    for k, b in enumerate(bodies):
        b.set_position([-0.6 + 0.3 * k + rng.uniform(-0.05, 0.05), rng.uniform(-0.3, 0.3),
                        0.25 + rng.uniform(0.0, 0.2)], env=env)
        q = rng.normal(size=4)
        b.set_orientation(q / np.linalg.norm(q), env=env)
        b.set_linear_velocity(rng.uniform(-0.5, 0.5, 3), env=env)
        b.set_angular_velocity(rng.uniform(-3.0, 3.0, 3), env=env)


def test_checkpoint_replays_bit_for_bit(rng):
    """Reference: determinism. Restoring a checkpoint and stepping again reproduces the same states
    exactly (same backend), including contacts and warm starts."""
    world, bodies = _mixed_world(2)
    _randomize(world, bodies, rng)
    world.step(150)
    cp = world.checkpoint()
    world.step(200)
    first = [b.get_position() for b in bodies] + [b.get_orientation() for b in bodies]
    first_contacts = world.get_contacts(1)
    assert len(first_contacts) > 0
    world.restore(cp)
    assert world.time == pytest.approx(0.15)
    world.step(200)
    again = [b.get_position() for b in bodies] + [b.get_orientation() for b in bodies]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(world.get_contacts(1).impulses, first_contacts.impulses)


def test_batch_invariance(rng):
    """Reference: envs are independent. A world of 8 envs with different initial states gives, env by env,
    exactly what 8 single-env worlds give."""
    n = 8
    seeds = rng.integers(0, 2 ** 31, size=n)
    batched, bodies = _mixed_world(n)
    for e in range(n):
        _randomize(batched, bodies, np.random.default_rng(seeds[e]), env=e)
    batched.step(300)
    for e in range(n):
        single, sb = _mixed_world(1)
        _randomize(single, sb, np.random.default_rng(seeds[e]))
        single.step(300)
        for b_batch, b_single in zip(bodies, sb):
            np.testing.assert_array_equal(b_batch.get_position(e), b_single.get_position(0))
            np.testing.assert_array_equal(b_batch.get_angular_velocity(e), b_single.get_angular_velocity(0))


def test_restitution_bounce_height():
    """Reference: a ball dropped from h onto a plane with restitution e rebounds to e^2 h (energy
    e^2 of the impact), within the O(g dt) velocity error of one time step."""
    world = tt.World(dt=1e-4)
    world.set_material_pair_prop("ball", "floor", 0.5, 0.8)
    world.add_ground(material="floor")
    ball = world.add_sphere(0.05, 1.0, material="ball")
    ball.set_position([0.0, 0.0, 1.05])
    top = 0.0
    for _ in range(1000):  # 1 s: the first impact is at sqrt(2 / g) = 0.45 s, the rebound peak near 0.81 s
        world.step(10)
        if world.time > 0.5:
            top = max(top, ball.get_position(0)[2] - 0.05)
    assert top == pytest.approx(0.8 ** 2 * 1.0, rel=0.01)


def test_elastic_bounces_keep_their_height():
    """Reference: energy conservation for restitution 1; each rebound reaches the drop height again, with the
    one-step discretisation error only (no gain from gravity counted into the bounce speed)."""
    world = tt.World(dt=1e-3)
    world.set_material_pair_prop("ball", "floor", 0.0, 1.0)
    world.add_ground(material="floor")
    ball = world.add_sphere(0.05, 1.0, material="ball")
    ball.set_position([0.0, 0.0, 1.05])
    heights = []
    going_up, top = False, 0.0
    for _ in range(3600):  # four bounces
        world.step()
        z, vz = ball.get_position(0)[2] - 0.05, ball.get_linear_velocity(0)[2]
        if vz > 0.0:
            going_up, top = True, max(top, z)
        elif going_up:
            heights.append(top)
            going_up, top = False, 0.0
    assert len(heights) >= 3
    np.testing.assert_allclose(heights, 1.0, atol=5e-3)


def test_material_pairs_and_default():
    """Reference: the pair table. Unset pairs use the default; set pairs are symmetric."""
    world = tt.World()
    world.set_default_material(0.5, 0.1)
    world.set_material_pair_prop("ice", "steel", 0.02, 0.3)
    world.add_material("rubber")
    t = world.materials
    ice, steel, rubber = t.index("ice"), t.index("steel"), t.index("rubber")
    assert t.lookup(steel, ice) == (0.02, 0.3)
    assert t.lookup(rubber, ice) == (0.5, 0.1)
    with pytest.raises(ValueError, match="unknown material"):
        world.add_sphere(0.1, 1.0, material="wood")


def test_friction_follows_runtime_material_change():
    """Reference: Coulomb sliding, a = g (sin - mu cos), with mu changed between steps."""
    from helpers import slope_world
    import math

    world, box, R = slope_world(math.radians(20.0), 0.8, "box")
    world.step(100)
    held = R.T @ box.get_linear_velocity(0)
    assert abs(held[0]) < 1e-6
    world.set_material_pair_prop("body", "slope", 0.1, 0.0)
    world.step(200)
    v = (R.T @ box.get_linear_velocity(0))[0]
    a = G * (math.sin(math.radians(20.0)) - 0.1 * math.cos(math.radians(20.0)))
    assert v == pytest.approx(a * 0.2, rel=0.02)


def test_import_does_not_initialise_taichi():
    """``import taichi_terra`` must not start Taichi (nor import it)."""
    code = "import sys, taichi_terra; print('taichi' in sys.modules, taichi_terra.is_initialized())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_init_is_idempotent_and_guards_reconfiguration():
    assert tt.init(arch="cpu", precision="f64")["arch"] == "cpu"
    with pytest.raises(RuntimeError, match="already initialised"):
        tt.init(arch="cpu", precision="f32")


def test_compile_errors_name_the_file_line_and_source():
    """With taichi_terra's short source positions, a kernel's compile error still points at its code."""
    import taichi as ti

    @ti.kernel
    def uses_an_undefined_name() -> ti.f64:
        x = 1.0
        return x + not_defined_anywhere  # noqa: F821

    with pytest.raises(Exception) as err:
        uses_an_undefined_name()
    message = str(err.value)
    with open(__file__) as f:
        line = 1 + [k for k, text in enumerate(f) if "return x + not_defined_anywhere" in text][0]
    assert 'not_defined_anywhere" is not defined' in message
    assert f'File "{__file__}", line {line}, in uses_an_undefined_name' in message
    assert "return x + not_defined_anywhere" in message
    assert "^^^" not in message  # Taichi's own form underlines the node; the short form does not


def test_contact_set_reports_heightmap_contacts():
    world = tt.World()
    hm = world.add_heightmap(3, 3, 2.0, 2.0, 0.0, 0.0, np.zeros(9))
    hm.set_position(0.0, 0.0, 0.5)
    ball = world.add_sphere(0.1, 2.0)
    ball.set_position([0.2, 0.1, 0.6])
    world.step(300)
    c = world.get_contacts(0)
    active = c.depths > -1e-9
    assert c.static[0] == "heightmap:0"
    np.testing.assert_allclose(c.positions[active][0], [0.2, 0.1, 0.5], atol=1e-6)
    assert np.sum(c.impulses[:, 2]) / world.dt == pytest.approx(2.0 * G, rel=1e-6)
    assert world.get_solver_sweeps(0) >= 1
