"""Joint rows of the Gauss-Seidel sweep: position limits and Coulomb joint friction.

**Limits**: one unilateral row per limited joint near its limit.

A row of kind ``ROW_LIMIT`` acts on one dof ``d`` of a tree: its Jacobian is the unit vector ``e_d`` times
``sign`` (+1 at the lower limit, -1 at the upper), so its response is ``W = (M~^-1)_dd`` (``M~`` the step's
mass matrix with the implicit drive terms) and an impulse ``lambda >= 0`` changes the velocities by
``sign lambda M~^-1 e_d``. Like a contact, a limit is speculative: a joint ``gap`` away from its limit may
approach it by at most ``gap`` in the step (target ``sign u >= -gap / dt``), and a joint past it is pushed
back by ``erp`` of the part beyond ``slop`` per step, at most ``max_push``. The row stores (``JOINT_ROW``, the
joint rows' names for ``ROW_I``'s columns): its joint row, its dof within the tree, the sign and the tree;
``ROW_F.delassus[0]`` W, ``ROW_F.target`` and ``ROW_F.impulse[0]``.

**Friction** (``ROW_JOINT_FRICTION``): one row per joint with Coulomb friction ``F`` (URDF ``<dynamics
friction>``, N m or N): a bounded row on ``e_d`` that drives the joint velocity to zero with an impulse
``|lambda| <= F dt``, so a joint stays still under less than ``F`` and is held back by exactly ``F`` while it
slides. Its ``ROW_F.target`` holds the bound ``F dt``.

**Responses**: once the step's factor is final (after the free velocities, where a drive at its effort
limit refactors), each joint row's dof gets its column ``M~^-1 e_d`` (``TREE_INVERSE``, row ``d`` of
the tree's nv x nv entries; already there where the factor came with all of ``M~^-1``) and the row its ``W``.

**In the sweep**: each joint row in turn reads its dof's velocity from ``u`` and pushes its impulse change
through its stored column (nv multiply-adds). An inner Gauss-Seidel solve of a tree's joint rows on their
block of ``M~^-1`` was tried. With up to 200 inner passes per sweep the standing quadruped took as many outer
sweeps: what is slow there is the coupling of the joint rows with the contacts. With two passes it took
7.4 sweeps per step against 7.5 now, at a higher cost per sweep (the block's velocities tracked beside
``u``). Two strongly coupled joint rows alone (a double pendulum held by friction) take twice the sweeps
from a cold start (86 against 42), each doing half the work.

**Warm starts**: both kinds start from their joint's impulse of the last step (``JOINT_STATE``), a friction
impulse clamped to this step's bound, a limit impulse kept only if it pushes from the same limit.
"""
import taichi as ti

from ..common.arrays import (JOINT_F, JOINT_I, JOINT_ROW, JOINT_STATE, ROW_F, ROW_I, TREE, TREE_DOF, TREE_INVERSE,
                             TREE_STEP)
from ..common.layout import JOINT_REVOLUTE, ROW_JOINT_FRICTION, ROW_LIMIT
from ..common.schema import add, get, put, row
from ..dynamics.tree_solve import tree_inverse_columns

@ti.func
def _put_joint_row(D: ti.template(), e, r, kind, j, sign, t, target):
    """Write joint row ``r``: its kind, joint row ``j``, sign, tree ``t`` and target, with a zero impulse (its
    response comes with :func:`joint_row_responses`)."""
    put(D.row_i, e, r, ROW_I.kind, kind)
    put(D.row_i, e, r, JOINT_ROW.dof, get(D.joint_i, e, j, JOINT_I.dof))
    put(D.row_i, e, r, JOINT_ROW.joint, j)
    put(D.row_i, e, r, JOINT_ROW.sign, sign)
    put(D.row_i, e, r, JOINT_ROW.tree, t)
    put(D.row_i, e, r, ROW_I.impacted, 0)
    put(D.row_f, e, r, ROW_F.target, target)
    put(D.row_f, e, r, ROW_F.impulse, 0.0)


@ti.func
def build_joint_rows(D: ti.template(), e, r0, n_trees, dt, margin, slop, erp, max_push):
    """Rows from ``r0`` on, tree by tree: for every limited joint of env ``e`` within ``margin`` plus one step
    of its motion of its nearer limit, a limit row; for every joint with Coulomb friction, a friction row.
    Returns how many."""
    n = 0
    for t in range(n_trees):
        tr = row(D.tree, e, t)
        for k in range(tr[TREE.n_joints]):
            j = tr[TREE.joint0] + k
            limited, friction, sign, gap = joint_rows_of(D, e, j, dt, margin)
            if limited:
                target = -gap / dt
                if gap < 0.0:
                    target = ti.min(max_push, erp * ti.max(0.0, -gap - slop) / dt)
                _put_joint_row(D, e, r0 + n, ROW_LIMIT, j, sign, t, target)
                n += 1
            if friction:
                _put_joint_row(D, e, r0 + n, ROW_JOINT_FRICTION, j, 1, t,
                               get(D.joint_f, e, j, JOINT_F.friction) * dt)
                n += 1
    return n


@ti.func
def joint_rows_of(D: ti.template(), e, j, dt, margin):
    """Which rows joint row ``j`` takes this step: ``(limited, friction, sign, gap)``, a limit row when a
    limited 1-dof joint is within ``margin`` plus one step of its motion of its nearer limit (``sign`` +1 at
    the lower, -1 at the upper; ``gap`` [rad or m] to it), a friction row when it has Coulomb friction."""
    ji = row(D.joint_i, e, j)
    lower, upper = get(D.joint_f, e, j, JOINT_F.lower), get(D.joint_f, e, j, JOINT_F.upper)
    one_dof = ji[JOINT_I.type] >= JOINT_REVOLUTE
    limited = False
    sign, gap = 1, 0.0
    if one_dof and (lower > -1e30 or upper < 1e30):
        x = get(D.q_tree, e, ji[JOINT_I.q], 0)
        gap = x - lower
        if upper - x < gap:
            sign, gap = -1, upper - x
        limited = gap < margin + ti.abs(get(D.u_tree, e, ji[JOINT_I.u], 0)) * dt
    return limited, one_dof and get(D.joint_f, e, j, JOINT_F.friction) > 0.0, sign, gap


@ti.func
def _row_dof(D: ti.template(), e, r):
    """(tree, dof within the tree, sign) of joint row ``r``."""
    return (get(D.row_i, e, r, JOINT_ROW.tree), get(D.row_i, e, r, JOINT_ROW.dof),
            ti.cast(get(D.row_i, e, r, JOINT_ROW.sign), float))


@ti.func
def _push_dof(D: ti.template(), e, t, d, scale):
    """``u += scale M~^-1 e_d`` for tree ``t`` through the stored column."""
    tr = row(D.tree, e, t)
    nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    for i in range(nv):
        add(D.u_tree, e, u0 + i, 0, scale * get(D.tree_inverse, e, m0 + d * nv + i, TREE_INVERSE.inverse))
    if ti.static(D.has_pins):
        if get(D.tree_dof, e, u0 + d, TREE_DOF.held) != 0.0:  # (the pins' share is counted: solver/pin_block.py)
            add(D.tree_dof, e, u0 + d, TREE_DOF.pushed, scale)


@ti.func
def _group_of_four(D: ti.template(), e, r, end):
    """How many of the joint rows ``r ..`` (at most four, before ``end``) belong to row ``r``'s tree (a tree's
    rows are consecutive)."""
    t = get(D.row_i, e, r, JOINT_ROW.tree)
    count = 1
    while count < 4 and r + count < end and get(D.row_i, e, r + count, JOINT_ROW.tree) == t:
        count += 1
    return count


@ti.func
def joint_row_responses(D: ti.template(), e, r0, n):
    """Each joint row's dof column ``M~^-1 e_d`` with the step's final factor, and the row's ``W``: the
    rows of a tree four at a time (:func:`~..dynamics.tree_solve.tree_inverse_columns`; a group of fewer repeats
    its last dof)."""
    r = r0
    while r < r0 + n:
        t, d, _sign = _row_dof(D, e, r)
        count = _group_of_four(D, e, r, r0 + n)
        dofs = ti.Vector([d, d, d, d])
        for a in ti.static(range(1, 4)):
            dofs[a] = get(D.row_i, e, r + ti.min(a, count - 1), JOINT_ROW.dof)
        if get(D.tree_step, e, t, TREE_STEP.inverse) == 0:  # (else the factor came with all of M~^-1)
            tree_inverse_columns(D, e, t, dofs)
        nv, m0 = get(D.tree, e, t, TREE.nv), get(D.tree, e, t, TREE.matrix0)
        for k in range(count):
            dk = get(D.row_i, e, r + k, JOINT_ROW.dof)
            put(D.row_f, e, r + k, ROW_F.delassus, get(D.tree_inverse, e, m0 + dk * nv + dk, TREE_INVERSE.inverse))
        r += count


@ti.func
def _row_law(D: ti.template(), e, r, lam, v):
    """The impulse joint row ``r`` takes at velocity ``v`` (along its sign) from ``lam``: a limit,
    ``max(0, lambda + (target - v) / W)``; friction, ``clamp(lambda - v / W, -F dt, F dt)``."""
    w = get(D.row_f, e, r, ROW_F.delassus)
    target = get(D.row_f, e, r, ROW_F.target)
    new = ti.min(ti.max(lam - v / w, -target), target)
    if get(D.row_i, e, r, ROW_I.kind) == ROW_LIMIT:
        new = ti.max(0.0, lam + (target - v) / w)
    return new


@ti.func
def solve_joint_rows(D: ti.template(), e, r0, n):
    """One sweep's update of the joint rows ``r0 .. r0 + n``: each row in turn takes the impulse its law gives
    at its dof's current velocity and pushes the change through its column of ``M~^-1``. Returns the sweep's
    two convergence measures over them (``sweep.sweep_rows``): the largest velocity change ``W |delta lambda|``
    a row's update made, and the largest change of a row's velocity since the last sweep reached it."""
    largest = 0.0
    net = 0.0
    for r in range(r0, r0 + n):
        t, d, sign = _row_dof(D, e, r)
        v = sign * get(D.u_tree, e, get(D.tree, e, t, TREE.u0) + d, 0)
        net = ti.max(net, ti.abs(v - get(D.row_f, e, r, ROW_F.seen)))
        put(D.row_f, e, r, ROW_F.seen, v)
        lam = get(D.row_f, e, r, ROW_F.impulse)
        new = _row_law(D, e, r, lam, v)
        if new != lam:
            put(D.row_f, e, r, ROW_F.impulse, new)
            _push_dof(D, e, t, d, sign * (new - lam))
            largest = ti.max(largest, get(D.row_f, e, r, ROW_F.delassus) * ti.abs(new - lam))
    return largest, net


@ti.func
def _push_dofs(D: ti.template(), e, t, dofs, pushes):
    """``u += sum_a pushes[a] M~^-1 e_{dofs[a]}`` for tree ``t`` through the stored columns, in one pass
    (nothing where every push is zero)."""
    if pushes.norm_sqr() > 0.0:
        tr = row(D.tree, e, t)
        nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
        for i in range(nv):
            acc = 0.0
            for a in ti.static(range(4)):
                acc += pushes[a] * get(D.tree_inverse, e, m0 + dofs[a] * nv + i, TREE_INVERSE.inverse)
            add(D.u_tree, e, u0 + i, 0, acc)
        for a in ti.static(range(4)):
            if get(D.tree_dof, e, u0 + dofs[a], TREE_DOF.held) != 0.0:
                add(D.tree_dof, e, u0 + dofs[a], TREE_DOF.pushed, pushes[a])


@ti.func
def warm_start_joint_rows(D: ti.template(), e, r0, n, on):
    """Joint rows ``r0 .. r0 + n`` start from their joint's impulse of the last step (``on`` != 0), applied
    to the tree's velocities four rows at a time (a tree's rows are consecutive): one pass over its
    velocities per four columns of ``M~^-1``, not one per row."""
    r = r0
    while r < r0 + n:
        t = get(D.row_i, e, r, JOINT_ROW.tree)
        count = _group_of_four(D, e, r, r0 + n)
        dofs = ti.Vector([0, 0, 0, 0])
        pushes = ti.Vector([0.0, 0.0, 0.0, 0.0])  # (zero past the group's rows)
        for a in ti.static(range(4)):
            if a < count:
                ri = row(D.row_i, e, r + a)
                _t, d, sign = _row_dof(D, e, r + a)
                lam = 0.0
                if on != 0:
                    if ri[ROW_I.kind] == ROW_LIMIT:
                        lam = ti.max(0.0, sign * get(D.joint_state, e, ri[JOINT_ROW.joint], JOINT_STATE.limit))
                    else:
                        bound = get(D.row_f, e, r + a, ROW_F.target)
                        lam = ti.min(ti.max(get(D.joint_state, e, ri[JOINT_ROW.joint], JOINT_STATE.friction), -bound),
                                     bound)
                put(D.row_f, e, r + a, ROW_F.impulse, lam)
                dofs[a], pushes[a] = d, sign * lam
        _push_dofs(D, e, t, dofs, pushes)
        r += count


@ti.func
def store_joint_rows(D: ti.template(), e, r0, n, n_trees):
    """Every joint's impulses of this step (zero where it had no row), for the next step's warm start."""
    for t in range(n_trees):
        tr = row(D.tree, e, t)
        for k in range(tr[TREE.n_joints]):
            put(D.joint_state, e, tr[TREE.joint0] + k, JOINT_STATE.limit, 0.0)
            put(D.joint_state, e, tr[TREE.joint0] + k, JOINT_STATE.friction, 0.0)
    for r in range(r0, r0 + n):
        ri = row(D.row_i, e, r)
        lam = get(D.row_f, e, r, ROW_F.impulse)
        if ri[ROW_I.kind] == ROW_LIMIT:
            put(D.joint_state, e, ri[JOINT_ROW.joint], JOINT_STATE.limit, ti.cast(ri[JOINT_ROW.sign], float) * lam)
        else:
            put(D.joint_state, e, ri[JOINT_ROW.joint], JOINT_STATE.friction, lam)
