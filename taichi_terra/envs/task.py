"""The base of the RL tasks: one :class:`taichi_terra.World` of ``num_envs`` envs, stepped together, with the
observation, action, reward, termination, reset and randomisation of a task, in numpy.

A task is used through an adapter: :class:`taichi_terra.envs.vector.TerrainVectorEnv` (Gymnasium's vector API)
or :class:`taichi_terra.envs.rsl.RslVecEnv` (rsl_rl's ``VecEnv``, torch tensors). Both reset the envs that ended
in the step that ended them (Gymnasium's ``SAME_STEP`` autoreset): the observation returned for such an env is
its new episode's first, and its last one is kept apart.

A subclass builds its world (:meth:`Task.build`) and defines:

- :meth:`Task.apply` (actions, already clipped to ``action_low``..``action_high``, into drives or loads),
- :meth:`Task.observe` (every env's observation, shape (num_envs, obs_dim), float32),
- :meth:`Task.evaluate` (rewards, terminations and per-env facts after a step),
- :meth:`Task.randomize` (what each reset draws, from :attr:`Task.rng` in a fixed order).

Episodes reproduce bit for bit from a seed: every draw comes from :attr:`Task.rng`, and a reset brings the
envs back to the checkpoint taken at the build before the draws are applied.
"""
from __future__ import annotations

import numpy as np

from ..validation import check_int


class Task:
    """A batched task (see the module docstring).

    Args:
        num_envs: envs in the world (>= 1).
        seed: the seed of :attr:`rng` (>= 0).

    Class attributes a subclass sets: ``name``, ``obs_dim``, ``action_low`` and ``action_high`` (arrays of
    the action's bounds), ``control_dt`` [s] (one action is held this long: a whole number of the world's
    steps), ``max_episode_steps`` (actions per episode, after which it is truncated) and ``obs_bound``.
    """

    name = "task"
    obs_dim = 0
    action_low = np.zeros(0)
    action_high = np.zeros(0)
    control_dt = 0.1
    max_episode_steps = 100
    #: observations are clipped to [-obs_bound, obs_bound] (the declared space's bounds)
    obs_bound = 10.0
    #: the options of the task's randomised evaluation episodes (``examples/evaluate.py``)
    eval_options: dict = {}
    #: the options of the task as ``examples/play.py`` shows it
    play_options: dict = {}
    #: a controller ``examples/evaluate.py`` compares the policy with: ``{"name": ..., "options": {...}}``, the
    #: task made with those options and run with zero actions (None: no baseline)
    baseline: dict | None = None
    #: how ``examples/play.py`` frames it: the tiles' spacing (x, y) [m], and whether the camera follows the
    #: first env's ``robot`` (at ``distance`` [m])
    play_view: dict = {"spacing": (7.0, 7.0), "follow": False, "distance": None}

    def __init__(self, num_envs: int, seed: int = 0):
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.rng = np.random.default_rng(check_int("seed", seed, 0))
        self.world = self.build(self.num_envs)
        self.world.build()
        self.substeps = max(int(round(self.control_dt / self.world.dt)), 1)
        self._start = self.world.checkpoint()
        #: actions taken in each env's current episode
        self.episode_steps = np.zeros(self.num_envs, np.int64)
        #: each env's return so far in its episode
        self.episode_return = np.zeros(self.num_envs)
        self.last_action = np.zeros((self.num_envs, self.act_dim))

    @property
    def act_dim(self) -> int:
        return len(self.action_low)

    # ------------------------------------------------------------------ what a subclass defines
    def build(self, num_envs: int):
        """The task's world, not yet built."""
        raise NotImplementedError

    def randomize(self, envs: np.ndarray) -> None:
        """Draw the new episodes of ``envs`` (after their state went back to the start)."""
        raise NotImplementedError

    def apply(self, actions: np.ndarray) -> None:
        """Turn every env's action (clipped to the bounds), shape (num_envs, act_dim), into drives or loads."""
        raise NotImplementedError

    def observe(self) -> np.ndarray:
        """Every env's observation, shape (num_envs, obs_dim), float32."""
        raise NotImplementedError

    def evaluate(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
        """After a step: the rewards (num_envs,), the terminations (num_envs,) bool and per-env facts (a dict
        of arrays of num_envs entries, reported in ``info``)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the loop
    def seed(self, seed: int) -> None:
        """Start :attr:`rng` again from ``seed`` (>= 0)."""
        self.rng = np.random.default_rng(check_int("seed", seed, 0))

    def reset(self, envs=None) -> np.ndarray:
        """Start new episodes in ``envs`` (indices or a bool mask; ``None``: every env): their state and
        per-env parameters back to the start, then :meth:`randomize`. The other envs are not touched. Returns
        every env's observation."""
        idx = self._envs(envs)
        if idx.size:
            self.world.reset_envs(idx, self._start)
            self.randomize(idx)
            self.episode_steps[idx] = 0
            self.episode_return[idx] = 0.0
            self.last_action[idx] = 0.0
        return self.observation()

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Hold ``actions`` (num_envs, act_dim) for ``control_dt`` and step: ``(obs, reward, terminated,
        truncated, info)``, numpy, num_envs entries each. No env is reset here (the adapters do it)."""
        a = np.asarray(actions, dtype=np.float64)
        if a.shape != (self.num_envs, self.act_dim):
            raise ValueError(f"actions must have shape ({self.num_envs}, {self.act_dim}), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError("actions must be finite")
        a = np.clip(a, self.action_low, self.action_high)
        self.apply(a)
        self.world.step(self.substeps)
        self.episode_steps += 1
        reward, terminated, facts = self.evaluate(a)
        self.last_action[:] = a
        self.episode_return += reward
        truncated = (self.episode_steps >= self.max_episode_steps) & ~terminated
        return self.observation(), reward, terminated, truncated, facts

    def observation(self) -> np.ndarray:
        """:meth:`observe`, clipped to :attr:`obs_bound`, float32."""
        return np.clip(self.observe(), -self.obs_bound, self.obs_bound).astype(np.float32)

    def _envs(self, envs) -> np.ndarray:
        if envs is None:
            return np.arange(self.num_envs)
        a = np.asarray(envs)
        if a.dtype == bool:
            if a.shape != (self.num_envs,):
                raise ValueError(f"envs as a mask must have shape ({self.num_envs},), got {a.shape}")
            return np.nonzero(a)[0]
        a = a.reshape(-1)
        if a.size and (a.dtype.kind not in "iu" or a.min() < 0 or a.max() >= self.num_envs):
            raise ValueError(f"envs must be env indices in [0, {self.num_envs}), got {envs!r}")
        return a.astype(np.int64)
