"""Height-map access in the map's own frame: samples, triangles, the surface under a point, index
ranges, and the segment-triangle geometry that sphere and capsule contacts use.

A map's samples live in one flat array (``heights``, from ``off``; a map with heights per env holds one set
per env, one after the other); sample (ix, iy) is at
``(x0 + ix dx, y0 + iy dy, h)``. Each cell splits into two triangles along its (ix, iy)-(ix+1, iy+1)
diagonal. The map frame is placed by the ``rotation`` and ``origin`` columns of its ``map`` row.
"""
import taichi as ti

from ..common.arrays import MAP_F, MAP_I
from ..common.math import closest_point_triangle, closest_points_segments, is_finite, vec3
from ..common.schema import get3, get33, row
from .narrowphase import Pose

mat3 = ti.math.mat3


@ti.dataclass
class Grid:
    """Where a height map's samples live and how they are spaced: ``off`` its first sample in ``heights``,
    ``nx`` x ``ny`` samples, ``soil0`` its first soil-bed sample (-1: no bed), spacings ``dx``, ``dy`` [m] and
    ``(x0, y0)``, the map-frame position of sample (0, 0) [m]."""
    off: ti.i32
    nx: ti.i32
    ny: ti.i32
    soil0: ti.i32
    dx: float
    dy: float
    x0: float
    y0: float


@ti.func
def hm_grid(D: ti.template(), e, m):
    """Grid layout of map ``m`` in env ``e`` (:class:`Grid`): a map with heights per env starts each env's
    samples ``env_stride`` after the previous env's."""
    mi = row(D.map_i, 0, m)
    mf = row(D.map_f, 0, m)
    nx, ny = mi[MAP_I.nx], mi[MAP_I.ny]
    sx, sy = mf[MAP_F.size], mf[MAP_F.size + 1]
    return Grid(off=mi[MAP_I.sample0] + e * mi[MAP_I.env_stride], nx=nx, ny=ny, soil0=mi[MAP_I.soil0], dx=sx / (nx - 1), dy=sy / (ny - 1),
                x0=mf[MAP_F.centre] - 0.5 * sx, y0=mf[MAP_F.centre + 1] - 0.5 * sy)


@ti.func
def hm_local(D: ti.template(), e, m, pos, rot):
    """Grid layout of map ``m`` in env ``e``, its pose in the world, and a link pose (``pos``, ``rot``) expressed in the map
    frame: ``(grid, map pose, link pose in the map frame)``."""
    g = hm_grid(D, e, m)
    o, rm = hm_pose(D, m)
    return g, Pose(pos=o, rot=rm), Pose(pos=rm.transpose() @ (pos - o), rot=rm.transpose() @ rot)


@ti.func
def hm_pose(D: ti.template(), m):
    """Origin [m] and rotation (map to world) of height map ``m``."""
    return get3(D.map_f, 0, m, MAP_F.origin), get33(D.map_f, 0, m, MAP_F.rotation)


@ti.func
def hm_vertex(hm_heights: ti.template(), g, ix, iy):
    """Map-frame position of sample (ix, iy) of the map with grid ``g``."""
    return vec3(g.x0 + ix * g.dx, g.y0 + iy * g.dy, hm_heights[g.off + iy * g.nx + ix])


@ti.func
def hm_triangle(hm_heights: ti.template(), g, ix, iy, t):
    """Vertices (counter-clockwise seen from +z) of triangle ``t`` of cell (ix, iy); the cell's
    diagonal runs from its (ix, iy) corner to its (ix+1, iy+1) corner."""
    a = hm_vertex(hm_heights, g, ix, iy)
    c = hm_vertex(hm_heights, g, ix + 1, iy + 1)
    b = hm_vertex(hm_heights, g, ix + 1, iy)
    if t == 1:
        b = c
        c = hm_vertex(hm_heights, g, ix, iy + 1)
    return a, b, c


@ti.func
def hm_surface(hm_heights: ti.template(), g, x, y):
    """The triangle under map-frame (x, y): ``found`` (inside the grid and not a hole), a vertex of the
    triangle, and its unit upward normal."""
    fx = (x - g.x0) / g.dx
    fy = (y - g.y0) / g.dy
    found = fx >= 0.0 and fy >= 0.0 and fx <= g.nx - 1.0 and fy <= g.ny - 1.0
    a = vec3(0.0, 0.0, 0.0)
    n = vec3(0.0, 0.0, 1.0)
    if found:
        ix = ti.min(ti.cast(ti.floor(fx), ti.i32), g.nx - 2)
        iy = ti.min(ti.cast(ti.floor(fy), ti.i32), g.ny - 2)
        t = 0 if (fx - ix) >= (fy - iy) else 1
        a, b, c = hm_triangle(hm_heights, g, ix, iy, t)
        found = is_finite(a[2]) and is_finite(b[2]) and is_finite(c[2])
        nn = (b - a).cross(c - a)
        n = nn / nn.norm()
    return found, a, n


@ti.func
def cell_range(lo, hi, origin, spacing, count):
    """First and last index of the cells (count - 1 of them) overlapping [lo, hi] along one axis."""
    f0 = ti.math.clamp((lo - origin) / spacing, -1.0, count + 1.0)
    f1 = ti.math.clamp((hi - origin) / spacing, -1.0, count + 1.0)
    i0 = ti.max(ti.cast(ti.floor(f0), ti.i32), 0)
    i1 = ti.min(ti.cast(ti.floor(f1), ti.i32), count - 2)
    return i0, i1


@ti.func
def vertex_range(lo, hi, origin, spacing, count):
    """First and last index of the samples inside [lo, hi] along one axis."""
    f0 = ti.math.clamp((lo - origin) / spacing, -1.0, count + 1.0)
    f1 = ti.math.clamp((hi - origin) / spacing, -1.0, count + 1.0)
    return ti.max(ti.cast(ti.ceil(f0), ti.i32), 0), ti.min(ti.cast(ti.floor(f1), ti.i32), count - 1)


@ti.func
def closest_segment_triangle(p0, p1, a, b, c):
    """Closest points (on the segment, on the triangle) between segment p0p1 and triangle abc, for a
    segment that does not pierce the triangle. A point (``p1 == p0``: a sphere's centre) needs only its
    closest point on the triangle."""
    cs = p0
    ct = closest_point_triangle(p0, a, b, c)
    if (p1 - p0).norm_sqr() > 0.0:
        best = (cs - ct).norm()
        t1 = closest_point_triangle(p1, a, b, c)
        if (p1 - t1).norm() < best:
            cs, ct, best = p1, t1, (p1 - t1).norm()
        for k in ti.static(range(3)):
            e0 = a if k == 0 else (b if k == 1 else c)
            e1 = b if k == 0 else (c if k == 1 else a)
            s, t = closest_points_segments(p0, p1, e0, e1)
            if (s - t).norm() < best:
                cs, ct, best = s, t, (s - t).norm()
    return cs, ct


@ti.func
def clip_segment_to_prism(p0, p1, a, b, c, tn):
    """Parameter interval [t0, t1] of the segment p0 + t (p1 - p0), t in [0, 1], whose projection along
    the unit normal ``tn`` falls inside triangle abc (empty when t0 > t1)."""
    d = p1 - p0
    t0 = 0.0
    t1 = 1.0
    for k in ti.static(range(3)):
        e0 = a if k == 0 else (b if k == 1 else c)
        e1 = b if k == 0 else (c if k == 1 else a)
        inward = tn.cross(e1 - e0)  # points into the triangle for a counter-clockwise abc
        num = inward.dot(p0 - e0)
        den = inward.dot(d)
        if ti.abs(den) < 1e-30:
            if num < 0.0:
                t0, t1 = 1.0, 0.0
        elif den > 0.0:
            t0 = ti.max(t0, -num / den)
        else:
            t1 = ti.min(t1, -num / den)
    return t0, t1


@ti.func
def segment_triangle_contacts(p0, p1, a, b, c, tn):
    """Contact pairs (segment point, triangle point) between segment p0p1 and triangle abc: one closest
    pair, or, when the segment lies parallel to the triangle over it, the two ends of the overlap (a
    resting capsule then has a well-defined support line instead of an arbitrary point of it)."""
    cs0, ct0 = closest_segment_triangle(p0, p1, a, b, c)
    cs1, ct1 = cs0, ct0
    n_pairs = 1
    d = p1 - p0
    length = d.norm()
    if length > 0.0 and ti.abs(d.dot(tn)) <= 1e-7 * length:  # (a sphere, p1 == p0, has one pair)
        t0, t1 = clip_segment_to_prism(p0, p1, a, b, c, tn)
        if t0 <= t1:
            cs0 = p0 + d * t0
            cs1 = p0 + d * t1
            ct0 = cs0 - tn * tn.dot(cs0 - a)
            ct1 = cs1 - tn * tn.dot(cs1 - a)
            n_pairs = 2
    return n_pairs, cs0, ct0, cs1, ct1


@ti.func
def in_triangle_xy(g, ix, iy, t, x, y, slack):
    """Whether map-frame (x, y) lies in the map-plane projection of triangle ``t`` of cell (ix, iy), widened by
    ``slack`` [m] (``hm_triangle``: triangle 0 is the cell's half below its diagonal, 1 the half above)."""
    u = (x - (g.x0 + ix * g.dx)) / g.dx
    v = (y - (g.y0 + iy * g.dy)) / g.dy
    su = slack / g.dx
    sv = slack / g.dy
    inside = u >= -su and v >= -sv and u <= 1.0 + su and v <= 1.0 + sv
    if t == 0:
        inside = inside and v <= u + su + sv
    else:
        inside = inside and u <= v + su + sv
    return inside


@ti.func
def is_local_closest(hm_heights: ti.template(), g, ix, iy, t_own, cs, ct, d, tol):
    """Whether the surface point ``ct`` of triangle ``t_own`` of cell (ix, iy) is a local minimum of the
    distance from ``cs`` over the whole height map: no triangle touching ``ct`` (in the 3x3 cells around)
    comes strictly closer. Filters edge and vertex contacts of flat or concave creases, which would otherwise
    act as bumps when a body rolls across triangle edges. Only cells within ``2 tol`` of ``ct`` across the map
    can hold a triangle touching it (one or two per axis, of the 3x3 around).

    ``ct`` lies on the map's surface, which is continuous: a triangle touches it exactly where its projection
    on the map plane holds ``ct``'s (x, y), so that cheap test picks the neighbours (within ``tol``), and
    only those are searched for a closer point. The own triangle's closest point to ``cs`` is ``ct``
    itself, so it is not searched again."""
    ok = True
    jx0, jx1 = cell_range(ct[0] - 2.0 * tol, ct[0] + 2.0 * tol, g.x0, g.dx, g.nx)
    jy0, jy1 = cell_range(ct[1] - 2.0 * tol, ct[1] + 2.0 * tol, g.y0, g.dy, g.ny)
    for jy in range(ti.max(iy - 1, jy0), ti.min(iy + 1, jy1) + 1):
        for jx in range(ti.max(ix - 1, jx0), ti.min(ix + 1, jx1) + 1):
            for t in range(2):
                # (one closer triangle settles it: the rest are not tested)
                if ok and (jx != ix or jy != iy or t != t_own) and in_triangle_xy(g, jx, jy, t, ct[0],
                                                                                  ct[1], tol):
                    a, b, c = hm_triangle(hm_heights, g, jx, jy, t)
                    if is_finite(a[2]) and is_finite(b[2]) and is_finite(c[2]):
                        if (closest_point_triangle(cs, a, b, c) - cs).norm() < d - tol:
                            ok = False
    return ok


