"""Joint rows of the Gauss-Seidel sweep: position limits and Coulomb joint friction.

**Limits**: one unilateral row per limited joint near its limit.

A row of kind ``ROW_LIMIT`` acts on one dof ``d`` of a tree: its Jacobian is the unit vector ``e_d`` times
``sign`` (+1 at the lower limit, -1 at the upper), so its response is ``W = (M~^-1)_dd`` (``M~`` the step's
mass matrix with the implicit drive terms) and an impulse ``lambda >= 0`` changes the velocities by
``sign lambda M~^-1 e_d``. Like a contact, a limit is speculative: a joint ``gap`` away from its limit may
approach it by at most ``gap`` in the step (target ``sign u >= -gap / dt``), and a joint past it is pushed
back by ``erp`` of the part beyond ``slop`` per step, at most ``max_push``. The row stores: ``ROW_I.pair``
the joint row, ``ROW_I.side_a`` the sign, ``ROW_I.side_b`` the tree; ``ROW_F.delassus[0]`` W, ``ROW_F.target``
and ``ROW_F.impulse[0]``.

**Friction** (``ROW_JOINT_FRICTION``): one row per joint with Coulomb friction ``F`` (URDF ``<dynamics
friction>``, N m or N): a bounded row on ``e_d`` that drives the joint velocity to zero with an impulse
``|lambda| <= F dt``, so a joint stays still under less than ``F`` and is held back by exactly ``F`` while it
slides. Its ``ROW_F.target`` holds the bound ``F dt``.
"""
import taichi as ti

from ..common.arrays import JOINT_F, JOINT_I, ROW_F, ROW_I, TREE, TREE_DOF
from ..common.layout import JOINT_REVOLUTE, ROW_JOINT_FRICTION, ROW_LIMIT
from ..common.schema import get, put, row
from ..dynamics.tree import add_workspace_to_velocities, clear_workspace, tree_solve


@ti.func
def _unit_response(D: ti.template(), e, t, d, scale):
    """The tree's workspace <- ``scale M~^-1 e_d``."""
    clear_workspace(D, e, t)
    put(D.tree_dof, e, get(D.tree, e, t, TREE.u0) + d, TREE_DOF.rhs, scale)
    tree_solve(D, e, t)


@ti.func
def _put_joint_row(D: ti.template(), e, r, kind, j, sign, t, target):
    """Write joint row ``r``: its kind, joint row ``j``, sign, tree ``t``, response ``W = (M~^-1)_dd`` and
    target, with a zero impulse."""
    ji = row(D.joint_i, e, j)
    _unit_response(D, e, t, ji[JOINT_I.dof], 1.0)
    put(D.row_i, e, r, ROW_I.kind, kind)
    put(D.row_i, e, r, ROW_I.slot, -1)
    put(D.row_i, e, r, ROW_I.pair, j)
    put(D.row_i, e, r, ROW_I.side_a, sign)
    put(D.row_i, e, r, ROW_I.side_b, t)
    put(D.row_i, e, r, ROW_I.impacted, 0)
    put(D.row_f, e, r, ROW_F.delassus, get(D.tree_dof, e, get(D.tree, e, t, TREE.u0) + ji[JOINT_I.dof], TREE_DOF.rhs))
    put(D.row_f, e, r, ROW_F.target, target)
    put(D.row_f, e, r, ROW_F.impulse, 0.0)


@ti.func
def build_joint_rows(D: ti.template(), e, r0, n_trees, dt, margin, slop, erp, max_push):
    """Rows from ``r0`` on: for every limited joint of env ``e`` within ``margin`` plus one step of its motion
    of its nearer limit, a limit row; for every joint with Coulomb friction, a friction row. Returns how
    many."""
    n = 0
    for t in range(n_trees):
        tr = row(D.tree, e, t)
        for k in range(tr[TREE.n_joints]):
            j = tr[TREE.joint0] + k
            ji = row(D.joint_i, e, j)
            lower, upper = get(D.joint_f, e, j, JOINT_F.lower), get(D.joint_f, e, j, JOINT_F.upper)
            if ji[JOINT_I.type] >= JOINT_REVOLUTE and (lower > -1e30 or upper < 1e30):
                x = get(D.q_tree, e, ji[JOINT_I.q], 0)
                sign, gap = 1, x - lower
                if upper - x < gap:
                    sign, gap = -1, upper - x
                if gap < margin + ti.abs(get(D.u_tree, e, ji[JOINT_I.u], 0)) * dt:
                    target = -gap / dt
                    if gap < 0.0:
                        target = ti.min(max_push, erp * ti.max(0.0, -gap - slop) / dt)
                    _put_joint_row(D, e, r0 + n, ROW_LIMIT, j, sign, t, target)
                    n += 1
            friction = get(D.joint_f, e, j, JOINT_F.friction)
            if ji[JOINT_I.type] >= JOINT_REVOLUTE and friction > 0.0:
                _put_joint_row(D, e, r0 + n, ROW_JOINT_FRICTION, j, 1, t, friction * dt)
                n += 1
    return n


@ti.func
def solve_joint_row(D: ti.template(), e, r):
    """One Gauss-Seidel update of joint row ``r``: a limit, ``lambda = max(0, lambda + (target - sign u_d) /
    W)``; friction, ``lambda = clamp(lambda - u_d / W, -F dt, F dt)``. Returns the velocity change
    ``W |delta lambda|`` (the sweep's convergence measure)."""
    ri = row(D.row_i, e, r)
    j, t = ri[ROW_I.pair], ri[ROW_I.side_b]
    sign = ti.cast(ri[ROW_I.side_a], float)
    ji = row(D.joint_i, e, j)
    w = get(D.row_f, e, r, ROW_F.delassus)
    lam = get(D.row_f, e, r, ROW_F.impulse)
    v = sign * get(D.u_tree, e, ji[JOINT_I.u], 0)
    target = get(D.row_f, e, r, ROW_F.target)
    new = 0.0
    if ri[ROW_I.kind] == ROW_LIMIT:
        new = ti.max(0.0, lam + (target - v) / w)
    else:
        new = ti.min(ti.max(lam - v / w, -target), target)
    change = 0.0
    if new != lam:
        _unit_response(D, e, t, ji[JOINT_I.dof], sign * (new - lam))
        add_workspace_to_velocities(D, e, t, 1.0)
        put(D.row_f, e, r, ROW_F.impulse, new)
        change = w * ti.abs(new - lam)
    return change
