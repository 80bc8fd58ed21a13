"""Narrowphase: contact points of every shape against the ground plane, height maps and other shapes.

Each pair owns a fixed range of contact slots in its env, so the contact
order is deterministic (bit-identical replays) without atomics; contacts beyond a pair's capacity
are counted in the second component of ``c_count`` (count, dropped) and dropped. Depth is positive when the shapes overlap; speculative
contacts (gaps up to ``margin``) have negative depth. Normals point from the ``a`` side (static
geometry, or the pair's other body) to the pair's body.
"""
import taichi as ti

from .layout import (B_NPL, B_NPT, B_PL0, B_PT0, B_QS, B_TYPE, B_US, BOX, CAPSULE, CYLINDER, F_INFL, F_P0, F_P1,
                     F_P2, F_P3, F_RAD, FEAT_BELOW, FEAT_EDGE, FEAT_OTHER_POINT, FEAT_SOIL, FEAT_POINT, FEAT_TRIANGLE, FEAT_VERTEX,
                     P_BODY, P_CAP, P_KIND, P_OTHER, P_SLOT, PAIR_GROUND, PAIR_HEIGHTMAP, PAIR_SHAPES, PAIR_SOIL,
                     SPHERE)
from .footprint import MAX_HULL, cell_coverage, footprint_hull
from .heightmap import (cell_range, hm_local, hm_surface, hm_triangle, hm_vertex, is_local_closest,
                        segment_triangle_contacts, vertex_range)
from .math import closest_point_segment, closest_points_segments, is_finite, quat_to_mat, vec3, vec4
from .soil import sample_area
from .shapes import cylinder_support, shape_exit, shape_ray_entry, shape_sdf

mat3 = ti.math.mat3
_DEDUPE_EPS = 1e-9  # [m] two contacts of one pair closer than this are one contact
_RIDGE_TOL = 1e-12  # [m] signed-distance tie tolerance of the ridge test
_CLIP_TOL = 1e-9  # [m] a point this close to a reference-face side line is on it (box face clipping)


@ti.func
def body_pose(q: ti.template(), e, qs):
    """World position and rotation matrix of the link whose coordinates start at ``q[e, qs]``."""
    pos = vec3(q[e, qs], q[e, qs + 1], q[e, qs + 2])
    quat = vec4(q[e, qs + 3], q[e, qs + 4], q[e, qs + 5], q[e, qs + 6])
    return pos, quat_to_mat(quat / quat.norm())


@ti.func
def body_sweep_speed(u: ti.template(), e, us, radius):
    """Bound on the speed of any point of a body [m/s]: |v| + |w| r, r the bounding radius."""
    v = vec3(u[e, us], u[e, us + 1], u[e, us + 2])
    w = vec3(u[e, us + 3], u[e, us + 4], u[e, us + 5])
    return v.norm() + w.norm() * radius


@ti.func
def emit(c_count: ti.template(), c_pos: ti.template(), c_nrm: ti.template(),
         c_depth: ti.template(), c_feat: ti.template(), e, p, base, cap, pt, n, depth, feat, dedupe):
    """Append one contact (world point, unit normal, depth [m], feature id) to pair ``p`` of env ``e``."""
    cnt = c_count[e, p][0]
    dup = False
    if dedupe:
        for k in range(cnt):
            if (c_pos[e, base + k] - pt).norm() < _DEDUPE_EPS:
                dup = True
    if not dup:
        if cnt < cap:
            c_pos[e, base + cnt] = pt
            c_nrm[e, base + cnt] = n
            c_depth[e, base + cnt] = depth
            c_feat[e, base + cnt] = feat
            c_count[e, p][0] = cnt + 1
        else:
            c_count[e, p][1] += 1


@ti.func
def vertex_depth(hm_heights: ti.template(), off, nx, ny, x0, y0, dx, dy, ix, iy, c_l, r_l, stype, prm,
                 planes: ti.template(), pl0, npl):
    """How far grid sample (ix, iy) pokes into the shape (link at c_l, rotation r_l in the map frame),
    measured straight down the map's -z to the shape's underside [m], and the outward link-frame normal
    of the face there; -1 when the sample is outside the shape, outside the grid or a hole."""
    depth = -1.0
    n = vec3(0.0, 0.0, -1.0)
    if ix >= 0 and iy >= 0 and ix < nx and iy < ny:
        v = hm_vertex(hm_heights, off, nx, x0, y0, dx, dy, ix, iy)
        if is_finite(v[2]):
            pb = r_l.transpose() @ (v - c_l)
            sd, _n = shape_sdf(stype, prm, pb, planes, pl0, npl)
            if sd < 0.0:
                t, nb = shape_exit(stype, prm, pb, r_l.transpose() @ vec3(0.0, 0.0, -1.0), planes, pl0, npl)
                if t < 1e300:
                    depth = t
                    n = nb
    return depth, n


@ti.func
def sample_point(points: ti.template(), pt0, npt, stype, prm, down_b, k):
    """Link-frame sample point ``k`` of a shape: its stored points, then, for a cylinder, the lowest point
    of each rim along the link-frame direction ``down_b``; ``ok`` is False for a rim parallel to it."""
    pb = vec3(0.0, 0.0, 0.0)
    ok = True
    if k < npt:
        pb = points[pt0 + k]
    else:
        pb, ok = cylinder_support(prm, down_b, k - npt)
    return pb, ok


@ti.func
def separated_by_face(a, b, c_l, r_l, planes: ti.template(), pl0, npl):
    """Whether segment ab lies wholly outside one face plane of the shape (link at c_l, rotation r_l), so
    that it cannot cut into it (a cheap exact rejection before the deepest-point search)."""
    pa = r_l.transpose() @ (a - c_l)
    pb = r_l.transpose() @ (b - c_l)
    out = False
    for k in range(npl):
        pl = planes[pl0 + k]
        nk = vec3(pl[0], pl[1], pl[2])
        if nk.dot(pa) > pl[3] and nk.dot(pb) > pl[3]:
            out = True
    return out


@ti.func
def ridge_edge_contacts(hm_heights: ti.template(), off, nx, ny, x0, y0, dx, dy, o, rm, c_l, r_l, lo, hi_, stype,
                        prm,
                        planes: ti.template(), pl0, npl, e, p, base, cap, c_count: ti.template(),
                        c_pos: ti.template(), c_nrm: ti.template(), c_depth: ti.template(),
                        c_feat: ti.template()):
    """Triangle edges along convex creases (ridges) that cut into a box, cylinder or mesh between grid
    samples: the deepest point of each such edge inside the shape pushes along the shape's underside, like a
    poking sample. Catches a body resting on a ridge whose samples all lie outside its footprint."""
    ix0, ix1 = cell_range(lo[0], hi_[0], x0, dx, nx)
    iy0, iy1 = cell_range(lo[1], hi_[1], y0, dy, ny)
    z_low = lo[2]
    for iy in range(iy0, iy1 + 2):
        for ix in range(ix0, ix1 + 2):
            for k in range(3):
                # edge k from sample (ix, iy): 0 along +x, 1 along +y, 2 the cell diagonal; f1, f2 are the far
                # corners of the two triangles sharing it (their midpoint lies under the edge's midpoint)
                bx = ix + (1 if k != 1 else 0)
                by = iy + (1 if k != 0 else 0)
                f1x, f1y, f2x, f2y = ix + 1, iy + 1, ix, iy - 1
                if k == 1:
                    f2x, f2y = ix - 1, iy
                elif k == 2:
                    f1x, f1y, f2x, f2y = ix + 1, iy, ix, iy + 1
                if bx < nx and by < ny and iy < ny and ix < nx:
                    a = hm_vertex(hm_heights, off, nx, x0, y0, dx, dy, ix, iy)
                    b = hm_vertex(hm_heights, off, nx, x0, y0, dx, dy, bx, by)
                    ridge = is_finite(a[2]) and is_finite(b[2]) and ti.max(a[2], b[2]) > z_low
                    f1_in = f1x >= 0 and f1y >= 0 and f1x < nx and f1y < ny
                    f2_in = f2x >= 0 and f2y >= 0 and f2x < nx and f2y < ny
                    if ridge and f1_in and f2_in:  # inside the grid: a crease bent downwards on both sides
                        far = 0.5 * (hm_heights[off + f1y * nx + f1x] + hm_heights[off + f2y * nx + f2x])
                        ridge = 0.5 * (a[2] + b[2]) > far + _RIDGE_TOL
                    # (an edge on the grid's border is a drop on its open side: it counts as a ridge)
                    if ridge and not separated_by_face(a, b, c_l, r_l, planes, pl0, npl):
                        t = deepest_on_segment(a, b, stype, prm, c_l, r_l, planes, pl0, npl)
                        pt = a + (b - a) * t
                        pb = r_l.transpose() @ (pt - c_l)
                        sd, _n = shape_sdf(stype, prm, pb, planes, pl0, npl)
                        if sd < 0.0 and t > 1e-6 and t < 1.0 - 1e-6:
                            depth, nb = shape_exit(stype, prm, pb, r_l.transpose() @ vec3(0.0, 0.0, -1.0), planes,
                                                   pl0, npl)
                            n_l = -(r_l @ nb)
                            if depth < 1e300 and n_l[2] > 0.0:
                                emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap, o + rm @ pt,
                                     rm @ n_l, depth * n_l[2], FEAT_EDGE + 3 * (iy * nx + ix) + k, False)


@ti.func
def soil_quadrature(e, p, base, cap, margin, pos, rot, stype, prm, rad, pl0, npl, m, planes: ti.template(),
                    points: ti.template(), pt0, npt, hm_int: ti.template(), hm_geom: ti.template(),
                    hm_frame: ti.template(), hm_heights: ti.template(), soil_state: ti.template(),
                    c_count: ti.template(), c_pos: ti.template(), c_nrm: ti.template(),
                    c_depth: ti.template(), c_feat: ti.template(), c_target: ti.template()):
    """Soil quadrature points of one body on bed ``m``: one per bed sample under the body, where a ray
    along the bed's +z from below meets the body's underside. The contact sits at that point, its normal
    is the bed's +z, and its depth is the gap from the underside down to the rut floor (undeformed height
    minus plastic sinkage): positive while the body approaches, negative while it compresses the soil.
    Points within ``margin`` above the floor are kept (they carry no force until loaded)."""
    off, nx, ny, soil0, dx, dy, x0, y0, o, rm, c_l, r_l = hm_local(hm_int, hm_geom, hm_frame, m, pos, rot)
    up_b = r_l.transpose() @ vec3(0.0, 0.0, 1.0)
    z_start = c_l[2] - 2.0 * rad  # below the whole body
    # a box's footprint weights each sample by the part of its cell the box covers (exact total area);
    # other shapes give each sample whose ray meets them its whole cell
    covered = stype == BOX
    hull = ti.Matrix.zero(float, MAX_HULL, 2)
    nh = 0
    if covered:
        hull, nh = footprint_hull(points, pt0, npt, c_l, r_l)
    gx1 = x0 + (nx - 1) * dx
    gy1 = y0 + (ny - 1) * dy
    jx0, jx1 = vertex_range(c_l[0] - rad - 0.5 * dx, c_l[0] + rad + 0.5 * dx, x0, dx, nx)
    jy0, jy1 = vertex_range(c_l[1] - rad - 0.5 * dy, c_l[1] + rad + 0.5 * dy, y0, dy, ny)
    for jy in range(jy0, jy1 + 1):
        for jx in range(jx0, jx1 + 1):
            idx = jy * nx + jx
            vx = x0 + jx * dx
            vy = y0 + jy * dy
            area = sample_area(jx, jy, nx, ny, dx, dy)
            ray = ti.math.vec2(vx, vy)
            if covered:
                # a cell cut by the outline acts at the centroid of its covered part (inside the footprint)
                area, ray = cell_coverage(hull, nh, ti.max(vx - 0.5 * dx, x0), ti.min(vx + 0.5 * dx, gx1),
                                          ti.max(vy - 0.5 * dy, y0), ti.min(vy + 0.5 * dy, gy1))
                if area < 1e-9 * dx * dy:  # an outline running along the cell's edge: rounding, not cover
                    area = 0.0
            if area > 0.0:
                start = vec3(ray[0], ray[1], z_start)
                hit, t = shape_ray_entry(stype, prm, r_l.transpose() @ (start - c_l), up_b, planes, pl0, npl)
                if hit:
                    floor = hm_heights[off + idx] - soil_state[e, soil0 + idx][1]
                    under = vec3(ray[0], ray[1], z_start + t)
                    gap = under[2] - floor
                    if gap < margin:
                        before = c_count[e, p][0]
                        emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap, o + rm @ under,
                             rm @ vec3(0.0, 0.0, 1.0), gap, FEAT_SOIL + idx, False)
                        if c_count[e, p][0] > before:
                            c_target[e, base + before][1] = area


# --------------------------------------------------------------------------- shape pairs
@ti.func
def support(points: ti.template(), pt0, npt, stype, prm, pos, rot, n):
    """Largest projection on the world direction ``n`` of a link's sample points [m] (for a cylinder,
    including the rim points furthest along ``n``)."""
    best = -1e300
    nb = rot.transpose() @ n
    n_extra = 2 if stype == CYLINDER else 0
    for k in range(npt + n_extra):
        pb, ok = sample_point(points, pt0, npt, stype, prm, nb, k)
        if ok:
            best = ti.max(best, nb.dot(pb))
    return best + n.dot(pos)


@ti.func
def deepest_on_segment(p0, p1, stype, prm, pos, rot, planes: ti.template(), pl0, npl):
    """Parameter t in [0, 1] of the point of segment p0p1 (world) deepest in the shape (link at pos, rot):
    the signed distance of a convex shape is convex along a segment, so a golden-section search finds it."""
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
def collide_rounded(points: ti.template(), planes: ti.template(), e, p, base, cap, margin, pos, rot, bd, prm,
                    infl, posj, rotj, bdj, prmj, inflj, c_count: ti.template(),
                    c_pos: ti.template(), c_nrm: ti.template(), c_depth: ti.template(), c_feat: ti.template()):
    """Pairs with a sphere or capsule (a segment inflated by its radius; a sphere's segment has zero length).
    Two rounded shapes: the closest points of their segments, plus each end point against the other
    segment (parallel capsules rest on two points). A rounded shape against a box, cylinder or mesh: the
    segment's end points and its deepest interior point against that shape's signed distance. Normals point
    from the pair's other body (j) to its body (i)."""
    p0i = pos + rot @ points[bd[B_PT0]]
    p1i = pos + rot @ points[bd[B_PT0] + bd[B_NPT] - 1]
    p0j = posj + rotj @ points[bdj[B_PT0]]
    p1j = posj + rotj @ points[bdj[B_PT0] + bdj[B_NPT] - 1]
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
                emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap, ci - nw * infl, nw, -sd,
                     FEAT_POINT + k, True)
    else:
        # the rounded side r against the polyhedral side s; sgn turns normals into "from j to i"
        r0, r1, rad = p0i, p1i, infl
        s_type, s_prm, s_pos, s_rot, s_pl0, s_npl = bdj[B_TYPE], prmj, posj, rotj, bdj[B_PL0], bdj[B_NPL]
        sgn = 1.0
        if infl == 0.0:
            r0, r1, rad = p0j, p1j, inflj
            s_type, s_prm, s_pos, s_rot, s_pl0, s_npl = bd[B_TYPE], prm, pos, rot, bd[B_PL0], bd[B_NPL]
            sgn = -1.0
        t_deep = deepest_on_segment(r0, r1, s_type, s_prm, s_pos, s_rot, planes, s_pl0, s_npl)
        for k in range(3):
            t = 0.0 if k == 0 else (1.0 if k == 1 else t_deep)
            pw = r0 + (r1 - r0) * t
            sd, ns = shape_sdf(s_type, s_prm, s_rot.transpose() @ (pw - s_pos), planes, s_pl0, s_npl)
            sd -= rad
            if sd < margin:
                n_out = s_rot @ ns  # outward from the polyhedral side, towards the rounded one
                emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap, pw - n_out * rad,
                     sgn * n_out, -sd, FEAT_POINT + k, True)


@ti.func
def box_face_contacts(c_r, r_r, h_r, c_i, r_i, h_i, nr, n_pair, margin, e, p, base, cap, c_count: ti.template(),
                      c_pos: ti.template(), c_nrm: ti.template(), c_depth: ti.template(), c_feat: ti.template()):
    """Contacts of an incident box face against a reference box face with outward normal ``nr``: the
    incident face's corners clipped (Sutherland-Hodgman) to the reference face's rectangle, each kept point
    with its depth below the reference face, emitted with the pair's normal ``n_pair`` (from its ``a`` side
    to its body: ``nr`` when the reference box is the ``a`` side, ``-nr`` otherwise)."""
    # reference face: the box axis most parallel to nr
    ra = 0
    for k in ti.static(range(1, 3)):
        if ti.abs(vec3(r_r[0, k], r_r[1, k], r_r[2, k]).dot(nr)) > ti.abs(vec3(r_r[0, ra], r_r[1, ra],
                                                                                  r_r[2, ra]).dot(nr)):
            ra = k
    ax = vec3(r_r[0, ra], r_r[1, ra], r_r[2, ra])
    fc = c_r + (1.0 if ax.dot(nr) > 0.0 else -1.0) * h_r[ra] * ax
    ua = (ra + 1) % 3
    va = (ra + 2) % 3
    u_dir = vec3(r_r[0, ua], r_r[1, ua], r_r[2, ua])
    v_dir = vec3(r_r[0, va], r_r[1, va], r_r[2, va])
    # incident face: the other box's face most anti-parallel to nr
    ia = 0
    for k in ti.static(range(1, 3)):
        if ti.abs(vec3(r_i[0, k], r_i[1, k], r_i[2, k]).dot(nr)) > ti.abs(vec3(r_i[0, ia], r_i[1, ia],
                                                                                  r_i[2, ia]).dot(nr)):
            ia = k
    bx = vec3(r_i[0, ia], r_i[1, ia], r_i[2, ia])
    ic = c_i + (-1.0 if bx.dot(nr) > 0.0 else 1.0) * h_i[ia] * bx
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
            emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap, x, n_pair, depth, FEAT_EDGE + 16 + k,
                 False)


@ti.func
def collide_polyhedral(points: ti.template(), planes: ti.template(), e, p, base, cap, margin, pos, rot, bd, prm,
                       posj, rotj, bdj, prmj, c_count: ti.template(),
                       c_pos: ti.template(), c_nrm: ti.template(), c_depth: ti.template(), c_feat: ti.template()):
    """Boxes, cylinders and convex meshes: the contact normal is the face axis of least overlap (a
    separating-axis test over both shapes' face normals and the centre line), shared by all contacts of
    the pair; contacts are the sample points of each shape inside (or within the margin of) the other,
    with their depth measured along that normal."""
    best = 1e300
    n = vec3(0.0, 0.0, 1.0)
    n_axes = bdj[B_NPL] + bd[B_NPL] + 1
    best_k = -1
    for k in range(n_axes):
        axis = vec3(0.0, 0.0, 0.0)
        if k < bdj[B_NPL]:
            pl = planes[bdj[B_PL0] + k]
            axis = rotj @ vec3(pl[0], pl[1], pl[2])
        elif k < n_axes - 1:
            pl = planes[bd[B_PL0] + k - bdj[B_NPL]]
            axis = -(rot @ vec3(pl[0], pl[1], pl[2]))
        else:
            axis = pos - posj
        if axis.norm() > 1e-12:
            axis = axis / axis.norm()
            overlap = support(points, bdj[B_PT0], bdj[B_NPT], bdj[B_TYPE], prmj, posj, rotj, axis) + \
                support(points, bd[B_PT0], bd[B_NPT], bd[B_TYPE], prm, pos, rot, -axis)
            if overlap < best - 1e-12:
                best = overlap
                n = axis
                best_k = k
    # two boxes: also the 9 edge-edge axes; one wins only when clearly better than every face axis (so
    # resting face contacts never flip to an edge), and then the pair touches edge on edge (crossed beams)
    edge_a = -1
    edge_b = -1
    if bd[B_TYPE] == BOX and bdj[B_TYPE] == BOX:
        best_face = best
        for k in range(9):
            a = k // 3
            b = k % 3
            axis = vec3(rotj[0, a], rotj[1, a], rotj[2, a]).cross(vec3(rot[0, b], rot[1, b], rot[2, b]))
            if axis.norm() > 1e-6:
                axis = axis / axis.norm()
                if axis.dot(pos - posj) < 0.0:
                    axis = -axis
                overlap = support(points, bdj[B_PT0], bdj[B_NPT], bdj[B_TYPE], prmj, posj, rotj, axis) + \
                    support(points, bd[B_PT0], bd[B_NPT], bd[B_TYPE], prm, pos, rot, -axis)
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
        on_j, on_i = closest_points_segments(cj - ej, cj + ej, ci - ei, ci + ei)
        emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap, on_i, n, best, FEAT_EDGE + edge_a * 3 + edge_b,
             False)
    elif best > -margin and bd[B_TYPE] == BOX and bdj[B_TYPE] == BOX and best_k < n_axes - 1:
        # two boxes meeting face to face: the incident face clipped to the reference face (crossed beams
        # touch where neither has a corner inside the other)
        if best_k < bdj[B_NPL]:
            box_face_contacts(posj, rotj, prmj, pos, rot, prm, n, n, margin, e, p, base, cap, c_count, c_pos,
                              c_nrm, c_depth, c_feat)
        else:
            box_face_contacts(pos, rot, prm, posj, rotj, prmj, -n, n, margin, e, p, base, cap, c_count, c_pos,
                              c_nrm, c_depth, c_feat)
    elif best > -margin:
        front_j = support(points, bdj[B_PT0], bdj[B_NPT], bdj[B_TYPE], prmj, posj, rotj, n)
        back_i = -support(points, bd[B_PT0], bd[B_NPT], bd[B_TYPE], prm, pos, rot, -n)
        to_j = rot.transpose() @ (-n)
        for k in range(bd[B_NPT] + (2 if bd[B_TYPE] == CYLINDER else 0)):
            pb, ok = sample_point(points, bd[B_PT0], bd[B_NPT], bd[B_TYPE], prm, to_j, k)
            pw = pos + rot @ pb
            sd, _nj = shape_sdf(bdj[B_TYPE], prmj, rotj.transpose() @ (pw - posj), planes, bdj[B_PL0], bdj[B_NPL])
            if ok and sd < margin:
                emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap, pw, n, front_j - n.dot(pw),
                     FEAT_POINT + k, True)
        to_i = rotj.transpose() @ n
        for k in range(bdj[B_NPT] + (2 if bdj[B_TYPE] == CYLINDER else 0)):
            pb, ok = sample_point(points, bdj[B_PT0], bdj[B_NPT], bdj[B_TYPE], prmj, to_i, k)
            pw = posj + rotj @ pb
            sd, _ni = shape_sdf(bd[B_TYPE], prm, rot.transpose() @ (pw - pos), planes, bd[B_PL0], bd[B_NPL])
            if ok and sd < margin:
                emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap, pw, n, n.dot(pw) - back_i,
                     FEAT_OTHER_POINT + k, True)


# --------------------------------------------------------------------------- one pair
@ti.func
def collide_pair(e, p, q: ti.template(), u: ti.template(), body_i: ti.template(), body_f: ti.template(),
                 points: ti.template(), planes: ti.template(), pair_i: ti.template(), hm_int: ti.template(),
                 hm_geom: ti.template(), hm_frame: ti.template(), hm_heights: ti.template(), ground_height,
                 margin_base, dt, c_count: ti.template(), c_pos: ti.template(), c_nrm: ti.template(),
                 c_depth: ti.template(), c_feat: ti.template(), c_target: ti.template(), soil_state: ti.template()):
    """Fill the contact slots of pair ``p`` in env ``e`` from the link poses in ``q``.

    Speculative contacts reach ``margin_base`` plus how far the pair's bodies can move in one step (speed
    of the centre plus spin times bounding radius, times ``dt``), so a fast body meets a thin obstacle as
    a speculative contact before it can pass through it."""
    c_count[e, p] = ti.math.ivec2(0, 0)
    pr = pair_i[p]
    base, cap, kind = pr[P_SLOT], pr[P_CAP], pr[P_KIND]
    bi = pr[P_BODY]
    bd = body_i[bi]
    bf = body_f[bi]
    margin = margin_base
    if kind != PAIR_SOIL:  # (soil points ahead of the body carry no force; their count stays bounded)
        margin += dt * body_sweep_speed(u, e, bd[B_US], bf[F_RAD])
        if kind == PAIR_SHAPES:
            margin += dt * body_sweep_speed(u, e, body_i[pr[P_OTHER]][B_US], body_f[pr[P_OTHER]][F_RAD])
    stype, pt0, npt = bd[B_TYPE], bd[B_PT0], bd[B_NPT]
    prm = vec4(bf[F_P0], bf[F_P1], bf[F_P2], bf[F_P3])
    infl = bf[F_INFL]
    pos, rot = body_pose(q, e, bd[B_QS])
    if kind == PAIR_GROUND:
        up = vec3(0.0, 0.0, 1.0)
        n_extra = 2 if stype == CYLINDER else 0
        down_b = rot.transpose() @ (-up)
        for k in range(npt + n_extra):
            pb, ok = sample_point(points, pt0, npt, stype, prm, down_b, k)
            pw = pos + rot @ pb
            depth = ground_height - (pw[2] - infl)
            if ok and depth > -margin:
                emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap,
                     vec3(pw[0], pw[1], ground_height), up, depth, FEAT_POINT + k, False)
    elif kind == PAIR_SOIL:
        soil_quadrature(e, p, base, cap, margin, pos, rot, stype, prm, bf[F_RAD], bd[B_PL0], bd[B_NPL], pr[P_OTHER],
                        planes, points, pt0, npt, hm_int, hm_geom, hm_frame, hm_heights, soil_state, c_count,
                        c_pos, c_nrm, c_depth, c_feat, c_target)
    elif kind == PAIR_HEIGHTMAP:
        off, nx, ny, _soil0, dx, dy, x0, y0, o, rm, c_l, r_l = hm_local(hm_int, hm_geom, hm_frame, pr[P_OTHER],
                                                                        pos, rot)
        if stype == SPHERE or stype == CAPSULE:
            # exact sphere-swept segment (a sphere: zero length) against the triangles
            p0 = c_l + r_l @ points[pt0]
            p1 = c_l + r_l @ points[pt0 + npt - 1]
            for k in range(npt):
                pk = p0 if k == 0 else p1
                found, a, tn = hm_surface(hm_heights, off, nx, ny, x0, y0, dx, dy, pk[0], pk[1])
                if found:
                    below = tn.dot(a - pk)
                    if below > 0.0:  # the centre is inside the terrain: push out through the surface
                        emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap,
                             o + rm @ (pk + tn * below), rm @ tn, below + infl, FEAT_BELOW + k, False)
            lo = ti.min(p0, p1) - (infl + margin)
            hi_ = ti.max(p0, p1) + (infl + margin)
            ix0, ix1 = cell_range(lo[0], hi_[0], x0, dx, nx)
            iy0, iy1 = cell_range(lo[1], hi_[1], y0, dy, ny)
            for iy in range(iy0, iy1 + 1):
                for ix in range(ix0, ix1 + 1):
                    for t in range(2):
                        a, b, c = hm_triangle(hm_heights, off, nx, x0, y0, dx, dy, ix, iy, t)
                        # skip holes and triangles entirely below the swept sphere
                        if (is_finite(a[2]) and is_finite(b[2]) and is_finite(c[2])
                                and lo[2] <= ti.max(a[2], b[2], c[2])):
                            nn = (b - a).cross(c - a)
                            tn = nn / nn.norm()
                            n_cp, cs0, ct0, cs1, ct1 = segment_triangle_contacts(p0, p1, a, b, c, tn)
                            for j in range(n_cp):
                                cs = cs0 if j == 0 else cs1
                                ct = ct0 if j == 0 else ct1
                                d = (cs - ct).norm()
                                keep = tn.dot(cs - a) > 0.0 and d < infl + margin and d > 1e-12
                                # a closest point on the triangle's boundary must be a local minimum over the map
                                tol = 1e-9 * (dx + dy)
                                if keep and (cs - tn * tn.dot(cs - a) - ct).norm() > tol:
                                    keep = is_local_closest(hm_heights, off, nx, ny, x0, y0, dx, dy, ix, iy, cs, ct,
                                                            d, tol)
                                if keep:
                                    emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap,
                                         o + rm @ ct, rm @ ((cs - ct) / d), infl - d,
                                         FEAT_TRIANGLE + 2 * (2 * (iy * nx + ix) + t) + j, True)
        else:
            # sample points of the shape against the triangle below each of them
            n_extra = 2 if stype == CYLINDER else 0
            down_b = r_l.transpose() @ vec3(0.0, 0.0, -1.0)
            # the shape's box in the map frame from its sample points: terrain outside it, or below its lowest
            # point, cannot poke in (cylinder rims: pad for the arcs between the rim points)
            lo = c_l
            hi_ = c_l
            for k in range(npt + n_extra):
                pb, ok = sample_point(points, pt0, npt, stype, prm, down_b, k)
                pl = c_l + r_l @ pb
                if ok:
                    lo = ti.min(lo, pl)
                    hi_ = ti.max(hi_, pl)
                found, a, tn = hm_surface(hm_heights, off, nx, ny, x0, y0, dx, dy, pl[0], pl[1])
                if ok and found:
                    depth = tn.dot(a - pl)
                    if depth > -margin:
                        emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap,
                             o + rm @ (pl + tn * depth), rm @ tn, depth, FEAT_POINT + k, False)
            # terrain samples that poke into the shape's underside along a ridge or at a peak: a
            # sample whose depth is a maximum along x or y (>= both neighbours, > at least one)
            pad = 0.08 * prm[0] if stype == CYLINDER else 0.0  # 1 - cos(pi / 8) of the radius
            lo -= vec3(pad, pad, 0.0)
            hi_ += vec3(pad, pad, 0.0)
            z_low = lo[2]
            pl0, npl = bd[B_PL0], bd[B_NPL]
            jx0, jx1 = vertex_range(lo[0], hi_[0], x0, dx, nx)
            jy0, jy1 = vertex_range(lo[1], hi_[1], y0, dy, ny)
            for jy in range(jy0, jy1 + 1):
                for jx in range(jx0, jx1 + 1):
                    if hm_heights[off + jy * nx + jx] > z_low:
                        depth, nb = vertex_depth(hm_heights, off, nx, ny, x0, y0, dx, dy, jx, jy, c_l, r_l, stype,
                                                 prm, planes, pl0, npl)
                        n_l = -(r_l @ nb)
                        if depth > 0.0 and n_l[2] > 0.0:
                            ridge = False
                            for axis in range(2):
                                ox = 1 - axis
                                oy = axis
                                dm, _n0 = vertex_depth(hm_heights, off, nx, ny, x0, y0, dx, dy, jx - ox, jy - oy, c_l,
                                                       r_l, stype, prm, planes, pl0, npl)
                                dp, _n1 = vertex_depth(hm_heights, off, nx, ny, x0, y0, dx, dy, jx + ox, jy + oy, c_l,
                                                       r_l, stype, prm, planes, pl0, npl)
                                if (depth >= dm - _RIDGE_TOL and depth >= dp - _RIDGE_TOL
                                        and (depth > dm + _RIDGE_TOL or depth > dp + _RIDGE_TOL)):
                                    ridge = True
                            if ridge:
                                v = hm_vertex(hm_heights, off, nx, x0, y0, dx, dy, jx, jy)
                                emit(c_count, c_pos, c_nrm, c_depth, c_feat, e, p, base, cap,
                                     o + rm @ v, rm @ n_l, depth * n_l[2], FEAT_VERTEX + jy * nx + jx, False)
            ridge_edge_contacts(hm_heights, off, nx, ny, x0, y0, dx, dy, o, rm, c_l, r_l, lo, hi_, stype, prm, planes,
                                pl0, npl, e, p, base, cap, c_count, c_pos, c_nrm, c_depth, c_feat)
    else:
        # shape against shape
        bj = pr[P_OTHER]
        bdj = body_i[bj]
        bfj = body_f[bj]
        prmj = vec4(bfj[F_P0], bfj[F_P1], bfj[F_P2], bfj[F_P3])
        inflj = bfj[F_INFL]
        posj, rotj = body_pose(q, e, bdj[B_QS])
        if (pos - posj).norm() < bf[F_RAD] + bfj[F_RAD] + margin:
            if infl > 0.0 or inflj > 0.0:
                # a sphere or capsule: its centre points against the other shape's signed distance
                collide_rounded(points, planes, e, p, base, cap, margin, pos, rot, bd, prm, infl, posj, rotj,
                                bdj, prmj, inflj, c_count, c_pos, c_nrm, c_depth, c_feat)
            else:
                collide_polyhedral(points, planes, e, p, base, cap, margin, pos, rot, bd, prm, posj, rotj,
                                   bdj, prmj, c_count, c_pos, c_nrm, c_depth, c_feat)
