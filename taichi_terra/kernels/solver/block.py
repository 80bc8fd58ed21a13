"""The contact block: the rigid contacts of articulated trees solved together in each sweep.

Contacts on the links of one tree are coupled through its joints and its floating base: an impulse under
one foot of a quadruped moves the other three. Row by row, the sweep then reduces the error by only about a
third per sweep (a quadruped standing on four feet: 6 to 8 sweeps per step to the 1e-6 m/s tolerance, 15
in its transients); solved together, the feet settle in one. A tracked robot passes its drive through the
contacts of its belts, whose light drives and heavy body take about half the error out per sweep, and
crossing uneven ground its belts slide at some contacts while they stick at others: row by row, 20 sweeps
a step on ``perf.bench_tracks``' sine-shaped map (5 % of the steps at the 100-sweep cap).

The block holds up to ``BLOCK_ROWS`` rigid contact rows of an env against static geometry, each on a tree
link, with friction: first those the warm start loaded, then the others nearest first (the highest normal
target: touching before apart), of those apart only the ones closing their gap within the step. A belt's
contacts are members too (``belts/rows.py``: their Jacobian holds the belt's drives). Its Delassus matrix
``K`` (the rows' 3x3 blocks in their contact frames) has the rows' own blocks on its diagonal and, between
two rows ``k`` and ``l`` on one tree, ``F_k^T W_kl F_l`` with ``W_kl = A_k^T Phi_kl A_l`` (``Phi_kl`` the
response of ``k``'s link to a spatial impulse on ``l``'s) plus, where they are belt rows, the terms through
the drives: ``A_k^T beta_k(l) t_l^T + t_k beta_l(k)^T A_l + (g_k^T M~^-1 g_l) t_k t_l^T`` (``_cross``). It
is built when first needed in a step.

At each sweep where two or more members carry load, they are solved together, each off, sticking or
sliding, by an active-set method on ``K`` (``solver/active_set.py``): given what every other row does, the
result is a solution of the members' Coulomb contact problem, which row-by-row sweeps reach only in the
limit. The members solved skip their one-by-one update in the sweep, and the sweep goes on with the other
rows. Rows that the sweeps load during the step join the block while it has room (its matrix is built
again). Where the active set finds no consistent set of states, nothing changes and the sweep goes on row
by row; after ``MAX_FAILURES`` such sweeps the block rests for the rest of the step. Coulomb friction is
not a minimization, so the block's updates can also cycle where one-by-one updates converge: the sweep
(``sweep.sweep_rows``) stops using the block for the rest of a step once a sweep's net velocity change
stops shrinking. A contact problem with friction can have several solutions; the block and the row-by-row
sweeps then need not end at the same one (``docs/physics/solver.md``).
"""
import taichi as ti

from ..belts.rows import belt_coupling, belt_point_cross
from ..common.arrays import BLOCK_I, BLOCK_MATRIX, BLOCK_ROWS, BLOCK_STATE, JOINT_I, ROW_F, ROW_I
from ..common.layout import ROW_CONTACT
from ..common.schema import get, get3, get33, put, put33
from ..dynamics.bodies import carrier_joint, link_cross_phi, link_phi, point_map
from .active_set import member_error, solve_members
from .rows import row_geometry

mat3 = ti.math.mat3

#: active-set solves that find no consistent set of states in one step, after which the step goes on without
#: the block (each costs up to ``active_set.ACTIVE_SET_ITERATIONS`` eliminations)
MAX_FAILURES = 3


@ti.func
def _eligible(D: ti.template(), e, r):
    """Row ``r`` can be a contact-block member: a rigid contact with friction of a tree link with static
    geometry."""
    ok = False
    if get(D.row_i, e, r, ROW_I.kind) == ROW_CONTACT and get(D.row_i, e, r, ROW_I.side_a) < 0 and \
            get(D.row_f, e, r, ROW_F.friction) > 0.0:
        ok = carrier_joint(D, e, get(D.row_i, e, r, ROW_I.side_b)) >= 0
    return ok


@ti.func
def setup_contact_block(D: ti.template(), e, n_rows, on):
    """Pick env ``e``'s contact-block members among its ``n_rows`` rows (none where ``on`` is 0): rigid
    contacts of tree links with static geometry, with friction, belts' included; first those the warm start
    loaded (in row order), then the others nearest first (the highest normal target), of those apart from
    their geometry only the ones closing the gap within the step at their present velocity, up to
    ``BLOCK_ROWS`` (rows are marked ``ROW_I.block``; the matrix is built later, when first needed)."""
    count = 0
    for r in range(n_rows):  # -1: no member (yet); -2: a candidate
        put(D.row_i, e, r, ROW_I.block, -1)
    if on != 0:
        for r in range(n_rows):
            if _eligible(D, e, r):
                if get(D.row_f, e, r, ROW_F.impulse) > 0.0:
                    if count < BLOCK_ROWS:
                        put(D.row_i, e, r, ROW_I.block, count)
                        put(D.block_i, e, count, BLOCK_I.row, r)
                        count += 1
                elif get(D.row_f, e, r, ROW_F.target) >= 0.0 or member_error(D, e, r)[0] < 0.0:
                    put(D.row_i, e, r, ROW_I.block, -2)  # touching, or closing the gap within the step
        going = count < BLOCK_ROWS
        while going:
            best = -1
            top = 0.0
            for r in range(n_rows):
                if get(D.row_i, e, r, ROW_I.block) == -2:
                    target = get(D.row_f, e, r, ROW_F.target)
                    if best < 0 or target > top:
                        best = r
                        top = target
            if best < 0:
                going = False
            else:
                put(D.row_i, e, best, ROW_I.block, count)
                put(D.block_i, e, count, BLOCK_I.row, best)
                count += 1
                going = count < BLOCK_ROWS
        for r in range(n_rows):
            if get(D.row_i, e, r, ROW_I.block) == -2:
                put(D.row_i, e, r, ROW_I.block, -1)
    put(D.block_state, e, 0, BLOCK_STATE.count, count)
    put(D.block_state, e, 0, BLOCK_STATE.built, 0)
    put(D.block_state, e, 0, BLOCK_STATE.off, 1 if on == 0 else 0)
    put(D.block_state, e, 0, BLOCK_STATE.solved, 0)
    put(D.block_state, e, 0, BLOCK_STATE.failures, 0)
    put(D.block_state, e, 0, BLOCK_STATE.factored, 0)


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
def contact_block_sweep(D: ti.template(), e, n_rows, tolerance):
    """The block's part of a sweep: where two or more members carry load (a positive normal impulse), solve
    them together (``solver/active_set.py``, slack
    ``tolerance`` [m/s]). Returns a mask of the members solved (bit ``k``: member ``k``; their rows skip this
    sweep's one-by-one update)."""
    done = 0
    count = get(D.block_state, e, 0, BLOCK_STATE.count)
    if get(D.block_state, e, 0, BLOCK_STATE.off) == 0 and count < BLOCK_ROWS:
        for r in range(n_rows):  # rows the last sweep loaded join (the matrix is built again)
            if count < BLOCK_ROWS and get(D.row_i, e, r, ROW_I.block) < 0 and \
                    get(D.row_f, e, r, ROW_F.impulse) > 0.0 and _eligible(D, e, r):
                put(D.row_i, e, r, ROW_I.block, count)
                put(D.block_i, e, count, BLOCK_I.row, r)
                count += 1
                put(D.block_state, e, 0, BLOCK_STATE.built, 0)
        put(D.block_state, e, 0, BLOCK_STATE.count, count)
    if get(D.block_state, e, 0, BLOCK_STATE.off) == 0:
        n = 0
        for k in range(count):
            if get(D.row_f, e, get(D.block_i, e, k, BLOCK_I.row), ROW_F.impulse) > 0.0:
                n += 1
        if n >= 2:
            if get(D.block_state, e, 0, BLOCK_STATE.built) == 0:
                _build_matrix(D, e, count)
                put(D.block_state, e, 0, BLOCK_STATE.factored, 0)
            solved = solve_members(D, e, count, tolerance)
            if solved < 0:  # (nothing changed: the rows take their one-by-one updates)
                failures = get(D.block_state, e, 0, BLOCK_STATE.failures) + 1
                put(D.block_state, e, 0, BLOCK_STATE.failures, failures)
                if failures >= MAX_FAILURES:
                    put(D.block_state, e, 0, BLOCK_STATE.off, 1)
            else:
                done = solved
    put(D.block_state, e, 0, BLOCK_STATE.solved, done)
    return done
