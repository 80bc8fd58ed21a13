"""What every narrowphase routine shares: a link's world pose and sweep speed, a shape's sample points, and
``emit``, which appends a contact to its pair's fixed slots (the ``pair_count`` block holds (count,
dropped) per pair).
"""
import taichi as ti

from ..common.arrays import CONTACT, FEATURE, PAIR_COUNT, point_at
from ..common.layout import CYLINDER
from ..common.math import quat_to_mat, vec3, vec4
from ..common.schema import add, get, get3, put, putn
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
def emit(D: ti.template(), e, p, base, cap, pt, n, depth, feat, dedupe):
    """Append one contact (world point, unit normal, depth [m], feature id) to pair ``p`` of env ``e``."""
    cnt = get(D.pair_count, e, p, PAIR_COUNT.count)
    dup = False
    if dedupe:
        for k in range(cnt):
            if (get3(D.contact, e, base + k, CONTACT.position) - pt).norm() < _DEDUPE_EPS:
                dup = True
    if not dup:
        if cnt < cap:
            putn(D.contact, e, base + cnt, CONTACT.position, pt)
            putn(D.contact, e, base + cnt, CONTACT.normal, n)
            put(D.contact, e, base + cnt, CONTACT.depth, depth)
            put(D.feature, e, base + cnt, FEATURE.now, feat)  # (FEATURE.last keeps the last step's feature)
            put(D.pair_count, e, p, PAIR_COUNT.count, cnt + 1)
        else:
            add(D.pair_count, e, p, PAIR_COUNT.dropped, 1)


#: sample points a cylinder adds to its stored ones: the lowest point of each rim along the direction asked
CYLINDER_RIM_POINTS = 2


@ti.func
def sample_count(stype, npt):
    """How many sample points :func:`sample_point` gives for a shape of type ``stype`` with ``npt`` stored
    points."""
    return npt + (CYLINDER_RIM_POINTS if stype == CYLINDER else 0)


@ti.func
def sample_point(points: ti.template(), pt0, npt, stype, prm, down_b, k):
    """Link-frame sample point ``k`` of a shape: its stored points, then, for a cylinder, the lowest point
    of each rim along the link-frame direction ``down_b``; ``ok`` is False for a rim parallel to it."""
    pb = vec3(0.0, 0.0, 0.0)
    ok = True
    if k < npt:
        pb = point_at(points, pt0 + k)
    else:
        pb, ok = cylinder_support(prm, down_b, k - npt)
    return pb, ok
