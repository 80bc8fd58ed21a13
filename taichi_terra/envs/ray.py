"""Rollouts past one process: Ray actors, each holding a task's World of ``envs_per_actor`` envs in its own
process (its own Taichi), stepped in lockstep for one learner (:class:`RayVecEnv`, an rsl_rl ``VecEnv``).

    import ray
    ray.init()                                   # a laptop: local Ray; a cluster: ray.init(address="auto")
    env = RayVecEnv("TrackedToGoal", num_actors=2, envs_per_actor=512, seed=0)
    runner = OnPolicyRunner(env, ppo_config(), log_dir="runs/ray", device="cpu")

Each step sends every actor its slice of the actions and gathers their observations, rewards and ends; each
actor resets its own envs that ended (``SAME_STEP``, as :class:`~taichi_terra.envs.rsl.RslVecEnv`). Actor ``k``
seeds its task with ``seed + k``. On a machine with several GPUs pin each actor to one with
``actor_options={"num_gpus": 1}`` and ``arch="cuda"``: Ray gives each actor its own ``CUDA_VISIBLE_DEVICES``.
Needs the ``[ray]`` extra.
"""
from __future__ import annotations

import numpy as np
import ray
import torch

from .rsl import RslVecEnv


class TaskActor:
    """One process's task (run as a Ray actor by :class:`RayVecEnv`): ``num_envs`` envs of ``task_name`` on
    Taichi backend ``arch``."""

    def __init__(self, task_name: str, num_envs: int, seed: int, arch: str, options: dict):
        import taichi_terra as tt
        from taichi_terra.envs import make_task

        tt.init(arch=arch)
        self.task = make_task(task_name, num_envs, seed, **options)

    def describe(self) -> dict:
        t = self.task
        return {"name": t.name, "obs_dim": t.obs_dim, "act_dim": t.act_dim, "max_episode_steps": t.max_episode_steps,
                "control_dt": t.control_dt, "substeps": t.substeps}

    def reset(self) -> np.ndarray:
        return self.task.reset()

    def step(self, actions: np.ndarray) -> tuple:
        """A step with the ended envs reset: ``(obs, reward, terminated, truncated, returns, facts)``, the returns
        and facts those before the reset."""
        obs, reward, terminated, truncated, facts = self.task.step(actions)
        returns = self.task.episode_return.copy()
        ended = terminated | truncated
        if ended.any():
            obs = self.task.reset(ended)
        return obs, reward, terminated, truncated, returns, facts

    def episode_steps(self) -> np.ndarray:
        return self.task.episode_steps.copy()

    def set_episode_steps(self, steps: np.ndarray) -> None:
        self.task.episode_steps[:] = steps


class RayVecEnv(RslVecEnv):
    """The envs of ``num_actors`` Ray actors as one rsl_rl ``VecEnv`` (see the module docstring); the
    observations are grouped as :class:`~taichi_terra.envs.rsl.RslVecEnv` groups them.

    Args:
        task_name: a task of :data:`taichi_terra.envs.TASKS`.
        num_actors: actors (processes), >= 1.
        envs_per_actor: envs in each actor's world, >= 1.
        seed: actor ``k``'s task takes ``seed + k``.
        device: the torch device of the tensors handed to the learner.
        arch: each actor's Taichi backend.
        actor_options: Ray's ``.options(...)`` for each actor (``num_gpus``, ``num_cpus``, ...).
        options: the task's options.
    """

    def __init__(self, task_name: str, num_actors: int, envs_per_actor: int, seed: int = 0, device: str = "cpu",
                 arch: str = "cpu", actor_options: dict | None = None, **options):  # (no task here: the actors')
        if not ray.is_initialized():
            raise RuntimeError("call ray.init() first (local Ray, or ray.init(address=...) for a cluster)")
        for name, value in (("num_actors", num_actors), ("envs_per_actor", envs_per_actor)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        remote = ray.remote(TaskActor).options(**(actor_options or {"num_cpus": 1}))
        self.actors = [remote.remote(task_name, envs_per_actor, seed + k, arch, options) for k in range(num_actors)]
        info = ray.get(self.actors[0].describe.remote())
        self.envs_per_actor = envs_per_actor
        self.num_envs = num_actors * envs_per_actor
        self.num_actions = info["act_dim"]
        self.max_episode_length = info["max_episode_steps"]
        self.device = device
        self.cfg = {"task": task_name, "num_envs": self.num_envs, "num_actors": num_actors, **info}
        self._obs = np.concatenate(ray.get([a.reset.remote() for a in self.actors]))
        self.last_returns = np.zeros(self.num_envs)
        self.last_facts = {}

    @property
    def episode_length_buf(self) -> torch.Tensor:
        steps = np.concatenate(ray.get([a.episode_steps.remote() for a in self.actors]))
        return torch.from_numpy(steps).to(self.device)

    @episode_length_buf.setter
    def episode_length_buf(self, value) -> None:
        steps = np.asarray(torch.as_tensor(value).cpu(), dtype=np.int64).reshape(len(self.actors), -1)
        ray.get([a.set_episode_steps.remote(s) for a, s in zip(self.actors, steps)])

    def step(self, actions: torch.Tensor):
        a = actions.detach().to("cpu", torch.float64).numpy().reshape(len(self.actors), self.envs_per_actor, -1)
        parts = ray.get([actor.step.remote(chunk) for actor, chunk in zip(self.actors, a)])
        obs, reward, terminated, truncated, returns = (np.concatenate([p[k] for p in parts]) for k in range(5))
        self.last_facts = {k: np.concatenate([p[5][k] for p in parts]) for k in parts[0][5]}
        self.last_returns = returns
        self._obs = obs
        extras = {"time_outs": torch.from_numpy(truncated).to(self.device), "log": {}}
        return (self._group(obs), torch.from_numpy(reward.astype(np.float32)).to(self.device),
                torch.from_numpy(terminated | truncated).to(self.device), extras)

    def close(self) -> None:
        """End the actors (their processes)."""
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
