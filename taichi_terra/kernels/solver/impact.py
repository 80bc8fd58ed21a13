"""Impacts: the bounces of a step, resolved before its forces, in waves.

A rigid row with restitution ``e > 0`` whose bodies approach faster than the restitution threshold, and
whose gap closes within the step, is an impact. All impacts present at once are solved together (a box
landing flat bounces straight up): frictionless normal impulses drive each to separate at ``e`` times its
approach speed. Those impulses can set other rows approaching (the second ball of a Newton's cradle now
moves into the third): they form the next wave, solved the same way, until no row approaches. So a
momentum passes along a chain of touching balls one contact at a time, as in the physical cradle, instead
of being shared by one simultaneous solve.

Each impacted row keeps its impulse as the start of the step's sweep, and its separation speed after the
waves as its target velocity, so the step's forces neither add to nor take from the bounce.
"""
import taichi as ti

from .contact import apply_impulse, relative_velocity
from .rows import is_rigid_row, material_index, row_links

_MAX_WAVES = 64  # waves per step at most (a chain of n touching bodies needs n - 1)


@ti.func
def is_impact(vn, depth, dt, restitution, threshold):
    """Whether a row with normal velocity ``vn`` [m/s] (< 0: approaching) and ``depth`` [m] bounces now."""
    return restitution > 0.0 and vn < -threshold and vn * dt - depth < 0.0


@ti.func
def resolve_impacts(e, n_rows, n_static, n_mat, q: ti.template(), u: ti.template(), body_i: ti.template(),
                    body_f: ti.template(), body_iw: ti.template(), pair_i: ti.template(), pair_mat: ti.template(),
                    c_list: ti.template(), c_pos: ti.template(), c_nrm: ti.template(), c_depth: ti.template(),
                    c_w: ti.template(), c_lam: ti.template(), c_target: ti.template(), dt, threshold, tolerance,
                    max_sweeps):
    """Apply the impacts of env ``e`` to ``u`` in waves; rows that bounced get their impulse in ``c_lam``
    and their separation speed after all waves as the lower bound of their target velocity."""
    for r in range(n_rows):
        c_lam[e, c_list[e, r][0]] = ti.Vector([0.0, 0.0, 0.0])
    waves = 0
    more = True
    while more and waves < _MAX_WAVES:
        waves += 1
        more = False
        # this wave's rows and their bounce targets: e times the approach speed at the wave's start (the
        # second component of c_target, free for rigid rows, holds the target; < 0 marks no impact)
        for r in range(n_rows):
            row = c_list[e, r]
            s, p, a, b = row[0], row[1], row[2], row[3]
            restitution = 0.0
            if is_rigid_row(p, pair_i, n_static):
                c_target[e, s][1] = -1.0
                restitution = pair_mat[material_index(p, n_static, n_mat, body_i, a, b)][1]
            if restitution > 0.0:
                us_a, us_b, _ima, _imb, _iwa, _iwb, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b,
                                                                       c_pos[e, s])
                vn = c_nrm[e, s].dot(relative_velocity(u, e, us_a, us_b, ra, rb))
                if is_impact(vn, c_depth[e, s], dt, restitution, threshold):
                    c_target[e, s][1] = -restitution * vn
                    more = True
        # the wave's rows solved together: projected Gauss-Seidel on normal impulses only
        sweeps = 0
        largest = tolerance + 1.0
        while more and sweeps < max_sweeps and largest > tolerance:
            sweeps += 1
            largest = 0.0
            for r in range(n_rows):
                row = c_list[e, r]
                s, p, a, b = row[0], row[1], row[2], row[3]
                target = c_target[e, s][1]
                if is_rigid_row(p, pair_i, n_static) and target >= 0.0:
                    n = c_nrm[e, s]
                    us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b,
                                                                                 c_pos[e, s])
                    vn = n.dot(relative_velocity(u, e, us_a, us_b, ra, rb))
                    w = c_w[e, s][0, 0]
                    old = c_lam[e, s][0]
                    new = ti.max(0.0, old - (vn - target) / w)
                    if new != old:
                        apply_impulse(u, e, us_a, us_b, inv_m_a, inv_m_b, iw_a, iw_b, ra, rb, n * (new - old))
                        c_lam[e, s][0] = new
                        largest = ti.max(largest, w * ti.abs(new - old))
    # every row that took an impulse separates at least as fast as the waves left it
    for r in range(n_rows):
        row = c_list[e, r]
        s, a, b = row[0], row[2], row[3]
        if c_lam[e, s][0] > 0.0:
            us_a, us_b, _ima, _imb, _iwa, _iwb, ra, rb = row_links(q, body_i, body_f, body_iw, e, a, b, c_pos[e, s])
            vn = c_nrm[e, s].dot(relative_velocity(u, e, us_a, us_b, ra, rb))
            c_target[e, s][0] = ti.max(c_target[e, s][0], vn)
