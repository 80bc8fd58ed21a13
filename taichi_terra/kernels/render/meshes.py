"""Viewer kernels: world-space vertices, normals and colours for the GGUI buffers (``viewer/``).

They read the simulation's arrays in place (joint coordinates, soil history) and write float32 Taichi
fields that GGUI draws, so a frame moves no terrain or body data through Python. Physics never calls them.
"""
import taichi as ti

from ..collision.narrowphase import body_pose
from ..common.arrays import SOIL

vec3f = ti.types.vector(3, ti.f32)

#: terrain colour modes
COLOR_BASE, COLOR_SINKAGE, COLOR_PLASTIC = 0, 1, 2


@ti.func
def _surface(heights: ti.template(), state_f: ti.template(), soil0, env, nx, ny, x, y, sink_scale):
    """Height of sample (x, y) along the map's z (clamped to the grid) and its (sinkage, plastic sinkage);
    ``soil0`` is where the map's first soil row starts in ``state_f`` (-1: a rigid map)."""
    xc = ti.min(ti.max(x, 0), nx - 1)
    yc = ti.min(ti.max(y, 0), ny - 1)
    k = yc * nx + xc
    h = ti.cast(heights[k], ti.f32)
    s = ti.cast(0.0, ti.f32)
    sp = ti.cast(0.0, ti.f32)
    if soil0 >= 0:
        s = ti.cast(state_f[env, soil0 + k * SOIL.stride + SOIL.sinkage], ti.f32)
        sp = ti.cast(state_f[env, soil0 + k * SOIL.stride + SOIL.plastic], ti.f32)
    if not ti.math.isinf(h) and not ti.math.isnan(h):
        h -= sink_scale * s
    return h, s, sp


@ti.kernel
def terrain_rows(rows: ti.types.ndarray(), heights: ti.types.ndarray(), colors: ti.types.ndarray(),
                 state_f: ti.types.ndarray(), soil0: ti.i32, env: ti.i32, nx: ti.i32, ny: ti.i32,
                 x0: ti.f32, y0: ti.f32, dx: ti.f32, dy: ti.f32, frame: ti.types.ndarray(), offset: vec3f,
                 sink_scale: ti.f32, mode: ti.i32, color_range: ti.f32, rut: vec3f, v0: ti.i32,
                 verts: ti.template(), normals: ti.template(), cols: ti.template()):
    """Write the vertices of the sample rows listed in ``rows`` of one map in one tile.

    ``frame`` is the map pose (rows 0-2 the rotation map -> world, row 3 the origin) [m]; ``offset`` the
    tile's translation [m]; vertex ``v0 + y * nx + x`` gets sample (x, y). Non-finite samples (holes) keep
    a vertex at height 0 that no triangle uses.
    """
    rot = ti.Matrix([[ti.cast(frame[i, j], ti.f32) for j in ti.static(range(3))] for i in ti.static(range(3))])
    org = vec3f(ti.cast(frame[3, 0], ti.f32), ti.cast(frame[3, 1], ti.f32), ti.cast(frame[3, 2], ti.f32))
    for r, x in ti.ndrange(rows.shape[0], nx):
        y = rows[r]
        h, s, sp = _surface(heights, state_f, soil0, env, nx, ny, x, y, sink_scale)
        finite = not (ti.math.isinf(h) or ti.math.isnan(h))
        if not finite:
            h = 0.0
        # normal from central differences of the surface (one-sided at the border and beside holes)
        hxm, _s0, _p0 = _surface(heights, state_f, soil0, env, nx, ny, x - 1, y, sink_scale)
        hxp, _s1, _p1 = _surface(heights, state_f, soil0, env, nx, ny, x + 1, y, sink_scale)
        hym, _s2, _p2 = _surface(heights, state_f, soil0, env, nx, ny, x, y - 1, sink_scale)
        hyp, _s3, _p3 = _surface(heights, state_f, soil0, env, nx, ny, x, y + 1, sink_scale)
        sx = ti.cast(ti.min(x + 1, nx - 1) - ti.max(x - 1, 0), ti.f32) * dx
        sy = ti.cast(ti.min(y + 1, ny - 1) - ti.max(y - 1, 0), ti.f32) * dy
        gx = (hxp - hxm) / sx
        gy = (hyp - hym) / sy
        if ti.math.isinf(gx) or ti.math.isnan(gx):
            gx = 0.0
        if ti.math.isinf(gy) or ti.math.isnan(gy):
            gy = 0.0
        n_l = vec3f(-gx, -gy, 1.0).normalized()
        p_l = vec3f(x0 + x * dx, y0 + y * dy, h)
        k = y * nx + x
        verts[v0 + k] = org + rot @ p_l + offset
        normals[v0 + k] = rot @ n_l
        base = vec3f(ti.cast(colors[k][0], ti.f32), ti.cast(colors[k][1], ti.f32), ti.cast(colors[k][2], ti.f32))
        value = ti.cast(0.0, ti.f32)
        if mode == COLOR_SINKAGE:
            value = s
        elif mode == COLOR_PLASTIC:
            value = sp
        t = ti.min(ti.max(value / color_range, 0.0), 1.0)
        cols[v0 + k] = (1.0 - t) * base + t * rut


@ti.kernel
def body_vertices(q: ti.types.ndarray(), local: ti.types.ndarray(), local_n: ti.types.ndarray(),
                  vert_q: ti.types.ndarray(), envs: ti.types.ndarray(), offsets: ti.types.ndarray(),
                  verts: ti.template(), normals: ti.template()):
    """Place every body's tessellation in every tile: vertex ``t * nv + v`` is local vertex ``v`` moved by
    the pose (position, quaternion at column ``vert_q[v]`` of ``q``) of env ``envs[t]``, plus the tile offset."""
    nv = local.shape[0]
    for t, v in ti.ndrange(envs.shape[0], nv):
        e = envs[t]
        pos_r, rot_r = body_pose(q, e, vert_q[v])
        pos = ti.cast(pos_r, ti.f32)
        rot = ti.cast(rot_r, ti.f32)
        lv = vec3f(ti.cast(local[v][0], ti.f32), ti.cast(local[v][1], ti.f32), ti.cast(local[v][2], ti.f32))
        ln = vec3f(ti.cast(local_n[v][0], ti.f32), ti.cast(local_n[v][1], ti.f32), ti.cast(local_n[v][2], ti.f32))
        off = vec3f(ti.cast(offsets[t][0], ti.f32), ti.cast(offsets[t][1], ti.f32), ti.cast(offsets[t][2], ti.f32))
        verts[t * nv + v] = pos + rot @ lv + off
        normals[t * nv + v] = rot @ ln
