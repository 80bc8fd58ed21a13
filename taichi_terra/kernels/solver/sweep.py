"""The step's ``WARM_STARTS`` and ``SWEEPS`` (``kernels/step.py``): the warm start of the contact and soil
rows, and the projected Gauss-Seidel sweeps over every row until the velocities settle.

The sweep dispatches on each row's kind: Coulomb contact (``contact.py``), soil point (``soil/law.py``), then
the trees' joint limit and friction rows (``limits.py``), the pins (``pins.py``) and the sand rows of RFT
media that act as rows (``sand.py``). Sticking contacts of trees are solved together first (``block.py``),
and rows on one tree link against static geometry are swept as a run on that link (``links.py``, "Link
runs").
"""
import taichi as ti

from ..common.arrays import (
    BODY_I,
    CONTACT,
    ENV,
    FEATURE,
    LINK,
    PAIR,
    PIN_I,
    ROW_F,
    ROW_I,
    SETTINGS_F,
    SETTINGS_I,
    SOIL_GROUP_STATE,
    STAGE_I,
    SWEEP_F,
    TREE,
    U_SEEN,
)
from ..common.layout import FEAT_SOIL, ROW_MERGED, ROW_SOIL
from ..common.math import ti_real, vec3
from ..common.schema import get, get3, get33, put, putn, row
from ..dynamics.bodies import carrier_joint
from ..dynamics.free_body import add_link_velocity, link_velocity
from ..soil.history import soil_point
from ..soil.law import SoilPoint, solve_soil_row
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
from .pin_block import solve_pin_block
from .pins import solve_pin_row
from .rows import row_geometry, warm_start_slot
from .sand import solve_sand_rows
from .soil_block import is_soil_block, soil_block, soil_run_end
from .soil_group import FIRST_SWEEP, LATE_SWEEP, STAGES, is_group_member, setup_soil_group, soil_group_sweep

vec6 = ti.types.vector(6, float)
mat6 = ti.types.matrix(6, 6, float)

#: the largest rate of convergence the stopping test assumes: a sweep that changed the velocities by ``c``
#: is taken to leave at most ``c RHO_MAX / (1 - RHO_MAX)`` = 3 c to go
RHO_MAX = 0.75

#: in f32, the sweeps also stop once a sweep changes the velocities by no less than the one before (no
#: progress) and by at most this many tolerances: there float32 has reached its resolution. The buggy's pins
#: settled into a cycle of two sweeps trading 3.6e-6 m/s against the 1e-6 m/s tolerance, and 181 of its first
#: 600 steps ran to the sweep cap; f64 converges in them
ROUNDING_STALL = 10.0


@ti.func
def warm_start(D: ti.template(), e, n_rows, n_static, rigid_on, soil_on):
    """``WARM_STARTS``: each row starts from the last step's impulse of the same contact feature, projected on the
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
def velocity_change(D: ti.template(), e):
    """The largest change of any of env ``e``'s generalized velocities (``u``: every free body's and tree's,
    [m/s] or [rad/s]) since the last call, which it remembers (``U_SEEN``)."""
    change = 0.0
    for k in range(D.u.shape[1]):
        x = D.u[e, k]
        change = ti.max(change, ti.abs(x - get(D.u_seen, e, k, U_SEEN.velocity)))
        put(D.u_seen, e, k, U_SEEN.velocity, x)
    return change


@ti.func
def _link_state(D: ti.template(), e, link):
    """Spatial velocity (w, v at its reference point) and spatial response ``Phi`` of ``link`` (a free body:
    its centre of mass, ``Phi = diag(I_w^-1, I / m)``; a tree link: ``links.open_link_run``)."""
    vel, phi = vec6(0.0), mat6(0.0)
    j = carrier_joint(D, e, link)
    if j < 0:
        v, w = link_velocity(D.u, e, get(D.body_i, e, link, BODY_I.u0))
        inv_iw = get33(D.link, e, link, LINK.inv_inertia)
        inv_m = get(D.link, e, link, LINK.inv_mass)
        for a in ti.static(range(3)):
            vel[a] = w[a]
            vel[a + 3] = v[a]
            phi[a + 3, a + 3] = inv_m
            for c in ti.static(range(3)):
                phi[a, c] = inv_iw[a, c]
    elif ti.static(D.trees):
        vel, phi, _total = open_link_run(D, e, j)
    return vel, phi


@ti.func
def _push_link_state(D: ti.template(), e, link, total):
    """``u += M^-1 J^T total`` for the spatial impulse ``total`` (moment about the link's reference point,
    impulse) on ``link``."""
    j = carrier_joint(D, e, link)
    if j < 0:
        add_link_velocity(D.u, e, get(D.body_i, e, link, BODY_I.u0),
                          get(D.link, e, link, LINK.inv_mass) * vec3(total[3], total[4], total[5]),
                          get33(D.link, e, link, LINK.inv_inertia) @ vec3(total[0], total[1], total[2]))
    elif ti.static(D.trees):
        close_link_run(D, e, j, total)


@ti.func
def _solve_row(D: ti.template(), e, r, ri, s, w, lam, vloc, dt):
    """Row ``r``'s new impulse (row frame) by the law of its kind: a soil point's (``soil/law.py``) or a
    Coulomb contact's, from its impulse ``lam``, Delassus block ``w`` and relative velocity ``vloc``."""
    new = lam
    if ti.static(D.has_soil):
        if ri[ROW_I.kind] == ROW_SOIL:
            m = get(D.pair, e, ri[ROW_I.pair], PAIR.other)
            mat, st = soil_point(D, e, m, get(D.feature, e, s, FEATURE.now) - FEAT_SOIL)
            pt = SoilPoint(delta=st[1] - get(D.contact, e, s, CONTACT.depth), s_p=st[1], j=st[2],
                           area=get(D.contact, e, s, CONTACT.area), b=get(D.row_f, e, r, ROW_F.width),
                           rate=get(D.row_f, e, r, ROW_F.slip_rate))
            new = solve_soil_row(w, lam, vloc, pt, dt, mat)
        else:
            new = solve_rigid_row(w, lam, vloc, get(D.row_f, e, r, ROW_F.target), get(D.row_f, e, r, ROW_F.friction))
    else:
        new = solve_rigid_row(w, lam, vloc, get(D.row_f, e, r, ROW_F.target), get(D.row_f, e, r, ROW_F.friction))
    return new


@ti.func
def sweep_rows(D: ti.template(), e, n_rows, n_joint_rows, n_pins):
    """``SWEEPS``: Gauss-Seidel sweeps over the contact rows, then the ``n_joint_rows`` joint rows
    (``solver/limits.py``), the ``n_pins`` pin rows and (with RFT plates) the sand rows (``solver/sand.py``),
    each row solved by the law of its kind, until the velocities have settled (``ENV.sweeps``: the sweeps
    taken). :func:`start_sweeps`, then :func:`continue_sweeps` up to the limit; the GPU layout launches the
    latter several times, a few sweeps each (``kernels/step.py``).

    The sweeps stop once a whole sweep changed no generalized velocity (``u``: every free body's and
    tree's) by more than ``tolerance``, and that change ``c`` times ``rho / (1 - rho)`` is within
    ``tolerance`` too, ``rho`` the ratio of the last two sweeps' changes (at most ``RHO_MAX``, which the
    first sweep takes): ``c <= tolerance`` where the changes shrink fast, ``c <= tolerance / 3`` where they
    shrink slowly. Rows whose impulses still move then only trade impulse along directions that move
    nothing (redundant contacts: four feet on the ground under locked joints, hundreds of soil points under
    one plate), or move the velocities so slowly that what is left is not bounded by the tolerance (the rule
    cannot see a rate of convergence slower than ``RHO_MAX``).

    The pins of one tree are solved together, after its rows pushed it with its pins held
    (``solver/pin_block.py``; ``SETTINGS_I.pin_block`` 0: one by one).

    Each sweep first solves the loaded rigid contacts of trees together, each off, sticking or sliding
    (``solver/block.py``); the rows it solved skip their one-by-one update in that sweep. The soil rows of one body (or tree link) on one bed
    are solved together on its six velocities (``solver/soil_block.py``); a block that did not converge
    in a sweep hands its rows to their one-by-one updates in that sweep (``SETTINGS_I.soil_block`` 0:
    always). The soil blocks of tree links are solved together first (``solver/soil_group.py``,
    ``SETTINGS_I.tree_soil_block``); where that converged, they skip their own blocks in that sweep. Once a
    sweep changes the velocities no less than the sweep before it, the rest of the step sweeps every row one
    by one (no contact block, no soil blocks), except that an env with a soil group takes its soil blocks up
    again at the group's ``LATE_SWEEP``-th sweep, from which the group is solved in stages of stiffer
    anchors (``soil_group.py``, "Slow steps")."""
    start_sweeps(D, e, n_rows)
    continue_sweeps(D, e, n_rows, n_joint_rows, n_pins, get(D.settings_i, e, 0, SETTINGS_I.max_sweeps))


@ti.func
def start_sweeps(D: ti.template(), e, n_rows):
    """Before a step's first sweep: the contact block and soil group set up, the velocities remembered, and
    where the sweeps stand (``ENV.sweeps*``, ``SWEEP_F``) at their start."""
    use_soil_block = 0  # the soil blocks are on (0/1)
    if ti.static(D.has_soil):
        use_soil_block = get(D.settings_i, e, 0, SETTINGS_I.soil_block)
    if ti.static(D.trees):
        setup_contact_block(D, e, n_rows, get(D.settings_i, e, 0, SETTINGS_I.contact_block))
    light = 0  # the soil group is light: solved from LATE_SWEEP on only
    if ti.static(D.trees and D.has_soil):
        light = setup_soil_group(D, e, n_rows, use_soil_block * get(D.settings_i, e, 0, SETTINGS_I.tree_soil_block))
    velocity_change(D, e)
    put(D.env, e, 0, ENV.sweeps, 0)
    put(D.stage, e, 0, STAGE_I.sweeps_done, 0)
    put(D.stage, e, 0, STAGE_I.sweep_block, 1)  # the contact block is on in this step's sweeps
    put(D.stage, e, 0, STAGE_I.sweep_soil_block, use_soil_block)
    put(D.stage, e, 0, STAGE_I.sweep_light, light)
    put(D.sweep_state, e, 0, SWEEP_F.last_change, 0.0)


@ti.func
def continue_sweeps(D: ti.template(), e, n_rows, n_joint_rows, n_pins, budget):
    """Up to ``budget`` more sweeps of the step (:func:`sweep_rows`), from where the env's row says they stand,
    which it updates."""
    dt, erp = get(D.settings_f, e, 0, SETTINGS_F.dt), get(D.settings_f, e, 0, SETTINGS_F.erp)
    tolerance = get(D.settings_f, e, 0, SETTINGS_F.tolerance)
    max_sweeps = get(D.settings_i, e, 0, SETTINGS_I.max_sweeps)
    n_carriers = get(D.settings_i, e, 0, SETTINGS_I.n_plate_carriers)
    sweeps, done = get(D.env, e, 0, ENV.sweeps), get(D.stage, e, 0, STAGE_I.sweeps_done) != 0
    use_block, use_soil_block = get(D.stage, e, 0, STAGE_I.sweep_block), get(D.stage, e, 0, STAGE_I.sweep_soil_block)
    light = get(D.stage, e, 0, STAGE_I.sweep_light)
    pin_blocks = 0
    if n_pins > 0:
        pin_blocks = get(D.settings_i, e, 0, SETTINGS_I.pin_block)  # each tree's pins together (0/1)
    last_change = get(D.sweep_state, e, 0, SWEEP_F.last_change)
    stop = sweeps + budget
    while sweeps < max_sweeps and not done and sweeps < stop:
        sweeps += 1
        solved = 0  # the contact-block members solved together in this sweep (bit per member)
        grouped = False  # the soil group converged in this sweep: its members skip their own blocks
        if ti.static(D.trees):
            if use_block != 0:
                solved = contact_block_sweep(D, e, n_rows, tolerance)
        if ti.static(D.trees and D.has_soil):
            late = sweeps >= LATE_SWEEP
            if sweeps == LATE_SWEEP and get(D.soil_group_state, e, 0, SOIL_GROUP_STATE.count) > 0:
                use_soil_block = get(D.settings_i, e, 0, SETTINGS_I.soil_block)  # (turned off in this step or not)
            if use_soil_block != 0 and sweeps >= FIRST_SWEEP and (light == 0 or late):
                grouped = soil_group_sweep(D, e, dt, tolerance, STAGES if late else 1)
        run_j = -1  # the link of the run of rows being swept on it (links.py, "Link runs"), or -1
        run_vel, run_phi, run_total = vec6(0.0), mat6(0.0), vec6(0.0)
        r = 0
        gs_until = 0  # rows before this take their one-by-one update in this sweep
        while r < n_rows:
            ri = row(D.row_i, e, r)
            block_end = r
            if ti.static(D.has_soil):
                if use_soil_block != 0 and r >= gs_until and is_soil_block(D, e, r):
                    block_end = soil_run_end(D, e, r, n_rows)
            skip = False
            if ti.static(D.trees and D.has_soil):
                if grouped and block_end > r:
                    skip = is_group_member(D, e, r)
            if skip:  # solved with the soil group in this sweep
                r = block_end
            elif block_end > r:  # a soil block: rows r to block_end - 1, on one link
                if ti.static(D.has_soil):
                    if ti.static(D.trees):
                        if run_j >= 0:
                            close_link_run(D, e, run_j, run_total)
                            run_j = -1
                    link = ri[ROW_I.side_b]
                    vel, phi = _link_state(D, e, link)
                    total, converged = soil_block(D, e, r, block_end, vel, phi, dt, tolerance)
                    _push_link_state(D, e, link, total)
                    if not converged:  # its rows one by one in this sweep, from where the block left them
                        gs_until = block_end
                    else:
                        r = block_end
            else:
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
                    w = get33(D.row_f, e, r, ROW_F.delassus)
                    lam = get3(D.row_f, e, r, ROW_F.impulse)
                    new = _solve_row(D, e, r, ri, s, w, lam, vloc, dt)
                    d = new - lam
                    if d.norm() > 0.0:
                        if j >= 0:
                            run_vel, run_total = run_push(run_phi, run_vel, run_total, rb, frame @ d)
                        else:
                            apply_impulse(D, e, r, side_a, side_b, ra, rb, frame @ d)
                        putn(D.row_f, e, r, ROW_F.impulse, new)
                r += 1
        if ti.static(D.trees):
            if run_j >= 0:
                close_link_run(D, e, run_j, run_total)
        if ti.static(D.trees):
            if n_joint_rows > 0:
                solve_joint_rows(D, e, n_rows, n_joint_rows)
        if ti.static(D.has_pins):
            r_pins = n_rows + n_joint_rows
            for k in range(n_pins):  # (pins of a pin block: together, below)
                if pin_blocks == 0 or get(D.pin_i, e, k, PIN_I.local) < 0:
                    solve_pin_row(D, e, r_pins + k, dt, erp)
            if pin_blocks != 0:
                for t in range(get(D.settings_i, e, 0, SETTINGS_I.n_trees)):
                    if get(D.tree, e, t, TREE.loop_pins) > 0:
                        solve_pin_block(D, e, t, r_pins, n_pins, dt, erp)
        if ti.static(D.has_rft):
            if n_carriers > 0:
                solve_sand_rows(D, e)
        change = velocity_change(D, e)
        # linearly, by rho per sweep, the velocities have about change rho / (1 - rho) to go; rho from the last
        # two sweeps (the first: RHO_MAX), at most RHO_MAX
        rho = RHO_MAX
        if sweeps > 1 and last_change > 0.0:
            rho = ti.min(change / last_change, RHO_MAX)
        done = change <= tolerance and change * rho <= tolerance * (1.0 - rho)
        if ti.static(ti_real() == ti.f32):  # (float32's resolution reached: ROUNDING_STALL)
            if sweeps > 2 and change >= last_change and change <= ROUNDING_STALL * tolerance:
                done = True
        # Coulomb friction is not a minimization, so solving some rows together can cycle where one by one
        # converges (a foot slipping while others stick; a plate sticking on a slope, its soil block and the
        # row-by-row updates of a block that did not converge taking turns): once a sweep's velocity change
        # stops shrinking, the rest of the step sweeps row by row
        if sweeps > 2 and change >= last_change:
            use_block = 0
            use_soil_block = 0
        last_change = change
    put(D.env, e, 0, ENV.sweeps, sweeps)
    put(D.stage, e, 0, STAGE_I.sweeps_done, 1 if done or sweeps >= max_sweeps else 0)
    put(D.stage, e, 0, STAGE_I.sweep_block, use_block)
    put(D.stage, e, 0, STAGE_I.sweep_soil_block, use_soil_block)
    put(D.sweep_state, e, 0, SWEEP_F.last_change, last_change)
