"""Inverse dynamics after the solve: the wrench every joint of a tree transmitted during the step.

For a tree with ``TREE.inverse_dynamics`` set, once the sweep has fixed the step's velocities ``u+``, each
link's spatial acceleration is the step's ``a = (V(u+) - V(u)) / dt + c`` (``V`` from the motion columns at
the start of the step, ``c`` the velocity-product term of ``FRAME.bias``), and Newton-Euler gives the force
it needed, ``f = I (a - a_g) + v x* I v`` (``a_g`` gravity). Less the external impulses the solver's rows put
on it (contacts and soil points on its shapes, pins, and the pull of a belt on the drive joints it runs
through, ``belts/rows.py``) over ``dt``, summed from the leaves to the root, this is
the wrench the joint passed from the parent into the subtree, constraint forces included: its projection on
the joint's axis is what the drive, the damping and the joint's limit and friction rows applied, and a
floating root transmits no wrench. Stored as the moment about the joint's anchor and the force
(``LINK_DYN.transmitted``).
"""
import taichi as ti

from ..common.arrays import FRAME, JOINT_I, LINK_DYN, PIN_ROW, ROW_F, ROW_I, TRACK_DRIVES, TRACK_F, TRACK_I, TREE
from ..common.layout import JOINT_REVOLUTE, ROW_CONTACT, ROW_PIN, ROW_SOIL
from ..common.math import vec3
from ..common.schema import get, get3, get33, getn, putn, row
from ..solver.pins import pin_ends
from .bodies import carrier_joint, link_spatial_velocity, tree_reference
from .tree import link_force, link_inertia, spatial

vec6 = ti.types.vector(6, float)


@ti.func
def _wanted(D: ti.template(), e, j):
    """Whether joint row ``j`` (>= 0) belongs to a tree with inverse dynamics on."""
    return get(D.tree, e, get(D.joint_i, e, j, JOINT_I.tree), TREE.inverse_dynamics) != 0


@ti.func
def _add_external(D: ti.template(), e, j, p, imp):
    """Accumulate the impulse ``imp`` [N s] at the world point ``p`` on the link of joint row ``j`` (moment
    about the tree's reference point, then impulse)."""
    if j >= 0:
        _add_external_at(D, e, j, p - tree_reference(D, e, j), imp)


@ti.func
def _add_external_at(D: ti.template(), e, j, r, imp):
    """Accumulate the impulse ``imp`` [N s] at offset ``r`` [m] from the tree's reference point on the link of
    joint row ``j`` (-1: none): a contact row's point as its side takes it (on a belt's mid-plane)."""
    if j >= 0:
        if _wanted(D, e, j):
            putn(D.link_dyn, e, j, LINK_DYN.transmitted,
                 getn(D.link_dyn, e, j, LINK_DYN.transmitted, 6) + spatial(r.cross(imp), imp))


@ti.func
def _add_belt_pull(D: ti.template(), e, k, amount):
    """The pull of track ``k``'s belt on its drives for a belt impulse ``amount`` [N s] (``t . lambda``): the
    generalized impulse ``g_d amount`` on each drive's dof, as a pair of equal and opposite spatial
    impulses on the joint's child link and its parent (a moment about the axis of a revolute joint, a force
    along a prismatic one's), so the joint's own wrench carries it and no other joint's does."""
    t = get(D.track_i, e, k, TRACK_I.tree)
    if get(D.tree, e, t, TREE.inverse_dynamics) != 0:
        j0, nj = get(D.tree, e, t, TREE.joint0), get(D.tree, e, t, TREE.n_joints)
        for a in ti.static(range(TRACK_DRIVES)):
            g = get(D.track_f, e, k, TRACK_F.gain + a)
            if g != 0.0:
                d = get(D.track_i, e, k, TRACK_I.dof + a)
                for kk in range(nj):  # the joint row of dof d
                    j = j0 + kk
                    ji = row(D.joint_i, e, j)
                    if ji[JOINT_I.type] >= JOINT_REVOLUTE and ji[JOINT_I.dof] == d:
                        s = getn(D.frame, e, j, FRAME.motion, 6)
                        f = vec6(0.0)
                        if ji[JOINT_I.type] == JOINT_REVOLUTE:
                            f = spatial(g * amount * vec3(s[0], s[1], s[2]), vec3(0.0, 0.0, 0.0))
                        else:
                            f = spatial(vec3(0.0, 0.0, 0.0), g * amount * vec3(s[3], s[4], s[5]))
                        putn(D.link_dyn, e, j, LINK_DYN.transmitted, getn(D.link_dyn, e, j, LINK_DYN.transmitted, 6) + f)
                        if ji[JOINT_I.parent] >= 0:
                            p = ji[JOINT_I.parent]
                            putn(D.link_dyn, e, p, LINK_DYN.transmitted,
                                 getn(D.link_dyn, e, p, LINK_DYN.transmitted, 6) - f)


@ti.func
def transmitted_wrenches(D: ti.template(), e, n_trees, n_rows, n_joint_rows, dt, gravity):
    """Of the step's ``HISTORY`` (before the positions move): ``LINK_DYN.transmitted`` of every joint of the trees with
    inverse dynamics on, from this step's velocity change and the impulses of its ``n_rows`` contact rows
    and the pin rows among the next ``n_joint_rows``."""
    any_on = False
    for t in range(n_trees):
        tr = row(D.tree, e, t)
        if tr[TREE.inverse_dynamics] != 0:
            any_on = True
            for k in range(tr[TREE.n_joints]):
                putn(D.link_dyn, e, tr[TREE.joint0] + k, LINK_DYN.transmitted, vec6(0.0))
    if any_on:
        for r in range(n_rows + n_joint_rows):
            ri = row(D.row_i, e, r)
            kind = ri[ROW_I.kind]
            if kind == ROW_CONTACT or kind == ROW_SOIL:
                imp = get33(D.row_f, e, r, ROW_F.frame) @ get3(D.row_f, e, r, ROW_F.impulse)
                jb = carrier_joint(D, e, ri[ROW_I.side_b])
                _add_external_at(D, e, jb, get3(D.row_f, e, r, ROW_F.offset_b), imp)
                if ri[ROW_I.side_a] >= 0:
                    _add_external_at(D, e, carrier_joint(D, e, ri[ROW_I.side_a]), get3(D.row_f, e, r, ROW_F.offset_a),
                                     -imp)
                if ti.static(D.has_belts):
                    if ri[ROW_I.belt_b] >= 0:
                        _add_belt_pull(D, e, ri[ROW_I.belt_b], get3(D.row_f, e, r, ROW_F.belt_b).dot(imp))
                    if ri[ROW_I.belt_a] >= 0:
                        _add_belt_pull(D, e, ri[ROW_I.belt_a], -get3(D.row_f, e, r, ROW_F.belt_a).dot(imp))
            elif kind == ROW_PIN:
                if ti.static(D.has_pins):
                    ja, jb, pa, pb = pin_ends(D, e, ri[PIN_ROW.pin])
                    imp = get3(D.row_f, e, r, ROW_F.impulse)
                    _add_external(D, e, jb, pb, imp)
                    _add_external(D, e, ja, pa, -imp)
        a0 = spatial(vec3(0.0, 0.0, 0.0), -gravity)
        for t in range(n_trees):
            tr = row(D.tree, e, t)
            if tr[TREE.inverse_dynamics] != 0:
                j0, nj = tr[TREE.joint0], tr[TREE.n_joints]
                c = get3(D.frame, e, j0, FRAME.position)
                for k in range(nj):  # each link's own force, less what the rows put on it
                    j = j0 + k
                    mass, moment, inertia = link_inertia(D, e, j, c)
                    acc = (link_spatial_velocity(D, e, j, c, False) - getn(D.frame, e, j, FRAME.velocity, 6)) / dt
                    acc += a0 + getn(D.frame, e, j, FRAME.bias, 6)
                    putn(D.link_dyn, e, j, LINK_DYN.transmitted, link_force(D, e, j, mass, moment, inertia, acc)
                         - getn(D.link_dyn, e, j, LINK_DYN.transmitted, 6) / dt)
                for kk in range(nj):  # leaves first: a joint passes on its whole subtree's force
                    j = j0 + nj - 1 - kk
                    p = get(D.joint_i, e, j, JOINT_I.parent)
                    f = getn(D.link_dyn, e, j, LINK_DYN.transmitted, 6)
                    if p >= 0:
                        putn(D.link_dyn, e, p, LINK_DYN.transmitted, getn(D.link_dyn, e, p, LINK_DYN.transmitted, 6) + f)
                for k in range(nj):  # moments about each joint's anchor
                    j = j0 + k
                    f = getn(D.link_dyn, e, j, LINK_DYN.transmitted, 6)
                    force = vec3(f[3], f[4], f[5])
                    m = vec3(f[0], f[1], f[2]) + (c - get3(D.frame, e, j, FRAME.anchor)).cross(force)
                    putn(D.link_dyn, e, j, LINK_DYN.transmitted, spatial(m, force))
