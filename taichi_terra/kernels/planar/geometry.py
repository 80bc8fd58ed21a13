"""Planar contact geometry: world-frame pieces, the separating axis test between two convex pieces, and the
deepest overlap between two objects.

Every function takes the world's arrays as ``D`` (``arrays.PlanarData``, built by the kernel); the ones used here
(see ``taichi_terra/planar/model.py``):

* ``D.piece_i`` row ``p`` = (kind, first vertex, vertex count, object); kind 0 circle, 1 polygon, 2 segment.
* ``D.lv`` row ``v`` = body-frame (x, y, nx, ny): a vertex and the outward normal of the edge that starts there; a
  circle's single entry is (cx, cy, radius, 0).
* ``D.wv[e, v]``: the same in the world frame for env ``e``, refreshed whenever the object moves.
* ``D.obj_i`` row ``k`` = (kind, kinematics, first piece, end piece, grid map index or -1).
* ``D.map_i`` row ``m`` = (buckets along x, buckets along y, first bucket offset), ``D.map_f`` row ``m`` = (x0, y0,
  bucket side) [m]; ``D.bucket_off`` / ``D.bucket_item`` list the boundary pieces meeting each bucket.
"""
import taichi as ti

from ..common.schema import get, row
from .arrays import (
    EPS,
    FEATURE_TOL,
    MAP_F,
    MAP_I,
    OF_BOUND,
    OF_COMX,
    OF_COMY,
    OI_MAP,
    OI_P0,
    OI_P1,
    PIECE_I,
    POSE_HEADING,
    POSE_X,
    POSE_Y,
)

vec2 = ti.math.vec2


@ti.func
def rot(c, s, x, y):
    return vec2(c * x - s * y, s * x + c * y)


@ti.func
def refresh_object(D: ti.template(), e, k):
    """World coordinates of every piece of object ``k`` in env ``e`` from its pose (x, y, heading)."""
    q = D.pose[e, k]
    c, s = ti.cos(q[POSE_HEADING]), ti.sin(q[POSE_HEADING])
    for p in range(row(D.obj_i, 0, k)[OI_P0], row(D.obj_i, 0, k)[OI_P1]):
        info = row(D.piece_i, 0, p)
        for v in range(info[PIECE_I.vertex0], info[PIECE_I.vertex0] + info[PIECE_I.n_vertices]):
            loc = row(D.lv, 0, v)
            xy = vec2(q[POSE_X], q[POSE_Y]) + rot(c, s, loc[0], loc[1])
            if info[PIECE_I.kind] == 0:
                D.wv[e, v] = ti.Vector([xy[0], xy[1], loc[2], 0.0])
            else:
                n = rot(c, s, loc[2], loc[3])
                D.wv[e, v] = ti.Vector([xy[0], xy[1], n[0], n[1]])


@ti.func
def com_of(D: ti.template(), e, k):
    """World position of object ``k``'s centre of mass [m]."""
    q = D.pose[e, k]
    f = row(D.obj_f, 0, k)
    return vec2(q[POSE_X], q[POSE_Y]) + rot(ti.cos(q[POSE_HEADING]), ti.sin(q[POSE_HEADING]), f[OF_COMX], f[OF_COMY])


@ti.func
def n_axes(D: ti.template(), e, p, other):
    """How many candidate separating axes piece ``p`` offers against ``other``."""
    kind = row(D.piece_i, 0, p)[PIECE_I.kind]
    n = 1
    if kind == 1:
        n = row(D.piece_i, 0, p)[PIECE_I.n_vertices]
    return n


@ti.func
def axis_of(D: ti.template(), e, p, other, j):
    """Candidate axis ``j`` of piece ``p`` against ``other``: an edge normal, or for a circle the direction from
    the other piece's closest vertex (or centre) to the circle's centre. Returns (axis, valid)."""
    info = row(D.piece_i, 0, p)
    axis = vec2(0.0, 0.0)
    ok = 1
    if info[PIECE_I.kind] != 0:
        w = D.wv[e, info[PIECE_I.vertex0] + j]
        axis = vec2(w[2], w[3])
    else:
        centre = vec2(D.wv[e, info[PIECE_I.vertex0]][0], D.wv[e, info[PIECE_I.vertex0]][1])
        o = row(D.piece_i, 0, other)
        best = 1e30
        closest = centre
        for v in range(o[PIECE_I.vertex0], o[PIECE_I.vertex0] + o[PIECE_I.n_vertices]):
            pt = vec2(D.wv[e, v][0], D.wv[e, v][1])
            d = (pt - centre).norm()
            if d < best:
                best, closest = d, pt
        d = centre - closest
        length = d.norm()
        if length <= EPS:
            ok = 0
        else:
            axis = d / length
    return axis, ok


@ti.func
def project(D: ti.template(), e, p, axis):
    """Interval (low, high) of piece ``p`` projected on ``axis``."""
    info = row(D.piece_i, 0, p)
    lo, hi = 1e30, -1e30
    if info[PIECE_I.kind] == 0:
        w = D.wv[e, info[PIECE_I.vertex0]]
        m = w[0] * axis[0] + w[1] * axis[1]
        lo, hi = m - w[2], m + w[2]
    else:
        for v in range(info[PIECE_I.vertex0], info[PIECE_I.vertex0] + info[PIECE_I.n_vertices]):
            m = D.wv[e, v][0] * axis[0] + D.wv[e, v][1] * axis[1]
            lo = ti.min(lo, m)
            hi = ti.max(hi, m)
    return lo, hi


@ti.func
def support_extent(D: ti.template(), e, p, normal, sign, tangent):
    """The extreme feature of piece ``p`` along ``sign * normal``: its coordinate along ``normal`` and its
    extent (low, high) along ``tangent``. Vertices within FEATURE_TOL of the extreme form one feature."""
    info = row(D.piece_i, 0, p)
    along = 0.0
    t_lo, t_hi = 0.0, 0.0
    if info[PIECE_I.kind] == 0:
        w = D.wv[e, info[PIECE_I.vertex0]]
        along = w[0] * normal[0] + w[1] * normal[1] + sign * w[2]
        t_lo = w[0] * tangent[0] + w[1] * tangent[1]
        t_hi = t_lo
    else:
        extreme = -1e30
        for v in range(info[PIECE_I.vertex0], info[PIECE_I.vertex0] + info[PIECE_I.n_vertices]):
            extreme = ti.max(extreme, sign * (D.wv[e, v][0] * normal[0] + D.wv[e, v][1] * normal[1]))
        t_lo, t_hi = 1e30, -1e30
        for v in range(info[PIECE_I.vertex0], info[PIECE_I.vertex0] + info[PIECE_I.n_vertices]):
            if sign * (D.wv[e, v][0] * normal[0] + D.wv[e, v][1] * normal[1]) >= extreme - FEATURE_TOL:
                t = D.wv[e, v][0] * tangent[0] + D.wv[e, v][1] * tangent[1]
                t_lo = ti.min(t_lo, t)
                t_hi = ti.max(t_hi, t)
        along = sign * extreme
    return along, t_lo, t_hi


@ti.func
def piece_mtv(D: ti.template(), e, pa, pb, tol):
    """Minimum translation separating convex piece ``pa`` from ``pb`` (separating axis theorem).

    Returns (found, normal, depth, point): the unit ``normal`` points from ``pb`` toward ``pa``; moving ``pa``
    by ``normal * depth`` separates them; ``point`` lies midway through the overlap. Pieces up to ``tol`` apart
    still count, with a negative depth."""
    found = 0
    normal = vec2(1.0, 0.0)
    depth = 0.0
    point = vec2(0.0, 0.0)
    ia, ib = row(D.piece_i, 0, pa), row(D.piece_i, 0, pb)
    if ia[PIECE_I.kind] == 0 and ib[PIECE_I.kind] == 0:
        wa, wb = D.wv[e, ia[PIECE_I.vertex0]], D.wv[e, ib[PIECE_I.vertex0]]
        off = vec2(wa[0] - wb[0], wa[1] - wb[1])
        dist = off.norm()
        depth = wa[2] + wb[2] - dist
        if depth >= -tol:
            found = 1
            if dist > EPS:
                normal = off / dist
            point = vec2(wb[0], wb[1]) + normal * (wb[2] - 0.5 * depth)
    else:
        na = n_axes(D, e, pa, pb)
        nb = n_axes(D, e, pb, pa)
        best = 1e30
        separated = 0
        any_axis = 0
        for j in range(na + nb):
            axis, ok = vec2(0.0, 0.0), 0
            if j < na:
                axis, ok = axis_of(D, e, pa, pb, j)
            else:
                axis, ok = axis_of(D, e, pb, pa, j - na)
            if ok and not separated:
                any_axis = 1
                lo_a, hi_a = project(D, e, pa, axis)
                lo_b, hi_b = project(D, e, pb, axis)
                push_down = hi_a - lo_b  # a travels along -axis to clear b
                push_up = hi_b - lo_a  # a travels along +axis
                if push_down < -tol or push_up < -tol:
                    separated = 1
                else:
                    d = ti.min(push_down, push_up)
                    if d < best:
                        best = d
                        normal = axis if push_up <= push_down else -axis
        if any_axis and not separated:
            found = 1
            depth = best
            tangent = vec2(-normal[1], normal[0])
            low_a, ta0, ta1 = support_extent(D, e, pa, normal, -1.0, tangent)
            high_b, tb0, tb1 = support_extent(D, e, pb, normal, 1.0, tangent)
            t_low, t_high = ti.max(ta0, tb0), ti.min(ta1, tb1)
            t_mid = 0.25 * (ta0 + ta1 + tb0 + tb1)  # features apart along the tangent: split the difference
            if t_low <= t_high:
                t_mid = 0.5 * (t_low + t_high)
            point = normal * (0.5 * (low_a + high_b)) + tangent * t_mid
    return found, normal, depth, point


@ti.func
def object_mtv(D: ti.template(), e, a, b, tol):
    """Deepest overlap between objects ``a`` and ``b`` over all pairs of their convex pieces (the first of equal
    depths wins). A grid map offers only the boundary pieces in the buckets around the other object's bounding
    box. Returns (found, normal from b toward a, depth, point)."""
    x, y = a, b  # x: iterated directly; y: iterated through its buckets when it is a map
    if row(D.obj_i, 0, a)[OI_MAP] >= 0:
        x, y = b, a
    found = 0
    normal, depth, point = vec2(1.0, 0.0), -1e30, vec2(0.0, 0.0)
    m = row(D.obj_i, 0, y)[OI_MAP]
    # buckets of y to visit: a map's buckets around x's bounding box, or one pseudo-bucket of all y's pieces
    bx0, bx1, by0, by1, nby = 0, 1, 0, 1, 1
    if m >= 0:
        c = com_of(D, e, x)
        r = row(D.obj_f, 0, x)[OF_BOUND] + 1e-3
        mf, mi = row(D.map_f, 0, m), row(D.map_i, 0, m)
        bx0 = ti.max(ti.cast(ti.floor((c[0] - r - mf[MAP_F.origin]) / mf[MAP_F.cell]), ti.i32), 0)
        bx1 = ti.min(ti.cast(ti.floor((c[0] + r - mf[MAP_F.origin]) / mf[MAP_F.cell]), ti.i32), mi[MAP_I.nx] - 1) + 1
        by0 = ti.max(ti.cast(ti.floor((c[1] - r - mf[MAP_F.origin + 1]) / mf[MAP_F.cell]), ti.i32), 0)
        by1 = ti.min(ti.cast(ti.floor((c[1] + r - mf[MAP_F.origin + 1]) / mf[MAP_F.cell]), ti.i32),
                     mi[MAP_I.ny] - 1) + 1
        nby = mi[MAP_I.ny]
    for px in range(row(D.obj_i, 0, x)[OI_P0], row(D.obj_i, 0, x)[OI_P1]):
        for bx in range(bx0, bx1):
            for by in range(by0, by1):
                q0, q1 = row(D.obj_i, 0, y)[OI_P0], row(D.obj_i, 0, y)[OI_P1]
                if m >= 0:
                    slot = row(D.map_i, 0, m)[MAP_I.bucket0] + bx * nby + by
                    q0, q1 = get(D.bucket_off, 0, slot, 0), get(D.bucket_off, 0, slot + 1, 0)
                for q in range(q0, q1):
                    py = q
                    if m >= 0:
                        py = get(D.bucket_item, 0, q, 0)
                    pa, pb = px, py
                    if x != a:
                        pa, pb = py, px
                    f, n, d, pt = piece_mtv(D, e, pa, pb, tol)
                    if f and d > depth:
                        found, normal, depth, point = 1, n, d, pt
    return found, normal, depth, point
