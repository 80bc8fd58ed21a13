"""The row seam: what a solver row sees of each of its two sides.

Each side of a row is a link (``-1``: static geometry) with its range of generalized velocities in ``u``.
A row at a world point reads the point's velocity on each side and applies an impulse there, through the
link's response ``M^-1 J^T`` in link-space form (``reference/solver_math.md``, "Cheap responses for many
points on few links"): a point at offset ``r`` from the link's centre of mass maps an impulse ``p`` to the
link's spatial velocity change ``(p / m, I_w^-1 (r x p))`` for a free body, a one-link tree whose 6 x 6
response is its inverse mass and world inverse inertia. The sweep only talks to links through the
functions here (``row_offsets``, ``relative_velocity``, ``apply_impulse``, ``row_response``), by link index,
so a link of an articulated tree plugs in by giving its own ``link_point_velocity``, ``link_push`` and
``link_response``, with no change to the sweep.
"""
import taichi as ti

from ..collision.heightmap import hm_pose
from ..collision.shapes import footprint_width
from ..common.arrays import BODY_F, BODY_I, LINK, body_params
from ..common.math import skew, vec3
from ..common.schema import get, get33, row
from ..dynamics.free_body import add_link_velocity, link_rotation, link_velocity

mat3 = ti.math.mat3


@ti.func
def link_offset(D: ti.template(), e, link, point):
    """Offset [m] of the world ``point`` from the centre of mass of ``link`` (zero for static geometry)."""
    r = vec3(0.0, 0.0, 0.0)
    if link >= 0:
        q0 = get(D.body_i, e, link, BODY_I.q0)
        r = point - vec3(D.q[e, q0], D.q[e, q0 + 1], D.q[e, q0 + 2])
    return r


@ti.func
def link_point_velocity(D: ti.template(), e, link, r):
    """World velocity [m/s] of the point at offset ``r`` on ``link`` (``link >= 0``)."""
    v, w = link_velocity(D.u, e, get(D.body_i, e, link, BODY_I.u0))
    return v + w.cross(r)


@ti.func
def link_push(D: ti.template(), e, link, r, imp, sign):
    """``u += sign M^-1 J^T imp`` for an impulse ``imp`` [N s] at offset ``r`` on ``link``: the link-space
    response of a free body, ``(imp / m, I_w^-1 (r x imp))``."""
    inv_m = 1.0 / get(D.body_f, e, link, BODY_F.mass)
    inv_iw = get33(D.link, e, link, LINK.inv_inertia)
    dv, dw = inv_m * imp, inv_iw @ r.cross(imp)
    if sign < 0:
        dv, dw = -dv, -dw
    add_link_velocity(D.u, e, get(D.body_i, e, link, BODY_I.u0), dv, dw)


@ti.func
def link_response(D: ti.template(), e, link, r):
    """``J M^-1 J^T`` (3x3, world) of the point at offset ``r`` on ``link``: the velocity change of the point
    per unit impulse there."""
    inv_m = 1.0 / get(D.body_f, e, link, BODY_F.mass)
    inv_iw = get33(D.link, e, link, LINK.inv_inertia)
    sr = skew(r)
    return inv_m * ti.Matrix.identity(float, 3) - sr @ inv_iw @ sr


@ti.func
def row_offsets(D: ti.template(), e, a, b, point):
    """Offsets [m] of a row's world ``point`` from the centres of mass of its sides ``a`` (``-1``: static) and
    ``b``."""
    return link_offset(D, e, a, point), link_offset(D, e, b, point)


@ti.func
def relative_velocity(D: ti.template(), e, a, b, ra, rb):
    """Velocity [m/s] of the row's point on side b minus side a (``a < 0``: static geometry)."""
    vrel = link_point_velocity(D, e, b, rb)
    if a >= 0:
        vrel -= link_point_velocity(D, e, a, ra)
    return vrel


@ti.func
def apply_impulse(D: ti.template(), e, a, b, ra, rb, imp):
    """``u += M^-1 J^T imp``: +imp on side b, -imp on side a, at the row's point [N s]."""
    link_push(D, e, b, rb, imp, 1)
    if a >= 0:
        link_push(D, e, a, ra, imp, -1)


@ti.func
def row_response(D: ti.template(), e, a, b, ra, rb):
    """The row's ``J M^-1 J^T`` (3x3, world): both sides' point responses summed."""
    kmat = link_response(D, e, b, rb)
    if a >= 0:
        kmat += link_response(D, e, a, ra)
    return kmat


@ti.func
def soil_footprint_width(D: ti.template(), e, b, m):
    """Effective width b [m] of body ``b``'s footprint on soil bed ``m`` (across its motion; it turns
    with the body)."""
    bd = row(D.body_i, e, b)
    _o, rmap = hm_pose(D, m)
    r_l = rmap.transpose() @ link_rotation(D.q, e, bd[BODY_I.q0])
    return footprint_width(bd[BODY_I.shape], body_params(row(D.body_f, e, b)), r_l, D.point, bd[BODY_I.point0],
                           bd[BODY_I.n_points])
