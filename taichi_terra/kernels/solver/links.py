"""The row seam: what a solver row sees of each of its two sides.

Each side of a row is a link (``-1``: static geometry) with its range of generalized velocities in ``u``.
A row at a world point reads the point's velocity on each side and applies an impulse there, through the
link's response ``M^-1 J^T``. A free body, a one-link tree, uses the link-space form
(``reference/solver_math.md``, "Cheap responses for many points on few links"): a point at offset ``r``
from its centre of mass maps an impulse ``p`` to the spatial velocity change ``(p / m, I_w^-1 (r x p))``.
A shape on a link of an articulated tree (``BODY_I.joint`` >= 0) maps ``p`` at offset ``r`` from the tree's
reference point to the spatial impulse ``(r x p, p)`` and through the link's response columns
``B = M~^-1 J^T`` (nv x 6, one six-column solve with the tree's factor the first time a row touches the
link in a step) to ``du``: 6 nv operations per push; the point's response is ``A^T Phi A`` with the link's spatial
response ``Phi = J B``. The first row on a link in a step also gets ``B A`` for its own point (nv x 3, the
link's point columns), so its pushes cost 3 nv operations; the contact block (``block.py``) is made of such
rows. The sweep only talks to links through the functions here (``row_offsets``, ``relative_velocity``,
``apply_impulse``, ``row_response``), by body index, so both kinds (and the next ones) share it unchanged.
"""
import taichi as ti

from ..collision.heightmap import hm_pose
from ..collision.shapes import footprint_width
from ..belts.rows import belt_coupling, belt_impulse, belt_point_cross, belt_response, belt_velocity
from ..common.arrays import BODY_I, JOINT_I, LINK, ROW_F, ROW_I, body_params
from ..common.math import skew, vec3
from ..common.schema import get, get3, get33, row
from ..dynamics.bodies import (
    body_pose,
    push_link,
    carrier_joint,
    claim_link_point,
    link_cross_phi,
    link_phi,
    link_responses,
    link_spatial_velocity,
    point_map,
    push_link_point,
    tree_reference,
)
from ..dynamics.free_body import add_link_velocity, link_velocity

mat3 = ti.math.mat3
vec6 = ti.types.vector(6, float)


@ti.func
def link_offset(D: ti.template(), e, link, point):
    """Offset [m] of the world ``point`` from the reference of ``link`` (zero for static geometry): a free
    body's centre of mass, a tree link's tree reference point (its root's origin)."""
    r = vec3(0.0, 0.0, 0.0)
    if link >= 0:
        j = carrier_joint(D, e, link)
        if j < 0:
            q0 = get(D.body_i, e, link, BODY_I.q0)
            r = point - vec3(D.q[e, q0], D.q[e, q0 + 1], D.q[e, q0 + 2])
        elif ti.static(D.trees):
            r = point - tree_reference(D, e, j)
    return r


@ti.func
def link_point_velocity(D: ti.template(), e, link, r):
    """World velocity [m/s] of the point at offset ``r`` on ``link`` (``link >= 0``)."""
    out = vec3(0.0, 0.0, 0.0)
    j = carrier_joint(D, e, link)
    if j < 0:
        v, w = link_velocity(D.u, e, get(D.body_i, e, link, BODY_I.u0))
        out = v + w.cross(r)
    elif ti.static(D.trees):
        vel = link_spatial_velocity(D, e, j, tree_reference(D, e, j), False)
        out = vec3(vel[3], vel[4], vel[5]) + vec3(vel[0], vel[1], vel[2]).cross(r)
    return out


@ti.func
def link_push(D: ti.template(), e, link, r, imp, sign, row_index):
    """``u += sign M^-1 J^T imp`` for an impulse ``imp`` [N s] at offset ``r`` on ``link``: for a free body
    the link-space response ``(imp / m, I_w^-1 (r x imp))``; for a tree link the tree's factored mass
    matrix, through the link's point columns when row ``row_index`` (-1: none) is the link's point row."""
    j = carrier_joint(D, e, link)
    if j < 0:
        inv_m = get(D.link, e, link, LINK.inv_mass)
        inv_iw = get33(D.link, e, link, LINK.inv_inertia)
        dv, dw = inv_m * imp, inv_iw @ r.cross(imp)
        if sign < 0:
            dv, dw = -dv, -dw
        add_link_velocity(D.u, e, get(D.body_i, e, link, BODY_I.u0), dv, dw)
    elif ti.static(D.trees):
        push_link_point(D, e, j, row_index, r, imp, ti.cast(sign, float))


@ti.func
def link_response(D: ti.template(), e, link, r):
    """``J M^-1 J^T`` (3x3, world) of the point at offset ``r`` on ``link``: the velocity change of the point
    per unit impulse there."""
    out = mat3(0.0)
    j = carrier_joint(D, e, link)
    if j < 0:
        inv_m = get(D.link, e, link, LINK.inv_mass)
        inv_iw = get33(D.link, e, link, LINK.inv_inertia)
        sr = skew(r)
        out = inv_m * ti.Matrix.identity(float, 3) - sr @ inv_iw @ sr
    elif ti.static(D.trees):  # A^T Phi A, A mapping a point impulse to a spatial one
        a = point_map(r)
        out = a.transpose() @ link_phi(D, e, j) @ a
    return out


@ti.func
def prepare_sides(D: ti.template(), e, a, b):
    """Make the response columns of the tree links among a row's sides ``a`` and ``b`` ready (a no-op for
    free bodies, static geometry and links already done this step)."""
    if ti.static(D.trees):
        for k in range(2):
            side = a
            if k == 1:
                side = b
            if side >= 0:
                j = carrier_joint(D, e, side)
                if j >= 0:
                    link_responses(D, e, j)


@ti.func
def claim_points(D: ti.template(), e, r, a, b, ra, rb):
    """Row ``r`` (sides ready) becomes the point row of each tree link among its sides that has none yet this
    step (``dynamics/bodies.py``, ``claim_link_point``)."""
    if ti.static(D.trees):
        for k in ti.static(range(2)):
            side = b if k == 0 else a
            if side >= 0:
                j = carrier_joint(D, e, side)
                if j >= 0:
                    claim_link_point(D, e, j, r, rb if k == 0 else ra)


@ti.func
def row_offsets(D: ti.template(), e, a, b, point):
    """Offsets [m] of a row's world ``point`` from the centres of mass of its sides ``a`` (``-1``: static) and
    ``b``."""
    return link_offset(D, e, a, point), link_offset(D, e, b, point)


@ti.func
def relative_velocity(D: ti.template(), e, r, a, b, ra, rb):
    """Velocity [m/s] of contact or soil row ``r``'s point on side b minus side a (``a < 0``: static
    geometry), a belt side's surface speed included (``belts/rows.py``)."""
    vrel = link_point_velocity(D, e, b, rb)
    if a >= 0:
        vrel -= link_point_velocity(D, e, a, ra)
    if ti.static(D.has_belts):
        vrel += belt_velocity(D, e, r)
    return vrel


@ti.func
def apply_impulse(D: ti.template(), e, r, a, b, ra, rb, imp):
    """``u += M^-1 J^T imp``: +imp on side b, -imp on side a, at the point of row ``r`` [N s] (through a belt
    side's drives too)."""
    link_push(D, e, b, rb, imp, 1, r)
    if a >= 0:
        link_push(D, e, a, ra, imp, -1, r)
    if ti.static(D.has_belts):
        belt_impulse(D, e, r, imp)


@ti.func
def row_response(D: ti.template(), e, r, a, b, ra, rb):
    """Row ``r``'s ``J M^-1 J^T`` (3x3, world): both sides' point responses summed (a belt side's with its
    drives: ``belts/rows.py``; its belt columns made ready), less the cross terms when both sides are links
    of one tree (their belts' too)."""
    kmat = link_response(D, e, b, rb)
    if a >= 0:
        kmat += link_response(D, e, a, ra)
        if ti.static(D.trees):  # two links of one tree (self-collision): each side's push moves the other
            ja, jb = carrier_joint(D, e, a), carrier_joint(D, e, b)
            if ja >= 0 and jb >= 0:
                if get(D.joint_i, e, ja, JOINT_I.tree) == get(D.joint_i, e, jb, JOINT_I.tree):
                    cross = point_map(rb).transpose() @ link_cross_phi(D, e, ja, jb) @ point_map(ra)
                    if ti.static(D.has_belts):
                        kb, ka = get(D.row_i, e, r, ROW_I.belt_b), get(D.row_i, e, r, ROW_I.belt_a)
                        tb, ta = get3(D.row_f, e, r, ROW_F.belt_b), get3(D.row_f, e, r, ROW_F.belt_a)
                        if kb >= 0:  # side b's belt pushes side a's point, and the other way round
                            cross += belt_point_cross(D, e, kb, ja, ra, tb).transpose()
                        if ka >= 0:
                            cross += belt_point_cross(D, e, ka, jb, rb, ta)
                        if ka >= 0 and kb >= 0:
                            cross += belt_coupling(D, e, kb, ka) * tb.outer_product(ta)
                    kmat -= cross + cross.transpose()
    if ti.static(D.has_belts):
        for k in ti.static(range(2)):
            side = b if k == 0 else a
            belt = get(D.row_i, e, r, ROW_I.belt_b if k == 0 else ROW_I.belt_a)
            if belt >= 0:
                kmat += belt_response(D, e, belt, carrier_joint(D, e, side), rb if k == 0 else ra,
                                      get3(D.row_f, e, r, ROW_F.belt_b if k == 0 else ROW_F.belt_a))
    if ti.static(D.trees):  # a link's point may have no response along some direction (a planar arm's hinge
        # axis): a relative 1e-9 of the trace keeps such a block invertible, and an impulse along that
        # direction then moves nothing. A block well away from singular (determinant above 1e-6 trace^3: a
        # free-floating link's, a leg's on a floating base) is left exact.
        if carrier_joint(D, e, b) >= 0 or (a >= 0 and carrier_joint(D, e, a) >= 0):
            trace = kmat[0, 0] + kmat[1, 1] + kmat[2, 2]
            if kmat.determinant() <= 1e-6 * trace * trace * trace:
                kmat += 1e-9 * trace * ti.Matrix.identity(float, 3)
    return kmat


@ti.func
def soil_footprint_width(D: ti.template(), e, b, m):
    """Effective width b [m] of body ``b``'s footprint on soil bed ``m`` (across its motion; it turns
    with the body)."""
    bd = row(D.body_i, e, b)
    _o, rmap = hm_pose(D, m)
    _pos, rot = body_pose(D, e, b)
    r_l = rmap.transpose() @ rot
    return footprint_width(bd[BODY_I.shape], body_params(row(D.body_f, e, b)), r_l, D.point, bd[BODY_I.point0],
                           bd[BODY_I.n_points])


@ti.func
def run_link(D: ti.template(), e, r):
    """The joint row of the tree link that row ``r`` may take in a link run: its side b's, when side a is static
    geometry and no belt drives the row; -1 where the row needs the general path."""
    j = -1
    if ti.static(D.trees):
        if get(D.row_i, e, r, ROW_I.side_a) < 0 and get(D.row_i, e, r, ROW_I.belt_b) < 0:
            j = carrier_joint(D, e, get(D.row_i, e, r, ROW_I.side_b))
    return j


@ti.func
def open_link_run(D: ti.template(), e, j):
    """Start a run on the link of joint row ``j``: its spatial velocity (w, v at the tree's reference point)
    from the current ``u``, its spatial response ``Phi`` and a zero spatial impulse."""
    return link_spatial_velocity(D, e, j, tree_reference(D, e, j), False), link_phi(D, e, j), vec6(0.0)


@ti.func
def run_point_velocity(vel, r):
    """World velocity [m/s] of the point at offset ``r`` on a run's link of spatial velocity ``vel``."""
    return vec3(vel[3], vel[4], vel[5]) + vec3(vel[0], vel[1], vel[2]).cross(r)


@ti.func
def spatial_impulse(r, imp):
    """The spatial impulse ``(r x imp, imp)`` (moment about the link's reference point [N m s], impulse [N s])
    of the world impulse ``imp`` at offset ``r`` [m]."""
    m = r.cross(imp)
    return vec6(m[0], m[1], m[2], imp[0], imp[1], imp[2])


@ti.func
def run_push(phi, vel, total, r, imp):
    """A run's row pushes the world impulse ``imp`` [N s] at offset ``r``: the link's spatial velocity moves by
    ``Phi (r x imp, imp)`` and the run's spatial impulse grows by ``(r x imp, imp)``."""
    spatial = spatial_impulse(r, imp)
    return vel + phi @ spatial, total + spatial


@ti.func
def close_link_run(D: ti.template(), e, j, total):
    """End a run: ``u += B total`` for the run's summed spatial impulse on the link of joint row ``j``."""
    push_link(D, e, j, total, 1.0)
