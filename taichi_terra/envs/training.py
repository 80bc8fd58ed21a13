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

    def add(self, env, done: np.ndarray, per_env: np.ndarray | None = None, limit: int | None = None) -> None:
        """Count the envs ``done`` in the last step; with ``per_env`` (episodes counted per env so far) and
        ``limit``, only an env's first ``limit`` episodes."""
        if per_env is not None:
            done = done & (per_env < limit)
            per_env += done
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
    """Run at least ``episodes`` whole episodes on an rsl_rl env of a task, the same number in every env (each
    env's first ``ceil(episodes / num_envs)``), with ``policy`` (``None``: actions uniform in [-1, 1], drawn from ``seed``; ``"zero"``: zero
    actions). Returns the episodes counted, the mean return, each fact's mean at the episodes' ends
    (``arrival_rate``, ``mean_speed`` ...) and, where the task reports each env's ``level`` and arrival, the
    arrival rate per level."""
    import torch

    rng = np.random.default_rng(seed)
    ended = _Episodes()
    each = -(-episodes // env.num_envs)  # (every env's first episodes alike: short ones are not favoured)
    counted = np.zeros(env.num_envs, np.int64)
    obs = env.get_observations()
    while counted.min() < each:
        with torch.inference_mode():
            if policy is None:
                actions = torch.from_numpy(rng.uniform(-1.0, 1.0, (env.num_envs, env.num_actions)).astype(np.float32))
            elif policy == "zero":
                actions = torch.zeros((env.num_envs, env.num_actions))
            else:
                actions = policy(obs)
        obs, _reward, done, _extras = env.step(actions)
        ended.add(env, done.cpu().numpy(), counted, each)
    out = ended.summary()
    if "level" in ended.facts and "arrived" in ended.facts:
        lv, ok = np.array(ended.facts["level"]), np.array(ended.facts["arrived"])
        out["arrival_rate_by_level"] = {int(k): float(ok[lv == k].mean()) for k in np.unique(lv)}
    return out


def plot_curve(curve: list, path: Path, title: str) -> None:
    """A PNG of the learning curve against env steps: the mean episode return per iteration (light) and its
    running mean over 10 iterations (dark) above; below, the running means of the rates the task reports
    (arrival, failure), the mean speed, speed error [m/s] and slip where it reports them and, where it reports
    levels, the mean level of the episodes' tiles over the last (each clipped to the panel's 0 to 1)."""
    from PIL import Image, ImageDraw

    w, h, m, gap = 720, 440, 56, 24
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    d.text((m, 10), title, fill="black")
    rows = [c for c in curve if c["mean_return"] is not None]
    if len(rows) < 2:
        img.save(path)
        return
    xs = np.array([c["env_steps"] for c in rows], float)
    panels = [(m + 14, (h - gap) // 2 + 4), ((h + gap) // 2 + 14, h - m)]

    def smooth(v):
        v = np.asarray(v, float)
        k = min(10, len(v))
        return np.convolve(v, np.ones(k) / k, mode="valid"), xs[k - 1:]

    def plot(panel, values, x, lo, hi, colour, width=2):
        top, bottom = panel
        pts = [(m + (xi - xs[0]) / max(xs[-1] - xs[0], 1e-9) * (w - 2 * m),
                bottom - (min(max(v, lo), hi) - lo) / max(hi - lo, 1e-9) * (bottom - top))
               for xi, v in zip(x, values)]
        d.line(pts, fill=colour, width=width)

    def frame(panel, lo, hi, label):
        top, bottom = panel
        d.rectangle([m, top, w - m, bottom], outline="black")
        d.text((4, top - 4), f"{hi:.3g}", fill="black")
        d.text((4, bottom - 10), f"{lo:.3g}", fill="black")
        d.text((m, top - 14), label, fill="black")

    ret = np.array([c["mean_return"] for c in rows], float)
    lo, hi = float(min(ret.min(), 0.0)), float(ret.max())
    frame(panels[0], lo, hi, "mean episode return (per iteration; running mean of 10)")
    plot(panels[0], ret, xs, lo, hi, (170, 195, 235), 1)
    plot(panels[0], *smooth(ret), lo, hi, (30, 90, 200))
    legend = []
    colours = {"arrival_rate": (220, 120, 20), "mean_failed": (200, 40, 40), "mean_level": (60, 150, 60),
               "mean_speed": (120, 60, 180), "mean_speed_error": (20, 150, 160), "mean_slip": (140, 90, 40)}
    levels = max([c.get("mean_level") or 0.0 for c in rows] + [1.0])
    for key, colour in colours.items():
        v = [c.get(key) for c in rows]
        if all(x is not None for x in v):
            v = np.array(v, float) / (np.ceil(levels) if key == "mean_level" else 1.0)
            plot(panels[1], *smooth(v), 0.0, 1.0, colour)
            unit = {"mean_level": f" / {np.ceil(levels):.0f}", "mean_speed": " [m/s]",
                    "mean_speed_error": " [m/s]"}.get(key, "")
            legend.append((key.replace("mean_", "") + unit, colour))
    frame(panels[1], 0.0, 1.0, "running means of 10 iterations: " + ", ".join(k for k, _ in legend))
    for k, (name, colour) in enumerate(legend):
        d.text((w - m - 150, panels[1][0] + 60 + 14 * k), name, fill=colour)
    d.text((m, h - m + 8), "env steps (actions x envs)", fill="black")
    d.text((w - m - 90, h - m + 8), f"{int(xs[-1]):,}", fill="black")
    img.save(path)
