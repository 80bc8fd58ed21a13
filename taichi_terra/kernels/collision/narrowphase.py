"""What every narrowphase routine shares: a link's world pose and sweep speed, a shape's sample points, and
``emit``, which appends a contact to its pair's fixed slots (``c_count`` holds (count, dropped) per pair).
"""
import taichi as ti

from ..common.math import quat_to_mat, vec3, vec4
from .shapes import cylinder_support

_DEDUPE_EPS = 1e-9  # [m] two contacts of one pair closer than this are one contact


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
            c_feat[e, base + cnt][0] = feat  # (component 1 keeps the last step's feature of this slot)
            c_count[e, p][0] = cnt + 1
        else:
            c_count[e, p][1] += 1


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
