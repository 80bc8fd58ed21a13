"""The tree solves (``kernels/dynamics/tree_solve.py``): the step matrix's inverse and the links' response
columns against numpy, the dof structure of a branched tree, the sparse factor's solves. Worlds of two envs,
as in ``test_articulated.py``."""
import re

import numpy as np
import pytest

import taichi_terra as tt
from helpers import STAND
from test_articulated import DATA
from test_articulated_contacts import _standing_quadruped


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
