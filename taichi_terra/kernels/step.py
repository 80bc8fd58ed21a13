"""The step kernel: per env and per step, narrowphase (``collision.py``), then free velocities, contact
rows, Gauss-Seidel sweeps and integration.

Parallel over envs; everything inside one env is serial and in a fixed order, so replays are
bit-identical and an env's result does not depend on how many envs run beside it.
"""
import taichi as ti

from .collision.broadphase import broadphase, shape_pair_capacity
from .collision.pairs import collide_pair, collide_shape_pair
from .solver.contact import (
    apply_impulse,
    clamp_to_cone,
    contact_frame,
    normal_target,
    point_compliance,
    relative_velocity,
    solve_rigid_row,
)
from .dynamics.free_body import free_velocity, integrate_link, link_inv_inertia, link_rotation
from .collision.heightmap import hm_pose
from .solver.impact import resolve_impacts
from .common.layout import (
    B_NPT,
    B_PT0,
    B_QS,
    B_TYPE,
    B_US,
    DP_BODY,
    DP_COUNT,
    DP_OTHER,
    DP_SLOT,
    EI_PAIRS,
    EI_PREV_PAIRS,
    EI_SWEEPS,
    F_MASS,
    F_P0,
    F_P1,
    F_P2,
    F_P3,
    FEAT_SOIL,
    P_CAP,
    P_KIND,
    P_OTHER,
    P_SLOT,
    PAIR_SOIL,
    PF_AXIS,
    PF_DT,
    PF_ERP,
    PF_GROUND_HEIGHT,
    PF_GX,
    PF_GY,
    PF_GZ,
    PF_MARGIN,
    PF_MAX_PUSH,
    PF_MAX_SWEEPS,
    PF_N_MAT,
    PF_N_PAIRS,
    PF_N_SOIL,
    PF_POOL0,
    PF_REST_THRESHOLD,
    PF_SLOP,
    PF_TERRAIN_WARM_START,
    PF_TOL,
    PF_WARM_START,
)
from .common.math import vec3, vec4
from .solver.relax import relax_internal_friction
from .solver.rows import material_index, pair_entry, row_links, warm_start_slot
from .collision.shapes import footprint_width
from .soil.law import solve_soil_row
from .soil.history import commit_soil, soil_point

mat3 = ti.math.mat3


@ti.func
def find_contacts(e, q: ti.template(), u: ti.template(), body_i: ti.template(), body_f: ti.template(),
                  points: ti.template(), planes: ti.template(), pair_i: ti.template(), hm_int: ti.template(),
                  hm_geom: ti.template(), hm_frame: ti.template(), hm_heights: ti.template(), c_count: ti.template(),
                  c_pos: ti.template(), c_nrm: ti.template(), c_depth: ti.template(), c_feat: ti.template(),
                  c_target: ti.template(), soil_state: ti.template(), broad: ti.template(), env_info: ti.template(),
                  body_iw: ti.template(), params_f: ti.template()):
    """Contacts of env ``e``: every static pair in its own slots, then the broadphase's shape-shape pairs,
    each taking the next free slots of the shared pool (``body_iw`` serves as the broadphase's scratch)."""
    n_static = ti.cast(params_f[PF_N_PAIRS], ti.i32)
    margin, dt = params_f[PF_MARGIN], params_f[PF_DT]
    for p in range(n_static):
        collide_pair(e, p, q, u, body_i, body_f, points, planes, pair_i, hm_int, hm_geom, hm_frame, hm_heights,
                     params_f[PF_GROUND_HEIGHT], margin, dt, c_count, c_pos, c_nrm, c_depth, c_feat, c_target,
                     soil_state)
    nb = body_i.shape[0]
    broadphase(e, q, u, body_i, body_f, broad, env_info, body_iw, ti.cast(params_f[PF_AXIS], ti.i32), margin, dt)
    cursor = ti.cast(params_f[PF_POOL0], ti.i32)
    pool_end = c_pos.shape[1]
    for k in range(env_info[e][EI_PAIRS]):
        d = broad[e, nb + k]
        cap = ti.min(shape_pair_capacity(body_i, d[DP_BODY], d[DP_OTHER]), pool_end - cursor)
        p = n_static + k
        collide_shape_pair(e, p, d[DP_BODY], d[DP_OTHER], cursor, cap, q, u, body_i, body_f, points, planes, margin,
                           dt, c_count, c_pos, c_nrm, c_depth, c_feat)
        broad[e, nb + k][DP_SLOT] = cursor
        broad[e, nb + k][DP_COUNT] = c_count[e, p][0]
        cursor += c_count[e, p][0]


@ti.kernel
def simulate(n_steps: ti.i32, q: ti.types.ndarray(), u: ti.types.ndarray(), f_ext: ti.types.ndarray(),
             t_ext: ti.types.ndarray(), body_i: ti.types.ndarray(), body_f: ti.types.ndarray(),
             body_inertia: ti.types.ndarray(), points: ti.types.ndarray(),
             planes: ti.types.ndarray(), pair_i: ti.types.ndarray(), pair_mat: ti.types.ndarray(),
             hm_int: ti.types.ndarray(), hm_geom: ti.types.ndarray(),
             hm_frame: ti.types.ndarray(), hm_heights: ti.types.ndarray(),
             body_iw: ti.types.ndarray(), c_count: ti.types.ndarray(),
             c_pos: ti.types.ndarray(), c_nrm: ti.types.ndarray(), c_depth: ti.types.ndarray(),
             c_feat: ti.types.ndarray(), c_imp: ti.types.ndarray(), c_w: ti.types.ndarray(),
             c_lam: ti.types.ndarray(), c_target: ti.types.ndarray(), c_list: ti.types.ndarray(),
             broad: ti.types.ndarray(), env_info: ti.types.ndarray(), soil_state: ti.types.ndarray(),
             soil_rev: ti.types.ndarray(), params_f: ti.types.ndarray()):
    """Advance every env by ``n_steps`` steps: one thread per env runs its steps back to back (envs are
    independent), so a call costs one kernel launch however many steps it takes."""
    for e in range(q.shape[0]):
        for _ in range(n_steps):
            find_contacts(e, q, u, body_i, body_f, points, planes, pair_i, hm_int, hm_geom, hm_frame, hm_heights,
                          c_count, c_pos, c_nrm, c_depth, c_feat, c_target, soil_state, broad, env_info, body_iw,
                          params_f)
            advance_env(e, q, u, f_ext, t_ext, body_i, body_f, body_inertia, points, pair_i, pair_mat,
                        hm_int, hm_geom, hm_frame, body_iw, c_count, c_pos, c_nrm, c_depth, c_feat, c_imp,
                        c_w, c_lam, c_target, c_list, broad, env_info, soil_state, soil_rev, params_f)


@ti.func
def advance_env(e, q: ti.template(), u: ti.template(), f_ext: ti.template(), t_ext: ti.template(),
                body_i: ti.template(), body_f: ti.template(), body_inertia: ti.template(), points: ti.template(),
                pair_i: ti.template(), pair_mat: ti.template(), hm_int: ti.template(), hm_geom: ti.template(),
                hm_frame: ti.template(), body_iw: ti.template(), c_count: ti.template(), c_pos: ti.template(),
                c_nrm: ti.template(), c_depth: ti.template(), c_feat: ti.template(), c_imp: ti.template(),
                c_w: ti.template(), c_lam: ti.template(), c_target: ti.template(), c_list: ti.template(),
                broad: ti.template(), env_info: ti.template(), soil_state: ti.template(), soil_rev: ti.template(),
                params_f: ti.template()):
    """The dynamics of one step of env ``e``, after its contacts were found."""
    dt = params_f[PF_DT]
    gravity = vec3(params_f[PF_GX], params_f[PF_GY], params_f[PF_GZ])
    tolerance, slop, erp = params_f[PF_TOL], params_f[PF_SLOP], params_f[PF_ERP]
    max_push, restitution_threshold = params_f[PF_MAX_PUSH], params_f[PF_REST_THRESHOLD]
    max_sweeps = ti.cast(params_f[PF_MAX_SWEEPS], ti.i32)
    warm_start = ti.cast(params_f[PF_WARM_START], ti.i32)
    terrain_warm_start = ti.cast(params_f[PF_TERRAIN_WARM_START], ti.i32)
    n_soil = ti.cast(params_f[PF_N_SOIL], ti.i32)
    n_static = ti.cast(params_f[PF_N_PAIRS], ti.i32)
    n_mat = ti.cast(params_f[PF_N_MAT], ti.i32)
    n_bodies = body_i.shape[0]
    max_pairs = (broad.shape[1] - n_bodies) // 2
    n_pairs = n_static + env_info[e][EI_PAIRS]
    # 1. world inverse inertias of the links at the start of the step
    for b in range(n_bodies):
        body_iw[e, b] = link_inv_inertia(q, e, body_i[b][B_QS], body_inertia[b])
    # 2. contact rows: frames, Delassus blocks and targets; restitution uses the approach speed before this
    #    step's forces and warm starts
    n_rows = 0
    for p in range(n_pairs):
        kind, a, b, base = pair_entry(e, p, n_static, n_bodies, pair_i, broad)
        width = 0.0
        if kind == PAIR_SOIL and c_count[e, p][0] > 0:  # the footprint's effective width b, turning with the body
            bd = body_i[b]
            bf = body_f[b]
            _o, rmap = hm_pose(hm_frame, pair_i[p][P_OTHER])
            r_l = rmap.transpose() @ link_rotation(q, e, bd[B_QS])
            width = footprint_width(bd[B_TYPE], vec4(bf[F_P0], bf[F_P1], bf[F_P2], bf[F_P3]), r_l, points, bd[B_PT0],
                                    bd[B_NPT])
        for k in range(c_count[e, p][0]):
            s = base + k
            c_list[e, n_rows] = ti.math.ivec4(s, p, a, b)
            n_rows += 1
            n = c_nrm[e, s]
            frame = contact_frame(n)
            us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b,
                                                                         c_pos[e, s])
            kmat = point_compliance(inv_m_b, iw_b, rb)
            if a >= 0:
                kmat += point_compliance(inv_m_a, iw_a, ra)
            c_w[e, s] = frame.transpose() @ kmat @ frame
            if kind == PAIR_SOIL:
                c_target[e, s][0] = width  # soil rows have no target velocity: they keep b here
            else:
                c_target[e, s][0] = normal_target(c_depth[e, s], dt, slop, erp, max_push)
    # 2b. impacts, in waves, with the velocities before this step's forces (impact.py)
    resolve_impacts(e, n_rows, n_static, n_mat, q, u, body_i, body_f, body_iw, pair_i, pair_mat, c_list, c_pos,
                    c_nrm, c_depth, c_w, c_lam, c_target, dt, restitution_threshold, tolerance, max_sweeps)
    # 3. free velocities u* = u + dt M^-1 (tau - h)
    for b in range(n_bodies):
        bd = body_i[b]
        free_velocity(q, u, e, bd[B_QS], bd[B_US], body_f[b][F_MASS], body_inertia[b], body_iw[e, b],
                      f_ext[e, b], t_ext[e, b], gravity, dt)
    # 4. warm starts: last step's impulse of the same contact feature, projected on the current cone (a row
    #    that bounced in this step starts from its impact impulse instead)
    walk_pair = -1
    walk = 0
    prev_pair = 0
    for r in range(n_rows):
        row = c_list[e, r]
        s, p, a, b = row[0], row[1], row[2], row[3]
        lam = vec3(0.0, 0.0, 0.0)
        is_soil = False
        if p < n_static:
            is_soil = pair_i[p][P_KIND] == PAIR_SOIL
        prev = -1
        impacted = c_lam[e, s][0] > 0.0
        if not impacted and ((warm_start != 0 and not is_soil) or (terrain_warm_start != 0 and is_soil)):
            prev, walk_pair, walk, prev_pair = warm_start_slot(e, r, s, p, n_static, n_bodies, max_pairs, pair_i,
                                                               c_list, c_feat, broad, env_info, walk_pair, walk,
                                                               prev_pair)
        if prev >= 0:
            frame = contact_frame(c_nrm[e, s])
            lam = frame.transpose() @ c_imp[e, prev]
            if is_soil:  # the soil laws bound the traction themselves; only keep it compressive
                if lam[0] <= 0.0:
                    lam = vec3(0.0, 0.0, 0.0)
            else:
                lam = clamp_to_cone(lam, pair_mat[material_index(p, n_static, n_mat, body_i, a, b)][0])
            us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b,
                                                                         c_pos[e, s])
            apply_impulse(u, e, us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb, frame @ lam)
        if not impacted:
            c_lam[e, s] = lam
    # 5. projected Gauss-Seidel sweeps until the largest velocity change is below tolerance
    sweeps = 0
    largest = tolerance + 1.0
    while sweeps < max_sweeps and largest > tolerance:
        sweeps += 1
        largest = 0.0
        for r in range(n_rows):
            row = c_list[e, r]
            s, p, a, b = row[0], row[1], row[2], row[3]
            frame = contact_frame(c_nrm[e, s])
            us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b,
                                                                         c_pos[e, s])
            vloc = frame.transpose() @ relative_velocity(u, e, us_a, us_b, ra, rb)
            w = c_w[e, s]
            lam = c_lam[e, s]
            new = lam
            is_soil = False
            if p < n_static:
                is_soil = pair_i[p][P_KIND] == PAIR_SOIL
            if is_soil:
                m = pair_i[p][P_OTHER]
                mat, st = soil_point(hm_int, hm_geom, soil_state, e, m, c_feat[e, s][0] - FEAT_SOIL)
                prm = c_target[e, s]
                new = solve_soil_row(w, lam, vloc, st[1] - c_depth[e, s], st[1], st[2], prm[1], prm[0], dt, mat)
            else:
                new = solve_rigid_row(w, lam, vloc, c_target[e, s][0],
                                      pair_mat[material_index(p, n_static, n_mat, body_i, a, b)][0])
            d = new - lam
            if d.norm() > 0.0:
                apply_impulse(u, e, us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb, frame @ d)
                c_lam[e, s] = new
                largest = ti.max(largest, w[0, 0] * d.norm())
    env_info[e][EI_SWEEPS] = sweeps
    # 5b. resting manifolds: the least tangential impulses that give the same motion (relax.py)
    relax_internal_friction(e, n_rows, n_static, n_mat, q, u, body_i, body_f, body_iw, pair_i, pair_mat, c_list,
                            c_pos, c_nrm, c_lam)
    # 6. soil history: loaded samples take the end-of-step sinkage, yield raises the permanent sinkage, slip
    #    accumulates; every other sample recovers its elastic part and forgets its slip
    if n_soil > 0:
        commit_soil(e, n_soil, n_rows, n_static, q, u, body_i, body_f, body_iw, pair_i, hm_int, hm_geom, c_list,
                    c_pos, c_nrm, c_depth, c_feat, c_lam, c_target, soil_state, soil_rev, dt)
    # 7. integrate positions with the constrained velocities
    for b in range(n_bodies):
        integrate_link(q, u, e, body_i[b][B_QS], body_i[b][B_US], dt)
    # 8. results and warm-start cache: each solved row's world impulse and feature; static slots beyond
    #    their pair's count forget theirs; this step's pair table becomes the last step's
    for p in range(n_static):
        base = pair_i[p][P_SLOT]
        for k in range(c_count[e, p][0], pair_i[p][P_CAP]):
            c_feat[e, base + k][1] = -1
    for r in range(n_rows):
        s = c_list[e, r][0]
        c_imp[e, s] = contact_frame(c_nrm[e, s]) @ c_lam[e, s]  # reported by get_contacts; next warm start
        c_feat[e, s][1] = c_feat[e, s][0]
    for k in range(env_info[e][EI_PAIRS]):
        broad[e, n_bodies + max_pairs + k] = broad[e, n_bodies + k]
    env_info[e][EI_PREV_PAIRS] = env_info[e][EI_PAIRS]
