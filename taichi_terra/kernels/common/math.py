"""Small vector, quaternion and geometry helpers shared by every kernel stage.

Quaternions are ``vec4`` in (w, x, y, z) order. All functions are ``@ti.func`` and use the
precision chosen by :func:`taichi_terra.init` (``float`` follows ``default_fp``).
"""
import taichi as ti

from ...backend import ti_real

vec3 = ti.math.vec3
vec4 = ti.math.vec4
mat3 = ti.math.mat3


def tiny(real=None) -> float:
    """A positive number far below any physical value that the real type ``real`` (default: the precision in
    use) still holds: 1e-300 in f64; 1e-37 in f32, just above float32's smallest normal number (1e-300 is 0
    there). The floor of a square root or a divisor that must not be zero."""
    return 1e-300 if (real or ti_real()) == ti.f64 else 1e-37


def edge_slack(real=None) -> float:
    """How far outside a triangle (in barycentric coordinates) a ray may pass and still hit it, in the real type
    ``real`` (default: the precision in use): 64 roundings, 1.4e-14 in f64 and 7.6e-6 in f32. A ray through a
    vertex or an edge that two triangles share (a height scan at a map's own samples) computes barycentric
    coordinates a few roundings below zero in each: without the slack it missed both."""
    import numpy as np

    return 64.0 * float(np.finfo(np.float64 if (real or ti_real()) == ti.f64 else np.float32).eps)


def redundancy_floor(real=None) -> float:
    """The fraction of the largest response below which a direction of a constraint block counts as having none
    (a redundant constraint: its pseudo-inverse leaves it out), in the real type ``real`` (default: the
    precision in use): 1e-9 in f64; 1e-4 in f32, about 840 float32 roundings, where a direction with no
    response comes out of the block's products at some roundings of the largest, not at zero. (With 1e-9 in
    f32 the buggy's suspension loops, planar four-bars closed by pins, took the rounding of their out-of-plane
    direction for a response: its impulse grew by 1e6 N s a sweep and the sweeps ran to their cap from step 6;
    with 1e-5, from step 91.)"""
    return 1e-9 if (real or ti_real()) == ti.f64 else 1e-4


def cancellation_floor(real=None) -> float:
    """The fraction of a direction's own response below which its pivot, in the factor of a constraint block,
    counts as a dependent direction (a redundant constraint), in the real type ``real`` (default: the
    precision in use): 1e-6 in f64, 1e-3 in f32. The pivot is what is left of the direction's response once
    the directions before it are taken out; a redundant one is all cancellation, and what is left is the
    rounding of its entries, which the relative floor of :func:`redundancy_floor` does not always catch:
    in an unpivoted factor, the buggy's upper wishbone pins kept 1.6e-8 of a response near 1 (5e-9 of the
    block's largest) after a hard steer, their inverse took the next pivot's response away (0.95 to 3e-8),
    and the sweeps grew by x1.42 each to 1e13 m/s."""
    return 1e-6 if (real or ti_real()) == ti.f64 else 1e-3


@ti.func
def quat_mul(a, b):
    """Hamilton product ``a * b`` of two (w, x, y, z) quaternions."""
    return vec4(
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    )


@ti.func
def quat_to_mat(q):
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    return mat3(
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
    )


@ti.func
def quat_integrate(q, w, dt):
    """Advance orientation ``q`` by the world angular velocity ``w`` [rad/s] over ``dt`` [s].

    Uses the exact exponential map ``q+ = exp(dt w / 2) * q`` and renormalizes.
    """
    angle = w.norm() * dt
    dq = vec4(1.0, 0.0, 0.0, 0.0)
    if angle > 1e-30:
        axis = w / w.norm()
        s = ti.sin(0.5 * angle)
        dq = vec4(ti.cos(0.5 * angle), axis[0] * s, axis[1] * s, axis[2] * s)
    out = quat_mul(dq, q)
    return out / out.norm()


@ti.func
def skew(v):
    """Cross-product matrix: ``skew(v) @ x == v.cross(x)``."""
    return mat3([0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0])


@ti.func
def tangent_basis(n):
    """Two unit tangents ``t1, t2`` with ``(n, t1, t2)`` right-handed and orthonormal."""
    t1 = vec3(0.0, 0.0, 0.0)
    if ti.abs(n[0]) < 0.57735:
        t1 = vec3(0.0, n[2], -n[1])  # n x e_x
    else:
        t1 = vec3(-n[2], 0.0, n[0])  # n x e_y
    t1 = t1 / t1.norm()
    t2 = n.cross(t1)
    return t1, t2


@ti.func
def is_finite(x):
    """True for a finite float (NaN and +-inf give False)."""
    return (x - x) == 0.0


@ti.func
def closest_point_triangle(p, a, b, c):
    """Closest point to ``p`` on the triangle ``abc`` (Ericson, Real-Time Collision Detection 5.1.5)."""
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = ab.dot(ap)
    d2 = ac.dot(ap)
    result = a
    done = False
    if d1 <= 0.0 and d2 <= 0.0:
        done = True
    bp = p - b
    d3 = ab.dot(bp)
    d4 = ac.dot(bp)
    if not done and d3 >= 0.0 and d4 <= d3:
        result = b
        done = True
    vc = d1 * d4 - d3 * d2
    if not done and vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        result = a + ab * (d1 / (d1 - d3))
        done = True
    cp = p - c
    d5 = ab.dot(cp)
    d6 = ac.dot(cp)
    if not done and d6 >= 0.0 and d5 <= d6:
        result = c
        done = True
    vb = d5 * d2 - d1 * d6
    if not done and vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        result = a + ac * (d2 / (d2 - d6))
        done = True
    va = d3 * d6 - d5 * d4
    if not done and va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        result = b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)))
        done = True
    if not done:
        denom = 1.0 / (va + vb + vc)
        result = a + ab * (vb * denom) + ac * (vc * denom)
    return result


@ti.func
def closest_points_segments(p1, q1, p2, q2):
    """Closest points ``(c1, c2)`` between segments ``p1q1`` and ``p2q2`` (Ericson 5.1.9)."""
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = d1.dot(d1)
    e = d2.dot(d2)
    f = d2.dot(r)
    s = 0.0
    t = 0.0
    eps = 1e-24
    if a <= eps and e <= eps:
        s = 0.0
        t = 0.0
    elif a <= eps:
        s = 0.0
        t = ti.math.clamp(f / e, 0.0, 1.0)
    else:
        c = d1.dot(r)
        if e <= eps:
            t = 0.0
            s = ti.math.clamp(-c / a, 0.0, 1.0)
        else:
            b = d1.dot(d2)
            denom = a * e - b * b
            if denom > eps * a * e:
                s = ti.math.clamp((b * f - c * e) / denom, 0.0, 1.0)
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = ti.math.clamp(-c / a, 0.0, 1.0)
            elif t > 1.0:
                t = 1.0
                s = ti.math.clamp((b - c) / a, 0.0, 1.0)
    return p1 + d1 * s, p2 + d2 * t


@ti.func
def closest_point_segment(p, a, b):
    """Closest point to ``p`` on the segment ``ab``."""
    ab = b - a
    denom = ab.dot(ab)
    t = 0.0
    if denom > 0.0:
        t = ti.math.clamp((p - a).dot(ab) / denom, 0.0, 1.0)
    return a + ab * t


@ti.func
def sym_pinv3(a, rel):
    """Pseudo-inverse of the symmetric positive semi-definite 3x3 matrix ``a``: eigenvalues below ``rel`` times
    the largest count as zero. The eigen-decomposition is cyclic Jacobi (six sweeps: quadratic convergence,
    exact to rounding for 3x3); Taichi's closed-form ``ti.sym_eig`` returns wrong vectors for a singular
    matrix such as a planar loop's response."""
    m = a
    v = ti.Matrix.identity(float, 3)
    for _sweep in range(6):
        for p, q in ti.static(((0, 1), (0, 2), (1, 2))):
            if ti.abs(m[p, q]) > ti.static(tiny()):
                theta = (m[q, q] - m[p, p]) / (2.0 * m[p, q])
                t = 1.0 / (ti.abs(theta) + ti.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / ti.sqrt(t * t + 1.0)
                s = t * c
                rot = ti.Matrix.identity(float, 3)
                rot[p, p], rot[q, q], rot[p, q], rot[q, p] = c, c, s, -s
                m = rot.transpose() @ m @ rot
                v = v @ rot
    top = ti.max(m[0, 0], ti.max(m[1, 1], m[2, 2]))
    out = ti.Matrix.zero(float, 3, 3)
    for i in ti.static(range(3)):
        if m[i, i] > rel * top and top > 0.0:
            col = vec3(v[0, i], v[1, i], v[2, i])
            out += col.outer_product(col) / m[i, i]
    return out


@ti.func
def upper_solve6(u, y):
    """``x`` with ``u x = y`` for an upper triangular 6x6 ``u`` (back substitution; ``u``'s lower part is not
    read)."""
    x = ti.Vector.zero(float, 6)
    for kk in ti.static(range(6)):
        k = ti.static(5 - kk)
        acc = y[k]
        for c in ti.static(range(k + 1, 6)):
            acc -= u[k, c] * x[c]
        x[k] = acc / u[k, k]
    return x
