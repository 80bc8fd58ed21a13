"""Contact manifolds of flat-sided pairs other than two boxes (box, cylinder and convex mesh against each
other): the face of each body that faces the other, projected on the plane across the contact normal, one
clipped to the other; each vertex of the overlap is a contact with its own depth.

A face is a face plane of the body (its vertices: the sample points on that plane; a cylinder cap adds the
rim point furthest along the normal, so a tilted cylinder rests on its true rim); a cylinder whose caps do
not face the other body offers the line of its side, between the rim points furthest along the normal. So
a cylinder standing on a beam rests on the chord where the beam crosses its cap, and crossed beams touch
where they cross, though no corner of either lies inside the other.

A face holds at most ``MAX_FEAT`` vertices (a mesh face with more is left to the sample points);
the code is written so that each stage appears once (the step kernel inlines every call, and Vulkan
drivers compile the whole kernel as one shader).
"""
import taichi as ti

from ..common.arrays import plane_at, point_at
from ..common.layout import CYLINDER, FEAT_EDGE
from ..common.math import closest_points_segments, tangent_basis, vec3
from .footprint import clip_to_hull, convex_hull_2d
from .narrowphase import emit
from .shapes import cylinder_support

MAX_FEAT = 12  # vertices of a facing feature (a box face has 4, a cylinder cap 8 rim points and its lowest)
_CLIP_BUF = 16  # vertices of the clipped overlap (box face by cylinder cap: 13)
_FACING = 0.7071067811865476  # a cylinder offers a cap when the cap's normal is within 45 degrees of the normal
FEAT_CLIP = FEAT_EDGE + 64  # feature ids of clipped-face contacts (FEAT_CLIP + vertex)


@ti.func
def facing_feature(D: ti.template(), s, pos, rot, d, t1, t2):
    """The feature of shape ``s`` (:class:`~.narrowphase.Shape`, on a link at ``pos``, ``rot``) that faces the
    world direction ``d``: its vertices
    (world, rows of a MAX_FEAT x 3 matrix), their count, a world normal of its plane (for a side line,
    ``d`` itself: such a feature is a segment), and its convex hull across ``d`` (2D coordinates along
    ``t1``, ``t2``) with its count."""
    verts = ti.Matrix.zero(float, MAX_FEAT, 3)
    count = 0
    d_l = rot.transpose() @ d
    best = -2.0
    best_k = 0
    for k in range(s.n_planes):
        pl = plane_at(D.plane, s.plane0 + k)
        facing = vec3(pl[0], pl[1], pl[2]).dot(d_l)
        if facing > best:
            best = facing
            best_k = k
    pl = plane_at(D.plane, s.plane0 + best_k)
    nk = vec3(pl[0], pl[1], pl[2])
    m = rot @ nk
    side_line = s.kind == CYLINDER and best < _FACING
    if side_line:
        m = d
    else:
        tol = 1e-6 * (ti.abs(pl[3]) + 1e-3)  # (meshes' planes are rounded; f32 rounds at 6e-8)
        on_plane = 0
        for k in range(s.n_points):
            pb = point_at(D.point, s.point0 + k)
            if ti.abs(nk.dot(pb) - pl[3]) <= tol:
                on_plane += 1
                if count < MAX_FEAT:
                    pw = pos + rot @ pb
                    for c in ti.static(range(3)):
                        verts[count, c] = pw[c]
                    count += 1
        if on_plane > MAX_FEAT:
            count = 0  # too many vertices to hold: no feature (the sample points serve instead)
    if s.kind == CYLINDER:  # the rim points furthest along d: the side line, or a cap's lowest point
        for side in range(2):
            if side_line or ((side == 1) == (pl[2] > 0.0) and count < MAX_FEAT):
                pb, ok = cylinder_support(s.prm, d_l, side)
                if ok:
                    pw = pos + rot @ pb
                    for c in ti.static(range(3)):
                        verts[count, c] = pw[c]
                    count += 1
    pts = ti.Matrix.zero(float, MAX_FEAT, 2)
    for k in range(count):
        v = vec3(verts[k, 0], verts[k, 1], verts[k, 2])
        pts[k, 0] = t1.dot(v)
        pts[k, 1] = t2.dot(v)
    hull, nh = convex_hull_2d(pts, count, MAX_FEAT)
    return verts, count, m, hull, nh


@ti.func
def lift(x, t1, t2, n, verts, count, m):
    """Height along ``n`` [m] of the feature (``verts``, ``count``, plane normal ``m``) above the point
    ``x`` of the plane across ``n`` through the origin (2D coordinates along ``t1``, ``t2``)."""
    base = t1 * x[0] + t2 * x[1]
    a = vec3(verts[0, 0], verts[0, 1], verts[0, 2])
    h = n.dot(a)
    if count == 2:  # a segment: the point of it above x
        b = vec3(verts[1, 0], verts[1, 1], verts[1, 2])
        ab = ti.math.vec2(t1.dot(b - a), t2.dot(b - a))
        if ab.norm_sqr() > 0.0:
            s = ti.math.clamp((x - ti.math.vec2(t1.dot(a), t2.dot(a))).dot(ab) / ab.norm_sqr(), 0.0, 1.0)
            h = n.dot(a + (b - a) * s)
    elif ti.abs(n.dot(m)) > 1e-12:
        h = (a - base).dot(m) / n.dot(m)
    return h


@ti.func
def clipped_face_contacts(D: ti.template(), slots, margin, si, pi, sj, pj, n):
    """Contacts of the body (shape ``si`` at pose ``pi``) and the other body (``sj`` at ``pj``) across the
    normal ``n`` (from the other body to the body): the overlap of their facing features, each point placed on
    the body's feature with depth = the other's height minus the body's along ``n``, emitted into ``slots``.
    Returns how many were found within ``margin`` (whether or not the pair's slots had room for them)."""
    t1, t2 = tangent_basis(n)
    fi = ti.Matrix.zero(float, MAX_FEAT, 3)
    fj = ti.Matrix.zero(float, MAX_FEAT, 3)
    hi = ti.Matrix.zero(float, MAX_FEAT, 2)
    hj = ti.Matrix.zero(float, MAX_FEAT, 2)
    ni = nj = nhi = nhj = 0
    mi = n
    mj = n
    for side in range(2):  # the body's feature facing the other (-n), then the other's facing it (+n)
        s, ps, d = si, pi, -n
        if side == 1:
            s, ps, d = sj, pj, n
        verts, count, m, hull, nh = facing_feature(D, s, ps.pos, ps.rot, d, t1, t2)
        if side == 0:
            fi, ni, mi, hi, nhi = verts, count, m, hull, nh
        else:
            fj, nj, mj, hj, nhj = verts, count, m, hull, nh
    found = 0
    if ni >= 2 and nj >= 2:
        # clip a line or face to a face (the body's feature to the other's when that is a face)
        subject, n_poly, clipper, n_clipper = hi, nhi, hj, nhj
        if nhj < 3:
            subject, n_poly, clipper, n_clipper = hj, nhj, hi, nhi
        poly = ti.Matrix.zero(float, _CLIP_BUF, 2)
        for k in range(MAX_FEAT):
            poly[k, 0] = subject[k, 0]
            poly[k, 1] = subject[k, 1]
        count = 0
        if n_clipper >= 3:
            poly, count = clip_to_hull(poly, n_poly, clipper, n_clipper, _CLIP_BUF)
        else:  # two side lines: the ends of their common stretch when parallel, else where they cross
            a0 = ti.math.vec2(hi[0, 0], hi[0, 1])
            ab = ti.math.vec2(hi[1, 0], hi[1, 1]) - a0
            bj0 = ti.math.vec2(hj[0, 0], hj[0, 1]) - a0
            bj1 = ti.math.vec2(hj[1, 0], hj[1, 1]) - a0
            along = ab.norm_sqr()
            cross = ab[0] * (bj1 - bj0)[1] - ab[1] * (bj1 - bj0)[0]
            if nhi == 2 and nhj == 2 and along > 0.0 and ti.abs(cross) <= 1e-6 * along:
                s0 = ti.max(0.0, ti.min(bj0.dot(ab), bj1.dot(ab)) / along)
                s1 = ti.min(1.0, ti.max(bj0.dot(ab), bj1.dot(ab)) / along)
                if s0 <= s1:
                    for k in ti.static(range(2)):
                        x = a0 + ab * (s0 if k == 0 else s1)
                        poly[k, 0] = x[0]
                        poly[k, 1] = x[1]
                    count = 2
            else:
                on_i, _on_j = closest_points_segments(vec3(fi[0, 0], fi[0, 1], fi[0, 2]),
                                                      vec3(fi[1, 0], fi[1, 1], fi[1, 2]),
                                                      vec3(fj[0, 0], fj[0, 1], fj[0, 2]),
                                                      vec3(fj[1, 0], fj[1, 1], fj[1, 2]))
                poly[0, 0] = t1.dot(on_i)
                poly[0, 1] = t2.dot(on_i)
                count = 1
        for k in range(count):
            x = ti.math.vec2(poly[k, 0], poly[k, 1])
            h_i = lift(x, t1, t2, n, fi, ni, mi)
            depth = lift(x, t1, t2, n, fj, nj, mj) - h_i
            if depth > -margin:
                emit(D, slots, t1 * x[0] + t2 * x[1] + n * h_i, n, depth, FEAT_CLIP + k, True)
                found += 1
    return found
