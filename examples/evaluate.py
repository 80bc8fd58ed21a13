"""Evaluate a trained policy (``examples/train.py``) against random and zero actions (and the task's baseline
controller, where it names one) over randomised episodes.

    python examples/evaluate.py TrackedToGoal runs/tracked/policy.pt --episodes 300 --out runs/tracked/eval.json

Episodes are drawn as the task's ``eval_options`` say (``TrackedToGoal``: every tile's kind and level drawn
uniformly, no curriculum). Prints and writes (``--out``) each policy's mean return and the task's facts at the
episodes' ends: the arrival rate (and per level) of ``TrackedToGoal``, the mean speed of ``HexapodSandWalk``,
the speed error and slip of ``BuggySlipControl``. A task's ``baseline`` (``BuggySlipControl``: ``servo``, the
rear wheels' velocity drives at the commanded speed) runs with zero actions in the task made with the
baseline's options.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def evaluate_all(task: str, checkpoint, envs: int, episodes: int, seed: int) -> dict:
    """The trained policy, uniform random actions, zero actions and the task's baseline (where it has one),
    each over ``episodes`` episodes; the report's ``policies`` lists them in that order."""
    from taichi_terra.envs import make_rsl_env, task_class
    from taichi_terra.envs.training import evaluate, load_policy

    cls = task_class(task)
    options = cls.eval_options
    policy, env = load_policy(task, checkpoint, num_envs=envs, seed=seed, **options)
    report = {"task": task, "episodes": episodes, "policies": ["trained", "random", "zero"],
              "trained": evaluate(env, policy, episodes)}
    for who, actions in (("random", None), ("zero", "zero")):
        report[who] = evaluate(make_rsl_env(task, envs, seed=seed, **options), actions, episodes, seed=seed)
    baseline = getattr(cls, "baseline", None)
    if baseline:
        env = make_rsl_env(task, envs, seed=seed, **{**options, **baseline["options"]})
        report[baseline["name"]] = evaluate(env, "zero", episodes, seed=seed)
        report["policies"].append(baseline["name"])
    return report


def main(argv=None) -> dict:
    from taichi_terra.envs import TASKS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("task", choices=sorted(TASKS))
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--envs", type=int, default=64)
    p.add_argument("--episodes", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    if not args.checkpoint.is_file():
        p.error(f"checkpoint {args.checkpoint} is not a file")
    report = evaluate_all(args.task, args.checkpoint, args.envs, args.episodes, args.seed)
    for who in report["policies"]:
        print(f"{who}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                     for k, v in report[who].items()))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
