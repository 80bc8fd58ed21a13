"""Joint rows of the Gauss-Seidel sweep: position limits and Coulomb joint friction.

**Limits**: one unilateral row per limited joint near its limit.

A row of kind ``ROW_LIMIT`` acts on one dof ``d`` of a tree: its Jacobian is the unit vector ``e_d`` times
``sign`` (+1 at the lower limit, -1 at the upper), so its response is ``W = (M~^-1)_dd`` (``M~`` the step's
mass matrix with the implicit drive terms) and an impulse ``lambda >= 0`` changes the velocities by
``sign lambda M~^-1 e_d``. Like a contact, a limit is speculative: a joint ``gap`` away from its limit may
approach it by at most ``gap`` in the step (target ``sign u >= -gap / dt``), and a joint past it is pushed
back by ``erp`` of the part beyond ``slop`` per step, at most ``max_push``. The row stores: ``ROW_I.pair``
the joint row, ``ROW_I.slot`` its dof within the tree, ``ROW_I.side_a`` the sign, ``ROW_I.side_b`` the tree;
``ROW_F.delassus[0]`` W, ``ROW_F.target`` and ``ROW_F.impulse[0]``.

**Friction** (``ROW_JOINT_FRICTION``): one row per joint with Coulomb friction ``F`` (URDF ``<dynamics
friction>``, N m or N): a bounded row on ``e_d`` that drives the joint velocity to zero with an impulse
``|lambda| <= F dt``, so a joint stays still under less than ``F`` and is held back by exactly ``F`` while it
slides. Its ``ROW_F.target`` holds the bound ``F dt``.

**Responses**: once the step's factor is final (after the free velocities, where a drive at its effort
limit refactors), each joint row's dof gets its column ``M~^-1 e_d`` (``TREE_INVERSE``, row ``d`` of
the tree's nv x nv entries; already there where the factor came with all of ``M~^-1``) and the row its ``W``.

**One block per tree**: the sweep solves a tree's joint rows together. Their couplings are the entries of
``M~^-1`` between their dofs, so an inner projected Gauss-Seidel pass over that small dense block costs a
few multiply-adds per update (no solve with the factor); each sweep makes up to ``MAX_INNER`` passes, then
the tree's velocities take the block's impulse change through the stored columns. (Solving the block to
the sweep's tolerance, with up to 200 passes, took as many outer sweeps on the standing quadruped: what
remains slow there is the coupling of the joint rows with the contacts, not among themselves.)

**Warm starts**: both kinds start from their joint's impulse of the last step (``JOINT_STATE``), a friction
impulse clamped to this step's bound, a limit impulse kept only if it pushes from the same limit.
"""
import taichi as ti

from ..common.arrays import JOINT_F, JOINT_I, JOINT_STATE, ROW_F, ROW_I, TREE, TREE_INVERSE, TREE_STEP
from ..common.layout import JOINT_REVOLUTE, ROW_JOINT_FRICTION, ROW_LIMIT
from ..common.schema import add, get, put, row
from ..dynamics.tree_solve import tree_inverse_columns

#: the block solve keeps, per joint row, the row's velocity and its impulse change of the current sweep in
#: these (otherwise unused) entries of the row's Delassus block
_VELOCITY, _CHANGE = ROW_F.delassus + 1, ROW_F.delassus + 2
#: inner Gauss-Seidel passes over one tree's joint rows per sweep at most
MAX_INNER = 2


@ti.func
def _put_joint_row(D: ti.template(), e, r, kind, j, sign, t, target):
    """Write joint row ``r``: its kind, joint row ``j``, sign, tree ``t`` and target, with a zero impulse (its
    response comes with :func:`joint_row_responses`)."""
    put(D.row_i, e, r, ROW_I.kind, kind)
    put(D.row_i, e, r, ROW_I.slot, get(D.joint_i, e, j, JOINT_I.dof))
    put(D.row_i, e, r, ROW_I.pair, j)
    put(D.row_i, e, r, ROW_I.side_a, sign)
    put(D.row_i, e, r, ROW_I.side_b, t)
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
    return (get(D.row_i, e, r, ROW_I.side_b), get(D.row_i, e, r, ROW_I.slot),
            ti.cast(get(D.row_i, e, r, ROW_I.side_a), float))


@ti.func
def _push_dof(D: ti.template(), e, t, d, scale):
    """``u += scale M~^-1 e_d`` for tree ``t`` through the stored column."""
    tr = row(D.tree, e, t)
    nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    for i in range(nv):
        add(D.u_tree, e, u0 + i, 0, scale * get(D.tree_inverse, e, m0 + d * nv + i, TREE_INVERSE.inverse))


@ti.func
def joint_row_responses(D: ti.template(), e, r0, n):
    """Each joint row's dof column ``M~^-1 e_d`` with the step's final factor, and the row's ``W``: the
    rows of a tree four at a time (:func:`~..dynamics.tree_solve.tree_inverse_columns`; a group of fewer repeats
    its last dof)."""
    r = r0
    while r < r0 + n:
        t, d, _sign = _row_dof(D, e, r)
        count = 1
        while count < 4 and r + count < r0 + n and get(D.row_i, e, r + count, ROW_I.side_b) == t:
            count += 1
        dofs = ti.Vector([d, d, d, d])
        for a in ti.static(range(1, 4)):
            dofs[a] = get(D.row_i, e, r + ti.min(a, count - 1), ROW_I.slot)
        if get(D.tree_step, e, t, TREE_STEP.inverse) == 0:  # (else the factor came with all of M~^-1)
            tree_inverse_columns(D, e, t, dofs)
        nv, m0 = get(D.tree, e, t, TREE.nv), get(D.tree, e, t, TREE.matrix0)
        for k in range(count):
            dk = get(D.row_i, e, r + k, ROW_I.slot)
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
def _solve_block(D: ti.template(), e, ra, rb, tolerance):
    """Rows ``ra .. rb`` (one tree's joint rows) solved together: inner Gauss-Seidel passes on their velocities
    through the block of ``M~^-1`` until no row's velocity changes by more than ``tolerance`` (at most
    ``MAX_INNER`` passes), then the tree's velocities take the impulse changes. Returns the sweep's two
    convergence measures (``step.sweep_rows``): the largest velocity change ``W |delta lambda|`` of a row
    over the whole block solve, and the largest change of a row's velocity since the last sweep."""
    t, _d, _s = _row_dof(D, e, ra)
    tr = row(D.tree, e, t)
    u0, nv, m0 = tr[TREE.u0], tr[TREE.nv], tr[TREE.matrix0]
    net = 0.0
    for r in range(ra, rb):
        _t, d, sign = _row_dof(D, e, r)
        v = sign * get(D.u_tree, e, u0 + d, 0)
        net = ti.max(net, ti.abs(v - get(D.row_f, e, r, ROW_F.seen)))
        put(D.row_f, e, r, ROW_F.seen, v)
        put(D.row_f, e, r, _VELOCITY, v)
        put(D.row_f, e, r, _CHANGE, 0.0)
    passes = 0
    largest = tolerance + 1.0
    while passes < MAX_INNER and largest > tolerance:
        passes += 1
        largest = 0.0
        for r in range(ra, rb):
            lam = get(D.row_f, e, r, ROW_F.impulse)
            new = _row_law(D, e, r, lam, get(D.row_f, e, r, _VELOCITY))
            if new != lam:
                delta = new - lam
                put(D.row_f, e, r, ROW_F.impulse, new)
                add(D.row_f, e, r, _CHANGE, delta)
                _t, dr, sr = _row_dof(D, e, r)
                for s in range(ra, rb):
                    _t2, ds, ss = _row_dof(D, e, s)
                    add(D.row_f, e, s, _VELOCITY,
                        ss * sr * delta * get(D.tree_inverse, e, m0 + dr * nv + ds, TREE_INVERSE.inverse))
                largest = ti.max(largest, get(D.row_f, e, r, ROW_F.delassus) * ti.abs(delta))
    change = 0.0
    for r in range(ra, rb):
        delta = get(D.row_f, e, r, _CHANGE)
        if delta != 0.0:
            _t, d, sign = _row_dof(D, e, r)
            _push_dof(D, e, t, d, sign * delta)
            change = ti.max(change, get(D.row_f, e, r, ROW_F.delassus) * ti.abs(delta))
    return change, net


@ti.func
def solve_joint_rows(D: ti.template(), e, r0, n, tolerance):
    """One sweep's update of the joint rows ``r0 .. r0 + n`` (in tree order), one block per tree; returns the
    sweep's two convergence measures over them (:func:`_solve_block`)."""
    largest = 0.0
    net = 0.0
    ra = r0
    while ra < r0 + n:
        t = get(D.row_i, e, ra, ROW_I.side_b)
        rb = ra + 1
        while rb < r0 + n and get(D.row_i, e, rb, ROW_I.side_b) == t:
            rb += 1
        block_largest, block_net = _solve_block(D, e, ra, rb, tolerance)
        largest = ti.max(largest, block_largest)
        net = ti.max(net, block_net)
        ra = rb
    return largest, net


@ti.func
def warm_start_joint_rows(D: ti.template(), e, r0, n, on):
    """Joint rows ``r0 .. r0 + n`` start from their joint's impulse of the last step (``on`` != 0), applied
    to the tree's velocities."""
    for r in range(r0, r0 + n):
        ri = row(D.row_i, e, r)
        j = ri[ROW_I.pair]
        t, d, sign = _row_dof(D, e, r)
        lam = 0.0
        if on != 0:
            if ri[ROW_I.kind] == ROW_LIMIT:
                lam = ti.max(0.0, sign * get(D.joint_state, e, j, JOINT_STATE.limit))
            else:
                bound = get(D.row_f, e, r, ROW_F.target)
                lam = ti.min(ti.max(get(D.joint_state, e, j, JOINT_STATE.friction), -bound), bound)
        if lam != 0.0:
            _push_dof(D, e, t, d, sign * lam)
        put(D.row_f, e, r, ROW_F.impulse, lam)


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
            put(D.joint_state, e, ri[ROW_I.pair], JOINT_STATE.limit, ti.cast(ri[ROW_I.side_a], float) * lam)
        else:
            put(D.joint_state, e, ri[ROW_I.pair], JOINT_STATE.friction, lam)
