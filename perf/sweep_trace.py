"""The sweeps of one step, one by one: how fast the solve converges there, and which velocities it is still moving.

    python -m perf.sweep_trace --case tracked                 # the step of the case's first second with most sweeps
    python -m perf.sweep_trace --case quadruped_soil --step 214 --sweeps 60

The cases are ``perf.bench_solver``'s. The world runs to the chosen step (by default the step with the most sweeps
in the first ``--scan`` steps), its controller applied as the benchmark applies it, and that one step is replayed
from a checkpoint with ``max_sweeps`` = 1, 2, ... ``--sweeps`` at the world's tolerance, then once swept to
1e-12 m/s as the reference. For each sweep count it prints the largest change of the generalized velocities ``u``
(every free body's and tree's, in the order of the ``u`` array) that the last sweep made, its ratio to the sweep
before (the rate of convergence: the stopping test of ``solver/sweep.py`` assumes at most ``RHO_MAX``), the four
entries of ``u`` it moved most, and how far ``u`` still is from the reference. Where the sweeps stopped by
themselves, the rows repeat. ``--out`` writes the rows as JSON.
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from .bench_solver import BUILD, CASES, _run


def trace(case: str, step: int | None = None, scan: int = 1000, sweeps: int = 40, tolerance: float | None = None,
          reference_tolerance: float = 1e-12, reference_sweeps: int = 100_000) -> dict:
    """The rows described in the module's docstring, for step ``step`` of ``case`` (None: the step with the most
    sweeps among the first ``scan``)."""
    world, _sim_s, controller, chunk = BUILD[case](tolerance)
    world.compile()
    start = world.checkpoint()
    if step is None:
        counts = _run(world, scan, controller, chunk, one_by_one=True)
        step = int(np.argmax(counts))
        world.restore(start)
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    _run(world, step, controller, chunk)
    if controller is not None and (not chunk or step % chunk == 0):
        controller(world)  # (the controller acts before the step the benchmark would start a chunk with)
    here = world.checkpoint()
    saved = (world.solver.tolerance, world.solver.max_sweeps)

    def u_after(tol, cap):
        world.restore(here)
        world.solver.tolerance, world.solver.max_sweeps = tol, cap
        world.step(1)
        return world._state.read("u")[0].copy(), int(world.get_solver_sweeps(0))

    try:
        own, own_sweeps = u_after(saved[0], saved[1])
        reference, reference_count = u_after(reference_tolerance, reference_sweeps)
        rows, last_u, last_change = [], None, None
        for k in range(1, sweeps + 1):
            u, taken = u_after(saved[0], k)
            row = {"sweeps": k, "taken": taken, "to_reference": float(np.abs(u - reference).max())}
            if last_u is not None:
                d = u - last_u
                change = float(np.abs(d).max())
                row["change"] = change
                row["ratio"] = change / last_change if last_change else None
                row["moved"] = [[int(j), float(d[j])] for j in np.argsort(-np.abs(d))[:4] if d[j] != 0.0]
                last_change = change
            rows.append(row)
            last_u = u
    finally:
        world.restore(here)
        world.solver.tolerance, world.solver.max_sweeps = saved
    return {"case": case, "step": step, "tolerance": saved[0], "own_sweeps": own_sweeps,
            "own_to_reference": float(np.abs(own - reference).max()), "reference_sweeps": reference_count,
            "rows": rows}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", default="tracked", choices=CASES)
    p.add_argument("--step", type=int, default=None, help="the step to trace (default: the one with most sweeps)")
    p.add_argument("--scan", type=int, default=1000, help="steps searched for the one with most sweeps")
    p.add_argument("--sweeps", type=int, default=40, help="sweep counts to replay the step with")
    p.add_argument("--tolerance", type=float, default=None, help="sweep tolerance [m/s] (default: the world's)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import taichi_terra as tt

    tt.init("cpu", "f64", verbose=False)
    r = trace(args.case, args.step, args.scan, args.sweeps, args.tolerance)
    print(f"{r['case']} step {r['step']}: {r['own_sweeps']} sweeps at {r['tolerance']:.0e} m/s, then "
          f"{r['own_to_reference']:.1e} m/s from the reference ({r['reference_sweeps']} sweeps to 1e-12 m/s)")
    print(f"{'sweeps':>6} {'change [m/s]':>12} {'ratio':>6} {'to ref. [m/s]':>13}  most moved (u index: change)")
    for row in r["rows"]:
        change = f"{row['change']:.2e}" if "change" in row else "-"
        ratio = f"{row['ratio']:.2f}" if row.get("ratio") is not None else "-"
        moved = ", ".join(f"{j}: {v:.1e}" for j, v in row.get("moved", []))
        print(f"{row['sweeps']:>6} {change:>12} {ratio:>6} {row['to_reference']:>13.2e}  {moved}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(r, f, indent=2)
    return r


if __name__ == "__main__":
    main()
