"""Pins: two points held together, a bilateral row of the Gauss-Seidel sweep and a position correction.

A pin joins a point fixed on a tree link (side a) to a point fixed on another link, of the same tree (a
closed loop) or of another tree, or to a fixed world point (side b, ``PIN_I.joint_b = -1``). Its row
(``ROW_PIN``) is three-dimensional and bilateral: the impulse ``lambda`` [N s, world] acts +lambda on side
b's point and -lambda on side a's. With ``K = J M~^-1 J^T`` (3x3, world; ``J`` the relative point velocity's
Jacobian over both sides, cross terms included when both sides are on one tree) an update is

    lambda += K^+ (target - v_rel),   target = -erp (p_b - p_a) / dt,

``K^+`` the pseudo-inverse (a planar loop cannot move its points out of its plane: that direction has no
response and takes no impulse). ``ROW_F.delassus`` holds ``K^+``, ``ROW_F.impulse`` lambda.

A pin within one tree (a loop) or holding a tree to the world keeps its response columns ``G = M~^-1 J^T``
(nv x 3, ``PIN_RESPONSE``) for the step, made with the factor the sweeps use (``pin_columns``, from its two
links' response columns, with ``K = J G`` kept in ``PIN_ROW_F.k``, a contact's ``ROW_F.frame``): an update then costs ``u += G dlambda``
(3 nv operations) and its velocity change is ``K dlambda``, where it took a tree solve and a second velocity
evaluation. A pin joining two trees solves with their factors, update by update. The pins with response
columns of one tree are solved together, and the rows on its links push it with them held
(``pin_block.py``, ``SolverConfig.pin_block``); the row-by-row update here is what they do without.

The velocity rows keep the points' velocities together to first order; integrating along the links' arcs
leaves a gap of order ``dt^2 |a|``. After the positions are integrated, ``project_pins`` closes it: a
Newton step on the positions, ``dq = M~^-1 J^T K^+ (-gap)`` with ``J`` at the new configuration, repeated
while a gap is above ``PIN_TOLERANCE``. The velocities are left as the sweep made them.
"""
import taichi as ti

from ..common.arrays import (
    FRAME,
    JOINT_I,
    PIN_ROW,
    PIN_ROW_F,
    LINK_RESPONSE,
    PIN_F,
    PIN_I,
    PIN_RESPONSE,
    PIN_STATE,
    ROW_F,
    ROW_I,
    TREE,
    TREE_DOF,
)
from ..common.layout import JOINT_FIXED_ROOT, JOINT_FLOATING, ROW_PIN
from ..common.math import quat_integrate, redundancy_floor, sym_pinv3, vec3, vec4
from ..common.schema import add, get, get3, get33, getn, put, put33, putn, row
from ..dynamics.bodies import (
    link_cross_phi,
    link_phi,
    link_responses,
    link_spatial_velocity,
    point_map,
    point_row,
    tree_reference,
)
from ..dynamics.tree import motion_column, n_dofs, path_kinematics, tree_kinematics
from ..dynamics.tree_solve import add_workspace_to_velocities, clear_workspace, tree_solve

mat3 = ti.math.mat3

#: gap [m] below which the position correction stops
PIN_TOLERANCE = 1e-10
#: Newton steps of the position correction at most, per step
PIN_PROJECTIONS = 4


@ti.func
def pin_point(D: ti.template(), e, j, local):
    """World position [m] of the point ``local`` (link frame) on the link of joint row ``j``; ``j < 0``:
    ``local`` is already a world point."""
    p = local
    if j >= 0:
        p = get3(D.frame, e, j, FRAME.position) + get33(D.frame, e, j, FRAME.rotation) @ local
    return p


@ti.func
def pin_ends(D: ti.template(), e, k):
    """Joint rows and world points [m] of pin ``k``'s two ends, from the link frames in ``FRAME``."""
    ja, jb = get(D.pin_i, e, k, PIN_I.joint_a), get(D.pin_i, e, k, PIN_I.joint_b)
    pa = pin_point(D, e, ja, get3(D.pin_f, e, k, PIN_F.point_a))
    pb = pin_point(D, e, jb, get3(D.pin_f, e, k, PIN_F.point_b))
    return ja, jb, pa, pb


@ti.func
def _point_velocity(D: ti.template(), e, j, p, du: ti.template()):
    """Velocity [m/s] of the material point at ``p`` on the link of joint row ``j`` (zero for ``j < 0``): from
    the tree's velocities, or (``du``) from the velocity change in its workspace."""
    out = vec3(0.0, 0.0, 0.0)
    if j >= 0:
        c = tree_reference(D, e, j)
        vel = link_spatial_velocity(D, e, j, c, du)
        out = vec3(vel[3], vel[4], vel[5]) + vec3(vel[0], vel[1], vel[2]).cross(p - c)
    return out


@ti.func
def pin_velocity(D: ti.template(), e, ja, jb, pa, pb, du: ti.template()):
    """Velocity [m/s] of side b's point minus side a's (one inlined copy of the point velocity for both
    sides)."""
    out = vec3(0.0, 0.0, 0.0)
    for side in range(2):
        j, p, sign = ja, pa, -1.0
        if side == 1:
            j, p, sign = jb, pb, 1.0
        out += sign * _point_velocity(D, e, j, p, du)
    return out


@ti.func
def _add_point_impulse(D: ti.template(), e, j, p, imp):
    """The workspace of the tree of joint row ``j`` += ``J^T imp``, ``imp`` [N s] at the world point ``p``."""
    c = tree_reference(D, e, j)
    u0 = get(D.tree, e, get(D.joint_i, e, j, JOINT_I.tree), TREE.u0)
    r = p - c
    m = r.cross(imp)
    force = ti.Vector([m[0], m[1], m[2], imp[0], imp[1], imp[2]])
    jj = j
    while jj >= 0:
        ji = row(D.joint_i, e, jj)
        jtype = ji[JOINT_I.type]
        for a in range(n_dofs(jtype)):
            add(D.tree_dof, e, u0 + ji[JOINT_I.dof] + a, TREE_DOF.rhs,
                motion_column(D, e, jj, jtype, a, c).dot(force))
        jj = ji[JOINT_I.parent]


@ti.func
def _tree_of(D: ti.template(), e, j):
    t = -1
    if j >= 0:
        t = get(D.joint_i, e, j, JOINT_I.tree)
    return t


@ti.func
def _pin_tree(D: ti.template(), e, ja, jb, side):
    """The tree of the pin's side ``side`` (0: a, 1: b), or -1 when that side is the world or is the same
    tree as side a (a loop: one tree, handled once)."""
    ta, tb = _tree_of(D, e, ja), _tree_of(D, e, jb)
    t = ta
    if side == 1:
        t = tb
        if tb == ta:
            t = -1
    return t


@ti.func
def pin_response(D: ti.template(), e, ja, jb, pa, pb, imp):
    """The trees' workspaces <- ``M~^-1 J^T imp``: +imp at ``pb`` on side b, -imp at ``pa`` on side a (one
    solve per tree, so a loop within one tree gets its cross terms). The sides are loops, not two inlined
    copies: this is called from several stages, and every copy of a solve lengthens the compile."""
    for side in range(2):
        t = _pin_tree(D, e, ja, jb, side)
        if t >= 0:
            clear_workspace(D, e, t)
    for side in range(2):
        j, p, sign = ja, pa, -1.0
        if side == 1:
            j, p, sign = jb, pb, 1.0
        if j >= 0:
            _add_point_impulse(D, e, j, p, sign * imp)
    for side in range(2):
        t = _pin_tree(D, e, ja, jb, side)
        if t >= 0:
            tree_solve(D, e, t)


@ti.func
def pin_apply(D: ti.template(), e, ja, jb, pa, pb, imp):
    """``u += M~^-1 J^T imp`` for the pin impulse ``imp`` [N s]."""
    pin_response(D, e, ja, jb, pa, pb, imp)
    for side in range(2):
        t = _pin_tree(D, e, ja, jb, side)
        if t >= 0:
            add_workspace_to_velocities(D, e, t, 1.0)


@ti.func
def _pin_delassus(D: ti.template(), e, ja, jb, pa, pb):
    """The pin's ``K = J M~^-1 J^T`` (3x3, world, symmetrized), one unit impulse at a time (a pin joining two
    trees: each side's solve with its own tree's factor)."""
    kmat = mat3(0.0)
    for c in range(3):  # (a loop, not unrolled: one inlined copy of the response)
        unit = vec3(ti.cast(c == 0, float), ti.cast(c == 1, float), ti.cast(c == 2, float))
        pin_response(D, e, ja, jb, pa, pb, unit)
        kmat += pin_velocity(D, e, ja, jb, pa, pb, True).outer_product(unit)  # column c
    return 0.5 * (kmat + kmat.transpose())


@ti.func
def pin_inverse_response(D: ti.template(), e, ja, jb, pa, pb):
    """``K^+``: the pseudo-inverse of the pin's ``K = J M~^-1 J^T`` (3x3, world); directions whose response
    is below ``common/math.redundancy_floor`` of the largest (1e-9 in f64, 1e-4 in f32) are left out."""
    return sym_pinv3(_pin_delassus(D, e, ja, jb, pa, pb), ti.static(redundancy_floor()))


@ti.func
def build_pin_rows(D: ti.template(), e, r0, n_pins):
    """Rows ``r0`` to ``r0 + n_pins - 1``: one per pin, with ``K^+`` (a pin with response columns gets it in
    :func:`pin_columns`) and a zero impulse (the warm start comes with the other rows', in ``WARM_STARTS``)."""
    for k in range(n_pins):
        ja, jb, pa, pb = pin_ends(D, e, k)
        r = r0 + k
        put(D.row_i, e, r, ROW_I.kind, ROW_PIN)
        put(D.row_i, e, r, ROW_I.slot, -1)
        put(D.row_i, e, r, PIN_ROW.pin, k)
        put(D.row_i, e, r, PIN_ROW.joint_a, ja)
        put(D.row_i, e, r, PIN_ROW.joint_b, jb)
        put(D.row_i, e, r, ROW_I.impacted, 0)
        if get(D.pin_i, e, k, PIN_I.response0) < 0:
            put33(D.row_f, e, r, ROW_F.delassus, pin_inverse_response(D, e, ja, jb, pa, pb))
        putn(D.row_f, e, r, ROW_F.impulse, vec3(0.0, 0.0, 0.0))


@ti.func
def pin_columns(D: ti.template(), e, r0, n_pins):
    """For each pin with response columns (pin rows from ``r0``): ``G`` into ``PIN_RESPONSE``, with
    ``K = J G`` (``PIN_ROW_F.k``) and ``K^+`` (``ROW_F.delassus``), for the factors the sweeps will use.

    Both come from the two links' response columns ``B = M~^-1 J_link^T`` (nv x 6) and spatial responses
    (``dynamics/bodies.py``, made ready here if no row needed them): with ``A = [skew(r); I]`` mapping a point
    impulse at offset ``r`` to a spatial one, ``G = B_b A_b - B_a A_a`` and ``K = A_b^T Phi_b A_b + A_a^T Phi_a
    A_a - C - C^T``, ``C = A_b^T Phi_ba A_a`` (``Phi_ba = J_b M~^-1 J_a^T``; no b terms for a pin to the world).
    Products with columns the step has already formed, in place of three triangular solves and three velocity
    evaluations per pin."""
    for k in range(n_pins):
        g0 = get(D.pin_i, e, k, PIN_I.response0)
        if g0 >= 0:
            ja, jb, pa, pb = pin_ends(D, e, k)
            link_responses(D, e, ja)
            c = tree_reference(D, e, ja)
            ra, rb = pa - c, pb - c
            tr = row(D.tree, e, get(D.joint_i, e, ja, JOINT_I.tree))
            nv = tr[TREE.nv]
            ca = get(D.joint_i, e, ja, JOINT_I.response0)
            cb = -1
            if jb >= 0:
                link_responses(D, e, jb)
                cb = get(D.joint_i, e, jb, JOINT_I.response0)
            for d in range(nv):
                g = -point_row(getn(D.link_response, e, ca + d, LINK_RESPONSE.column, 6), ra)
                if cb >= 0:
                    g += point_row(getn(D.link_response, e, cb + d, LINK_RESPONSE.column, 6), rb)
                for col in ti.static(range(3)):
                    put(D.pin_response, e, g0 + col * nv + d, PIN_RESPONSE.column, g[col])
            map_a = point_map(ra)
            kmat = map_a.transpose() @ link_phi(D, e, ja) @ map_a
            if jb >= 0:
                map_b = point_map(rb)
                cross = map_b.transpose() @ link_cross_phi(D, e, ja, jb) @ map_a
                kmat += map_b.transpose() @ link_phi(D, e, jb) @ map_b - cross - cross.transpose()
            kmat = 0.5 * (kmat + kmat.transpose())
            put33(D.row_f, e, r0 + k, PIN_ROW_F.k, kmat)
            put33(D.row_f, e, r0 + k, ROW_F.delassus, sym_pinv3(kmat, ti.static(redundancy_floor())))


@ti.func
def _columns_times(D: ti.template(), e, g0, nv, d, imp):
    """Entry ``d`` of ``G imp`` for the response columns from row ``g0`` (``nv`` rows each)."""
    return get(D.pin_response, e, g0 + d, PIN_RESPONSE.column) * imp[0] + \
        get(D.pin_response, e, g0 + nv + d, PIN_RESPONSE.column) * imp[1] + \
        get(D.pin_response, e, g0 + 2 * nv + d, PIN_RESPONSE.column) * imp[2]


@ti.func
def _columns_to_workspace(D: ti.template(), e, k, g0, imp):
    """The workspace of pin ``k``'s tree <- ``G imp`` (response columns from ``g0``)."""
    tr = row(D.tree, e, get(D.joint_i, e, get(D.pin_i, e, k, PIN_I.joint_a), JOINT_I.tree))
    for d in range(tr[TREE.nv]):
        put(D.tree_dof, e, tr[TREE.u0] + d, TREE_DOF.rhs, _columns_times(D, e, g0, tr[TREE.nv], d, imp))


@ti.func
def pin_push_columns(D: ti.template(), e, k, g0, imp):
    """``u += G imp`` for pin ``k`` with response columns from ``g0`` [imp: N s, world]."""
    tr = row(D.tree, e, get(D.joint_i, e, get(D.pin_i, e, k, PIN_I.joint_a), JOINT_I.tree))
    for d in range(tr[TREE.nv]):
        add(D.u_tree, e, tr[TREE.u0] + d, 0, _columns_times(D, e, g0, tr[TREE.nv], d, imp))


@ti.func
def warm_start_pins(D: ti.template(), e, r0, n_pins, on, held):
    """Each pin row starts from the pin's impulse of the last step (``on`` != 0); with pin blocks (``held``
    != 0) the pins in a tree's block are left to ``pin_block.warm_start_pin_blocks``."""
    for k in range(n_pins):
        if held == 0 or get(D.pin_i, e, k, PIN_I.local) < 0:
            lam = vec3(0.0, 0.0, 0.0)
            if on != 0:
                lam = get3(D.pin_state, e, k, PIN_STATE.impulse)
                if lam.norm() > 0.0:
                    g0 = get(D.pin_i, e, k, PIN_I.response0)
                    if g0 >= 0:
                        pin_push_columns(D, e, k, g0, lam)
                    else:
                        ja, jb, pa, pb = pin_ends(D, e, k)
                        pin_apply(D, e, ja, jb, pa, pb, lam)
            putn(D.row_f, e, r0 + k, ROW_F.impulse, lam)


@ti.func
def solve_pin_row(D: ti.template(), e, r, dt, erp):
    """One Gauss-Seidel update of pin row ``r``; returns the sweep's two convergence measures
    (``sweep.sweep_rows``): the change of the points' relative velocity [m/s] the update made, and the
    change of that velocity since the last sweep reached the row."""
    k = get(D.row_i, e, r, PIN_ROW.pin)
    ja, jb, pa, pb = pin_ends(D, e, k)
    v = pin_velocity(D, e, ja, jb, pa, pb, False)
    net = (v - get3(D.row_f, e, r, ROW_F.seen)).norm()
    putn(D.row_f, e, r, ROW_F.seen, v)
    target = -erp * (pb - pa) / dt
    d = get33(D.row_f, e, r, ROW_F.delassus) @ (target - v)
    change = 0.0
    if d.norm() > 0.0:
        g0 = get(D.pin_i, e, k, PIN_I.response0)
        if g0 >= 0:
            pin_push_columns(D, e, k, g0, d)
            change = (get33(D.row_f, e, r, PIN_ROW_F.k) @ d).norm()
        else:
            pin_apply(D, e, ja, jb, pa, pb, d)
            change = (pin_velocity(D, e, ja, jb, pa, pb, False) - v).norm()
        putn(D.row_f, e, r, ROW_F.impulse, get3(D.row_f, e, r, ROW_F.impulse) + d)
    return change, net


@ti.func
def store_pins(D: ti.template(), e, r0, n_pins):
    """Each pin's impulse of this step [N s, world, on side b] for the next warm start and the reports."""
    for k in range(n_pins):
        putn(D.pin_state, e, k, PIN_STATE.impulse, get3(D.row_f, e, r0 + k, ROW_F.impulse))


@ti.func
def _displace_tree(D: ti.template(), e, t):
    """Tree ``t``'s coordinates moved by the displacement in its workspace (joint coordinates added; a
    floating root's origin moved and its orientation turned by the rotation vector)."""
    tr = row(D.tree, e, t)
    u0 = tr[TREE.u0]
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, tr[TREE.joint0] + k)
        jtype = ji[JOINT_I.type]
        d0 = u0 + ji[JOINT_I.dof]
        if jtype == JOINT_FLOATING:
            qs = ji[JOINT_I.q]
            dw = vec3(0.0, 0.0, 0.0)
            for a in ti.static(range(3)):
                add(D.q_tree, e, qs + a, 0, get(D.tree_dof, e, d0 + a, TREE_DOF.rhs))
                dw[a] = get(D.tree_dof, e, d0 + 3 + a, TREE_DOF.rhs)
            quat = vec4(get(D.q_tree, e, qs + 3, 0), get(D.q_tree, e, qs + 4, 0), get(D.q_tree, e, qs + 5, 0),
                        get(D.q_tree, e, qs + 6, 0))
            quat = quat_integrate(quat, dw, 1.0)
            for a in ti.static(range(4)):
                put(D.q_tree, e, qs + 3 + a, 0, quat[a])
        elif jtype != JOINT_FIXED_ROOT:
            add(D.q_tree, e, ji[JOINT_I.q], 0, get(D.tree_dof, e, d0, TREE_DOF.rhs))


@ti.func
def project_pins(D: ti.template(), e, r0, n_pins, n_trees):
    """Close every pin's gap after the position update: Newton steps ``dq = M~^-1 J^T K^+ (-gap)`` with the
    link frames of the new positions, pin after pin (pin rows from ``r0``), until every gap is below
    ``PIN_TOLERANCE`` or ``PIN_PROJECTIONS`` rounds are done. A displacement moves every link of the tree;
    each pin reads its gap after the frames of its two ends' paths are made again, and the whole trees' once
    at the end. A pin with response columns takes its ``G`` and
    ``K^+`` of the step (:func:`pin_columns`) for ``M~^-1 J^T`` and ``K^+``: the Jacobian of the step's start,
    off by the step's motion, so each round still shrinks the gap by orders of magnitude, without three
    solves per pin and round. Leaves ``FRAME`` at the new positions."""
    for t in range(n_trees):
        tree_kinematics(D, e, t)
    it = 0
    worst = PIN_TOLERANCE + 1.0
    moved = False
    while it < PIN_PROJECTIONS and worst > PIN_TOLERANCE:
        it += 1
        worst = 0.0
        for k in range(n_pins):
            _pin_paths(D, e, k)
            ja, jb, pa, pb = pin_ends(D, e, k)
            gap = pb - pa
            worst = ti.max(worst, gap.norm())
            if gap.norm() > PIN_TOLERANCE:
                g0 = get(D.pin_i, e, k, PIN_I.response0)
                if g0 >= 0:  # the step's response columns: a Newton step with the Jacobian of the step's start
                    step = get33(D.row_f, e, r0 + k, ROW_F.delassus) @ (-gap)
                    _columns_to_workspace(D, e, k, g0, step)
                else:
                    step = pin_inverse_response(D, e, ja, jb, pa, pb) @ (-gap)
                    pin_response(D, e, ja, jb, pa, pb, step)
                for side in range(2):
                    t = _pin_tree(D, e, ja, jb, side)
                    if t >= 0:
                        _displace_tree(D, e, t)
                        moved = True
    if moved:
        for t in range(n_trees):
            tree_kinematics(D, e, t)


@ti.func
def _pin_paths(D: ti.template(), e, k):
    """The frames of the links on the paths from the roots to pin ``k``'s ends, from the current coordinates
    (``dynamics/tree.py``, ``path_kinematics``)."""
    for side in range(2):
        j = get(D.pin_i, e, k, PIN_I.joint_a if side == 0 else PIN_I.joint_b)
        if j >= 0:
            path_kinematics(D, e, j)
