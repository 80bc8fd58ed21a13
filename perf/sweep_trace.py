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

``--rows N`` adds the N solver rows whose impulse the last sweep (the ``--sweeps``-th) changed most: each row's
kind (contact, soil, limit, joint friction, pin, merged), the body its side b is (the link a contact or soil
point pushes), its belt (-1: none), its impulse after that sweep and the sweep's change of it (in the row's
frame: normal, then the two tangents, [N s]), and its impulse in the reference. Rows that trade impulse in
opposite pairs while the velocities hardly move show the directions the sweeps are slow along.

    python -m perf.sweep_trace --case quadruped_soil --step 1141 --sweeps 12 --rows 6
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from .bench_solver import BUILD, CASES, _run

#: ``ROW_I.kind``'s values (``kernels/common/layout.py``), named
ROW_KINDS = ("contact", "soil", "limit", "joint friction", "pin", "merged")


def trace(case: str, step: int | None = None, scan: int = 1000, sweeps: int = 40, tolerance: float | None = None,
          reference_tolerance: float = 1e-12, reference_sweeps: int = 100_000, rows: int = 0) -> dict:
    """The rows described in the module's docstring, for step ``step`` of ``case`` (None: the step with the most
    sweeps among the first ``scan``), with the ``rows`` solver rows the last sweep changed most
    (``"solver_rows"``)."""
    if rows < 0:
        raise ValueError(f"rows must be >= 0, got {rows}")
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

    def impulses():
        return world._scratch.block("scratch_f", "row", "impulse")[0].copy()

    try:
        own, own_sweeps = u_after(saved[0], saved[1])
        reference, reference_count = u_after(reference_tolerance, reference_sweeps)
        reference_impulse = impulses()
        table, last_u, last_change, last_impulse = [], None, None, None
        for k in range(1, sweeps + 1):
            if k == sweeps:
                last_impulse = impulses()  # (after k - 1 sweeps)
            u, taken = u_after(saved[0], k)
            row = {"sweeps": k, "taken": taken, "to_reference": float(np.abs(u - reference).max())}
            if last_u is not None:
                d = u - last_u
                change = float(np.abs(d).max())
                row["change"] = change
                row["ratio"] = change / last_change if last_change else None
                row["moved"] = [[int(j), float(d[j])] for j in np.argsort(-np.abs(d))[:4] if d[j] != 0.0]
                last_change = change
            table.append(row)
            last_u = u
        solver_rows = []
        if rows and sweeps > 1:
            after = impulses()
            change = after - last_impulse
            scratch = world._scratch
            kind, side_b, belt = (scratch.block("scratch_i", "row", c)[0, :, 0]
                                  for c in ("kind", "side_b", "belt_b"))
            for r in np.argsort(-np.abs(change).max(axis=1), kind="stable")[:rows]:
                if not change[r].any():
                    break
                solver_rows.append({"row": int(r), "kind": ROW_KINDS[int(kind[r])], "body": int(side_b[r]),
                                    "belt": int(belt[r]), "impulse": after[r].tolist(),
                                    "change": change[r].tolist(), "reference": reference_impulse[r].tolist()})
    finally:
        world.restore(here)
        world.solver.tolerance, world.solver.max_sweeps = saved
    return {"case": case, "step": step, "tolerance": saved[0], "own_sweeps": own_sweeps,
            "own_to_reference": float(np.abs(own - reference).max()), "reference_sweeps": reference_count,
            "rows": table, "solver_rows": solver_rows}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", default="tracked", choices=CASES)
    p.add_argument("--step", type=int, default=None, help="the step to trace (default: the one with most sweeps)")
    p.add_argument("--scan", type=int, default=1000, help="steps searched for the one with most sweeps")
    p.add_argument("--sweeps", type=int, default=40, help="sweep counts to replay the step with")
    p.add_argument("--tolerance", type=float, default=None, help="sweep tolerance [m/s] (default: the world's)")
    p.add_argument("--rows", type=int, default=0, help="solver rows the last sweep changed most, to list")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import taichi_terra as tt

    tt.init("cpu", "f64", verbose=False)
    r = trace(args.case, args.step, args.scan, args.sweeps, args.tolerance, rows=args.rows)
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
    if args.out:
        with open(args.out, "w") as f:
            json.dump(r, f, indent=2)
    return r


if __name__ == "__main__":
    main()
