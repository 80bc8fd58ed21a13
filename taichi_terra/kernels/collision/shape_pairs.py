"""Shape against shape: spheres and capsules by the signed distance of their centre points, boxes,
cylinders and convex meshes by a separating-axis normal and their facing features clipped to each other
(``manifold.py``), and two boxes by face clipping or an edge-edge contact. Normals point from the pair's
other body (its ``a`` side) to its body.
"""
import taichi as ti

from ..common.arrays import plane_at, point_at
from ..common.layout import BOX, CYLINDER, FEAT_EDGE, FEAT_OTHER_POINT, FEAT_POINT
from ..common.math import closest_point_segment, closest_points_segments, vec3
from .manifold import clipped_face_contacts
from .narrowphase import emit, sample_count, sample_point
from .shapes import shape_sdf

_CLIP_TOL = 1e-9  # [m] a point this close to a reference-face side line is on it (box face clipping)


@ti.func
def support(points: ti.template(), s, pos, rot, n):
    """Largest projection on the world direction ``n`` of the sample points of shape ``s`` (:class:`Shape`) on a
    link at ``pos``, ``rot`` [m] (for a cylinder, including the rim points furthest along ``n``)."""
    best = -1e300
    nb = rot.transpose() @ n
    for k in range(sample_count(s.kind, s.n_points)):
        pb, ok = sample_point(points, s.point0, s.n_points, s.kind, s.prm, nb, k)
        if ok:
            best = ti.max(best, nb.dot(pb))
    return best + n.dot(pos)


@ti.func
def deepest_on_segment(p0, p1, s, pos, rot, planes: ti.template()):
    """Parameter t in [0, 1] of the point of segment p0p1 (world) deepest in shape ``s`` (link at pos, rot):
    the signed distance of a convex shape is convex along a segment, so a golden-section search finds it."""
    stype, prm, pl0, npl = s.kind, s.prm, s.plane0, s.n_planes
    lo = 0.0
    hi = 1.0
    g = 0.6180339887498949
    for _ in range(36):  # the bracket shrinks to 2e-8 of the segment
        t1 = hi - g * (hi - lo)
        t2 = lo + g * (hi - lo)
        s1, _n1 = shape_sdf(stype, prm, rot.transpose() @ (p0 + (p1 - p0) * t1 - pos), planes, pl0, npl)
        s2, _n2 = shape_sdf(stype, prm, rot.transpose() @ (p0 + (p1 - p0) * t2 - pos), planes, pl0, npl)
        if s1 <= s2:
            hi = t2
        else:
            lo = t1
    return 0.5 * (lo + hi)


@ti.func
def collide_rounded(D: ti.template(), slots, margin, si, pi, sj, pj):
    """Pairs with a sphere or capsule (a segment inflated by its radius; a sphere's segment has zero length).
    Two rounded shapes: the closest points of their segments, plus each end point against the other
    segment (parallel capsules rest on two points). A rounded shape against a box, cylinder or mesh: the
    segment's end points and its deepest interior point against that shape's signed distance. Normals point
    from the pair's other body (j: shape ``sj`` at pose ``pj``) to its body (i: ``si`` at ``pi``); contacts go to
    ``slots``."""
    pos, rot, posj, rotj = pi.pos, pi.rot, pj.pos, pj.rot
    infl, inflj = si.inflation, sj.inflation
    p0i = pos + rot @ point_at(D.point, si.point0)
    p1i = pos + rot @ point_at(D.point, si.point0 + si.n_points - 1)
    p0j = posj + rotj @ point_at(D.point, sj.point0)
    p1j = posj + rotj @ point_at(D.point, sj.point0 + sj.n_points - 1)
    if infl > 0.0 and inflj > 0.0:
        for k in range(5):
            ci = p0i
            cj = p0j
            if k == 0:
                ci, cj = closest_points_segments(p0i, p1i, p0j, p1j)
            elif k < 3:
                ci = p0i if k == 1 else p1i
                cj = closest_point_segment(ci, p0j, p1j)
            else:
                cj = p0j if k == 3 else p1j
                ci = closest_point_segment(cj, p0i, p1i)
            d = (ci - cj).norm()
            sd = d - infl - inflj
            if sd < margin and d > 1e-12:
                nw = (ci - cj) / d
                emit(D, slots, ci - nw * infl, nw, -sd, FEAT_POINT + k, True)
    else:
        # the rounded side r against the polyhedral side s; sgn turns normals into "from j to i"
        r0, r1, rad = p0i, p1i, infl
        s, s_pos, s_rot = sj, posj, rotj
        sgn = 1.0
        if infl == 0.0:
            r0, r1, rad = p0j, p1j, inflj
            s, s_pos, s_rot = si, pos, rot
            sgn = -1.0
        t_deep = deepest_on_segment(r0, r1, s, s_pos, s_rot, D.plane)
        for k in range(3):
            t = 0.0 if k == 0 else (1.0 if k == 1 else t_deep)
            pw = r0 + (r1 - r0) * t
            sd, ns = shape_sdf(s.kind, s.prm, s_rot.transpose() @ (pw - s_pos), D.plane, s.plane0, s.n_planes)
            sd -= rad
            if sd < margin:
                n_out = s_rot @ ns  # outward from the polyhedral side, towards the rounded one
                emit(D, slots, pw - n_out * rad, sgn * n_out, -sd, FEAT_POINT + k, True)


@ti.func
def box_face_towards(c, r, h, d):
    """The face of a box (centre ``c``, rotation ``r``, half sizes ``h``) whose outward normal is closest to
    the direction ``d``: its axis index and its centre."""
    a = 0
    for k in ti.static(range(1, 3)):
        if ti.abs(vec3(r[0, k], r[1, k], r[2, k]).dot(d)) > ti.abs(vec3(r[0, a], r[1, a], r[2, a]).dot(d)):
            a = k
    ax = vec3(r[0, a], r[1, a], r[2, a])
    return a, c + (1.0 if ax.dot(d) > 0.0 else -1.0) * h[a] * ax


@ti.func
def box_face_contacts(D: ti.template(), slots, margin, ref, h_r, inc, h_i, nr, n_pair):
    """Contacts of an incident box face (box at pose ``inc``, half sizes ``h_i``) against a reference box face
    (box at ``ref``, half sizes ``h_r``) with outward normal ``nr``: the incident face's corners clipped
    (Sutherland-Hodgman) to the reference face's rectangle, each kept point with its depth below the reference
    face, emitted into ``slots`` with the pair's normal ``n_pair`` (from its ``a`` side to its body: ``nr`` when
    the reference box is the ``a`` side, ``-nr`` otherwise)."""
    c_r, r_r, c_i, r_i = ref.pos, ref.rot, inc.pos, inc.rot
    ra, fc = box_face_towards(c_r, r_r, h_r, nr)  # reference face: outward normal closest to nr
    ua = (ra + 1) % 3
    va = (ra + 2) % 3
    u_dir = vec3(r_r[0, ua], r_r[1, ua], r_r[2, ua])
    v_dir = vec3(r_r[0, va], r_r[1, va], r_r[2, va])
    ia, ic = box_face_towards(c_i, r_i, h_i, -nr)  # incident face: outward normal closest to -nr
    iu = (ia + 1) % 3
    iv = (ia + 2) % 3
    eu = vec3(r_i[0, iu], r_i[1, iu], r_i[2, iu]) * h_i[iu]
    ev = vec3(r_i[0, iv], r_i[1, iv], r_i[2, iv]) * h_i[iv]
    poly = ti.Matrix.zero(float, 8, 3)
    for k in ti.static(range(4)):
        corner = ic + (1.0 if k == 0 or k == 3 else -1.0) * eu + (1.0 if k < 2 else -1.0) * ev
        for c in ti.static(range(3)):
            poly[k, c] = corner[c]
    count = 4
    for side in ti.static(range(4)):  # keep s . (x - fc) <= half for the four sides of the reference face
        sdir = u_dir if side < 2 else v_dir
        if side % 2 == 1:
            sdir = -sdir
        half = h_r[ua] if side < 2 else h_r[va]
        out = ti.Matrix.zero(float, 8, 3)
        n_out = 0
        for k in range(count):
            a = vec3(poly[k, 0], poly[k, 1], poly[k, 2])
            kb = (k + 1) % count
            b = vec3(poly[kb, 0], poly[kb, 1], poly[kb, 2])
            da = sdir.dot(a - fc) - half
            db = sdir.dot(b - fc) - half
            if da <= _CLIP_TOL and n_out < 8:  # (a corner on the side line counts as inside: no near-duplicates)
                for c in ti.static(range(3)):
                    out[n_out, c] = a[c]
                n_out += 1
            if (da < -_CLIP_TOL and db > _CLIP_TOL) or (da > _CLIP_TOL and db < -_CLIP_TOL):
                if n_out < 8:
                    x = a + (b - a) * (da / (da - db))
                    for c in ti.static(range(3)):
                        out[n_out, c] = x[c]
                    n_out += 1
        poly = out
        count = n_out
    for k in range(count):
        x = vec3(poly[k, 0], poly[k, 1], poly[k, 2])
        depth = -(x - fc).dot(nr)
        if depth > -margin:
            emit(D, slots, x, n_pair, depth, FEAT_EDGE + 16 + k, False)


@ti.func
def core_half(s, rot):
    """Half of the core segment (world) of shape ``s`` on a link turned by ``rot``: a cylinder's axis from
    centre to cap, zero for other shapes."""
    h = vec3(0.0, 0.0, 0.0)
    if s.kind == CYLINDER:
        h = vec3(rot[0, 2], rot[1, 2], rot[2, 2]) * s.prm[1]
    return h


@ti.func
def collide_polyhedral(D: ti.template(), slots, margin, si, pi, sj, pj):
    """Boxes, cylinders and convex meshes: the contact normal is the face axis of least overlap (a
    separating-axis test over both shapes' face normals and the centre line), shared by all contacts of
    the pair; contacts are the sample points of each shape inside (or within the margin of) the other,
    with their depth measured along that normal. The body is shape ``si`` at pose ``pi``, the other ``sj`` at
    ``pj``; contacts go to ``slots``."""
    pos, rot, posj, rotj = pi.pos, pi.rot, pj.pos, pj.rot
    prm, prmj = si.prm, sj.prm
    best = 1e300
    n = vec3(0.0, 0.0, 1.0)
    n_axes = sj.n_planes + si.n_planes + 1
    best_k = -1
    for k in range(n_axes):
        axis = vec3(0.0, 0.0, 0.0)
        if k < sj.n_planes:
            pl = plane_at(D.plane, sj.plane0 + k)
            axis = rotj @ vec3(pl[0], pl[1], pl[2])
        elif k < n_axes - 1:
            pl = plane_at(D.plane, si.plane0 + k - sj.n_planes)
            axis = -(rot @ vec3(pl[0], pl[1], pl[2]))
        else:  # between the bodies' cores: a cylinder's axis segment, another shape's centre
            on_i, on_j = closest_points_segments(pos - core_half(si, rot), pos + core_half(si, rot),
                                                 posj - core_half(sj, rotj), posj + core_half(sj, rotj))
            axis = on_i - on_j
            if axis.norm() <= 1e-9 * (pos - posj).norm():
                axis = pos - posj
        if axis.norm() > 1e-12:
            axis = axis / axis.norm()
            overlap = support(D.point, sj, posj, rotj, axis) + \
                support(D.point, si, pos, rot, -axis)
            if overlap < best - 1e-12:
                best = overlap
                n = axis
                best_k = k
    # two boxes: also the 9 edge-edge axes; one wins only when clearly better than every face axis (so
    # resting face contacts never flip to an edge), and then the pair touches edge on edge (crossed beams)
    edge_a = -1
    edge_b = -1
    if si.kind == BOX and sj.kind == BOX:
        best_face = best
        for k in range(9):
            a = k // 3
            b = k % 3
            axis = vec3(rotj[0, a], rotj[1, a], rotj[2, a]).cross(vec3(rot[0, b], rot[1, b], rot[2, b]))
            if axis.norm() > 1e-6:
                axis = axis / axis.norm()
                if axis.dot(pos - posj) < 0.0:
                    axis = -axis
                overlap = support(D.point, sj, posj, rotj, axis) + \
                    support(D.point, si, pos, rot, -axis)
                if overlap < best - 1e-12 and overlap < 0.95 * best_face - 1e-9:
                    best = overlap
                    n = axis
                    edge_a = a
                    edge_b = b
    if best > -margin and edge_a >= 0:
        # the supporting edge of each box: parallel to its axis, at the corner side that faces the other box
        cj = posj
        ci = pos
        for k in ti.static(range(3)):
            if k != edge_a:
                dj = vec3(rotj[0, k], rotj[1, k], rotj[2, k])
                cj += (1.0 if dj.dot(n) > 0.0 else -1.0) * prmj[k] * dj
            if k != edge_b:
                di = vec3(rot[0, k], rot[1, k], rot[2, k])
                ci += (1.0 if di.dot(n) < 0.0 else -1.0) * prm[k] * di
        ej = vec3(rotj[0, edge_a], rotj[1, edge_a], rotj[2, edge_a]) * prmj[edge_a]
        ei = vec3(rot[0, edge_b], rot[1, edge_b], rot[2, edge_b]) * prm[edge_b]
        _on_j, on_i = closest_points_segments(cj - ej, cj + ej, ci - ei, ci + ei)
        emit(D, slots, on_i, n, best, FEAT_EDGE + edge_a * 3 + edge_b, False)
    elif best > -margin and si.kind == BOX and sj.kind == BOX and best_k < n_axes - 1:
        # two boxes meeting face to face: the incident face clipped to the reference face (crossed beams
        # touch where neither has a corner inside the other)
        if best_k < sj.n_planes:
            box_face_contacts(D, slots, margin, pj, prmj, pi, prm, n, n)
        else:
            box_face_contacts(D, slots, margin, pi, prm, pj, prmj, -n, n)
    elif best > -margin:
        found = clipped_face_contacts(D, slots, margin, si, pi, sj, pj, n)
        if found == 0:  # faces that do not overlap across the normal: each body's sample points inside the other
            front_j = support(D.point, sj, posj, rotj, n)
            back_i = -support(D.point, si, pos, rot, -n)
            to_j = rot.transpose() @ (-n)
            for k in range(sample_count(si.kind, si.n_points)):
                pb, ok = sample_point(D.point, si.point0, si.n_points, si.kind, prm, to_j, k)
                pw = pos + rot @ pb
                sd, _nj = shape_sdf(sj.kind, prmj, rotj.transpose() @ (pw - posj), D.plane, sj.plane0, sj.n_planes)
                if ok and sd < margin:
                    emit(D, slots, pw, n, front_j - n.dot(pw), FEAT_POINT + k, True)
            to_i = rotj.transpose() @ n
            for k in range(sample_count(sj.kind, sj.n_points)):
                pb, ok = sample_point(D.point, sj.point0, sj.n_points, sj.kind, prmj, to_i, k)
                pw = posj + rotj @ pb
                sd, _ni = shape_sdf(si.kind, prm, rot.transpose() @ (pw - pos), D.plane, si.plane0, si.n_planes)
                if ok and sd < margin:
                    emit(D, slots, pw, n, n.dot(pw) - back_i, FEAT_OTHER_POINT + k, True)
