"""Belt rows: a contact on a track's belt moves and pushes the belt's drive joints too.

A track (``bodies/tracks.py``, ``spec/tracks.md``) is a rigid belt around wheels of one tree link; its
collision bodies are shapes of that link (``BODY_I.track``). The belt's surface runs at the belt speed
``s = g^T u`` (``g``: the drives' gains, nonzero at the drive joints' dofs) in the direction
``t = a x n`` (``a`` the track axis, ``n`` the belt's outward normal at the point): along a straight run,
the run's direction (a box body's x axis); around a wheel, the rim's tangent (a cylinder body's axis
crossed with the radial direction). A contact's Jacobian on a belt side is therefore

    J = J_link + t g^T,

so a world impulse ``p`` on the belt changes the velocities by ``M~^-1 J_link^T p + (t . p) M~^-1 g``
and the point's velocity is the link's plus ``s t``. The belt is massless: its only inertia is that of
the drives. ``M~^-1 g`` is a combination of the drives' rows of ``M~^-1`` (``TREE_INVERSE``; computed once
per step for a track that has contacts, :func:`belt_columns`), so a push costs ``nv`` multiply-adds per
drive and the row's Delassus block gains

    A^T beta t^T + t beta^T A + gamma t t^T,   beta = J_link M~^-1 g,  gamma = g^T M~^-1 g

(``A`` maps a point impulse to the link's spatial impulse; ``beta`` is the link's response columns ``B``
read at the drive dofs).

Contacts with static geometry act at the belt's mid-plane (the plane of its wheel centres), wherever
across the width they touch: the belt carries its load to the wheels, and is flexible across its width.
Contacts of one belt with the same static geometry at one place of its mid-plane (within 1 % of the belt's
width) and with one normal are one contact: the deepest carries the impulse, the others become
``ROW_MERGED`` rows that take none (:func:`merge_coincident`).
"""
import taichi as ti

from ..common.arrays import (
    BODY_I,
    CONTACT,
    JOINT_I,
    LINK_DYN,
    LINK_RESPONSE,
    PAIR,
    ROW_F,
    ROW_I,
    SETTINGS_I,
    TRACK_DRIVES,
    TRACK_DYN,
    TRACK_F,
    TRACK_I,
    TREE,
    TREE_INVERSE,
    TREE_STEP,
)
from ..common.layout import BOX, ROW_CONTACT, ROW_MERGED
from ..common.math import vec3
from ..common.schema import add, get, get3, getn, put, putn, row
from ..dynamics.bodies import body_pose
from ..dynamics.tree_solve import tree_inverse_columns

vec6 = ti.types.vector(6, float)
mat3 = ti.math.mat3

#: contacts of one belt closer than this fraction of its width are one contact
COINCIDENT = 0.01
#: normals whose dot product is at least this are the same
SAME_NORMAL = 1.0 - 1e-9


@ti.func
def body_track(D: ti.template(), e, b):
    """The track whose belt body ``b`` is part of; -1 for static geometry (``b < 0``) and other bodies."""
    k = -1
    if b >= 0:
        k = get(D.body_i, e, b, BODY_I.track)
    return k


@ti.func
def belt_frame(D: ti.template(), e, b, point):
    """At the world ``point`` on belt body ``b``: the direction ``t`` [unit, world] its surface runs for a
    positive belt speed, the track axis and a point of the belt's mid-plane [m] (the body's shape frame
    origin: every belt body is centred on the plane of the wheel centres)."""
    pos, rot = body_pose(D, e, b)
    axis = vec3(rot[0, 2], rot[1, 2], rot[2, 2])  # a wheel's cylinder: its axis along the track axis
    t = vec3(0.0, 0.0, 0.0)
    if get(D.body_i, e, b, BODY_I.shape) == BOX:  # a straight run: x along the run, y the axis, z outwards
        axis = vec3(rot[0, 1], rot[1, 1], rot[2, 1])
        t = vec3(rot[0, 0], rot[1, 0], rot[2, 0])
    else:  # around the wheel: the rim's direction, axis x radial
        d = point - pos
        d -= d.dot(axis) * axis
        length = d.norm()
        if length > 0.0:
            t = axis.cross(d / length)
    return t, axis, pos


@ti.func
def contact_belt_direction(t, axis, outward):
    """The belt direction at a contact whose normal points out of the belt along ``outward`` [unit, world],
    given the direction ``t`` its surface runs at the contact point and the track ``axis``: ``a x n`` with
    ``n`` the belt's outward normal there, which at a contact is the contact normal, taken in the belt's
    plane. The belt's surface then slides along the contact's tangent plane and never into the other side
    (a wheel's contact point sampled below its centre on a slope would otherwise run the belt into the
    ground at the belt speed times the slope's angle). Where the normal lies nearer the axis than the
    plane (a contact on the belt's side), ``t`` with its normal part removed."""
    n_plane = outward - outward.dot(axis) * axis
    along = ti.abs(outward.dot(axis))
    out = t
    if n_plane.norm() > along:
        out = axis.cross(n_plane.normalized())
        if out.dot(t) < 0.0:  # (t's sense: the belt's running sense at this point)
            out = -out
    else:
        out = t - t.dot(outward) * outward
        length = out.norm()
        if length > 0.0:
            out /= length
    return out


@ti.func
def belt_sides(D: ti.template(), e, r, a, b, point, normal, rigid):
    """Row ``r``'s belts, for a contact at the world ``point`` with the world ``normal`` (from ``a`` to ``b``)
    between bodies ``a`` (-1: static) and ``b``: each side's track (``ROW_I.belt_a``, ``belt_b``; -1: no
    belt) and belt direction (``ROW_F``; for a ``rigid`` contact tangent to it,
    :func:`contact_belt_direction`; a soil point, whose normal is the bed's vertical, takes the rim's
    direction at the point as it is: the belt on a wheel's front arc runs down into the rut), each track's
    columns made ready. Returns the point at which side b takes the contact: on its belt's mid-plane where
    side a is static geometry, else ``point``."""
    kb = body_track(D, e, b)
    ka = body_track(D, e, a)
    put(D.row_i, e, r, ROW_I.belt_a, ka)
    put(D.row_i, e, r, ROW_I.belt_b, kb)
    at_b = point
    if kb >= 0:
        t, axis, mid = belt_frame(D, e, b, point)
        if rigid:
            t = contact_belt_direction(t, axis, -normal)
        putn(D.row_f, e, r, ROW_F.belt_b, t)
        belt_columns(D, e, kb)
        if a < 0:
            at_b = point - (point - mid).dot(axis) * axis
    if ka >= 0:
        t, axis, _mid = belt_frame(D, e, a, point)
        if rigid:
            t = contact_belt_direction(t, axis, normal)
        putn(D.row_f, e, r, ROW_F.belt_a, t)
        belt_columns(D, e, ka)
    return at_b


@ti.func
def belt_speed(D: ti.template(), e, k):
    """Belt speed ``s = g^T u`` [m/s] of track ``k``."""
    tr = row(D.track_i, e, k)
    u0 = get(D.tree, e, tr[TRACK_I.tree], TREE.u0)
    s = 0.0
    for a in ti.static(range(TRACK_DRIVES)):  # (gains past the drives are 0)
        s += get(D.track_f, e, k, TRACK_F.gain + a) * get(D.u_tree, e, u0 + tr[TRACK_I.dof + a], 0)
    return s


@ti.func
def _drive_dofs(D: ti.template(), e, k):
    return ti.Vector([get(D.track_i, e, k, TRACK_I.dof + a) for a in ti.static(range(TRACK_DRIVES))])


@ti.func
def _gains(D: ti.template(), e, k):
    return ti.Vector([get(D.track_f, e, k, TRACK_F.gain + a) for a in ti.static(range(TRACK_DRIVES))])


@ti.func
def forget_belts(D: ti.template(), e):
    """No track of env ``e`` has its columns for this step yet (before the rows are built)."""
    for k in range(get(D.settings_i, e, 0, SETTINGS_I.n_tracks)):
        put(D.track_dyn, e, k, TRACK_DYN.ready, 0.0)


@ti.func
def belt_columns(D: ti.template(), e, k):
    """Make sure track ``k`` has the drives' rows of ``M~^-1`` (``TREE_INVERSE``) and ``gamma = g^T M~^-1 g``
    for this step's factor (its tree factored this step): one four-column solve the first time in a step,
    none where the factor came with all of ``M~^-1``."""
    if get(D.track_dyn, e, k, TRACK_DYN.ready) == 0.0:
        t = get(D.track_i, e, k, TRACK_I.tree)
        dofs = _drive_dofs(D, e, k)
        g = _gains(D, e, k)
        if get(D.tree_step, e, t, TREE_STEP.inverse) == 0:
            tree_inverse_columns(D, e, t, dofs)
        nv, m0 = get(D.tree, e, t, TREE.nv), get(D.tree, e, t, TREE.matrix0)
        gamma = 0.0
        for a in ti.static(range(TRACK_DRIVES)):
            for c in ti.static(range(TRACK_DRIVES)):
                gamma += g[a] * g[c] * get(D.tree_inverse, e, m0 + dofs[a] * nv + dofs[c], TREE_INVERSE.inverse)
        put(D.track_dyn, e, k, TRACK_DYN.gamma, gamma)
        put(D.track_dyn, e, k, TRACK_DYN.ready, 1.0)


@ti.func
def refresh_belts(D: ti.template(), e):
    """After the free velocities: the tracks whose tree was factored again there (a drive held at its
    effort limit; its links' responses were dropped) take their columns again."""
    for k in range(get(D.settings_i, e, 0, SETTINGS_I.n_tracks)):
        if get(D.track_dyn, e, k, TRACK_DYN.ready) != 0.0:
            if get(D.link_dyn, e, get(D.track_i, e, k, TRACK_I.joint), LINK_DYN.ready) == 0.0:
                put(D.track_dyn, e, k, TRACK_DYN.ready, 0.0)
                belt_columns(D, e, k)


@ti.func
def belt_push(D: ti.template(), e, k, amount):
    """``u += amount M~^-1 g`` for track ``k``'s drives: the velocity change of a belt impulse ``amount``
    [N s] along the belt's direction (:func:`belt_columns` done this step)."""
    t = get(D.track_i, e, k, TRACK_I.tree)
    tr = row(D.tree, e, t)
    nv, m0, u0 = tr[TREE.nv], tr[TREE.matrix0], tr[TREE.u0]
    dofs = _drive_dofs(D, e, k)
    g = _gains(D, e, k) * amount
    for i in range(nv):
        acc = 0.0
        for a in ti.static(range(TRACK_DRIVES)):
            acc += g[a] * get(D.tree_inverse, e, m0 + dofs[a] * nv + i, TREE_INVERSE.inverse)
        add(D.u_tree, e, u0 + i, 0, acc)


@ti.func
def belt_point_cross(D: ti.template(), e, k, j, r, t):
    """``(A^T B^T g) t^T`` (3x3, world): the velocity change of the point at offset ``r`` [m] on the link of
    joint row ``j`` (a link of track ``k``'s tree, its responses ready) per unit impulse that track ``k``'s
    belt takes along ``t``, times ``t^T``."""
    r0 = get(D.joint_i, e, j, JOINT_I.response0)
    dofs = _drive_dofs(D, e, k)
    g = _gains(D, e, k)
    beta = vec6(0.0)
    for a in ti.static(range(TRACK_DRIVES)):
        beta += g[a] * getn(D.link_response, e, r0 + dofs[a], LINK_RESPONSE.column, 6)
    at_beta = vec3(beta[3], beta[4], beta[5]) - r.cross(vec3(beta[0], beta[1], beta[2]))
    return at_beta.outer_product(t)


@ti.func
def belt_response(D: ti.template(), e, k, j, r, t):
    """What the belt adds to the 3x3 point response ``J M~^-1 J^T`` of a contact at offset ``r`` [m] from the
    tree's reference point on the link of joint row ``j`` (track ``k``'s link, responses ready), belt
    direction ``t``: ``A^T beta t^T + t beta^T A + gamma t t^T``."""
    cross = belt_point_cross(D, e, k, j, r, t)
    return cross + cross.transpose() + get(D.track_dyn, e, k, TRACK_DYN.gamma) * t.outer_product(t)


@ti.func
def belt_coupling(D: ti.template(), e, ka, kb):
    """``g_a^T M~^-1 g_b`` [1/kg]: belt ``ka``'s speed change per unit impulse on belt ``kb`` (two tracks of
    one tree, both with their columns this step)."""
    t = get(D.track_i, e, kb, TRACK_I.tree)
    nv, m0 = get(D.tree, e, t, TREE.nv), get(D.tree, e, t, TREE.matrix0)
    da, db = _drive_dofs(D, e, ka), _drive_dofs(D, e, kb)
    ga, gb = _gains(D, e, ka), _gains(D, e, kb)
    out = 0.0
    for a in ti.static(range(TRACK_DRIVES)):
        for c in ti.static(range(TRACK_DRIVES)):
            out += ga[a] * gb[c] * get(D.tree_inverse, e, m0 + db[c] * nv + da[a], TREE_INVERSE.inverse)
    return out


@ti.func
def belt_velocity(D: ti.template(), e, r):
    """The belts' part of row ``r``'s relative velocity (side b's less side a's) [m/s]: ``s t`` per belt
    side."""
    out = vec3(0.0, 0.0, 0.0)
    kb = get(D.row_i, e, r, ROW_I.belt_b)
    if kb >= 0:
        out += belt_speed(D, e, kb) * get3(D.row_f, e, r, ROW_F.belt_b)
    ka = get(D.row_i, e, r, ROW_I.belt_a)
    if ka >= 0:
        out -= belt_speed(D, e, ka) * get3(D.row_f, e, r, ROW_F.belt_a)
    return out


@ti.func
def belt_impulse(D: ti.template(), e, r, imp):
    """The belts' part of row ``r``'s push of the world impulse ``imp`` [N s] (+imp on side b, -imp on side
    a): ``(t . imp) M~^-1 g`` per belt side."""
    kb = get(D.row_i, e, r, ROW_I.belt_b)
    if kb >= 0:
        belt_push(D, e, kb, get3(D.row_f, e, r, ROW_F.belt_b).dot(imp))
    ka = get(D.row_i, e, r, ROW_I.belt_a)
    if ka >= 0:
        belt_push(D, e, ka, -get3(D.row_f, e, r, ROW_F.belt_a).dot(imp))


@ti.func
def merge_coincident(D: ti.template(), e, r):
    """Row ``r``, a contact of a belt (side b) with static geometry, against the earlier rows of the same
    belt with the same static geometry (a track's bodies are consecutive, so are their static pairs' rows):
    where one acts within ``COINCIDENT`` of the belt's width of it and has the same normal, the shallower of
    the two becomes ``ROW_MERGED``. Contacts with static geometry act at the belt's mid-plane (module
    docstring), so two across the width at one place along the belt are one: the deeper one's constraint
    holds the other's (its normal target is the higher), and their friction acts at one point. The points
    compared are the rows' ``offset_b`` (the mid-plane point, from the reference of the belt's tree)."""
    k = get(D.row_i, e, r, ROW_I.belt_b)
    s = get(D.row_i, e, r, ROW_I.slot)
    p = get(D.row_i, e, r, ROW_I.pair)
    kind, other = get(D.pair, e, p, PAIR.kind), get(D.pair, e, p, PAIR.other)
    reach = COINCIDENT * get(D.track_f, e, k, TRACK_F.width)
    pos, n = get3(D.row_f, e, r, ROW_F.offset_b), get3(D.contact, e, s, CONTACT.normal)
    rr = r - 1
    going = rr >= 0
    while going:
        ri = row(D.row_i, e, rr)
        if ri[ROW_I.belt_b] != k or ri[ROW_I.side_a] >= 0:
            going = False
        else:
            if ri[ROW_I.kind] == ROW_CONTACT:
                p2 = ri[ROW_I.pair]
                s2 = ri[ROW_I.slot]
                if get(D.pair, e, p2, PAIR.kind) == kind and get(D.pair, e, p2, PAIR.other) == other:
                    if (get3(D.row_f, e, rr, ROW_F.offset_b) - pos).norm() <= reach and \
                            get3(D.contact, e, s2, CONTACT.normal).dot(n) >= SAME_NORMAL:
                        if get(D.contact, e, s, CONTACT.depth) > get(D.contact, e, s2, CONTACT.depth):
                            put(D.row_i, e, rr, ROW_I.kind, ROW_MERGED)
                        else:
                            put(D.row_i, e, r, ROW_I.kind, ROW_MERGED)
                        going = False
            rr -= 1
            if rr < 0:
                going = False
