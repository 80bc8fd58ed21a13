"""Articulated systems on contacts: the quadruped standing on flat ground, a bumpy height map and soil; the
sweeps' stop near the converged solution; the contact block against the row-by-row solution; trimmed capsule
ends. Worlds of two envs, as in ``test_articulated.py``."""
import numpy as np
import pytest

import taichi_terra as tt
from helpers import STAND, block_saves_sweeps_to_the_row_by_row_solution, step_against_row_by_row
from test_articulated import DATA, G, _link_urdf


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
    world.step(100)
    block_saves_sweeps_to_the_row_by_row_solution(world, system, 200, (1, 150, 250), 10 * world.solver.tolerance)


def test_contact_block_gives_way_where_a_slipping_foot_makes_it_cycle():
    """Reference: the converged row-by-row solution of the same step (tolerance 1e-13). In the walking scene
    a foot slips at 0.465 s while two others stick; solving the sticking two together in every sweep then
    cycled (after 200,000 sweeps a knee was still 1.6 rad/s off), since Coulomb friction is not a
    minimization. Once a sweep's net velocity change stops shrinking, the step goes on row by row, and the
    block's step converges to the same solution (to 1e-9) in about as many sweeps as the rows' own."""
    import types

    from scenes import quadruped_terrain as scene

    built = scene.build(types.SimpleNamespace(envs=2))
    world, robot = built.world, built.world.articulated_systems[0]
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
