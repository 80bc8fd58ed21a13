"""The contact block: the sticking contacts of articulated trees solved together in each sweep.

Contacts on the links of one tree are coupled through its joints and its floating base: an impulse under
one foot of a quadruped moves the other three. Row by row, the sweep then reduces the error by only about a
third per sweep (a quadruped standing on four feet: 6 to 8 sweeps per step to the 1e-6 m/s tolerance, 15
in its transients); solved together, the feet settle in one. A tracked robot driving on flat ground passes
its drive through the contacts of its belts, whose light drives and heavy body take about half the error
out per sweep: 10.9 sweeps a step row by row, 2.7 in the block (``perf.bench_tracks``' robot at 4 rad/s).

The block holds up to ``BLOCK_ROWS`` rigid contact rows of an env against static geometry, each on a tree
link, with friction: first those the warm start loaded, then the others, in row order. A belt's contacts
are members too (``belts/rows.py``: their Jacobian holds the belt's drives). Its Delassus matrix ``K`` (the
rows' 3x3 blocks in their contact frames) has the rows' own blocks on its diagonal and, between two rows
``k`` and ``l`` on one tree, ``F_k^T W_kl F_l`` with ``W_kl = A_k^T Phi_kl A_l`` (``Phi_kl`` the response of
``k``'s link to a spatial impulse on ``l``'s) plus, where they are belt rows, the terms through the drives:
``A_k^T beta_k(l) t_l^T + t_k beta_l(k)^T A_l + (g_k^T M~^-1 g_l) t_k t_l^T`` (``_cross``). It is built when
first needed in a step.

At each sweep the members whose impulse lies strictly inside its friction cone with a positive normal part
stick. If two or more do, the block solves ``K_SS dlambda = -(v_S - target_S)`` for them together: the
impulse change that brings every sticking point to its target velocity (the normal one, zero slip), given
what every other row does. The result is taken only if each new impulse stays in its cone; then it is the
solution of those rows' projected Gauss-Seidel block, and the sweep goes on with the other rows. Otherwise
(a contact starts to slip or lift) the rows take their usual one-by-one updates in that sweep. ``K_SS`` is
factored (Cholesky) once per step and set of sticking members. Where it is not positive definite (more
sticking contacts than the links can tell apart: a belt's contacts with the ground, or several on one
rigid link), it is factored again with its diagonal raised by ``REGULARIZATION`` times the pivot bound
(4e-6 of itself in f64): the update then takes out the error along every direction that ``K_SS`` is
stiff in, and shares the load among the redundant contacts as the raised diagonal says. An update
that is zero where the velocities are at their targets keeps the sweep's fixed point, so the result, to
within the sweep tolerance, is the same; only fewer sweeps reach it. Coulomb friction is not a
minimization, so these block updates can cycle where one-by-one updates converge (a foot slipping while two
stick): the sweep (``sweep.sweep_rows``) stops using the block for the rest of a step once a sweep's net
velocity change stops shrinking.
"""
import taichi as ti

from ...backend import ti_real
from ..belts.rows import belt_coupling, belt_point_cross
from ..common.arrays import BLOCK_I, BLOCK_MATRIX, BLOCK_ROWS, BLOCK_STATE, BLOCK_VECTOR, JOINT_I, ROW_F, ROW_I
from ..common.layout import ROW_CONTACT
from ..common.schema import get, get3, get33, put, put33, putn
from ..dynamics.bodies import carrier_joint, link_cross_phi, link_phi, point_map
from .links import apply_impulse, relative_velocity
from .rows import row_geometry

_INSIDE = 1.0 - 1e-9  # a member sticks while |lambda_t| < _INSIDE mu lambda_n
#: where the sticking members' submatrix is not positive definite, its diagonal is raised by this times
#: ``_pivot()`` times itself (module docstring): every Schur pivot is then at least that share of its entry
REGULARIZATION = 4.0


def _pivot() -> float:
    """A squared Cholesky pivot below this times its entry of ``K``'s diagonal: the submatrix is taken as
    singular. (A quadruped's four feet have 0.66 at least, with ``K``'s condition number about 7; the 1e-9
    regularization of a row whose link cannot move along some direction stays far below; in f32 rounding
    alone leaves about 1e-6.)"""
    return 1e-6 if ti_real() == ti.f64 else 1e-3


mat3 = ti.math.mat3
vec3 = ti.math.vec3


@ti.func
def setup_contact_block(D: ti.template(), e, n_rows, on):
    """Pick env ``e``'s contact-block members among its ``n_rows`` rows (none where ``on`` is 0): rigid
    contacts of tree links with static geometry, with friction, belts' included; first those the warm start
    loaded, then the others, each in row order, up to ``BLOCK_ROWS`` (rows are marked ``ROW_I.block``; the
    matrix is built later, when first needed)."""
    count = 0
    for r in range(n_rows):
        put(D.row_i, e, r, ROW_I.block, -1)
    if on != 0:
        for unloaded in ti.static(range(2)):
            for r in range(n_rows):
                if count < BLOCK_ROWS and get(D.row_i, e, r, ROW_I.block) < 0 and \
                        get(D.row_i, e, r, ROW_I.kind) == ROW_CONTACT and get(D.row_i, e, r, ROW_I.side_a) < 0 and \
                        get(D.row_f, e, r, ROW_F.friction) > 0.0 and \
                        (get(D.row_f, e, r, ROW_F.impulse) > 0.0) == (unloaded == 0):
                    if carrier_joint(D, e, get(D.row_i, e, r, ROW_I.side_b)) >= 0:
                        put(D.row_i, e, r, ROW_I.block, count)
                        put(D.block_i, e, count, BLOCK_I.row, r)
                        count += 1
    put(D.block_state, e, 0, BLOCK_STATE.count, count)
    put(D.block_state, e, 0, BLOCK_STATE.built, 0)
    put(D.block_state, e, 0, BLOCK_STATE.mask, -1)


@ti.func
def _cross(D: ti.template(), e, rk, jk, bk, rl, jl, bl):
    """``W_kl`` (3x3, world): the velocity change at member row ``rk``'s point (offset ``bk`` on the link of
    joint row ``jk``) per unit world impulse at member row ``rl``'s (``bl``, ``jl``), through their links
    (``A_k^T Phi_kl A_l``; zero between trees) and, for belt rows, through the belts' drives (module
    docstring)."""
    w = mat3(0.0)
    if get(D.joint_i, e, jk, JOINT_I.tree) == get(D.joint_i, e, jl, JOINT_I.tree):
        phi = ti.Matrix.zero(float, 6, 6)
        if jk == jl:
            phi = link_phi(D, e, jk)
        else:
            phi = link_cross_phi(D, e, jl, jk)  # k's link per unit spatial impulse on l's
        w = point_map(bk).transpose() @ phi @ point_map(bl)
        if ti.static(D.has_belts):
            kk, kl = get(D.row_i, e, rk, ROW_I.belt_b), get(D.row_i, e, rl, ROW_I.belt_b)
            tk, tl = get3(D.row_f, e, rk, ROW_F.belt_b), get3(D.row_f, e, rl, ROW_F.belt_b)
            if kl >= 0:  # l's belt drives move k's link
                w += belt_point_cross(D, e, kl, jk, bk, tl)
            if kk >= 0:  # l's link moves k's belt
                w += belt_point_cross(D, e, kk, jl, bl, tk).transpose()
            if kk >= 0 and kl >= 0:  # one belt's drives move the other's
                w += belt_coupling(D, e, kk, kl) * tk.outer_product(tl)
    return w


@ti.func
def _build_matrix(D: ti.template(), e, count):
    """``K``: each member's own Delassus block on the diagonal, the cross blocks between members."""
    for k in range(count):
        rk = get(D.block_i, e, k, BLOCK_I.row)
        put33(D.block_matrix, e, k * BLOCK_ROWS + k, BLOCK_MATRIX.delassus, get33(D.row_f, e, rk, ROW_F.delassus))
        fk, _ak, bk = row_geometry(D, e, rk)
        jk = carrier_joint(D, e, get(D.row_i, e, rk, ROW_I.side_b))
        for l in range(k + 1, count):
            rl = get(D.block_i, e, l, BLOCK_I.row)
            fl, _al, bl = row_geometry(D, e, rl)
            jl = carrier_joint(D, e, get(D.row_i, e, rl, ROW_I.side_b))
            w = fk.transpose() @ _cross(D, e, rk, jk, bk, rl, jl, bl) @ fl  # velocity at k per impulse at l
            put33(D.block_matrix, e, k * BLOCK_ROWS + l, BLOCK_MATRIX.delassus, w)
            put33(D.block_matrix, e, l * BLOCK_ROWS + k, BLOCK_MATRIX.delassus, w.transpose())
    put(D.block_state, e, 0, BLOCK_STATE.built, 1)


@ti.func
def _chol3(a, k):
    """Inverse of the lower Cholesky factor of the symmetric 3x3 ``a`` (a Schur complement of the diagonal
    block ``k`` of ``K``), and whether ``a`` is positive definite: each squared pivot above ``_pivot()``
    times its entry of ``k``'s diagonal."""
    ok = True
    l = mat3(0.0)
    rec = vec3(0.0, 0.0, 0.0)  # 1 / l_jj
    for j in ti.static(range(3)):
        d = a[j, j]
        for m in ti.static(range(j)):
            d -= l[j, m] * l[j, m]
        if d <= ti.static(_pivot()) * k[j, j]:
            ok = False
            d = 1.0
        l[j, j] = ti.sqrt(d)
        rec[j] = 1.0 / l[j, j]
        for i in ti.static(range(j + 1, 3)):
            v = a[i, j]
            for m in ti.static(range(j)):
                v -= l[i, m] * l[j, m]
            l[i, j] = v * rec[j]
    inv = mat3(0.0)  # forward substitution on the identity
    for c in ti.static(range(3)):
        inv[c, c] = rec[c]
        for i in ti.static(range(c + 1, 3)):
            v = 0.0
            for m in ti.static(range(c, i)):
                v -= l[i, m] * inv[m, c]
            inv[i, c] = v * rec[i]
    return inv, ok


@ti.func
def _factor(D: ti.template(), e, mask, count, reg):
    """Block Cholesky factor ``L`` of ``K``'s submatrix for the members in ``mask``, its diagonal raised by
    ``reg`` times itself, packed by 3x3 blocks: the diagonal blocks hold ``L_aa^-1``. Returns the number of
    sticking members, or 0 where that matrix is not positive definite."""
    m = 0
    for k in range(count):  # the packed position's member
        if (mask >> k) & 1:
            put(D.block_i, e, m, BLOCK_I.sticking, k)
            m += 1
    ok = True
    for a in range(m):
        if ok:
            ka = get(D.block_i, e, a, BLOCK_I.sticking)
            kaa = get33(D.block_matrix, e, ka * BLOCK_ROWS + ka, BLOCK_MATRIX.delassus)
            s = kaa
            for c in ti.static(range(3)):
                s[c, c] += reg * kaa[c, c]
            for b in range(a):
                lab = get33(D.block_matrix, e, a * BLOCK_ROWS + b, BLOCK_MATRIX.factor)
                s -= lab @ lab.transpose()
            inv, fine = _chol3(s, kaa)
            if not fine:
                ok = False
            put33(D.block_matrix, e, a * BLOCK_ROWS + a, BLOCK_MATRIX.factor, inv)
            for i in range(a + 1, m):
                ki = get(D.block_i, e, i, BLOCK_I.sticking)
                t = get33(D.block_matrix, e, ki * BLOCK_ROWS + ka, BLOCK_MATRIX.delassus)
                for b in range(a):
                    t -= get33(D.block_matrix, e, i * BLOCK_ROWS + b, BLOCK_MATRIX.factor) @ \
                        get33(D.block_matrix, e, a * BLOCK_ROWS + b, BLOCK_MATRIX.factor).transpose()
                put33(D.block_matrix, e, i * BLOCK_ROWS + a, BLOCK_MATRIX.factor, t @ inv.transpose())
    if not ok:
        m = 0
    return m


@ti.func
def _solve(D: ti.template(), e, m):
    """``impulse <- -(L L^T)^-1 velocity`` over the ``m`` packed members."""
    for a in range(m):
        y = -get3(D.block_vector, e, a, BLOCK_VECTOR.velocity)
        for b in range(a):
            y -= get33(D.block_matrix, e, a * BLOCK_ROWS + b, BLOCK_MATRIX.factor) @ \
                get3(D.block_vector, e, b, BLOCK_VECTOR.impulse)
        putn(D.block_vector, e, a, BLOCK_VECTOR.impulse,
             get33(D.block_matrix, e, a * BLOCK_ROWS + a, BLOCK_MATRIX.factor) @ y)
    for aa in range(m):
        a = m - 1 - aa
        x = get3(D.block_vector, e, a, BLOCK_VECTOR.impulse)
        for i in range(a + 1, m):
            x -= get33(D.block_matrix, e, i * BLOCK_ROWS + a, BLOCK_MATRIX.factor).transpose() @ \
                get3(D.block_vector, e, i, BLOCK_VECTOR.impulse)
        putn(D.block_vector, e, a, BLOCK_VECTOR.impulse,
             get33(D.block_matrix, e, a * BLOCK_ROWS + a, BLOCK_MATRIX.factor).transpose() @ x)


@ti.func
def contact_block_sweep(D: ti.template(), e):
    """The block's part of a sweep: solve the sticking members together, if two or more stick and the
    solution keeps every impulse in its cone. Returns ``(local, net, done)``: the largest velocity change
    the update made and the largest change of a member's velocity since the last sweep (as the sweep
    measures its rows), and a mask of the members solved (their rows skip this sweep's one-by-one update)."""
    local = 0.0
    net = 0.0
    done = 0
    count = get(D.block_state, e, 0, BLOCK_STATE.count)
    mask = 0
    n = 0
    for k in range(count):
        r = get(D.block_i, e, k, BLOCK_I.row)
        lam = get3(D.row_f, e, r, ROW_F.impulse)
        if lam[0] > 0.0 and lam[1] * lam[1] + lam[2] * lam[2] < (_INSIDE * get(D.row_f, e, r, ROW_F.friction) *
                                                                 lam[0]) ** 2:
            mask |= 1 << k
            n += 1
    if n >= 2:
        if get(D.block_state, e, 0, BLOCK_STATE.built) == 0:
            _build_matrix(D, e, count)
        if get(D.block_state, e, 0, BLOCK_STATE.mask) != mask:
            put(D.block_state, e, 0, BLOCK_STATE.mask, mask)
            m0 = _factor(D, e, mask, count, 0.0)
            if m0 == 0:  # redundant members: with the diagonal raised (module docstring)
                m0 = _factor(D, e, mask, count, ti.static(REGULARIZATION * _pivot()))
            put(D.block_state, e, 0, BLOCK_STATE.usable, m0)
        m = get(D.block_state, e, 0, BLOCK_STATE.usable)
        if m > 0:
            for a in range(m):
                r = get(D.block_i, e, get(D.block_i, e, a, BLOCK_I.sticking), BLOCK_I.row)
                frame, ra, rb = row_geometry(D, e, r)
                vloc = frame.transpose() @ relative_velocity(D, e, r, -1, get(D.row_i, e, r, ROW_I.side_b), ra, rb)
                putn(D.block_vector, e, a, BLOCK_VECTOR.velocity, vloc - vec3(get(D.row_f, e, r, ROW_F.target), 0.0,
                                                                             0.0))
            _solve(D, e, m)
            feasible = True
            for a in range(m):
                r = get(D.block_i, e, get(D.block_i, e, a, BLOCK_I.sticking), BLOCK_I.row)
                new = get3(D.row_f, e, r, ROW_F.impulse) + get3(D.block_vector, e, a, BLOCK_VECTOR.impulse)
                if new[0] <= 0.0 or new[1] * new[1] + new[2] * new[2] > (get(D.row_f, e, r, ROW_F.friction) *
                                                                         new[0]) ** 2:
                    feasible = False
            if feasible:
                for a in range(m):
                    r = get(D.block_i, e, get(D.block_i, e, a, BLOCK_I.sticking), BLOCK_I.row)
                    frame, ra, rb = row_geometry(D, e, r)
                    d = get3(D.block_vector, e, a, BLOCK_VECTOR.impulse)
                    vloc = get3(D.block_vector, e, a, BLOCK_VECTOR.velocity) + \
                        vec3(get(D.row_f, e, r, ROW_F.target), 0.0, 0.0)
                    net = ti.max(net, (vloc - get3(D.row_f, e, r, ROW_F.seen)).norm())
                    putn(D.row_f, e, r, ROW_F.seen, vloc)
                    apply_impulse(D, e, r, -1, get(D.row_i, e, r, ROW_I.side_b), ra, rb, frame @ d)
                    putn(D.row_f, e, r, ROW_F.impulse, get3(D.row_f, e, r, ROW_F.impulse) + d)
                    local = ti.max(local, get(D.row_f, e, r, ROW_F.delassus) * d.norm())
                done = mask
    return local, net, done
