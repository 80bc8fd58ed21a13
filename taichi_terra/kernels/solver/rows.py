"""Solver rows: what a row is made of and where its data comes from.

A row is one constraint point of the Gauss-Seidel sweep. It names its kind (``layout.py`` ``ROW_*``: the
law the sweep applies) and its two sides, each a link (``-1``: static geometry); ``links.py`` gives
every side's velocity and response. Rows of one pair are consecutive. This module lists the rows of a
step (``build_rows``), looks up a row's material, and finds the slot that held a row's contact feature in
the last step (for warm starts).
"""
import taichi as ti

from ..common.arrays import (
    BODY_I,
    CONTACT,
    ENV,
    FEATURE,
    PAIR,
    PAIR_COUNT,
    PAIR_MATERIAL,
    PREV_SHAPE_PAIR,
    ROW_F,
    ROW_I,
    SETTINGS_I,
    SHAPE_PAIR,
)
from ..common.layout import PAIR_SHAPES, PAIR_SOIL, ROW_CONTACT, ROW_SOIL
from ..common.schema import get, get3, get33, put, put33, putn, row
from ..dynamics.bodies import forget_link_points
from .contact import contact_frame, normal_target
from ..belts.rows import belt_sides, forget_belts, merge_coincident
from ..soil.law import slip_rate
from .links import (
    claim_points,
    link_offset,
    prepare_sides,
    relative_velocity,
    row_offsets,
    row_response,
    soil_footprint_width,
)


@ti.func
def pair_entry(D: ti.template(), e, p, n_static):
    """Kind, bodies (a, b) and first slot of pair ``p`` of env ``e``: static pairs ``p < n_static`` from the
    model (``a = -1``: static geometry), shape-shape pairs from this step's broadphase table."""
    kind = PAIR_SHAPES
    a = -1
    b = 0
    base = 0
    if p < n_static:
        pr = row(D.pair, e, p)
        kind, b, base = pr[PAIR.kind], pr[PAIR.body], pr[PAIR.slot0]
    else:
        d = row(D.shape_pair, e, p - n_static)
        a, b, base = d[SHAPE_PAIR.other], d[SHAPE_PAIR.body], d[SHAPE_PAIR.slot0]
    return kind, a, b, base


@ti.func
def build_rows(D: ti.template(), e, n_static, dt, slop, erp, max_push):
    """One row per contact of every pair of env ``e`` (the static pairs, then this step's shape pairs), in
    that order: kind, slot, pair and sides, the contact frame ``F`` and the point's offsets from both sides
    (``row_geometry`` reads them back for the rest of the step), the Delassus block ``W = F^T J M^-1 J^T F``
    in that frame, and the row's target normal velocity and friction coefficient (rigid rows) or footprint
    width (soil rows), and its material pair's friction and restitution; a contact on a belt also its
    belt's direction, the belt's mid-plane as its point against static geometry, and a merge with a
    coincident contact of the same belt (``belts/rows.py``). Returns the number of rows."""
    n_pairs = n_static + get(D.env, e, 0, ENV.shape_pairs)
    n_rows = 0
    n_tracks = 0
    if ti.static(D.trees):
        forget_link_points(D, e, get(D.settings_i, e, 0, SETTINGS_I.n_trees))
        n_tracks = get(D.settings_i, e, 0, SETTINGS_I.n_tracks)
        forget_belts(D, e)
    for p in range(n_pairs):
        kind, a, b, base = pair_entry(D, e, p, n_static)
        count = get(D.pair_count, e, p, PAIR_COUNT.count)
        width = 0.0
        if kind == PAIR_SOIL and count > 0:  # the footprint's effective width b, turning with the body
            width = soil_footprint_width(D, e, b, get(D.pair, e, p, PAIR.other))
        for k in range(count):
            s = base + k
            r = n_rows
            n_rows += 1
            put(D.row_i, e, r, ROW_I.kind, ROW_SOIL if kind == PAIR_SOIL else ROW_CONTACT)
            put(D.row_i, e, r, ROW_I.slot, s)
            put(D.row_i, e, r, ROW_I.pair, p)
            put(D.row_i, e, r, ROW_I.side_a, a)
            put(D.row_i, e, r, ROW_I.side_b, b)
            put(D.row_i, e, r, ROW_I.impacted, 0)
            frame = contact_frame(get3(D.contact, e, s, CONTACT.normal))
            point = get3(D.contact, e, s, CONTACT.position)
            prepare_sides(D, e, a, b)
            ra, rb = row_offsets(D, e, a, b, point)
            put(D.row_i, e, r, ROW_I.belt_a, -1)
            put(D.row_i, e, r, ROW_I.belt_b, -1)
            if ti.static(D.has_belts):
                if n_tracks > 0:
                    rb = link_offset(D, e, b, belt_sides(D, e, r, a, b, point, get3(D.contact, e, s, CONTACT.normal),
                                                         kind != PAIR_SOIL))
            put33(D.row_f, e, r, ROW_F.frame, frame)
            putn(D.row_f, e, r, ROW_F.offset_a, ra)
            putn(D.row_f, e, r, ROW_F.offset_b, rb)
            claim_points(D, e, r, a, b, ra, rb)
            put33(D.row_f, e, r, ROW_F.delassus, frame.transpose() @ row_response(D, e, r, a, b, ra, rb) @ frame)
            mu, restitution = 0.0, 0.0
            if kind == PAIR_SOIL:
                put(D.row_f, e, r, ROW_F.width, width)
                v = relative_velocity(D, e, r, a, b, ra, rb)  # (at the start of the step)
                n = get3(D.contact, e, s, CONTACT.normal)
                offset = get3(D.contact, e, s, CONTACT.sample_offset)
                put(D.row_f, e, r, ROW_F.slip_rate, slip_rate(offset, v - v.dot(n) * n))
            else:
                put(D.row_f, e, r, ROW_F.target,
                    normal_target(get(D.contact, e, s, CONTACT.depth), dt, slop, erp, max_push))
                mu, restitution = row_material(D, e, r, n_static)
            put(D.row_f, e, r, ROW_F.friction, mu)
            put(D.row_f, e, r, ROW_F.restitution, restitution)
            if ti.static(D.trees):
                if kind != PAIR_SOIL and a < 0 and get(D.row_i, e, r, ROW_I.belt_b) >= 0:
                    merge_coincident(D, e, r)
    return n_rows


@ti.func
def row_material(D: ti.template(), e, r, n_static):
    """(friction, restitution) of row ``r``'s pair: its own entry for a static pair, the material-pair table
    after the static entries for two bodies."""
    ri = row(D.row_i, e, r)
    p = ri[ROW_I.pair]
    mi = p
    if p >= n_static:
        n_mat = get(D.settings_i, e, 0, SETTINGS_I.n_materials)
        mi = n_static + get(D.body_i, e, ri[ROW_I.side_b], BODY_I.material) * n_mat + \
            get(D.body_i, e, ri[ROW_I.side_a], BODY_I.material)
    return get(D.pair_material, e, mi, PAIR_MATERIAL.friction), get(D.pair_material, e, mi, PAIR_MATERIAL.restitution)


@ti.func
def warm_start_slot(D: ti.template(), e, r, n_static, walk_pair, walk, prev_pair):
    """The slot that held row ``r``'s contact feature in the last step, or -1.

    A static pair keeps its slots, and a contact usually keeps its slot; when contacts before it came or
    went, the pair's slots are searched (soil pairs list their features in increasing order, so one
    forward walk per pair finds them all: a scan of the whole pair per row cost rows x capacity, and on
    Vulkan (lavapipe) it was seen to cut the following sweep short). A shape-shape pair first finds
    itself in last step's pair table (both tables are sorted by bodies: one merge walk for all rows).
    Returns the slot and the updated walk cursors."""
    prev = -1
    ri = row(D.row_i, e, r)
    s, p = ri[ROW_I.slot], ri[ROW_I.pair]
    feat = get(D.feature, e, s, FEATURE.now)
    if p < n_static:
        base = get(D.pair, e, p, PAIR.slot0)
        cap = get(D.pair, e, p, PAIR.capacity)
        if get(D.feature, e, s, FEATURE.last) == feat:
            prev = s
        elif get(D.pair, e, p, PAIR.kind) == PAIR_SOIL:
            if p != walk_pair:
                walk_pair = p
                walk = 0
            going = walk < cap  # (Taichi's `and` evaluates both sides: no read past the pair's slots)
            while going:
                f = get(D.feature, e, base + walk, FEATURE.last)
                if f >= 0 and f < feat:
                    walk += 1
                    going = walk < cap
                else:
                    going = False
            if walk < cap:
                if get(D.feature, e, base + walk, FEATURE.last) == feat:
                    prev = base + walk
        else:
            for k in range(cap):
                if prev < 0 and get(D.feature, e, base + k, FEATURE.last) == feat:
                    prev = base + k
    else:
        key_b, key_a = ri[ROW_I.side_b], ri[ROW_I.side_a]
        n_prev = get(D.env, e, 0, ENV.prev_shape_pairs)
        going = prev_pair < n_prev
        while going:
            d = row(D.prev_shape_pair, e, prev_pair)
            if d[PREV_SHAPE_PAIR.body] < key_b or (d[PREV_SHAPE_PAIR.body] == key_b
                                                   and d[PREV_SHAPE_PAIR.other] < key_a):
                prev_pair += 1
                going = prev_pair < n_prev
            else:
                going = False
        if prev_pair < n_prev:
            d = row(D.prev_shape_pair, e, prev_pair)
            if d[PREV_SHAPE_PAIR.body] == key_b and d[PREV_SHAPE_PAIR.other] == key_a:
                slot0, count = d[PREV_SHAPE_PAIR.slot0], d[PREV_SHAPE_PAIR.count]
                if s >= slot0 and s < slot0 + count and get(D.feature, e, s, FEATURE.last) == feat:
                    prev = s
                else:
                    for k in range(count):
                        if prev < 0 and get(D.feature, e, slot0 + k, FEATURE.last) == feat:
                            prev = slot0 + k
    return prev, walk_pair, walk, prev_pair


@ti.func
def row_geometry(D: ti.template(), e, r):
    """Contact frame (n, t1, t2 as columns) and the offsets [m] of the point from each side's reference of
    contact or soil row ``r``, as the row build stored them for this step."""
    return get33(D.row_f, e, r, ROW_F.frame), get3(D.row_f, e, r, ROW_F.offset_a), get3(D.row_f, e, r, ROW_F.offset_b)
