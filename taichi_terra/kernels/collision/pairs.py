"""Narrowphase: contact points of every shape against the ground plane, height maps and other shapes.

Each static pair (a shape with the ground, a height map or a soil bed) owns a fixed range of contact
slots in its env; shape-shape pairs, found each step by the broadphase (``broadphase.py``), take
consecutive slots from a shared pool. Each env is filled serially, so the contact order is
deterministic (bit-identical replays) without atomics; contacts beyond a pair's capacity are counted in
the ``dropped`` column of the ``pair_count`` block and dropped. Depth is positive when the shapes
overlap; speculative contacts (gaps up to ``margin``) have negative depth. Normals point from the ``a``
side (static geometry, or the pair's other body) to the pair's body. Shape-shape contacts are in
``shape_pairs.py``.
"""
import taichi as ti

from ..common.arrays import (
    CONTACT,
    FEATURE,
    MAP_F,
    MAP_I,
    PAIR,
    PAIR_COUNT,
    FOUND_F,
    FOUND_I,
    QUAD_ROW,
    SETTINGS_I,
    SOIL,
    SOIL_CLAIM,
    plane_at,
    point_at,
)
from ..common.layout import (
    BOX,
    CAPSULE,
    CYLINDER,
    FEAT_BELOW,
    FEAT_EDGE,
    FEAT_POINT,
    FEAT_SOIL,
    FEAT_TRIANGLE,
    FEAT_VERTEX,
    PAIR_GROUND,
    PAIR_SOIL,
    SPHERE,
)
from ..common.math import (
    closest_point_triangle,
    is_finite,
    vec3,
)
from ..common.schema import add, get, get3, put, putn, row
from ..soil.law import sample_area
from .footprint import MAX_HULL, cell_coverage, cylinder_hull, footprint_hull, strip_spans
from .heightmap import (
    Grid,
    cell_range,
    hm_local,
    hm_pose,
    hm_surface,
    hm_triangle,
    hm_vertex,
    in_triangle_xy,
    is_local_closest,
    segment_triangle_contacts,
    vertex_range,
)
from ..dynamics.bodies import body_pose, body_position, body_sweep_speed, carrier_joint
from .narrowphase import Pose, Slots, emit, sample_count, sample_point, shape_of
from .shape_pairs import collide_polyhedral, collide_rounded, deepest_on_segment, support
from .shapes import shape_exit, shape_ray_entry, shape_sdf

mat3 = ti.math.mat3
_vec3 = ti.types.vector(3, float)
_hull = ti.types.matrix(MAX_HULL, 2, float)
_RIDGE_TOL = 1e-12  # [m] signed-distance tie tolerance of the ridge test
_PLANAR_TOL = 1e-9  # [m] second differences of heights below this are a plane (_planar_vertex)
#: how far a cylinder's rim bulges out beyond the chords between its stored rim points (``bodies/shapes.py``:
#: ``CYLINDER_RIM_POINTS`` = 8 per rim, 45 degrees apart), as a share of its radius: 1 - cos(pi / 8) = 0.076,
#: rounded up
_RIM_SAGITTA = 0.08


@ti.func
def vertex_depth(D: ti.template(), g, ix, iy, s, local):
    """How far sample (ix, iy) of the map with grid ``g`` pokes into shape ``s`` (its link at pose ``local`` in
    the map frame), measured straight down the map's -z to the shape's underside [m], and the outward
    link-frame normal of the face there; -1 when the sample is outside the shape, outside the grid or a
    hole."""
    c_l, r_l = local.pos, local.rot
    depth = -1.0
    n = vec3(0.0, 0.0, -1.0)
    if ix >= 0 and iy >= 0 and ix < g.nx and iy < g.ny:
        v = hm_vertex(D.heights, g, ix, iy)
        if is_finite(v[2]):
            pb = r_l.transpose() @ (v - c_l)
            sd, _n = shape_sdf(s.kind, s.prm, pb, D.plane, s.plane0, s.n_planes)
            if sd < 0.0:
                t, nb = shape_exit(s.kind, s.prm, pb, r_l.transpose() @ vec3(0.0, 0.0, -1.0), D.plane, s.plane0,
                                   s.n_planes)
                if t < 1e300:
                    depth = t
                    n = nb
    return depth, n


@ti.func
def _planar_vertex(hm_heights: ti.template(), g, ix, iy):
    """Whether grid sample (ix, iy) and its four neighbours lie in one plane (zero second differences along
    x and y, to ``_PLANAR_TOL``): there the terrain is a plane, whose deepest point in a convex shape is found
    by the shape's own sample points against the triangles below them, so the sample is no ridge or peak
    (along the edge of a long box's footprint on flat ground every sample would otherwise count as one:
    its neighbour outside the footprint has no depth)."""
    off, nx = g.off, g.nx
    out = False
    if ix >= 1 and iy >= 1 and ix + 1 < nx and iy + 1 < g.ny:
        h = hm_heights[off + iy * nx + ix]
        ddx = hm_heights[off + iy * nx + ix - 1] + hm_heights[off + iy * nx + ix + 1] - 2.0 * h
        ddy = hm_heights[off + (iy - 1) * nx + ix] + hm_heights[off + (iy + 1) * nx + ix] - 2.0 * h
        out = ti.abs(ddx) <= _PLANAR_TOL and ti.abs(ddy) <= _PLANAR_TOL
    return out


@ti.func
def separated_by_face(a, b, s, local, planes: ti.template()):
    """Whether segment ab lies wholly outside one face plane of shape ``s`` (its link at pose ``local``), so
    that it cannot cut into it (a cheap exact rejection before the deepest-point search)."""
    pa = local.rot.transpose() @ (a - local.pos)
    pb = local.rot.transpose() @ (b - local.pos)
    out = False
    for k in range(s.n_planes):
        pl = plane_at(planes, s.plane0 + k)
        nk = vec3(pl[0], pl[1], pl[2])
        if nk.dot(pa) > pl[3] and nk.dot(pb) > pl[3]:
            out = True
    return out


@ti.func
def ridge_edge_contacts(D: ti.template(), slots, g, frame, s, local, lo, hi_):
    """Triangle edges along convex creases (ridges) that cut into a box, cylinder or mesh (shape ``s``, its
    link at pose ``local`` in the frame of the map with grid ``g``, placed in the world by ``frame``) between
    grid samples, over the map-frame box lo..hi_: the deepest point of each such edge inside the shape pushes
    along the shape's underside, like a poking sample, into ``slots``. Catches a body resting on a
    ridge whose samples all lie outside its footprint."""
    off, nx, ny = g.off, g.nx, g.ny
    o, rm, c_l, r_l = frame.pos, frame.rot, local.pos, local.rot
    ix0, ix1 = cell_range(lo[0], hi_[0], g.x0, g.dx, nx)
    iy0, iy1 = cell_range(lo[1], hi_[1], g.y0, g.dy, ny)
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
                    a = hm_vertex(D.heights, g, ix, iy)
                    b = hm_vertex(D.heights, g, bx, by)
                    ridge = is_finite(a[2]) and is_finite(b[2]) and ti.max(a[2], b[2]) > z_low
                    f1_in = f1x >= 0 and f1y >= 0 and f1x < nx and f1y < ny
                    f2_in = f2x >= 0 and f2y >= 0 and f2x < nx and f2y < ny
                    if ridge and f1_in and f2_in:  # inside the grid: a crease bent downwards on both sides
                        far = 0.5 * (D.heights[off + f1y * nx + f1x] + D.heights[off + f2y * nx + f2x])
                        ridge = 0.5 * (a[2] + b[2]) > far + _RIDGE_TOL
                    # (an edge on the grid's border is a drop on its open side: it counts as a ridge)
                    if ridge and not separated_by_face(a, b, s, local, D.plane):
                        t = deepest_on_segment(a, b, s, c_l, r_l, D.plane)
                        pt = a + (b - a) * t
                        pb = r_l.transpose() @ (pt - c_l)
                        sd, _n = shape_sdf(s.kind, s.prm, pb, D.plane, s.plane0, s.n_planes)
                        if sd < 0.0 and t > 1e-6 and t < 1.0 - 1e-6:
                            depth, nb = shape_exit(s.kind, s.prm, pb, r_l.transpose() @ vec3(0.0, 0.0, -1.0),
                                                   D.plane, s.plane0, s.n_planes)
                            n_l = -(r_l @ nb)
                            if depth < 1e300 and n_l[2] > 0.0:
                                emit(D, slots, o + rm @ pt, rm @ n_l, depth * n_l[2],
                                     FEAT_EDGE + 3 * (iy * nx + ix) + k, False)


@ti.dataclass
class Footprint:
    """What the soil quadrature of one body on one bed needs, found once per step (:func:`soil_footprint`): the
    bed's ``grid``, its ``frame`` in the world, the link's pose ``local`` in the bed's frame, the bed's +z in
    the link's frame ``up_b``, the height ``z_start`` [m] the rays start from (below the whole body), the
    footprint's outline ``hull`` (``nh`` vertices, bed frame [m]) and whether the samples' cells are weighed
    by it (``covered``: a box or a cylinder), the far edges of the bed's last cells ``gx1``, ``gy1`` [m], and
    the samples ``jx0 .. jx1`` x ``jy0 .. jy1`` the body may cover."""
    grid: Grid
    frame: Pose
    local: Pose
    up_b: _vec3
    z_start: float
    hull: _hull
    nh: ti.i32
    covered: ti.i32
    gx1: float
    gy1: float
    jx0: ti.i32
    jx1: ti.i32
    jy0: ti.i32
    jy1: ti.i32


@ti.func
def soil_footprint(D: ti.template(), e, s, pose, m, margin):
    """The :class:`Footprint` of a body (shape ``s`` on a link at ``pose``) on bed ``m`` in env ``e``: the samples whose
    cells may meet the body within ``margin`` [m]."""
    stype, rad, pt0, npt, prm = s.kind, s.radius, s.point0, s.n_points, s.prm
    g, frame, local = hm_local(D, e, m, pose.pos, pose.rot)
    nx, ny, dx, dy, x0, y0 = g.nx, g.ny, g.dx, g.dy, g.x0, g.y0
    c_l, r_l = local.pos, local.rot
    # a box's or a cylinder's footprint weights each sample by the part of its cell the body covers (footprint.py);
    # other shapes give each sample whose ray meets them its whole cell
    covered = stype == BOX or stype == CYLINDER
    hull = ti.Matrix.zero(float, MAX_HULL, 2)
    nh = 0
    if stype == BOX:
        hull, nh = footprint_hull(D.point, pt0, npt, c_l, r_l)
    elif stype == CYLINDER:
        hull, nh = cylinder_hull(prm[0], prm[1], c_l, r_l)
    lo = ti.math.vec2(c_l[0] - rad, c_l[1] - rad)  # the samples whose cells may meet the body
    hi = ti.math.vec2(c_l[0] + rad, c_l[1] + rad)
    if covered:  # (only those meeting the footprint's box can be covered: a wheel's is a sliver of its sphere's)
        h_lo = ti.math.vec2(hull[0, 0], hull[0, 1])
        h_hi = h_lo
        for k in range(1, nh):
            h_lo = ti.min(h_lo, ti.math.vec2(hull[k, 0], hull[k, 1]))
            h_hi = ti.max(h_hi, ti.math.vec2(hull[k, 0], hull[k, 1]))
        lo = ti.max(lo, h_lo)
        hi = ti.min(hi, h_hi)
    # a point comes within the margin only where the underside lies below the bed's highest sample plus the
    # margin: that part of the body lies in the cap of its bounding sphere below that height (a wheel sunk a
    # few centimetres searches its loaded chord, not its whole shadow)
    rise = c_l[2] - (get(D.map_f, 0, m, MAP_F.top) + margin)
    if rise > 0.0:
        reach = ti.sqrt(ti.max(rad * rad - rise * rise, 0.0))
        lo = ti.max(lo, ti.math.vec2(c_l[0] - reach, c_l[1] - reach))
        hi = ti.min(hi, ti.math.vec2(c_l[0] + reach, c_l[1] + reach))
    jx0, jx1 = vertex_range(lo[0] - 0.5 * dx, hi[0] + 0.5 * dx, x0, dx, nx)
    jy0, jy1 = vertex_range(lo[1] - 0.5 * dy, hi[1] + 0.5 * dy, y0, dy, ny)
    return Footprint(grid=g, frame=frame, local=local, up_b=r_l.transpose() @ vec3(0.0, 0.0, 1.0),
                     z_start=c_l[2] - 2.0 * rad, hull=hull, nh=nh, covered=ti.cast(covered, ti.i32),
                     gx1=x0 + (nx - 1) * dx, gy1=y0 + (ny - 1) * dy, jx0=jx0, jx1=jx1, jy0=jy0, jy1=jy1)


@ti.func
def soil_row_points(D: ti.template(), e, s, fp, jy, margin, apart: ti.template(), at):
    """The soil quadrature points of sample row ``jy`` under a body (shape ``s``, footprint ``fp``:
    :func:`soil_footprint`) within ``margin`` [m] of the rut floor, in the order of the row's samples, each
    kept by :func:`keep_soil_point` (``apart``, ``at``: where)."""
    stype, prm, pl0, npl = s.kind, s.prm, s.plane0, s.n_planes
    g = fp.grid
    off, nx, ny, soil0, dx, dy, x0, y0 = g.off, g.nx, g.ny, g.soil0, g.dx, g.dy, g.x0, g.y0
    o, rm, c_l, r_l = fp.frame.pos, fp.frame.rot, fp.local.pos, fp.local.rot
    hull, nh = fp.hull, fp.nh
    vy = y0 + jy * dy
    ya, yb = ti.max(vy - 0.5 * dy, y0), ti.min(vy + 0.5 * dy, fp.gy1)
    out_lo, out_hi, in_lo, in_hi = 0.0, 0.0, 0.0, 0.0
    if fp.covered:  # (the cells of this row wholly inside the footprint, and those beside it)
        out_lo, out_hi, in_lo, in_hi = strip_spans(hull, nh, ya, yb)
    for jx in range(fp.jx0, fp.jx1 + 1):
        idx = jy * nx + jx
        vx = x0 + jx * dx
        area = sample_area(jx, jy, nx, ny, dx, dy)
        ray = ti.math.vec2(vx, vy)
        shift = ti.math.vec2(0.0, 0.0)  # (from the covered part's centroid to the cell's centre)
        if fp.covered:
            # a cell cut by the outline acts at the centroid of its covered part (inside the footprint)
            xa, xb = ti.max(vx - 0.5 * dx, x0), ti.min(vx + 0.5 * dx, fp.gx1)
            if xa >= in_lo and xb <= in_hi:
                area, ray = (xb - xa) * (yb - ya), ti.math.vec2(0.5 * (xa + xb), 0.5 * (ya + yb))
            elif xb <= out_lo or xa >= out_hi:
                area = 0.0
            else:
                area, ray = cell_coverage(hull, nh, xa, xb, ya, yb)
            if area < (1.0 - 1e-9) * (xb - xa) * (yb - ya):  # (a whole cell's centroid is its centre)
                shift = ti.math.vec2(0.5 * (xa + xb), 0.5 * (ya + yb)) - ray
            if area < 1e-9 * dx * dy:  # an outline running along the cell's edge: rounding, not cover
                area = 0.0
        if area > 0.0:
            start = vec3(ray[0], ray[1], fp.z_start)
            hit, t = shape_ray_entry(stype, prm, r_l.transpose() @ (start - c_l), fp.up_b, D.plane, pl0, npl)
            if hit:
                floor = D.heights[off + idx] - get(D.soil, e, soil0 + idx, SOIL.plastic)
                under = vec3(ray[0], ray[1], fp.z_start + t)
                gap = under[2] - floor
                if gap < margin:
                    keep_soil_point(D, e, apart, at, o + rm @ under, rm @ vec3(0.0, 0.0, 1.0), gap,
                                    FEAT_SOIL + idx, area, rm @ vec3(shift[0], shift[1], 0.0))


@ti.func
def keep_soil_point(D: ti.template(), e, apart: ti.template(), at, point, normal, gap, feature, area,
                    sample_offset):
    """One soil quadrature point (world point [m], the bed's +z, gap [m], feature, area [m^2], world vector
    [m] from the point to its cell's centre): appended to static pair ``at``'s slots as
    :func:`~.narrowphase.emit` appends (the fused step), or, ``apart`` (a sample row's points found on a
    thread of their own: :func:`soil_quadrature_row`), to entry ``at`` of the ``quad_row`` block, whose points
    go in the ``found_point`` blocks from its ``start`` on, at most ``room`` of them (the others counted as
    ``lost``) until :func:`place_soil_row` moves them to the pair's slots."""
    if ti.static(apart):
        n = get(D.quad_row, e, at, QUAD_ROW.count)
        if n < get(D.quad_row, e, at, QUAD_ROW.room):
            s = get(D.quad_row, e, at, QUAD_ROW.start) + n
            putn(D.found_f, e, s, FOUND_F.position, point)
            putn(D.found_f, e, s, FOUND_F.normal, normal)
            put(D.found_f, e, s, FOUND_F.depth, gap)
            put(D.found_f, e, s, FOUND_F.area, area)
            putn(D.found_f, e, s, FOUND_F.sample_offset, sample_offset)
            put(D.found_i, e, s, FOUND_I.feature, feature)
            put(D.quad_row, e, at, QUAD_ROW.count, n + 1)
        else:
            add(D.quad_row, e, at, QUAD_ROW.lost, 1)
    else:
        pr = row(D.pair, e, at)
        slots = Slots(e=e, p=at, base=pr[PAIR.slot0], cap=pr[PAIR.capacity], staged=0)
        before = get(D.pair_count, e, at, PAIR_COUNT.count)
        emit(D, slots, point, normal, gap, feature, False)
        if get(D.pair_count, e, at, PAIR_COUNT.count) > before:
            put(D.contact, e, slots.base + before, CONTACT.area, area)
            putn(D.contact, e, slots.base + before, CONTACT.sample_offset, sample_offset)


@ti.func
def soil_pair_near(D: ti.template(), e, p, margin):
    """Whether static soil pair ``p``'s body may come within ``margin`` [m] of its bed's rut floor this step
    (:func:`within_reach_of_map`, :func:`lowest_above_map`); its :class:`Shape`, pose and bed."""
    pr = row(D.pair, e, p)
    bi, m = pr[PAIR.body], pr[PAIR.other]
    s = shape_of(row(D.body_i, e, bi), row(D.body_f, e, bi))
    pos = body_position(D, e, bi)  # (the rotation only past the first test: most pairs stop there)
    rot = ti.Matrix.identity(float, 3)
    near = False
    # (the rut floor lies nowhere above the bed's highest undeformed sample: plastic sinkage is >= 0)
    if within_reach_of_map(D, m, pos, s.radius, margin):
        _pos, rot = body_pose(D, e, bi)
        near = not lowest_above_map(D, m, s, pos, rot, margin)
    return near, s, Pose(pos=pos, rot=rot), m


@ti.func
def soil_quadrature(D: ti.template(), e, p, margin):
    """Soil quadrature points of static soil pair ``p`` (a body on a soil bed) into its slots: one per bed
    sample under the body, where a ray along the bed's +z from below meets the body's underside. The contact
    sits at that point, its normal is the bed's +z, and its depth is the gap from the underside down to the
    rut floor (undeformed height minus plastic sinkage): positive while the body approaches, negative while
    it compresses the soil. Points within ``margin`` above the floor are kept (they carry no force until
    loaded). Row by row, as :func:`soil_quadrature_row` and :func:`place_soil_row` do on a thread per row."""
    near, s, pose, m = soil_pair_near(D, e, p, margin)
    if near:
        fp = soil_footprint(D, e, s, pose, m, margin)
        for jy in range(fp.jy0, fp.jy1 + 1):
            soil_row_points(D, e, s, fp, jy, margin, False, p)


@ti.func
def soil_quadrature_row(D: ti.template(), e, p, r, margin):
    """Row ``r`` (from the footprint's first) of static pair ``p``'s soil quadrature (:func:`soil_quadrature`)
    on a thread of its own, into entry ``p * rows + r`` of the ``quad_row`` block (``rows``: the
    ``soil_quad_rows`` setting, at least any footprint's sample rows) and the ``found_point`` blocks: each row
    gets the part of the pair's slot range a row as wide as the footprint takes (the footprint's box of
    samples fits the pair's capacity), the last entry also every row past it. Nothing for another kind of
    pair. :func:`place_soil_row` then moves the points to the pair's slots."""
    rows = get(D.settings_i, 0, 0, SETTINGS_I.soil_quad_rows)
    k = p * rows + r
    putn(D.quad_row, e, k, QUAD_ROW.count, ti.math.ivec4(0, 0, 0, 0))
    pr = row(D.pair, e, p)
    if pr[PAIR.kind] == PAIR_SOIL:
        near, s, pose, m = soil_pair_near(D, e, p, margin)
        if near:
            fp = soil_footprint(D, e, s, pose, m, margin)
            width = fp.jx1 - fp.jx0 + 1
            first = r * width
            cap = pr[PAIR.capacity]
            last_jy = fp.jy0 + r
            room = ti.min(width, cap - first)
            if r == rows - 1:
                last_jy = fp.jy1
                room = cap - first
            put(D.quad_row, e, k, QUAD_ROW.start, pr[PAIR.slot0] + first)
            put(D.quad_row, e, k, QUAD_ROW.room, ti.max(room, 0))
            for jy in range(fp.jy0 + r, ti.min(last_jy, fp.jy1) + 1):
                soil_row_points(D, e, s, fp, jy, margin, True, k)


@ti.func
def place_soil_row(D: ti.template(), e, p, r):
    """Move row ``r``'s soil quadrature points of static pair ``p`` (:func:`soil_quadrature_row`) to the
    pair's slots, after the points of the rows before it, as many as the pair's capacity leaves room for;
    row 0 also sets the pair's count and dropped points. The slots end as :func:`soil_quadrature` fills
    them."""
    pr = row(D.pair, e, p)
    if pr[PAIR.kind] == PAIR_SOIL:
        rows = get(D.settings_i, 0, 0, SETTINGS_I.soil_quad_rows)
        k0 = p * rows
        cap, slot0 = pr[PAIR.capacity], pr[PAIR.slot0]
        before = 0
        for j in range(r):
            before += get(D.quad_row, e, k0 + j, QUAD_ROW.count)
        src = get(D.quad_row, e, k0 + r, QUAD_ROW.start)
        for i in range(ti.min(get(D.quad_row, e, k0 + r, QUAD_ROW.count), cap - before)):
            s, d = src + i, slot0 + before + i
            putn(D.contact, e, d, CONTACT.position, get3(D.found_f, e, s, FOUND_F.position))
            putn(D.contact, e, d, CONTACT.normal, get3(D.found_f, e, s, FOUND_F.normal))
            put(D.contact, e, d, CONTACT.depth, get(D.found_f, e, s, FOUND_F.depth))
            put(D.feature, e, d, FEATURE.now, get(D.found_i, e, s, FOUND_I.feature))
            put(D.contact, e, d, CONTACT.area, get(D.found_f, e, s, FOUND_F.area))
            putn(D.contact, e, d, CONTACT.sample_offset, get3(D.found_f, e, s, FOUND_F.sample_offset))
        if r == 0:
            found, lost = 0, 0
            for j in range(rows):
                found += get(D.quad_row, e, k0 + j, QUAD_ROW.count)
                lost += get(D.quad_row, e, k0 + j, QUAD_ROW.lost)
            kept = ti.min(found, cap)
            putn(D.pair_count, e, p, PAIR_COUNT.count, ti.math.ivec2(kept, found - kept + lost))


@ti.func
def hide_occluded_soil_points(D: ti.template(), e, n_static):
    """One tree link with several shapes over a soil-bed sample loads it once, through the shape whose
    underside is lowest there: the soil column is pressed down to that surface and cannot reach the shapes
    above it (a foot sphere inside the end of a shank capsule, say). Each point of the other shapes at that
    sample keeps its slot (its feature and warm start) with zero area, so its row carries no load.

    Without this, two rows at one sample on one link have the same Jacobian: the soil there would carry the
    link twice, and the sweep could shift tangential impulse between the two rows without end (a standing
    quadruped's feet took the 100-sweep cap every step). Static pairs come in body order and a link's shapes
    are consecutive bodies, so comparing each point with the last point found at its sample compares every
    two points of one link there. Shapes of different bodies are left as they are (two boxes side by side
    each load their covered part of one sample's cell)."""
    for p in range(n_static):
        pr = row(D.pair, e, p)
        if pr[PAIR.kind] == PAIR_SOIL:
            j = carrier_joint(D, e, pr[PAIR.body])
            s0 = get(D.map_i, e, pr[PAIR.other], MAP_I.soil0) - FEAT_SOIL
            for k in range(get(D.pair_count, e, p, PAIR_COUNT.count)):
                s = pr[PAIR.slot0] + k
                g = s0 + get(D.feature, e, s, FEATURE.now)
                last = get(D.soil_claim, e, g, SOIL_CLAIM.slot) - 1
                if last >= 0 and j >= 0 and get(D.soil_claim, e, g, SOIL_CLAIM.joint) == j:
                    if get(D.contact, e, s, CONTACT.depth) < get(D.contact, e, last, CONTACT.depth):
                        put(D.contact, e, last, CONTACT.area, 0.0)
                    else:  # (a tie keeps the earlier point)
                        put(D.contact, e, s, CONTACT.area, 0.0)
                        s = last
                put(D.soil_claim, e, g, SOIL_CLAIM.slot, s + 1)
                put(D.soil_claim, e, g, SOIL_CLAIM.joint, j)
    for p in range(n_static):  # the claims are scratch: zero again for the next step
        pr = row(D.pair, e, p)
        if pr[PAIR.kind] == PAIR_SOIL:
            s0 = get(D.map_i, e, pr[PAIR.other], MAP_I.soil0) - FEAT_SOIL
            for k in range(get(D.pair_count, e, p, PAIR_COUNT.count)):
                put(D.soil_claim, e, s0 + get(D.feature, e, pr[PAIR.slot0] + k, FEATURE.now), SOIL_CLAIM.slot, 0)


_WINDOW = 3  # [cells per axis] a sphere whose box spans at most this many cells keeps its triangles' distances


@ti.dataclass
class Swept:
    """A sphere-swept segment in a height map's frame (a capsule's core; a sphere's has ``p0 == p1``): its ends
    ``p0``, ``p1`` [m] and its radius ``infl`` [m]."""
    p0: _vec3
    p1: _vec3
    infl: float


@ti.func
def _cell_reaches(hm_heights: ti.template(), off, nx, ix, iy, z_low):
    """Whether a sample of cell (ix, iy) lies at or above ``z_low`` (a hole's sample never does): a triangle of
    a cell that does not lies wholly below it."""
    i = off + iy * nx + ix
    return (z_low <= hm_heights[i] or z_low <= hm_heights[i + 1] or z_low <= hm_heights[i + nx]
            or z_low <= hm_heights[i + nx + 1])


@ti.func
def _box_reaches(lo, hi_, g, ix, iy, t):
    """Whether the map-plane projection of triangle ``t`` of cell (ix, iy) of the map with grid ``g`` meets the
    box lo..hi_ (x, y only).
    In cell units (0 to 1 across the cell) triangle 0 is the half v <= u, triangle 1 the half u <= v: the box's
    part of the cell meets the first where its lowest v is at most its highest u, the second where its lowest u
    is at most its highest v. A triangle it misses is farther along x or y than the box's padding."""
    x0, y0, dx, dy = g.x0, g.y0, g.dx, g.dy
    u0 = ti.math.clamp((lo[0] - (x0 + ix * dx)) / dx, 0.0, 1.0)
    u1 = ti.math.clamp((hi_[0] - (x0 + ix * dx)) / dx, 0.0, 1.0)
    v0 = ti.math.clamp((lo[1] - (y0 + iy * dy)) / dy, 0.0, 1.0)
    v1 = ti.math.clamp((hi_[1] - (y0 + iy * dy)) / dy, 0.0, 1.0)
    return (v0 <= u1) if t == 0 else (u0 <= v1)


@ti.func
def _pair_kind(cs, ct, a, tn, d, reach, tol):
    """How a closest pair (segment or centre point ``cs``, triangle point ``ct``, distance ``d``) of a triangle
    with vertex ``a`` and unit normal ``tn`` counts: 0 not a contact (``cs`` below the triangle's plane, farther
    than ``reach`` or touching), 1 a contact inside the triangle, 2 one on its boundary (an edge or a vertex,
    kept only where it is a local minimum over the map; ``tol`` [m] tells the two apart)."""
    kind = 0
    if tn.dot(cs - a) > 0.0 and d < reach and d > 1e-12:
        kind = 2 if (cs - tn * tn.dot(cs - a) - ct).norm() > tol else 1
    return kind


@ti.func
def _map_triangle_contacts(D: ti.template(), slots, g, frame, ix, iy, t, swept, z_low, margin):
    """Contacts of a sphere-swept segment (``swept``: ends p0, p1 in the map frame, radius ``infl``) with
    triangle ``t`` of cell (ix, iy) of the map with grid ``g`` (placed in the world by ``frame``), into
    ``slots``: its closest pair, or the two ends of a parallel overlap, within ``margin`` of touching. Holes
    and triangles wholly below ``z_low`` give none. A pair on the triangle's boundary is kept where it is a
    local minimum of the distance over the map (``is_local_closest``)."""
    p0, p1, infl, o, rm = swept.p0, swept.p1, swept.infl, frame.pos, frame.rot
    a, b, c = hm_triangle(D.heights, g, ix, iy, t)
    if is_finite(a[2]) and is_finite(b[2]) and is_finite(c[2]) and z_low <= ti.max(a[2], b[2], c[2]):
        nn = (b - a).cross(c - a)
        tn = nn / nn.norm()
        n_cp, cs0, ct0, cs1, ct1 = segment_triangle_contacts(p0, p1, a, b, c, tn)
        for j in range(n_cp):
            cs = cs0 if j == 0 else cs1
            ct = ct0 if j == 0 else ct1
            d = (cs - ct).norm()
            tol = 1e-9 * (g.dx + g.dy)
            kind = _pair_kind(cs, ct, a, tn, d, infl + margin, tol)
            keep = kind == 1
            if kind == 2:  # a closest point on the triangle's boundary must be a local minimum over the map
                keep = is_local_closest(D.heights, g, ix, iy, t, cs, ct, d, tol)
            if keep:
                emit(D, slots, o + rm @ ct, rm @ ((cs - ct) / d), infl - d,
                     FEAT_TRIANGLE + 2 * (2 * (iy * g.nx + ix) + t) + j, True)


@ti.func
def _sphere_map_contacts(D: ti.template(), slots, g, frame, cells, lo, hi_, swept, margin):
    """``_map_triangle_contacts`` for a sphere (``swept`` with p0 = p1 its centre ``c``, map frame) over the
    triangles of cells ix0..ix1 x iy0..iy1 (``cells``, at most ``_WINDOW`` per axis), with the same contacts in
    the same order.

    A first pass keeps each triangle's closest point and distance; the second emits the contacts, and a closest
    point on a triangle's boundary looks its touching neighbours' distances up instead of finding their closest
    points again. Every triangle that can come closer than the margin is in the window (it meets the box
    lo..hi_), and any other is given an infinite distance, so the test is ``is_local_closest``'s."""
    ix0, ix1, iy0, iy1 = cells[0], cells[1], cells[2], cells[3]
    c, infl, o, rm = swept.p0, swept.infl, frame.pos, frame.rot
    off, nx, ny, dx, dy = g.off, g.nx, g.ny, g.dx, g.dy
    dist = ti.Vector.zero(float, 2 * _WINDOW * _WINDOW) + 1e300
    foot = ti.Matrix.zero(float, 2 * _WINDOW * _WINDOW, 3)
    kind = ti.Vector.zero(ti.i32, 2 * _WINDOW * _WINDOW)  # 1: a contact inside its triangle, 2: one on its boundary
    tol = 1e-9 * (dx + dy)
    for iy in range(iy0, iy1 + 1):
        for ix in range(ix0, ix1 + 1):
            reach = _cell_reaches(D.heights, off, nx, ix, iy, lo[2])
            for t in range(2):
                k = 2 * (_WINDOW * (iy - iy0) + ix - ix0) + t
                if reach and _box_reaches(lo, hi_, g, ix, iy, t):
                    a, b, cc = hm_triangle(D.heights, g, ix, iy, t)
                    if is_finite(a[2]) and is_finite(b[2]) and is_finite(cc[2]) and lo[2] <= ti.max(a[2], b[2], cc[2]):
                        nn = (b - a).cross(cc - a)
                        tn = nn / nn.norm()
                        ct = closest_point_triangle(c, a, b, cc)
                        d = (c - ct).norm()
                        dist[k] = d
                        for i in ti.static(range(3)):
                            foot[k, i] = ct[i]
                        kind[k] = _pair_kind(c, ct, a, tn, d, infl + margin, tol)
    for iy in range(iy0, iy1 + 1):
        for ix in range(ix0, ix1 + 1):
            for t in range(2):
                k = 2 * (_WINDOW * (iy - iy0) + ix - ix0) + t
                if kind[k] != 0:
                    ct = vec3(foot[k, 0], foot[k, 1], foot[k, 2])
                    d = dist[k]
                    keep = True
                    if kind[k] == 2:  # a local minimum: no triangle touching ct comes closer by more than tol
                        jx0, jx1 = cell_range(ct[0] - 2.0 * tol, ct[0] + 2.0 * tol, g.x0, dx, nx)
                        jy0, jy1 = cell_range(ct[1] - 2.0 * tol, ct[1] + 2.0 * tol, g.y0, dy, ny)
                        for jy in range(ti.max(iy - 1, jy0, iy0), ti.min(iy + 1, jy1, iy1) + 1):
                            for jx in range(ti.max(ix - 1, jx0, ix0), ti.min(ix + 1, jx1, ix1) + 1):
                                for u in range(2):
                                    j = 2 * (_WINDOW * (jy - iy0) + jx - ix0) + u
                                    if keep and j != k and dist[j] < d - tol and in_triangle_xy(
                                            g, jx, jy, u, ct[0], ct[1], tol):
                                        keep = False
                    if keep:
                        emit(D, slots, o + rm @ ct, rm @ ((c - ct) / d), infl - d,
                             FEAT_TRIANGLE + 2 * (2 * (iy * nx + ix) + t), True)


# --------------------------------------------------------------------------- one pair
@ti.func
def within_reach_of_map(D: ti.template(), m, pos, radius, margin):
    """Whether a body centred at ``pos`` with bounding ``radius`` [m] can come within ``margin`` of map ``m``: the
    whole map lies below its highest sample, so a bounding sphere that stays above it by more than the margin is
    farther than the margin from every triangle (an exact rejection, from the centre's height in the map frame
    alone)."""
    o, rm = hm_pose(D, m)
    return (rm.transpose() @ (pos - o))[2] - radius - margin <= get(D.map_f, 0, m, MAP_F.top)


@ti.func
def lowest_above_map(D: ti.template(), m, s, pos, rot, margin):
    """Whether the lowest point of a body (shape ``s`` on a link at ``pos``, ``rot``; its sample points inflated
    by its ``inflation``)
    lies more than ``margin`` [m] above map ``m``'s highest sample, measured along the map's +z: then no
    triangle and no rut floor comes within the margin (an exact rejection, like ``within_reach_of_map`` but
    from the shape's support along the map's normal instead of its bounding sphere: a chassis box riding
    high has a bounding sphere reaching the ground but no point near it)."""
    o, rm = hm_pose(D, m)
    up = rm @ vec3(0.0, 0.0, 1.0)
    lowest = -support(D.point, s, pos, rot, -up) - up.dot(o) - s.inflation
    return lowest - margin > get(D.map_f, 0, m, MAP_F.top)


@ti.func
def collide_pair(D: ti.template(), e, p, ground_height, margin_base, dt, soil_apart: ti.template()):
    """Fill the contact slots of static pair ``p`` (a shape with the ground, a height map or a soil bed) in
    env ``e`` from the link poses in ``q``.

    Speculative contacts reach ``margin_base`` plus how far the body can move in one step (speed of the
    centre plus spin times bounding radius, times ``dt``), so a fast body meets a thin obstacle as a
    speculative contact before it can pass through it. ``soil_apart``: a soil pair's points are left to
    :func:`soil_quadrature_row` and :func:`place_soil_row` (the GPU layout)."""
    putn(D.pair_count, e, p, PAIR_COUNT.count, ti.math.ivec2(0, 0))
    pr = row(D.pair, e, p)
    kind = pr[PAIR.kind]
    slots = Slots(e=e, p=p, base=pr[PAIR.slot0], cap=pr[PAIR.capacity], staged=0)
    bi = pr[PAIR.body]
    s = shape_of(row(D.body_i, e, bi), row(D.body_f, e, bi))
    pos = body_position(D, e, bi)  # (the rotation only where a branch needs it: most map pairs stop first)
    margin = margin_base
    if kind != PAIR_SOIL:  # (soil points ahead of the body carry no force; their count stays bounded)
        margin += dt * body_sweep_speed(D, e, bi, s.radius, pos)
    stype, pt0, npt, prm, infl = s.kind, s.point0, s.n_points, s.prm, s.inflation
    if kind == PAIR_GROUND:
        _pos, rot = body_pose(D, e, bi)
        up = vec3(0.0, 0.0, 1.0)
        down_b = rot.transpose() @ (-up)
        for k in range(sample_count(stype, npt)):
            pb, ok = sample_point(D.point, pt0, npt, stype, prm, down_b, k)
            pw = pos + rot @ pb
            depth = ground_height - (pw[2] - infl)
            if ok and depth > -margin:
                emit(D, slots, vec3(pw[0], pw[1], ground_height), up, depth, FEAT_POINT + k, False)
    elif kind == PAIR_SOIL:
        if ti.static(D.has_soil and not soil_apart):  # (else soil_quadrature_row and place_soil_row)
            soil_quadrature(D, e, p, margin)
    else:  # a height map
        top = get(D.map_f, 0, pr[PAIR.other], MAP_F.top)
        if within_reach_of_map(D, pr[PAIR.other], pos, s.radius, margin):
            _pos, rot = body_pose(D, e, bi)
            g, frame, local = hm_local(D, e, pr[PAIR.other], pos, rot)
            o, rm, c_l, r_l = frame.pos, frame.rot, local.pos, local.rot
            if stype == SPHERE or stype == CAPSULE:
                # exact sphere-swept segment (a sphere: zero length) against the triangles
                p0 = c_l + r_l @ point_at(D.point, pt0)
                p1 = c_l + r_l @ point_at(D.point, pt0 + npt - 1)
                for k in range(npt):
                    pk = p0 if k == 0 else p1
                    found, a, tn = hm_surface(D.heights, g, pk[0], pk[1])
                    if found:
                        below = tn.dot(a - pk)
                        if below > 0.0:  # the centre is inside the terrain: push out through the surface
                            emit(D, slots, o + rm @ (pk + tn * below), rm @ tn, below + infl, FEAT_BELOW + k, False)
                # only the part of the segment at most infl + margin above the map's highest sample can come
                # that close to a triangle: the cells searched are those around that part (a capsule reaching
                # down to the ground from high up searches the cells below its lower end, not its whole
                # shadow; 1 nm of padding covers the rounding of the cut)
                q0, q1 = p0, p1
                z_cut = top + infl + margin + 1e-9
                if p0[2] > z_cut and p1[2] < z_cut:
                    q0 = p0 + (p1 - p0) * ((p0[2] - z_cut) / (p0[2] - p1[2]))
                elif p1[2] > z_cut and p0[2] < z_cut:
                    q1 = p1 + (p0 - p1) * ((p1[2] - z_cut) / (p1[2] - p0[2]))
                lo = ti.min(q0, q1) - (infl + margin)
                hi_ = ti.max(q0, q1) + (infl + margin)
                ix0, ix1 = cell_range(lo[0], hi_[0], g.x0, g.dx, g.nx)
                iy0, iy1 = cell_range(lo[1], hi_[1], g.y0, g.dy, g.ny)
                if ti.min(p0[2], p1[2]) > z_cut:  # (the whole segment is too high)
                    ix1 = ix0 - 1
                swept = Swept(p0=p0, p1=p1, infl=infl)
                if stype == SPHERE and ix1 - ix0 < _WINDOW and iy1 - iy0 < _WINDOW:
                    _sphere_map_contacts(D, slots, g, frame, ti.math.ivec4(ix0, ix1, iy0, iy1), lo, hi_, swept, margin)
                else:
                    for iy in range(iy0, iy1 + 1):
                        for ix in range(ix0, ix1 + 1):
                            if _cell_reaches(D.heights, g.off, g.nx, ix, iy, lo[2]):
                                for t in range(2):
                                    if _box_reaches(lo, hi_, g, ix, iy, t):
                                        _map_triangle_contacts(D, slots, g, frame, ix, iy, t, swept, lo[2], margin)
            else:
                # sample points of the shape against the triangle below each of them
                down_b = r_l.transpose() @ vec3(0.0, 0.0, -1.0)
                # the shape's box in the map frame from its sample points: terrain outside it, or below its lowest
                # point, cannot poke in (cylinder rims: pad for the arcs between the rim points)
                lo = c_l
                hi_ = c_l
                for k in range(sample_count(stype, npt)):
                    pb, ok = sample_point(D.point, pt0, npt, stype, prm, down_b, k)
                    pl = c_l + r_l @ pb
                    if ok:
                        lo = ti.min(lo, pl)
                        hi_ = ti.max(hi_, pl)
                    found, a, tn = hm_surface(D.heights, g, pl[0], pl[1])
                    if ok and found:
                        depth = tn.dot(a - pl)
                        if depth > -margin:
                            emit(D, slots, o + rm @ (pl + tn * depth), rm @ tn, depth, FEAT_POINT + k, False)
                # terrain samples that poke into the shape's underside along a ridge or at a peak: a
                # sample whose depth is a maximum along x or y (>= both neighbours, > at least one)
                pad = _RIM_SAGITTA * prm[0] if stype == CYLINDER else 0.0
                lo -= vec3(pad, pad, 0.0)
                hi_ += vec3(pad, pad, 0.0)
                z_low = lo[2]
                jx0, jx1 = vertex_range(lo[0], hi_[0], g.x0, g.dx, g.nx)
                jy0, jy1 = vertex_range(lo[1], hi_[1], g.y0, g.dy, g.ny)
                for jy in range(jy0, jy1 + 1):
                    for jx in range(jx0, jx1 + 1):
                        if D.heights[g.off + jy * g.nx + jx] > z_low and not _planar_vertex(D.heights, g, jx, jy):
                            depth, nb = vertex_depth(D, g, jx, jy, s, local)
                            n_l = -(r_l @ nb)
                            if depth > 0.0 and n_l[2] > 0.0:
                                ridge = False
                                for axis in range(2):
                                    ox = 1 - axis
                                    oy = axis
                                    dm, _n0 = vertex_depth(D, g, jx - ox, jy - oy, s, local)
                                    dp, _n1 = vertex_depth(D, g, jx + ox, jy + oy, s, local)
                                    if (depth >= dm - _RIDGE_TOL and depth >= dp - _RIDGE_TOL
                                            and (depth > dm + _RIDGE_TOL or depth > dp + _RIDGE_TOL)):
                                        ridge = True
                                if ridge:
                                    v = hm_vertex(D.heights, g, jx, jy)
                                    emit(D, slots, o + rm @ v, rm @ n_l, depth * n_l[2], FEAT_VERTEX + jy * g.nx + jx,
                                         False)
                ridge_edge_contacts(D, slots, g, frame, s, local, lo, hi_)


@ti.func
def collide_shape_pair(D: ti.template(), e, p, bi, bj, base, cap, margin_base, dt, staged):
    """Contacts of bodies ``bi`` (the pair's body) and ``bj`` (its other side) into slots ``base`` to
    ``base + cap`` as pair ``p`` (``staged``: of the ``found_point`` blocks, :class:`~.narrowphase.Slots`); the
    speculative margin grows with both bodies' speeds."""
    putn(D.pair_count, e, p, PAIR_COUNT.count, ti.math.ivec2(0, 0))
    slots = Slots(e=e, p=p, base=base, cap=cap, staged=staged)
    si = shape_of(row(D.body_i, e, bi), row(D.body_f, e, bi))
    sj = shape_of(row(D.body_i, e, bj), row(D.body_f, e, bj))
    pos, rot = body_pose(D, e, bi)
    posj, rotj = body_pose(D, e, bj)
    margin = margin_base + dt * (body_sweep_speed(D, e, bi, si.radius, pos)
                                 + body_sweep_speed(D, e, bj, sj.radius, posj))
    if (pos - posj).norm() < si.radius + sj.radius + margin:
        if si.inflation > 0.0 or sj.inflation > 0.0:
            # a sphere or capsule: its centre points against the other shape's signed distance
            collide_rounded(D, slots, margin, si, Pose(pos=pos, rot=rot), sj, Pose(pos=posj, rot=rotj))
        else:
            collide_polyhedral(D, slots, margin, si, Pose(pos=pos, rot=rot), sj, Pose(pos=posj, rot=rotj))
