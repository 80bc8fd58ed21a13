"""The soil group: the soil blocks of the links of articulated trees solved together, on their velocities.

A soil block (``soil_block.py``) solves the soil rows under one link exactly, for the rest of the world as
it stands. The wheels of a vehicle or the feet of a robot on soil are coupled through their tree: the load
one wheel takes moves the chassis, and so the others. Block after block, the sweep then passes the load
around the tree and converges slowly where the soil is stiff against the tree's compliance (the buggy of
``scenes/buggy_soil.py`` settling on its four wheels took 6 to 12 sweeps a step at 1e-6 m/s; in its slow steps
every wheel's block converged in every sweep while the sweeps changed the velocities by about half a
percent less each time).

Here the blocks of tree links (up to ``SOIL_GROUP_LINKS`` per env, in row order) are one system whose
unknown is the stack of their links' spatial velocities ``V_i`` (at the tree's reference point). With the
links' responses to each other ``Phi_ij = J_i M~^-1 J_j^T`` (6x6; of the tree with its pins held where it
has pin blocks, ``pin_block.py``; zero between links of different trees), their velocities ``V0_i`` and
their rows' summed spatial impulses ``P0_i`` when the group starts, it solves

    G_i(V) = V_i - V0_i - sum_j Phi_ij (P_j(V_j) - P0_j) = 0,

``P_j(V_j)`` the sum over block ``j``'s rows of ``A_k^T F_k lam_k(F_k^T A_k V_j)``: the same soil laws,
shear anchors and stiffness retries as a single block (``soil_block.py``), so its fixed point is the
blocks' one. Newton's method takes ``(I + Phi H) dV = -G`` with ``H`` block-diagonal (each block's ``H``),
a dense system of ``6 n`` unknowns solved by block elimination on its 6x6 blocks (``I + Phi H`` is never
singular: the eigenvalues of ``Phi H``, a product of two positive semi-definite matrices, are real and
non-negative). It stops when ``|G|`` is below a tenth of the sweep tolerance, as a block does; where it does
not converge, its members take their own blocks in that sweep (``sweep.py``).

``Phi`` depends only on the step's factor, so it is built once per step, when the group is first solved.

What it costs. A group's passes go on over every member until the slowest has converged, and each Newton
step builds and solves the ``6 n`` system, whatever the number of soil rows; a sweep with the group cost
about half as much again as the members' blocks on the buggy's four wheels. So:

- a group is solved from the start of a step only where its links carry ``MIN_ROWS`` soil rows each on
  average: the quadruped's four feet (5 or 6 rows each) ran at 10.5x real time with a group from the second
  sweep against 19.6x without, in 6.4 sweeps a step against 6.8; the buggy's wheels carry 20 to 40. A lighter
  group is solved only in slow steps, from ``LATE_SWEEP`` on (below);
- it is solved from the ``FIRST_SWEEP``-th sweep of a step on: the first sweep takes the warm start's error
  out as cheaply with the blocks, and many steps at a loose tolerance end soon after (the buggy driving at
  1e-4 m/s, about 2.6 sweeps a step, ran 16 % slower with the group from the first sweep, 8 % from the
  second, 5 % from the third; at 1e-6 m/s the second was fastest: 0.33 ms a step against 0.35 from the first,
  0.36 from the third and 0.39 without).

Slow steps. The anchors follow a sticking point's slip by ``kappa`` times the slip a sweep, so a mode whose
slip moves the impulses little shrinks slowly: the shear that the two loaded points under each rear foot of
the quadruped standing on soil pass between them while both legs extend, ``1.9e-6`` m/s a sweep at a ratio of
1.00, 100 sweeps and still ``5e-4`` m/s from the converged velocities. Stiffer anchors alone do not help: with
them Newton's method fails more often, and where it converges the anchors hardly move, so the sweeps stop
early, as far from the answer (``docs/limitations.md``). So from the ``LATE_SWEEP``-th sweep of a step on,
the group is solved in up to ``STAGES`` stages: each starts from the impulses the last one left, with
anchors ``STAGE_FACTOR`` times stiffer, and the stages end where one does not converge or starts at its
fixed point (``|G|`` within a tenth of the tolerance at the first pass, with the rows' impulses as they
are). Each stage solves the same laws, so the fixed point is the blocks' one. The soil blocks that the sweep
turned off in the step (``sweep.py``) are taken up again at that sweep. Measured on the quadruped standing
on soil over 2 s (``perf/bench_solver.py``, 1e-6 m/s): no step at the cap where 15 were (4,000 steps: none),
5.15 sweeps a step against 6.77, 17.6x to 18.7x real time against 19.5x to 19.7x (alternated runs). In its
steps of 8 sweeps or more the velocities end a median 8.3e-6 m/s (at most 2.4e-4) from a solve to 1e-12 m/s,
in 12.6 sweeps, against 1.9e-5 (at most 4.7e-4) in 24.3 sweeps before; in the other steps the error is as it
was. Four stages of 30 times were no more accurate; six of 10 times ran at 16.2x real time.
"""
import taichi as ti

from ..common.arrays import JOINT_I, ROW_I, SOIL_GROUP_BLOCKS, SOIL_GROUP_F, SOIL_GROUP_I, SOIL_GROUP_LINKS, \
    SOIL_GROUP_MATRIX, SOIL_GROUP_STATE, SOIL_GROUP_VECTOR
from ..common.schema import add, get, getn, put, putn
from ..dynamics.bodies import carrier_joint, link_cross_phi
from .links import close_link_run, open_link_run
from .soil_block import (CONVERGED, HALVE, NEWTON_ITERATIONS, STALLED, STEP, STICK_STIFFNESS, STICK_STIFFNESS_SAFE,
                         is_soil_block, newton_move, soil_pass, soil_run_end)

vec6 = ti.types.vector(6, float)
mat6 = ti.types.matrix(6, 6, float)

#: the row length of the group's matrices
DIM = 6 * SOIL_GROUP_LINKS
#: soil rows per member at least, on average, for a group to be solved from ``FIRST_SWEEP`` on; a lighter
#: group is solved from ``LATE_SWEEP`` on (module docstring)
MIN_ROWS = 16
#: the first sweep of a step in which the group is solved (module docstring)
FIRST_SWEEP = 2
#: the sweep of a step from which a light group is solved too, every group is solved in ``STAGES`` stages, and
#: the soil blocks turned off in the step are turned on again (module docstring, "Slow steps")
LATE_SWEEP = 8
#: stages of a group solve from ``LATE_SWEEP`` on, each with anchors ``STAGE_FACTOR`` times stiffer than the
#: last, from the impulses the last left (module docstring, "Slow steps")
STAGES = 3
STAGE_FACTOR = 100.0


@ti.func
def setup_soil_group(D: ti.template(), e, n_rows, on):
    """Pick env ``e``'s soil-group members among its ``n_rows`` rows (none where ``on`` is 0): the tree links
    with soil blocks (``soil_block.is_soil_block``; a link on a bed through several shapes has one per
    shape), in row order, up to ``SOIL_GROUP_LINKS`` links and ``SOIL_GROUP_BLOCKS`` blocks; the blocks of
    other links keep their own. A group without two members on one tree has nothing to couple and is left
    empty. Returns 1 where the group is light (fewer than ``MIN_ROWS`` soil rows per member: solved only from
    ``LATE_SWEEP`` on), else 0."""
    count = 0
    blocks = 0
    if on != 0:
        r = 0
        while r < n_rows:
            end = r + 1
            if is_soil_block(D, e, r):
                end = soil_run_end(D, e, r, n_rows)
                j = carrier_joint(D, e, get(D.row_i, e, r, ROW_I.side_b))
                if j >= 0 and blocks < SOIL_GROUP_BLOCKS:
                    m = -1
                    for k in range(count):
                        if get(D.soil_group_i, e, k, SOIL_GROUP_I.joint) == j:
                            m = k
                    if m < 0 and count < SOIL_GROUP_LINKS:
                        m = count
                        put(D.soil_group_i, e, m, SOIL_GROUP_I.joint, j)
                        put(D.soil_group_i, e, m, SOIL_GROUP_I.tree, get(D.joint_i, e, j, JOINT_I.tree))
                        count += 1
                    if m >= 0:
                        put(D.soil_group_i, e, blocks, SOIL_GROUP_I.first, r)
                        put(D.soil_group_i, e, blocks, SOIL_GROUP_I.end, end)
                        put(D.soil_group_i, e, blocks, SOIL_GROUP_I.member, m)
                        blocks += 1
            r = end
    rows = 0
    for k in range(blocks):
        rows += get(D.soil_group_i, e, k, SOIL_GROUP_I.end) - get(D.soil_group_i, e, k, SOIL_GROUP_I.first)
    coupled = rows >= MIN_ROWS * count
    paired = False
    for a in range(count):
        for b in range(a + 1, count):
            if get(D.soil_group_i, e, a, SOIL_GROUP_I.tree) == get(D.soil_group_i, e, b, SOIL_GROUP_I.tree):
                paired = True
    light = 0
    if not paired:
        count = 0
        blocks = 0
    elif not coupled:
        light = 1
    put(D.soil_group_state, e, 0, SOIL_GROUP_STATE.count, count)
    put(D.soil_group_state, e, 0, SOIL_GROUP_STATE.blocks, blocks)
    put(D.soil_group_state, e, 0, SOIL_GROUP_STATE.built, 0)
    put(D.soil_group_state, e, 0, SOIL_GROUP_STATE.solved, 0)
    put(D.soil_group_state, e, 0, SOIL_GROUP_STATE.failed, 0)
    return light


@ti.func
def is_group_member(D: ti.template(), e, r):
    """Whether row ``r`` opens a soil block of the soil group."""
    found = False
    for k in range(get(D.soil_group_state, e, 0, SOIL_GROUP_STATE.blocks)):
        if get(D.soil_group_i, e, k, SOIL_GROUP_I.first) == r:
            found = True
    return found


@ti.func
def _block(ref: ti.template(), col: ti.template(), e, i, j):
    """The 6x6 block ``(i, j)`` of one of the group's matrices."""
    out = mat6(0.0)
    for a in ti.static(range(6)):
        for c in ti.static(range(6)):
            out[a, c] = get(ref, e, (6 * i + a) * DIM + 6 * j + c, col)
    return out


@ti.func
def _put_block(ref: ti.template(), col: ti.template(), e, i, j, m):
    for a in ti.static(range(6)):
        for c in ti.static(range(6)):
            put(ref, e, (6 * i + a) * DIM + 6 * j + c, col, m[a, c])


@ti.func
def _build_phi(D: ti.template(), e, n):
    """``Phi_ij`` of every two members (zero between trees)."""
    for i in range(n):
        ji = get(D.soil_group_i, e, i, SOIL_GROUP_I.joint)
        for j in range(n):
            jj = get(D.soil_group_i, e, j, SOIL_GROUP_I.joint)
            m = mat6(0.0)
            if get(D.soil_group_i, e, i, SOIL_GROUP_I.tree) == get(D.soil_group_i, e, j, SOIL_GROUP_I.tree):
                m = link_cross_phi(D, e, jj, ji)  # link i's velocity per unit spatial impulse on link j
            _put_block(D.soil_group_matrix, SOIL_GROUP_MATRIX.phi, e, i, j, m)
    put(D.soil_group_state, e, 0, SOIL_GROUP_STATE.built, 1)


@ti.func
def _rhs(D: ti.template(), e, i):
    """Member ``i``'s part of the right-hand side (or the solution)."""
    return ti.Vector([get(D.soil_group_vector, e, 6 * i + a, SOIL_GROUP_VECTOR.rhs) for a in ti.static(range(6))])


@ti.func
def _set_rhs(D: ti.template(), e, i, x):
    for a in ti.static(range(6)):
        put(D.soil_group_vector, e, 6 * i + a, SOIL_GROUP_VECTOR.rhs, x[a])


@ti.func
def _h(D: ti.template(), e, j):
    """Member ``j``'s ``H`` (6x6)."""
    h = getn(D.soil_group_f, e, j, SOIL_GROUP_F.h, 36)
    out = mat6(0.0)
    for a in ti.static(range(6)):
        for c in ti.static(range(6)):
            out[a, c] = h[6 * a + c]
    return out


@ti.func
def inverse6(a):
    """``a^-1`` for a 6x6 ``a`` (Gauss-Jordan elimination with partial pivoting)."""
    b = ti.Matrix.identity(float, 6)
    for k in ti.static(range(6)):
        p = k
        big = ti.abs(a[k, k])
        for i in ti.static(range(k + 1, 6)):
            if ti.abs(a[i, k]) > big:
                big = ti.abs(a[i, k])
                p = i
        for i in ti.static(range(k + 1, 6)):
            if p == i:
                for c in ti.static(range(6)):
                    a[k, c], a[i, c] = a[i, c], a[k, c]
                    b[k, c], b[i, c] = b[i, c], b[k, c]
        inv = 1.0 / a[k, k]
        for c in ti.static(range(6)):
            a[k, c] *= inv
            b[k, c] *= inv
        for i in ti.static(range(6)):
            if i != k:
                f = a[i, k]
                for c in ti.static(range(6)):
                    a[i, c] -= f * a[k, c]
                    b[i, c] -= f * b[k, c]
    return b


@ti.func
def _newton_step(D: ti.template(), e, n):
    """Solve ``(I + Phi H) x = rhs`` over the ``6 n`` unknowns (``SOIL_GROUP_VECTOR.rhs`` holds ``rhs``, then
    ``x``) by block Gaussian elimination on its 6x6 blocks, each diagonal block inverted with partial
    pivoting (the diagonal blocks ``I + Phi_ii H_i`` and their Schur complements are far from singular: the
    eigenvalues of ``Phi H`` are real and non-negative)."""
    for j in range(n):
        h = _h(D, e, j)
        for i in range(n):
            m = _block(D.soil_group_matrix, SOIL_GROUP_MATRIX.phi, e, i, j) @ h
            if i == j:
                m += ti.Matrix.identity(float, 6)
            _put_block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, i, j, m)
    for k in range(n):  # S_kj <- S_kk^-1 S_kj (j > k), rhs_k <- S_kk^-1 rhs_k; then eliminate below
        inv = inverse6(_block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, k, k))
        z = inv @ _rhs(D, e, k)
        _set_rhs(D, e, k, z)
        for j in range(k + 1, n):
            _put_block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, k, j,
                       inv @ _block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, k, j))
        for i in range(k + 1, n):
            sik = _block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, i, k)
            _set_rhs(D, e, i, _rhs(D, e, i) - sik @ z)
            for j in range(k + 1, n):
                _put_block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, i, j,
                           _block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, i, j) -
                           sik @ _block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, k, j))
    for kk in range(n):  # back substitution: x_k = z_k - sum_{j > k} W_kj x_j
        k = n - 1 - kk
        x = _rhs(D, e, k)
        for j in range(k + 1, n):
            x -= _block(D.soil_group_matrix, SOIL_GROUP_MATRIX.system, e, k, j) @ _rhs(D, e, j)
        _set_rhs(D, e, k, x)


@ti.func
def _solve_stage(D: ti.template(), e, n, dt, tolerance, stiffness):
    """One solve of the group: Newton's method on ``G`` (module docstring) from the members' current velocities,
    with anchors ``stiffness`` times a point's own response and, where that does not converge, again with the
    soft ones. The rows hold the impulses of the last pass and the links have been pushed by their change.
    Returns whether it converged and ``|G|`` at its first pass (the rows' impulses as they were)."""
    converged = False
    first_size = 0.0
    for i in range(n):
        vel, _phi, _total = open_link_run(D, e, get(D.soil_group_i, e, i, SOIL_GROUP_I.joint))
        putn(D.soil_group_f, e, i, SOIL_GROUP_F.origin, vel)
    for attempt in range(2):  # the stiff anchors, then the soft ones from the same start
        if not converged:
            kappa = stiffness if attempt == 0 else STICK_STIFFNESS_SAFE
            for i in range(n):
                putn(D.soil_group_f, e, i, SOIL_GROUP_F.velocity, getn(D.soil_group_f, e, i, SOIL_GROUP_F.origin, 6))
                putn(D.soil_group_f, e, i, SOIL_GROUP_F.step, vec6(0.0))
            stalled = False
            last = 0.0  # |G| of the last accepted pass
            halvings = 0
            for it in range(NEWTON_ITERATIONS):
                if not converged and not stalled:
                    first = attempt == 0 and it == 0  # the rows still hold the impulses the group started from
                    for i in range(n):
                        putn(D.soil_group_f, e, i, SOIL_GROUP_F.summed, vec6(0.0))
                        if first:
                            putn(D.soil_group_f, e, i, SOIL_GROUP_F.start, vec6(0.0))
                        for a in ti.static(range(6)):
                            for c in ti.static(range(6)):
                                put(D.soil_group_f, e, i, SOIL_GROUP_F.h + 6 * a + c, 0.0)
                    for k in range(get(D.soil_group_state, e, 0, SOIL_GROUP_STATE.blocks)):
                        i = get(D.soil_group_i, e, k, SOIL_GROUP_I.member)
                        summed, before, h = soil_pass(D, e, get(D.soil_group_i, e, k, SOIL_GROUP_I.first),
                                                      get(D.soil_group_i, e, k, SOIL_GROUP_I.end),
                                                      getn(D.soil_group_f, e, i, SOIL_GROUP_F.velocity, 6),
                                                      first, dt, kappa)
                        if first:
                            putn(D.soil_group_f, e, i, SOIL_GROUP_F.start,
                                 getn(D.soil_group_f, e, i, SOIL_GROUP_F.start, 6) + before)
                        putn(D.soil_group_f, e, i, SOIL_GROUP_F.summed,
                             getn(D.soil_group_f, e, i, SOIL_GROUP_F.summed, 6) + summed)
                        for a in ti.static(range(6)):
                            for c in ti.static(range(6)):
                                add(D.soil_group_f, e, i, SOIL_GROUP_F.h + 6 * a + c, h[a, c])
                    size = 0.0
                    for i in range(n):
                        g = getn(D.soil_group_f, e, i, SOIL_GROUP_F.velocity, 6) - \
                            getn(D.soil_group_f, e, i, SOIL_GROUP_F.origin, 6)
                        for j in range(n):
                            g -= _block(D.soil_group_matrix, SOIL_GROUP_MATRIX.phi, e, i, j) @ \
                                (getn(D.soil_group_f, e, j, SOIL_GROUP_F.summed, 6) -
                                 getn(D.soil_group_f, e, j, SOIL_GROUP_F.start, 6))
                        size = ti.max(size, ti.max(g.max(), -g.min()))
                        _set_rhs(D, e, i, -g)
                    if first:
                        first_size = size
                    move, halvings = newton_move(size, last, it, halvings, tolerance)
                    if move == CONVERGED:
                        converged = True
                    elif move == STALLED:
                        stalled = True
                    elif move == HALVE:
                        for i in range(n):
                            step = 0.5 * getn(D.soil_group_f, e, i, SOIL_GROUP_F.step, 6)
                            putn(D.soil_group_f, e, i, SOIL_GROUP_F.step, step)
                            putn(D.soil_group_f, e, i, SOIL_GROUP_F.velocity,
                                 getn(D.soil_group_f, e, i, SOIL_GROUP_F.velocity, 6) - step)
                    elif move == STEP:
                        _newton_step(D, e, n)
                        for i in range(n):
                            step = _rhs(D, e, i)
                            putn(D.soil_group_f, e, i, SOIL_GROUP_F.step, step)
                            putn(D.soil_group_f, e, i, SOIL_GROUP_F.velocity,
                                 getn(D.soil_group_f, e, i, SOIL_GROUP_F.velocity, 6) + step)
                        last = size
    for i in range(n):  # the rows hold the impulses of the last pass: push their change
        close_link_run(D, e, get(D.soil_group_i, e, i, SOIL_GROUP_I.joint),
                       getn(D.soil_group_f, e, i, SOIL_GROUP_F.summed, 6) -
                       getn(D.soil_group_f, e, i, SOIL_GROUP_F.start, 6))
    return converged, first_size


@ti.func
def soil_group_sweep(D: ti.template(), e, dt, tolerance, stages):
    """The group's part of a sweep: ``stages`` solves (:func:`_solve_stage`), the first with the stiff shear
    anchors, each later one from the impulses the last left with anchors ``STAGE_FACTOR`` times stiffer; the
    stages end early where one does not converge or starts at its fixed point (``|G|`` within a tenth of the
    tolerance at its first pass). Returns whether the last stage converged (the members then skip their own
    blocks in this sweep). An empty group returns False."""
    n = get(D.soil_group_state, e, 0, SOIL_GROUP_STATE.count)
    converged = False
    if n > 0:
        if get(D.soil_group_state, e, 0, SOIL_GROUP_STATE.built) == 0:
            _build_phi(D, e, n)
        stiffness = STICK_STIFFNESS
        going = True
        for _stage in range(stages):
            if going:
                ok, first_size = _solve_stage(D, e, n, dt, tolerance, stiffness)
                converged = ok
                if not ok or first_size <= 0.1 * tolerance:
                    going = False
                stiffness *= STAGE_FACTOR
        if converged:
            add(D.soil_group_state, e, 0, SOIL_GROUP_STATE.solved, 1)
        else:
            add(D.soil_group_state, e, 0, SOIL_GROUP_STATE.failed, 1)
    return converged
