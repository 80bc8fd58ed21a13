"""Soil history after a step's sweep: loaded samples take their end-of-step sinkage and slip, the others
recover their elastic part (``terrain/deformable.py``); sample rows whose surface changed advance their
revision.
"""
import taichi as ti

from ..solver.contact import contact_frame, relative_velocity
from ..common.layout import FEAT_SOIL, HM_SOIL0, P_KIND, P_OTHER, PAIR_SOIL
from ..solver.rows import row_links
from .law import soil_pressure


@ti.func
def soil_point(hm_int: ti.template(), hm_geom: ti.template(), soil_state: ti.template(), e, m, idx):
    """Material (vector of 8) and state (s, s_p, j, loaded) of sample ``idx`` of bed ``m``."""
    g = hm_geom[m]
    mat = ti.Vector([g[HM_SOIL0 + k] for k in ti.static(range(8))])
    return mat, soil_state[e, hm_int[m][3] + idx]


@ti.func
def commit_soil(e, n_soil, n_rows, n_static, q: ti.template(), u: ti.template(), body_i: ti.template(),
                body_f: ti.template(), body_iw: ti.template(), pair_i: ti.template(), hm_int: ti.template(),
                hm_geom: ti.template(), c_list: ti.template(), c_pos: ti.template(), c_nrm: ti.template(),
                c_depth: ti.template(), c_feat: ti.template(), c_lam: ti.template(), c_target: ti.template(),
                soil_state: ti.template(), soil_rev: ti.template(), dt):
    """Write the soil history of env ``e`` after the sweep (``terrain/deformable.py`` describes it) and
    advance the revision of every sample row whose surface height changed."""
    for k in range(n_soil):
        soil_state[e, k][3] = 0.0
    for r in range(n_rows):
        row = c_list[e, r]
        s, p = row[0], row[1]
        is_soil = False
        if p < n_static:
            is_soil = pair_i[p][P_KIND] == PAIR_SOIL
        if is_soil and c_lam[e, s][0] > 0.0:
            m = pair_i[p][P_OTHER]
            idx = c_feat[e, s][0] - FEAT_SOIL
            mat, st = soil_point(hm_int, hm_geom, soil_state, e, m, idx)
            us_a, us_b, _ima, _imb, _iwa, _iwb, ra, rb = row_links(q, body_i, body_f, body_iw, e, row[2], row[3],
                                                                   c_pos[e, s])
            vloc = contact_frame(c_nrm[e, s]).transpose() @ relative_velocity(u, e, us_a, us_b, ra, rb)
            delta_e = st[1] - c_depth[e, s] - dt * vloc[0]
            pressure = soil_pressure(delta_e, st[1], c_target[e, s][0], mat)
            s_p = ti.max(st[1], delta_e - pressure / mat[3])
            j = st[2] + dt * ti.sqrt(vloc[1] * vloc[1] + vloc[2] * vloc[2])
            s_new = ti.max(delta_e, s_p)
            if s_new != st[0]:
                soil_rev[e, hm_int[m][4] + idx // hm_int[m][1]] += 1
            soil_state[e, hm_int[m][3] + idx] = ti.Vector([s_new, s_p, j, 1.0])
    for m in range(hm_int.shape[0]):
        hi = hm_int[m]
        if hi[3] >= 0:  # a soil bed: unloaded samples recover their elastic part, row by row
            for y in range(hi[2]):
                changed = False
                for x in range(hi[1]):
                    k = hi[3] + y * hi[1] + x
                    st = soil_state[e, k]
                    if st[3] == 0.0:
                        if st[0] != st[1]:
                            changed = True
                        soil_state[e, k] = ti.Vector([st[1], st[1], 0.0, 0.0])
                if changed:
                    soil_rev[e, hi[4] + y] += 1
