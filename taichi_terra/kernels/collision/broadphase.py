"""Broadphase: the shape-shape pairs of one env that may touch this step, by sort and sweep.

Each body is a sphere of its bounding radius grown by its speculative reach (half the contact margin plus
how far it can move in one step, ``dt (|v| + |w| r)``). The bodies are kept sorted by the low end of their
interval along one axis (an insertion sort from the last step's order: about one pass when little moved),
and one sweep along that order tests only the bodies whose intervals overlap. The pairs found are listed
sorted by (lower body index, higher body index), whatever order the sweep met them in, so the contact
rows come in the same order for the same poses, and the warm start finds last step's pair by one merge
walk. The table holds ``max_pairs`` pairs; pairs beyond it are counted and dropped: the pairs of the
lowest body indices are kept (of the one body whose pairs cross the limit, those the sweep met first).

The grown spheres are computed once per body into ``scratch`` (the step's per-body inverse inertia array,
which the dynamics fill only after the contacts are found): row 0 the centre, row 1 (interval low end,
interval high end, grown radius).
"""
import taichi as ti

from ..common.layout import (
    B_NPT,
    B_QS,
    B_TYPE,
    B_US,
    BR_COUNT,
    BR_FILL,
    BR_ORDER,
    BR_START,
    CYLINDER,
    DP_OTHER,
    EI_PAIRS,
    EI_PAIRS_DROPPED,
    F_RAD,
)
from ..common.math import vec3
from .narrowphase import body_sweep_speed


@ti.func
def reach(q: ti.template(), u: ti.template(), body_i: ti.template(), body_f: ti.template(), e, b, half_margin, dt):
    """Centre [m] and grown radius [m] of body ``b``'s bounding sphere."""
    qs = body_i[b][B_QS]
    r = body_f[b][F_RAD]
    return vec3(q[e, qs], q[e, qs + 1], q[e, qs + 2]), r + half_margin + dt * body_sweep_speed(u, e, body_i[b][B_US], r)


@ti.func
def shape_pair_capacity(body_i: ti.template(), a, b):
    """Contact slots a shape-shape pair may fill: every sample point of both shapes (cylinders add two
    rim points each) and one edge-edge contact."""
    n = body_i[a][B_NPT] + body_i[b][B_NPT] + 1
    if body_i[a][B_TYPE] == CYLINDER:
        n += 2
    if body_i[b][B_TYPE] == CYLINDER:
        n += 2
    return n


@ti.func
def sweep(broad: ti.template(), scratch: ti.template(), e, nb, max_pairs, write):
    """One pass along the sorted bodies: every pair whose grown spheres overlap. Without ``write`` it
    counts each body's pairs with higher-index bodies; with it, it writes each pair into the slot range
    the counts gave its lower body."""
    for k in range(nb):
        i = broad[e, k][BR_ORDER]
        si = scratch[e, i]
        ci = vec3(si[0, 0], si[0, 1], si[0, 2])
        k2 = k + 1
        while k2 < nb:
            j = broad[e, k2][BR_ORDER]
            sj = scratch[e, j]
            if sj[1, 0] > si[1, 1]:
                k2 = nb  # every later interval starts further on
            else:
                if (ci - vec3(sj[0, 0], sj[0, 1], sj[0, 2])).norm() < si[1, 2] + sj[1, 2]:
                    lo_b = ti.min(i, j)
                    if write:
                        slot = broad[e, lo_b][BR_START] + broad[e, lo_b][BR_FILL]
                        broad[e, lo_b][BR_FILL] += 1
                        if slot < max_pairs:
                            broad[e, nb + slot] = ti.math.ivec4(lo_b, ti.max(i, j), 0, 0)
                    else:
                        broad[e, lo_b][BR_COUNT] += 1
                k2 += 1


@ti.func
def broadphase(e, q: ti.template(), u: ti.template(), body_i: ti.template(), body_f: ti.template(),
               broad: ti.template(), env_info: ti.template(), scratch: ti.template(), axis, margin, dt):
    """List env ``e``'s candidate shape-shape pairs in ``broad`` (see ``layout.py``) and their number in
    ``env_info``; ``margin`` is the contact margin [m]; ``scratch`` a (n_envs, n_bodies) mat3 array."""
    nb = body_i.shape[0]
    max_pairs = (broad.shape[1] - nb) // 2
    for b in range(nb):
        c, r = reach(q, u, body_i, body_f, e, b, 0.5 * margin, dt)
        x = q[e, body_i[b][B_QS] + axis]
        scratch[e, b] = ti.Matrix([[c[0], c[1], c[2]], [x - r, x + r, r], [0.0, 0.0, 0.0]])
    # 1. insertion sort by the low end of each interval, from the last step's order
    for k in range(1, nb):
        j = broad[e, k][BR_ORDER]
        key = scratch[e, j][1, 0]
        m = k - 1
        while m >= 0:
            o = broad[e, m][BR_ORDER]
            if scratch[e, o][1, 0] > key:
                broad[e, m + 1][BR_ORDER] = o
                m -= 1
            else:
                broad[e, m + 1][BR_ORDER] = j
                m = -2
        if m == -1:
            broad[e, 0][BR_ORDER] = j
    # 2. count each body's pairs, give each body a range of the table, then fill it
    for b in range(nb):
        broad[e, b][BR_COUNT] = 0
    sweep(broad, scratch, e, nb, max_pairs, False)
    total = 0
    for b in range(nb):
        broad[e, b][BR_START] = total
        broad[e, b][BR_FILL] = 0
        total += broad[e, b][BR_COUNT]
    sweep(broad, scratch, e, nb, max_pairs, True)
    n_keep = ti.min(total, max_pairs)
    # 3. each body's pairs in order of the other body (few per body: insertion sort)
    for b in range(nb):
        s0 = broad[e, b][BR_START]
        s1 = ti.min(s0 + broad[e, b][BR_COUNT], n_keep)
        for k in range(s0 + 1, s1):
            row = broad[e, nb + k]
            m = k - 1
            while m >= s0 and broad[e, nb + m][DP_OTHER] > row[DP_OTHER]:
                broad[e, nb + m + 1] = broad[e, nb + m]
                m -= 1
            broad[e, nb + m + 1] = row
    env_info[e][EI_PAIRS] = n_keep
    env_info[e][EI_PAIRS_DROPPED] = total - n_keep
