"""Pin blocks: a tree's pins solved together, and the rows on its links pushing it with its pins held.

A vehicle's suspension is a set of closed loops: each wishbone's upright is pinned to its upper arm, each
steered knuckle to its tie rod (``taichi_terra/bodies/buggy.py``). Swept one row at a time, a wheel's soil
block (``soil_block.py``) sees the response of its link as if the pins were not there (the knuckle free
to steer, the upright free to tilt: light links that move a lot), then the pin rows take that motion back,
and the next sweep starts over: the buggy's front wheels lost about 6 % of their error per sweep, some
50 sweeps per step at 1 um/s. This stage takes the pins into the response that the rows see.

For tree ``t`` with ``n`` pins that keep response columns (its loops and its pins to the world; a pin
joining two trees keeps its row-by-row update) let ``J`` (3n x nv) map the tree's velocities to the
pins' relative point velocities, ``G = M~^-1 J^T`` (``PIN_RESPONSE``) and ``K = J G`` (3n x 3n). Once per
step, after the pins' columns (``RESPONSES``):

1. ``K`` is assembled from the links' response columns (block ``(i, k)`` sums ``+-A_s^T J_s B_u A_u`` over
   the two ends ``s`` of pin ``i`` and ``u`` of pin ``k``, ``B_u`` the response columns of the link at ``u``
   and ``A`` the point maps, ``dynamics/bodies.py``) and factored as ``P^T K P = L diag(d) L^T``, the largest
   diagonal entry left the pivot at each step (a pin's rows are in world axes, so a loop's redundant direction
   turns among them as the car yaws; unpivoted, a nearly redundant leading row left the rows after it all
   rounding: a hard steer of the buggy spinning at 6 rad/s lost its upper pins' vertical rows). ``K`` is singular
   where a pin impulse moves nothing (the axis of a planar loop, along which its pin and its hinges hold the
   same thing; a redundant pin): a pivot below ``common/math.redundancy_floor`` (1e-9 in f64, 1e-4 in f32) of
   the largest diagonal entry, or below ``common/math.cancellation_floor`` (1e-6 in f64, 1e-3 in f32) of its
   own diagonal entry, is left out, and each one left out gives a vector of the null space
   (``L^-T e_c``), made orthonormal to the others. A solve takes
   the factor, then removes the solution's parts along those vectors: ``K^+ r`` for any ``r`` that ``K``
   can reach, and a bounded answer for one it cannot (a pin's gap along its loop's axis, which no velocity
   closes). (Without that last projection, the solutions' parts along the null space were arbitrary and
   large, and the pins' warm starts kept them from step to step: tens of kilonewtons along a wishbone's
   hinge axis in the reports, which no motion showed.)
2. Every link with a contact or soil row (its point row) takes the response of the tree with its pins
   held: ``B <- B - G X`` with ``X = K^+ J B`` (its pins' reaction per unit spatial impulse), its ``Phi``
   and point columns made again from that ``B`` (``Phi = J_l M_c^-1 J_l^T``, ``M_c^-1 = M~^-1 - G K^+ G^T``,
   symmetric and positive semi-definite), and the rows on it their Delassus blocks. A push through these
   columns moves the pins' points not at all, and the spatial impulse pushed is counted on the link
   (``LINK_DYN.pushed``, ``bodies._push_columns``).
3. In each sweep the pins of the tree take one joint update ``dlambda = K^+ (target - J u)``,
   ``u += G dlambda`` (``pins.py`` has the target), instead of one pin after another.
4. After the sweeps, the impulse the pins gave through the held columns, ``-K^+ J M~^-1 sum_l J_l^T P_l``
   for the impulses ``P_l`` pushed on the links, joins each pin's own (its row's): a pin's impulse is the
   whole of what held its points together, for the reports, the transmitted wrenches and the warm start
   (which pushes only the row's part: the rows' warm starts bring the rest back through the held columns).

The fixed point is the same as sweeping the pins one by one: the rows' laws are unchanged, and the held
columns only add to each push the pins' reaction to it, which the pins' rows would have given over the
sweeps. ``SolverConfig.pin_block = False`` (``SETTINGS_I.pin_block`` 0) leaves all of this out.
"""
import taichi as ti

from ..common.arrays import JOINT_I, JOINT_ROW, LINK_DYN, LINK_RESPONSE, PIN_I, PIN_MATRIX, PIN_RESPONSE, \
    PIN_STATE, PIN_VECTOR, ROW_F, ROW_I, TREE, TREE_DOF, TREE_INVERSE
from ..common.math import cancellation_floor, redundancy_floor, vec3
from ..common.schema import add, get, get3, getn, put, put33, putn, row
from ..dynamics.bodies import (
    carrier_joint,
    link_columns_changed,
    link_cross_phi,
    point_map,
    tree_reference,
)
from ..dynamics.tree import motion_column, n_dofs
from ..dynamics.tree_solve import clear_workspace, tree_solve
from .links import row_response
from .pins import pin_ends, pin_push_columns, pin_velocity
from .rows import row_geometry

vec6 = ti.types.vector(6, float)
mat36 = ti.types.matrix(3, 6, float)

NULL = PIN_MATRIX.null  # (the null-space vectors' column)
ORDER = PIN_MATRIX.order  # (the pivots' order, and K's diagonal)


@ti.func
def _pin_tree(D: ti.template(), e, k):
    """The tree of pin ``k`` if it keeps response columns (one of that tree's pin block), else -1."""
    t = -1
    if get(D.pin_i, e, k, PIN_I.local) >= 0:
        t = get(D.joint_i, e, get(D.pin_i, e, k, PIN_I.joint_a), JOINT_I.tree)
    return t


@ti.func
def _pin_rows(D: ti.template(), e, k, j):
    """``J_k B_j`` (3x6): the velocity change of pin ``k``'s relative point velocity per unit spatial impulse
    on the link of joint row ``j`` (its responses ready), through that link's response columns."""
    ja, jb, pa, pb = pin_ends(D, e, k)
    out = mat36(0.0)
    for side in range(2):
        js, p, sign = ja, pa, -1.0
        if side == 1:
            js, p, sign = jb, pb, 1.0
        if js >= 0:
            out += sign * point_map(p - tree_reference(D, e, js)).transpose() @ link_cross_phi(D, e, j, js)
    return out


@ti.func
def _entry(D: ti.template(), e, t, i, k, col: ti.template()):
    """Entry ``(i, k)`` of column ``col`` of tree ``t``'s ``PIN_MATRIX`` (``factor``: its pin matrix, ``null``:
    the null-space vectors, one a row)."""
    m = 3 * get(D.tree, e, t, TREE.loop_pins)
    return get(D.pin_matrix, e, get(D.tree, e, t, TREE.pin_matrix0) + i * m + k, col)


@ti.func
def _set_entry(D: ti.template(), e, t, i, k, col: ti.template(), value):
    m = 3 * get(D.tree, e, t, TREE.loop_pins)
    put(D.pin_matrix, e, get(D.tree, e, t, TREE.pin_matrix0) + i * m + k, col, value)


@ti.func
def _matrix(D: ti.template(), e, t, i, k):
    return _entry(D, e, t, i, k, PIN_MATRIX.factor)


@ti.func
def _set_matrix(D: ti.template(), e, t, i, k, value):
    _set_entry(D, e, t, i, k, PIN_MATRIX.factor, value)


@ti.func
def _assemble(D: ti.template(), e, t, n_pins):
    """Tree ``t``'s ``K = J G`` (both triangles) from its pin links' response columns (module docstring, 1)."""
    for i in range(n_pins):
        if _pin_tree(D, e, i) == t:
            li = get(D.pin_i, e, i, PIN_I.local)
            for k in range(n_pins):
                if _pin_tree(D, e, k) == t and get(D.pin_i, e, k, PIN_I.local) <= li:
                    lk = get(D.pin_i, e, k, PIN_I.local)
                    ja, jb, pa, pb = pin_ends(D, e, k)
                    block = ti.math.mat3(0.0)
                    for side in range(2):
                        js, p, sign = ja, pa, -1.0
                        if side == 1:
                            js, p, sign = jb, pb, 1.0
                        if js >= 0:
                            block += sign * _pin_rows(D, e, i, js) @ point_map(p - tree_reference(D, e, js))
                    for a in ti.static(range(3)):
                        for c in ti.static(range(3)):
                            if li == lk:
                                _set_matrix(D, e, t, 3 * li + a, 3 * lk + c, 0.5 * (block[a, c] + block[c, a]))
                            else:
                                _set_matrix(D, e, t, 3 * li + a, 3 * lk + c, block[a, c])
                                _set_matrix(D, e, t, 3 * lk + c, 3 * li + a, block[a, c])


@ti.func
def _order(D: ti.template(), e, t, k):
    """The entry of the pin vector (original order) at pivot position ``k`` of tree ``t``'s factor."""
    return ti.cast(_entry(D, e, t, 0, k, ORDER), ti.i32)


@ti.func
def _swap(D: ti.template(), e, t, c, p, m):
    """Rows and columns ``c`` and ``p`` of tree ``t``'s matrix exchanged, and their pivot positions."""
    for j in range(m):
        x = _matrix(D, e, t, c, j)
        _set_matrix(D, e, t, c, j, _matrix(D, e, t, p, j))
        _set_matrix(D, e, t, p, j, x)
    for j in range(m):
        x = _matrix(D, e, t, j, c)
        _set_matrix(D, e, t, j, c, _matrix(D, e, t, j, p))
        _set_matrix(D, e, t, j, p, x)
    x = _entry(D, e, t, 0, c, ORDER)
    _set_entry(D, e, t, 0, c, ORDER, _entry(D, e, t, 0, p, ORDER))
    _set_entry(D, e, t, 0, p, ORDER, x)


@ti.func
def _factor(D: ti.template(), e, t):
    """``P^T K P = L diag(d) L^T`` in place (module docstring, 1), the pivot at each step the largest diagonal
    entry left (symmetric pivoting: a dependent direction comes after the ones it depends on and keeps only
    rounding, wherever it lies among the rows): ``L`` below the diagonal, ``d`` on it (0 for a pivot left out:
    below either floor), ``P`` in ``ORDER``. Then the null-space vectors of the pivots left out
    (``L^T n = e_c``, taken back to the pin vector's order), orthonormal."""
    m = 3 * get(D.tree, e, t, TREE.loop_pins)
    largest = 0.0
    for c in range(m):
        largest = ti.max(largest, _matrix(D, e, t, c, c))
        _set_entry(D, e, t, 0, c, ORDER, ti.cast(c, float))
        _set_entry(D, e, t, 1, c, ORDER, _matrix(D, e, t, c, c))  # (K's diagonal, by the pin vector's entry)
    for c in range(m):
        p = c
        for i in range(c + 1, m):
            if _matrix(D, e, t, i, i) > _matrix(D, e, t, p, p):
                p = i
        if p != c:
            _swap(D, e, t, c, p, m)
        own = _entry(D, e, t, 1, _order(D, e, t, c), ORDER)
        d = _matrix(D, e, t, c, c)
        if d <= ti.static(redundancy_floor()) * largest or d <= ti.static(cancellation_floor()) * own:
            d = 0.0
        _set_matrix(D, e, t, c, c, d)
        for i in range(c + 1, m):  # column c of L, and the Schur complement of the rows and columns after c
            x = 0.0
            if d > 0.0:
                x = _matrix(D, e, t, i, c) / d
            _set_matrix(D, e, t, i, c, x)
        if d > 0.0:
            for i in range(c + 1, m):
                li = _matrix(D, e, t, i, c)
                for j in range(c + 1, m):
                    _set_matrix(D, e, t, i, j, _matrix(D, e, t, i, j) - li * d * _matrix(D, e, t, j, c))
    for c in range(m):
        if _matrix(D, e, t, c, c) == 0.0:
            for ii in range(m):  # L^T n = e_c, from the last entry up (zero past c), into the pin vector's order
                i = m - 1 - ii
                x = 0.0
                if i == c:
                    x = 1.0
                elif i < c:
                    for s in range(i + 1, c + 1):
                        x -= _matrix(D, e, t, s, i) * _entry(D, e, t, c, _order(D, e, t, s), NULL)
                _set_entry(D, e, t, c, _order(D, e, t, i), NULL, x)
            for b in range(c):  # Gram-Schmidt against the vectors before it
                if _matrix(D, e, t, b, b) == 0.0:
                    dot = 0.0
                    for i in range(m):
                        dot += _entry(D, e, t, b, i, NULL) * _entry(D, e, t, c, i, NULL)
                    for i in range(m):
                        _set_entry(D, e, t, c, i, NULL, _entry(D, e, t, c, i, NULL) - dot * _entry(D, e, t, b, i, NULL))
            size = 0.0
            for i in range(m):
                size += _entry(D, e, t, c, i, NULL) ** 2
            for i in range(m):
                _set_entry(D, e, t, c, i, NULL, _entry(D, e, t, c, i, NULL) / ti.sqrt(size))


@ti.func
def _solve(D: ti.template(), e, t, col: ti.template(), width: ti.template()):
    """``x <- K^+ x`` with the factor of tree ``t``'s pin matrix, for the ``width`` columns ``col`` of its rows
    in ``PIN_VECTOR`` (pivots left out give zero; then the parts along the null space are taken out). Each
    pivot position's value stays in the pin vector's entry ``P`` maps it to."""
    m = 3 * get(D.tree, e, t, TREE.loop_pins)
    v0 = get(D.tree, e, t, TREE.pin_vector0)
    for i in range(m):  # L y = P^T x
        x = getn(D.pin_vector, e, v0 + _order(D, e, t, i), col, width)
        for s in range(i):
            x -= _matrix(D, e, t, i, s) * getn(D.pin_vector, e, v0 + _order(D, e, t, s), col, width)
        putn(D.pin_vector, e, v0 + _order(D, e, t, i), col, x)
    for i in range(m):  # diag(d) z = y
        d = _matrix(D, e, t, i, i)
        x = getn(D.pin_vector, e, v0 + _order(D, e, t, i), col, width)
        if d > 0.0:
            x /= d
        else:
            x *= 0.0
        putn(D.pin_vector, e, v0 + _order(D, e, t, i), col, x)
    for ii in range(m):  # L^T w = z; x = P w
        i = m - 1 - ii
        x = getn(D.pin_vector, e, v0 + _order(D, e, t, i), col, width)
        for s in range(i + 1, m):
            x -= _matrix(D, e, t, s, i) * getn(D.pin_vector, e, v0 + _order(D, e, t, s), col, width)
        putn(D.pin_vector, e, v0 + _order(D, e, t, i), col, x)
    _remove_null(D, e, t, col, width)


@ti.func
def _remove_null(D: ti.template(), e, t, col: ti.template(), width: ti.template()):
    """The parts of tree ``t``'s pin vectors (the ``width`` columns ``col`` of ``PIN_VECTOR``) along the null space
    of its pin matrix (its factor's vectors, orthonormal) taken out."""
    m = 3 * get(D.tree, e, t, TREE.loop_pins)
    v0 = get(D.tree, e, t, TREE.pin_vector0)
    for c in range(m):
        if _matrix(D, e, t, c, c) == 0.0:
            dot = getn(D.pin_vector, e, v0, col, width) * 0.0
            for i in range(m):
                dot += _entry(D, e, t, c, i, NULL) * getn(D.pin_vector, e, v0 + i, col, width)
            for i in range(m):
                x = getn(D.pin_vector, e, v0 + i, col, width)
                putn(D.pin_vector, e, v0 + i, col, x - _entry(D, e, t, c, i, NULL) * dot)


@ti.func
def _hold_link(D: ti.template(), e, t, j, n_pins):
    """The link of joint row ``j`` (of tree ``t``, responses ready) takes the response with its tree's pins
    held (module docstring, 2)."""
    v0 = get(D.tree, e, t, TREE.pin_vector0)
    for k in range(n_pins):
        if _pin_tree(D, e, k) == t:
            rows = _pin_rows(D, e, k, j)
            for a in ti.static(range(3)):
                putn(D.pin_vector, e, v0 + 3 * get(D.pin_i, e, k, PIN_I.local) + a, PIN_VECTOR.six,
                     vec6(rows[a, 0], rows[a, 1], rows[a, 2], rows[a, 3], rows[a, 4], rows[a, 5]))
    _solve(D, e, t, PIN_VECTOR.six, 6)
    nv = get(D.tree, e, t, TREE.nv)
    r0 = get(D.joint_i, e, j, JOINT_I.response0)
    for d in range(nv):
        b = getn(D.link_response, e, r0 + d, LINK_RESPONSE.column, 6)
        for k in range(n_pins):
            if _pin_tree(D, e, k) == t:
                g0 = get(D.pin_i, e, k, PIN_I.response0)
                x0 = v0 + 3 * get(D.pin_i, e, k, PIN_I.local)
                for a in ti.static(range(3)):
                    b -= get(D.pin_response, e, g0 + a * nv + d, PIN_RESPONSE.column) * \
                        getn(D.pin_vector, e, x0 + a, PIN_VECTOR.six, 6)
        putn(D.link_response, e, r0 + d, LINK_RESPONSE.column, b)
    link_columns_changed(D, e, j)
    put(D.link_dyn, e, j, LINK_DYN.held, 1.0)
    putn(D.link_dyn, e, j, LINK_DYN.pushed, vec6(0.0))


@ti.func
def _hold_dof(D: ti.template(), e, t, d, n_pins):
    """Row ``d`` of tree ``t``'s ``M~^-1`` (``TREE_INVERSE``, a joint row's column) becomes that of the tree
    with its pins held: ``c <- c - G K^+ G^T e_d`` (``J M~^-1 e_d`` is row ``d`` of ``G``)."""
    tr = row(D.tree, e, t)
    nv, m0, u0, v0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0], tr[TREE.pin_vector0]
    for k in range(n_pins):
        if _pin_tree(D, e, k) == t:
            g0 = get(D.pin_i, e, k, PIN_I.response0)
            for a in ti.static(range(3)):
                put(D.pin_vector, e, v0 + 3 * get(D.pin_i, e, k, PIN_I.local) + a, PIN_VECTOR.value,
                    get(D.pin_response, e, g0 + a * nv + d, PIN_RESPONSE.column))
    _solve(D, e, t, PIN_VECTOR.value, 1)
    for i in range(nv):
        c = get(D.tree_inverse, e, m0 + d * nv + i, TREE_INVERSE.inverse)
        for k in range(n_pins):
            if _pin_tree(D, e, k) == t:
                g0 = get(D.pin_i, e, k, PIN_I.response0)
                x0 = v0 + 3 * get(D.pin_i, e, k, PIN_I.local)
                for a in ti.static(range(3)):
                    c -= get(D.pin_response, e, g0 + a * nv + i, PIN_RESPONSE.column) * \
                        get(D.pin_vector, e, x0 + a, PIN_VECTOR.value)
        put(D.tree_inverse, e, m0 + d * nv + i, TREE_INVERSE.inverse, c)
    put(D.tree_dof, e, u0 + d, TREE_DOF.held, 1.0)


@ti.func
def setup_pin_blocks(D: ti.template(), e, n_rows, n_limits, n_pins, n_trees):
    """``SAND_AND_PIN_BLOCKS``, after the pins' response columns and every other response of the step: each tree's pin
    matrix, assembled and factored; the responses of the links with rows and the columns of the dofs with
    joint rows (limits, friction) held by the pins, and those rows' Delassus blocks made again."""
    held = False
    for t in range(n_trees):
        tr = row(D.tree, e, t)
        if tr[TREE.loop_pins] > 0:
            _assemble(D, e, t, n_pins)
            _factor(D, e, t)
            for k in range(tr[TREE.n_joints]):
                j = tr[TREE.joint0] + k
                if get(D.link_dyn, e, j, LINK_DYN.point_row) >= 0.0 and get(D.link_dyn, e, j, LINK_DYN.ready) != 0.0:
                    _hold_link(D, e, t, j, n_pins)
                    held = True
            for d in range(tr[TREE.nv]):
                put(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.held, 0.0)
                put(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.pushed, 0.0)
            for r in range(n_rows, n_rows + n_limits):
                d = get(D.row_i, e, r, JOINT_ROW.dof)
                if get(D.row_i, e, r, JOINT_ROW.tree) == t:
                    if get(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.held) == 0.0:
                        _hold_dof(D, e, t, d, n_pins)
                    put(D.row_f, e, r, ROW_F.delassus,
                        get(D.tree_inverse, e, tr[TREE.matrix0] + d * tr[TREE.nv] + d, TREE_INVERSE.inverse))
    if held:
        for r in range(n_rows):
            a, b = get(D.row_i, e, r, ROW_I.side_a), get(D.row_i, e, r, ROW_I.side_b)
            if _is_held(D, e, a) or _is_held(D, e, b):
                frame, ra, rb = row_geometry(D, e, r)
                put33(D.row_f, e, r, ROW_F.delassus, frame.transpose() @ row_response(D, e, r, a, b, ra, rb) @ frame)


@ti.func
def _is_held(D: ti.template(), e, link):
    out = False
    if link >= 0:
        j = carrier_joint(D, e, link)
        if j >= 0:
            out = get(D.link_dyn, e, j, LINK_DYN.held) != 0.0
    return out


@ti.func
def warm_start_pin_blocks(D: ti.template(), e, r0, n_pins, n_trees, on):
    """The warm starts of the pins in blocks (``warm_start_pins`` does the others): each pin's impulse of the last
    step less the part the held columns gave it (the rows' warm starts push that again), with the tree's parts
    along this step's null space of ``K`` taken out, pushed through the pins' columns (zero where ``on`` is 0).
    An impulse along a null direction moves nothing and no pin update changes it; but the direction is one of
    this step's factor (it turns with the loop, and the floors leave out directions whose response is only
    nearly nothing), so a part kept from the last step pushed the links step after step: the buggy spinning
    up to 30 rad/s in the air within 6 steps of a hard steer, with the pins' solve converged in each."""
    for t in range(n_trees):
        if get(D.tree, e, t, TREE.loop_pins) > 0:
            for k in range(n_pins):
                if _pin_tree(D, e, k) == t:
                    lam = vec3(0.0, 0.0, 0.0)
                    if on != 0:
                        lam = get3(D.pin_state, e, k, PIN_STATE.impulse) - get3(D.pin_state, e, k,
                                                                               PIN_STATE.reaction)
                    _put_pin_value(D, e, t, k, lam)
            _remove_null(D, e, t, PIN_VECTOR.value, 1)
            for k in range(n_pins):
                if _pin_tree(D, e, k) == t:
                    lam = _pin_value(D, e, t, k)
                    if lam.norm() > 0.0:
                        pin_push_columns(D, e, k, get(D.pin_i, e, k, PIN_I.response0), lam)
                    putn(D.row_f, e, r0 + k, ROW_F.impulse, lam)


@ti.func
def _put_pin_value(D: ti.template(), e, t, k, value):
    """Pin ``k``'s three rows of tree ``t``'s ``PIN_VECTOR.value`` <- ``value``."""
    x0 = get(D.tree, e, t, TREE.pin_vector0) + 3 * get(D.pin_i, e, k, PIN_I.local)
    for a in ti.static(range(3)):
        put(D.pin_vector, e, x0 + a, PIN_VECTOR.value, value[a])


@ti.func
def _pin_value(D: ti.template(), e, t, k):
    """Pin ``k``'s three rows of tree ``t``'s ``PIN_VECTOR.value``."""
    x0 = get(D.tree, e, t, TREE.pin_vector0) + 3 * get(D.pin_i, e, k, PIN_I.local)
    return vec3(get(D.pin_vector, e, x0, PIN_VECTOR.value), get(D.pin_vector, e, x0 + 1, PIN_VECTOR.value),
                get(D.pin_vector, e, x0 + 2, PIN_VECTOR.value))


@ti.func
def solve_pin_block(D: ti.template(), e, t, r0, n_pins, dt, erp):
    """One joint update of tree ``t``'s pins (pin rows from ``r0``; module docstring, 3)."""
    for k in range(n_pins):
        if _pin_tree(D, e, k) == t:
            ja, jb, pa, pb = pin_ends(D, e, k)
            _put_pin_value(D, e, t, k, -erp * (pb - pa) / dt - pin_velocity(D, e, ja, jb, pa, pb, False))
    _solve(D, e, t, PIN_VECTOR.value, 1)
    for k in range(n_pins):
        if _pin_tree(D, e, k) == t:
            d = _pin_value(D, e, t, k)
            pin_push_columns(D, e, k, get(D.pin_i, e, k, PIN_I.response0), d)
            putn(D.row_f, e, r0 + k, ROW_F.impulse, get3(D.row_f, e, r0 + k, ROW_F.impulse) + d)


@ti.func
def pin_reactions(D: ti.template(), e, r0, n_pins, n_trees, on):
    """After the sweeps: each pin's share of the impulses pushed through held columns, added to its row's
    impulse and kept as ``PIN_STATE.reaction`` (zero where ``on`` is 0 or the tree held no link; module
    docstring, 4)."""
    for k in range(n_pins):
        putn(D.pin_state, e, k, PIN_STATE.reaction, vec3(0.0, 0.0, 0.0))
    if on != 0:
        for t in range(n_trees):
            tr = row(D.tree, e, t)
            any_held = False
            if tr[TREE.loop_pins] > 0:
                clear_workspace(D, e, t)
                for k in range(tr[TREE.n_joints]):
                    j = tr[TREE.joint0] + k
                    if get(D.link_dyn, e, j, LINK_DYN.held) != 0.0:
                        any_held = True
                        _add_spatial_impulse(D, e, j, getn(D.link_dyn, e, j, LINK_DYN.pushed, 6))
                for d in range(tr[TREE.nv]):
                    if get(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.held) != 0.0:
                        any_held = True
                        add(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.rhs,
                            get(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.pushed))
            if any_held:
                tree_solve(D, e, t)
                v0 = tr[TREE.pin_vector0]
                for k in range(n_pins):
                    if _pin_tree(D, e, k) == t:
                        ja, jb, pa, pb = pin_ends(D, e, k)
                        v = pin_velocity(D, e, ja, jb, pa, pb, True)
                        x0 = v0 + 3 * get(D.pin_i, e, k, PIN_I.local)
                        for a in ti.static(range(3)):
                            put(D.pin_vector, e, x0 + a, PIN_VECTOR.value, v[a])
                _solve(D, e, t, PIN_VECTOR.value, 1)
                for k in range(n_pins):
                    if _pin_tree(D, e, k) == t:
                        x0 = v0 + 3 * get(D.pin_i, e, k, PIN_I.local)
                        mu = -vec3(get(D.pin_vector, e, x0, PIN_VECTOR.value),
                                   get(D.pin_vector, e, x0 + 1, PIN_VECTOR.value),
                                   get(D.pin_vector, e, x0 + 2, PIN_VECTOR.value))
                        putn(D.row_f, e, r0 + k, ROW_F.impulse, get3(D.row_f, e, r0 + k, ROW_F.impulse) + mu)
                        putn(D.pin_state, e, k, PIN_STATE.reaction, mu)


@ti.func
def _add_spatial_impulse(D: ti.template(), e, j, force):
    """The workspace of the tree of joint row ``j`` += ``J^T force`` for the spatial impulse ``force`` (moment
    about the tree's reference point, impulse) on its link."""
    c = tree_reference(D, e, j)
    u0 = get(D.tree, e, get(D.joint_i, e, j, JOINT_I.tree), TREE.u0)
    jj = j
    while jj >= 0:
        ji = row(D.joint_i, e, jj)
        for a in range(n_dofs(ji[JOINT_I.type])):
            add(D.tree_dof, e, u0 + ji[JOINT_I.dof] + a, TREE_DOF.rhs,
                motion_column(D, e, jj, ji[JOINT_I.type], a, c).dot(force))
        jj = ji[JOINT_I.parent]
