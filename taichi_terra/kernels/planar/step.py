"""The planar step kernel: one launch advances every env by ``n`` steps.

Each step of an env is its kinematic step (``motion.py``: driven objects follow their commands, passive
bodies coast) followed by its contact step (``contact.py``). Envs share nothing, so one thread runs all the
steps of one env; a world of one env on cpu runs them on the calling thread, where a launch costs far less
than a parallel loop's.
"""
import taichi as ti

from .contact import contact_env
from .layout import PlanarModel
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
                    run_env(lane, n_steps, PlanarModel(model_i, model_i, model_f), pose, pose0, vel, cmd, wv, pair_i,
                            pair_f, order_tmp, blk, blk_next, obj_s, env_i)
        else:
            ti.loop_config(serialize=serial)
            for e in range(pose.shape[0]):
                run_env(e, n_steps, PlanarModel(model_i, model_i, model_f), pose, pose0, vel, cmd, wv, pair_i,
                        pair_f, order_tmp, blk, blk_next, obj_s, env_i)

    return planar_step


@ti.func
def run_env(e, n_steps, M: ti.template(), pose: ti.template(), pose0: ti.template(), vel: ti.template(),
            cmd: ti.template(), wv: ti.template(), pair_i: ti.template(), pair_f: ti.template(),
            order_tmp: ti.template(), blk: ti.template(), blk_next: ti.template(), obj_s: ti.template(),
            env_i: ti.template()):
    """``n_steps`` steps of env ``e``: each moves every object, then resolves the env's contacts."""
    for _ in range(n_steps):
        for k in range(pose.shape[1]):
            advance_object(e, k, M, pose, pose0, vel, cmd, wv)
        contact_env(e, M, pose, pose0, vel, cmd, wv, pair_i, pair_f, order_tmp, blk, blk_next, obj_s, env_i)


_VARIANTS = {}


def planar_step_kernel(serial: bool, lanes: int = 0):
    """The planar step kernel, its env loop on the calling thread (``serial``), over threads Taichi sizes, or
    (vulkan) env ``i`` on thread ``i`` of ``lanes`` (:func:`~..common.lanes.gpu_lanes`)."""
    key = (bool(serial), int(lanes))
    if key not in _VARIANTS:
        _VARIANTS[key] = _planar_kernel(*key)
    return _VARIANTS[key]
