"""rsl_rl's ``VecEnv`` over a :class:`~taichi_terra.envs.task.Task` (:class:`RslVecEnv`): torch tensors, the
observation as a ``TensorDict`` with one group, ``"policy"``, and the envs that ended reset in the step that
ended them (``extras["time_outs"]`` marks those cut by the time limit, which PPO bootstraps).

On the ``cpu`` device the tensors handed out are made from the task's numpy arrays without a copy where the
dtypes allow (the episode-length buffer is the task's own memory); on a GPU device they are copied there.
"""
from __future__ import annotations

import numpy as np
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict


class RslVecEnv(VecEnv):
    """A task as an rsl_rl ``VecEnv`` (see the module docstring).

    Args:
        task: a :class:`~taichi_terra.envs.task.Task`; every env is reset here.
        device: the torch device of the tensors (``"cpu"`` or ``"cuda"``).
    """

    def __init__(self, task, device: str = "cpu"):
        self.task = task
        self.num_envs = task.num_envs
        self.num_actions = task.act_dim
        self.max_episode_length = task.max_episode_steps
        self.device = device
        self.cfg = {"task": task.name, "num_envs": task.num_envs, "control_dt": task.control_dt}
        self._obs = task.reset()
        self._episodes = {"arrived": [], "return": [], "length": []}
        #: after each step: every env's episode return and whether it arrived (read where ``dones``)
        self.last_returns = np.zeros(self.num_envs)
        self.last_arrived = np.zeros(self.num_envs, bool)
        self.last_facts = {}  # (the task's per-env facts of the last step)

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """Actions taken in each env's episode (the task's own array on cpu)."""
        return torch.from_numpy(self.task.episode_steps).to(self.device)

    @episode_length_buf.setter
    def episode_length_buf(self, value) -> None:  # (the runner's random start lengths)
        self.task.episode_steps[:] = np.asarray(torch.as_tensor(value).cpu(), dtype=np.int64)

    def _group(self, obs: np.ndarray) -> TensorDict:
        return TensorDict({"policy": torch.from_numpy(obs).to(self.device)}, batch_size=[self.num_envs],
                          device=self.device)

    def get_observations(self) -> TensorDict:
        return self._group(self._obs)

    def step(self, actions: torch.Tensor):
        a = actions.detach().to("cpu", torch.float64).numpy()
        obs, reward, terminated, truncated, facts = self.task.step(a)
        ended = terminated | truncated
        log = {}
        self.last_returns = self.task.episode_return.copy()
        self.last_arrived = np.asarray(facts.get("arrived", terminated), bool).copy()
        self.last_facts = {k: np.array(v) for k, v in facts.items()}
        if ended.any():
            for key, value in (("arrived", self.last_arrived[ended]), ("return", self.last_returns[ended]),
                               ("length", self.task.episode_steps[ended])):
                self._episodes[key].extend(np.asarray(value, float).tolist())
            obs = self.task.reset(ended)
        if len(self._episodes["return"]) >= self.num_envs:  # (a mean over about one env count of episodes)
            log = {f"/episode_{k}": float(np.mean(v)) for k, v in self._episodes.items()}
            self._episodes = {k: [] for k in self._episodes}
        self._obs = obs
        extras = {"time_outs": torch.from_numpy(truncated).to(self.device), "log": log}
        return (self._group(obs), torch.from_numpy(reward.astype(np.float32)).to(self.device),
                torch.from_numpy(ended).to(self.device), extras)
