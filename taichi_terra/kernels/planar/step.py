"""The planar step kernels.

Each step of an env is its kinematic step (``motion.py``: driven objects follow their commands, passive
bodies coast) followed by its contact step (``contact.py``): candidates, then passes over the pairs (the first
keeps the near ones and orders them, the others are Gauss-Seidel sweeps), then the velocities, forces and
bounces. Envs share nothing, so one thread runs all the steps of one env.

On cpu one launch advances every env by ``n`` steps (a world of one env runs on the calling thread, where a
launch costs far less than a parallel loop's). On vulkan each stage is a launch of its own, one step at a time,
and a pass over the pairs takes as many launches as it has chunks of :data:`VULKAN_TASKS_PER_LAUNCH` tasks:
lavapipe, the software Vulkan driver, ends every loop of a thread once the thread has run 65,535 loop iterations
in one launch, all loops counted together (``kernels/common/lanes.LAVAPIPE_LOOP_LIMIT``,
``docs/guides/pitfalls.md``). The stages are the same functions in both layouts.
"""
import taichi as ti

from .arrays import PlanarData
from .contact import apply_contacts, contact_env, contact_pass, find_candidates
from .motion import advance_object

nd = ti.types.ndarray()

#: the planar stages a vulkan step launches in order (``contact`` until every env's passes are done)
STAGES = ("begin", "contact", "end")

#: the most tasks (pairs tested, and separated in a sweep) of a pass one launch runs on vulkan. The overlap test
#: of two squares spends about 100 loop iterations, so 64 tasks stay far below lavapipe's 65,535 with room for
#: the separations and the end of a pass (sorting the pairs: a few passes over them)
VULKAN_TASKS_PER_LAUNCH = 64


def _planar_kernel(serial: bool, lanes: int = 0, stage: str = ""):
    @ti.kernel
    def planar_step(n_steps: ti.i32, model_i: nd, model_f: nd, pose: nd, pose0: nd, vel: nd, cmd: nd, wv: nd,
                    pair_i: nd, pair_f: nd, order_tmp: nd, blk: nd, blk_next: nd, obj_s: nd, env_i: nd):
        """Advance every env by ``n_steps`` steps (``stage`` empty), or run one stage of a step (``n_steps``
        unused)."""
        if ti.static(lanes > 0):  # (vulkan: env i on thread i of ``lanes``, common/lanes.py)
            for lane in range(lanes):
                if lane < pose.shape[0]:
                    run_env(PlanarData(model_i, model_i, model_f, pose=pose, pose0=pose0, vel=vel, cmd=cmd, wv=wv,
                                       pair_i=pair_i, pair_f=pair_f, order_tmp=order_tmp, blk=blk,
                                       blk_next=blk_next, obj_s=obj_s, env_i=env_i),
                            lane, n_steps, stage)
        else:
            ti.loop_config(serialize=serial)
            for e in range(pose.shape[0]):
                run_env(PlanarData(model_i, model_i, model_f, pose=pose, pose0=pose0, vel=vel, cmd=cmd, wv=wv,
                                   pair_i=pair_i, pair_f=pair_f, order_tmp=order_tmp, blk=blk, blk_next=blk_next,
                                   obj_s=obj_s, env_i=env_i),
                        e, n_steps, stage)

    return planar_step


@ti.func
def run_env(D: ti.template(), e, n_steps, stage: ti.template()):
    """``n_steps`` steps of env ``e`` (each moves every object, then resolves the env's contacts), or one
    ``stage`` of a step: ``"begin"`` (move every object, find the candidate pairs), ``"contact"`` (up to
    ``n_steps`` tasks of the current pass over the pairs) or ``"end"`` (velocities, forces, bounces)."""
    if ti.static(stage == ""):
        for _ in range(n_steps):
            for k in range(D.pose.shape[1]):
                advance_object(D, e, k)
            contact_env(D, e)
    elif ti.static(stage == "begin"):
        for k in range(D.pose.shape[1]):
            advance_object(D, e, k)
        find_candidates(D, e)
    elif ti.static(stage == "contact"):
        contact_pass(D, e, n_steps)  # (here: the most tasks of a pass to run)
    else:
        apply_contacts(D, e)


_VARIANTS = {}


def planar_step_kernel(serial: bool, lanes: int = 0, stage: str = ""):
    """The planar step kernel, its env loop on the calling thread (``serial``), over threads Taichi sizes, or
    (vulkan) env ``i`` on thread ``i`` of ``lanes`` (:func:`~..common.lanes.gpu_lanes`); with ``stage`` (one of
    :data:`STAGES`), the kernel of that stage of a step only."""
    if stage not in ("",) + STAGES:
        raise ValueError(f"stage must be one of {STAGES} or empty, got {stage!r}")
    key = (bool(serial), int(lanes), stage)
    if key not in _VARIANTS:
        _VARIANTS[key] = _planar_kernel(*key)
    return _VARIANTS[key]
