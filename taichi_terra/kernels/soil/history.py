"""Soil history after a step's sweep: loaded samples take their end-of-step sinkage and slip, the others
recover their elastic part (``terrain/deformable.py``); sample rows whose surface changed advance their
revision.
"""
import taichi as ti

from ..common.arrays import (CONTACT, FEATURE, MAP_I, PAIR, ROW_F, ROW_I, ROW_REVISION, SOIL, SOIL_MATERIAL,
                             SOIL_SPAN)
from ..common.layout import FEAT_SOIL, ROW_SOIL
from ..common.schema import add, get, getn, put, put_row, row
from ..solver.links import relative_velocity
from ..solver.rows import row_geometry
from .law import soil_pressure


@ti.func
def soil_point(D: ti.template(), e, m, idx):
    """Material (vector of 8) and state (s, s_p, j, loaded) of sample ``idx`` of bed ``m``."""
    return getn(D.soil_material, e, m, 0, SOIL_MATERIAL.stride), row(D.soil, e, get(D.map_i, e, m, MAP_I.soil0) + idx)


@ti.func
def commit_soil(D: ti.template(), e, n_maps, n_rows, dt):
    """Write the soil history of env ``e`` after the sweep (``terrain/deformable.py`` describes it) and
    advance the revision of every sample row whose surface height changed: :func:`clear_soil_row` for every
    sample row, :func:`commit_loaded_soil`, then :func:`recover_soil_row` for every sample row. The GPU layout
    (``kernels/step.py`` ``stage_kernels``) runs the row parts parallel over (env, sample row).

    Only the samples loaded in the last step can hold an elastic part or a slip that an unloaded sample gives
    up: each sample row keeps the x range of those (``SOIL_SPAN``), so a step visits them and its own loaded
    samples, not the whole bed."""
    for m in range(n_maps):
        mi = row(D.map_i, e, m)
        if mi[MAP_I.soil0] >= 0:
            for y in range(mi[MAP_I.ny]):
                clear_soil_row(D, e, mi, y)
    commit_loaded_soil(D, e, n_rows, dt)
    for m in range(n_maps):
        mi = row(D.map_i, e, m)
        if mi[MAP_I.soil0] >= 0:
            for y in range(mi[MAP_I.ny]):
                recover_soil_row(D, e, mi, y)


@ti.func
def soil_rows_of(D: ti.template(), e, n_maps):
    """The number of soil sample rows of env ``e``'s beds (they are numbered across beds)."""
    n = 0
    for m in range(n_maps):
        mi = row(D.map_i, e, m)
        if mi[MAP_I.soil0] >= 0:
            n = ti.max(n, mi[MAP_I.soil_row0] + mi[MAP_I.ny])
    return n


@ti.func
def soil_row_at(D: ti.template(), e, n_maps, sr):
    """The bed holding soil sample row ``sr`` (numbered across beds), as its ``MAP_I`` row, and the row's
    index ``y`` in that bed (-1 when no bed holds it)."""
    mi = row(D.map_i, e, 0)
    y = -1
    for m in range(n_maps):
        r = row(D.map_i, e, m)
        if r[MAP_I.soil0] >= 0 and r[MAP_I.soil_row0] <= sr and sr < r[MAP_I.soil_row0] + r[MAP_I.ny]:
            mi, y = r, sr - r[MAP_I.soil_row0]
    return mi, y


@ti.func
def clear_soil_row(D: ti.template(), e, mi, y):
    """Sample row ``y`` of the bed whose ``MAP_I`` row is ``mi``, before the loaded rows are written: the last
    step's loaded flags go and this step's x range starts empty."""
    sr = mi[MAP_I.soil_row0] + y
    for x in range(get(D.soil_span, e, sr, SOIL_SPAN.lo), get(D.soil_span, e, sr, SOIL_SPAN.hi) + 1):
        put(D.soil, e, mi[MAP_I.soil0] + y * mi[MAP_I.nx] + x, SOIL.loaded, 0.0)
    put(D.soil_span, e, sr, SOIL_SPAN.next_lo, mi[MAP_I.nx])
    put(D.soil_span, e, sr, SOIL_SPAN.next_hi, -1)


@ti.func
def commit_loaded_soil(D: ti.template(), e, n_rows, dt):
    """The samples the step's soil rows loaded (rows below ``n_rows``): each loaded soil row gives its sample a
    sinkage, a plastic sinkage and a slip; a sample under several bodies (each loading its part of the sample's
    cell) takes the largest of each, whatever the rows' order. The first pass reads every sample's plastic
    sinkage as it was at the start of the step (the rows' depths are measured from that rut floor) and writes
    the sinkage and slip; the second writes the plastic sinkage. A row's slip grows at its rate
    (``ROW_F.slip_rate``, :func:`~.law.slip_rate`)."""
    for r in range(n_rows):
        ri = row(D.row_i, e, r)
        s, p = ri[ROW_I.slot], ri[ROW_I.pair]
        if ri[ROW_I.kind] == ROW_SOIL and get(D.row_f, e, r, ROW_F.impulse) > 0.0:
            m = get(D.pair, e, p, PAIR.other)
            idx = get(D.feature, e, s, FEATURE.now) - FEAT_SOIL
            mat, st = soil_point(D, e, m, idx)
            frame, ra, rb = row_geometry(D, e, r)
            vloc = frame.transpose() @ relative_velocity(D, e, r, ri[ROW_I.side_a], ri[ROW_I.side_b], ra, rb)
            delta_e = st[SOIL.plastic] - get(D.contact, e, s, CONTACT.depth) - dt * vloc[0]
            pressure = soil_pressure(delta_e, st[SOIL.plastic], get(D.row_f, e, r, ROW_F.width), mat)
            s_p = ti.max(st[SOIL.plastic], delta_e - pressure / mat[SOIL_MATERIAL.elastic_stiffness])
            rate = get(D.row_f, e, r, ROW_F.slip_rate)
            j = st[SOIL.slip] + rate * dt * ti.sqrt(vloc[1] * vloc[1] + vloc[2] * vloc[2])
            s_new = ti.max(delta_e, s_p)
            if st[SOIL.loaded] != 0.0:  # (another body's row loaded the sample already in this pass)
                s_new = ti.max(s_new, st[SOIL.sinkage])
                j = ti.max(j, st[SOIL.slip])
            mi = row(D.map_i, e, m)
            sr = mi[MAP_I.soil_row0] + idx // mi[MAP_I.nx]
            if s_new != st[SOIL.sinkage]:
                add(D.rev, e, sr, ROW_REVISION.revision, 1)
            put_row(D.soil, e, mi[MAP_I.soil0] + idx, ti.Vector([s_new, st[SOIL.plastic], j, 1.0]))
            put(D.row_f, e, r, ROW_F.plastic, s_p)
            x = idx % mi[MAP_I.nx]
            put(D.soil_span, e, sr, SOIL_SPAN.next_lo, ti.min(get(D.soil_span, e, sr, SOIL_SPAN.next_lo), x))
            put(D.soil_span, e, sr, SOIL_SPAN.next_hi, ti.max(get(D.soil_span, e, sr, SOIL_SPAN.next_hi), x))
    for r in range(n_rows):  # (the plastic sinkage, once every row has read the old one)
        ri = row(D.row_i, e, r)
        if ri[ROW_I.kind] == ROW_SOIL and get(D.row_f, e, r, ROW_F.impulse) > 0.0:
            m = get(D.pair, e, ri[ROW_I.pair], PAIR.other)
            k = get(D.map_i, e, m, MAP_I.soil0) + get(D.feature, e, ri[ROW_I.slot], FEATURE.now) - FEAT_SOIL
            put(D.soil, e, k, SOIL.plastic, ti.max(get(D.soil, e, k, SOIL.plastic), get(D.row_f, e, r, ROW_F.plastic)))


@ti.func
def recover_soil_row(D: ti.template(), e, mi, y):
    """Sample row ``y`` of the bed whose ``MAP_I`` row is ``mi``, after the loaded rows are written: the samples
    the last step loaded and this one did not recover their elastic part and forget their slip; the row's
    revision advances if its surface changed, and this step's x range becomes the row's."""
    sr = mi[MAP_I.soil_row0] + y
    changed = False
    for x in range(get(D.soil_span, e, sr, SOIL_SPAN.lo), get(D.soil_span, e, sr, SOIL_SPAN.hi) + 1):
        k = mi[MAP_I.soil0] + y * mi[MAP_I.nx] + x
        st = row(D.soil, e, k)
        if st[SOIL.loaded] == 0.0:
            if st[SOIL.sinkage] != st[SOIL.plastic]:
                changed = True
            put_row(D.soil, e, k, ti.Vector([st[SOIL.plastic], st[SOIL.plastic], 0.0, 0.0]))
    if changed:
        add(D.rev, e, sr, ROW_REVISION.revision, 1)
    put(D.soil_span, e, sr, SOIL_SPAN.lo, get(D.soil_span, e, sr, SOIL_SPAN.next_lo))
    put(D.soil_span, e, sr, SOIL_SPAN.hi, get(D.soil_span, e, sr, SOIL_SPAN.next_hi))
