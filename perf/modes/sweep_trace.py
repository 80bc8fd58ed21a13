"""The sweeps of one step, one by one (``taichi_terra.sweep_trace``): how fast the solve converges there, and which
velocities it is still moving.

    python -m perf sweep_trace --case tracked                 # the step of the case's first second with most sweeps
    python -m perf sweep_trace --case quadruped_soil --step 214 --sweeps 60
    python -m perf sweep_trace --case quadruped_soil --step 1141 --sweeps 12 --rows 6

The cases are ``python -m perf solver``'s (their scenes, one env, their controllers). The world runs to the
chosen step (by default the step with the most sweeps in the first ``--scan`` steps) and that one step is
replayed from a checkpoint with ``max_sweeps`` = 1, 2, ... ``--sweeps`` at the world's tolerance (or
``--tolerance``), then once swept to 1e-12 m/s as the reference. For each sweep count it prints the largest
change of the generalized velocities that the last sweep made, its ratio to the sweep before (the rate of
convergence), the four entries of ``u`` it moved most, and how far ``u`` still is from the reference.
``--rows N`` adds the N solver rows whose impulse the last sweep changed most.
"""
from __future__ import annotations

from taichi_terra.sweep_trace import trace

from . import init_backend
from .solver import CASES, build_case

SMOKE = ["--case", "tracked", "--step", "2", "--sweeps", "3", "--rows", "2"]
OUT = "sweep_trace.json"


def add_arguments(p) -> None:
    p.add_argument("--case", default="tracked", choices=CASES)
    p.add_argument("--step", type=int, default=None, help="the step to trace (default: the one with most sweeps)")
    p.add_argument("--scan", type=int, default=1000, help="steps searched for the one with most sweeps")
    p.add_argument("--sweeps", type=int, default=40, help="sweep counts to replay the step with")
    p.add_argument("--tolerance", type=float, default=None, help="sweep tolerance [m/s] (default: the world's)")
    p.add_argument("--rows", type=int, default=0, help="solver rows the last sweep changed most, to list")


def run(args) -> dict:
    init_backend("cpu", "f64")
    built, scene = build_case(args.case, args.tolerance)
    r = {"case": args.case, **trace(built.world, step=args.step, scan=args.scan, sweeps=args.sweeps,
                                    controller=built.control, chunk=scene.chunk, rows=args.rows)}
    print(f"{r['case']} step {r['step']}: {r['own_sweeps']} sweeps at {r['tolerance']:.0e} m/s, then "
          f"{r['own_to_reference']:.1e} m/s from the reference ({r['reference_sweeps']} sweeps to 1e-12 m/s)")
    print(f"{'sweeps':>6} {'change [m/s]':>12} {'ratio':>6} {'to ref. [m/s]':>13}  most moved (u index: change)")
    for row in r["rows"]:
        change = f"{row['change']:.2e}" if "change" in row else "-"
        ratio = f"{row['ratio']:.2f}" if row.get("ratio") is not None else "-"
        moved = ", ".join(f"{j}: {v:.1e}" for j, v in row.get("moved", []))
        print(f"{row['sweeps']:>6} {change:>12} {ratio:>6} {row['to_reference']:>13.2e}  {moved}")
    if r["solver_rows"]:
        print(f"rows the sweep {args.sweeps} changed most (frame: normal, tangent, tangent) [N s]:")
        print(f"{'row':>5} {'kind':>14} {'body':>4} {'belt':>4}  {'impulse':>32}  {'change':>32}  {'reference':>32}")
        vec = lambda v: " ".join(f"{x:10.3e}" for x in v)  # noqa: E731
        for row in r["solver_rows"]:
            print(f"{row['row']:>5} {row['kind']:>14} {row['body']:>4} {row['belt']:>4}  {vec(row['impulse'])}  "
                  f"{vec(row['change'])}  {vec(row['reference'])}")
    return r
