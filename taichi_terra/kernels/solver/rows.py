"""Contact rows: the two sides of a row (bodies, dof starts, inverse masses and inertias), its pair's
material, and the slot that held its contact feature in the last step (for warm starts).
"""
import taichi as ti

from ..common.layout import (
    B_MAT,
    B_QS,
    B_US,
    DP_BODY,
    DP_COUNT,
    DP_OTHER,
    DP_SLOT,
    EI_PREV_PAIRS,
    F_MASS,
    P_BODY,
    P_CAP,
    P_KIND,
    P_SLOT,
    PAIR_SHAPES,
    PAIR_SOIL,
)
from ..common.math import vec3

mat3 = ti.math.mat3


@ti.func
def pair_entry(e, p, n_static, nb, pair_i: ti.template(), broad: ti.template()):
    """Kind, bodies (a, b) and first slot of pair ``p`` of env ``e``: static pairs ``p < n_static`` from the
    model (``a = -1``: static geometry), shape-shape pairs from this step's broadphase table."""
    kind = PAIR_SHAPES
    a = -1
    b = 0
    base = 0
    if p < n_static:
        pr = pair_i[p]
        kind, b, base = pr[P_KIND], pr[P_BODY], pr[P_SLOT]
    else:
        d = broad[e, nb + p - n_static]
        a, b, base = d[DP_OTHER], d[DP_BODY], d[DP_SLOT]
    return kind, a, b, base


@ti.func
def is_rigid_row(p, pair_i: ti.template(), n_static):
    """Whether the rows of pair ``p`` are rigid contacts (not soil quadrature points)."""
    rigid = True
    if p < n_static:
        rigid = pair_i[p][P_KIND] != PAIR_SOIL
    return rigid


@ti.func
def material_index(p, n_static, n_mat, body_i: ti.template(), a, b):
    """Row of ``pair_mat`` with the (friction, restitution) of pair ``p``: its own row for a static pair,
    the material-pair table after the static rows for two bodies."""
    mi = p
    if p >= n_static:
        mi = n_static + body_i[b][B_MAT] * n_mat + body_i[a][B_MAT]
    return mi


@ti.func
def row_links(q: ti.template(), body_i: ti.template(), body_f: ti.template(), body_iw: ti.template(), e, a, b, point):
    """Both sides of a contact row at world ``point``: dof starts (``us_a = -1`` for static geometry),
    inverse masses, world inverse inertias and the offsets from each centre of mass."""
    qb = body_i[b][B_QS]
    rb = point - vec3(q[e, qb], q[e, qb + 1], q[e, qb + 2])
    ra = vec3(0.0, 0.0, 0.0)
    us_a = -1
    inv_m_a = 0.0
    iw_a = mat3(0.0)
    if a >= 0:
        qa = body_i[a][B_QS]
        ra = point - vec3(q[e, qa], q[e, qa + 1], q[e, qa + 2])
        us_a = body_i[a][B_US]
        inv_m_a = 1.0 / body_f[a][F_MASS]
        iw_a = body_iw[e, a]
    return us_a, body_i[b][B_US], inv_m_a, 1.0 / body_f[b][F_MASS], iw_a, body_iw[e, b], ra, rb


@ti.func
def warm_start_slot(e, r, s, p, n_static, nb, max_pairs, pair_i: ti.template(), c_list: ti.template(),
                    c_feat: ti.template(), broad: ti.template(), env_info: ti.template(), walk_pair, walk, prev_pair):
    """The slot that held row ``r``'s contact feature (slot ``s``, pair ``p``) in the last step, or -1.

    A static pair keeps its slots, and a contact usually keeps its slot; when contacts before it came or
    went, the pair's slots are searched (soil pairs list their features in increasing order, so one
    forward walk per pair finds them all: a scan of the whole pair per row cost rows x capacity, and on
    Vulkan (lavapipe) it was seen to cut the following sweep short). A shape-shape pair first finds
    itself in last step's pair table (both tables are sorted by bodies: one merge walk for all rows).
    Returns the slot and the updated walk cursors."""
    prev = -1
    feat = c_feat[e, s][0]
    if p < n_static:
        base = pair_i[p][P_SLOT]
        cap = pair_i[p][P_CAP]
        if c_feat[e, s][1] == feat:
            prev = s
        elif pair_i[p][P_KIND] == PAIR_SOIL:
            if p != walk_pair:
                walk_pair = p
                walk = 0
            going = walk < cap  # (Taichi's `and` evaluates both sides: no read past the pair's slots)
            while going:
                f = c_feat[e, base + walk][1]
                if f >= 0 and f < feat:
                    walk += 1
                    going = walk < cap
                else:
                    going = False
            if walk < cap:
                if c_feat[e, base + walk][1] == feat:
                    prev = base + walk
        else:
            for k in range(cap):
                if prev < 0 and c_feat[e, base + k][1] == feat:
                    prev = base + k
    else:
        key_b, key_a = c_list[e, r][3], c_list[e, r][2]
        n_prev = env_info[e][EI_PREV_PAIRS]
        old = nb + max_pairs
        going = prev_pair < n_prev
        while going:
            d = broad[e, old + prev_pair]
            if d[DP_BODY] < key_b or (d[DP_BODY] == key_b and d[DP_OTHER] < key_a):
                prev_pair += 1
                going = prev_pair < n_prev
            else:
                going = False
        if prev_pair < n_prev:
            d = broad[e, old + prev_pair]
            if d[DP_BODY] == key_b and d[DP_OTHER] == key_a:
                if s >= d[DP_SLOT] and s < d[DP_SLOT] + d[DP_COUNT] and c_feat[e, s][1] == feat:
                    prev = s
                else:
                    for k in range(d[DP_COUNT]):
                        if prev < 0 and c_feat[e, d[DP_SLOT] + k][1] == feat:
                            prev = d[DP_SLOT] + k
    return prev, walk_pair, walk, prev_pair
