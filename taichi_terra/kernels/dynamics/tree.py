"""Dynamics of articulated trees: kinematics, mass matrix, bias forces, the drives and the position update.

A tree is a root link (on a floating joint, or fixed in the world) and links each moved by a revolute or
prismatic joint from its parent. Its generalized velocities are the root's (linear velocity of the root
link's origin and angular velocity, both world frame, as a free body's) then one per joint.

Every spatial quantity of a tree is written in world axes about one reference point ``c``, the root link's
origin at the start of the step: a spatial velocity is ``(w, v)`` with ``v`` the velocity of the body point
at ``c``, a spatial force ``(n, f)`` with ``n`` the moment about ``c``. In these "ground" coordinates no
transform is needed between links (Featherstone, *Rigid Body Dynamics Algorithms*, ch. 2 and 6):

- the mass matrix by the composite-rigid-body algorithm, ``M_ij = S_i^T I^c_i S_j`` for joint ``j`` on the
  path from joint ``i`` to the root, with ``I^c_i`` the subtree's inertia;
- the bias forces ``h = C(q, u) u + g(q)`` by recursive Newton-Euler with zero joint accelerations and the
  root accelerating upwards at ``-g``;
- ``u* = u + (M + dt K_d + dt^2 K_p)^-1 dt (tau + K_p (q_t - q - dt u) + K_d (u_t - u) - h)``: the PD drives and
  joint damping taken implicitly (``reference/solver_math.md``, "Implicit PD"): one factor ``U U^T``
  (eliminated from the leaves, as sparse as the tree) per tree and step where rows act on the tree (their
  responses need ``M~^-1``), and otherwise the articulated-body algorithm, which solves the same system in
  O(links) without forming ``M`` (the 60-link chain's tree stages 2x faster); a drive beyond its joint's
  effort limit is held at the limit.
  Both solves are in ``tree_solve.py``.
"""
import taichi as ti

from ..common.arrays import (
    DRIVE,
    FRAME,
    JOINT_F,
    JOINT_I,
    JOINT_STATE,
    LINK_DYN,
    PLATE_LOAD,
    SETTINGS_I,
    TREE,
    TREE_DOF,
    TREE_MASS,
    TREE_STEP,
    StepData,
    gravity_of,
    link_mass_scale,
)
from ..common.layout import JOINT_FIXED_ROOT, JOINT_FLOATING, JOINT_REVOLUTE
from ..common.math import quat_to_mat, vec3, vec4
from ..common.schema import add, get, get3, get33, getn, put, put33, putn, row
from .free_body import free_body_velocity, integrate_link
from .tree_solve import tree_factor, tree_solve, tree_solve_articulated

vec6 = ti.types.vector(6, float)


@ti.func
def rotated_about(rj, axis_l, axis, angle):
    """``rj R(axis_l, angle)``: the frame ``rj`` turned by ``angle`` [rad] about its own unit axis ``axis_l``
    (``axis = rj axis_l`` in world axes). With ``R = cos I + sin [a]x + (1 - cos) a a^T`` (Rodrigues), row
    ``i`` of the product is ``cos r_i + sin r_i x a + (1 - cos) axis_i a``, ``r_i`` the row of ``rj``."""
    c, s = ti.cos(angle), ti.sin(angle)
    out = ti.Matrix.zero(float, 3, 3)
    for i in ti.static(range(3)):
        r = vec3(rj[i, 0], rj[i, 1], rj[i, 2])
        turned = c * r + s * r.cross(axis_l) + (1.0 - c) * axis[i] * axis_l
        for k in ti.static(range(3)):
            out[i, k] = turned[k]
    return out


@ti.func
def spatial(w, v):
    return vec6(w[0], w[1], w[2], v[0], v[1], v[2])


@ti.func
def ang(x):
    return vec3(x[0], x[1], x[2])


@ti.func
def lin(x):
    return vec3(x[3], x[4], x[5])


@ti.func
def cross_motion(a, b):
    """``a x b`` of two spatial motion vectors."""
    return spatial(ang(a).cross(ang(b)), ang(a).cross(lin(b)) + lin(a).cross(ang(b)))


@ti.func
def cross_force(a, f):
    """``a x* f``: a motion vector acting on a force vector."""
    return spatial(ang(a).cross(ang(f)) + lin(a).cross(lin(f)), ang(a).cross(lin(f)))


@ti.func
def inertia_times(mass, moment, inertia, x):
    """The spatial inertia (mass [kg], first moment ``m h`` [kg m] and rotational inertia [kg m^2], both about
    the reference point) applied to the motion vector ``x``."""
    return spatial(inertia @ ang(x) + moment.cross(lin(x)), mass * lin(x) - moment.cross(ang(x)))


@ti.func
def n_dofs(jtype):
    n = 1
    if jtype == JOINT_FLOATING:
        n = 6
    elif jtype == JOINT_FIXED_ROOT:
        n = 0
    return n


#: the spatial entry (angular 0-2, linear 3-5) that a floating root's dof ``a`` (linear 0-2, angular 3-5) moves:
#: its motion column is that unit vector
FLOATING_ENTRY = (3, 4, 5, 0, 1, 2)


@ti.func
def motion_column(D: ti.template(), e, j, jtype, a, c):
    """Column ``a`` of joint ``j``'s motion subspace: the spatial velocity per unit joint velocity (after
    :func:`tree_kinematics`, which stores a revolute or prismatic joint's about the reference point ``c``)."""
    s = vec6(0.0)
    if jtype == JOINT_FLOATING:  # the reference point is the root's origin: linear, then angular dofs
        unit = vec3(ti.cast(a % 3 == 0, float), ti.cast(a % 3 == 1, float), ti.cast(a % 3 == 2, float))
        s = spatial(vec3(0.0, 0.0, 0.0), unit)
        if a >= 3:
            s = spatial(unit, vec3(0.0, 0.0, 0.0))
    elif jtype != JOINT_FIXED_ROOT:
        s = getn(D.frame, e, j, FRAME.motion, 6)
    return s


@ti.func
def tree_coord(D: ti.template(), e, r):
    return get(D.q_tree, e, r, 0)


@ti.func
def tree_vel(D: ti.template(), e, r):
    return get(D.u_tree, e, r, 0)


@ti.func
def tree_kinematics(D: ti.template(), e, t):
    """World pose of every link of tree ``t``, its joint's world anchor and motion subspace, the links'
    spatial velocities and the velocity-product terms of their accelerations (``FRAME``); returns the
    reference point ``c`` [m]."""
    tr = row(D.tree, e, t)
    c = vec3(0.0, 0.0, 0.0)
    for k in range(tr[TREE.n_joints]):
        c = joint_frame(D, e, tr[TREE.joint0] + k, c)
    return c


@ti.func
def path_kinematics(D: ti.template(), e, j):
    """:func:`tree_kinematics` for the links on the path from the root to the link of joint row ``j`` only
    (root first; the same arithmetic, so the same frames): what a pin's ends need after a displacement of the
    tree, at the cost of the path's depth instead of all its links. Other links keep their frames."""
    depth = 0
    root = j
    while get(D.joint_i, e, root, JOINT_I.parent) >= 0:
        root = get(D.joint_i, e, root, JOINT_I.parent)
        depth += 1
    c = joint_frame(D, e, root, vec3(0.0, 0.0, 0.0))
    for d in range(1, depth + 1):  # the ancestor of j at depth d, found from j (paths are short)
        jj = j
        for _ in range(depth - d):
            jj = get(D.joint_i, e, jj, JOINT_I.parent)
        c = joint_frame(D, e, jj, c)


@ti.func
def joint_frame(D: ti.template(), e, j, c):
    """The ``FRAME`` row of joint row ``j`` from its parent's (see :func:`tree_kinematics`); ``c`` is the tree's
    reference point [m], set by (and returned from) the root's row."""
    ji = row(D.joint_i, e, j)
    jtype = ji[JOINT_I.type]
    r0 = get33(D.joint_f, e, j, JOINT_F.origin_rotation)
    pos = get3(D.joint_f, e, j, JOINT_F.origin)
    rot = r0
    anchor = pos
    vel = vec6(0.0)
    bias = vec6(0.0)
    motion = vec6(0.0)
    if jtype == JOINT_FLOATING:
        qr, ur = ji[JOINT_I.q], ji[JOINT_I.u]
        pos = vec3(tree_coord(D, e, qr), tree_coord(D, e, qr + 1), tree_coord(D, e, qr + 2))
        quat = vec4(tree_coord(D, e, qr + 3), tree_coord(D, e, qr + 4), tree_coord(D, e, qr + 5),
                    tree_coord(D, e, qr + 6))
        rot = quat_to_mat(quat / quat.norm())
        v = vec3(tree_vel(D, e, ur), tree_vel(D, e, ur + 1), tree_vel(D, e, ur + 2))
        w = vec3(tree_vel(D, e, ur + 3), tree_vel(D, e, ur + 4), tree_vel(D, e, ur + 5))
        c = pos
        anchor = pos
        vel = spatial(w, v)
        # d/dt of (w, v + w x (c - x)) with the origin x moving at v: the term -w x v
        bias = spatial(vec3(0.0, 0.0, 0.0), -w.cross(v))
    elif jtype == JOINT_FIXED_ROOT:
        c = pos
    else:
        p = ji[JOINT_I.parent]
        ppos, prot = get3(D.frame, e, p, FRAME.position), get33(D.frame, e, p, FRAME.rotation)
        rj = prot @ r0
        axis_l = get3(D.joint_f, e, j, JOINT_F.axis)
        axis = rj @ axis_l
        anchor = ppos + prot @ pos
        x, xd = tree_coord(D, e, ji[JOINT_I.q]), tree_vel(D, e, ji[JOINT_I.u])
        s = spatial(vec3(0.0, 0.0, 0.0), axis)
        if jtype == JOINT_REVOLUTE:
            rot = rotated_about(rj, axis_l, axis, x)
            pos = anchor
            s = spatial(axis, axis.cross(c - anchor))
        else:
            rot = rj
            pos = anchor + x * axis
        motion = s
        vel = getn(D.frame, e, p, FRAME.velocity, 6) + xd * s
        bias = getn(D.frame, e, p, FRAME.bias, 6) + cross_motion(vel, xd * s)
    putn(D.frame, e, j, FRAME.position, pos)
    put33(D.frame, e, j, FRAME.rotation, rot)
    putn(D.frame, e, j, FRAME.anchor, anchor)
    putn(D.frame, e, j, FRAME.motion, motion)
    putn(D.frame, e, j, FRAME.velocity, vel)
    putn(D.frame, e, j, FRAME.bias, bias)
    return c


@ti.func
def link_inertia(D: ti.template(), e, j, c):
    """The spatial inertia of the link moved by joint row ``j`` alone, about the point ``c`` in world axes
    (from its frame in ``FRAME``): mass [kg], first moment ``m h`` [kg m], rotational inertia [kg m^2]."""
    rot = get33(D.frame, e, j, FRAME.rotation)
    scale = link_mass_scale(D, e, j)
    mass = scale * get(D.joint_f, e, j, JOINT_F.mass)
    h = get3(D.frame, e, j, FRAME.position) + rot @ get3(D.joint_f, e, j, JOINT_F.com) - c
    inertia = rot @ (scale * get33(D.joint_f, e, j, JOINT_F.inertia)) @ rot.transpose()
    inertia += mass * (h.dot(h) * ti.Matrix.identity(float, 3) - h.outer_product(h))
    return mass, mass * h, inertia


@ti.func
def link_force(D: ti.template(), e, j, mass, moment, inertia, acc):
    """Newton-Euler: the spatial force (moment about the inertia's reference point [N m], force [N]) the link
    of joint row ``j``, of spatial inertia (mass, moment, inertia), needs for the spatial acceleration ``acc``
    at its velocity in ``FRAME``: ``I a + v x* I v``."""
    vel = getn(D.frame, e, j, FRAME.velocity, 6)
    return inertia_times(mass, moment, inertia, acc) + cross_force(vel, inertia_times(mass, moment, inertia, vel))


@ti.func
def plate_wrench(D: ti.template(), e, j, c):
    """The spatial force (moment about ``c`` [N m], force [N]) that the RFT plates of the link of joint row ``j``
    take this step (``PLATE_LOAD``, whose moment is about the link's origin); zero in a world without plates."""
    out = spatial(vec3(0.0, 0.0, 0.0), vec3(0.0, 0.0, 0.0))
    if get(D.settings_i, e, 0, SETTINGS_I.n_plate_carriers) > 0:
        row = get(D.settings_i, e, 0, SETTINGS_I.n_free_bodies) + j
        f = get3(D.plate_load, e, row, PLATE_LOAD.force)
        moment = get3(D.plate_load, e, row, PLATE_LOAD.torque) + (get3(D.frame, e, j, FRAME.position) - c).cross(f)
        out = spatial(moment, f)
    return out


@ti.func
def tree_dynamics(D: ti.template(), e, t, c, gravity, mass_matrix, loads):
    """Bias forces ``h`` of tree ``t`` after :func:`tree_kinematics` and, with ``mass_matrix`` true, the mass
    matrix ``M`` (its lower triangle; rotor inertias on the diagonal): each link's spatial inertia about
    ``c``, the Newton-Euler force it needs with zero joint accelerations under gravity (less, with ``loads``
    true, the force its RFT plates take this step, ``PLATE_LOAD``), then one pass from the leaves that gives
    each joint its ``h = S^T f`` and each parent its subtree's force (and inertia, for the CRBA columns that
    follow). Without the mass matrix each link keeps its own inertia, which :func:`tree_solve_articulated`
    reads."""
    tr = row(D.tree, e, t)
    j0, nj, nv, m0, dof0 = tr[TREE.joint0], tr[TREE.n_joints], tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    a0 = spatial(vec3(0.0, 0.0, 0.0), -gravity)
    for d in range(nv):  # no drive is held at its effort limit until this step's velocity update says so
        put(D.tree_dof, e, dof0 + d, TREE_DOF.saturated, 0.0)
    for k in range(nj):
        j = j0 + k
        mass, moment, inertia = link_inertia(D, e, j, c)
        force = link_force(D, e, j, mass, moment, inertia, a0 + getn(D.frame, e, j, FRAME.bias, 6))
        if loads:
            force -= plate_wrench(D, e, j, c)
        put(D.link_dyn, e, j, LINK_DYN.mass, mass)
        putn(D.link_dyn, e, j, LINK_DYN.moment, moment)
        put33(D.link_dyn, e, j, LINK_DYN.inertia, inertia)
        putn(D.link_dyn, e, j, LINK_DYN.force, force)
    for kk in range(nj):  # leaves first: a link's subtree is complete when it is reached
        j = j0 + nj - 1 - kk
        ji = row(D.joint_i, e, j)
        jtype = ji[JOINT_I.type]
        force = getn(D.link_dyn, e, j, LINK_DYN.force, 6)
        for a in range(n_dofs(jtype)):
            put(D.tree_dof, e, dof0 + ji[JOINT_I.dof] + a, TREE_DOF.bias,
                motion_column(D, e, j, jtype, a, c).dot(force))
        p = ji[JOINT_I.parent]
        if p >= 0:
            if mass_matrix:
                add(D.link_dyn, e, p, LINK_DYN.mass, get(D.link_dyn, e, j, LINK_DYN.mass))
                putn(D.link_dyn, e, p, LINK_DYN.moment,
                     get3(D.link_dyn, e, p, LINK_DYN.moment) + get3(D.link_dyn, e, j, LINK_DYN.moment))
                put33(D.link_dyn, e, p, LINK_DYN.inertia,
                      get33(D.link_dyn, e, p, LINK_DYN.inertia) + get33(D.link_dyn, e, j, LINK_DYN.inertia))
            putn(D.link_dyn, e, p, LINK_DYN.force, getn(D.link_dyn, e, p, LINK_DYN.force, 6) + force)
    for k in range(nj * ti.cast(mass_matrix, ti.i32)):  # the CRBA columns (none without the mass matrix)
        j = j0 + k
        ji = row(D.joint_i, e, j)
        jtype = ji[JOINT_I.type]
        mass = get(D.link_dyn, e, j, LINK_DYN.mass)
        moment, inertia = get3(D.link_dyn, e, j, LINK_DYN.moment), get33(D.link_dyn, e, j, LINK_DYN.inertia)
        armature = get(D.joint_f, e, j, JOINT_F.armature)
        for a in range(n_dofs(jtype)):
            col = ji[JOINT_I.dof] + a
            f = inertia_times(mass, moment, inertia, motion_column(D, e, j, jtype, a, c))
            jj = j
            while jj >= 0:  # the joints from this one to the root: M_rc = S_r^T f
                ki = row(D.joint_i, e, jj)
                r0 = ki[JOINT_I.dof]
                if ki[JOINT_I.type] == JOINT_FLOATING:  # unit columns: linear dofs read f's force, angular its moment
                    for b in ti.static(range(6)):
                        if r0 + b <= col:  # (the root's own 6x6 block: its lower half)
                            put(D.tree_mass, e, m0 + col * nv + r0 + b, TREE_MASS.mass, f[(b + 3) % 6])
                elif ki[JOINT_I.type] != JOINT_FIXED_ROOT:
                    val = getn(D.frame, e, jj, FRAME.motion, 6).dot(f)
                    if jj == j:
                        val += armature
                    put(D.tree_mass, e, m0 + col * nv + r0, TREE_MASS.mass, val)
                jj = ki[JOINT_I.parent]


@ti.func
def hold_drives(D: ti.template(), e, t):
    """The drives of tree ``t`` that asked for more than their effort limit at the end of the last step
    (``JOINT_STATE.held``) are held at it in this one (``TREE_DOF.saturated``; before the factor, which then
    leaves their gains out). The velocity update checks the drives against their limits too, but before the
    rows act: a drive stalled by a load (a tracked robot against a wall, a leg pushing on a rock) asks for
    more than its limit only once the rows have held it back, so that is checked after the sweep
    (:func:`record_drive_forces`) and takes effect from the next step on."""
    tr = row(D.tree, e, t)
    j0, u0 = tr[TREE.joint0], tr[TREE.u0]
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, j0 + k)
        if ji[JOINT_I.type] >= JOINT_REVOLUTE:
            held = get(D.joint_state, e, j0 + k, JOINT_STATE.held)
            if held != 0.0:
                put(D.tree_dof, e, u0 + ji[JOINT_I.dof], TREE_DOF.saturated, held)


@ti.func
def _asked(D: ti.template(), e, ji, u0, ud, dt):
    """The force [N m or N] the feed-forward term and the PD drive of 1-dof joint ``ji`` ask for at the
    end-of-step velocity ``ud`` (effort limit not applied)."""
    dr = row(D.drive, e, u0 + ji[JOINT_I.dof])
    return dr[DRIVE.force] + dr[DRIVE.kp] * (dr[DRIVE.position_target] - tree_coord(D, e, ji[JOINT_I.q])
                                             - dt * ud) + dr[DRIVE.kd] * (dr[DRIVE.velocity_target] - ud)


@ti.func
def drive_force(D: ti.template(), e, j, ji, u0, a, ud, dt):
    """The generalized force on dof ``a`` of joint ``j`` at velocity ``ud``, as (drive, damping): the drive is
    the feed-forward force plus, for a joint (not a floating root), the PD drive at the end of the step, or
    the effort limit with its sign if it is held there this step; the damping is ``-D ud``."""
    d = ji[JOINT_I.dof] + a
    dr = row(D.drive, e, u0 + d)
    tau = dr[DRIVE.force]
    damping = 0.0
    if ji[JOINT_I.type] >= JOINT_REVOLUTE:
        saturated = get(D.tree_dof, e, u0 + d, TREE_DOF.saturated)
        if saturated != 0.0:
            tau = saturated * get(D.joint_f, e, j, JOINT_F.effort_limit)
        else:
            qd = tree_coord(D, e, ji[JOINT_I.q])
            tau += dr[DRIVE.kp] * (dr[DRIVE.position_target] - qd - dt * ud) + dr[DRIVE.kd] * (
                dr[DRIVE.velocity_target] - ud)
        damping = -get(D.joint_f, e, j, JOINT_F.damping) * ud
    return tau, damping


@ti.func
def _free_velocity_change(D: ti.template(), e, t, dt):
    """The tree's workspace <- ``du = M~^-1 dt (drive + damping - h)`` at the current velocities."""
    tr = row(D.tree, e, t)
    j0, u0 = tr[TREE.joint0], tr[TREE.u0]
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, j0 + k)
        for a in range(n_dofs(ji[JOINT_I.type])):
            d = u0 + ji[JOINT_I.dof] + a
            tau, damping = drive_force(D, e, j0 + k, ji, u0, a, tree_vel(D, e, d), dt)
            put(D.tree_dof, e, d, TREE_DOF.rhs, dt * (tau + damping - get(D.tree_dof, e, d, TREE_DOF.bias)))
    if get(D.tree_step, e, t, TREE_STEP.factored) != 0:
        tree_solve(D, e, t)
    else:
        tree_solve_articulated(D, e, t, dt)


@ti.func
def tree_free_velocity(D: ti.template(), e, t, dt):
    """``u* = u + (M + dt (K_d + D) + dt^2 K_p)^-1 dt (tau_ff + K_p (q_t - q - dt u) + K_d (u_t - u) - D u - h)``
    for tree ``t`` (the drives and damping implicit: stable for stiff gains at large dt), after
    :func:`tree_factor`. A joint whose drive would exceed its effort limit is held at the limit instead: its
    drive becomes the constant force +-effort, the factor is rebuilt without its gains and the velocities
    solved again (one correction pass). A tree of one floating link takes the free body's update
    (:func:`single_link_free_velocity`)."""
    tr = row(D.tree, e, t)
    j0, u0 = tr[TREE.joint0], tr[TREE.u0]
    if tr[TREE.n_joints] == 1 and get(D.joint_i, e, j0, JOINT_I.type) == JOINT_FLOATING:
        single_link_free_velocity(D, e, j0, u0, dt)
    else:
        _joint_free_velocity(D, e, t, dt)


@ti.func
def single_link_free_velocity(D: ti.template(), e, j, u0, dt):
    """A tree of one floating link moves as a free body: its velocity update is the free body's
    (:func:`~.free_body.free_body_velocity`, implicit gyroscopic term) about its centre of mass, the base
    force and moment (about the link origin) of its drive rows as the load; with the centre of mass at the
    link origin the arithmetic is the free body's, step for step."""
    ur = get(D.joint_i, e, j, JOINT_I.u)
    rot = get33(D.frame, e, j, FRAME.rotation)
    r = rot @ get3(D.joint_f, e, j, JOINT_F.com)  # link origin -> centre of mass [m]
    v = vec3(tree_vel(D, e, ur), tree_vel(D, e, ur + 1), tree_vel(D, e, ur + 2))
    w = vec3(tree_vel(D, e, ur + 3), tree_vel(D, e, ur + 4), tree_vel(D, e, ur + 5))
    force = vec3(get(D.drive, e, u0, DRIVE.force), get(D.drive, e, u0 + 1, DRIVE.force),
                 get(D.drive, e, u0 + 2, DRIVE.force))
    moment = vec3(get(D.drive, e, u0 + 3, DRIVE.force), get(D.drive, e, u0 + 4, DRIVE.force),
                  get(D.drive, e, u0 + 5, DRIVE.force))
    scale = link_mass_scale(D, e, j)
    inertia = scale * get33(D.joint_f, e, j, JOINT_F.inertia)
    gravity = gravity_of(D, e)
    v_com, w_new = free_body_velocity(rot, v + w.cross(r), w, scale * get(D.joint_f, e, j, JOINT_F.mass), inertia,
                                      rot @ inertia.inverse() @ rot.transpose(), force, moment - r.cross(force),
                                      gravity, dt)
    dv = (v_com - w_new.cross(r)) - v
    dw = w_new - w
    for k in ti.static(range(3)):
        add(D.u_tree, e, ur + k, 0, dv[k])
        add(D.u_tree, e, ur + 3 + k, 0, dw[k])


@ti.func
def _joint_free_velocity(D: ti.template(), e, t, dt):
    tr = row(D.tree, e, t)
    j0, u0 = tr[TREE.joint0], tr[TREE.u0]
    _free_velocity_change(D, e, t, dt)
    any_saturated = False
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, j0 + k)
        if ji[JOINT_I.type] >= JOINT_REVOLUTE:
            d = u0 + ji[JOINT_I.dof]
            tau, _damping = drive_force(D, e, j0 + k, ji, u0, 0,
                                        tree_vel(D, e, d) + get(D.tree_dof, e, d, TREE_DOF.rhs), dt)
            if ti.abs(tau) > get(D.joint_f, e, j0 + k, JOINT_F.effort_limit):
                put(D.tree_dof, e, d, TREE_DOF.saturated, ti.math.sign(tau))
                any_saturated = True
    if any_saturated:
        if get(D.tree_step, e, t, TREE_STEP.factored) != 0:
            tree_factor(D, e, t, dt)
        _free_velocity_change(D, e, t, dt)
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, j0 + k)
        for a in range(n_dofs(ji[JOINT_I.type])):
            d = u0 + ji[JOINT_I.dof] + a
            put(D.u_tree, e, d, 0, tree_vel(D, e, d) + get(D.tree_dof, e, d, TREE_DOF.rhs))


@ti.func
def record_drive_forces(D: ti.template(), e, t, dt):
    """``TREE_DOF.applied`` <- the generalized force the drives and damping of tree ``t`` applied in the step,
    at the velocities the sweep ended with: the implicit drive responds to the contact and joint impulses
    too (its gains are in the factor every row's response uses). ``JOINT_STATE.held`` <- for each drive with
    an effort limit, the sign of what it asks for at these velocities where that is beyond the limit (0
    where it is within): the next step holds it there (:func:`hold_drives`)."""
    tr = row(D.tree, e, t)
    j0, u0 = tr[TREE.joint0], tr[TREE.u0]
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, j0 + k)
        for a in range(n_dofs(ji[JOINT_I.type])):
            d = u0 + ji[JOINT_I.dof] + a
            tau, damping = drive_force(D, e, j0 + k, ji, u0, a, tree_vel(D, e, d), dt)
            put(D.tree_dof, e, d, TREE_DOF.applied, tau + damping)
        if ji[JOINT_I.type] >= JOINT_REVOLUTE:
            asked = _asked(D, e, ji, u0, tree_vel(D, e, u0 + ji[JOINT_I.dof]), dt)
            held = 0.0
            if ti.abs(asked) > get(D.joint_f, e, j0 + k, JOINT_F.effort_limit):
                held = ti.math.sign(asked)
            put(D.joint_state, e, j0 + k, JOINT_STATE.held, held)


@ti.func
def tree_integrate(D: ti.template(), e, t, dt):
    """Semi-implicit Euler for tree ``t``: joint velocities clamped to their limits, then the root's pose by
    its new velocity (the exponential map for the orientation) and each joint's coordinate."""
    tr = row(D.tree, e, t)
    j0 = tr[TREE.joint0]
    for k in range(tr[TREE.n_joints]):
        ji = row(D.joint_i, e, j0 + k)
        jtype = ji[JOINT_I.type]
        if jtype == JOINT_FLOATING:
            integrate_link(D.q, D.u, e, D.q_tree.off + ji[JOINT_I.q], D.u_tree.off + ji[JOINT_I.u], dt)
        elif jtype != JOINT_FIXED_ROOT:
            limit = get(D.joint_f, e, j0 + k, JOINT_F.velocity_limit)
            ud = ti.min(ti.max(tree_vel(D, e, ji[JOINT_I.u]), -limit), limit)
            put(D.u_tree, e, ji[JOINT_I.u], 0, ud)
            add(D.q_tree, e, ji[JOINT_I.q], 0, dt * ud)


@ti.kernel
def evaluate_trees(model_i: ti.types.ndarray(), model_f: ti.types.ndarray(), q: ti.types.ndarray(),
                   u: ti.types.ndarray(), control: ti.types.ndarray(), scratch_f: ti.types.ndarray()):
    """Link frames, mass matrices and bias forces of every tree in every env at the current state, without
    stepping (what ``get_mass_matrix``, ``get_nonlinearities`` and the frame queries read)."""
    for e in range(q.shape[0]):
        _evaluate(StepData(model_i, model_i=model_i, model_f=model_f, q=q, u=u, control=control,
                           scratch_f=scratch_f), e)


@ti.func
def _evaluate(D: ti.template(), e):
    gravity = gravity_of(D, e)
    for t in range(get(D.settings_i, e, 0, SETTINGS_I.n_trees)):
        tree_dynamics(D, e, t, tree_kinematics(D, e, t), gravity, True, False)


@ti.kernel
def tree_frames(model_i: ti.types.ndarray(), model_f: ti.types.ndarray(), q: ti.types.ndarray(),
                u: ti.types.ndarray(), scratch_f: ti.types.ndarray()):
    """The link frames and velocities (``FRAME``) of every tree in every env at the current state, without the
    mass matrices (what ray casts and drawing read)."""
    for e in range(q.shape[0]):
        _frames(StepData(model_i, model_i=model_i, model_f=model_f, q=q, u=u, scratch_f=scratch_f), e)


@ti.func
def _frames(D: ti.template(), e):
    for t in range(get(D.settings_i, e, 0, SETTINGS_I.n_trees)):
        tree_kinematics(D, e, t)
