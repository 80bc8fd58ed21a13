"""Throughput of the RL tasks as a training loop sees it: env-steps per second including the observation build,
the policy's inference and the resets of the envs that ended (``taichi_terra/envs/``).

    python -m perf rl_throughput [--tasks TrackedToGoal] [--envs 1 64 1024] [--actions 20] [--repeats 3]

For each task and env count: an rsl_rl ``VecEnv`` of the task on cpu f64 and a PPO actor of
``training.ppo_config``'s default size (two layers of 128) acting on it, ``--actions`` actions per round (each
held for the task's ``control_dt``), median of ``--repeats`` rounds after one round of warm-up. Reported:
policy steps (actions) per second summed over envs, the simulated env-steps per second behind them (an action
is ``control_dt / dt`` physics steps), and the share of the time in the policy's inference.
"""
from __future__ import annotations

import time

from . import init_backend

SMOKE = ["--envs", "2", "--actions", "2", "--repeats", "1"]
OUT = "rl_throughput.json"


def add_arguments(p) -> None:
    p.add_argument("--tasks", nargs="+", default=["TrackedToGoal"])
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--actions", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)


def run(args) -> dict:
    import numpy as np
    import torch
    from rsl_rl.runners import OnPolicyRunner

    init_backend("cpu", "f64")
    from taichi_terra.envs import make_rsl_env
    from taichi_terra.envs.training import ppo_config

    torch.set_num_threads(1)  # (torch's pool beside Taichi's on few cores: docs/performance.md, torch views)
    rows = []
    for name in args.tasks:
        for n in args.envs:
            env = make_rsl_env(name, n, seed=0)
            policy = OnPolicyRunner(env, ppo_config(), log_dir=None, device="cpu").get_inference_policy()
            obs = env.get_observations()
            rounds, infer = [], []
            for r in range(args.repeats + 1):
                t0, t_inf = time.perf_counter(), 0.0
                for _ in range(args.actions):
                    ti = time.perf_counter()
                    with torch.inference_mode():
                        actions = policy(obs)
                    t_inf += time.perf_counter() - ti
                    obs, _rew, _done, _extras = env.step(actions)
                if r:  # (the first round warms up)
                    rounds.append(time.perf_counter() - t0)
                    infer.append(t_inf)
            k = int(np.argsort(rounds)[len(rounds) // 2])
            per_s = n * args.actions / rounds[k]
            row = {"task": name, "n_envs": n, "policy_steps_per_s": per_s,
                   "env_steps_per_s": per_s * env.task.substeps, "inference_share": infer[k] / rounds[k]}
            rows.append(row)
            print(f"{name}, {n} envs: {per_s:,.0f} policy steps/s ({row['env_steps_per_s']:,.0f} physics "
                  f"env-steps/s), inference {100 * row['inference_share']:.1f} % of the time")
    return {"rows": rows}
