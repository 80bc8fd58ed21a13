"""Solving with a tree's step matrix ``M~ = M + dt (K_d + D) + dt^2 K_p`` (the mass matrix with the implicit
drive and damping terms, ``dynamics/tree.py``): ``M~ x = b`` for the velocity update and ``M~^-1`` columns
for the solver rows.

- Where rows act on the tree this step: the factor ``M~ = U U^T`` (``tree_factor``; ``U`` upper
  triangular, eliminated from the leaves so that it is as sparse as the tree makes ``M``) and its solves:
  one right-hand side in the per-dof workspace (``tree_solve``), a link's six response columns
  (``tree_solve_columns``), four unit columns for joint rows (``tree_inverse_columns``); or, where the rows
  need many columns, all of ``M~^-1`` at once (``tree_full_inverse``).
- Otherwise: the articulated-body algorithm (``tree_solve_articulated``), O(links) without forming ``M``.

Both read the same ground coordinates as the rest of the tree code (world axes about the root's origin).
"""
import taichi as ti

from ..common.arrays import (
    DOF_I,
    DRIVE,
    FRAME,
    JOINT_F,
    JOINT_I,
    LINK_DYN,
    LINK_RESPONSE,
    TREE,
    TREE_DOF,
    TREE_FACTOR,
    TREE_INVERSE,
    TREE_MASS,
    TREE_STEP,
)
from ..common.layout import JOINT_FIXED_ROOT, JOINT_FLOATING, JOINT_REVOLUTE
from ..common.math import skew, tiny, upper_solve6
from ..common.schema import add, get, get3, get33, getn, put, putn, row

vec6 = ti.types.vector(6, float)


@ti.func
def _implicit_diagonal(D: ti.template(), e, j, d, dt):
    """What the implicit drive and damping of 1-dof joint row ``j`` (its dof's row ``d`` in the per-dof
    blocks) add to the diagonal of ``M~``: ``dt (D + K_d) + dt^2 K_p``, the gains left out while the drive is
    held at its effort limit (then a constant force)."""
    extra = dt * get(D.joint_f, e, j, JOINT_F.damping)
    if get(D.tree_dof, e, d, TREE_DOF.saturated) == 0.0:
        extra += dt * get(D.drive, e, d, DRIVE.kd) + dt * dt * get(D.drive, e, d, DRIVE.kp)
    return extra


@ti.func
def _end(D: ti.template(), e, u0, d):
    """One past the last dof of the subtree dof ``d`` moves: the last column of row ``d`` of ``U``, + 1."""
    return get(D.dof_i, e, u0 + d, DOF_I.end)


@ti.func
def _run_above(D: ti.template(), e, u0, lo):
    """The run of ancestors next above the run that starts at dof ``lo``, as ``(first, one past the last)``;
    ``(0, 0)`` at the root. Walking up from ``(run of i, i)`` visits every ancestor of ``i`` once."""
    up = get(D.dof_i, e, u0 + lo, DOF_I.up)
    first = 0
    if up >= 0:
        first = get(D.dof_i, e, u0 + up, DOF_I.run)
    return first, up + 1


@ti.func
def tree_factor(D: ti.template(), e, t, dt):
    """The factor ``U`` of ``M~ = U U^T``, ``M~ = M + dt (K_d + D) + dt^2 K_p`` for tree ``t`` (``D`` the
    joint damping; a drive held at its effort limit this step adds no ``K_d``, ``K_p`` terms), ``U`` upper
    triangular with row ``i`` nonzero only over the dofs of the subtree ``i`` moves (``DOF_I.end``). Marks
    the links' response columns (``LINK_RESPONSE``) stale; where ``TREE_STEP.inverse`` is set, also forms
    all of ``M~^-1`` (:func:`tree_full_inverse`).

    Eliminating from the leaves (the last dof first) keeps ``U`` as sparse as ``M``: ``M_ij`` is nonzero
    only where one of ``i``, ``j`` is an ancestor of the other, and so is ``U_ij`` (Featherstone's ``L^T L``
    factor, *Rigid Body Dynamics Algorithms* ch. 6.5, with ``U = L^T``). Column ``i`` of ``U`` is found once
    the columns of ``i``'s descendants are: ``U_ii^2 = M~_ii - sum_k U_ik^2`` and ``U_ji = (M~_ji - sum_k
    U_jk U_ik) / U_ii`` for each ancestor ``j``, the sums over the descendants ``k`` of ``i`` (consecutive
    dofs); the ancestors' sums are independent chains of additions. With a floating base and four three-dof
    legs that is about 470 multiply-adds instead of the dense factor's 970."""
    tr = row(D.tree, e, t)
    j0, nv, m0, u0 = tr[TREE.joint0], tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    for i in range(nv):  # (the entries past the diagonal start from M's lower triangle when reached)
        put(D.tree_factor, e, m0 + i * nv + i, TREE_FACTOR.factor, get(D.tree_mass, e, m0 + i * nv + i, TREE_MASS.mass))
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, j0 + k)
        if ji[JOINT_I.type] >= JOINT_REVOLUTE:
            d = ji[JOINT_I.dof]
            add(D.tree_factor, e, m0 + d * nv + d, TREE_FACTOR.factor, _implicit_diagonal(D, e, j0 + k, u0 + d, dt))
    for ii in range(nv):
        i = nv - 1 - ii
        ri, ei = m0 + i * nv, _end(D, e, u0, i)
        s = get(D.tree_factor, e, ri + i, TREE_FACTOR.factor)
        for k in range(i + 1, ei):
            s -= get(D.tree_factor, e, ri + k, TREE_FACTOR.factor) ** 2
        diag = ti.sqrt(ti.max(s, ti.static(tiny())))
        put(D.tree_factor, e, ri + i, TREE_FACTOR.factor, diag)
        inv = 1.0 / diag  # (one division: a product per entry instead)
        lo, hi = get(D.dof_i, e, u0 + i, DOF_I.run), i
        while hi > 0:  # the ancestors, one run of consecutive dofs [lo, hi) at a time
            j = lo
            while j + 4 <= hi:  # four at once: four independent chains of additions (1.5x at 60 dofs)
                r0, r1, r2, r3 = m0 + j * nv, m0 + (j + 1) * nv, m0 + (j + 2) * nv, m0 + (j + 3) * nv
                s0 = get(D.tree_mass, e, ri + j, TREE_MASS.mass)
                s1 = get(D.tree_mass, e, ri + j + 1, TREE_MASS.mass)
                s2 = get(D.tree_mass, e, ri + j + 2, TREE_MASS.mass)
                s3 = get(D.tree_mass, e, ri + j + 3, TREE_MASS.mass)
                for k in range(i + 1, ei):
                    uik = get(D.tree_factor, e, ri + k, TREE_FACTOR.factor)
                    s0 -= get(D.tree_factor, e, r0 + k, TREE_FACTOR.factor) * uik
                    s1 -= get(D.tree_factor, e, r1 + k, TREE_FACTOR.factor) * uik
                    s2 -= get(D.tree_factor, e, r2 + k, TREE_FACTOR.factor) * uik
                    s3 -= get(D.tree_factor, e, r3 + k, TREE_FACTOR.factor) * uik
                put(D.tree_factor, e, r0 + i, TREE_FACTOR.factor, s0 * inv)
                put(D.tree_factor, e, r1 + i, TREE_FACTOR.factor, s1 * inv)
                put(D.tree_factor, e, r2 + i, TREE_FACTOR.factor, s2 * inv)
                put(D.tree_factor, e, r3 + i, TREE_FACTOR.factor, s3 * inv)
                j += 4
            while j < hi:
                rj = m0 + j * nv
                s = get(D.tree_mass, e, ri + j, TREE_MASS.mass)
                for k in range(i + 1, ei):
                    s -= get(D.tree_factor, e, rj + k, TREE_FACTOR.factor) * get(D.tree_factor, e, ri + k,
                                                                                 TREE_FACTOR.factor)
                put(D.tree_factor, e, rj + i, TREE_FACTOR.factor, s * inv)
                j += 1
            lo, hi = _run_above(D, e, u0, lo)
    for k in range(tr[TREE.n_joints]):  # the links' response columns belong to the old factor
        put(D.link_dyn, e, j0 + k, LINK_DYN.ready, 0.0)
    if get(D.tree_step, e, t, TREE_STEP.inverse) != 0:
        tree_full_inverse(D, e, t)


@ti.func
def tree_full_inverse(D: ti.template(), e, t):
    """All of ``M~^-1`` (``TREE_INVERSE``, symmetric, row by row) from the factor ``U`` of tree ``t``.

    ``Z = M~^-1 = U^-T U^-1`` solves ``U^T Z = U^-1``, whose row ``i``, for the entries ``c <= i`` (``U^-1``
    is upper triangular with diagonal ``1 / U_ii``), reads ``U_ii Z_ic + sum_j U_ji Z_jc = delta_ic / U_ii``,
    the sum over the ancestors ``j`` of ``i`` (the only nonzero ``U_ji``). So from the root: the entries
    before the diagonal, four at a time as independent sums, each written to ``(i, c)`` and ``(c, i)``; then
    the diagonal from them. Row ``j < i`` is whole by then up to column ``i``. A dof of depth ``d`` costs
    ``d`` multiply-adds per entry: with a floating base and four three-dof legs about 1100 in all, where the
    dense ``(L^-1)^T L^-1`` of a root-first factor took 1900."""
    tr = row(D.tree, e, t)
    nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    for i in range(nv):
        ri = m0 + i * nv
        inv = 1.0 / get(D.tree_factor, e, ri + i, TREE_FACTOR.factor)
        run = get(D.dof_i, e, u0 + i, DOF_I.run)
        c = 0
        while c < i:
            n = ti.min(4, i - c)  # (past the row's end the sums repeat entry c, written the same)
            cols = ti.Vector([c, c + ti.min(1, n - 1), c + ti.min(2, n - 1), c + ti.min(3, n - 1)])
            acc = ti.Vector([0.0, 0.0, 0.0, 0.0])
            lo, hi = run, i
            while hi > 0:  # the ancestors, one run of consecutive dofs [lo, hi) at a time
                for j in range(lo, hi):
                    uji = get(D.tree_factor, e, m0 + j * nv + i, TREE_FACTOR.factor)
                    for a in ti.static(range(4)):
                        acc[a] += uji * get(D.tree_inverse, e, m0 + j * nv + cols[a], TREE_INVERSE.inverse)
                lo, hi = _run_above(D, e, u0, lo)
            for a in ti.static(range(4)):
                put(D.tree_inverse, e, ri + cols[a], TREE_INVERSE.inverse, -acc[a] * inv)
                put(D.tree_inverse, e, m0 + cols[a] * nv + i, TREE_INVERSE.inverse, -acc[a] * inv)
            c += 4
        s = inv
        lo, hi = run, i
        while hi > 0:
            for j in range(lo, hi):
                s -= get(D.tree_factor, e, m0 + j * nv + i, TREE_FACTOR.factor) * get(D.tree_inverse, e, ri + j,
                                                                                      TREE_INVERSE.inverse)
            lo, hi = _run_above(D, e, u0, lo)
        put(D.tree_inverse, e, ri + i, TREE_INVERSE.inverse, s * inv)


@ti.func
def clear_workspace(D: ti.template(), e, t):
    """Zero tree ``t``'s per-dof workspace."""
    tr = row(D.tree, e, t)
    for d in range(tr[TREE.nv]):
        put(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.rhs, 0.0)


@ti.func
def add_workspace_to_velocities(D: ti.template(), e, t, scale):
    """``u += scale * workspace`` for tree ``t`` (a solved velocity change)."""
    tr = row(D.tree, e, t)
    for d in range(tr[TREE.nv]):
        add(D.u_tree, e, tr[TREE.u0] + d, 0, scale * get(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.rhs))


@ti.func
def tree_solve(D: ti.template(), e, t):
    """``rhs <- (U U^T)^-1 rhs`` in the per-dof workspace of tree ``t``: ``U y = rhs`` from the last dof
    (each row a sum over the dof's subtree), then ``U^T x = y`` from the root (each ``x_i``, once known,
    is taken out of the equations of its subtree's dofs)."""
    tr = row(D.tree, e, t)
    nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    for ii in range(nv):
        i = nv - 1 - ii
        s = get(D.tree_dof, e, u0 + i, TREE_DOF.rhs)
        for k in range(i + 1, _end(D, e, u0, i)):
            s -= get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor) * get(D.tree_dof, e, u0 + k,
                                                                                  TREE_DOF.rhs)
        put(D.tree_dof, e, u0 + i, TREE_DOF.rhs, s / get(D.tree_factor, e, m0 + i * nv + i, TREE_FACTOR.factor))
    for i in range(nv):
        x = get(D.tree_dof, e, u0 + i, TREE_DOF.rhs) / get(D.tree_factor, e, m0 + i * nv + i, TREE_FACTOR.factor)
        put(D.tree_dof, e, u0 + i, TREE_DOF.rhs, x)
        for k in range(i + 1, _end(D, e, u0, i)):
            add(D.tree_dof, e, u0 + k, TREE_DOF.rhs, -get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor) * x)


@ti.func
def tree_inverse_columns(D: ti.template(), e, t, dofs):
    """Rows ``dofs[0..3]`` of ``M~^-1`` (``TREE_INVERSE``, each ``(U U^T)^-1 e_d``) of tree ``t``, four
    solves carried together so that their chains of additions overlap (each one alone waits on the
    latency of every multiply-add). ``U y = e_d`` leaves ``y`` zero past ``d`` (only ``d``'s ancestors and
    ``d`` itself get entries), so that half starts at the largest of the four dofs. Each column gets the
    same operations in the same order as a solve of its own, so the results are the same to the bit."""
    tr = row(D.tree, e, t)
    nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    last = ti.max(dofs[0], dofs[1], dofs[2], dofs[3])
    for i in range(nv):
        for a in ti.static(range(4)):
            put(D.tree_inverse, e, m0 + dofs[a] * nv + i, TREE_INVERSE.inverse, ti.cast(i == dofs[a], float))
    for ii in range(last + 1):  # U y = e_d
        i = last - ii
        x = _inverse_rows(D, e, m0, nv, dofs, i)
        for k in range(i + 1, _end(D, e, u0, i)):
            x -= get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor) * _inverse_rows(D, e, m0, nv, dofs, k)
        _put_inverse_rows(D, e, m0, nv, dofs, i, x / get(D.tree_factor, e, m0 + i * nv + i, TREE_FACTOR.factor))
    for i in range(nv):  # U^T x = y
        x = _inverse_rows(D, e, m0, nv, dofs, i) / get(D.tree_factor, e, m0 + i * nv + i, TREE_FACTOR.factor)
        _put_inverse_rows(D, e, m0, nv, dofs, i, x)
        for k in range(i + 1, _end(D, e, u0, i)):
            _put_inverse_rows(D, e, m0, nv, dofs, k, _inverse_rows(D, e, m0, nv, dofs, k)
                              - get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor) * x)


@ti.func
def _inverse_rows(D: ti.template(), e, m0, nv, dofs, i):
    """Entry ``i`` of the four ``TREE_INVERSE`` rows ``dofs``."""
    return ti.Vector([get(D.tree_inverse, e, m0 + dofs[a] * nv + i, TREE_INVERSE.inverse)
                      for a in ti.static(range(4))])


@ti.func
def _put_inverse_rows(D: ti.template(), e, m0, nv, dofs, i, x):
    for a in ti.static(range(4)):
        put(D.tree_inverse, e, m0 + dofs[a] * nv + i, TREE_INVERSE.inverse, x[a])


@ti.func
def tree_solve_columns(D: ti.template(), e, t, r0):
    """``X <- (U U^T)^-1 X`` for the nv x 6 block ``X`` held in rows ``r0 ...`` of ``LINK_RESPONSE`` (tree
    ``t``'s factor): the six right-hand sides in one pass, as six independent chains of additions."""
    tr = row(D.tree, e, t)
    nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    for ii in range(nv):
        i = nv - 1 - ii
        x = getn(D.link_response, e, r0 + i, LINK_RESPONSE.column, 6)
        for k in range(i + 1, _end(D, e, u0, i)):
            x -= get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor) * getn(D.link_response, e, r0 + k,
                                                                                   LINK_RESPONSE.column, 6)
        putn(D.link_response, e, r0 + i, LINK_RESPONSE.column, x / get(D.tree_factor, e, m0 + i * nv + i,
                                                                        TREE_FACTOR.factor))
    for i in range(nv):
        x = getn(D.link_response, e, r0 + i, LINK_RESPONSE.column, 6) / get(D.tree_factor, e, m0 + i * nv + i,
                                                                             TREE_FACTOR.factor)
        putn(D.link_response, e, r0 + i, LINK_RESPONSE.column, x)
        for k in range(i + 1, _end(D, e, u0, i)):
            putn(D.link_response, e, r0 + k, LINK_RESPONSE.column,
                 getn(D.link_response, e, r0 + k, LINK_RESPONSE.column, 6)
                 - get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor) * x)


@ti.func
def _get66(ref: ti.template(), e, j, col):
    out = ti.Matrix.zero(float, 6, 6)
    for a in ti.static(range(6)):
        for b in ti.static(range(6)):
            out[a, b] = get(ref, e, j, col + 6 * a + b)
    return out


@ti.func
def _put66(ref: ti.template(), e, j, col, m):
    for a in ti.static(range(6)):
        for b in ti.static(range(6)):
            put(ref, e, j, col + 6 * a + b, m[a, b])


@ti.func
def _rigid_inertia(mass, moment, inertia):
    """The 6x6 matrix of :func:`inertia_times`: ``[[I, [m h]x], [[m h]x^T, m 1]]``."""
    out = ti.Matrix.zero(float, 6, 6)
    sh = skew(moment)
    for a in ti.static(range(3)):
        for b in ti.static(range(3)):
            out[a, b] = inertia[a, b]
            out[a, 3 + b] = sh[a, b]
            out[3 + a, b] = sh[b, a]
        out[3 + a, 3 + a] = mass
    return out


@ti.func
def solve_spd6(m, b):
    """``m^-1 b`` for a symmetric positive definite 6x6 ``m`` (Cholesky, unrolled)."""
    low = ti.Matrix.zero(float, 6, 6)
    for i in ti.static(range(6)):
        for k in ti.static(range(i + 1)):
            acc = m[i, k]
            for p in ti.static(range(k)):
                acc -= low[i, p] * low[k, p]
            if ti.static(i == k):
                low[i, i] = ti.sqrt(ti.max(acc, ti.static(tiny())))
            else:
                low[i, k] = acc / low[k, k]
    y = vec6(0.0)
    for i in ti.static(range(6)):
        acc = b[i]
        for p in ti.static(range(i)):
            acc -= low[i, p] * y[p]
        y[i] = acc / low[i, i]
    return upper_solve6(low.transpose(), y)


@ti.func
def tree_solve_articulated(D: ti.template(), e, t, dt):
    """``rhs <- M~^-1 rhs`` in the per-dof workspace of tree ``t`` by the articulated-body algorithm
    (Featherstone, *Rigid Body Dynamics Algorithms*, ch. 7) in the tree's ground coordinates, where no transform
    is needed between links: O(links) instead of the mass matrix, its factor and the triangular solves, for a
    tree no row acts on this step (after :func:`tree_dynamics` without the mass matrix: ``LINK_DYN`` holds
    each link's own inertia).

    With ``a_i = a_parent + S_i x_i`` and ``S_i^T f_i + d_i x_i = b_i`` (``f_i`` what joint ``i`` transmits,
    ``d_i`` its rotor inertia and implicit drive terms), the subtree of link ``i`` answers ``f_i = I^A_i a_i +
    p^A_i``. From the leaves: ``U = I^A S``, ``D = S^T U + d``, ``u = b - S^T p^A``, and the parent takes
    ``I^A - U U^T / D`` and ``p^A + U u / D``; a floating root solves ``I^A a = (b's moment, b's force) - p^A``
    (its 6x6 Cholesky); then from the root, ``x = (u - U^T a_parent) / D``."""
    tr = row(D.tree, e, t)
    j0, nj, u0 = tr[TREE.joint0], tr[TREE.n_joints], tr[TREE.u0]
    for k in range(nj):
        j = j0 + k
        _put66(D.link_dyn, e, j, LINK_DYN.articulated,
               _rigid_inertia(get(D.link_dyn, e, j, LINK_DYN.mass), get3(D.link_dyn, e, j, LINK_DYN.moment),
                              get33(D.link_dyn, e, j, LINK_DYN.inertia)))
        putn(D.link_dyn, e, j, LINK_DYN.articulated_force, vec6(0.0))
    for kk in range(nj):  # leaves first: a link's subtree has handed it its articulated inertia when reached
        j = j0 + nj - 1 - kk
        ji = row(D.joint_i, e, j)
        p = ji[JOINT_I.parent]
        if ji[JOINT_I.type] >= JOINT_REVOLUTE:
            d = u0 + ji[JOINT_I.dof]
            ia = _get66(D.link_dyn, e, j, LINK_DYN.articulated)
            pa = getn(D.link_dyn, e, j, LINK_DYN.articulated_force, 6)
            s = getn(D.frame, e, j, FRAME.motion, 6)
            col = ia @ s
            pivot = s.dot(col) + get(D.joint_f, e, j, JOINT_F.armature) + _implicit_diagonal(D, e, j, d, dt)
            uu = get(D.tree_dof, e, d, TREE_DOF.rhs) - s.dot(pa)
            putn(D.link_dyn, e, j, LINK_DYN.column, col)
            put(D.tree_dof, e, d, TREE_DOF.pivot, pivot)
            put(D.tree_dof, e, d, TREE_DOF.rhs, uu)
            _put66(D.link_dyn, e, p, LINK_DYN.articulated,
                   _get66(D.link_dyn, e, p, LINK_DYN.articulated) + ia - col.outer_product(col) / pivot)
            putn(D.link_dyn, e, p, LINK_DYN.articulated_force,
                 getn(D.link_dyn, e, p, LINK_DYN.articulated_force, 6) + pa + (uu / pivot) * col)
    for k in range(nj):  # root first: each link's acceleration from its parent's
        j = j0 + k
        ji = row(D.joint_i, e, j)
        jtype = ji[JOINT_I.type]
        acc = vec6(0.0)
        if jtype == JOINT_FLOATING:  # (dofs: linear, then angular; the spatial order is angular, linear)
            b = vec6(0.0)
            for a in ti.static(range(3)):
                b[a] = get(D.tree_dof, e, u0 + 3 + a, TREE_DOF.rhs)
                b[3 + a] = get(D.tree_dof, e, u0 + a, TREE_DOF.rhs)
            acc = solve_spd6(_get66(D.link_dyn, e, j, LINK_DYN.articulated),
                              b - getn(D.link_dyn, e, j, LINK_DYN.articulated_force, 6))
            for a in ti.static(range(3)):
                put(D.tree_dof, e, u0 + a, TREE_DOF.rhs, acc[3 + a])
                put(D.tree_dof, e, u0 + 3 + a, TREE_DOF.rhs, acc[a])
        elif jtype != JOINT_FIXED_ROOT:
            d = u0 + ji[JOINT_I.dof]
            ap = getn(D.link_dyn, e, ji[JOINT_I.parent], LINK_DYN.acceleration, 6)
            x = (get(D.tree_dof, e, d, TREE_DOF.rhs) - getn(D.link_dyn, e, j, LINK_DYN.column, 6).dot(ap)) / \
                get(D.tree_dof, e, d, TREE_DOF.pivot)
            put(D.tree_dof, e, d, TREE_DOF.rhs, x)
            acc = ap + x * getn(D.frame, e, j, FRAME.motion, 6)
        putn(D.link_dyn, e, j, LINK_DYN.acceleration, acc)
