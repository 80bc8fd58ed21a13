"""Soil blocks: the soil rows under one body (or tree link) solved together, on its six velocities.

The soil points under a wheel or a plate are hundreds of rows coupled through one rigid body: an impulse
at any of them moves them all. Row by row, the sweep passes the body's load from point to point, and each
sweep takes off only part of the error (a sled dragged over the bed of ``scenes/soil_ruts.py``: 21 sweeps
per step until its velocities settle to 1 um/s). Here the rows of one soil pair, a body (or a tree link)
against a bed, are one block whose unknown is the link's spatial velocity ``V = (w, v)`` at its reference
point (a free body's centre of mass, a tree link's tree reference; ``links.py``).

With the link's spatial response ``Phi`` (6x6: the velocity change per spatial impulse), its velocity
``V0`` and each row's impulse ``lam0_k`` when the block starts, the block solves

    G(V) = V - V0 - Phi sum_k A_k^T F_k (lam_k(F_k^T A_k V) - lam0_k) = 0,

where ``A_k = [-skew(r_k), I]`` maps ``V`` to the velocity of point ``k`` (offset ``r_k``), ``F_k`` is its
frame and ``lam_k(v)`` the soil laws written for the velocity the point ends the step with
(``soil/law.py``, ``soil_traction``: the Bekker, elastic, viscous and Janosi laws and the point's soil
history that the row-by-row update solves). The shear law is set-valued where a point sticks, so it enters
as the projection of ``anchor - kappa v_t`` on the strength's disc, ``anchor`` the row's shear impulse
when the block started and ``kappa`` a multiple of the inverse of its own tangential Delassus entries. A
row that the sweep has settled (its impulse equal to its law at its end velocity) is then left where it
is, and the block's solution moves each sticking point's impulse by ``kappa`` times the slip the block
leaves there: from one sweep to the next the anchors follow, and the sweeps converge to the row-by-row
fixed point, whatever ``kappa`` is.

How fast the anchors follow depends on ``kappa``: a mode of the sticking points' slip that their impulses
move little (shear pushing a quadruped's feet against each other through its legs, a body's rotation
about its soil points) shrinks by about ``1 / (1 + kappa mu)`` a sweep, ``mu`` its compliance. The block
first takes ``kappa`` ``STICK_STIFFNESS`` = 30 times the point's own Delassus inverse; where Newton's
method does not converge with that (more points cross the disc's edge as the anchors stiffen), it starts
again from ``V0`` with 1 times, from the same anchors and the same starting impulses. Measured
(``perf/bench_solver.py``, 1e-6 m/s, mean sweeps per step, 1 / 10 / 30 / 300 times): the quadruped
standing on soil 13.0 / 7.4 / 6.8 / 6.8, the ruts scene 3.6 / 2.6 / 2.4 / 3.3. The stiff anchors are tried
in every sweep, though a driven wheel's block (points slipping and sticking by turns) often fails with
them: a pair that kept the soft ones for the rest of the step after one failure took more sweeps and
more time in every case (the ruts scene 3.17 against 2.33 sweeps, 4.9x against 5.7x real time; the
quadruped 7.1 against 6.8, 14.4x against 15.6x; the buggy 14.9 against 11.5, 1.52x against 1.73x, with
the pin blocks of ``pin_block.py``).

Newton's method on ``G`` takes ``(I + Phi H) dV = -G`` with ``H = sum_k A_k^T F_k K_k F_k^T A_k`` and
``K_k = -d lam_k / d v`` (positive semi-definite but for the shear's dependence on the normal impulse);
``I + Phi H`` is never singular. Each iteration is one pass over the rows that evaluates the laws, writes
each row's impulse at the current ``V`` and sums the spatial impulse, so whenever the block stops, the
impulses it leaves and the velocity change pushed to the link (``Phi`` times their sum) agree.

The block stops when ``|G|`` (its largest entry, [m/s] and [rad/s]) is below a tenth of the sweep
tolerance. The laws are only piecewise smooth (the rut floor, the elastic-plastic switch, the disc's
edge), and Newton can cycle across their kinks: a block whose ``|G|`` grows from one pass to the next, or
that has not converged in ``NEWTON_ITERATIONS`` passes, stops (and with the stiff anchors, starts again
with the soft ones). If that one does not converge either, it stops where it is and its rows take their
row-by-row update in the same sweep (``sweep.py``); the block is tried again in the next sweep.
"""
import taichi as ti

from ..common.arrays import CONTACT, FEATURE, PAIR, ROW_F, ROW_I, SOIL
from ..common.layout import FEAT_SOIL, ROW_SOIL
from ..common.math import skew, upper_solve6, vec3
from ..common.schema import get, get3, getn, putn, row
from ..soil.history import soil_point
from ..soil.law import SoilPoint, soil_traction
from .links import spatial_impulse
from .rows import row_geometry

vec6 = ti.types.vector(6, float)
mat6 = ti.types.matrix(6, 6, float)
mat3 = ti.math.mat3

#: Newton passes over a block's rows in one sweep at most
NEWTON_ITERATIONS = 12
#: times a Newton step that made |G| grow may be halved in one solve
MAX_HALVINGS = 3
#: a sticking point's shear stiffness in the block, in units of its own Delassus block's inverse: first tried,
#: and where Newton's method did not converge with it (module docstring)
STICK_STIFFNESS = 30.0
STICK_STIFFNESS_SAFE = 1.0


@ti.func
def soil_run_end(D: ti.template(), e, r0, n_rows):
    """One past the last row of row ``r0``'s pair (a pair's rows are consecutive)."""
    p = get(D.row_i, e, r0, ROW_I.pair)
    r1 = r0 + 1
    going = r1 < n_rows
    while going:
        if get(D.row_i, e, r1, ROW_I.pair) == p:
            r1 += 1
            going = r1 < n_rows
        else:
            going = False
    return r1


@ti.func
def is_soil_block(D: ti.template(), e, r):
    """Whether row ``r`` opens a soil block: a soil row against static ground (side a), not on a belt."""
    ri = row(D.row_i, e, r)
    return ri[ROW_I.kind] == ROW_SOIL and ri[ROW_I.side_a] < 0 and ri[ROW_I.belt_b] < 0


@ti.func
def solve6(a, b):
    """``x`` with ``a x = b`` for a 6x6 ``a`` (Gaussian elimination with partial pivoting)."""
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
                b[k], b[i] = b[i], b[k]
        for i in ti.static(range(k + 1, 6)):
            f = a[i, k] / a[k, k]
            for c in ti.static(range(k + 1, 6)):
                a[i, c] -= f * a[k, c]
            b[i] -= f * b[k]
    return upper_solve6(a, b)


@ti.func
def soil_pass(D: ti.template(), e, r0, r1, v, first, dt, stiffness):
    """One Newton pass over rows ``r0`` to ``r1 - 1`` (one soil pair's) at their link's spatial velocity ``v``:
    writes each row's impulse by its law at ``v`` and returns ``(summed, start, h)``: the rows' summed spatial
    impulse, their summed spatial impulse before this pass where ``first`` (the block's first pass, which
    also sets each row's shear anchor; zero otherwise), and ``H = sum_k A_k^T F_k K_k F_k^T A_k`` (module
    docstring); ``dt`` the step [s]; ``stiffness`` a sticking point's shear stiffness in units of the inverse
    of its own Delassus block."""
    m = get(D.pair, e, get(D.row_i, e, r0, ROW_I.pair), PAIR.other)
    width = get(D.row_f, e, r0, ROW_F.width)
    summed = vec6(0.0)
    start = vec6(0.0)
    hww, hwv, hvw, hvv = mat3(0.0), mat3(0.0), mat3(0.0), mat3(0.0)
    w_lin = vec3(v[3], v[4], v[5])
    w_ang = vec3(v[0], v[1], v[2])
    for r in range(r0, r1):
        frame, _ra, rb = row_geometry(D, e, r)
        s = get(D.row_i, e, r, ROW_I.slot)
        mat, st = soil_point(D, e, m, get(D.feature, e, s, FEATURE.now) - FEAT_SOIL)
        vloc = frame.transpose() @ (w_lin + w_ang.cross(rb))
        anchor = ti.math.vec2(0.0, 0.0)
        if first:
            old = get3(D.row_f, e, r, ROW_F.impulse)
            start += spatial_impulse(rb, frame @ old)
            anchor = ti.math.vec2(old[1], old[2])
            putn(D.row_f, e, r, ROW_F.anchor, anchor)
        else:
            anchor = getn(D.row_f, e, r, ROW_F.anchor, 2)
        kappa = stiffness * 2.0 / (get(D.row_f, e, r, ROW_F.delassus + 4) +
                                         get(D.row_f, e, r, ROW_F.delassus + 8))
        pt = SoilPoint(delta=st[SOIL.plastic] - get(D.contact, e, s, CONTACT.depth), s_p=st[SOIL.plastic],
                       j=st[SOIL.slip], area=get(D.contact, e, s, CONTACT.area), b=width,
                       rate=get(D.row_f, e, r, ROW_F.slip_rate))
        lam, kmat = soil_traction(vloc, pt, dt, mat, anchor, kappa)
        putn(D.row_f, e, r, ROW_F.impulse, lam)
        summed += spatial_impulse(rb, frame @ lam)
        kw = frame @ kmat @ frame.transpose()  # A^T kw A, A = [-skew(r), I]
        sk = skew(rb)
        hww -= sk @ kw @ sk
        hwv += sk @ kw
        hvw -= kw @ sk
        hvv += kw
    h = mat6(0.0)
    for a in ti.static(range(3)):
        for c in ti.static(range(3)):
            h[a, c] = hww[a, c]
            h[a, c + 3] = hwv[a, c]
            h[a + 3, c] = hvw[a, c]
            h[a + 3, c + 3] = hvv[a, c]
    return summed, start, h


#: what :func:`newton_move` tells a Newton iteration to do next
CONVERGED, STALLED, HALVE, STEP, STOP = 0, 1, 2, 3, 4


@ti.func
def newton_move(size, last, it, halvings, tolerance):
    """The next move of Newton's method on a block's or group's ``G`` after pass ``it`` measured ``|G|`` =
    ``size`` (``last``: that of the last accepted pass, ``halvings`` so far): ``CONVERGED`` within a tenth of
    the tolerance; where ``|G|`` grew, past a kink of the laws, ``HALVE`` the last step (``STALLED`` after
    ``MAX_HALVINGS``); else a Newton ``STEP``, or ``STOP`` after the last pass. Returns the move and the
    halvings."""
    move = STOP
    count = halvings
    if size <= 0.1 * tolerance:
        move = CONVERGED
    elif it > 0 and size > last:
        count += 1
        move = HALVE
        if count > MAX_HALVINGS:
            move = STALLED
    elif it < NEWTON_ITERATIONS - 1:
        move = STEP
    return move, count


@ti.func
def _newton(D: ti.template(), e, rows, vel, phi, dt, tolerance, stiffness, start, fresh):
    """Newton's method on ``G`` from ``vel`` (module docstring) for rows ``rows[0]`` to ``rows[1] - 1``, with a
    sticking point's shear ``stiffness``;
    ``fresh``: the rows' impulses are still those the block started from (their sum ``start`` and the shear
    anchors are taken from them in the first pass). Returns ``(total, start, converged)``."""
    r0, r1 = rows[0], rows[1]
    total = vec6(0.0)
    v = vel
    converged = False
    stalled = False
    last = 0.0  # |G| of the last accepted pass
    step = vec6(0.0)  # the last Newton step
    halvings = 0
    for it in range(NEWTON_ITERATIONS):
        if not converged and not stalled:
            summed, before, h = soil_pass(D, e, r0, r1, v, fresh and it == 0, dt, stiffness)
            if fresh and it == 0:
                start = before
            total = summed - start
            g = v - vel - phi @ total
            size = ti.max(g.max(), -g.min())
            move, halvings = newton_move(size, last, it, halvings, tolerance)
            if move == CONVERGED:
                converged = True
            elif move == STALLED:
                stalled = True
            elif move == HALVE:
                step *= 0.5
                v -= step
            elif move == STEP:
                step = solve6(ti.Matrix.identity(float, 6) + phi @ h, -g)
                v += step
                last = size
    return total, start, converged


@ti.func
def soil_block(D: ti.template(), e, r0, r1, vel, phi, dt, tolerance):
    """Solve rows ``r0`` to ``r1 - 1`` (one soil pair's) together on the spatial velocity of their link, which
    is ``vel`` (w, v at its reference point) with spatial response ``phi`` when the block starts. Writes each
    row's impulse; returns ``(total, converged)``: the change of the rows' summed spatial impulse (moment
    about the link's reference [N m s], impulse [N s]), which the caller pushes to the link, and whether
    Newton's method converged, with the stiff anchors or, failing that, the soft ones (module docstring)."""
    rows = ti.math.ivec2(r0, r1)
    total, start, converged = _newton(D, e, rows, vel, phi, dt, tolerance, STICK_STIFFNESS, vec6(0.0), True)
    if not converged:
        total, start, converged = _newton(D, e, rows, vel, phi, dt, tolerance, STICK_STIFFNESS_SAFE, start, False)
    return total, converged
