"""Per-shape geometry in the link frame: signed distance and outward normal, support points.

Link frames have their origin at the centre of mass; capsule and cylinder axes are the link z axis.
"""
import taichi as ti

from ..common.arrays import plane_at, point_at
from ..common.layout import BOX, CAPSULE, CYLINDER, MESH, SPHERE

vec3 = ti.math.vec3


@ti.func
def shape_sdf(stype, prm, p, planes: ti.template(), pl0, npl):
    """Signed distance [m] from the link-frame point ``p`` to the shape (negative inside) and the unit
    outward normal there. ``prm`` holds the shape parameters (see ``bodies/shapes.py``)."""
    sd = 0.0
    n = vec3(0.0, 0.0, 1.0)
    if stype == SPHERE:
        d = p.norm()
        sd = d - prm[0]
        if d > 1e-30:
            n = p / d
    elif stype == CAPSULE:
        s = vec3(0.0, 0.0, ti.math.clamp(p[2], -prm[1], prm[1]))
        d = (p - s).norm()
        sd = d - prm[0]
        if d > 1e-30:
            n = (p - s) / d
    elif stype == BOX:
        h = vec3(prm[0], prm[1], prm[2])
        q = ti.abs(p) - h
        outside = ti.max(q, 0.0)
        if outside.norm() > 0.0:
            sd = outside.norm()
            n = ti.math.sign(p) * outside / sd
        else:
            k = 0
            if q[1] > q[k]:
                k = 1
            if q[2] > q[k]:
                k = 2
            sd = q[k]
            n = vec3(0.0, 0.0, 0.0)
            n[k] = 1.0 if p[k] >= 0.0 else -1.0
    elif stype == CYLINDER:
        rho = ti.sqrt(p[0] * p[0] + p[1] * p[1])
        radial = vec3(1.0, 0.0, 0.0)
        if rho > 1e-30:
            radial = vec3(p[0] / rho, p[1] / rho, 0.0)
        axial = vec3(0.0, 0.0, 1.0 if p[2] >= 0.0 else -1.0)
        qr = rho - prm[0]
        qz = ti.abs(p[2]) - prm[1]
        if qr > 0.0 or qz > 0.0:
            a = ti.max(qr, 0.0)
            b = ti.max(qz, 0.0)
            sd = ti.sqrt(a * a + b * b)
            n = (radial * a + axial * b) / sd
        elif qr > qz:
            sd = qr
            n = radial
        else:
            sd = qz
            n = axial
    elif stype == MESH:
        sd = -1e300
        for k in range(npl):
            pl = plane_at(planes, pl0 + k)
            dist = pl[0] * p[0] + pl[1] * p[1] + pl[2] * p[2] - pl[3]
            if dist > sd:
                sd = dist
                n = vec3(pl[0], pl[1], pl[2])
    return sd, n


@ti.func
def cylinder_support(prm, d, side):
    """Point of the cylinder rim ``side`` (0: -z, 1: +z) furthest along the link-frame direction ``d``;
    ``ok`` is False when ``d`` is parallel to the axis (the whole rim is equally far)."""
    zc = prm[1] if side == 1 else -prm[1]
    rho = ti.sqrt(d[0] * d[0] + d[1] * d[1])
    ok = rho > 1e-9 * d.norm()
    pt = vec3(0.0, 0.0, zc)
    if ok:
        pt = vec3(prm[0] * d[0] / rho, prm[0] * d[1] / rho, zc)
    return pt, ok


@ti.func
def shape_exit(stype, prm, p, d, planes: ti.template(), pl0, npl):
    """Where a ray from the link-frame point ``p`` (inside a box, cylinder or convex mesh) along the unit
    direction ``d`` leaves the shape: the distance [m] and the outward normal of the face it crosses.
    Boxes, cylinder caps and meshes use their face planes; the cylinder side is the circle of radius r."""
    t_exit = 1e300
    n = vec3(0.0, 0.0, 0.0)
    for k in range(npl):
        pl = plane_at(planes, pl0 + k)
        nk = vec3(pl[0], pl[1], pl[2])
        den = nk.dot(d)
        if den > 1e-12:
            t = (pl[3] - nk.dot(p)) / den
            if t < t_exit:
                t_exit = t
                n = nk
    if stype == CYLINDER:
        a = d[0] * d[0] + d[1] * d[1]
        if a > 1e-24:
            b = 2.0 * (p[0] * d[0] + p[1] * d[1])
            c = p[0] * p[0] + p[1] * p[1] - prm[0] * prm[0]
            t = (-b + ti.sqrt(ti.max(b * b - 4.0 * a * c, 0.0))) / (2.0 * a)
            if t < t_exit:
                t_exit = t
                x = p + d * t
                n = vec3(x[0], x[1], 0.0) / prm[0]
    return t_exit, n


@ti.func
def _sphere_interval(o, d, c, r):
    """Parameters [t0, t1] where the line o + t d (unit d) is inside the sphere (c, r); empty: t0 > t1."""
    oc = o - c
    bq = oc.dot(d)
    disc = bq * bq - (oc.dot(oc) - r * r)
    t0 = 1.0
    t1 = 0.0
    if disc >= 0.0:
        sq = ti.sqrt(disc)
        t0 = -bq - sq
        t1 = -bq + sq
    return t0, t1


@ti.func
def shape_ray_entry(stype, prm, o, d, planes: ti.template(), pl0, npl):
    """Where the line ``o + t d`` (link frame, unit ``d``) first enters the shape: ``(hit, t)``.

    Faces (boxes, meshes, cylinder caps) clip the line to an interval; spheres, capsule caps and cylinder
    and capsule sides are solved as quadrics. Used by the soil quadrature's vertical rays."""
    t0 = -1e300
    t1 = 1e300
    if stype == SPHERE:
        t0, t1 = _sphere_interval(o, d, vec3(0.0, 0.0, 0.0), prm[0])
    elif stype == CAPSULE:
        # union of the two cap spheres and the side cylinder between them: earliest entry
        a0, a1 = _sphere_interval(o, d, vec3(0.0, 0.0, -prm[1]), prm[0])
        b0, b1 = _sphere_interval(o, d, vec3(0.0, 0.0, prm[1]), prm[0])
        t0 = 1e300
        t1 = -1e300
        if a0 <= a1:
            t0 = a0
            t1 = a1
        if b0 <= b1:
            t0 = ti.min(t0, b0)
            t1 = ti.max(t1, b1)
        qa = d[0] * d[0] + d[1] * d[1]
        if qa > 1e-24:
            qb = o[0] * d[0] + o[1] * d[1]
            qc = o[0] * o[0] + o[1] * o[1] - prm[0] * prm[0]
            disc = qb * qb - qa * qc
            if disc >= 0.0:
                s0 = (-qb - ti.sqrt(disc)) / qa
                z = o[2] + d[2] * s0
                if ti.abs(z) <= prm[1] and s0 < t0:
                    t0 = s0
                    t1 = ti.max(t1, s0)  # (the interval is non-empty even where the line misses both caps)
    else:
        for k in range(npl):
            pl = plane_at(planes, pl0 + k)
            nk = vec3(pl[0], pl[1], pl[2])
            den = nk.dot(d)
            dist = pl[3] - nk.dot(o)  # >= 0 inside this face's half-space at t = 0
            if ti.abs(den) < 1e-30:
                if dist < 0.0:
                    t0, t1 = 1.0, 0.0
            elif den > 0.0:
                t1 = ti.min(t1, dist / den)
            else:
                t0 = ti.max(t0, dist / den)
        if stype == CYLINDER:
            qa = d[0] * d[0] + d[1] * d[1]
            qb = o[0] * d[0] + o[1] * d[1]
            qc = o[0] * o[0] + o[1] * o[1] - prm[0] * prm[0]
            if qa > 1e-24:
                disc = qb * qb - qa * qc
                if disc < 0.0:
                    t0, t1 = 1.0, 0.0
                else:
                    t0 = ti.max(t0, (-qb - ti.sqrt(disc)) / qa)
                    t1 = ti.min(t1, (-qb + ti.sqrt(disc)) / qa)
            elif qc > 0.0:
                t0, t1 = 1.0, 0.0
    return t0 <= t1, t0


@ti.func
def footprint_width(stype, prm, r_l, points: ti.template(), pt0, npt):
    """Effective width b [m] of a shape's footprint on a bed: the narrowest width of its projection on
    the bed plane (``r_l``: link-to-bed rotation). Boxes and meshes (their link-frame bounding box) project
    to a zonotope whose narrowest width lies across one of its three generators; a cylinder gives
    min(2 r, h |a_xy| + 2 r |a_z|) for its axis a; spheres and capsules their diameter."""
    b = 2.0 * prm[0]
    if stype == BOX or stype == MESH:
        half = vec3(prm[0], prm[1], prm[2])
        if stype == MESH:
            lo = vec3(1e300, 1e300, 1e300)
            hi = -lo
            for k in range(npt):
                lo = ti.min(lo, point_at(points, pt0 + k))
                hi = ti.max(hi, point_at(points, pt0 + k))
            half = 0.5 * (hi - lo)
        g = ti.Matrix.zero(float, 3, 2)
        for k in ti.static(range(3)):
            g[k, 0] = 2.0 * half[k] * r_l[0, k]
            g[k, 1] = 2.0 * half[k] * r_l[1, k]
        b = 1e300
        for k in range(3):
            gk = ti.math.vec2(g[k, 0], g[k, 1])
            if gk.norm() > 1e-12:
                u = ti.math.vec2(-gk[1], gk[0]) / gk.norm()
                width = 0.0
                for j in ti.static(range(3)):
                    width += ti.abs(g[j, 0] * u[0] + g[j, 1] * u[1])
                b = ti.min(b, width)
    elif stype == CYLINDER:
        axis = vec3(r_l[0, 2], r_l[1, 2], r_l[2, 2])
        b = ti.min(2.0 * prm[0], 2.0 * prm[1] * ti.sqrt(axis[0] ** 2 + axis[1] ** 2) + 2.0 * prm[0] * ti.abs(axis[2]))
    return b
