"""The RFT stage of a step: every plate's force, then each carrier's load.

On the GPU backends, one launch before each step (``World.step``), parallel over (env, plate):

1. tree link frames and velocities at the start of the step (the step recomputes them; ``dynamics/tree.py``);
2. over (env, plate): the plate's centroid in the world; the first medium whose region holds it; the depth below
   its surface (flat, or the height map's triangle under the centroid, measured along the map's z); for a buried
   plate, its world normal and centroid velocity and the force of :func:`~.law.plate_force`; the force smoothed
   with the medium's factor ``a``: ``F <- a F + (1 - a) F_last`` once the plate has a last force
   (``PLATE_STATE``, checkpointed);
3. over (env, carrier): the sum of its plates' forces and their moment about its origin, plate by plate in
   index order (the sum does not depend on how the plates were scheduled, so replays are bit-identical).

On cpu the step kernel does the same inside each env's step (:func:`carrier_plates`, after the step's own tree
frames): carrier by carrier, its motion read once, each plate's force added to the carrier's load as it is
found, in the same order, so both give the same bits (a test). There a launch of its own before each step cost
more than the plates' work (docs/performance.md has the numbers), and ``step(n)`` is one launch.

The step adds each carrier's load as an applied force (``PLATE_LOAD``): to a free body's force and torque, and to a
tree link's Newton-Euler force, which the bias forces then carry to the joints.
"""
import taichi as ti

from ..collision.heightmap import hm_grid, hm_pose, hm_surface
from ..common.arrays import (
    BODY_I,
    FRAME,
    JOINT_I,
    MEDIUM_F,
    MEDIUM_I,
    PLATE_F,
    PLATE_I,
    PLATE_LOAD,
    PLATE_OUT,
    PLATE_RANGE,
    PLATE_STATE,
    SETTINGS_F,
    SETTINGS_I,
    TREE,
    StepData,
    gravity_of,
)
from ..common.math import quat_to_mat, tiny, vec3, vec4
from ..common.schema import get, get3, get33, getn, put, putn
from ..dynamics.tree import tree_kinematics
from .law import plate_force


@ti.func
def carrier_motion(D: ti.template(), e, c):
    """Origin [m], rotation, origin velocity [m/s] and angular velocity [rad/s] of plate carrier ``c`` (a free body,
    or a tree link after :func:`tree_kinematics`), world frame."""
    n_free = get(D.settings_i, e, 0, SETTINGS_I.n_free_bodies)
    pos = vec3(0.0, 0.0, 0.0)
    rot = ti.Matrix.identity(float, 3)
    vel = vec3(0.0, 0.0, 0.0)
    omega = vec3(0.0, 0.0, 0.0)
    if c < n_free:
        qs, us = get(D.body_i, e, c, BODY_I.q0), get(D.body_i, e, c, BODY_I.u0)
        pos = vec3(D.q[e, qs], D.q[e, qs + 1], D.q[e, qs + 2])
        quat = vec4(D.q[e, qs + 3], D.q[e, qs + 4], D.q[e, qs + 5], D.q[e, qs + 6])
        rot = quat_to_mat(quat / quat.norm())
        vel = vec3(D.u[e, us], D.u[e, us + 1], D.u[e, us + 2])
        omega = vec3(D.u[e, us + 3], D.u[e, us + 4], D.u[e, us + 5])
    elif ti.static(D.trees):
        j = c - n_free
        pos = get3(D.frame, e, j, FRAME.position)
        rot = get33(D.frame, e, j, FRAME.rotation)
        spatial = getn(D.frame, e, j, FRAME.velocity, 6)  # (angular, linear at the tree's reference point)
        omega = vec3(spatial[0], spatial[1], spatial[2])
        ref = get3(D.frame, e, get(D.tree, e, get(D.joint_i, e, j, JOINT_I.tree), TREE.joint0), FRAME.position)
        vel = vec3(spatial[3], spatial[4], spatial[5]) + omega.cross(pos - ref)
    return pos, rot, vel, omega


@ti.func
def medium_depth(D: ti.template(), e, m, point):
    """Depth [m] of ``point`` below medium ``m``'s surface (> 0: buried); a point off its height map is not
    buried."""
    depth = get(D.medium_f, e, m, MEDIUM_F.height) - point[2]
    hm = get(D.medium_i, e, m, MEDIUM_I.map)
    if hm >= 0:
        g = hm_grid(D, e, hm)
        o, rm = hm_pose(D, hm)
        p = rm.transpose() @ (point - o)
        found, a, n = hm_surface(D.heights, g, p[0], p[1])
        depth = -1.0
        if found:
            depth = a[2] - (n[0] * (p[0] - a[0]) + n[1] * (p[1] - a[1])) / n[2] - p[2]
    return depth


@ti.func
def medium_at(D: ti.template(), e, point, n_media):
    """The first medium whose region holds ``point``'s (x, y), or -1."""
    found = -1
    for m in range(n_media):
        if found < 0:
            box = getn(D.medium_f, e, m, MEDIUM_F.region, 4)
            if box[0] <= point[0] <= box[1] and box[2] <= point[1] <= box[3]:
                found = m
    return found


@ti.func
def plate_step(D: ti.template(), e, p, n_media, trial):
    """Plate ``p``'s force this step (:func:`plate_force_of`), its carrier's motion read for it alone."""
    pos, rot, vel, omega = carrier_motion(D, e, get(D.plate_i, e, p, PLATE_I.carrier))
    plate_force_of(D, e, p, n_media, trial, pos, rot, vel, omega)


@ti.func
def plate_force_of(D: ti.template(), e, p, n_media, trial, pos, rot, vel, omega):
    """Plate ``p``'s force this step (``PLATE_OUT``), smoothed against its last one (``PLATE_STATE``), its carrier
    at ``pos``, ``rot`` moving at ``vel``, ``omega`` (:func:`carrier_motion`). In a medium whose resistance is a
    row, a plate moving slower than ``|trial|`` (gravity's velocity change over the step) is taken at its velocity
    plus ``(1 - |v| / |trial|) trial``: straight down at rest, its own velocity from ``|trial|`` on (so RFT's
    independence of speed holds there). Returns the centroid's offset from the carrier's origin (world axes),
    the force and whether its medium's resistance is a row."""
    arm = rot @ get3(D.plate_f, e, p, PLATE_F.centroid)
    centroid = pos + arm
    m = medium_at(D, e, centroid, n_media)
    force = vec3(0.0, 0.0, 0.0)
    depth = 0.0
    in_row = False
    if m >= 0:
        in_row = get(D.medium_i, e, m, MEDIUM_I.row) != 0
        depth = medium_depth(D, e, m, centroid)
        if depth > 0.0:  # (an unburied plate's force is zero: its normal, velocity and coefficients are not read)
            normal = rot @ get3(D.plate_f, e, p, PLATE_F.normal)
            velocity = vel + omega.cross(centroid - pos)
            if in_row:  # (a plate slower than gravity's change over the step moves the way gravity starts it:
                # at rest, straight down)
                slow = 1.0 - velocity.norm() / ti.max(trial.norm(), ti.static(tiny()))
                if slow > 0.0:
                    velocity += slow * trial
            coeffs = getn(D.medium_f, e, m, MEDIUM_F.coefficients, 9)
            force = plate_force(normal, velocity, depth, get(D.plate_f, e, p, PLATE_F.area),
                                get(D.medium_f, e, m, MEDIUM_F.zeta), coeffs,
                                get(D.medium_i, e, m, MEDIUM_I.normalization))
        a = get(D.medium_f, e, m, MEDIUM_F.smoothing)
        if get(D.plate_state, e, p, PLATE_STATE.started) != 0.0:
            force = a * force + (1.0 - a) * get3(D.plate_state, e, p, PLATE_STATE.force)
    putn(D.plate_state, e, p, PLATE_STATE.force, force)
    put(D.plate_state, e, p, PLATE_STATE.started, 1.0 if m >= 0 else 0.0)
    putn(D.plate_out, e, p, PLATE_OUT.force, force)
    put(D.plate_out, e, p, PLATE_OUT.depth, depth)
    put(D.plate_out, e, p, PLATE_OUT.medium, ti.cast(m, float))
    return arm, force, in_row


@ti.func
def carrier_load(D: ti.template(), e, c):
    """``PLATE_LOAD`` of carrier ``c`` (:func:`sum_carrier_load`)."""
    _pos, rot, _vel, _omega = carrier_motion(D, e, c)
    sum_carrier_load(D, e, c, rot)


@ti.func
def carrier_plates(D: ti.template(), e, c, n_media, trial):
    """Carrier ``c``'s plates one after the other, its motion read once, each plate's force added to its load as
    it is found: the serial stage (the same sums, in the same order, as :func:`sum_carrier_load`)."""
    pos, rot, vel, omega = carrier_motion(D, e, c)
    force, torque = vec3(0.0, 0.0, 0.0), vec3(0.0, 0.0, 0.0)
    row_force, row_torque = vec3(0.0, 0.0, 0.0), vec3(0.0, 0.0, 0.0)
    first = get(D.plate_range, e, c, PLATE_RANGE.first)
    for p in range(first, first + get(D.plate_range, e, c, PLATE_RANGE.count)):
        arm, f, in_row = plate_force_of(D, e, p, n_media, trial, pos, rot, vel, omega)
        if in_row:
            row_force += f
            row_torque += arm.cross(f)
        else:
            force += f
            torque += arm.cross(f)
    store_load(D, e, c, force, torque, row_force, row_torque)


@ti.func
def store_load(D: ti.template(), e, c, force, torque, row_force, row_torque):
    """Write carrier ``c``'s ``PLATE_LOAD``."""
    putn(D.plate_load, e, c, PLATE_LOAD.force, force)
    putn(D.plate_load, e, c, PLATE_LOAD.torque, torque)
    putn(D.plate_load, e, c, PLATE_LOAD.row_force, row_force)
    putn(D.plate_load, e, c, PLATE_LOAD.row_torque, row_torque)


@ti.func
def sum_carrier_load(D: ti.template(), e, c, rot):
    """``PLATE_LOAD`` of carrier ``c`` with rotation ``rot``: its plates' forces and their moment about its origin,
    in plate order, of the plates in media that apply forces and, apart, of those in media whose resistance is a
    row."""
    force, torque = vec3(0.0, 0.0, 0.0), vec3(0.0, 0.0, 0.0)
    row_force, row_torque = vec3(0.0, 0.0, 0.0), vec3(0.0, 0.0, 0.0)
    first = get(D.plate_range, e, c, PLATE_RANGE.first)
    for p in range(first, first + get(D.plate_range, e, c, PLATE_RANGE.count)):
        f = get3(D.plate_out, e, p, PLATE_OUT.force)
        t = (rot @ get3(D.plate_f, e, p, PLATE_F.centroid)).cross(f)
        m = ti.cast(get(D.plate_out, e, p, PLATE_OUT.medium), ti.i32)
        if m >= 0 and get(D.medium_i, e, m, MEDIUM_I.row) != 0:
            row_force += f
            row_torque += t
        else:
            force += f
            torque += t
    store_load(D, e, c, force, torque, row_force, row_torque)


@ti.func
def _setting(D: ti.template(), col):
    return get(D.settings_i, 0, 0, col)


@ti.func
def _trial(D: ti.template(), e):
    """Env ``e``'s gravity's velocity change over one step [m/s]."""
    return get(D.settings_f, 0, 0, SETTINGS_F.dt) * gravity_of(D, e)


@ti.func
def _frames(D: ti.template(), e):
    for t in range(get(D.settings_i, e, 0, SETTINGS_I.n_trees)):
        tree_kinematics(D, e, t)


def _plates_kernel(trees: bool, serial: bool, lanes: tuple):
    nd = ti.types.ndarray()
    env_lanes, plate_lanes, carrier_lanes = lanes

    @ti.kernel
    def plates(model_i: nd, model_f: nd, heights: nd, q: nd, u: nd, state_f: nd, control: nd, scratch_f: nd):
        """The RFT stage of one step for every env (module docstring)."""
        n_envs = q.shape[0]
        n_plates = _setting(StepData(model_i, trees, model_i=model_i), SETTINGS_I.n_plates)
        n_media = _setting(StepData(model_i, trees, model_i=model_i), SETTINGS_I.n_media)
        n_carriers = _setting(StepData(model_i, trees, model_i=model_i), SETTINGS_I.n_plate_carriers)
        if ti.static(serial):  # (one loop on the calling thread, each carrier's motion read once)
            ti.loop_config(serialize=True)
            for e in range(n_envs):
                if ti.static(trees):
                    _frames(StepData(model_i, trees, model_i=model_i, model_f=model_f, q=q, u=u, scratch_f=scratch_f),
                            e)
                trial = _trial(StepData(model_i, trees, model_i=model_i, model_f=model_f, control=control), e)
                for c in range(n_carriers):
                    carrier_plates(StepData(model_i, trees, model_i=model_i, model_f=model_f, heights=heights, q=q,
                                            u=u, state_f=state_f, control=control, scratch_f=scratch_f), e, c,
                                   n_media, trial)
        elif ti.static(env_lanes > 0):  # (vulkan: thread i of a fixed number takes item i, common/lanes.py)
            if ti.static(trees):
                for lane in range(env_lanes):
                    if lane < n_envs:
                        _frames(StepData(model_i, trees, model_i=model_i, model_f=model_f, q=q, u=u,
                                         scratch_f=scratch_f), lane)
            for lane in range(plate_lanes):
                if lane < n_envs * n_plates:
                    e = lane // n_plates
                    plate_step(StepData(model_i, trees, model_i=model_i, model_f=model_f, heights=heights, q=q, u=u,
                                        state_f=state_f, control=control, scratch_f=scratch_f), e, lane % n_plates,
                               n_media,
                               _trial(StepData(model_i, trees, model_i=model_i, model_f=model_f, control=control), e))
            for lane in range(carrier_lanes):
                if lane < n_envs * n_carriers:
                    carrier_load(StepData(model_i, trees, model_i=model_i, model_f=model_f, q=q, u=u,
                                          scratch_f=scratch_f), lane // n_carriers, lane % n_carriers)
        else:
            if ti.static(trees):
                for e in range(n_envs):
                    _frames(StepData(model_i, trees, model_i=model_i, model_f=model_f, q=q, u=u, scratch_f=scratch_f),
                            e)
            for e, p in ti.ndrange(n_envs, n_plates):
                plate_step(StepData(model_i, trees, model_i=model_i, model_f=model_f, heights=heights, q=q, u=u,
                                    state_f=state_f, control=control, scratch_f=scratch_f), e, p, n_media,
                           _trial(StepData(model_i, trees, model_i=model_i, model_f=model_f, control=control), e))
            for e, c in ti.ndrange(n_envs, n_carriers):
                carrier_load(StepData(model_i, trees, model_i=model_i, model_f=model_f, q=q, u=u, scratch_f=scratch_f),
                             e, c)

    return plates


_VARIANTS = {}


def plates_kernel(trees: bool, serial: bool = False, lanes: tuple = (0, 0, 0)):
    """The RFT stage's own kernel (the GPU backends' RFT stage; on cpu the step kernel runs it), with the tree stages
    or not; ``serial`` runs its loops on the calling thread, carrier by carrier (for a single env on cpu, where
    three parallel loops' launches cost more than the plates' work); ``lanes`` (vulkan): the threads of its loops
    over envs, (env, plate) and (env, carrier) pairs (:func:`~..common.lanes.gpu_lanes`; 0: as Taichi sizes
    them). Each plate's force does not depend on the schedule, and each carrier sums its plates in index order,
    so every variant gives the same bits."""
    key = (bool(trees), bool(serial), tuple(int(n) for n in lanes))
    if key not in _VARIANTS:
        _VARIANTS[key] = _plates_kernel(*key)
    return _VARIANTS[key]
