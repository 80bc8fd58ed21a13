"""Stages 6 and 7 of the step (``kernels/step.py``): the warm start of the contact and soil rows, and the
projected Gauss-Seidel sweeps over every row until the velocities settle.

The sweep dispatches on each row's kind: Coulomb contact (``contact.py``), soil point (``soil/law.py``), then
the trees' joint limit and friction rows (``limits.py``), the pins (``pins.py``) and the sand rows of RFT
media that act as rows (``sand.py``). Sticking contacts of trees are solved together first (``block.py``),
and rows on one tree link against static geometry are swept as a run on that link (``links.py``, "Link
runs").
"""
import taichi as ti

from ..common.arrays import CONTACT, FEATURE, PAIR, ROW_F, ROW_I, SETTINGS_I
from ..common.layout import FEAT_SOIL, ROW_MERGED, ROW_SOIL
from ..common.math import vec3
from ..common.schema import get, get3, get33, putn, row
from ..soil.history import soil_point
from ..soil.law import solve_soil_row
from .block import contact_block_sweep, setup_contact_block
from .contact import clamp_to_cone, solve_rigid_row
from .limits import solve_joint_rows
from .links import (
    apply_impulse,
    close_link_run,
    open_link_run,
    relative_velocity,
    run_link,
    run_point_velocity,
    run_push,
    spatial_impulse,
)
from .pins import solve_pin_row
from .rows import row_geometry, warm_start_slot
from .sand import solve_sand_rows

vec6 = ti.types.vector(6, float)
mat6 = ti.types.matrix(6, 6, float)


@ti.func
def warm_start(D: ti.template(), e, n_rows, n_static, rigid_on, soil_on):
    """Stage 6: each row starts from the last step's impulse of the same contact feature, projected on the
    current cone (a soil row: kept only while compressive); a row that bounced in this step starts from its
    impact impulse instead."""
    walk_pair = -1
    walk = 0
    prev_pair = 0
    run_j = -1  # the tree link whose rows' impulses run_total sums (links.py, "Link runs"), or -1
    run_total = vec6(0.0)
    for r in range(n_rows):
        ri = row(D.row_i, e, r)
        lam = vec3(0.0, 0.0, 0.0)
        is_soil = ri[ROW_I.kind] == ROW_SOIL
        prev = -1
        impacted = ri[ROW_I.impacted] != 0
        merged = ri[ROW_I.kind] == ROW_MERGED
        if not impacted and not merged and ((rigid_on != 0 and not is_soil) or (soil_on != 0 and is_soil)):
            prev, walk_pair, walk, prev_pair = warm_start_slot(D, e, r, n_static, walk_pair, walk, prev_pair)
        if prev >= 0:
            frame, ra, rb = row_geometry(D, e, r)
            lam = frame.transpose() @ get3(D.contact, e, prev, CONTACT.impulse)
            if is_soil:  # the soil laws bound the traction themselves; only keep it compressive
                if lam[0] <= 0.0:
                    lam = vec3(0.0, 0.0, 0.0)
            else:
                lam = clamp_to_cone(lam, get(D.row_f, e, r, ROW_F.friction))
            j = run_link(D, e, r)
            if j >= 0:  # (the pushes only add up: no row reads a velocity here)
                if ti.static(D.trees):
                    if run_j >= 0 and j != run_j:
                        close_link_run(D, e, run_j, run_total)
                        run_total = vec6(0.0)
                    run_j = j
                    run_total += spatial_impulse(rb, frame @ lam)
            else:
                apply_impulse(D, e, r, ri[ROW_I.side_a], ri[ROW_I.side_b], ra, rb, frame @ lam)
        if not impacted:
            putn(D.row_f, e, r, ROW_F.impulse, lam)
    if ti.static(D.trees):
        if run_j >= 0:
            close_link_run(D, e, run_j, run_total)


@ti.func
def sweep_rows(D: ti.template(), e, n_rows, n_joint_rows, n_pins, dt, erp, tolerance, max_sweeps, n_carriers):
    """Stage 7: Gauss-Seidel sweeps over the contact rows, then the ``n_joint_rows`` joint rows
    (``solver/limits.py``), the ``n_pins`` pin rows and (with RFT plates, ``n_carriers > 0``) the sand rows
    (``solver/sand.py``), each row solved by the law of its kind, until the velocities have settled; returns
    the sweeps taken.

    The sweeps stop once a sweep changed no row's velocity by more than ``tolerance``, by either of two
    measures: the change its own update made (``W_nn |delta lambda|``: a sweep that moves no impulse), or
    the net change since the last sweep reached the row (its velocity before its update, against the one
    the previous sweep saw there). The second ends the sweeps where redundant rows (four feet on the
    ground under locked joints) keep trading impulse along directions that move nothing: the impulses
    then drift while every velocity has settled.

    Each sweep first solves the sticking contacts of trees together (``solver/block.py``); the rows it
    solved skip their one-by-one update in that sweep."""
    if ti.static(D.trees):
        setup_contact_block(D, e, n_rows, get(D.settings_i, e, 0, SETTINGS_I.contact_block))
    sweeps = 0
    done = False
    use_block = 1  # the contact block is on in this step's sweeps
    last_net = 0.0
    while sweeps < max_sweeps and not done:
        sweeps += 1
        local = 0.0  # largest velocity change a row's own update made in this sweep
        net = 0.0  # largest change of a row's velocity since the last sweep reached it
        solved = 0  # the contact-block members solved together in this sweep (bit per member)
        if ti.static(D.trees):
            if use_block != 0:
                local, net, solved = contact_block_sweep(D, e)
        run_j = -1  # the link of the run of rows being swept on it (links.py, "Link runs"), or -1
        run_vel, run_phi, run_total = vec6(0.0), mat6(0.0), vec6(0.0)
        for r in range(n_rows):
            ri = row(D.row_i, e, r)
            together = False
            if ti.static(D.trees):
                together = ri[ROW_I.block] >= 0 and ((solved >> ri[ROW_I.block]) & 1) != 0
            active = not together and ri[ROW_I.kind] != ROW_MERGED
            j = -1
            if ti.static(D.trees):
                if active:
                    j = run_link(D, e, r)
                if run_j >= 0 and j != run_j:
                    close_link_run(D, e, run_j, run_total)
                    run_j = -1
                if j >= 0 and run_j < 0:
                    run_j = j
                    run_vel, run_phi, run_total = open_link_run(D, e, j)
            if active:
                s = ri[ROW_I.slot]
                frame, ra, rb = row_geometry(D, e, r)
                side_a, side_b = ri[ROW_I.side_a], ri[ROW_I.side_b]
                vrel = vec3(0.0, 0.0, 0.0)
                if j >= 0:
                    vrel = run_point_velocity(run_vel, rb)
                else:
                    vrel = relative_velocity(D, e, r, side_a, side_b, ra, rb)
                vloc = frame.transpose() @ vrel
                net = ti.max(net, (vloc - get3(D.row_f, e, r, ROW_F.seen)).norm())
                putn(D.row_f, e, r, ROW_F.seen, vloc)
                w = get33(D.row_f, e, r, ROW_F.delassus)
                lam = get3(D.row_f, e, r, ROW_F.impulse)
                new = lam
                if ri[ROW_I.kind] == ROW_SOIL:
                    m = get(D.pair, e, ri[ROW_I.pair], PAIR.other)
                    mat, st = soil_point(D, e, m, get(D.feature, e, s, FEATURE.now) - FEAT_SOIL)
                    new = solve_soil_row(w, lam, vloc, st[1] - get(D.contact, e, s, CONTACT.depth), st[1], st[2],
                                         get(D.contact, e, s, CONTACT.area), get(D.row_f, e, r, ROW_F.width), dt,
                                         mat, get(D.row_f, e, r, ROW_F.slip_rate))
                else:
                    new = solve_rigid_row(w, lam, vloc, get(D.row_f, e, r, ROW_F.target),
                                          get(D.row_f, e, r, ROW_F.friction))
                d = new - lam
                if d.norm() > 0.0:
                    if j >= 0:
                        run_vel, run_total = run_push(run_phi, run_vel, run_total, rb, frame @ d)
                    else:
                        apply_impulse(D, e, r, side_a, side_b, ra, rb, frame @ d)
                    putn(D.row_f, e, r, ROW_F.impulse, new)
                    local = ti.max(local, w[0, 0] * d.norm())
        if ti.static(D.trees):
            if run_j >= 0:
                close_link_run(D, e, run_j, run_total)
        if ti.static(D.trees):
            if n_joint_rows > 0:
                joint_local, joint_net = solve_joint_rows(D, e, n_rows, n_joint_rows)
                local = ti.max(local, joint_local)
                net = ti.max(net, joint_net)
            for r in range(n_rows + n_joint_rows, n_rows + n_joint_rows + n_pins):
                pin_local, pin_net = solve_pin_row(D, e, r, dt, erp)
                local = ti.max(local, pin_local)
                net = ti.max(net, pin_net)
        if n_carriers > 0:
            sand_local, sand_net = solve_sand_rows(D, e)
            local = ti.max(local, sand_local)
            net = ti.max(net, sand_net)
        # (the first sweep has no earlier velocities to compare with)
        done = local <= tolerance or (sweeps > 1 and net <= tolerance)
        if ti.static(D.trees):  # Coulomb friction is not a minimization, so solving some rows together can
            # cycle where one by one converges (a foot slipping while others stick): once a sweep's net change
            # stops shrinking, the rest of the step sweeps row by row
            if sweeps > 2 and net >= last_net:
                use_block = 0
            last_net = net
    return sweeps
