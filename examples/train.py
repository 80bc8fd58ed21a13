"""Train a PPO policy (rsl_rl) on a taichi_terra task, on cpu or cuda.

    python examples/train.py TrackedToGoal --envs 64 --minutes 30 --out runs/tracked
    python examples/train.py TrackedToGoal --iterations 5 --out /tmp/try      # a quick try

Writes into ``--out``: TensorBoard logs (``tensorboard --logdir OUT/tensorboard``), ``policy.pt``,
``curve.json`` and ``curve.png`` (mean episode return and arrival rate per iteration), and at the end the
evaluation of ``examples/evaluate.py`` (the trained policy, random and zero actions over ``--eval-episodes``
randomised episodes each; ``eval.json``). Needs the ``[rl]`` extra: ``pip install -e ".[rl]"``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> dict:
    from taichi_terra.envs import TASKS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("task", choices=sorted(TASKS))
    p.add_argument("--envs", type=int, default=64, help="envs in the world (default 64)")
    p.add_argument("--iterations", type=int, default=None, help="PPO iterations (default: until --minutes)")
    p.add_argument("--minutes", type=float, default=None, help="wall-clock minutes of training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help="torch device of the policy (cpu or cuda)")
    p.add_argument("--arch", default="cpu", choices=("cpu", "cuda", "vulkan"), help="taichi_terra's backend")
    p.add_argument("--eval-episodes", type=int, default=200, help="episodes of the final evaluation (0: none)")
    p.add_argument("--out", type=Path, required=True, help="output folder")
    args = p.parse_args(argv)
    if args.iterations is None and args.minutes is None:
        p.error("give --iterations or --minutes")
    if args.envs < 1:
        p.error(f"--envs must be >= 1, got {args.envs}")

    import taichi_terra as tt
    from taichi_terra.envs.training import train

    tt.init(arch=args.arch)
    result = train(args.task, args.out, num_envs=args.envs, seed=args.seed, iterations=args.iterations,
                   minutes=args.minutes, device=args.device)
    print(f"{args.task}: trained; last iteration {result['last']}; policy {result['policy']}, curve {result['curve']}")
    if args.eval_episodes:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from evaluate import evaluate_all

        report = evaluate_all(args.task, result["policy"], args.envs, args.eval_episodes, args.seed + 1)
        report["training"] = result["last"]
        (args.out / "eval.json").write_text(json.dumps(report, indent=1))
        for who in report["policies"]:
            print(f"{who}: {report[who]}")
        result["eval"] = report
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
