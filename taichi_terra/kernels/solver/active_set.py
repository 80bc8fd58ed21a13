"""The contact block's members solved together by an active-set method (``solver/block.py``).

Each member (a rigid contact of a tree link with static geometry) is in one of three states:

- off: no impulse, its normal velocity at or above its target;
- sticking: its impulse inside its friction cone, its velocity at the target (the normal one, zero slip);
- sliding: its impulse on the rim of its cone, ``lambda_n (1, mu d)`` in its contact frame with ``d`` the
  unit direction of its friction (``BLOCK_VECTOR.slip`` holds ``(1, mu d)``), its normal velocity at its
  target and its slip against ``d``.

For given states the members' impulses solve one linear system (:func:`_build_system`): three unknowns and
equations for a sticking member, one (its normal impulse; its normal velocity) for a sliding one, none for
one that is off. With ``K`` the members' Delassus matrix (``BLOCK_MATRIX``) and ``f_k`` member ``k``'s
velocity less its target with every member's impulse taken out (``BLOCK_VECTOR.free``), a sticking member's
equations are ``f_k + sum_l K_kl lambda_l = 0`` and a sliding one's the normal row of them. The system is not
symmetric (a sliding member's column is ``K_lk (1, mu d_k)``); it is factored by Gaussian elimination with
partial pivoting (:func:`_factor`), and the factors serve the next sweeps while the states and directions
hold and no member joins (``BLOCK_STATE.factored``). Where a pivot falls below ``_pivot()`` times its diagonal entry
(redundant members: two contacts at one point of a belt's mid-plane, four feet under one rigid body), the
system is built again with its diagonal raised by ``REGULARIZATION * _pivot()`` times itself and the
raise times the present impulse added to its right-hand side: the raise acts on the change of the impulse,
so the fixed point stays that of the unregularized equations, and the load the redundant members share
stays where it was.

The solution is then checked member by member (:func:`_next_state`): a sticking member with a negative
normal impulse goes off, one outside its cone slides (along its friction's direction in the solution);
a sliding member with a negative normal impulse goes off, one whose slip runs along its friction sticks,
one whose friction is not against its slip turns to face it; a member that is off but closing faster than
its target sticks, or slides against its slip where it slips. The member that breaks its state most
(measured as an impulse: velocities times the inverse of the member's normal Delassus entry) changes, one
per solve, and the system is solved again, up to ``ACTIVE_SET_ITERATIONS`` times. Whether a member sticks
or slides is checked with a slack of ``SLACK`` times the sweep tolerance (as a velocity; as an impulse
through the same inverse), so a member on the rim of its cone with no slip, which either state describes,
does not flip between them; whether it carries load, with ``NORMAL_SLACK`` of that. (Where a member that
should carry a little is left off within a slack of the tolerance, the others can end far from their
solution: on ``perf.bench_tracks``' sine-shaped map, 1.2e-4 m/s at one step.) Where sweeps row by row
converge on that map, they mostly end within 1e-10 m/s of the block's solution (``docs/physics/solver.md``).

Coulomb friction makes the problem non-monotone: a member can flip between sticking and sliding as the
load of the others shifts, and a contact problem can have several solutions. A member that changed state
``MAX_SWITCHES`` times is not changed again; where only such members break their states, or no set of states
is found within the iterations, nothing changes and the sweep goes on row by row (the projected solution
of a set that does not hold can be a fixed point of the block's sweeps far from the row-by-row one: 1.7e-2
m/s at a step of the tracked robot).
"""
import taichi as ti

from ...backend import ti_real
from ..common.arrays import BLOCK_I, BLOCK_MATRIX, BLOCK_ROWS, BLOCK_STATE, BLOCK_SYSTEM, BLOCK_UNKNOWN, \
    BLOCK_UNKNOWNS, BLOCK_VECTOR, ROW_F, ROW_I
from ..common.schema import get, get3, get33, put, putn
from .contact import clamp_to_cone
from .links import apply_impulse, relative_velocity
from .rows import row_geometry

vec2 = ti.math.vec2
vec3 = ti.math.vec3

OFF, STICK, SLIDE = 0, 1, 2  # a member's states
#: a member sticks while ``|lambda_t| < _INSIDE mu lambda_n``: on the rim it slides
_INSIDE = 1.0 - 1e-9
#: a sliding member's direction, as found from its impulse, is the one it was solved with within this (times mu)
_SAME_SLIP = 1e-9
#: where the system is singular, its diagonal is raised by this times ``_pivot()`` times itself
REGULARIZATION = 4.0
#: solves at most in one active-set solve (one sweep)
ACTIVE_SET_ITERATIONS = 16
#: state changes of one member after which the solve does not change it again
MAX_SWITCHES = 5
#: the checks' slack: this share of the sweep tolerance, for whether a member sticks or slides (module
#: docstring)
SLACK = 0.25
#: ... and this share of that slack for whether it carries load
NORMAL_SLACK = 0.01


def _pivot() -> float:
    """A pivot below this times its diagonal entry as built: the system is taken as singular. (In f32
    rounding alone leaves about 1e-6.)"""
    return 1e-6 if ti_real() == ti.f64 else 1e-3


@ti.func
def member_error(D: ti.template(), e, r):
    """Member row ``r``'s velocity (contact frame) less its target (the normal one, zero slip) [m/s]."""
    frame, ra, rb = row_geometry(D, e, r)
    vloc = frame.transpose() @ relative_velocity(D, e, r, -1, get(D.row_i, e, r, ROW_I.side_b), ra, rb)
    return vloc - vec3(get(D.row_f, e, r, ROW_F.target), 0.0, 0.0)


@ti.func
def _delassus(D: ti.template(), e, k, l):
    """``K_kl``: member ``k``'s velocity (frame) per unit impulse on member ``l`` (frame)."""
    return get33(D.block_matrix, e, k * BLOCK_ROWS + l, BLOCK_MATRIX.delassus)


@ti.func
def _entry(D: ti.template(), e, i, j):
    return get(D.block_system, e, i * BLOCK_UNKNOWNS + j, BLOCK_SYSTEM.entry)


@ti.func
def _set_entry(D: ti.template(), e, i, j, value):
    put(D.block_system, e, i * BLOCK_UNKNOWNS + j, BLOCK_SYSTEM.entry, value)


@ti.func
def _slip_of(mu, lam):
    """``(1, mu d)`` for a frame impulse ``lam`` with friction along ``d``."""
    lt = ti.sqrt(lam[1] * lam[1] + lam[2] * lam[2])
    return vec3(1.0, mu * lam[1] / lt, mu * lam[2] / lt)


@ti.func
def _start(D: ti.template(), e, count):
    """Each member's state from its impulse (a sliding member keeps its direction where its friction still
    runs along it) and its velocity error with every member's impulse taken out; the factors of the last
    solve are dropped where a state or a direction changed."""
    for k in range(count):
        r = get(D.block_i, e, k, BLOCK_I.row)
        lam = get3(D.row_f, e, r, ROW_F.impulse)
        mu = get(D.row_f, e, r, ROW_F.friction)
        state = OFF
        if lam[0] > 0.0:
            state = STICK
            if lam[1] * lam[1] + lam[2] * lam[2] >= (_INSIDE * mu * lam[0]) ** 2:
                state = SLIDE
                slip = _slip_of(mu, lam)
                if get(D.block_i, e, k, BLOCK_I.state) != SLIDE or \
                        (slip - get3(D.block_vector, e, k, BLOCK_VECTOR.slip)).norm() > _SAME_SLIP * mu:
                    putn(D.block_vector, e, k, BLOCK_VECTOR.slip, slip)
                    put(D.block_state, e, 0, BLOCK_STATE.factored, 0)
        if state != get(D.block_i, e, k, BLOCK_I.state):
            put(D.block_i, e, k, BLOCK_I.state, state)
            put(D.block_state, e, 0, BLOCK_STATE.factored, 0)
        put(D.block_i, e, k, BLOCK_I.switches, 0)
    for k in range(count):
        v = member_error(D, e, get(D.block_i, e, k, BLOCK_I.row))
        for l in range(count):
            if get(D.block_i, e, l, BLOCK_I.state) != OFF:  # (an unloaded member's impulse is zero)
                v -= _delassus(D, e, k, l) @ get3(D.row_f, e, get(D.block_i, e, l, BLOCK_I.row), ROW_F.impulse)
        putn(D.block_vector, e, k, BLOCK_VECTOR.free, v)


@ti.func
def _unknowns(D: ti.template(), e, count):
    """Number the unknowns of the members' present states (``BLOCK_I.start``); returns how many."""
    n = 0
    for k in range(count):
        start = -1
        state = get(D.block_i, e, k, BLOCK_I.state)
        if state == STICK:
            start = n
            n += 3
        elif state == SLIDE:
            start = n
            n += 1
        put(D.block_i, e, k, BLOCK_I.start, start)
    return n


@ti.func
def _build_system(D: ti.template(), e, count, reg):
    """The matrix of the members' present states, its diagonal raised by ``reg`` times itself."""
    for k in range(count):
        sk = get(D.block_i, e, k, BLOCK_I.start)
        if sk >= 0:
            nk = 3 if get(D.block_i, e, k, BLOCK_I.state) == STICK else 1
            for l in range(count):
                sl = get(D.block_i, e, l, BLOCK_I.start)
                if sl >= 0:
                    kkl = _delassus(D, e, k, l)
                    if get(D.block_i, e, l, BLOCK_I.state) == STICK:
                        for a in ti.static(range(3)):
                            if a < nk:
                                for c in ti.static(range(3)):
                                    _set_entry(D, e, sk + a, sl + c, kkl[a, c])
                    else:
                        column = kkl @ get3(D.block_vector, e, l, BLOCK_VECTOR.slip)
                        for a in ti.static(range(3)):
                            if a < nk:
                                _set_entry(D, e, sk + a, sl, column[a])
            for a in ti.static(range(3)):
                if a < nk:
                    i = sk + a
                    _set_entry(D, e, i, i, (1.0 + reg) * _entry(D, e, i, i))
                    put(D.block_unknown, e, i, BLOCK_UNKNOWN.scale, ti.abs(_entry(D, e, i, i)))


@ti.func
def _build_rhs(D: ti.template(), e, count, reg):
    """The right-hand side: less the members' free velocity errors, plus, where the diagonal is raised by
    ``reg`` times itself, that raise times the present impulse (the raise then acts on its change)."""
    for k in range(count):
        sk = get(D.block_i, e, k, BLOCK_I.start)
        if sk >= 0:
            nk = 3 if get(D.block_i, e, k, BLOCK_I.state) == STICK else 1
            free = get3(D.block_vector, e, k, BLOCK_VECTOR.free)
            lam = get3(D.row_f, e, get(D.block_i, e, k, BLOCK_I.row), ROW_F.impulse)
            for a in ti.static(range(3)):
                if a < nk:
                    i = sk + a
                    raised = reg / (1.0 + reg) * get(D.block_unknown, e, i, BLOCK_UNKNOWN.scale)
                    put(D.block_unknown, e, i, BLOCK_UNKNOWN.rhs, -free[a] + raised * lam[a])


@ti.func
def _factor(D: ti.template(), e, n):
    """LU factors of the ``n`` unknowns' system in place by Gaussian elimination with partial pivoting (the
    multipliers below the diagonal, each step's swapped row in ``BLOCK_UNKNOWN.pivot``). Returns False where
    a pivot falls below ``_pivot()`` times its column's diagonal entry as built (singular: redundant
    members)."""
    ok = True
    for c in range(n):
        if ok:
            best = c
            big = ti.abs(_entry(D, e, c, c))
            for i in range(c + 1, n):
                v = ti.abs(_entry(D, e, i, c))
                if v > big:
                    big = v
                    best = i
            put(D.block_unknown, e, c, BLOCK_UNKNOWN.pivot, float(best))
            if big <= ti.static(_pivot()) * get(D.block_unknown, e, c, BLOCK_UNKNOWN.scale):
                ok = False
            else:
                if best != c:
                    for j in range(n):
                        v = _entry(D, e, c, j)
                        _set_entry(D, e, c, j, _entry(D, e, best, j))
                        _set_entry(D, e, best, j, v)
                p = _entry(D, e, c, c)
                for i in range(c + 1, n):
                    f = _entry(D, e, i, c) / p
                    _set_entry(D, e, i, c, f)
                    if f != 0.0:
                        for j in range(c + 1, n):
                            _set_entry(D, e, i, j, _entry(D, e, i, j) - f * _entry(D, e, c, j))
    return ok


@ti.func
def _substitute(D: ti.template(), e, n):
    """``BLOCK_UNKNOWN.solution`` from the right-hand side and the factors of :func:`_factor`."""
    for c in range(n):  # the swaps in their order (the factor swapped whole rows, multipliers included)
        best = int(get(D.block_unknown, e, c, BLOCK_UNKNOWN.pivot))
        if best != c:
            v = get(D.block_unknown, e, c, BLOCK_UNKNOWN.rhs)
            put(D.block_unknown, e, c, BLOCK_UNKNOWN.rhs, get(D.block_unknown, e, best, BLOCK_UNKNOWN.rhs))
            put(D.block_unknown, e, best, BLOCK_UNKNOWN.rhs, v)
    for c in range(n):  # L (unit diagonal)
        b = get(D.block_unknown, e, c, BLOCK_UNKNOWN.rhs)
        for i in range(c + 1, n):
            put(D.block_unknown, e, i, BLOCK_UNKNOWN.rhs,
                get(D.block_unknown, e, i, BLOCK_UNKNOWN.rhs) - _entry(D, e, i, c) * b)
    for ii in range(n):  # U
        i = n - 1 - ii
        x = get(D.block_unknown, e, i, BLOCK_UNKNOWN.rhs)
        for j in range(i + 1, n):
            x -= _entry(D, e, i, j) * get(D.block_unknown, e, j, BLOCK_UNKNOWN.solution)
        put(D.block_unknown, e, i, BLOCK_UNKNOWN.solution, x / _entry(D, e, i, i))


@ti.func
def _solve_states(D: ti.template(), e, count):
    """Solve the system of the members' present states, factored anew unless the last factors hold (module
    docstring). Returns False where it is singular even with its diagonal raised."""
    n = _unknowns(D, e, count)
    factored = get(D.block_state, e, 0, BLOCK_STATE.factored)
    if factored == 0:
        _build_system(D, e, count, 0.0)
        factored = 1
        if not _factor(D, e, n):
            _build_system(D, e, count, ti.static(REGULARIZATION * _pivot()))
            factored = 2
            if not _factor(D, e, n):
                factored = 0
        put(D.block_state, e, 0, BLOCK_STATE.factored, factored)
    if factored != 0:
        _build_rhs(D, e, count, 0.0 if factored == 1 else ti.static(REGULARIZATION * _pivot()))
        _substitute(D, e, n)
    return factored != 0


@ti.func
def _solved(D: ti.template(), e, k):
    """Member ``k``'s impulse (frame) in the solution, by its state."""
    lam = vec3(0.0, 0.0, 0.0)
    sk = get(D.block_i, e, k, BLOCK_I.start)
    state = get(D.block_i, e, k, BLOCK_I.state)
    if state == STICK:
        lam = vec3(get(D.block_unknown, e, sk, BLOCK_UNKNOWN.solution),
                   get(D.block_unknown, e, sk + 1, BLOCK_UNKNOWN.solution),
                   get(D.block_unknown, e, sk + 2, BLOCK_UNKNOWN.solution))
    elif state == SLIDE:
        lam = get(D.block_unknown, e, sk, BLOCK_UNKNOWN.solution) * get3(D.block_vector, e, k, BLOCK_VECTOR.slip)
    return lam


@ti.func
def _next_state(D: ti.template(), e, k, count, slack):
    """How much member ``k`` breaks its state in the solution (an impulse [N s]; 0: not at all, within
    ``slack`` [m/s]) and the state it asks for (``BLOCK_I.next``; where that is sliding, the direction in
    ``BLOCK_VECTOR.next_slip``, except for a sticking member leaving its cone: that direction is the
    solution's, set when it changes)."""
    r = get(D.block_i, e, k, BLOCK_I.row)
    mu = get(D.row_f, e, r, ROW_F.friction)
    w = get(D.row_f, e, r, ROW_F.delassus)  # (its normal entry)
    give = slack / w
    state = get(D.block_i, e, k, BLOCK_I.state)
    lam = _solved(D, e, k)
    v = get3(D.block_vector, e, k, BLOCK_VECTOR.free)
    for l in range(count):
        if get(D.block_i, e, l, BLOCK_I.start) >= 0:
            v += _delassus(D, e, k, l) @ _solved(D, e, l)
    lt = ti.sqrt(lam[1] * lam[1] + lam[2] * lam[2])
    vt = ti.sqrt(v[1] * v[1] + v[2] * v[2])
    nxt = state
    violation = 0.0
    if state == STICK:
        if lam[0] < -ti.static(NORMAL_SLACK) * give:
            nxt = OFF
            violation = lt - lam[0]
        elif lt > mu * lam[0] + give:
            nxt = SLIDE
            violation = lt - mu * lam[0]
    elif state == SLIDE:
        if lam[0] < -ti.static(NORMAL_SLACK) * give:
            nxt = OFF
            violation = -lam[0]
        else:
            along = (v[1] * lam[1] + v[2] * lam[2]) / lt
            if along > slack:  # slipping along its friction
                nxt = STICK
                violation = along / w
            elif vt > slack:  # its friction not against its slip: it turns
                turn = mu * lam[0] * (vec2(lam[1], lam[2]) / lt + vec2(v[1], v[2]) / vt).norm()
                if turn > give:
                    violation = turn
                    putn(D.block_vector, e, k, BLOCK_VECTOR.next_slip, vec3(1.0, -mu * v[1] / vt, -mu * v[2] / vt))
    elif v[0] < -ti.static(NORMAL_SLACK) * slack:  # closing faster than its target
        nxt = STICK
        violation = -v[0] / w
        if vt > slack:
            nxt = SLIDE
            putn(D.block_vector, e, k, BLOCK_VECTOR.next_slip, vec3(1.0, -mu * v[1] / vt, -mu * v[2] / vt))
    put(D.block_i, e, k, BLOCK_I.next, nxt)
    return violation


@ti.func
def solve_members(D: ti.template(), e, count, tolerance):
    """Solve the ``count`` members of env ``e``'s contact block together (module docstring; ``tolerance``
    [m/s]: the sweep's) and apply the change of their impulses. Returns a mask of the members solved
    (bit ``k``: member ``k``; they skip their one-by-one update in this sweep), -1 where no set of states
    was found (nothing changed)."""
    _start(D, e, count)
    result = -1
    going = True
    for _it in range(ACTIVE_SET_ITERATIONS):
        if going:
            if not _solve_states(D, e, count):
                going = False
            else:
                worst = -1
                most = 0.0
                stuck = False  # a member that changed state MAX_SWITCHES times breaks its state again
                for k in range(count):
                    violation = _next_state(D, e, k, count, SLACK * tolerance)
                    if violation > 0.0 and get(D.block_i, e, k, BLOCK_I.switches) >= MAX_SWITCHES:
                        stuck = True
                    elif violation > most:
                        most = violation
                        worst = k
                if worst < 0 and stuck:  # only such members break their states: no solution found
                    going = False
                elif worst < 0:  # every state holds: take the solution
                    going = False
                    result = 0
                    for k in range(count):
                        r = get(D.block_i, e, k, BLOCK_I.row)
                        lam = clamp_to_cone(_solved(D, e, k), get(D.row_f, e, r, ROW_F.friction))  # (by the slack)
                        change = lam - get3(D.row_f, e, r, ROW_F.impulse)
                        if change.norm() > 0.0:
                            frame, ra, rb = row_geometry(D, e, r)
                            apply_impulse(D, e, r, -1, get(D.row_i, e, r, ROW_I.side_b), ra, rb, frame @ change)
                            putn(D.row_f, e, r, ROW_F.impulse, lam)
                        result |= 1 << k
                else:
                    nxt = get(D.block_i, e, worst, BLOCK_I.next)
                    if nxt == SLIDE:  # (from sticking: its friction's direction in the solution)
                        slip = get3(D.block_vector, e, worst, BLOCK_VECTOR.next_slip)
                        if get(D.block_i, e, worst, BLOCK_I.state) == STICK:
                            slip = _slip_of(get(D.row_f, e, get(D.block_i, e, worst, BLOCK_I.row), ROW_F.friction),
                                            _solved(D, e, worst))
                        putn(D.block_vector, e, worst, BLOCK_VECTOR.slip, slip)
                    put(D.block_state, e, 0, BLOCK_STATE.factored, 0)
                    put(D.block_i, e, worst, BLOCK_I.state, nxt)
                    put(D.block_i, e, worst, BLOCK_I.switches, get(D.block_i, e, worst, BLOCK_I.switches) + 1)
    return result
