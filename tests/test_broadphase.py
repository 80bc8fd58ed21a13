"""The shape-shape broadphase: which pairs it finds, its table and pool limits, and what stays exact
(replays, batch invariance, per-material-pair properties) now that pairs are found every step."""
import itertools

import numpy as np
import pytest

import taichi_terra as tt


def _scatter(n, n_envs, seed, extent=1.0, max_pairs=None, max_contacts=None):
    """``n`` bodies of every shape, at random poses and velocities, without gravity."""
    rng = np.random.default_rng(seed)
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0), n_envs=n_envs, max_shape_pairs=max_pairs,
                     max_shape_contacts=max_contacts)
    adders = [lambda: world.add_sphere(0.05, 1.0), lambda: world.add_box(0.1, 0.06, 0.08, 1.0),
              lambda: world.add_capsule(0.03, 0.1, 1.0), lambda: world.add_cylinder(0.04, 0.06, 1.0)]
    bodies = [adders[k % 4]() for k in range(n)]
    for b in bodies:
        b.set_position(rng.uniform(-extent, extent, (n_envs, 3)))
        b.set_linear_velocity(rng.uniform(-3.0, 3.0, (n_envs, 3)))
        b.set_angular_velocity(rng.uniform(-10.0, 10.0, (n_envs, 3)))
    return world, bodies


def _brute_force_pairs(world, bodies, env):
    """Every pair whose bounding spheres, grown by the contact margin and by one step of each body's
    motion (|v| + |w| r) dt, overlap: the broadphase's documented rule, tested pair by pair."""
    margin, dt = world.solver.contact_margin, world.dt
    reach = []
    for b in bodies:
        r = b.shape.bounding_radius
        speed = np.linalg.norm(b.get_linear_velocity(env)) + np.linalg.norm(b.get_angular_velocity(env)) * r
        reach.append((b.get_position(env), r + 0.5 * margin + dt * speed))
    return [(i, j) for i, j in itertools.combinations(range(len(bodies)), 2)
            if np.linalg.norm(reach[i][0] - reach[j][0]) < reach[i][1] + reach[j][1]]


def test_broadphase_finds_exactly_the_pairs_all_pairs_testing_finds():
    """Reference: the all-pairs test of grown bounding spheres. 60 bodies scattered in a 0.6 m cube, in 3
    envs with different layouts: the sort-and-sweep pairs equal the all-pairs ones, sorted, in every env."""
    world, bodies = _scatter(60, 3, seed=7, extent=0.3)
    expected = [_brute_force_pairs(world, bodies, e) for e in range(3)]
    world.step()
    for e in range(3):
        got = [tuple(p) for p in world.get_shape_pairs(e).tolist()]
        assert got == expected[e]
        assert len(got) > 30  # dense enough that the sweep skips and finds many
    assert world.get_pair_overflow(None).tolist() == [0, 0, 0]


def test_broadphase_follows_the_bodies_as_they_move():
    """Reference: the same all-pairs test, step after step, while the bodies fly through each other (the
    sort order is repaired from the last step's order)."""
    world, bodies = _scatter(40, 1, seed=3, extent=0.25)
    for _ in range(5):
        expected = _brute_force_pairs(world, bodies, 0)
        assert len(expected) >= 20  # (the bodies still overlap: 54 pairs down to 25 when measured)
        world.step(1)
        assert [tuple(p) for p in world.get_shape_pairs(0).tolist()] == expected
        world.step(29)


def test_full_pair_table_keeps_the_lowest_pairs_and_counts_the_rest():
    """A table of 5 pairs for 8 spheres packed in a row of touching neighbours plus one cluster: the 5 pairs
    of lowest body indices are kept, the others counted as dropped."""
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0), max_shape_pairs=5)
    balls = [world.add_sphere(0.05, 1.0) for _ in range(8)]
    for k, b in enumerate(balls):
        b.set_position([0.1 * k, 0.0, 0.0])  # neighbours touch: 7 pairs
    world.step()
    assert world.get_shape_pairs(0).tolist() == [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]
    assert world.get_pair_overflow(0) == 2
    assert world.max_shape_pairs == 5


def test_full_contact_pool_counts_the_contacts_it_drops():
    """A box resting on a box has four contacts; a pool of two keeps two and reports two dropped."""
    world = tt.World(dt=1e-3, max_shape_contacts=2)
    world.add_ground()
    base = world.add_box(0.4, 0.4, 0.2, 2.0)
    base.set_position([0.0, 0.0, 0.1])
    top = world.add_box(0.2, 0.2, 0.2, 1.0)
    top.set_position([0.0, 0.0, 0.3])
    world.step()
    c = world.get_contacts(0)
    assert sum(1 for a, b in zip(c.body_a, c.body_b) if (a, b) == (1, 0)) == 2
    assert world.get_contact_overflow(0) == 2


def test_default_limits_grow_linearly_with_the_bodies():
    """Thirteen pairs per body by default (a packed pile of cubes) and four contacts per pair: 200 boxes
    need 2600 pairs and 10,400 slots per env, not the 19,900 pairs x 17 slots of all-pairs slots."""
    world = tt.World(dt=1e-3)
    for k in range(200):
        world.add_box(0.1, 0.1, 0.1, 1.0).set_position([0.2 * k, 0.0, 1.0])
    world.build()
    assert world.max_shape_pairs == 2600
    assert world.max_shape_contacts == 4 * 2600
    small = tt.World(dt=1e-3)
    for _ in range(3):
        small.add_sphere(0.1, 1.0)
    small.build()
    assert small.max_shape_pairs == 3  # never more than the pairs there are
    assert small.max_shape_contacts == 4 * 3


def test_pile_replays_and_batches_bit_for_bit():
    """Reference: determinism and env independence with pairs appearing and vanishing every step. 24 boxes
    and spheres fall into a heap: restoring a checkpoint replays the heap exactly, and a batch of 2 envs
    equals two single-env worlds."""
    def heap(n_envs, seeds):
        world = tt.World(dt=2e-3, n_envs=n_envs)
        world.add_ground()
        bodies = [world.add_box(0.1, 0.08, 0.06, 1.0) if k % 2 else world.add_sphere(0.04, 0.5)
                  for k in range(24)]
        for e, seed in enumerate(seeds):
            rng = np.random.default_rng(seed)
            for b in bodies:
                b.set_position(rng.uniform([-0.15, -0.15, 0.05], [0.15, 0.15, 0.6]), env=e)
        return world, bodies

    world, bodies = heap(2, [11, 12])
    world.step(150)
    cp = world.checkpoint()
    world.step(100)
    first = np.array([b.get_position() for b in bodies])
    pairs = world.get_shape_pairs(1)
    assert len(pairs) > 20
    world.restore(cp)
    world.step(100)
    np.testing.assert_array_equal(np.array([b.get_position() for b in bodies]), first)
    np.testing.assert_array_equal(world.get_shape_pairs(1), pairs)
    for e, seed in enumerate([11, 12]):
        single, sb = heap(1, [seed])
        single.step(250)
        np.testing.assert_array_equal(np.array([b.get_position(0) for b in sb]), first[:, e])


def test_material_pair_properties_reach_shape_pairs():
    """Reference: Coulomb friction. A block on a plank pulled by a horizontal force of 0.3 m g: with the
    pair's friction 0.5 it sticks; with friction 0 between the two materials (and 0.5 for everything else)
    it accelerates at F / m = 0.3 g relative to the plank, which is held by the ground."""
    def slide(mu):
        world = tt.World(dt=1e-3)
        world.set_material_pair_prop("block", "plank", mu, 0.0)
        world.set_default_material(0.5, 0.0)
        world.add_ground()
        plank = world.add_box(2.0, 0.5, 0.1, 50.0, material="plank")
        plank.set_position([0.0, 0.0, 0.05])
        block = world.add_box(0.2, 0.2, 0.2, 1.0, material="block")
        block.set_position([0.0, 0.0, 0.2])
        world.step(100)
        block.set_external_force([0.3 * 9.81, 0.0, 0.0])
        v0 = block.get_linear_velocity(0)[0] - plank.get_linear_velocity(0)[0]
        world.step(200)
        return (block.get_linear_velocity(0)[0] - plank.get_linear_velocity(0)[0] - v0) / 0.2

    assert abs(slide(0.5)) < 1e-6
    assert slide(0.0) == pytest.approx(0.3 * 9.81, rel=0.02)


def test_warm_starts_find_last_steps_shape_pairs():
    """Reference: a resting stack is its own best starting guess. A stack of 5 boxes at rest, warm started
    from the impulses the pair tables carry over from the last step, settles in fewer than half the sweeps
    it needs started cold, where it takes most of the 100-sweep budget every step (so a lookup that missed
    last step's pairs would show). (Warm started it still takes 2 to 100 sweeps, 27 on average: the load's
    split among the boxes' corners creeps, at about 0.9975 a sweep, and its velocity changes hover around
    the tolerance; docs/physics/solver.md.)"""
    sweeps = {}
    for warm in (True, False):
        world = tt.World(dt=1e-3, solver=tt.SolverConfig(warm_start=warm))
        world.add_ground()
        for k in range(5):
            world.add_box(0.2, 0.2, 0.2, 1.0).set_position([0.01 * k, 0.0, 0.1 + 0.2 * k])
        world.step(1000)
        used = []
        for _ in range(20):
            world.step(1)
            used.append(world.get_solver_sweeps(0))
        sweeps[warm] = np.mean(used)
        assert len(world.get_shape_pairs(0)) == 4
    assert sweeps[False] > 50
    assert sweeps[True] < 0.5 * sweeps[False]
