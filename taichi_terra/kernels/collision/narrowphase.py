"""What every narrowphase routine shares: a link's world pose and sweep speed, a shape's sample points, the
:class:`Pose`, :class:`Shape` and :class:`Slots` structs, and ``emit``, which appends a contact to its pair's
fixed slots (the ``pair_count`` block holds (count, dropped) per pair).
"""
import taichi as ti

from ..common.arrays import BODY_F, BODY_I, CONTACT, FEATURE, FOUND_F, FOUND_I, PAIR_COUNT, body_params, point_at
from ..common.layout import CYLINDER
from ..common.math import quat_to_mat, vec3, vec4
from ..common.schema import add, get, get3, put, putn
from .shapes import cylinder_support

_DEDUPE_EPS = 1e-9  # [m] two contacts of one pair closer than this are one contact
_vec3 = ti.types.vector(3, float)
_vec4 = ti.types.vector(4, float)
_mat3 = ti.types.matrix(3, 3, float)


@ti.dataclass
class Slots:
    """Where the contacts of one pair go: env ``e``, pair ``p``, its first contact slot ``base`` and its
    ``cap`` slots (``emit``), in the ``contact`` and ``feature`` blocks or, ``staged`` (1), in the
    ``found_point`` blocks (a shape-shape pair found on its own thread: ``kernels/step.py``
    ``stage_shape_pair``)."""
    e: ti.i32
    p: ti.i32
    base: ti.i32
    cap: ti.i32
    staged: ti.i32


@ti.dataclass
class Pose:
    """A frame's origin ``pos`` [m] and rotation ``rot``, both in the frame they are expressed in (a link in the
    world, a height map in the world, a link in a map's frame)."""
    pos: _vec3
    rot: _mat3


@ti.dataclass
class Shape:
    """A body's collision shape as the narrowphase reads it: its type ``kind`` (``common/layout.py``), its
    sample points ``point0 .. point0 + n_points`` and face planes ``plane0 .. plane0 + n_planes`` in the model's
    ``point`` and ``plane`` blocks, its parameters ``prm`` (per type: a box's half sizes, a cylinder's radius
    and half length, ...), its ``inflation`` [m] (a sphere's or capsule's radius about its points, else 0) and
    its bounding ``radius`` [m]."""
    kind: ti.i32
    point0: ti.i32
    n_points: ti.i32
    plane0: ti.i32
    n_planes: ti.i32
    prm: _vec4
    inflation: float
    radius: float


@ti.func
def shape_of(bd, bf):
    """The :class:`Shape` of a body from its ``body_i`` row ``bd`` and ``body_f`` row ``bf``."""
    return Shape(kind=bd[BODY_I.shape], point0=bd[BODY_I.point0], n_points=bd[BODY_I.n_points],
                 plane0=bd[BODY_I.plane0], n_planes=bd[BODY_I.n_planes], prm=body_params(bf),
                 inflation=bf[BODY_F.inflation], radius=bf[BODY_F.radius])


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
def emit(D: ti.template(), slots, pt, n, depth, feat, dedupe):
    """Append one contact (world point, unit normal, depth [m], feature id) to the pair's ``slots``
    (:class:`Slots`); ``dedupe``: not where the pair already has a contact within 1 nm."""
    e, p, base, cap = slots.e, slots.p, slots.base, slots.cap
    cnt = get(D.pair_count, e, p, PAIR_COUNT.count)
    dup = False
    if dedupe:
        for k in range(cnt):
            seen = vec3(0.0, 0.0, 0.0)
            if slots.staged:
                seen = get3(D.found_f, e, base + k, FOUND_F.position)
            else:
                seen = get3(D.contact, e, base + k, CONTACT.position)
            if (seen - pt).norm() < _DEDUPE_EPS:
                dup = True
    if not dup:
        if cnt < cap:
            if slots.staged:
                putn(D.found_f, e, base + cnt, FOUND_F.position, pt)
                putn(D.found_f, e, base + cnt, FOUND_F.normal, n)
                put(D.found_f, e, base + cnt, FOUND_F.depth, depth)
                put(D.found_i, e, base + cnt, FOUND_I.feature, feat)
            else:
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
