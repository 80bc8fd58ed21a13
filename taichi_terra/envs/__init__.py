"""Reinforcement-learning tasks on batched worlds: a task (:class:`~taichi_terra.envs.task.Task`) holds one World of
``num_envs`` envs, and adapters expose it as a Gymnasium vector env or an rsl_rl ``VecEnv``.

    import taichi_terra.envs as envs
    vec = envs.make_vector_env("TrackedToGoal", num_envs=64, seed=0)      # gymnasium.vector.VectorEnv (numpy)
    rsl = envs.make_rsl_env("TrackedToGoal", num_envs=64, seed=0)         # rsl_rl VecEnv (torch)

The adapters need the ``[rl]`` extra (gymnasium, rsl-rl-lib, torch); a task alone needs none of them.
"""
from __future__ import annotations

import importlib

#: task name -> (module under taichi_terra.envs, class)
TASKS = {"TrackedToGoal": ("tracked_to_goal", "TrackedToGoal"),
         "HexapodSandWalk": ("hexapod_sand_walk", "HexapodSandWalk"),
         "BuggySlipControl": ("buggy_slip_control", "BuggySlipControl")}


def task_class(name: str):
    """The class of the task ``name`` (one of :data:`TASKS`)."""
    if name not in TASKS:
        raise ValueError(f"name must be one of {sorted(TASKS)}, got {name!r}")
    module, cls = TASKS[name]
    return getattr(importlib.import_module(f".{module}", __name__), cls)


def make_task(name: str, num_envs: int, seed: int = 0, **options):
    """The task ``name`` (one of :data:`TASKS`) over ``num_envs`` envs, its draws seeded by ``seed``;
    ``options`` go to the task's class."""
    return task_class(name)(num_envs, seed, **options)


def make_vector_env(name: str, num_envs: int, seed: int = 0, **options):
    """A :class:`gymnasium.vector.VectorEnv` of the task ``name`` (:class:`~taichi_terra.envs.vector.TerrainVectorEnv`)."""
    from .vector import TerrainVectorEnv

    return TerrainVectorEnv(make_task(name, num_envs, seed, **options), seed)


def make_rsl_env(name: str, num_envs: int, seed: int = 0, device: str = "cpu", **options):
    """An rsl_rl ``VecEnv`` of the task ``name`` (:class:`~taichi_terra.envs.rsl.RslVecEnv`), its tensors on
    ``device``."""
    from .rsl import RslVecEnv

    return RslVecEnv(make_task(name, num_envs, seed, **options), device=device)
