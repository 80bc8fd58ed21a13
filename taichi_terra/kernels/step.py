"""The step kernel: one launch advances every env by ``n`` steps.

One thread per env runs its steps back to back; inside an env everything is serial and in a fixed order,
so replays are bit-identical and an env's result does not depend on how many envs run beside it. A step
runs these stages, in this order (:func:`stages_of`; each is the function ``stage_<name>`` below, and the
stage's constant names it in the code):

- ``FRAMES``: the trees' link frames and velocities; on cpu, the RFT plates' forces and each carrier's load
  from those frames (``rft/plates.py``; the GPU backends launch that stage before the step)
- ``CONTACTS``: every static pair's slots (a shape with the ground, a height map, a soil bed's quadrature
  points; a tree link with several shapes loads each bed sample through its lowest one), the broadphase's
  shape-shape pairs, then those pairs' contacts (``collision/``)
- ``TREE_FORCES``: which trees a row will act on; every tree's bias forces and the drives held at their
  effort limit since the last step; for a tree some row acts on, the mass matrix and its factor with the
  implicit drive terms (``dynamics/tree.py``, ``dynamics/tree_solve.py``)
- ``ROWS``: the free bodies' world inverse inertias and inverse masses; one row per contact with its kind,
  sides, frame, offsets, Delassus block, target and friction (``solver/rows.py``; a contact on a track's belt
  takes the belt's direction, and coincident contacts of one belt are merged: ``belts/rows.py``); the trees'
  joint-limit and friction rows (``solver/limits.py``); the pins' rows (``solver/pins.py``). Where they lie
  is the step's :class:`Rows`, which every later stage takes
- ``IMPACTS``: impacts, in waves, with the velocities before this step's forces (``solver/impact.py``)
- ``FREE_VELOCITIES``: ``u* = u + dt M^-1 (tau - h)`` (``dynamics/free_body.py``; trees: with their drives,
  by the articulated-body algorithm where no row acts), the RFT plates' loads among the applied forces; the
  belts of a tree factored again here take their columns again (``belts/rows.py``)
- ``RESPONSES`` (trees): the responses of the links and dofs the rows act on; the pins' columns
- ``SAND_AND_PIN_BLOCKS``: the sand rows of RFT media that act as rows (``solver/sand.py``); each tree's pins
  together, its rows pushing it as a system whose pins hold (``solver/pin_block.py``; last, since it changes
  the responses the rows were made from)
- ``WARM_STARTS``: each row, joint row and pin from the last step's impulse of the same feature
  (``solver/sweep.py``)
- ``SWEEPS``: projected Gauss-Seidel sweeps (``solver/sweep.py``), dispatching on the row kind: Coulomb
  contact (a tree's loaded contacts together: ``solver/block.py``), soil point (a body's together:
  ``solver/soil_block.py``), joint limit and friction (``solver/limits.py``), pin (``solver/pins.py``), sand
  row (``solver/sand.py``)
- ``REACTIONS``: the pins' share of what the rows pushed through held responses; the sand rows' loads; the
  resting manifolds' least tangential impulses (``solver/relax.py``)
- ``HISTORY``: soil history (``soil/history.py``); what the drives applied and the wrenches the joints
  transmitted (``dynamics/inverse.py``, trees with inverse dynamics on)
- ``INTEGRATION``: the positions (tree joints: velocities clamped to their limits first); the pins' gaps
  closed; each row's world impulse and feature, the warm-start cache and this step's pair table
  (:func:`store_results`)

The kernel binds the arrays declared in ``common/arrays.py`` and nothing else.

In the GPU layout (``World.step_layout = "staged"``, the default on a Vulkan driver that limits a thread's loop
iterations per launch: lavapipe) each stage is a launch of its own (:func:`gpu_launches`, :func:`stage_kernels`),
over what it can run in parallel: the static contact pairs over (env, pair), the soil history's passes over
(env, sample row), the free bodies' integration over (env, body), the rest over envs and the sweeps a few per
launch; the step's :class:`Rows` pass from launch to launch through ``STAGE_I``. Every launch on vulkan ends by
checking that the thread's loops ran to their end (:func:`loops_ran_out`).

On cpu the step of articulated trees runs the stages in a few functions of their own, each calling the next (:func:`chain`), which cut
its compile to a third of what one function holding every stage took; the free-body step and the GPU backends
inline them into the kernel. Both compute the same: the golden replays (``tests/test_golden.py``) pass bit for
bit either way.

A variant of the step with trees compiles only the optional parts (``FEATURES``: soil beds, pins, belts, RFT
plates) its world uses, each behind a compile-time switch (``D.has_soil``, ``D.has_pins``, ``D.has_belts``,
``D.has_rft``) around code a world without it never reaches; ``taichi_terra.init``'s ``specialize`` chooses
that, or one kernel with every part for every world of a process. Both step a world to the same bits
(``tests/test_kernel_features.py``).
"""
import taichi as ti

from .belts.rows import refresh_belts
from .solver.sand import build_sand_rows, finish_sand_rows
from .collision.broadphase import broadphase, shape_pair_capacity
from .collision.pairs import (collide_pair, collide_shape_pair, hide_occluded_soil_points, place_soil_row,
                              soil_quadrature_row)
from .common.arrays import (
    BODY_F,
    BODY_I,
    BODY_LOAD,
    CONTACT,
    ENV,
    FEATURE,
    FEATURES,
    FOUND_F,
    FOUND_I,
    FRAME,
    INERTIA,
    JOINT_I,
    LAUNCH,
    LINK,
    PAIR,
    PAIR_COUNT,
    PIN_I,
    PLATE_LOAD,
    ROW_F,
    ROW_I,
    SETTINGS_F,
    SETTINGS_I,
    SHAPE_PAIR,
    STAGE_I,
    TREE,
    TREE_STEP,
    StepData,
    body_mass_scale,
    gravity_of,
)
from .common.layout import (DIVERGED_COORDINATE, DIVERGED_LOOPS, DIVERGED_POSITION, DIVERGED_SPEED, DIVERGED_VELOCITY,
                            JOINT_FIXED_ROOT, JOINT_FLOATING, ROW_MERGED, SHAPE_PAIR_ROOM)
from .common.math import vec3
from .common.schema import add, get, get3, get33, put, put33, put_row, putn, row
from .dynamics.bodies import carrier_joint
from .dynamics.free_body import free_velocity, integrate_link, link_inv_inertia
from .dynamics.inverse import transmitted_wrenches
from .dynamics.tree import hold_drives, record_drive_forces, tree_dynamics, tree_free_velocity, tree_integrate, tree_kinematics
from .dynamics.tree_solve import tree_factor
from .rft.plates import carrier_plates
from .soil.history import (clear_soil_row, commit_loaded_soil, commit_soil, recover_soil_row, soil_row_at,
                           soil_rows_of)
from .solver.impact import resolve_impacts
from .solver.limits import (
    build_joint_rows,
    joint_row_responses,
    joint_rows_of,
    store_joint_rows,
    warm_start_joint_rows,
)
from .solver.links import prepare_sides
from .solver.pin_block import pin_reactions, setup_pin_blocks, warm_start_pin_blocks
from .solver.pins import (
    build_pin_rows,
    pin_columns,
    project_pins,
    store_pins,
    warm_start_pins,
)
from .solver.relax import relax_internal_friction
from .solver.rows import build_rows, pair_entry
from .solver.sweep import continue_sweeps, start_sweeps, sweep_rows, warm_start

nd = ti.types.ndarray()


@ti.dataclass
class Rows:
    """Where a step's solver rows lie (stage ``ROWS`` counts them): ``contacts`` contact and soil rows from 0,
    then ``joints`` joint-limit and joint-friction rows, then the pins from :meth:`pin0`. The stages before
    ``ROWS`` see zeros."""
    contacts: ti.i32
    joints: ti.i32

    @ti.func
    def pin0(self):
        """The first pin row."""
        return self.contacts + self.joints


def env_spread(n_envs: int, arch: str, threads: int, serial: bool) -> int:
    """Iterations of the step kernel's env loop per env, all but the first of each env's empty.

    Taichi's cpu backend (1.7) hands a parallel loop whose bound is known only at run time to its threads in
    chunks of at least 512 iterations: with one iteration per env, a world of 512 envs or fewer stepped on
    one thread (measured: the quadruped at 64, 256 and 512 envs, 11.5 us of wall time per env-step on two
    threads as on one; ``ti.loop_config``'s ``block_dim`` changed nothing). Spread over ``512 / k``
    iterations each, the envs come in chunks of ``k`` consecutive envs, ``k`` chosen for about four chunks
    per thread. One iteration per env on the GPU backends (a thread per env), for a serial loop, and where
    the envs already fill four chunks of 512 per thread."""
    if arch != "cpu" or serial:
        return 1
    per_chunk = -(-int(n_envs) // (4 * max(1, int(threads))))
    return max(1, 512 // per_chunk)


def _simulate_kernel(serial: bool, trees: bool, plates: bool = False, lanes: int = 0, split: bool = False,
                     features: tuple = FEATURES):
    """The step kernel; ``serial`` runs the env loop on the calling thread (a single-env world on cpu: a
    parallel loop's launch costs about 130 us there, a serial one about 20 us); ``trees`` compiles the
    articulated-tree stages in (a world without trees does not pay their compile time); ``plates`` runs the RFT
    stage inside each step (``FRAMES``; on cpu every kernel has it and counts the plates' carriers at run time), so
    ``step(n)`` stays one launch; ``lanes`` > 0 (vulkan) runs env ``i`` on thread ``i`` of that many
    (:func:`~.common.lanes.gpu_lanes`); ``split`` (with ``trees``) runs the stages in functions of their own
    (:func:`chain`; cpu: ``ti.real_func`` is for the LLVM backends, and cuda has not been measured with it) rather
    than inlining them all into one; ``features``: the optional parts compiled in (``common/arrays.py``'s
    ``FEATURES``: soil beds, pins, belts, RFT plates; a world that lacks one never reaches its code, so a kernel
    without it steps that world exactly as one with it, in less compile time)."""

    @ti.kernel
    def simulate(n_steps: ti.i32, spread: ti.i32, stamp: ti.i32, model_i: nd, model_f: nd, heights: nd, q: nd,
                 u: nd, state_f: nd, state_i: nd, control: nd, scratch_f: nd, scratch_i: nd, soil_rev: nd):
        """Advance every env by ``n_steps`` steps (a call costs one kernel launch however many steps it
        takes); ``spread`` loop iterations per env (:func:`env_spread`); ``stamp`` is written to each env's
        ``LAUNCH`` row first (:func:`stand_in`)."""
        if ti.static(lanes > 0):
            for lane in range(lanes):
                if lane < q.shape[0]:
                    run_env_watched(StepData(model_i, trees, features, model_i=model_i, model_f=model_f,
                                             heights=heights, q=q, u=u, state_f=state_f, state_i=state_i,
                                             control=control, scratch_f=scratch_f, scratch_i=scratch_i,
                                             soil_rev=soil_rev),
                                    lane, n_steps, stamp, trees, plates, split, features)
        else:
            ti.loop_config(serialize=serial)
            for i in range(q.shape[0] * spread):  # (env_spread: all but every spread-th iteration are empty)
                if i % spread == 0:
                    run_env(StepData(model_i, trees, features, model_i=model_i, model_f=model_f, heights=heights,
                                     q=q, u=u, state_f=state_f, state_i=state_i, control=control,
                                     scratch_f=scratch_f, scratch_i=scratch_i, soil_rev=soil_rev),
                            i // spread, n_steps, stamp, trees, plates, split, features)

    return simulate


#: one thread per env, without the tree stages and the RFT stage (the free-body step of cuda, where the RFT stage
#: is a launch of its own); :func:`simulate_kernel` makes the others on first use
simulate = _simulate_kernel(False, False)
_VARIANTS = {(False, False, False, 0, False, FEATURES): simulate}


def stand_in(tag: tuple):
    """A kernel with the step kernel's parameters that does nothing, its body a local variable per entry of
    ``tag`` (ints below 2**31), so that Taichi keys it in its cache by the tag. ``taichi_terra/kernel_cache.py``
    has Taichi load a step kernel's code under that key without building the step kernel's IR; a launch that
    got the stand-in's own code instead is told apart by the ``stamp`` it did not write."""
    n = len(tag)
    zeros = [0] * n

    @ti.kernel
    def simulate(n_steps: ti.i32, spread: ti.i32, stamp: ti.i32, model_i: nd, model_f: nd, heights: nd, q: nd,
                 u: nd, state_f: nd, state_i: nd, control: nd, scratch_f: nd, scratch_i: nd, soil_rev: nd):
        held = ti.Vector(zeros, ti.i32)
        for k in ti.static(range(n)):
            held[k] = tag[k]

    return simulate


#: sweeps one launch of the ``SWEEPS`` stage runs in the GPU layout (:func:`stage_kernels`) unless the world
#: chooses (``SolverConfig.sweeps_per_launch``): a sweep of a stack of 20 boxes (80 rows) spends about 770 of
#: lavapipe's 65,535 loop iterations, but launches of 16 sweeps of the 27-brick pile (``perf`` scene
#: many_bodies, f32) ran past the limit in its step 43; launches of 8 ran its 150 steps
SWEEPS_PER_LAUNCH = 8

#: what one launch of the GPU layout runs in parallel (:func:`gpu_launches`): a thread per env, per (env, static
#: contact pair), per (env, soil sample row), per (env, free body), per (env, static pair, footprint row: the
#: ``soil_quad_rows`` setting's rows of each pair), or per (env, entry of the shape-pair table)
OVER_ENVS, OVER_PAIRS, OVER_SOIL_ROWS, OVER_BODIES, OVER_FOOTPRINT_ROWS, OVER_SHAPE_PAIRS = range(6)

#: the GPU layout runs the shape-shape pairs over (env, pair) only in a world whose shape-pair table has at least
#: this many entries, and a soil pair's quadrature over the rows of its footprint only where some soil pair's
#: footprint spans at least ``SPLIT_FOOTPRINT`` bed samples (its slot capacity); smaller, each runs on its env's
#: thread, in the launch beside it. On lavapipe the split's two launches cost more than they save in small
#: worlds (the six RFT boxes' 15 pairs: 4.1 ms a step against 2.3 ms at one env; a 20 kg plate's 676-sample
#: footprint over 1024 envs: 490 ms against 325 ms), and pay where an env's thread would run past the loop limit
#: (200 boxes, 2,600 pairs; a plate over 10,000 samples)
SPLIT_SHAPE_PAIRS = 64
SPLIT_FOOTPRINT = 2048


#: the parts of ``CONTACTS`` in the GPU layout (:func:`gpu_launches`), by number
CONTACT_PARTS = {0: "static pairs over (env, pair), their soil quadrature apart",
                 7: "static pairs over (env, pair), each with its soil quadrature",
                 2: "soil quadrature rows over (env, pair, footprint row), into scratch",
                 3: "soil quadrature rows moved to their pairs' slots, over (env, pair, footprint row)",
                 1: "over envs: occluded soil points and the broadphase, the shape pairs apart",
                 6: "over envs: occluded soil points, the broadphase and the shape pairs",
                 4: "shape pairs over (env, table entry), into scratch",
                 5: "over envs: the shape pairs' contacts moved to the pool"}


def gpu_launches(trees: bool, max_sweeps: int, items: dict, per_launch: int = SWEEPS_PER_LAUNCH) -> tuple:
    """The launches of one step in the GPU layout, in order, as ``(stage, part, over)``: each stage of
    :func:`stages_of` (without the RFT stage, which the GPU backends launch before the step) over envs, except

    - ``CONTACTS``: the static pairs (a shape with the ground, a height map or a soil bed, each in its own
      slots) over (env, pair), but for a soil pair's quadrature: each row of its footprint found over (env,
      pair, footprint row) into scratch, then moved to the pair's slots over (env, pair, footprint row)
      (``collision/pairs.py`` ``soil_quadrature_row``, ``place_soil_row``); then, over envs, the rest of the
      static pairs' part and the broadphase; then each shape-shape pair's contacts over (env, table entry) into
      scratch (:func:`stage_shape_pair`), and, over envs, their moves to the pool of slots they share
      (:func:`place_shape_pairs`);
    - ``HISTORY``: each soil sample row's last loaded samples cleared, over (env, sample row); the loaded
      samples written and the trees' records, over envs; each sample row's unloaded samples recovered, over
      (env, sample row);
    - ``SWEEPS``: as many launches as ``max_sweeps`` (the solver's limit) needs, ``per_launch`` sweeps each;
    - ``INTEGRATION``: the free bodies' positions over (env, body), then the rest (the trees, the pins, the
      rows' results) over envs.

    ``items``: how many of each item an env has (``{OVER_PAIRS: static pairs, OVER_SOIL_ROWS: soil sample
    rows, OVER_BODIES: free bodies, OVER_FOOTPRINT_ROWS: static pairs times footprint rows,
    OVER_SHAPE_PAIRS: the shape-pair table's size}``); a launch over none is left out."""
    pairs, soil_rows = int(items.get(OVER_PAIRS, 0)), int(items.get(OVER_SOIL_ROWS, 0))
    bodies, footprint_rows = int(items.get(OVER_BODIES, 0)), int(items.get(OVER_FOOTPRINT_ROWS, 0))
    shape_pairs = int(items.get(OVER_SHAPE_PAIRS, 0))
    out = []
    for which in stages_of(trees, False):
        if which == CONTACTS:  # (parts: CONTACT_PARTS)
            out += ([(CONTACTS, 0 if footprint_rows else 7, OVER_PAIRS)] * (pairs > 0)
                    + [(CONTACTS, 2, OVER_FOOTPRINT_ROWS), (CONTACTS, 3, OVER_FOOTPRINT_ROWS)] * (footprint_rows > 0)
                    + [(CONTACTS, 1 if shape_pairs else 6, OVER_ENVS)]
                    + [(CONTACTS, 4, OVER_SHAPE_PAIRS), (CONTACTS, 5, OVER_ENVS)] * (shape_pairs > 0))
        elif which == HISTORY:
            out += ([(HISTORY, 0, OVER_SOIL_ROWS)] * (soil_rows > 0) + [(HISTORY, 1, OVER_ENVS)]
                    + [(HISTORY, 2, OVER_SOIL_ROWS)] * (soil_rows > 0))
        elif which == SWEEPS:
            out += [(SWEEPS, part, OVER_ENVS) for part in range(-(-int(max_sweeps) // int(per_launch)))]
        elif which == INTEGRATION:
            out += [(INTEGRATION, 0, OVER_BODIES)] * (bodies > 0) + [(INTEGRATION, 1, OVER_ENVS)]
        else:
            out.append((which, 0, OVER_ENVS))
    return tuple(out)


def _stage_kernel(trees: bool, lanes: int, features: tuple, which: int, first: bool, last: bool, part: int,
                  over: int, per_launch: int):
    """The kernel of one launch of the GPU layout (:func:`gpu_launches`): stage ``which`` (one of
    :func:`stages_of`), its ``part``, on ``lanes`` threads, lane ``i`` taking env ``i`` (``over``:
    ``OVER_ENVS``) or item ``i % n`` of env ``i // n`` (an env's ``n`` items: ``OVER_PAIRS``,
    ``OVER_SOIL_ROWS``, ``OVER_BODIES``, ``OVER_FOOTPRINT_ROWS``), so that each part has the thread's whole loop budget on a driver that limits it
    (lavapipe). ``first`` and ``last``: whether it is the step's first launch (it writes the launch stamp and
    starts the rows afresh) or its last (it counts the step and runs the divergence watch). The step's
    :class:`Rows` go from launch to launch through ``STAGE_I``. The ``SWEEPS`` launches: ``part`` 0 starts the
    sweeps, every launch runs up to ``per_launch`` of them. The parameters are the step kernel's (``n_steps``
    is 1)."""

    @ti.kernel
    def simulate(n_steps: ti.i32, spread: ti.i32, stamp: ti.i32, model_i: nd, model_f: nd, heights: nd, q: nd,
                 u: nd, state_f: nd, state_i: nd, control: nd, scratch_f: nd, scratch_i: nd, soil_rev: nd):
        for lane in range(lanes):
            if ti.static(over == OVER_ENVS):
                if lane < q.shape[0]:
                    run_stage_of_env(StepData(model_i, trees, features, model_i=model_i, model_f=model_f,
                                              heights=heights, q=q, u=u, state_f=state_f, state_i=state_i,
                                              control=control, scratch_f=scratch_f, scratch_i=scratch_i,
                                              soil_rev=soil_rev),
                                     lane, n_steps, stamp, which, first, last, part, per_launch)
            else:
                run_stage_of_item(StepData(model_i, trees, features, model_i=model_i, model_f=model_f,
                                           heights=heights, q=q, u=u, state_f=state_f, state_i=state_i,
                                           control=control, scratch_f=scratch_f, scratch_i=scratch_i,
                                           soil_rev=soil_rev),
                                  lane, q.shape[0], n_steps, stamp, which, first, part, over)

    return simulate


_STAGE_KERNELS = {}


def stage_kernels(trees: bool, n_envs: int, features: tuple = FEATURES, max_sweeps: int = 100,
                  items: dict | None = None, per_launch: int = SWEEPS_PER_LAUNCH) -> list:
    """The kernels of one step in the GPU layout, in order (:func:`gpu_launches`, :func:`_stage_kernel`), for
    ``n_envs`` envs with ``items`` each and ``per_launch`` sweeps a launch (:func:`gpu_launches`), in a world
    without the RFT stage inside the step. Each launch runs on :func:`~.common.lanes.gpu_lanes` of its threads
    (envs, or envs times items)."""
    from .common.lanes import gpu_lanes

    features = tuple(f for f in FEATURES if f in features)
    items = dict(items or {})
    launches = gpu_launches(trees, max_sweeps, items, per_launch)
    out = []
    for k, (which, part, over) in enumerate(launches):
        threads = int(n_envs) * (1 if over == OVER_ENVS else int(items[over]))
        key = (bool(trees), gpu_lanes(threads), features, which, k == 0, k == len(launches) - 1,
               min(part, 1) if which == SWEEPS else part, over, int(per_launch) if which == SWEEPS else 0)
        if key not in _STAGE_KERNELS:
            _STAGE_KERNELS[key] = _stage_kernel(*key)
        out.append(_STAGE_KERNELS[key])
    return out


@ti.func
def run_stage_of_env(D: ti.template(), e, n_steps, stamp, which: ti.template(), first: ti.template(),
                     last: ti.template(), part: ti.template(), per_launch: ti.template()):
    """Stage ``which`` (its ``part``: :func:`gpu_launches`) of env ``e``'s step, launched on its own
    (:func:`_stage_kernel`; ``SWEEPS``: up to ``per_launch`` sweeps), then the check of the thread's loop budget
    (:func:`loops_ran_out`)."""
    if ti.static(first):
        put(D.launch, e, 0, LAUNCH.stamp, stamp)
    if get(D.env, e, 0, ENV.diverged) == 0:  # (a diverged env stands still until it is reset)
        rows = Rows(contacts=0, joints=0)
        if ti.static(not first):
            rows = Rows(contacts=get(D.stage, e, 0, STAGE_I.row_contacts),
                        joints=get(D.stage, e, 0, STAGE_I.row_joints))
        if ti.static(which == SWEEPS):  # (in launches of a few sweeps: stage_sweeps as sweep_rows runs it)
            if ti.static(part == 0):
                start_sweeps(D, e, rows.contacts)
            continue_sweeps(D, e, rows.contacts, rows.joints, _n_pins(D, e), per_launch)
        elif ti.static(which == CONTACTS):
            if ti.static(part == 5):
                place_shape_pairs(D, e, True)
            else:  # (part 1 or 6: CONTACT_PARTS)
                stage_contacts(D, e, True, part == 1)
        elif ti.static(which == HISTORY):
            stage_history(D, e, rows, True)
        elif ti.static(which == INTEGRATION):
            stage_integration(D, e, rows, True)
        else:
            rows = run_stage(D, e, which, rows, False)
        put(D.stage, e, 0, STAGE_I.row_contacts, rows.contacts)
        put(D.stage, e, 0, STAGE_I.row_joints, rows.joints)
        if ti.static(last):
            add(D.env, e, 0, ENV.steps, 1)
            watch_env(D, e)
    loops_ran_out(D, e, n_steps, which)


@ti.func
def stage_items(D: ti.template(), over: ti.template()):
    """How many items of kind ``over`` (``OVER_PAIRS``, ``OVER_SOIL_ROWS``, ``OVER_BODIES``,
    ``OVER_FOOTPRINT_ROWS``) an env has (env 0's count: every env of a world has the same)."""
    n = 0
    if ti.static(over == OVER_PAIRS):
        n = get(D.settings_i, 0, 0, SETTINGS_I.n_static_pairs)
    elif ti.static(over == OVER_FOOTPRINT_ROWS):
        n = get(D.settings_i, 0, 0, SETTINGS_I.n_static_pairs) * get(D.settings_i, 0, 0, SETTINGS_I.soil_quad_rows)
    elif ti.static(over == OVER_SHAPE_PAIRS):
        n = get(D.settings_i, 0, 0, SETTINGS_I.max_shape_pairs)
    elif ti.static(over == OVER_BODIES):
        n = get(D.settings_i, 0, 0, SETTINGS_I.n_free_bodies)
    else:
        if ti.static(D.has_soil):
            n = soil_rows_of(D, 0, get(D.settings_i, 0, 0, SETTINGS_I.n_maps))
    return n


@ti.func
def run_stage_of_item(D: ti.template(), lane, n_envs, n_steps, stamp, which: ti.template(), first: ti.template(),
                      part: ti.template(), over: ti.template()):
    """The part of stage ``which`` (:func:`gpu_launches`) for one item of one env, lane ``lane`` taking item
    ``lane % n`` of env ``lane // n`` (``n``: :func:`stage_items`), then the check of the thread's loop budget
    (:func:`loops_ran_out`): a static pair's contacts (``CONTACTS`` part 0) or a row of its footprint on a
    soil bed (part 2 finds the row's points, part 3 moves them to the pair's slots), an entry of the
    shape-pair table (part 4: :func:`stage_shape_pair`), a free body's positions
    (``INTEGRATION``), or a soil sample row's history (``HISTORY``: part 0 clears its last loaded samples,
    part 2 recovers its unloaded ones)."""
    n = stage_items(D, over)
    if n > 0 and lane < n_envs * n:
        e = lane // n
        k = lane - e * n
        if ti.static(first):
            if k == 0:
                put(D.launch, e, 0, LAUNCH.stamp, stamp)
        if get(D.env, e, 0, ENV.diverged) == 0:
            if ti.static(over == OVER_PAIRS):  # (part 0 or 7: CONTACT_PARTS)
                collide_pair(D, e, k, get(D.settings_f, e, 0, SETTINGS_F.ground_height),
                             get(D.settings_f, e, 0, SETTINGS_F.margin), get(D.settings_f, e, 0, SETTINGS_F.dt),
                             part == 0)
            elif ti.static(over == OVER_FOOTPRINT_ROWS):
                if ti.static(D.has_soil):
                    rows = get(D.settings_i, 0, 0, SETTINGS_I.soil_quad_rows)
                    p = k // rows
                    if ti.static(part == 2):
                        soil_quadrature_row(D, e, p, k - p * rows, get(D.settings_f, e, 0, SETTINGS_F.margin))
                    else:
                        place_soil_row(D, e, p, k - p * rows)
            elif ti.static(over == OVER_SHAPE_PAIRS):
                stage_shape_pair(D, e, k)
            elif ti.static(over == OVER_BODIES):
                integrate_link(D.q, D.u, e, get(D.body_i, e, k, BODY_I.q0), get(D.body_i, e, k, BODY_I.u0),
                               get(D.settings_f, e, 0, SETTINGS_F.dt))
            elif ti.static(D.has_soil):
                mi, y = soil_row_at(D, e, get(D.settings_i, e, 0, SETTINGS_I.n_maps), k)
                if y >= 0:
                    if ti.static(part == 0):
                        clear_soil_row(D, e, mi, y)
                    else:
                        recover_soil_row(D, e, mi, y)
        loops_ran_out(D, e, n_steps, which)


def simulate_kernel(serial: bool, trees: bool, plates: bool = False, lanes: int = 0, split: bool = False,
                    features: tuple = FEATURES):
    """The step kernel for a world: on the calling thread or not, with the tree stages or not, with the RFT
    stage inside the step or not, over a loop Taichi sizes or over ``lanes`` threads
    (:func:`~.common.lanes.gpu_lanes`), with its stages as functions of their own or inlined, with the optional
    parts ``features`` (any order)."""
    features = tuple(f for f in FEATURES if f in features)
    key = (bool(serial), bool(trees), bool(plates), int(lanes), bool(split), features)
    if split and not trees:
        raise ValueError(f"split: the stages run as functions only with trees, got trees={trees!r}")
    if key not in _VARIANTS:
        _VARIANTS[key] = _simulate_kernel(*key)
    return _VARIANTS[key]


@ti.func
def run_env(D: ti.template(), e, n_steps, stamp, trees: ti.template(), plates: ti.template(),
            split: ti.template(), features: ti.template()):
    put(D.launch, e, 0, LAUNCH.stamp, stamp)
    for _ in range(n_steps):
        if get(D.env, e, 0, ENV.diverged) == 0:  # (a diverged env stands still until it is reset)
            step_env(D, e, trees, plates, split, features)
            add(D.env, e, 0, ENV.steps, 1)
            watch_env(D, e)


@ti.func
def run_env_watched(D: ti.template(), e, n_steps, stamp, trees: ti.template(), plates: ti.template(),
                    split: ti.template(), features: ti.template()):
    """:func:`run_env`, then :func:`loops_ran_out` (vulkan)."""
    run_env(D, e, n_steps, stamp, trees, plates, split, features)
    loops_ran_out(D, e, n_steps, -1)


@ti.func
def loops_ran_out(D: ti.template(), e, n_steps, stage):
    """After env ``e``'s steps of a launch on vulkan: whether its thread ran out of loop iterations, and if so
    the env's report (``ENV.diverged``: ``DIVERGED_LOOPS``; ``ENV.diverged_body``: the ``stage`` launched, -1
    for the whole step) unless it had one.

    lavapipe ends every loop of a thread once the thread has run 65,535 loop iterations in one launch, all its
    loops together (``common/lanes.LAVAPIPE_LOOP_LIMIT``), and the thread goes on with wrong values. A loop of
    two iterations run last then runs only one: its bound comes from ``n_steps`` (>= 1), so that no compiler
    unrolls it. A GPU's own driver has no such limit and never reports it."""
    ran = 2
    if n_steps > 0:  # (a launch of no steps has nothing to check: the cache's launch that checks the stamp)
        ran = 0
        for _ in range(ti.min(n_steps, 1) + 1):
            ran += 1
    if ran < 2 and get(D.env, e, 0, ENV.diverged) == 0:
        put(D.env, e, 0, ENV.diverged, DIVERGED_LOOPS)
        put(D.env, e, 0, ENV.diverged_body, stage)
        put(D.env, e, 0, ENV.diverged_step, get(D.env, e, 0, ENV.steps))


@ti.func
def _blown(x):
    """Whether ``x`` is NaN or infinite."""
    return not (ti.abs(x) < ti.math.inf)


@ti.func
def watch_env(D: ti.template(), e):
    """The divergence watch, after each step of env ``e``: the first body (free bodies, then trees) with a
    non-finite coordinate, a position coordinate beyond ``SETTINGS_F.bound`` (a free body's centre, a floating
    root's origin), a non-finite velocity or a velocity component beyond ``SETTINGS_F.speed_limit`` is written
    to the env's row (``ENV.diverged*``), and the env takes no more steps."""
    bound, limit = get(D.settings_f, e, 0, SETTINGS_F.bound), get(D.settings_f, e, 0, SETTINGS_F.speed_limit)
    what, body = 0, -1
    n_free = get(D.settings_i, e, 0, SETTINGS_I.n_free_bodies)
    for b in range(n_free):
        qs, us = get(D.body_i, e, b, BODY_I.q0), get(D.body_i, e, b, BODY_I.u0)
        w = 0
        for k in ti.static(range(7)):
            if w == 0 and _blown(D.q[e, qs + k]):
                w = DIVERGED_COORDINATE
        for k in ti.static(range(3)):
            if w == 0 and ti.abs(D.q[e, qs + k]) > bound:
                w = DIVERGED_POSITION
        for k in ti.static(range(6)):
            if w == 0 and _blown(D.u[e, us + k]):
                w = DIVERGED_VELOCITY
        for k in ti.static(range(6)):
            if w == 0 and ti.abs(D.u[e, us + k]) > limit:
                w = DIVERGED_SPEED
        if what == 0 and w != 0:
            what, body = w, b
    if ti.static(D.trees):
        for t in range(get(D.settings_i, e, 0, SETTINGS_I.n_trees)):
            j0 = get(D.tree, e, t, TREE.joint0)
            w = 0
            for j in range(j0, j0 + get(D.tree, e, t, TREE.n_joints)):
                kind = get(D.joint_i, e, j, JOINT_I.type)
                r = get(D.joint_i, e, j, JOINT_I.q)
                n = 1
                if kind == JOINT_FLOATING:
                    n = 7
                elif kind == JOINT_FIXED_ROOT:
                    n = 0
                for k in range(n):
                    x = get(D.q_tree, e, r + k, 0)
                    if w == 0 and _blown(x):
                        w = DIVERGED_COORDINATE
                    if w == 0 and kind == JOINT_FLOATING and k < 3 and ti.abs(x) > bound:
                        w = DIVERGED_POSITION
            u0 = get(D.tree, e, t, TREE.u0)
            for k in range(get(D.tree, e, t, TREE.nv)):
                v = get(D.u_tree, e, u0 + k, 0)
                if w == 0 and _blown(v):
                    w = DIVERGED_VELOCITY
                if w == 0 and ti.abs(v) > limit:
                    w = DIVERGED_SPEED
            if what == 0 and w != 0:
                what, body = w, n_free + t
    if what != 0:
        put(D.env, e, 0, ENV.diverged, what)
        put(D.env, e, 0, ENV.diverged_body, body)
        put(D.env, e, 0, ENV.diverged_step, get(D.env, e, 0, ENV.steps))


@ti.func
def stage_contacts(D: ti.template(), e, pairs_apart: ti.template(), shapes_apart: ti.template()):
    """``CONTACTS`` of env ``e``: every static pair in its own slots, then the broadphase's shape-shape
    pairs, each taking the next free slots of the shared pool. ``pairs_apart``, ``shapes_apart``: the static
    pairs, the shape pairs are launched apart (the GPU layout, :func:`gpu_launches`), and this does the rest:
    the occluded soil points and the broadphase at least."""
    n_static = get(D.settings_i, e, 0, SETTINGS_I.n_static_pairs)
    nb = get(D.settings_i, e, 0, SETTINGS_I.n_bodies)
    margin, dt = get(D.settings_f, e, 0, SETTINGS_F.margin), get(D.settings_f, e, 0, SETTINGS_F.dt)
    ground_height = get(D.settings_f, e, 0, SETTINGS_F.ground_height)
    if ti.static(not pairs_apart):
        for p in range(n_static):
            collide_pair(D, e, p, ground_height, margin, dt, False)
    if ti.static(D.trees and D.has_soil):
        if get(D.settings_i, e, 0, SETTINGS_I.n_soil_samples) > 0:
            hide_occluded_soil_points(D, e, n_static)
    if get(D.settings_i, e, 0, SETTINGS_I.broadphase) != 0:
        broadphase(D, e, nb, get(D.settings_i, e, 0, SETTINGS_I.max_shape_pairs),
                   get(D.settings_i, e, 0, SETTINGS_I.sweep_axis), margin, dt)
    else:  # no two bodies can ever touch (one tree without self-collision, or a single body)
        put(D.env, e, 0, ENV.shape_pairs, 0)
        put(D.env, e, 0, ENV.pairs_dropped, 0)
    if ti.static(not shapes_apart):
        place_shape_pairs(D, e, False)


@ti.func
def stage_shape_pair(D: ti.template(), e, k):
    """Of ``CONTACTS`` in the GPU layout: the contacts of entry ``k`` of env ``e``'s shape-pair table (if the
    broadphase filled it) into its ``SHAPE_PAIR_ROOM`` rows of the ``found_point`` blocks (after the static
    slots' rows), at most as many as the pair's capacity; :func:`place_shape_pairs` moves them to the pool."""
    if k < get(D.env, e, 0, ENV.shape_pairs):
        d = row(D.shape_pair, e, k)
        room = ti.min(shape_pair_capacity(D, d[SHAPE_PAIR.body], d[SHAPE_PAIR.other]), SHAPE_PAIR_ROOM)
        collide_shape_pair(D, e, get(D.settings_i, e, 0, SETTINGS_I.n_static_pairs) + k, d[SHAPE_PAIR.body],
                           d[SHAPE_PAIR.other], get(D.settings_i, e, 0, SETTINGS_I.pool0) + k * SHAPE_PAIR_ROOM,
                           room, get(D.settings_f, e, 0, SETTINGS_F.margin), get(D.settings_f, e, 0, SETTINGS_F.dt),
                           1)


@ti.func
def place_shape_pairs(D: ti.template(), e, found_apart: ti.template()):
    """Each shape-shape pair's contacts in the next free slots of the shared pool, in table order: found here
    (the fused step's way, ``found_apart`` False), or, in the GPU layout, moved there from where
    :func:`stage_shape_pair` found them, so that the pool ends as the fused step fills it. There a pair that
    found more than its room, or more than the pool has left, is found again in its place (the fused step's
    way, which drops the points past the pool's end)."""
    n_static = get(D.settings_i, e, 0, SETTINGS_I.n_static_pairs)
    margin, dt = get(D.settings_f, e, 0, SETTINGS_F.margin), get(D.settings_f, e, 0, SETTINGS_F.dt)
    cursor = get(D.settings_i, e, 0, SETTINGS_I.pool0)
    pool_end = get(D.settings_i, e, 0, SETTINGS_I.n_slots)
    for k in range(get(D.env, e, 0, ENV.shape_pairs)):
        d = row(D.shape_pair, e, k)
        cap = ti.min(shape_pair_capacity(D, d[SHAPE_PAIR.body], d[SHAPE_PAIR.other]), pool_end - cursor)
        p = n_static + k
        again = True
        if ti.static(found_apart):
            found = get(D.pair_count, e, p, PAIR_COUNT.count)
            again = get(D.pair_count, e, p, PAIR_COUNT.dropped) > 0 or found > cap
            if not again:
                src = get(D.settings_i, e, 0, SETTINGS_I.pool0) + k * SHAPE_PAIR_ROOM
                for i in range(found):
                    putn(D.contact, e, cursor + i, CONTACT.position, get3(D.found_f, e, src + i, FOUND_F.position))
                    putn(D.contact, e, cursor + i, CONTACT.normal, get3(D.found_f, e, src + i, FOUND_F.normal))
                    put(D.contact, e, cursor + i, CONTACT.depth, get(D.found_f, e, src + i, FOUND_F.depth))
                    put(D.feature, e, cursor + i, FEATURE.now, get(D.found_i, e, src + i, FOUND_I.feature))
        if again:
            collide_shape_pair(D, e, p, d[SHAPE_PAIR.body], d[SHAPE_PAIR.other], cursor, cap, margin, dt, 0)
        found = get(D.pair_count, e, p, PAIR_COUNT.count)
        put(D.shape_pair, e, k, SHAPE_PAIR.slot0, cursor)
        put(D.shape_pair, e, k, SHAPE_PAIR.count, found)
        cursor += found


#: the stages of a step, in order; each is a function below (``stage_*``) and, on cpu, a compile unit of its
#: own (``chain``). A variant leaves out what it cannot use (the tree stages without trees, the frames'
#: stage without trees and plates).
(FRAMES, CONTACTS, TREE_FORCES, ROWS, IMPACTS, FREE_VELOCITIES, RESPONSES, SAND_AND_PIN_BLOCKS, WARM_STARTS, SWEEPS,
 REACTIONS, HISTORY, INTEGRATION) = range(13)
#: each stage's name, by its number
STAGE_NAMES = ("frames", "contacts", "tree_forces", "rows", "impacts", "free_velocities", "responses",
               "sand_and_pin_blocks", "warm_starts", "sweeps", "reactions", "history", "integration")


def stages_of(trees: bool, plates: bool) -> tuple:
    """The stages a step kernel variant runs, in order."""
    out = [CONTACTS, ROWS, IMPACTS, FREE_VELOCITIES, RESPONSES, SAND_AND_PIN_BLOCKS, WARM_STARTS, SWEEPS, REACTIONS,
           HISTORY, INTEGRATION]
    if not trees:
        out.remove(RESPONSES)
    if trees:
        out.insert(1, TREE_FORCES)
    if trees or plates:
        out.insert(0, FRAMES)
    return tuple(out)


@ti.func
def step_env(D: ti.template(), e, trees: ti.template(), plates: ti.template(), split: ti.template(),
             features: ti.template()):
    """One step of env ``e``: the stages of :func:`stages_of`, in order (the module docstring says what
    each does). ``split`` (with ``trees``): the stages run in functions of their own (:func:`chain`), rather
    than all inlined into the kernel; ``features``: the optional parts compiled in."""
    if ti.static(split and trees):
        first = ti.static(chain(trees, plates, features))
        first(D.model_i, D.model_f, D.heights, D.q, D.u, D.state_f, D.state_i, D.control, D.scratch_f, D.scratch_i,
              D.soil_rev, e, 0, 0)
    else:
        rows = Rows(contacts=0, joints=0)
        for which in ti.static(stages_of(trees, plates)):
            rows = run_stage(D, e, which, rows, plates)


@ti.func
def run_stage(D: ti.template(), e, which: ti.template(), rows, plates: ti.template()):
    """Stage ``which`` of env ``e`` with the step's ``rows`` (:class:`Rows`; stage ``ROWS`` counts them, the
    stages before it get zeros). Returns the rows for the next stage."""
    if ti.static(which == FRAMES):
        stage_frames(D, e, plates)
    elif ti.static(which == CONTACTS):
        stage_contacts(D, e, False, False)
    elif ti.static(which == TREE_FORCES):
        stage_tree_forces(D, e)
    elif ti.static(which == ROWS):
        rows = stage_rows(D, e)
    elif ti.static(which == IMPACTS):
        stage_impacts(D, e, rows)
    elif ti.static(which == FREE_VELOCITIES):
        stage_free_velocities(D, e)
    elif ti.static(which == RESPONSES):
        stage_responses(D, e, rows)
    elif ti.static(which == SAND_AND_PIN_BLOCKS):
        stage_sand_and_pin_blocks(D, e, rows)
    elif ti.static(which == WARM_STARTS):
        stage_warm_starts(D, e, rows)
    elif ti.static(which == SWEEPS):
        stage_sweeps(D, e, rows)
    elif ti.static(which == REACTIONS):
        stage_reactions(D, e, rows)
    elif ti.static(which == HISTORY):
        stage_history(D, e, rows, False)
    else:
        stage_integration(D, e, rows, False)
    return rows


#: the stages each function of a chain runs (``chain``), in order: the contacts; the trees' forces and the rows;
#: the free velocities, responses and warm starts; the sweeps; what comes after them. Fewer functions cost less
#: to call (each call passes the arrays), larger ones take longer to compile.
UNITS = ((FRAMES, CONTACTS), (TREE_FORCES, ROWS, IMPACTS), (FREE_VELOCITIES, RESPONSES, SAND_AND_PIN_BLOCKS, WARM_STARTS),
         (SWEEPS,), (REACTIONS, HISTORY, INTEGRATION))


def units_of(trees: bool, plates: bool) -> tuple:
    """The stages of a variant (:func:`stages_of`) in the functions of its chain: ``UNITS`` without the stages
    the variant leaves out; every stage in one unit, in order."""
    stages = stages_of(trees, plates)
    units = tuple(tuple(w for w in unit if w in stages) for unit in UNITS)
    assert tuple(w for unit in units for w in unit) == stages
    return tuple(unit for unit in units if unit)


def _link(unit: tuple, trees: bool, plates: bool, features: tuple, then):
    """The stages ``unit`` of a variant as a function of its own (``ti.real_func``: compiled once, called, not
    inlined) that calls ``then``, the next unit's, last (None: the last unit)."""
    last = then is None

    @ti.real_func
    def stages(model_i: nd, model_f: nd, heights: nd, q: nd, u: nd, state_f: nd, state_i: nd, control: nd,
               scratch_f: nd, scratch_i: nd, soil_rev: nd, e: ti.i32, n_rows: ti.i32, n_limits: ti.i32) -> ti.i32:
        return _stages_then(StepData(model_i, trees, features, model_i=model_i, model_f=model_f, heights=heights,
                                     q=q, u=u, state_f=state_f, state_i=state_i, control=control,
                                     scratch_f=scratch_f, scratch_i=scratch_i, soil_rev=soil_rev),
                            e, unit, n_rows, n_limits, plates, then, last)

    return stages


@ti.func
def _stages_then(D: ti.template(), e, unit: ti.template(), n_rows, n_limits, plates: ti.template(),
                 then: ti.template(), last: ti.template()):
    rows = Rows(contacts=n_rows, joints=n_limits)  # (a compiled function takes scalars: the two counts)
    for which in ti.static(unit):
        rows = run_stage(D, e, which, rows, plates)
    if ti.static(not last):
        then(D.model_i, D.model_f, D.heights, D.q, D.u, D.state_f, D.state_i, D.control, D.scratch_f,
             D.scratch_i, D.soil_rev, e, rows.contacts, rows.joints)
    return 0


def chain(trees: bool, plates: bool, features: tuple):
    """The first function of a variant's step (made once per variant): each runs a unit of stages
    (:func:`units_of`) and calls the next.

    Why functions: LLVM's optimisation passes take time that grows faster than the size of the function
    they run on. With every stage inlined into the kernel, the articulated step kernel took 238 s to
    compile cold on a 2-core cpu; in the five functions of ``UNITS``, 79 s (``docs/performance.md``).

    Why a chain, not a list the kernel calls: Taichi 1.7 keys a compiled kernel's offline-cache entry by its
    IR and the functions it calls; where one calls several, they enter the key in the order of their
    addresses in memory, so a kernel calling the stages one after another got a new key in every process
    and never loaded from the cache. A kernel that calls one function, which calls one, keeps its key."""
    key = (trees, plates, features)
    if key not in _CHAINS:
        then = None
        for unit in reversed(units_of(trees, plates)):
            then = _link(unit, trees, plates, features, then)
        _CHAINS[key] = then
    return _CHAINS[key]


#: (trees, plates, features) -> the first function of that variant's chain (:func:`chain`; the variants with
#: trees use them on cpu: the free-body step is small enough to compile in one, and a sphere's step of about a
#: microsecond ran 5 to 10 % slower as two functions)
_CHAINS = {}


@ti.func
def stage_frames(D: ti.template(), e, plates: ti.template()):
    """``FRAMES``: the trees' link frames and velocities; then, on cpu, the RFT plates' forces and each
    carrier's load from those frames, carrier by carrier (``rft/plates.py``)."""
    sf, si = row(D.settings_f, e, 0), row(D.settings_i, e, 0)
    if ti.static(D.trees):
        for t in range(si[SETTINGS_I.n_trees]):
            tree_kinematics(D, e, t)
    if ti.static(plates and D.has_rft):
        trial = sf[SETTINGS_F.dt] * gravity_of(D, e)
        for c in range(si[SETTINGS_I.n_plate_carriers]):
            carrier_plates(D, e, c, si[SETTINGS_I.n_media], trial)


@ti.func
def stage_tree_forces(D: ti.template(), e):
    """``TREE_FORCES``: which trees a row will act on (:func:`mark_factored_trees`); bias forces of every tree; the mass matrix and its factor where a row acts on the tree."""
    sf, si = row(D.settings_f, e, 0), row(D.settings_i, e, 0)
    dt = sf[SETTINGS_F.dt]
    n_trees = si[SETTINGS_I.n_trees]
    mark_factored_trees(D, e, n_trees, si[SETTINGS_I.n_static_pairs], dt, sf[SETTINGS_F.margin])
    for t in range(n_trees):
        j0 = get(D.tree, e, t, TREE.joint0)
        factored = get(D.tree_step, e, t, TREE_STEP.factored) != 0
        tree_dynamics(D, e, t, get3(D.frame, e, j0, FRAME.position), gravity_of(D, e), factored, True)
        hold_drives(D, e, t)
        if factored:
            tree_factor(D, e, t, dt)


@ti.func
def stage_rows(D: ti.template(), e):
    """``ROWS``: the free bodies' world inverse inertias and inverse masses at the start of the step;
    the contact and soil rows, then the trees' joint rows (limits, friction) and the pins. Returns where they
    lie (:class:`Rows`)."""
    sf, si = row(D.settings_f, e, 0), row(D.settings_i, e, 0)
    dt = sf[SETTINGS_F.dt]
    for b in range(si[SETTINGS_I.n_free_bodies]):  # (the bodies on tree links move with their trees)
        scale = body_mass_scale(D, e, b)
        put33(D.link, e, b, LINK.inv_inertia,
              link_inv_inertia(D.q, e, get(D.body_i, e, b, BODY_I.q0),
                               scale * get33(D.inertia, e, b, INERTIA.inertia)))
        put(D.link, e, b, LINK.inv_mass, 1.0 / (scale * get(D.body_f, e, b, BODY_F.mass)))
    n_rows = build_rows(D, e, si[SETTINGS_I.n_static_pairs], dt, sf[SETTINGS_F.slop], sf[SETTINGS_F.erp],
                        sf[SETTINGS_F.max_push])
    n_limits = 0
    if ti.static(D.trees):
        n_limits = build_joint_rows(D, e, n_rows, si[SETTINGS_I.n_trees], dt, sf[SETTINGS_F.margin],
                                    sf[SETTINGS_F.slop], sf[SETTINGS_F.erp], sf[SETTINGS_F.max_push])
    rows = Rows(contacts=n_rows, joints=n_limits)
    if ti.static(D.has_pins):
        build_pin_rows(D, e, rows.pin0(), si[SETTINGS_I.n_pins])
    return rows


@ti.func
def stage_impacts(D: ti.template(), e, rows):
    """``IMPACTS``: impacts, in waves, with the velocities before this step's forces."""
    sf = row(D.settings_f, e, 0)
    resolve_impacts(D, e, rows.contacts, sf[SETTINGS_F.dt], sf[SETTINGS_F.restitution_threshold],
                    sf[SETTINGS_F.tolerance], get(D.settings_i, e, 0, SETTINGS_I.max_sweeps))


@ti.func
def stage_free_velocities(D: ti.template(), e):
    """``FREE_VELOCITIES``: ``u* = u + dt M^-1 (tau - h)`` of the free bodies (with the RFT plates'
    load among the applied forces) and of the trees (with their drives); the belts' drives."""
    sf, si = row(D.settings_f, e, 0), row(D.settings_i, e, 0)
    dt = sf[SETTINGS_F.dt]
    for b in range(si[SETTINGS_I.n_free_bodies]):
        load = row(D.load, e, b)
        force = vec3(load[BODY_LOAD.force], load[BODY_LOAD.force + 1], load[BODY_LOAD.force + 2])
        torque = vec3(load[BODY_LOAD.torque], load[BODY_LOAD.torque + 1], load[BODY_LOAD.torque + 2])
        if ti.static(D.has_rft):
            if si[SETTINGS_I.n_plate_carriers] > 0:  # the RFT plates' load (kernels/rft/plates.py)
                force += get3(D.plate_load, e, b, PLATE_LOAD.force)
                torque += get3(D.plate_load, e, b, PLATE_LOAD.torque)
        free_velocity(D, e, b, force, torque, gravity_of(D, e), dt)
    if ti.static(D.trees):
        for t in range(si[SETTINGS_I.n_trees]):
            tree_free_velocity(D, e, t, dt)
    if ti.static(D.has_belts):
        if si[SETTINGS_I.n_tracks] > 0:
            refresh_belts(D, e)


@ti.func
def stage_responses(D: ti.template(), e, rows):
    """``RESPONSES`` (trees): the responses of the links and dofs the rows act on (a drive held at its effort limit
    rebuilt its tree's factor in ``FREE_VELOCITIES``); the pins' columns, with the factors the sweeps will use."""
    for r in range(rows.contacts):
        prepare_sides(D, e, get(D.row_i, e, r, ROW_I.side_a), get(D.row_i, e, r, ROW_I.side_b))
    joint_row_responses(D, e, rows.contacts, rows.joints)
    n_pins = _n_pins(D, e)
    if ti.static(D.has_pins):
        if n_pins > 0:
            pin_columns(D, e, rows.pin0(), n_pins)


@ti.func
def stage_sand_and_pin_blocks(D: ti.template(), e, rows):
    """``SAND_AND_PIN_BLOCKS``: the sand rows of media whose resistance is a row (``solver/sand.py``); each tree's
    pins together, its rows pushing it with its pins held (last: it changes the responses the rows above
    were made from)."""
    si = row(D.settings_i, e, 0)
    if ti.static(D.has_rft):
        if si[SETTINGS_I.n_plate_carriers] > 0:
            build_sand_rows(D, e, get(D.settings_f, e, 0, SETTINGS_F.dt))
    if ti.static(D.has_pins):
        n_pins = si[SETTINGS_I.n_pins]
        if n_pins > 0 and si[SETTINGS_I.pin_block] != 0:
            setup_pin_blocks(D, e, rows.contacts, rows.joints, n_pins, si[SETTINGS_I.n_trees])


@ti.func
def stage_warm_starts(D: ti.template(), e, rows):
    """``WARM_STARTS``: warm starts of the contact and soil rows, the joint rows and the pins."""
    si = row(D.settings_i, e, 0)
    warm_start(D, e, rows.contacts, si[SETTINGS_I.n_static_pairs], si[SETTINGS_I.warm_start],
               si[SETTINGS_I.terrain_warm_start])
    if ti.static(D.trees):
        warm_start_joint_rows(D, e, rows.contacts, rows.joints, si[SETTINGS_I.warm_start])
    if ti.static(D.has_pins):
        warm_start_pins(D, e, rows.pin0(), si[SETTINGS_I.n_pins], si[SETTINGS_I.warm_start],
                        si[SETTINGS_I.pin_block])
        if si[SETTINGS_I.n_pins] > 0 and si[SETTINGS_I.pin_block] != 0:
            warm_start_pin_blocks(D, e, rows.pin0(), si[SETTINGS_I.n_pins], si[SETTINGS_I.n_trees],
                                  si[SETTINGS_I.warm_start])


@ti.func
def _n_pins(D: ti.template(), e):
    n = 0
    if ti.static(D.has_pins):
        n = get(D.settings_i, e, 0, SETTINGS_I.n_pins)
    return n


@ti.func
def stage_sweeps(D: ti.template(), e, rows):
    """``SWEEPS``: projected Gauss-Seidel sweeps until the velocities settle to the tolerance."""
    sweep_rows(D, e, rows.contacts, rows.joints, _n_pins(D, e))


@ti.func
def stage_reactions(D: ti.template(), e, rows):
    """``REACTIONS``, after the sweeps: the pins' share of what the rows pushed through held columns; the
    sand rows' loads; the resting manifolds' least tangential impulses."""
    si = row(D.settings_i, e, 0)
    n_pins = _n_pins(D, e)
    if ti.static(D.has_pins):
        if n_pins > 0:
            pin_reactions(D, e, rows.pin0(), n_pins, si[SETTINGS_I.n_trees], si[SETTINGS_I.pin_block])
    if ti.static(D.has_rft):
        if si[SETTINGS_I.n_plate_carriers] > 0:
            finish_sand_rows(D, e, get(D.settings_f, e, 0, SETTINGS_F.dt))
    relax_internal_friction(D, e, rows.contacts)


@ti.func
def stage_history(D: ti.template(), e, rows, rows_apart: ti.template()):
    """``HISTORY``: soil history (loaded samples take the end-of-step sinkage, yield raises the permanent
    sinkage, slip accumulates; every other sample recovers its elastic part and forgets its slip); what
    the drives applied and the wrenches the joints transmitted (if asked for). ``rows_apart``: the soil
    sample rows' parts are launched apart, over (env, sample row) (the GPU layout, :func:`gpu_launches`), and
    this writes the loaded samples only."""
    sf, si = row(D.settings_f, e, 0), row(D.settings_i, e, 0)
    dt = sf[SETTINGS_F.dt]
    if ti.static(D.has_soil):
        if si[SETTINGS_I.n_soil_samples] > 0:
            if ti.static(rows_apart):
                commit_loaded_soil(D, e, rows.contacts, dt)
            else:
                commit_soil(D, e, si[SETTINGS_I.n_maps], rows.contacts, dt)
    if ti.static(D.trees):
        n_trees = si[SETTINGS_I.n_trees]
        for t in range(n_trees):
            record_drive_forces(D, e, t, dt)
        transmitted_wrenches(D, e, n_trees, rows.contacts, rows.joints + _n_pins(D, e), dt, gravity_of(D, e))


@ti.func
def stage_integration(D: ti.template(), e, rows, bodies_apart: ti.template()):
    """``INTEGRATION``: the positions integrated with the constrained velocities (tree joints: velocities
    clamped to their limits first), the pins' gaps closed; each row's world impulse and feature, the
    warm-start cache. ``bodies_apart``: the free bodies' positions are launched apart, over (env, body) (the
    GPU layout, :func:`gpu_launches`), and this does the rest."""
    si = row(D.settings_i, e, 0)
    dt = get(D.settings_f, e, 0, SETTINGS_F.dt)
    if ti.static(not bodies_apart):
        for b in range(si[SETTINGS_I.n_free_bodies]):
            integrate_link(D.q, D.u, e, get(D.body_i, e, b, BODY_I.q0), get(D.body_i, e, b, BODY_I.u0), dt)
    n_pins = _n_pins(D, e)
    if ti.static(D.trees):
        n_trees = si[SETTINGS_I.n_trees]
        for t in range(n_trees):
            tree_integrate(D, e, t, dt)
    if ti.static(D.has_pins):
        if n_pins > 0:  # close the gap the position update left at the pins
            project_pins(D, e, rows.pin0(), n_pins, si[SETTINGS_I.n_trees])
    store_results(D, e, rows.contacts, si[SETTINGS_I.n_static_pairs])
    if ti.static(D.trees):
        store_joint_rows(D, e, rows.contacts, rows.joints, si[SETTINGS_I.n_trees])
    if ti.static(D.has_pins):
        store_pins(D, e, rows.pin0(), n_pins)


@ti.func
def mark_factored_trees(D: ti.template(), e, n_trees, n_static, dt, margin):
    """Of ``TREE_FORCES``: ``TREE_STEP.factored`` of every tree, 1 where a row will act on it this step (a contact or
    soil point found on one of its links, a joint limit or friction row, a pin), so its rows need the
    factored mass matrix; a tree without any takes the articulated-body algorithm for its velocity update.

    ``TREE_STEP.inverse``: 1 where the rows will need more columns of ``M~^-1`` than a third of the tree's
    dofs (six per pair or pin side on one of its links, one per joint row; for a chain a column solve costs
    nv^2 multiply-adds, all of ``M~^-1`` about nv^3 / 3, a branched tree less of both), so the factor comes
    with the whole inverse and the rows' responses are products with it (``dynamics/tree_solve.py``)."""
    for t in range(n_trees):
        tr = row(D.tree, e, t)
        columns = 0
        for k in range(tr[TREE.n_joints]):
            limited, friction, _sign, _gap = joint_rows_of(D, e, tr[TREE.joint0] + k, dt, margin)
            columns += ti.cast(limited, ti.i32) + ti.cast(friction, ti.i32)
        put(D.tree_step, e, t, TREE_STEP.needed, columns)
    for p in range(n_static + get(D.env, e, 0, ENV.shape_pairs)):
        if get(D.pair_count, e, p, PAIR_COUNT.count) > 0:
            _kind, a, b, _base = pair_entry(D, e, p, n_static)
            for side in ti.static(range(2)):
                link = b if side == 0 else a
                if link >= 0:
                    j = carrier_joint(D, e, link)
                    if j >= 0:
                        add(D.tree_step, e, get(D.joint_i, e, j, JOINT_I.tree), TREE_STEP.needed, 6)
    for p in range(get(D.settings_i, e, 0, SETTINGS_I.n_pins)):
        for side in ti.static(range(2)):
            j = get(D.pin_i, e, p, PIN_I.joint_b if side == 0 else PIN_I.joint_a)
            if j >= 0:
                add(D.tree_step, e, get(D.joint_i, e, j, JOINT_I.tree), TREE_STEP.needed, 6)
    n_free = get(D.settings_i, e, 0, SETTINGS_I.n_free_bodies)
    for c in range(n_free, get(D.settings_i, e, 0, SETTINGS_I.n_plate_carriers)):  # links with a sand row
        if get3(D.plate_load, e, c, PLATE_LOAD.row_force).norm() + get3(D.plate_load, e, c,
                                                                         PLATE_LOAD.row_torque).norm() > 0.0:
            add(D.tree_step, e, get(D.joint_i, e, c - n_free, JOINT_I.tree), TREE_STEP.needed, 6)
    for t in range(n_trees):
        columns = get(D.tree_step, e, t, TREE_STEP.needed)
        put(D.tree_step, e, t, TREE_STEP.factored, ti.cast(columns > 0, ti.i32))
        put(D.tree_step, e, t, TREE_STEP.inverse, ti.cast(3 * columns > get(D.tree, e, t, TREE.nv), ti.i32))


@ti.func
def store_results(D: ti.template(), e, n_rows, n_static):
    """Of ``INTEGRATION``, last: each solved row's world impulse and feature (what ``get_contacts`` reports and the next warm
    start looks up); static slots beyond their pair's count forget theirs (-1); this step's pair table
    becomes the last step's."""
    for p in range(n_static):
        # every slot below the last step's count holds a feature (>= 0) and every slot above it -1, so the
        # slots to forget run from this step's count to the first -1 (not to the pair's capacity)
        base, cap = get(D.pair, e, p, PAIR.slot0), get(D.pair, e, p, PAIR.capacity)
        k = get(D.pair_count, e, p, PAIR_COUNT.count)
        going = k < cap
        while going:
            if get(D.feature, e, base + k, FEATURE.last) == -1:
                going = False
            else:
                put(D.feature, e, base + k, FEATURE.last, -1)
                k += 1
                going = k < cap
    for r in range(n_rows):
        s = get(D.row_i, e, r, ROW_I.slot)
        putn(D.contact, e, s, CONTACT.impulse,
             get33(D.row_f, e, r, ROW_F.frame) @ get3(D.row_f, e, r, ROW_F.impulse))
        put(D.contact, e, s, CONTACT.merged, ti.cast(get(D.row_i, e, r, ROW_I.kind) == ROW_MERGED, float))
        put(D.feature, e, s, FEATURE.last, get(D.feature, e, s, FEATURE.now))
    for k in range(get(D.env, e, 0, ENV.shape_pairs)):
        put_row(D.prev_shape_pair, e, k, row(D.shape_pair, e, k))
    put(D.env, e, 0, ENV.prev_shape_pairs, get(D.env, e, 0, ENV.shape_pairs))
