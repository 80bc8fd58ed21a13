"""Internal friction of resting manifolds: the same motion with the least tangential impulses.

A body resting on several coplanar contacts that share one normal (a box on the ground or on another
box) is statically indeterminate: the sweep can end with tangential impulses that push the contacts
against each other and cancel. Only their sum ``T`` and their moment about the normal ``tau`` move the
bodies (with coplanar points, a tangential impulse's moment about any other axis depends on ``T``
alone). Among all distributions with the same ``T`` and ``tau``, the smallest is

    t_k = T / N + b (n x d_k),   b = (tau - (d_mean x T) . n) / sum |d_k|^2,

with ``d_k`` each point's offset from the points' mean. When no contact of the pair slips (tangential
speed below ``STICK_SPEED`` after the sweep) and every new impulse lies in its friction cone, the sweep's
impulses are replaced by these: velocities do not change, and a box at rest reports no internal friction.
A sliding pair keeps its impulses (each opposes its own slip, as Coulomb's law says).
"""
import taichi as ti

from ..common.arrays import CONTACT, ROW_F, ROW_I
from ..common.layout import ROW_CONTACT
from ..common.math import vec3
from ..common.schema import get, get3, putn, row
from .links import relative_velocity
from .rows import row_geometry

_SAME = 1e-9  # normals differing by less, and points off a common plane by less than this times the patch size
STICK_SPEED = 1e-6  # [m/s] a contact slipping slower than this sticks


@ti.func
def relax_pair(D: ti.template(), e, r0, r1):
    """Rows ``r0`` to ``r1 - 1`` (one pair's contacts): replace sticking tangential impulses by the least
    ones with the same total and moment about the normal, when the contacts are coplanar and share it."""
    ri0 = row(D.row_i, e, r0)
    a, b = ri0[ROW_I.side_a], ri0[ROW_I.side_b]
    mu = get(D.row_f, e, r0, ROW_F.friction)
    p0 = get3(D.contact, e, ri0[ROW_I.slot], CONTACT.position)
    frame, _ra, _rb = row_geometry(D, e, r0)
    n = vec3(frame[0, 0], frame[1, 0], frame[2, 0])
    t1 = vec3(frame[0, 1], frame[1, 1], frame[2, 1])
    t2 = vec3(frame[0, 2], frame[1, 2], frame[2, 2])
    # (a soil pair's rows follow their own laws; a belt's contacts push its drives too, and at the belt's
    # mid-plane: both are left as the sweep found them, without a look at their velocities)
    ok = ri0[ROW_I.kind] == ROW_CONTACT and ri0[ROW_I.belt_a] < 0 and ri0[ROW_I.belt_b] < 0
    count = 0
    mean = ti.math.vec2(0.0, 0.0)
    size = 0.0
    last = r1
    if not ok:
        last = r0
    for r in range(r0, last):
        s = get(D.row_i, e, r, ROW_I.slot)
        lam = get3(D.row_f, e, r, ROW_F.impulse)
        pos = get3(D.contact, e, s, CONTACT.position)
        if lam[0] > 0.0:
            d = ti.math.vec2(t1.dot(pos), t2.dot(pos))
            mean += d
            count += 1
            _frame, ra, rb = row_geometry(D, e, r)
            v = relative_velocity(D, e, r, a, b, ra, rb)
            if (v - n * n.dot(v)).norm() > STICK_SPEED:
                ok = False  # sliding: each impulse opposes its own slip
        if (get3(D.contact, e, s, CONTACT.normal) - n).norm() > _SAME:
            ok = False
        size = ti.max(size, (pos - p0).norm())
    if ok and count >= 2:
        mean /= count
        total = ti.math.vec2(0.0, 0.0)
        tau = 0.0
        spread = 0.0
        for r in range(r0, r1):
            s = get(D.row_i, e, r, ROW_I.slot)
            lam = get3(D.row_f, e, r, ROW_F.impulse)
            pos = get3(D.contact, e, s, CONTACT.position)
            if ti.abs(n.dot(pos - p0)) > _SAME * (size + 1e-30):
                ok = False  # not coplanar: the moments about in-plane axes would change
            if lam[0] > 0.0:
                d = ti.math.vec2(t1.dot(pos), t2.dot(pos)) - mean
                t = ti.math.vec2(lam[1], lam[2])
                total += t
                tau += d[0] * t[1] - d[1] * t[0]
                spread += d.norm_sqr()
        bb = 0.0  # (about the mean point, (d_mean x T) vanishes)
        if spread > 0.0:
            bb = tau / spread
        for write in range(2):  # first check every new impulse against its cone, then write them all
            if ok and spread > 0.0:
                for r in range(r0, r1):
                    s = get(D.row_i, e, r, ROW_I.slot)
                    lam = get3(D.row_f, e, r, ROW_F.impulse)
                    if lam[0] > 0.0:
                        pos = get3(D.contact, e, s, CONTACT.position)
                        d = ti.math.vec2(t1.dot(pos), t2.dot(pos)) - mean
                        t = total / count + bb * ti.math.vec2(-d[1], d[0])
                        if write == 0 and t.norm() > mu * lam[0]:
                            ok = False
                        elif write == 1:
                            putn(D.row_f, e, r, ROW_F.impulse, vec3(lam[0], t[0], t[1]))


@ti.func
def relax_internal_friction(D: ti.template(), e, n_rows):
    """Apply ``relax_pair`` to every pair of env ``e`` with two or more rows (a pair's rows are
    consecutive)."""
    r0 = 0
    while r0 < n_rows:
        r1 = r0 + 1
        while r1 < n_rows and get(D.row_i, e, r1, ROW_I.pair) == get(D.row_i, e, r0, ROW_I.pair):
            r1 += 1
        if r1 - r0 >= 2:
            relax_pair(D, e, r0, r1)
        r0 = r1
