"""Per-shape geometry in the link frame: signed distance and outward normal, support points.

Link frames have their origin at the centre of mass; capsule and cylinder axes are the link z axis.
"""
import taichi as ti

from .layout import BOX, CAPSULE, CYLINDER, MESH, SPHERE

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
        if d > 1e-300:
            n = p / d
    elif stype == CAPSULE:
        s = vec3(0.0, 0.0, ti.math.clamp(p[2], -prm[1], prm[1]))
        d = (p - s).norm()
        sd = d - prm[0]
        if d > 1e-300:
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
        if rho > 1e-300:
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
            pl = planes[pl0 + k]
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
        pl = planes[pl0 + k]
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
