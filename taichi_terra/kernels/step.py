"""The step kernel: per env and per step, narrowphase (``collision.py``), then free velocities, contact
rows, Gauss-Seidel sweeps and integration.

Parallel over envs; everything inside one env is serial and in a fixed order, so replays are
bit-identical and an env's result does not depend on how many envs run beside it.
"""
import taichi as ti

from .collision import collide_pair
from .heightmap import hm_pose
from .contact import (apply_impulse, clamp_to_cone, contact_frame, normal_target, point_compliance,
                      relative_velocity, solve_rigid_row)
from .dynamics import free_velocity, integrate_link, link_inv_inertia, link_rotation
from .layout import (B_NPT, B_PT0, B_QS, B_TYPE, B_US, F_MASS, F_P0, F_P1, F_P2, F_P3, FEAT_SOIL, HM_SOIL0, P_BODY,
                     P_CAP, P_KIND, P_OTHER, P_SLOT, PAIR_SHAPES, PAIR_SOIL, PF_DT, PF_ERP, PF_GROUND_HEIGHT, PF_GX,
                     PF_GY, PF_GZ, PF_MARGIN, PF_MAX_PUSH, PF_MAX_SWEEPS, PF_N_PAIRS, PF_N_SOIL, PF_REST_THRESHOLD,
                     PF_SLOP, PF_TERRAIN_WARM_START, PF_TOL, PF_WARM_START)
from .math import vec3, vec4
from .shapes import footprint_width
from .soil import soil_pressure, solve_soil_row

mat3 = ti.math.mat3


@ti.func
def row_bodies(body_i: ti.template(), pair_i: ti.template(), p):
    """Body indices (a, b) of the rows of pair ``p``; ``a = -1`` for static geometry."""
    pr = pair_i[p]
    a = -1
    if pr[P_KIND] == PAIR_SHAPES:
        a = pr[P_OTHER]
    return a, pr[P_BODY]


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
def soil_point(hm_int: ti.template(), hm_geom: ti.template(), soil_state: ti.template(), e, m, idx):
    """Material (vector of 8) and state (s, s_p, j, loaded) of sample ``idx`` of bed ``m``."""
    g = hm_geom[m]
    mat = ti.Vector([g[HM_SOIL0 + k] for k in ti.static(range(8))])
    return mat, soil_state[e, hm_int[m][3] + idx]


@ti.func
def commit_soil(e, n_soil, n_rows, q: ti.template(), u: ti.template(), body_i: ti.template(), body_f: ti.template(),
                body_iw: ti.template(), pair_i: ti.template(), hm_int: ti.template(), hm_geom: ti.template(),
                c_list: ti.template(), c_pos: ti.template(), c_nrm: ti.template(), c_depth: ti.template(),
                c_feat: ti.template(), c_lam: ti.template(), c_target: ti.template(), soil_state: ti.template(),
                soil_rev: ti.template(), dt):
    """Write the soil history of env ``e`` after the sweep (``terrain/deformable.py`` describes it) and
    advance the revision of every sample row whose surface height changed."""
    for k in range(n_soil):
        soil_state[e, k][3] = 0.0
    for r in range(n_rows):
        s = c_list[e, r][0]
        p = c_list[e, r][1]
        if pair_i[p][P_KIND] == PAIR_SOIL and c_lam[e, s][0] > 0.0:
            m = pair_i[p][P_OTHER]
            idx = c_feat[e, s] - FEAT_SOIL
            mat, st = soil_point(hm_int, hm_geom, soil_state, e, m, idx)
            a, b = row_bodies(body_i, pair_i, p)
            us_a, us_b, _ima, _imb, _iwa, _iwb, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b, c_pos[e, s])
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


@ti.kernel
def simulate(n_steps: ti.i32, q: ti.types.ndarray(), u: ti.types.ndarray(), f_ext: ti.types.ndarray(),
             t_ext: ti.types.ndarray(), body_i: ti.types.ndarray(), body_f: ti.types.ndarray(),
             body_inertia: ti.types.ndarray(), points: ti.types.ndarray(),
             planes: ti.types.ndarray(), pair_i: ti.types.ndarray(), pair_mat: ti.types.ndarray(),
             hm_int: ti.types.ndarray(), hm_geom: ti.types.ndarray(),
             hm_frame: ti.types.ndarray(), hm_heights: ti.types.ndarray(),
             body_iw: ti.types.ndarray(), c_count: ti.types.ndarray(),
             c_pos: ti.types.ndarray(), c_nrm: ti.types.ndarray(), c_depth: ti.types.ndarray(),
             c_feat: ti.types.ndarray(), c_imp: ti.types.ndarray(), c_prev_feat: ti.types.ndarray(),
             c_w: ti.types.ndarray(),
             c_lam: ti.types.ndarray(), c_target: ti.types.ndarray(), c_list: ti.types.ndarray(),
             sweeps_used: ti.types.ndarray(), soil_state: ti.types.ndarray(), soil_rev: ti.types.ndarray(),
             params_f: ti.types.ndarray()):
    """Advance every env by ``n_steps`` steps: one thread per env runs its steps back to back (envs are
    independent), so a call costs one kernel launch however many steps it takes."""
    n_pairs = ti.cast(params_f[PF_N_PAIRS], ti.i32)
    for e in range(q.shape[0]):
        for _ in range(n_steps):
            for p in range(n_pairs):
                collide_pair(e, p, q, u, body_i, body_f, points, planes, pair_i, hm_int, hm_geom, hm_frame,
                             hm_heights, params_f[PF_GROUND_HEIGHT], params_f[PF_MARGIN], params_f[PF_DT], c_count,
                             c_pos, c_nrm, c_depth, c_feat, c_target, soil_state)
            advance_env(e, n_pairs, q, u, f_ext, t_ext, body_i, body_f, body_inertia, points, pair_i, pair_mat,
                        hm_int, hm_geom, hm_frame, body_iw, c_count, c_pos, c_nrm, c_depth, c_feat, c_imp, c_prev_feat,
                        c_w, c_lam, c_target, c_list, sweeps_used, soil_state, soil_rev, params_f)


@ti.func
def advance_env(e, n_pairs, q: ti.template(), u: ti.template(), f_ext: ti.template(), t_ext: ti.template(),
                body_i: ti.template(), body_f: ti.template(), body_inertia: ti.template(), points: ti.template(),
                pair_i: ti.template(), pair_mat: ti.template(), hm_int: ti.template(), hm_geom: ti.template(),
                hm_frame: ti.template(), body_iw: ti.template(), c_count: ti.template(), c_pos: ti.template(),
                c_nrm: ti.template(), c_depth: ti.template(), c_feat: ti.template(), c_imp: ti.template(),
                c_prev_feat: ti.template(), c_w: ti.template(), c_lam: ti.template(),
                c_target: ti.template(), c_list: ti.template(), sweeps_used: ti.template(),
                soil_state: ti.template(), soil_rev: ti.template(), params_f: ti.template()):
    """The dynamics of one step of env ``e``, after its contacts were found."""
    dt = params_f[PF_DT]
    gravity = vec3(params_f[PF_GX], params_f[PF_GY], params_f[PF_GZ])
    tolerance, slop, erp = params_f[PF_TOL], params_f[PF_SLOP], params_f[PF_ERP]
    max_push, restitution_threshold = params_f[PF_MAX_PUSH], params_f[PF_REST_THRESHOLD]
    max_sweeps = ti.cast(params_f[PF_MAX_SWEEPS], ti.i32)
    warm_start = ti.cast(params_f[PF_WARM_START], ti.i32)
    terrain_warm_start = ti.cast(params_f[PF_TERRAIN_WARM_START], ti.i32)
    n_soil = ti.cast(params_f[PF_N_SOIL], ti.i32)
    n_bodies = body_i.shape[0]
    # 1. world inverse inertias of the links at the start of the step
    for b in range(n_bodies):
        body_iw[e, b] = link_inv_inertia(q, e, body_i[b][B_QS], body_inertia[b])
    # 2. contact rows: frames, Delassus blocks and targets; restitution uses the approach speed before this
    #    step's forces and warm starts
    n_rows = 0
    for p in range(n_pairs):
        a, b = row_bodies(body_i, pair_i, p)
        restitution = pair_mat[p][1]
        base = pair_i[p][P_SLOT]
        kind = pair_i[p][P_KIND]
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
            c_list[e, n_rows] = ti.math.ivec2(s, p)
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
                vn0 = n.dot(relative_velocity(u, e, us_a, us_b, ra, rb))
                c_target[e, s][0] = normal_target(c_depth[e, s], vn0, dt, restitution, restitution_threshold, slop,
                                               erp, max_push)
    # 3. free velocities u* = u + dt M^-1 (tau - h)
    for b in range(n_bodies):
        bd = body_i[b]
        free_velocity(q, u, e, bd[B_QS], bd[B_US], body_f[b][F_MASS], body_inertia[b], body_iw[e, b],
                      f_ext[e, b], t_ext[e, b], gravity, dt)
    # 4. warm starts: last step's impulse of the same contact feature, projected on the current cone
    walk_pair = -1  # soil pairs list their features in increasing order: one forward walk per pair
    walk = 0
    for r in range(n_rows):
        s = c_list[e, r][0]
        p = c_list[e, r][1]
        lam = vec3(0.0, 0.0, 0.0)
        # the same feature usually keeps its slot; when contacts before it came or went, search the pair
        prev = -1
        is_soil = pair_i[p][P_KIND] == PAIR_SOIL
        if (warm_start != 0 and not is_soil) or (terrain_warm_start != 0 and is_soil):
            base = pair_i[p][P_SLOT]
            cap = pair_i[p][P_CAP]
            if c_prev_feat[e, s] == c_feat[e, s]:
                prev = s
            elif is_soil:
                # last step's soil slots hold increasing sample features, then -1: walk on to this one
                # (a scan of the whole pair per row cost rows x capacity, and on Vulkan (lavapipe) it was
                # seen to cut the following sweep short)
                if p != walk_pair:
                    walk_pair = p
                    walk = 0
                while walk < cap and c_prev_feat[e, base + walk] >= 0 and c_prev_feat[e, base + walk] < c_feat[e, s]:
                    walk += 1
                if walk < cap and c_prev_feat[e, base + walk] == c_feat[e, s]:
                    prev = base + walk
            else:
                for k in range(cap):
                    if prev < 0 and c_prev_feat[e, base + k] == c_feat[e, s]:
                        prev = base + k
        if prev >= 0:
            a, b = row_bodies(body_i, pair_i, p)
            frame = contact_frame(c_nrm[e, s])
            lam = frame.transpose() @ c_imp[e, prev]
            if is_soil:  # the soil laws bound the traction themselves; only keep it compressive
                if lam[0] <= 0.0:
                    lam = vec3(0.0, 0.0, 0.0)
            else:
                lam = clamp_to_cone(lam, pair_mat[p][0])
            us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b,
                                                                         c_pos[e, s])
            apply_impulse(u, e, us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb, frame @ lam)
        c_lam[e, s] = lam
    # 5. projected Gauss-Seidel sweeps until the largest velocity change is below tolerance
    sweeps = 0
    largest = tolerance + 1.0
    while sweeps < max_sweeps and largest > tolerance:
        sweeps += 1
        largest = 0.0
        for r in range(n_rows):
            s = c_list[e, r][0]
            p = c_list[e, r][1]
            a, b = row_bodies(body_i, pair_i, p)
            frame = contact_frame(c_nrm[e, s])
            us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b,
                                                                         c_pos[e, s])
            vloc = frame.transpose() @ relative_velocity(u, e, us_a, us_b, ra, rb)
            w = c_w[e, s]
            lam = c_lam[e, s]
            new = lam
            if pair_i[p][P_KIND] == PAIR_SOIL:
                m = pair_i[p][P_OTHER]
                mat, st = soil_point(hm_int, hm_geom, soil_state, e, m, c_feat[e, s] - FEAT_SOIL)
                prm = c_target[e, s]
                new = solve_soil_row(w, lam, vloc, st[1] - c_depth[e, s], st[1], st[2], prm[1], prm[0], dt, mat)
            else:
                new = solve_rigid_row(w, lam, vloc, c_target[e, s][0], pair_mat[p][0])
            d = new - lam
            if d.norm() > 0.0:
                apply_impulse(u, e, us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb, frame @ d)
                c_lam[e, s] = new
                largest = ti.max(largest, w[0, 0] * d.norm())
    sweeps_used[e] = sweeps
    # 6. soil history: loaded samples take the end-of-step sinkage, yield raises the permanent sinkage, slip
    #    accumulates; every other sample recovers its elastic part and forgets its slip
    if n_soil > 0:
        commit_soil(e, n_soil, n_rows, q, u, body_i, body_f, body_iw, pair_i, hm_int, hm_geom, c_list, c_pos, c_nrm,
                    c_depth, c_feat, c_lam, c_target, soil_state, soil_rev, dt)
    # 7. integrate positions with the constrained velocities
    for b in range(n_bodies):
        integrate_link(q, u, e, body_i[b][B_QS], body_i[b][B_US], dt)
    # 8. results and warm-start cache
    for p in range(n_pairs):
        base = pair_i[p][P_SLOT]
        for k in range(pair_i[p][P_CAP]):
            s = base + k
            if k < c_count[e, p][0]:
                imp = contact_frame(c_nrm[e, s]) @ c_lam[e, s]
                c_imp[e, s] = imp  # reported by get_contacts, and the next step's warm start
                c_prev_feat[e, s] = c_feat[e, s]
            else:
                c_prev_feat[e, s] = -1
