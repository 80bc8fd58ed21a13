"""A body's footprint on a soil bed, and how much of each sample's cell it covers (the quadrature weights of
``reference/solver_math.md``). A box's footprint is the convex hull of its corners projected on the bed plane (a
plate's total area is exact wherever it stands and however it is turned); a cylinder's is the hull of its two
rims' projections, each rim an ellipse drawn as a polygon of the ellipse's own area (a wheel's tread width is
exact, so its load does not jump as it drifts across sample columns).
"""
import math

import taichi as ti

from ..common.arrays import point_at

MAX_HULL = 20  # hull vertices (a box projects to at most 6, a cylinder's two rims to at most 16)
RIM_SIDES = 8  # polygon sides of a cylinder rim's projection (two rims: 16 points)
# the rim polygon's radii are scaled so that its area is the ellipse's: pi = (k/2) sin(2 pi/k) f^2
_RIM_SCALE = math.sqrt(2.0 * math.pi / (RIM_SIDES * math.sin(2.0 * math.pi / RIM_SIDES)))
_RIM_COS = [_RIM_SCALE * math.cos(2.0 * math.pi * k / RIM_SIDES) for k in range(RIM_SIDES)]
_RIM_SIN = [_RIM_SCALE * math.sin(2.0 * math.pi * k / RIM_SIDES) for k in range(RIM_SIDES)]
# a cylinder's hull vertex i: the rim polygon's corner k (0 .. half a turn moved forward, then on round moved back)
_HULL_K = [i if i <= RIM_SIDES // 2 else (i - 1) % RIM_SIDES for i in range(RIM_SIDES + 2)]
_HULL_COS = [_RIM_COS[k] for k in _HULL_K]
_HULL_SIN = [_RIM_SIN[k] for k in _HULL_K]
_HULL_SIDE = [1.0 if i <= RIM_SIDES // 2 else -1.0 for i in range(RIM_SIDES + 2)]
_BUF = MAX_HULL + 4  # a rectangle clipped by the hull keeps at most this many vertices
_SKEW = 0.4142135623730951  # tan(22.5 deg): the hull starts at the lowest x + _SKEW y


@ti.func
def _cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


@ti.func
def convex_hull_2d(pts, n, size: ti.template()):
    """Counter-clockwise convex hull (gift wrapping) of the first ``n`` rows of the ``size`` x 2 matrix
    ``pts``; returns (vertices as rows of a ``size`` x 2 matrix, count). Collinear points are dropped."""
    start = 0  # the extreme point along a direction no axis-aligned edge is normal to (no ties to flip)
    for k in range(n):
        if pts[k, 0] + _SKEW * pts[k, 1] < pts[start, 0] + _SKEW * pts[start, 1]:
            start = k
    hull = ti.Matrix.zero(float, size, 2)
    nh = 0
    cur = start
    done = False
    scale = 0.0
    for k in range(n):
        scale = ti.max(scale, ti.abs(pts[k, 0] - pts[start, 0]) + ti.abs(pts[k, 1] - pts[start, 1]))
    eps = 1e-12 * (scale + 1e-30)
    for _ in range(size):
        if not done:
            hull[nh, 0] = pts[cur, 0]
            hull[nh, 1] = pts[cur, 1]
            nh += 1
            c = ti.math.vec2(pts[cur, 0], pts[cur, 1])
            nxt = -1
            for k in range(n):
                pk = ti.math.vec2(pts[k, 0], pts[k, 1])
                if (pk - c).norm() > eps:
                    if nxt < 0:
                        nxt = k
                    else:
                        pn = ti.math.vec2(pts[nxt, 0], pts[nxt, 1])
                        turn = _cross(c, pn, pk)
                        if turn < -eps * scale or (ti.abs(turn) <= eps * scale and (pk - c).norm() > (pn - c).norm()):
                            nxt = k
            if nxt < 0 or nxt == start:
                done = True
            elif (ti.math.vec2(pts[nxt, 0], pts[nxt, 1]) - ti.math.vec2(pts[start, 0], pts[start, 1])).norm() <= eps:
                done = True  # a near-duplicate of the start: the hull is closed
            else:
                cur = nxt
    return hull, nh


@ti.func
def footprint_hull(points: ti.template(), pt0, npt, c_l, r_l):
    """Counter-clockwise convex hull of the first ``MAX_HULL`` sample points projected on the bed plane;
    returns (vertices as rows of a MAX_HULL x 2 matrix, count)."""
    n = ti.min(npt, MAX_HULL)
    pts = ti.Matrix.zero(float, MAX_HULL, 2)
    for k in range(n):
        p = c_l + r_l @ point_at(points, pt0 + k)
        pts[k, 0] = p[0]
        pts[k, 1] = p[1]
    return convex_hull_2d(pts, n, MAX_HULL)


@ti.func
def cylinder_hull(radius, half, c_l, r_l):
    """Counter-clockwise footprint of a cylinder (radius and half length [m], axis along its z) at ``c_l`` with
    rotation ``r_l`` in the bed frame: the hull of its rims' projected ellipses, each drawn as a polygon of
    ``RIM_SIDES`` sides of the ellipse's area with vertices at the ends of the ellipse's axes. The hull is built
    directly, as the Minkowski sum of one rim's polygon and the axis's projection: the half of the polygon facing
    along the axle's projection moved forward by it, the other half back (``RIM_SIDES + 2`` vertices). A wheel
    whose axle lies in the bed plane projects to a rectangle of its exact width; an axle tilted by rounding
    leaves the hull as it is (a wrapping of near-collinear points could not be trusted there). Returns
    (MAX_HULL x 2 rows, count)."""
    axis = ti.math.vec3(r_l[0, 2], r_l[1, 2], r_l[2, 2])
    flat = ti.math.vec2(axis[0], axis[1])
    along = ti.math.vec2(1.0, 0.0)  # (the in-plane axle direction; any for an upright cylinder)
    if flat.norm() > 1e-12:
        along = flat / flat.norm()
    across = ti.math.vec2(-along[1], along[0])
    minor = radius * ti.abs(axis[2])  # the ellipse's semi-axis along the axle's projection
    centre = ti.math.vec2(c_l[0], c_l[1])
    hull = ti.Matrix.zero(float, MAX_HULL, 2)
    # angle k runs clockwise in the (along, across) frame: the rows are filled from the last, counter-clockwise
    for i in ti.static(range(RIM_SIDES + 2)):
        v = centre + ti.static(_HULL_SIDE[i]) * half * flat + radius * ti.static(_HULL_COS[i]) * across \
            + minor * ti.static(_HULL_SIN[i]) * along
        hull[RIM_SIDES + 1 - i, 0] = v[0]
        hull[RIM_SIDES + 1 - i, 1] = v[1]
    return hull, RIM_SIDES + 2


@ti.func
def clip_to_hull(poly, m, hull, nh, buf: ti.template()):
    """The part of the polygon ``poly`` (first ``m`` rows of a ``buf`` x 2 matrix) inside the convex CCW
    polygon ``hull`` (Sutherland-Hodgman; a two-vertex ``poly`` is a segment); returns (rows, count). An edge
    with the whole polygon on its inner side is skipped: clipping would copy the polygon as it is."""
    for h in range(nh):
        a = ti.math.vec2(hull[h, 0], hull[h, 1])
        hn = (h + 1) % nh
        b = ti.math.vec2(hull[hn, 0], hull[hn, 1])
        cuts = False
        for i in range(m):
            if _cross(a, b, ti.math.vec2(poly[i, 0], poly[i, 1])) < 0.0:
                cuts = True
        if cuts:
            poly, m = _clip_edge(poly, m, a, b, buf)
    return poly, m


@ti.func
def _clip_edge(poly, m, a, b, buf: ti.template()):
    """One Sutherland-Hodgman pass: the part of ``poly`` (``m`` rows) on the inner (left) side of the line
    from ``a`` to ``b``; returns (rows, count)."""
    out = ti.Matrix.zero(float, buf, 2)
    k = 0
    for i in range(m):
        p = ti.math.vec2(poly[i, 0], poly[i, 1])
        j = (i + 1) % m
        q = ti.math.vec2(poly[j, 0], poly[j, 1])
        sp = _cross(a, b, p)
        sq = _cross(a, b, q)
        if sp >= 0.0:
            if k < buf:
                out[k, 0] = p[0]
                out[k, 1] = p[1]
                k += 1
        if (sp >= 0.0) != (sq >= 0.0):
            x = p + (q - p) * (sp / (sp - sq))
            if k < buf:
                out[k, 0] = x[0]
                out[k, 1] = x[1]
                k += 1
    return out, k


@ti.func
def _span_at(hull, nh, y):
    """The x-interval (lo, hi) where the line at height ``y`` meets the convex polygon ``hull``; lo > hi where
    it misses it."""
    lo = 1e300
    hi = -1e300
    for h in range(nh):
        hn = (h + 1) % nh
        ay, by = hull[h, 1], hull[hn, 1]
        if (ay - y) * (by - y) <= 0.0:
            x = hull[h, 0]
            if ay != by:
                x = hull[h, 0] + (y - ay) * (hull[hn, 0] - hull[h, 0]) / (by - ay)
            else:  # (an edge along the line: both its ends)
                lo = ti.min(lo, hull[hn, 0])
                hi = ti.max(hi, hull[hn, 0])
            lo = ti.min(lo, x)
            hi = ti.max(hi, x)
    return lo, hi


@ti.func
def strip_spans(hull, nh, ya, yb):
    """For the strip ``ya <= y <= yb`` of a row of cells: the x-interval outside which the convex polygon
    ``hull`` covers nothing of the strip, and the one inside which it covers the whole strip's height
    (empty where it does not: lo > hi). A cell between ``xa`` and ``xb`` wholly inside the second is wholly
    covered, one wholly outside the first not at all; only the others need clipping (``cell_coverage``). By
    convexity a rectangle is inside where its four corners are, and the corners' lines are ``ya`` and ``yb``."""
    lo_a, hi_a = _span_at(hull, nh, ya)
    lo_b, hi_b = _span_at(hull, nh, yb)
    out_lo, out_hi = ti.min(lo_a, lo_b), ti.max(hi_a, hi_b)
    for h in range(nh):  # (a vertex inside the strip reaches further than both lines)
        if hull[h, 1] >= ya and hull[h, 1] <= yb:
            out_lo = ti.min(out_lo, hull[h, 0])
            out_hi = ti.max(out_hi, hull[h, 0])
    in_lo, in_hi = ti.max(lo_a, lo_b), ti.min(hi_a, hi_b)
    if nh < 3:  # (no area: every cell takes the clipping, which finds none)
        out_lo, out_hi, in_lo, in_hi = -1e300, 1e300, 1e300, -1e300
    return out_lo, out_hi, in_lo, in_hi


@ti.func
def cell_coverage(hull, nh, xa, xb, ya, yb):
    """Area [m^2] and centroid of the part of the rectangle [xa, xb] x [ya, yb] inside the convex CCW
    polygon ``hull`` (Sutherland-Hodgman clipping, then the shoelace formulas). Each hull edge with the whole
    polygon on its inner side is skipped (``clip_to_hull``): a rectangle wholly inside the hull comes out as
    itself, vertex for vertex; one wholly outside an edge loses every vertex there."""
    poly = ti.Matrix.zero(float, _BUF, 2)
    poly[0, 0] = xa
    poly[0, 1] = ya
    poly[1, 0] = xb
    poly[1, 1] = ya
    poly[2, 0] = xb
    poly[2, 1] = yb
    poly[3, 0] = xa
    poly[3, 1] = yb
    poly, m = clip_to_hull(poly, 4, hull, nh, _BUF)
    area2 = 0.0
    cx = 0.0
    cy = 0.0
    for i in range(m):
        j = (i + 1) % m
        w = poly[i, 0] * poly[j, 1] - poly[j, 0] * poly[i, 1]
        area2 += w
        cx += (poly[i, 0] + poly[j, 0]) * w
        cy += (poly[i, 1] + poly[j, 1]) * w
    centroid = ti.math.vec2(0.5 * (xa + xb), 0.5 * (ya + yb))
    if ti.abs(area2) > 0.0:
        centroid = ti.math.vec2(cx, cy) / (3.0 * area2)
    return 0.5 * ti.abs(area2), centroid
