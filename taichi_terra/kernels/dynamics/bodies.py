"""Where a collision body is and how fast it moves, whatever carries it.

A body (one convex shape in the ``body`` blocks) is either a free body, whose pose and velocity are its own
generalized coordinates (``BODY_I.q0``, ``BODY_I.u0``), or a shape on a link of an articulated tree
(``BODY_I.joint`` >= 0): its frame is the link's frame (``FRAME``, at the start of the step) composed with
the shape's placement on the link (``BODY_F.offset``, ``BODY_F.offset_rotation``). Collision reads poses and
speeds only through the functions here; a kernel compiled without trees (``StepData.trees``) keeps only
their free-body branch.
"""
import taichi as ti

from ..common.arrays import (
    BODY_F,
    BODY_I,
    FRAME,
    JOINT_I,
    LINK_DYN,
    LINK_RESPONSE,
    TREE,
    TREE_DOF,
    TREE_INVERSE,
    TREE_STEP,
)
from ..common.layout import JOINT_FIXED_ROOT, JOINT_FLOATING
from ..common.math import quat_to_mat, skew, vec3, vec4
from ..common.schema import add, get, get3, get33, getn, put, putn, row
from .tree import FLOATING_ENTRY, motion_column, n_dofs
from .tree_solve import tree_solve_columns

vec6 = ti.types.vector(6, float)
mat3 = ti.math.mat3


@ti.func
def carrier_joint(D: ti.template(), e, b):
    """The joint row of the tree link carrying body ``b``; -1 for a free body (always, in a kernel compiled
    without trees)."""
    j = -1
    if ti.static(D.trees):
        j = get(D.body_i, e, b, BODY_I.joint)
    return j


@ti.func
def body_pose(D: ti.template(), e, b):
    """World position [m] and rotation of body ``b``'s shape frame."""
    bd = row(D.body_i, e, b)
    pos = vec3(0.0, 0.0, 0.0)
    rot = ti.Matrix.identity(float, 3)
    j = carrier_joint(D, e, b)
    if j < 0:
        qs = bd[BODY_I.q0]
        pos = vec3(D.q[e, qs], D.q[e, qs + 1], D.q[e, qs + 2])
        quat = vec4(D.q[e, qs + 3], D.q[e, qs + 4], D.q[e, qs + 5], D.q[e, qs + 6])
        rot = quat_to_mat(quat / quat.norm())
    elif ti.static(D.trees):
        lrot = get33(D.frame, e, j, FRAME.rotation)
        pos = get3(D.frame, e, j, FRAME.position) + lrot @ get3(D.body_f, e, b, BODY_F.offset)
        rot = lrot @ get33(D.body_f, e, b, BODY_F.offset_rotation)
    return pos, rot


@ti.func
def body_position(D: ti.template(), e, b):
    """World position [m] of body ``b``'s shape frame origin."""
    pos, _rot = body_pose(D, e, b)
    return pos


@ti.func
def tree_reference(D: ti.template(), e, j):
    """The reference point [m] of the tree that joint row ``j`` belongs to: its root link's origin."""
    return get3(D.frame, e, get(D.tree, e, get(D.joint_i, e, j, JOINT_I.tree), TREE.joint0), FRAME.position)


@ti.func
def body_sweep_speed(D: ti.template(), e, b, radius, pos):
    """Bound on the speed [m/s] of any point of body ``b``: |v| + |w| r at the shape frame origin ``pos`` [m]
    (:func:`body_position`), ``r`` the bounding radius (a link's velocity at the start of the step)."""
    bd = row(D.body_i, e, b)
    v = vec3(0.0, 0.0, 0.0)
    w = vec3(0.0, 0.0, 0.0)
    j = carrier_joint(D, e, b)
    if j < 0:
        us = bd[BODY_I.u0]
        v = vec3(D.u[e, us], D.u[e, us + 1], D.u[e, us + 2])
        w = vec3(D.u[e, us + 3], D.u[e, us + 4], D.u[e, us + 5])
    elif ti.static(D.trees):
        vel = getn(D.frame, e, j, FRAME.velocity, 6)
        w = vec3(vel[0], vel[1], vel[2])
        v = vec3(vel[3], vel[4], vel[5]) + w.cross(pos - tree_reference(D, e, j))
    return v.norm() + w.norm() * radius


@ti.func
def link_spatial_velocity(D: ti.template(), e, j, c, du: ti.template()):
    """Spatial velocity (w, v at the reference point ``c``) of the link moved by joint row ``j``, from the
    tree's current generalized velocities (``du`` False) or from the velocity change in the tree's
    workspace (``du`` True): the sum of ``S_k u_k`` over the joints from the link to the root."""
    out = vec6(0.0)
    u0 = get(D.tree, e, get(D.joint_i, e, j, JOINT_I.tree), TREE.u0)
    jj = j
    while jj >= 0:
        ji = row(D.joint_i, e, jj)
        jtype = ji[JOINT_I.type]
        if jtype == JOINT_FLOATING:  # unit columns
            for a in ti.static(range(6)):
                out[ti.static(FLOATING_ENTRY[a])] += dof_value(D, e, u0 + ji[JOINT_I.dof] + a, du)
        elif jtype != JOINT_FIXED_ROOT:
            out += dof_value(D, e, u0 + ji[JOINT_I.dof], du) * motion_column(D, e, jj, jtype, 0, c)
        jj = ji[JOINT_I.parent]
    return out


@ti.func
def dof_value(D: ti.template(), e, d, du: ti.template()):
    """Generalized velocity ``d`` of the trees (row of u's tree block), or its entry in the workspace."""
    out = 0.0
    if ti.static(du):
        out = get(D.tree_dof, e, d, TREE_DOF.rhs)
    else:
        out = get(D.u_tree, e, d, 0)
    return out


@ti.func
def link_responses(D: ti.template(), e, j):
    """Make sure the link of joint row ``j`` has its response columns ``B = M~^-1 J^T`` (nv x 6) and its
    spatial response ``Phi = J B`` (6x6) for this step's factor: one six-column solve the first time a row
    needs them in a step, none after. With them a push on the link costs 6 nv operations, not a triangular
    solve (3 nv through the point columns of the link's first row, made again here when the factor changed).
    Called for the sides of the rows as they are built and again after the free velocities (an effort
    limit may have changed the factor)."""
    if get(D.link_dyn, e, j, LINK_DYN.ready) == 0.0:
        t = get(D.joint_i, e, j, JOINT_I.tree)
        nv = get(D.tree, e, t, TREE.nv)
        r0 = get(D.joint_i, e, j, JOINT_I.response0)
        c = tree_reference(D, e, j)
        if get(D.tree_step, e, t, TREE_STEP.inverse) != 0:
            _columns_from_inverse(D, e, t, j, r0)
        else:
            for d in range(nv):
                putn(D.link_response, e, r0 + d, LINK_RESPONSE.column, vec6(0.0))
            jj = j  # J^T: row d is S_d for the dofs on the link's path to the root, zero elsewhere
            while jj >= 0:
                ji = row(D.joint_i, e, jj)
                for a in range(n_dofs(ji[JOINT_I.type])):
                    putn(D.link_response, e, r0 + ji[JOINT_I.dof] + a, LINK_RESPONSE.column,
                         motion_column(D, e, jj, ji[JOINT_I.type], a, c))
                jj = ji[JOINT_I.parent]
            tree_solve_columns(D, e, t, r0)
        put(D.link_dyn, e, j, LINK_DYN.ready, 1.0)
        link_columns_changed(D, e, j)


@ti.func
def link_columns_changed(D: ti.template(), e, j):
    """After the response columns ``B`` of the link of joint row ``j`` were written: its spatial response
    ``Phi = J B`` and, where it has a point row, its point columns ``B A`` made from them."""
    phi = _path_response(D, e, j, get(D.joint_i, e, j, JOINT_I.response0), tree_reference(D, e, j), True,
                         LINK_RESPONSE.column, 6)
    for k in ti.static(range(6)):
        for i in ti.static(range(6)):
            put(D.link_dyn, e, j, LINK_DYN.phi + 6 * k + i, phi[k, i])
    if get(D.link_dyn, e, j, LINK_DYN.point_row) >= 0.0:
        _point_columns(D, e, j)


@ti.func
def point_map(r):
    """``A = [skew(r); I]`` (6x3): the spatial impulse (moment about the reference point, impulse) of a point
    impulse at offset ``r``; ``A^T`` maps a spatial velocity to the point's velocity."""
    a = ti.Matrix.zero(float, 6, 3)
    sr = skew(r)
    for i in ti.static(range(3)):
        for k in ti.static(range(3)):
            a[i, k] = sr[i, k]
        a[3 + i, i] = 1.0
    return a


@ti.func
def point_row(b, r):
    """Row ``d`` of ``B A`` (``A = point_map(r)``) for row ``b = (b_w, b_v)`` of ``B``: ``b_w x r + b_v``, as
    ``b . (r x p, p) = (b_w x r + b_v) . p``."""
    return vec3(b[1] * r[2] - b[2] * r[1] + b[3], b[2] * r[0] - b[0] * r[2] + b[4], b[0] * r[1] - b[1] * r[0] + b[5])


@ti.func
def _point_columns(D: ti.template(), e, j):
    """``B A`` (nv x 3) of the link of joint row ``j`` for its first row's point (``LINK_DYN.point_offset`` r),
    row by row (:func:`point_row`)."""
    r0 = get(D.joint_i, e, j, JOINT_I.response0)
    nv = get(D.tree, e, get(D.joint_i, e, j, JOINT_I.tree), TREE.nv)
    r = get3(D.link_dyn, e, j, LINK_DYN.point_offset)
    for d in range(nv):
        putn(D.link_response, e, r0 + d, LINK_RESPONSE.point,
             point_row(getn(D.link_response, e, r0 + d, LINK_RESPONSE.column, 6), r))


@ti.func
def forget_link_points(D: ti.template(), e, n_trees):
    """No link of env ``e``'s trees has a point row yet this step (before the rows are built)."""
    for t in range(n_trees):
        j0, n = get(D.tree, e, t, TREE.joint0), get(D.tree, e, t, TREE.n_joints)
        for k in range(n):
            put(D.link_dyn, e, j0 + k, LINK_DYN.point_row, -1.0)
            put(D.link_dyn, e, j0 + k, LINK_DYN.held, 0.0)


@ti.func
def claim_link_point(D: ti.template(), e, j, r, offset):
    """Row ``r``, at ``offset`` [m] from the tree's reference point, becomes the point row of the link of joint
    row ``j`` if the link has none yet this step (its responses made ready): its pushes then take ``B A``,
    3 nv operations instead of 6 nv."""
    if get(D.link_dyn, e, j, LINK_DYN.point_row) < 0.0:
        put(D.link_dyn, e, j, LINK_DYN.point_row, ti.cast(r, float))
        putn(D.link_dyn, e, j, LINK_DYN.point_offset, offset)
        _point_columns(D, e, j)


@ti.func
def push_link_point(D: ti.template(), e, j, r, offset, imp, scale):
    """``u += scale M~^-1 J^T A imp`` for a world impulse ``imp`` [N s] of row ``r`` at ``offset`` [m] on the link
    of joint row ``j``: through the link's point columns when ``r`` is its point row, else through ``B``."""
    if get(D.link_dyn, e, j, LINK_DYN.point_row) == ti.cast(r, float):
        _push_columns(D, e, j, LINK_RESPONSE.point, scale * imp)
    else:
        moment = offset.cross(imp)
        push_link(D, e, j, ti.Vector([moment[0], moment[1], moment[2], imp[0], imp[1], imp[2]]), scale)


@ti.func
def _columns_from_inverse(D: ti.template(), e, t, j, r0):
    """``B = M~^-1 J^T`` of the link of joint row ``j`` by products with the tree's full ``M~^-1``
    (``TREE_STEP.inverse``): row ``d`` of ``B`` sums ``(M~^-1)_dk S_k`` over the dofs ``k`` on the link's path to
    the root, from the link towards the root. The path is taken in pieces: up to three one-dof joints at a
    time, their ``S_k`` held in registers while one pass over ``d`` adds their terms (``M~^-1`` is symmetric:
    row ``k`` read along ``d``); a floating root's ``S_k`` are unit vectors, so its six dofs each add one
    entry of ``M~^-1`` to one column."""
    tr = row(D.tree, e, t)
    nv, m0 = tr[TREE.nv], tr[TREE.matrix0]
    fresh = True  # (B not yet written in this call)
    jj = j
    while jj >= 0:
        ji = row(D.joint_i, e, jj)
        if ji[JOINT_I.type] == JOINT_FLOATING:
            k0 = m0 + ji[JOINT_I.dof] * nv
            for d in range(nv):
                acc = vec6(0.0)
                if not fresh:
                    acc = getn(D.link_response, e, r0 + d, LINK_RESPONSE.column, 6)
                for a in ti.static(range(6)):
                    acc[ti.static(FLOATING_ENTRY[a])] += get(D.tree_inverse, e, k0 + a * nv + d,
                                                             TREE_INVERSE.inverse)
                putn(D.link_response, e, r0 + d, LINK_RESPONSE.column, acc)
            fresh = False
            jj = ji[JOINT_I.parent]
        elif ji[JOINT_I.type] == JOINT_FIXED_ROOT:
            jj = ji[JOINT_I.parent]
        else:  # this one-dof joint and up to two more towards the root
            ka = m0 + ji[JOINT_I.dof] * nv
            sa = getn(D.frame, e, jj, FRAME.motion, 6)
            kb, sb, jj = _one_dof_step(D, e, ji[JOINT_I.parent], m0, nv)
            kc, sc = -1, vec6(0.0)
            if kb >= 0:
                kc, sc, jj = _one_dof_step(D, e, jj, m0, nv)
            for d in range(nv):
                acc = vec6(0.0)
                if not fresh:
                    acc = getn(D.link_response, e, r0 + d, LINK_RESPONSE.column, 6)
                acc += get(D.tree_inverse, e, ka + d, TREE_INVERSE.inverse) * sa
                if kb >= 0:
                    acc += get(D.tree_inverse, e, kb + d, TREE_INVERSE.inverse) * sb
                if kc >= 0:
                    acc += get(D.tree_inverse, e, kc + d, TREE_INVERSE.inverse) * sc
                putn(D.link_response, e, r0 + d, LINK_RESPONSE.column, acc)
            fresh = False
    if fresh:  # (a fixed root's own link: no dof moves it)
        for d in range(nv):
            putn(D.link_response, e, r0 + d, LINK_RESPONSE.column, vec6(0.0))


@ti.func
def _one_dof_step(D: ti.template(), e, jj, m0, nv):
    """For joint row ``jj`` on a path to the root: ``(k, S, next)``, where a one-dof joint gives its row ``k`` of
    ``M~^-1`` (offset ``m0``, ``nv`` wide), its motion subspace ``S`` and its parent; anything else (none, a
    floating or fixed root) gives ``k = -1`` and leaves the walk at ``jj``."""
    k = -1
    s = vec6(0.0)
    nxt = jj
    if jj >= 0:
        ji = row(D.joint_i, e, jj)
        if ji[JOINT_I.type] != JOINT_FLOATING and ji[JOINT_I.type] != JOINT_FIXED_ROOT:
            k = m0 + ji[JOINT_I.dof] * nv
            s = getn(D.frame, e, jj, FRAME.motion, 6)
            nxt = ji[JOINT_I.parent]
    return k, s, nxt


@ti.func
def push_link(D: ti.template(), e, j, force, scale):
    """``u += scale B force``: the tree's velocity change for the spatial impulse ``force`` (moment about the
    tree's reference point [N m s], impulse [N s]) on the link of joint row ``j`` (its responses made ready
    by :func:`link_responses`)."""
    _push_columns(D, e, j, LINK_RESPONSE.column, scale * force)


@ti.func
def _push_columns(D: ti.template(), e, j, col: ti.template(), value):
    """``u += C value`` for the link of joint row ``j``, ``C`` its response columns ``col`` (``LINK_RESPONSE``
    ``column``: ``B``, nv x 6; ``point``: ``B A``, nv x 3) and ``value`` as many entries wide."""
    t = get(D.joint_i, e, j, JOINT_I.tree)
    u0, nv = get(D.tree, e, t, TREE.u0), get(D.tree, e, t, TREE.nv)
    r0 = get(D.joint_i, e, j, JOINT_I.response0)
    for d in range(nv):
        add(D.u_tree, e, u0 + d, 0, getn(D.link_response, e, r0 + d, col, ti.static(value.n)).dot(value))
    if ti.static(D.has_pins):
        if get(D.link_dyn, e, j, LINK_DYN.held) != 0.0:  # the pins' share of it is counted (solver/pin_block.py)
            spatial = vec6(0.0)
            if ti.static(value.n == 6):
                spatial = value
            else:
                r = get3(D.link_dyn, e, j, LINK_DYN.point_offset)
                m = r.cross(value)
                spatial = vec6(m[0], m[1], m[2], value[0], value[1], value[2])
            for a in ti.static(range(6)):
                add(D.link_dyn, e, j, LINK_DYN.pushed + a, spatial[a])


@ti.func
def link_phi(D: ti.template(), e, j):
    """The link's spatial response ``Phi = J M~^-1 J^T`` (6x6) for this step's factor (made ready by
    :func:`link_responses`)."""
    phi = ti.Matrix.zero(float, 6, 6)
    for k in ti.static(range(6)):
        for i in ti.static(range(6)):
            phi[k, i] = get(D.link_dyn, e, j, LINK_DYN.phi + 6 * k + i)
    return phi


@ti.func
def link_cross_phi(D: ti.template(), e, ja, jb):
    """``Phi_ba = J_b M~^-1 J_a^T`` (6x6): the spatial velocity change of the link of joint row ``jb`` per unit
    spatial impulse on the link of ``ja``, both of one tree (a contact between two of its links; ``ja``'s
    responses made ready by :func:`link_responses`)."""
    return _path_response(D, e, jb, get(D.joint_i, e, ja, JOINT_I.response0), tree_reference(D, e, ja), False,
                          LINK_RESPONSE.column, 6)


@ti.func
def _path_response(D: ti.template(), e, j, r0, c, symmetric: ti.template(), col: ti.template(),
                   width: ti.template()):
    """``J C = sum of S_d C_d^T`` over the dofs ``d`` on the path from joint row ``j``'s link to the root
    (6 x ``width``), ``C`` the ``LINK_RESPONSE`` columns ``col`` of another link from row ``r0``: with ``B``
    (``column``, 6 wide) the spatial velocity change of the link per unit spatial impulse on that one; with
    ``B A`` (``point``, 3 wide) per unit world impulse at its point row. ``symmetric``: ``C`` is this same
    link's ``B``, so ``J M~^-1 J^T`` is symmetric: its lower triangle is summed and copied to the upper."""
    out = ti.Matrix.zero(float, 6, width)
    jj = j
    while jj >= 0:
        ji = row(D.joint_i, e, jj)
        jtype = ji[JOINT_I.type]
        if jtype == JOINT_FLOATING:  # unit columns: dof a adds C's row a to the row of the entry it moves
            for a in ti.static(range(6)):
                b = getn(D.link_response, e, r0 + ji[JOINT_I.dof] + a, col, width)
                for k in ti.static(range(FLOATING_ENTRY[a] + 1 if symmetric else width)):
                    out[ti.static(FLOATING_ENTRY[a]), k] += b[k]
        elif jtype != JOINT_FIXED_ROOT:
            s = motion_column(D, e, jj, jtype, 0, c)
            b = getn(D.link_response, e, r0 + ji[JOINT_I.dof], col, width)
            for k in ti.static(range(6)):
                for i in ti.static(range(k + 1 if symmetric else width)):
                    out[k, i] += s[k] * b[i]
        jj = ji[JOINT_I.parent]
    if ti.static(symmetric):
        for k in ti.static(range(6)):
            for i in ti.static(range(k + 1, 6)):
                out[k, i] = out[i, k]
    return out
