"""Ray casts against the ground plane, every height map (in its own frame, cell by cell) and every body shape.

One thread per (env, ray). A ray that starts inside a shape ignores that shape (a sensor inside a robot's own
body sees out of it); height maps are hit from their upper (+z) side only, and soil beds at their deformed
surface. Result per ray: distance ``t`` [m] (``inf`` for no hit within ``max_length``), world normal, and
what was hit: kind (0 none, 1 ground, 2 height map, 3 free body, 4 a shape on an articulated system's link)
and its index (the body index for kinds 3 and 4). Links are posed from ``FRAME``, which the caller brings
to the current coordinates first.
"""
import taichi as ti

from ..common.arrays import BODY_I, MAP_F, SOIL, StepData, body_params
from ..common.math import edge_slack, is_finite, vec3
from ..common.schema import get, getn, row
from .heightmap import hm_grid, hm_pose
from ..dynamics.bodies import body_pose
from .shapes import shape_ray_entry, shape_sdf

vec4 = ti.math.vec4
RAY_NONE, RAY_GROUND, RAY_HEIGHTMAP, RAY_BODY, RAY_LINK = 0, 1, 2, 3, 4


@ti.func
def _sample(D: ti.template(), e, g, ix, iy):
    """Map-frame vertex of sample (ix, iy) of the map with grid ``g`` in env ``e``, a soil bed's sinkage
    subtracted."""
    k = iy * g.nx + ix
    h = D.heights[g.off + k]
    if g.soil0 >= 0:
        h -= get(D.soil, e, g.soil0 + k, SOIL.sinkage)
    return vec3(g.x0 + ix * g.dx, g.y0 + iy * g.dy, h)


@ti.func
def _ray_triangle(o, d, a, b, c, t_best):
    """Parameter of the hit of ray o + t d on triangle abc from its front (+normal) side, if below ``t_best``."""
    t_hit = t_best
    e1 = b - a
    e2 = c - a
    pv = d.cross(e2)
    det = e1.dot(pv)
    if det > 1e-30 and is_finite(a[2]) and is_finite(b[2]) and is_finite(c[2]):  # front side: det = -d . n > 0
        inv = 1.0 / det
        tv = o - a
        u = tv.dot(pv) * inv
        qv = tv.cross(e1)
        v = d.dot(qv) * inv
        t = e2.dot(qv) * inv
        slack = ti.static(edge_slack())  # (a ray along a shared edge or through a vertex hits: common/math.py)
        if u >= -slack and v >= -slack and u + v <= 1.0 + slack and t >= 0.0 and t < t_best:
            t_hit = t
    return t_hit


@ti.func
def ray_heightmap(D: ti.template(), e, m, o_w, d_w, t_max):
    """First hit of a world ray on map ``m``: ``(t, world normal)``, ``t = t_max`` for none. Walks the grid
    cells the ray's projection crosses (2-D DDA) and tests the two triangles of each."""
    org, rm = hm_pose(D, m)
    o = rm.transpose() @ (o_w - org)
    d = rm.transpose() @ d_w
    g = hm_grid(D, e, m)
    nx, ny, dx, dy, x0, y0 = g.nx, g.ny, g.dx, g.dy, g.x0, g.y0
    size = getn(D.map_f, 0, m, MAP_F.size, 2)
    # the part of the ray over the grid rectangle
    ta = 0.0
    tb = t_max
    for k in ti.static(range(2)):
        lo = x0 if k == 0 else y0
        hi_ = lo + size[k]
        if ti.abs(d[k]) < 1e-30:
            if o[k] < lo or o[k] > hi_:
                tb = -1.0
        else:
            t0 = (lo - o[k]) / d[k]
            t1 = (hi_ - o[k]) / d[k]
            ta = ti.max(ta, ti.min(t0, t1))
            tb = ti.min(tb, ti.max(t0, t1))
    t_best = t_max
    n_best = vec3(0.0, 0.0, 1.0)
    if ta <= tb:
        p = o + d * ta
        ix = ti.min(ti.max(ti.cast(ti.floor((p[0] - x0) / dx), ti.i32), 0), nx - 2)
        iy = ti.min(ti.max(ti.cast(ti.floor((p[1] - y0) / dy), ti.i32), 0), ny - 2)
        step_x = 1 if d[0] > 0.0 else -1
        step_y = 1 if d[1] > 0.0 else -1
        # ray parameter of the next cell boundary in x and in y, and the parameter width of one cell
        big = 1e30
        next_x = big
        next_y = big
        width_x = big
        width_y = big
        if ti.abs(d[0]) >= 1e-30:
            next_x = (x0 + (ix + (1 if step_x > 0 else 0)) * dx - o[0]) / d[0]
            width_x = dx / ti.abs(d[0])
        if ti.abs(d[1]) >= 1e-30:
            next_y = (y0 + (iy + (1 if step_y > 0 else 0)) * dy - o[1]) / d[1]
            width_y = dy / ti.abs(d[1])
        done = False
        steps = 0
        while not done and steps < nx + ny:
            steps += 1
            a = _sample(D, e, g, ix, iy)
            b = _sample(D, e, g, ix + 1, iy)
            c = _sample(D, e, g, ix + 1, iy + 1)
            dd = _sample(D, e, g, ix, iy + 1)
            th = _ray_triangle(o, d, a, b, c, t_best)  # the cell's two triangles, split along a-c
            if th < t_best:
                t_best = th
                n_best = (b - a).cross(c - a).normalized()
            th = _ray_triangle(o, d, a, c, dd, t_best)
            if th < t_best:
                t_best = th
                n_best = (c - a).cross(dd - a).normalized()
            exit_t = ti.min(next_x, next_y)
            if t_best <= exit_t or exit_t > tb:
                done = True
            elif next_x < next_y:
                ix += step_x
                next_x += width_x
            else:
                iy += step_y
                next_y += width_y
            if ix < 0 or ix > nx - 2 or iy < 0 or iy > ny - 2:
                done = True
    return t_best, rm @ n_best


@ti.func
def ray_body(D: ti.template(), e, b, o_w, d_w, t_max):
    """First entry of a world ray into body ``b``: ``(t, world normal)``, ``t = t_max`` for none (also when
    the ray starts inside the body)."""
    bd = row(D.body_i, 0, b)
    bf = row(D.body_f, 0, b)
    pos, rot = body_pose(D, e, b)
    o = rot.transpose() @ (o_w - pos)
    d = rot.transpose() @ d_w
    prm = body_params(bf)
    t_best = t_max
    n_w = vec3(0.0, 0.0, 1.0)
    hit, t = shape_ray_entry(bd[BODY_I.shape], prm, o, d, D.plane, bd[BODY_I.plane0], bd[BODY_I.n_planes])
    if hit and t >= 0.0 and t < t_max:
        t_best = t
        _sd, n = shape_sdf(bd[BODY_I.shape], prm, o + d * t, D.plane, bd[BODY_I.plane0], bd[BODY_I.n_planes])
        n_w = rot @ n
    return t_best, n_w


class RayArrays:
    """The ray kernel's own arrays inside the kernel, as ``cast_one`` takes them: per (env, ray) the
    ``origins`` [m], unit directions ``dirs`` and ``max_length`` [m] it reads, and the ``out_t`` [m], ``out_n``
    and ``out_what`` (kind, index) it writes."""

    def __init__(self, origins, dirs, max_length, out_t, out_n, out_what):
        self.origins, self.dirs, self.max_length = origins, dirs, max_length
        self.out_t, self.out_n, self.out_what = out_t, out_n, out_what


@ti.dataclass
class RayScene:
    """What a ray can hit beside the maps' and bodies' own rows: ``n_bodies`` shapes (the first ``n_free`` on
    free bodies, the rest on links), ``n_maps`` height maps, the ground plane (``ground`` != 0) at
    ``ground_height`` [m]."""
    n_bodies: ti.i32
    n_free: ti.i32
    n_maps: ti.i32
    ground: ti.i32
    ground_height: float


def _cast_rays_kernel(trees: bool):
    """The ray kernel; ``trees`` compiles in the shapes on tree links (posed from ``FRAME`` in scratch_f)."""

    @ti.kernel
    def cast_rays(origins: ti.types.ndarray(), dirs: ti.types.ndarray(), max_length: ti.types.ndarray(),
                  n_bodies: ti.i32, n_free: ti.i32, n_maps: ti.i32, ground: ti.i32, ground_height: float,
                  model_i: ti.types.ndarray(), model_f: ti.types.ndarray(), heights: ti.types.ndarray(),
                  q: ti.types.ndarray(), state_f: ti.types.ndarray(), scratch_f: ti.types.ndarray(),
                  out_t: ti.types.ndarray(), out_n: ti.types.ndarray(), out_what: ti.types.ndarray()):
        """Cast ray r of env e from ``origins[e, r]`` along the unit ``dirs[e, r]`` up to ``max_length[e, r]``
        [m]."""
        for e, r in ti.ndrange(origins.shape[0], origins.shape[1]):
            cast_one(StepData(model_i, trees, model_i=model_i, model_f=model_f, heights=heights, q=q, state_f=state_f,
                              scratch_f=scratch_f),
                     RayArrays(origins, dirs, max_length, out_t, out_n, out_what),
                     RayScene(n_bodies=n_bodies, n_free=n_free, n_maps=n_maps, ground=ground,
                              ground_height=ground_height), e, r)

    return cast_rays


_KERNELS = {}


def cast_rays_kernel(trees: bool):
    """The ray kernel for a world with articulated systems or without."""
    if trees not in _KERNELS:
        _KERNELS[trees] = _cast_rays_kernel(trees)
    return _KERNELS[trees]


@ti.func
def cast_one(D: ti.template(), R: ti.template(), scene, e, r):
    """Ray r of env e (its arrays in ``R``, :class:`RayArrays`) against what ``scene`` (:class:`RayScene`)
    holds: the ground, the maps and the bodies."""
    ground, ground_height = scene.ground, scene.ground_height
    o = R.origins[e, r]
    d = R.dirs[e, r]
    t_max = R.max_length[e, r]
    t_best = t_max
    n_best = vec3(0.0, 0.0, 1.0)
    kind = RAY_NONE
    index = -1
    if ground != 0 and d[2] < 0.0 and o[2] >= ground_height:
        t = (ground_height - o[2]) / d[2]
        if t < t_best:
            t_best = t
            n_best = vec3(0.0, 0.0, 1.0)
            kind = RAY_GROUND
            index = 0
    for m in range(scene.n_maps):
        t, n = ray_heightmap(D, e, m, o, d, t_best)
        if t < t_best:
            t_best = t
            n_best = n
            kind = RAY_HEIGHTMAP
            index = m
    for b in range(scene.n_bodies):
        t, n = ray_body(D, e, b, o, d, t_best)
        if t < t_best:
            t_best = t
            n_best = n
            kind = RAY_BODY if b < scene.n_free else RAY_LINK
            index = b
    if kind == RAY_NONE:
        t_best = ti.math.inf
    R.out_t[e, r] = t_best
    R.out_n[e, r] = n_best
    R.out_what[e, r] = ti.math.ivec2(kind, index)
