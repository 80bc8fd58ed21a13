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

from .contact import relative_velocity
from ..common.math import tangent_basis, vec3
from .rows import is_rigid_row, material_index, row_links

_SAME = 1e-9  # normals differing by less, and points off a common plane by less than this times the patch size
STICK_SPEED = 1e-6  # [m/s] a contact slipping slower than this sticks


@ti.func
def relax_pair(e, r0, r1, n_static, n_mat, q: ti.template(), u: ti.template(), body_i: ti.template(),
               body_f: ti.template(), body_iw: ti.template(), pair_i: ti.template(), pair_mat: ti.template(),
               c_list: ti.template(), c_pos: ti.template(), c_nrm: ti.template(), c_lam: ti.template()):
    """Rows ``r0`` to ``r1 - 1`` (one pair's contacts): replace sticking tangential impulses by the least
    ones with the same total and moment about the normal, when the contacts are coplanar and share it."""
    row = c_list[e, r0]
    p, a, b = row[1], row[2], row[3]
    mu = pair_mat[material_index(p, n_static, n_mat, body_i, a, b)][0]
    n = c_nrm[e, row[0]]
    t1, t2 = tangent_basis(n)
    ok = is_rigid_row(p, pair_i, n_static)
    count = 0
    mean = ti.math.vec2(0.0, 0.0)
    size = 0.0
    for r in range(r0, r1):
        s = c_list[e, r][0]
        lam = c_lam[e, s]
        if lam[0] > 0.0:
            d = ti.math.vec2(t1.dot(c_pos[e, s]), t2.dot(c_pos[e, s]))
            mean += d
            count += 1
            us_a, us_b, _ima, _imb, _iwa, _iwb, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b, c_pos[e, s])
            v = relative_velocity(u, e, us_a, us_b, ra, rb)
            if (v - n * n.dot(v)).norm() > STICK_SPEED:
                ok = False  # sliding: each impulse opposes its own slip
        if (c_nrm[e, s] - n).norm() > _SAME:
            ok = False
        size = ti.max(size, (c_pos[e, s] - c_pos[e, row[0]]).norm())
    if ok and count >= 2:
        mean /= count
        total = ti.math.vec2(0.0, 0.0)
        tau = 0.0
        spread = 0.0
        for r in range(r0, r1):
            s = c_list[e, r][0]
            lam = c_lam[e, s]
            if ti.abs(n.dot(c_pos[e, s] - c_pos[e, row[0]])) > _SAME * (size + 1e-30):
                ok = False  # not coplanar: the moments about in-plane axes would change
            if lam[0] > 0.0:
                d = ti.math.vec2(t1.dot(c_pos[e, s]), t2.dot(c_pos[e, s])) - mean
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
                    s = c_list[e, r][0]
                    lam = c_lam[e, s]
                    if lam[0] > 0.0:
                        d = ti.math.vec2(t1.dot(c_pos[e, s]), t2.dot(c_pos[e, s])) - mean
                        t = total / count + bb * ti.math.vec2(-d[1], d[0])
                        if write == 0 and t.norm() > mu * lam[0]:
                            ok = False
                        elif write == 1:
                            c_lam[e, s] = vec3(lam[0], t[0], t[1])


@ti.func
def relax_internal_friction(e, n_rows, n_static, n_mat, q: ti.template(), u: ti.template(), body_i: ti.template(),
                            body_f: ti.template(), body_iw: ti.template(), pair_i: ti.template(),
                            pair_mat: ti.template(), c_list: ti.template(), c_pos: ti.template(),
                            c_nrm: ti.template(), c_lam: ti.template()):
    """Apply ``relax_pair`` to every pair of env ``e`` with two or more rows (a pair's rows are
    consecutive)."""
    r0 = 0
    while r0 < n_rows:
        r1 = r0 + 1
        while r1 < n_rows and c_list[e, r1][1] == c_list[e, r0][1]:
            r1 += 1
        if r1 - r0 >= 2:
            relax_pair(e, r0, r1, n_static, n_mat, q, u, body_i, body_f, body_iw, pair_i, pair_mat, c_list, c_pos,
                       c_nrm, c_lam)
        r0 = r1
