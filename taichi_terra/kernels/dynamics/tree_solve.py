"""Solving with a tree's step matrix ``M~ = M + dt (K_d + D) + dt^2 K_p`` (the mass matrix with the implicit
drive and damping terms, ``dynamics/tree.py``): ``M~ x = b`` for the velocity update and ``M~^-1`` columns
for the solver rows.

- Where rows act on the tree this step: the dense Cholesky factor ``M~ = L L^T`` (``tree_factor``) and its
  solves: one right-hand side in the per-dof workspace (``tree_solve``), a link's six response columns
  (``tree_solve_columns``), four unit columns for joint rows (``tree_inverse_columns``); or, where the rows
  need many columns, all of ``M~^-1`` at once (``tree_full_inverse``).
- Otherwise: the articulated-body algorithm (``tree_solve_articulated``), O(links) without forming ``M``.

Both read the same ground coordinates as the rest of the tree code (world axes about the root's origin).
"""
import taichi as ti

from ..common.arrays import (
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
from ..common.math import skew
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
def tree_factor(D: ti.template(), e, t, dt):
    """Cholesky factor ``L`` (lower triangle) of ``M + dt (K_d + D) + dt^2 K_p`` for tree ``t``, ``D`` the
    joint damping; a drive held at its effort limit this step adds no ``K_d``, ``K_p`` terms. Marks the links'
    response columns (``LINK_RESPONSE``) stale; where ``TREE_STEP.inverse`` is set, also forms all of
    ``M~^-1`` (:func:`tree_full_inverse`)."""
    tr = row(D.tree, e, t)
    j0, nv, m0, u0 = tr[TREE.joint0], tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    for i in range(nv):  # (the factor reads the lower triangle only)
        for k in range(i + 1):
            put(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor,
                get(D.tree_mass, e, m0 + i * nv + k, TREE_MASS.mass))
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, j0 + k)
        if ji[JOINT_I.type] >= JOINT_REVOLUTE:
            d = ji[JOINT_I.dof]
            add(D.tree_factor, e, m0 + d * nv + d, TREE_FACTOR.factor, _implicit_diagonal(D, e, j0 + k, u0 + d, dt))
    for jc in range(nv):  # row by row (Cholesky-Crout): each entry one dot product with the column's row
        rj = m0 + jc * nv
        s = get(D.tree_factor, e, rj + jc, TREE_FACTOR.factor)
        for k in range(jc):
            s -= get(D.tree_factor, e, rj + k, TREE_FACTOR.factor) ** 2
        diag = ti.sqrt(ti.max(s, 1e-300))
        put(D.tree_factor, e, rj + jc, TREE_FACTOR.factor, diag)
        i = jc + 1
        while i + 4 <= nv:  # four rows at once: four independent chains of additions (3x faster at 60 dofs)
            r0, r1, r2, r3 = m0 + i * nv, m0 + (i + 1) * nv, m0 + (i + 2) * nv, m0 + (i + 3) * nv
            s0 = get(D.tree_factor, e, r0 + jc, TREE_FACTOR.factor)
            s1 = get(D.tree_factor, e, r1 + jc, TREE_FACTOR.factor)
            s2 = get(D.tree_factor, e, r2 + jc, TREE_FACTOR.factor)
            s3 = get(D.tree_factor, e, r3 + jc, TREE_FACTOR.factor)
            for k in range(jc):
                lk = get(D.tree_factor, e, rj + k, TREE_FACTOR.factor)
                s0 -= get(D.tree_factor, e, r0 + k, TREE_FACTOR.factor) * lk
                s1 -= get(D.tree_factor, e, r1 + k, TREE_FACTOR.factor) * lk
                s2 -= get(D.tree_factor, e, r2 + k, TREE_FACTOR.factor) * lk
                s3 -= get(D.tree_factor, e, r3 + k, TREE_FACTOR.factor) * lk
            put(D.tree_factor, e, r0 + jc, TREE_FACTOR.factor, s0 / diag)
            put(D.tree_factor, e, r1 + jc, TREE_FACTOR.factor, s1 / diag)
            put(D.tree_factor, e, r2 + jc, TREE_FACTOR.factor, s2 / diag)
            put(D.tree_factor, e, r3 + jc, TREE_FACTOR.factor, s3 / diag)
            i += 4
        while i < nv:
            ri = m0 + i * nv
            s = get(D.tree_factor, e, ri + jc, TREE_FACTOR.factor)
            for k in range(jc):
                s -= get(D.tree_factor, e, ri + k, TREE_FACTOR.factor) * get(D.tree_factor, e, rj + k,
                                                                             TREE_FACTOR.factor)
            put(D.tree_factor, e, ri + jc, TREE_FACTOR.factor, s / diag)
            i += 1
    for k in range(tr[TREE.n_joints]):  # the links' response columns belong to the old factor
        put(D.link_dyn, e, j0 + k, LINK_DYN.ready, 0.0)
    if get(D.tree_step, e, t, TREE_STEP.inverse) != 0:
        tree_full_inverse(D, e, t)


@ti.func
def tree_full_inverse(D: ti.template(), e, t):
    """All of ``M~^-1`` (``TREE_INVERSE``, symmetric, row by row) from the factor ``L`` of tree ``t``, in
    about nv^3 / 3 multiply-adds (a column solve costs nv^2: this pays off once the rows need more than
    about nv / 3 columns, ``step.mark_factored_trees``).

    First ``X = L^-1`` column by column, column ``c`` stored in row ``c`` (entries ``i >= c``; forward
    substitutions four columns at a time), then ``(M~^-1)_ik = sum over m >= k of X_im X_km`` for ``i <= k``,
    written to both ``(k, i)`` and ``(i, k)``: no later sum reads either (row ``k``'s entries before its
    diagonal are not part of ``X``, and the sums of the columns after ``k`` start after ``k``)."""
    tr = row(D.tree, e, t)
    nv, m0 = tr[TREE.nv], tr[TREE.matrix0]
    c = 0
    while c < nv:
        last = nv - 1
        dofs = ti.Vector([c, ti.min(c + 1, last), ti.min(c + 2, last), ti.min(c + 3, last)])
        for i in range(c, nv):  # (each entry starts from the unit column's: 1 at its dof, 0 elsewhere)
            _substitute_columns(D, e, m0, nv, dofs, i, c, i, False, True)
        c += 4
    for k in range(nv):
        rk = m0 + k * nv
        i = 0
        while i + 4 <= k + 1:  # four entries of row k at once: four independent chains of additions
            r0, r1, r2, r3 = m0 + i * nv, m0 + (i + 1) * nv, m0 + (i + 2) * nv, m0 + (i + 3) * nv
            s0, s1, s2, s3 = 0.0, 0.0, 0.0, 0.0
            for m in range(k, nv):
                xk = get(D.tree_inverse, e, rk + m, TREE_INVERSE.inverse)
                s0 += get(D.tree_inverse, e, r0 + m, TREE_INVERSE.inverse) * xk
                s1 += get(D.tree_inverse, e, r1 + m, TREE_INVERSE.inverse) * xk
                s2 += get(D.tree_inverse, e, r2 + m, TREE_INVERSE.inverse) * xk
                s3 += get(D.tree_inverse, e, r3 + m, TREE_INVERSE.inverse) * xk
            put(D.tree_inverse, e, rk + i, TREE_INVERSE.inverse, s0)
            put(D.tree_inverse, e, rk + i + 1, TREE_INVERSE.inverse, s1)
            put(D.tree_inverse, e, rk + i + 2, TREE_INVERSE.inverse, s2)
            put(D.tree_inverse, e, rk + i + 3, TREE_INVERSE.inverse, s3)
            put(D.tree_inverse, e, r0 + k, TREE_INVERSE.inverse, s0)
            put(D.tree_inverse, e, r1 + k, TREE_INVERSE.inverse, s1)
            put(D.tree_inverse, e, r2 + k, TREE_INVERSE.inverse, s2)
            put(D.tree_inverse, e, r3 + k, TREE_INVERSE.inverse, s3)
            i += 4
        while i <= k:  # (the diagonal last: the sums before it read X_kk)
            ri = m0 + i * nv
            acc = 0.0
            for m in range(k, nv):
                acc += get(D.tree_inverse, e, ri + m, TREE_INVERSE.inverse) * get(D.tree_inverse, e, rk + m,
                                                                                  TREE_INVERSE.inverse)
            put(D.tree_inverse, e, rk + i, TREE_INVERSE.inverse, acc)
            put(D.tree_inverse, e, ri + k, TREE_INVERSE.inverse, acc)
            i += 1


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
    """``rhs <- (L L^T)^-1 rhs`` in the per-dof workspace of tree ``t``."""
    tr = row(D.tree, e, t)
    nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    for i in range(nv):
        s = get(D.tree_dof, e, u0 + i, TREE_DOF.rhs)
        for k in range(i):
            s -= get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor) * get(D.tree_dof, e, u0 + k,
                                                                                  TREE_DOF.rhs)
        put(D.tree_dof, e, u0 + i, TREE_DOF.rhs, s / get(D.tree_factor, e, m0 + i * nv + i, TREE_FACTOR.factor))
    for ii in range(nv):
        i = nv - 1 - ii
        s = get(D.tree_dof, e, u0 + i, TREE_DOF.rhs)
        for k in range(i + 1, nv):
            s -= get(D.tree_factor, e, m0 + k * nv + i, TREE_FACTOR.factor) * get(D.tree_dof, e, u0 + k,
                                                                                  TREE_DOF.rhs)
        put(D.tree_dof, e, u0 + i, TREE_DOF.rhs, s / get(D.tree_factor, e, m0 + i * nv + i, TREE_FACTOR.factor))


@ti.func
def tree_inverse_columns(D: ti.template(), e, t, dofs):
    """Rows ``dofs[0..3]`` of ``M~^-1`` (``TREE_INVERSE``, each ``(L L^T)^-1 e_d``) of tree ``t``, four
    solves carried together so that their chains of additions overlap (each one alone waits on the
    latency of every multiply-add). The forward substitution starts at the smallest of the four dofs: a
    unit right-hand side is zero before its dof and stays zero there. Each column gets the same
    operations in the same order as a solve of its own, so the results are the same to the bit."""
    tr = row(D.tree, e, t)
    nv, m0 = tr[TREE.nv], tr[TREE.matrix0]
    first = ti.min(dofs[0], dofs[1], dofs[2], dofs[3])
    for i in range(nv):
        for a in ti.static(range(4)):
            put(D.tree_inverse, e, m0 + dofs[a] * nv + i, TREE_INVERSE.inverse, ti.cast(i == dofs[a], float))
    for i in range(first, nv):  # L y = e_d
        _substitute_columns(D, e, m0, nv, dofs, i, first, i, False, False)
    for ii in range(nv):  # L^T x = y
        i = nv - 1 - ii
        _substitute_columns(D, e, m0, nv, dofs, i, i + 1, nv, True, False)


@ti.func
def _substitute_columns(D: ti.template(), e, m0, nv, dofs, i, k0, k1, transposed: ti.template(),
                        unit: ti.template()):
    """Entry ``i`` of the four ``TREE_INVERSE`` rows ``dofs`` by one substitution step with the factor ``L``:
    ``x_i <- (x_i - sum_k L_ik x_k) / L_ii`` over ``k0 <= k < k1`` (``transposed``: ``L_ki``), ``x_i`` as
    stored or (``unit``) the unit columns' entry, 1 where ``i`` is the row's dof."""
    x = ti.Vector([0.0, 0.0, 0.0, 0.0])
    if ti.static(unit):
        x = ti.Vector([ti.cast(i == dofs[a], float) for a in ti.static(range(4))])
    else:
        x = ti.Vector([get(D.tree_inverse, e, m0 + dofs[a] * nv + i, TREE_INVERSE.inverse)
                       for a in ti.static(range(4))])
    for k in range(k0, k1):
        lk = 0.0
        if ti.static(transposed):
            lk = get(D.tree_factor, e, m0 + k * nv + i, TREE_FACTOR.factor)
        else:
            lk = get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor)
        for a in ti.static(range(4)):
            x[a] -= lk * get(D.tree_inverse, e, m0 + dofs[a] * nv + k, TREE_INVERSE.inverse)
    diag = get(D.tree_factor, e, m0 + i * nv + i, TREE_FACTOR.factor)
    for a in ti.static(range(4)):
        put(D.tree_inverse, e, m0 + dofs[a] * nv + i, TREE_INVERSE.inverse, x[a] / diag)


@ti.func
def tree_solve_columns(D: ti.template(), e, t, r0):
    """``X <- (L L^T)^-1 X`` for the nv x 6 block ``X`` held in rows ``r0 ...`` of ``LINK_RESPONSE`` (tree
    ``t``'s factor): the six right-hand sides in one pass, as six independent chains of additions."""
    tr = row(D.tree, e, t)
    nv, m0 = tr[TREE.nv], tr[TREE.matrix0]
    for i in range(nv):
        x = getn(D.link_response, e, r0 + i, LINK_RESPONSE.column, 6)
        for k in range(i):
            x -= get(D.tree_factor, e, m0 + i * nv + k, TREE_FACTOR.factor) * getn(D.link_response, e, r0 + k,
                                                                                   LINK_RESPONSE.column, 6)
        putn(D.link_response, e, r0 + i, LINK_RESPONSE.column, x / get(D.tree_factor, e, m0 + i * nv + i,
                                                                        TREE_FACTOR.factor))
    for ii in range(nv):
        i = nv - 1 - ii
        x = getn(D.link_response, e, r0 + i, LINK_RESPONSE.column, 6)
        for k in range(i + 1, nv):
            x -= get(D.tree_factor, e, m0 + k * nv + i, TREE_FACTOR.factor) * getn(D.link_response, e, r0 + k,
                                                                                   LINK_RESPONSE.column, 6)
        putn(D.link_response, e, r0 + i, LINK_RESPONSE.column, x / get(D.tree_factor, e, m0 + i * nv + i,
                                                                        TREE_FACTOR.factor))


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
def _solve_spd6(m, b):
    """``m^-1 b`` for a symmetric positive definite 6x6 ``m`` (Cholesky, unrolled)."""
    low = ti.Matrix.zero(float, 6, 6)
    for i in ti.static(range(6)):
        for k in ti.static(range(i + 1)):
            acc = m[i, k]
            for p in ti.static(range(k)):
                acc -= low[i, p] * low[k, p]
            if ti.static(i == k):
                low[i, i] = ti.sqrt(ti.max(acc, 1e-300))
            else:
                low[i, k] = acc / low[k, k]
    y = vec6(0.0)
    for i in ti.static(range(6)):
        acc = b[i]
        for p in ti.static(range(i)):
            acc -= low[i, p] * y[p]
        y[i] = acc / low[i, i]
    x = vec6(0.0)
    for ii in ti.static(range(6)):
        i = ti.static(5 - ii)
        acc = y[i]
        for p in ti.static(range(i + 1, 6)):
            acc -= low[p, i] * x[p]
        x[i] = acc / low[i, i]
    return x


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
            acc = _solve_spd6(_get66(D.link_dyn, e, j, LINK_DYN.articulated),
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
