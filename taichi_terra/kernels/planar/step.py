"""The planar step kernel: one launch advances every env by ``n`` steps.

Each step of an env is its kinematic step (``motion.py``: driven objects follow their commands, passive
bodies coast) followed by its contact step (``contact.py``). Envs share nothing, so one thread runs all the
steps of one env; a world of one env on cpu runs them on the calling thread, where a launch costs far less
than a parallel loop's.
"""
import taichi as ti

from .contact import contact_env
from .arrays import PlanarData
from .motion import advance_object

nd = ti.types.ndarray()


def _planar_kernel(serial: bool, lanes: int = 0):
    @ti.kernel
    def planar_step(n_steps: ti.i32, model_i: nd, model_f: nd, pose: nd, pose0: nd, vel: nd, cmd: nd, wv: nd,
                    pair_i: nd, pair_f: nd, order_tmp: nd, blk: nd, blk_next: nd, obj_s: nd, env_i: nd):
        """Advance every env by ``n_steps`` steps."""
        if ti.static(lanes > 0):  # (vulkan: env i on thread i of ``lanes``, common/lanes.py)
            for lane in range(lanes):
                if lane < pose.shape[0]:
                    run_env(PlanarData(model_i, model_i, model_f, pose=pose, pose0=pose0, vel=vel, cmd=cmd, wv=wv,
                                       pair_i=pair_i, pair_f=pair_f, order_tmp=order_tmp, blk=blk,
                                       blk_next=blk_next, obj_s=obj_s, env_i=env_i),
                            lane, n_steps)
        else:
            ti.loop_config(serialize=serial)
            for e in range(pose.shape[0]):
                run_env(PlanarData(model_i, model_i, model_f, pose=pose, pose0=pose0, vel=vel, cmd=cmd, wv=wv,
                                   pair_i=pair_i, pair_f=pair_f, order_tmp=order_tmp, blk=blk, blk_next=blk_next,
                                   obj_s=obj_s, env_i=env_i),
                        e, n_steps)

    return planar_step


@ti.func
def run_env(D: ti.template(), e, n_steps):
    """``n_steps`` steps of env ``e``: each moves every object, then resolves the env's contacts."""
    for _ in range(n_steps):
        for k in range(D.pose.shape[1]):
            advance_object(D, e, k)
        contact_env(D, e)


_VARIANTS = {}


def planar_step_kernel(serial: bool, lanes: int = 0):
    """The planar step kernel, its env loop on the calling thread (``serial``), over threads Taichi sizes, or
    (vulkan) env ``i`` on thread ``i`` of ``lanes`` (:func:`~..common.lanes.gpu_lanes`)."""
    key = (bool(serial), int(lanes))
    if key not in _VARIANTS:
        _VARIANTS[key] = _planar_kernel(*key)
    return _VARIANTS[key]
