"""Broadphase: the shape-shape pairs of one env that may touch this step, by sort and sweep.

Each body is a sphere of its bounding radius grown by its speculative reach (half the contact margin plus
how far it can move in one step, ``dt (|v| + |w| r)``). The bodies are kept sorted by the low end of their
interval along one axis (an insertion sort from the last step's order: about one pass when little moved),
and one sweep along that order tests only the bodies whose intervals overlap. The pairs found are listed
sorted by (lower body index, higher body index), whatever order the sweep met them in, so the contact
rows come in the same order for the same poses, and the warm start finds last step's pair by one merge
walk. The table holds ``max_pairs`` pairs; pairs beyond it are counted and dropped: the pairs of the
lowest body indices are kept (of the one body whose pairs cross the limit, those the sweep met first).

The grown spheres are computed once per body into the ``reach`` block of the step's scratch.
"""
import taichi as ti

from ..common.arrays import BODY_F, BODY_I, ENV, JOINT_I, REACH, SHAPE_PAIR, SWEEP, SWEEP_ORDER, TREE
from ..common.layout import CYLINDER, JOINT_FIXED_ROOT
from ..common.math import vec3
from ..common.schema import add, get, put, put_row, putn, row
from ..dynamics.bodies import body_position, body_sweep_speed


@ti.func
def reach(D: ti.template(), e, b, half_margin, dt):
    """Centre [m] and grown radius [m] of body ``b``'s bounding sphere."""
    r = get(D.body_f, e, b, BODY_F.radius)
    pos = body_position(D, e, b)
    return pos, r + half_margin + dt * body_sweep_speed(D, e, b, r, pos)


@ti.func
def shape_pair_capacity(D: ti.template(), a, b):
    """Contact slots a shape-shape pair may fill: every sample point of both shapes (cylinders add two
    rim points each) and one edge-edge contact."""
    n = get(D.body_i, 0, a, BODY_I.n_points) + get(D.body_i, 0, b, BODY_I.n_points) + 1
    if get(D.body_i, 0, a, BODY_I.shape) == CYLINDER:
        n += 2
    if get(D.body_i, 0, b, BODY_I.shape) == CYLINDER:
        n += 2
    return n


@ti.func
def excluded(D: ti.template(), e, i, j):
    """Whether bodies ``i`` and ``j`` never collide: shapes on one link, on links of one articulated tree
    unless the tree has self-collision on (and then still a link and its parent), or on two fixed bases."""
    out = False
    if ti.static(D.trees):
        ji, jj = get(D.body_i, e, i, BODY_I.joint), get(D.body_i, e, j, BODY_I.joint)
        if ji >= 0 and jj >= 0:
            fixed_i = get(D.joint_i, e, ji, JOINT_I.type) == JOINT_FIXED_ROOT
            fixed_j = get(D.joint_i, e, jj, JOINT_I.type) == JOINT_FIXED_ROOT
            t = get(D.joint_i, e, ji, JOINT_I.tree)
            out = fixed_i and fixed_j  # two links welded to the world
            if not out and t == get(D.joint_i, e, jj, JOINT_I.tree):
                out = True
                if ji != jj and get(D.tree, e, t, TREE.self_collision) != 0:
                    out = get(D.joint_i, e, ji, JOINT_I.parent) == jj or get(D.joint_i, e, jj, JOINT_I.parent) == ji
    return out


@ti.func
def sweep(D: ti.template(), e, nb, max_pairs, write):
    """One pass along the sorted bodies: every pair whose grown spheres overlap. Without ``write`` it
    counts each body's pairs with higher-index bodies; with it, it writes each pair into the slot range
    the counts gave its lower body."""
    for k in range(nb):
        i = get(D.sweep_order, e, k, SWEEP_ORDER.body)
        si = row(D.reach, e, i)
        ci = vec3(si[REACH.centre], si[REACH.centre + 1], si[REACH.centre + 2])
        k2 = k + 1
        while k2 < nb:
            j = get(D.sweep_order, e, k2, SWEEP_ORDER.body)
            sj = row(D.reach, e, j)
            if sj[REACH.low] > si[REACH.high]:
                k2 = nb  # every later interval starts further on
            else:
                if (ci - vec3(sj[REACH.centre], sj[REACH.centre + 1], sj[REACH.centre + 2])).norm() < \
                        si[REACH.radius] + sj[REACH.radius] and not excluded(D, e, i, j):
                    lo_b = ti.min(i, j)
                    if write:
                        slot = get(D.sweep, e, lo_b, SWEEP.start) + get(D.sweep, e, lo_b, SWEEP.fill)
                        add(D.sweep, e, lo_b, SWEEP.fill, 1)
                        if slot < max_pairs:
                            put_row(D.shape_pair, e, slot, ti.math.ivec4(lo_b, ti.max(i, j), 0, 0))
                    else:
                        add(D.sweep, e, lo_b, SWEEP.count, 1)
                k2 += 1


@ti.func
def broadphase(D: ti.template(), e, nb, max_pairs, axis, margin, dt):
    """List env ``e``'s candidate shape-shape pairs in the ``shape_pair`` block and their number in the
    ``env`` block; ``margin`` is the contact margin [m]."""
    for b in range(nb):
        c, r = reach(D, e, b, 0.5 * margin, dt)
        x = ti.select(axis == 0, c[0], ti.select(axis == 1, c[1], c[2]))
        putn(D.reach, e, b, REACH.centre, c)
        put(D.reach, e, b, REACH.low, x - r)
        put(D.reach, e, b, REACH.high, x + r)
        put(D.reach, e, b, REACH.radius, r)
    # 1. insertion sort by the low end of each interval, from the last step's order
    for k in range(1, nb):
        j = get(D.sweep_order, e, k, SWEEP_ORDER.body)
        key = get(D.reach, e, j, REACH.low)
        m = k - 1
        while m >= 0:
            o = get(D.sweep_order, e, m, SWEEP_ORDER.body)
            if get(D.reach, e, o, REACH.low) > key:
                put(D.sweep_order, e, m + 1, SWEEP_ORDER.body, o)
                m -= 1
            else:
                put(D.sweep_order, e, m + 1, SWEEP_ORDER.body, j)
                m = -2
        if m == -1:
            put(D.sweep_order, e, 0, SWEEP_ORDER.body, j)
    # 2. count each body's pairs, give each body a range of the table, then fill it
    for b in range(nb):
        put(D.sweep, e, b, SWEEP.count, 0)
    sweep(D, e, nb, max_pairs, False)
    total = 0
    for b in range(nb):
        put(D.sweep, e, b, SWEEP.start, total)
        put(D.sweep, e, b, SWEEP.fill, 0)
        total += get(D.sweep, e, b, SWEEP.count)
    sweep(D, e, nb, max_pairs, True)
    n_keep = ti.min(total, max_pairs)
    # 3. each body's pairs in order of the other body (few per body: insertion sort)
    for b in range(nb):
        s0 = get(D.sweep, e, b, SWEEP.start)
        s1 = ti.min(s0 + get(D.sweep, e, b, SWEEP.count), n_keep)
        for k in range(s0 + 1, s1):
            pr = row(D.shape_pair, e, k)
            m = k - 1
            while m >= s0 and get(D.shape_pair, e, m, SHAPE_PAIR.other) > pr[SHAPE_PAIR.other]:
                put_row(D.shape_pair, e, m + 1, row(D.shape_pair, e, m))
                m -= 1
            put_row(D.shape_pair, e, m + 1, pr)
    put(D.env, e, 0, ENV.shape_pairs, n_keep)
    put(D.env, e, 0, ENV.pairs_dropped, total - n_keep)
