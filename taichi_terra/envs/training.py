"""Training and evaluating policies on the tasks with rsl_rl's PPO (``examples/train.py``, ``examples/play.py``).

:func:`ppo_config` is the runner configuration; :func:`train` runs PPO for a number of iterations or minutes,
logging to TensorBoard, and saves the policy, a JSON of the learning curve and its picture
(:func:`plot_curve`); :func:`evaluate` runs a policy (or random actions) over whole episodes and counts how
they end. Needs the ``[rl]`` extra.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np


def ppo_config(steps_per_env: int = 24, hidden=(128, 128), learning_rate: float = 1e-3,
               entropy_coef: float = 0.005, init_std: float = 0.6) -> dict:
    """rsl_rl's ``OnPolicyRunner`` configuration: PPO with an MLP actor (Gaussian, state-independent std
    starting at ``init_std``) and critic of ``hidden`` layers, normalised observations, ``steps_per_env``
    actions per env per iteration."""
    model = {"class_name": "MLPModel", "hidden_dims": list(hidden), "activation": "elu", "obs_normalization": True}
    return {
        "num_steps_per_env": int(steps_per_env), "save_interval": 50, "obs_groups": {"actor": ["policy"],
                                                                                    "critic": ["policy"]},
        "algorithm": {"class_name": "PPO", "num_learning_epochs": 5, "num_mini_batches": 4, "clip_param": 0.2,
                      "gamma": 0.99, "lam": 0.95, "value_loss_coef": 1.0, "entropy_coef": entropy_coef,
                      "learning_rate": learning_rate, "max_grad_norm": 1.0, "schedule": "adaptive",
                      "desired_kl": 0.01},
        "actor": {**model, "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": init_std}},
        "critic": dict(model),
        "multi_gpu": None, "logger": "tensorboard", "check_for_nan": True,
    }


def train(task_name: str, out: Path, *, num_envs: int = 64, seed: int = 0, iterations: int | None = None,
          minutes: float | None = None, config: dict | None = None, device: str = "cpu") -> dict:
    """Train a PPO policy on ``task_name`` until ``iterations`` or ``minutes`` of wall time (whichever comes
    first; at least one of them), into ``out``: TensorBoard logs, ``policy.pt`` (the runner's checkpoint),
    ``curve.json`` (per iteration: env steps, seconds, mean episode return and arrival rate of the episodes
    that ended in it) and ``curve.png``. Returns the curve's last entry and the paths."""
    import torch
    from rsl_rl.runners import OnPolicyRunner

    from . import make_rsl_env

    if iterations is None and minutes is None:
        raise ValueError("give iterations or minutes (or both)")
    torch.manual_seed(seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    env = make_rsl_env(task_name, num_envs, seed=seed, device=device)
    cfg = config or ppo_config()
    runner = OnPolicyRunner(env, cfg, log_dir=str(out / "tensorboard"), device=device)
    curve, start, it = [], time.perf_counter(), 0
    ended = _Episodes()
    step = env.step

    def step_and_count(actions):  # (the episodes that end in each iteration, for the curve)
        result = step(actions)
        ended.add(env, result[2].cpu().numpy())
        return result

    env.step = step_and_count
    while (iterations is None or it < iterations) and (minutes is None or time.perf_counter() - start < 60 * minutes):
        runner.learn(1)
        it += 1
        curve.append({"iteration": it, "env_steps": it * cfg["num_steps_per_env"] * num_envs,
                      "seconds": time.perf_counter() - start, **ended.summary()})
        ended = _Episodes()
        (out / "curve.json").write_text(json.dumps({"task": task_name, "num_envs": num_envs, "seed": seed,
                                                    "curve": curve}, indent=1))  # (as it goes)
    runner.save(str(out / "policy.pt"), infos={"task": task_name, "num_envs": num_envs, "config": cfg})
    plot_curve(curve, out / "curve.png", f"{task_name}: PPO, {num_envs} envs")
    return {"last": curve[-1] if curve else None, "policy": out / "policy.pt", "curve": out / "curve.png"}


class _Episodes:
    """The returns and the task's facts (``arrived``, ``speed`` ...) of the episodes that ended, as an rsl_rl env
    of a task reports them after each step."""

    def __init__(self):
        self.returns, self.facts = [], {}

    def add(self, env, done: np.ndarray) -> None:
        if done.any():
            self.returns.extend(env.last_returns[done].tolist())
            for key, value in env.last_facts.items():
                self.facts.setdefault(key, []).extend(np.asarray(value, float)[done].tolist())

    def summary(self, limit: int | None = None) -> dict:
        """``episodes``, ``mean_return`` and each fact's mean (``arrival_rate`` for ``arrived``; ``None``
        where no episode ended), over the first ``limit`` episodes."""
        n = len(self.returns) if limit is None else min(limit, len(self.returns))
        out = {"episodes": n, "mean_return": float(np.mean(self.returns[:n])) if n else None}
        for key, values in self.facts.items():
            out["arrival_rate" if key == "arrived" else f"mean_{key}"] = float(np.mean(values[:n])) if n else None
        return out


def load_policy(task_name: str, path: Path, num_envs: int = 1, seed: int = 0, device: str = "cpu", **options):
    """The deterministic policy saved by :func:`train` at ``path`` and an rsl_rl env of the task to run it on
    (``options`` go to the task): ``(policy, env)``; ``policy(env.get_observations())`` gives the actions."""
    import torch
    from rsl_rl.runners import OnPolicyRunner

    from . import make_rsl_env

    saved = torch.load(str(path), weights_only=False, map_location=device)
    cfg = (saved.get("infos") or {}).get("config") or ppo_config()
    env = make_rsl_env(task_name, num_envs, seed=seed, device=device, **options)
    runner = OnPolicyRunner(env, cfg, log_dir=None, device=device)
    runner.load(str(path), map_location=device)
    return runner.get_inference_policy(device), env


def evaluate(env, policy=None, episodes: int = 100, seed: int = 0) -> dict:
    """Run ``episodes`` whole episodes on an rsl_rl env of a task (the envs' first episodes, then the ones
    that follow) with ``policy`` (``None``: actions uniform in [-1, 1], drawn from ``seed``; ``"zero"``: zero
    actions). Returns the episodes counted, the mean return, each fact's mean at the episodes' ends
    (``arrival_rate``, ``mean_speed`` ...) and, where the task reports each env's ``level`` and arrival, the
    arrival rate per level."""
    import torch

    rng = np.random.default_rng(seed)
    ended = _Episodes()
    obs = env.get_observations()
    while len(ended.returns) < episodes:
        with torch.inference_mode():
            if policy is None:
                actions = torch.from_numpy(rng.uniform(-1.0, 1.0, (env.num_envs, env.num_actions)).astype(np.float32))
            elif policy == "zero":
                actions = torch.zeros((env.num_envs, env.num_actions))
            else:
                actions = policy(obs)
        obs, _reward, done, _extras = env.step(actions)
        ended.add(env, done.cpu().numpy())
    out = ended.summary(episodes)
    if "level" in ended.facts and "arrived" in ended.facts:
        lv, ok = np.array(ended.facts["level"][:episodes]), np.array(ended.facts["arrived"][:episodes])
        out["arrival_rate_by_level"] = {int(k): float(ok[lv == k].mean()) for k in np.unique(lv)}
    return out


def plot_curve(curve: list, path: Path, title: str) -> None:
    """A PNG of the mean episode return (and the arrival rate) per iteration against env steps."""
    from PIL import Image, ImageDraw

    w, h, m = 640, 360, 48
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    pts = [(c["env_steps"], c["mean_return"], c.get("arrival_rate")) for c in curve if c["mean_return"] is not None]
    d.text((m, 12), title, fill="black")
    d.rectangle([m, m, w - m, h - m], outline="black")
    if len(pts) >= 2:
        xs = np.array([p[0] for p in pts], float)
        ys = np.array([p[1] for p in pts], float)
        rate = np.array([np.nan if p[2] is None else p[2] for p in pts], float)
        lo, hi = float(min(ys.min(), 0.0)), float(max(ys.max(), 1e-9))

        def px(x, y, y0, y1):
            return (m + (x - xs[0]) / max(xs[-1] - xs[0], 1e-9) * (w - 2 * m),
                    h - m - (y - y0) / max(y1 - y0, 1e-9) * (h - 2 * m))

        d.line([px(x, y, lo, hi) for x, y in zip(xs, ys)], fill=(30, 90, 200), width=2)
        d.text((m, h - m + 8), f"env steps 0 .. {int(xs[-1]):,}", fill="black")
        d.text((w - m - 220, m + 6), f"return {lo:.1f} .. {hi:.1f} (blue)", fill=(30, 90, 200))
        if np.all(np.isfinite(rate)):
            d.line([px(x, r, 0.0, 1.0) for x, r in zip(xs, rate)], fill=(220, 120, 20), width=2)
            d.text((w - m - 220, m + 20), "arrival rate 0 .. 1 (orange)", fill=(220, 120, 20))
    img.save(path)
