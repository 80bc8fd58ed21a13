"""Gymnasium adapters of a :class:`~taichi_terra.envs.task.Task`: :class:`TerrainVectorEnv` (the vector API, numpy)
and :class:`TerrainEnv` (a one-env task as a plain ``gymnasium.Env``, for ``gymnasium.utils.env_checker``).

The vector env resets the envs that ended in the step that ended them (``AutoresetMode.SAME_STEP``): the
observation returned for such an env starts its next episode; ``info["final_obs"]`` holds its last one (rows
valid where ``info["_final_obs"]``), and the task's per-env facts (``info["arrived"]`` ...) are those of the
step, before the reset. Seeding: ``reset(seed=s)`` starts the task's generator again from ``s`` and resets every
env, so the same seed and actions give the same episodes bit for bit.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space


def _spaces(task):
    obs = gym.spaces.Box(-task.obs_bound, task.obs_bound, (task.obs_dim,), np.float32)
    act = gym.spaces.Box(task.action_low.astype(np.float32), task.action_high.astype(np.float32), dtype=np.float32)
    return obs, act


class TerrainVectorEnv(VectorEnv):
    """A task as a :class:`gymnasium.vector.VectorEnv` (see the module docstring).

    Args:
        task: a :class:`~taichi_terra.envs.task.Task`.
        seed: the seed of the first :meth:`reset` without one (``None``: the task's as made).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, task, seed: int | None = None):
        self.task = task
        self.num_envs = task.num_envs
        self.single_observation_space, self.single_action_space = _spaces(task)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._seed = seed
        self._started = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Every env starts a new episode (``options`` is not used); returns ``(obs, info)``."""
        super().reset(seed=seed)
        if seed is not None:
            self.task.seed(seed)
        elif not self._started and self._seed is not None:
            self.task.seed(self._seed)
        self._started = True
        return self.task.reset(), {}

    def step(self, actions):
        """Hold ``actions`` (num_envs, act_dim) for the task's ``control_dt``; the envs that ended are reset
        (see the module docstring). Returns ``(obs, reward, terminated, truncated, info)``."""
        if not self._started:
            raise RuntimeError("step: call reset() first")
        obs, reward, terminated, truncated, facts = self.task.step(actions)
        ended = terminated | truncated
        info = {}
        for key, value in facts.items():
            info[key], info[f"_{key}"] = value, np.ones(self.num_envs, bool)
        if ended.any():
            info["final_obs"], info["_final_obs"] = obs.copy(), ended.copy()
            info["episode_return"], info["_episode_return"] = self.task.episode_return.copy(), ended.copy()
            obs = self.task.reset(ended)
        return obs, reward, terminated, truncated, info


class TerrainEnv(gym.Env):
    """A one-env task as a :class:`gymnasium.Env`: no autoreset (call :meth:`reset` after an episode ends), as
    the plain API has it; for ``gymnasium.utils.env_checker.check_env`` and single-env tools."""

    metadata = {"render_modes": []}

    def __init__(self, task):
        if task.num_envs != 1:
            raise ValueError(f"task must have one env, got {task.num_envs}")
        self.task = task
        self.observation_space, self.action_space = _spaces(task)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.task.seed(seed)
        return self.task.reset()[0], {}

    def step(self, action):
        obs, reward, terminated, truncated, facts = self.task.step(np.asarray(action)[None])
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), {k: v[0] for k, v in facts.items()}
