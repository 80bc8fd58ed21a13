"""Rollouts on Ray actors (``taichi_terra/envs/ray.py``) against the same envs in the learner's own process.

    python -m perf ray_rollouts [--task TrackedToGoal] [--envs 1024] [--actors 1 2] [--steps 5] [--repeats 3]

For ``--envs`` envs in all: the task in this process (an rsl_rl ``VecEnv``), then ``k`` Ray actors (local Ray,
one CPU each) of ``envs / k`` envs for each ``k`` of ``--actors``, each stepped ``--steps`` actions of uniform
random actions per round, median of ``--repeats`` rounds after a warm-up round. Reported: policy steps
(actions) per second summed over envs, physics env-steps per second, and the time per action beyond the
in-process one (Ray's overhead per rollout step: sending the actions, gathering the results).
"""
from __future__ import annotations

import time

from . import init_backend

SMOKE = ["--envs", "2", "--actors", "1", "--steps", "1", "--repeats", "1"]
OUT = "ray_rollouts.json"


def add_arguments(p) -> None:
    p.add_argument("--task", default="TrackedToGoal")
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--actors", type=int, nargs="+", default=[1, 2])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3)


def _time(env, steps: int, repeats: int) -> float:
    """Median seconds per action over ``repeats`` rounds of ``steps`` (after one warm-up round)."""
    import numpy as np
    import torch

    rng = np.random.default_rng(0)
    rounds = []
    for r in range(repeats + 1):
        t0 = time.perf_counter()
        for _ in range(steps):
            env.step(torch.from_numpy(rng.uniform(-1.0, 1.0, (env.num_envs, env.num_actions))))
        if r:
            rounds.append((time.perf_counter() - t0) / steps)
    return sorted(rounds)[len(rounds) // 2]


def run(args) -> dict:
    import ray

    init_backend("cpu", "f64")
    from taichi_terra.envs import make_rsl_env
    from taichi_terra.envs.ray import RayVecEnv

    local = make_rsl_env(args.task, args.envs, seed=0)
    substeps = local.task.substeps
    base = _time(local, args.steps, args.repeats)
    del local
    rows = [{"actors": 0, "envs_per_actor": args.envs, "seconds_per_action": base,
             "policy_steps_per_s": args.envs / base, "env_steps_per_s": args.envs * substeps / base,
             "overhead_ms_per_action": 0.0}]
    print(f"{args.task}, {args.envs} envs in this process: {args.envs / base:,.0f} policy steps/s "
          f"({args.envs * substeps / base:,.0f} env-steps/s), {1e3 * base:.1f} ms per action")
    ray.init(num_cpus=max(args.actors), include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        for k in args.actors:
            env = RayVecEnv(args.task, num_actors=k, envs_per_actor=args.envs // k, seed=0)
            t = _time(env, args.steps, args.repeats)
            env.close()
            rows.append({"actors": k, "envs_per_actor": args.envs // k, "seconds_per_action": t,
                         "policy_steps_per_s": env.num_envs / t, "env_steps_per_s": env.num_envs * substeps / t,
                         "overhead_ms_per_action": 1e3 * (t - base)})
            print(f"{k} actor(s) x {args.envs // k} envs: {env.num_envs / t:,.0f} policy steps/s "
                  f"({env.num_envs * substeps / t:,.0f} env-steps/s), {1e3 * t:.1f} ms per action, "
                  f"{1e3 * (t - base):+.1f} ms beyond one process")
    finally:
        ray.shutdown()
    return {"task": args.task, "rows": rows}
