"""The sweeps of one step, one by one: how fast the solve converges there, and which velocities it is still moving.

:func:`trace` runs a world to the chosen step (by default the step with the most sweeps in the first ``scan``
steps), its controller applied as a benchmark applies it, and replays that one step from a checkpoint with
``max_sweeps`` = 1, 2, ... ``sweeps`` at the world's tolerance, then once swept to 1e-12 m/s as the reference.
For each sweep count it gives the largest change of the generalized velocities ``u`` (every free body's and
tree's, in the order of the ``u`` array) that the last sweep made, its ratio to the sweep before (the rate of
convergence: the stopping test of ``kernels/solver/sweep.py`` assumes at most ``RHO_MAX``), the four entries of
``u`` it moved most, and how far ``u`` still is from the reference. Where the sweeps stopped by themselves, the
rows repeat.

With ``rows=N`` it adds the N solver rows whose impulse the last sweep changed most: each row's kind (contact,
soil, limit, joint friction, pin, merged), the body its side b is (the link a contact or soil point pushes), its
belt (-1: none), its impulse after that sweep and the sweep's change of it (in the row's frame: normal, then the
two tangents, [N s]), and its impulse in the reference. Rows that trade impulse in opposite pairs while the
velocities hardly move show the directions the sweeps are slow along. ``python -m perf.sweep_trace`` prints it
for the benchmark scenes.
"""
from __future__ import annotations

import numpy as np

#: ``ROW_I.kind``'s values (``kernels/common/layout.py``), named
ROW_KINDS = ("contact", "soil", "limit", "joint friction", "pin", "merged")


def run_steps(world, steps: int, controller=None, chunk: int = 0, one_by_one: bool = False) -> list:
    """Step ``world`` ``steps`` steps, ``controller(world)`` before every ``chunk`` steps (``chunk`` 0: once, before
    all); with ``one_by_one``, one step per call and env 0's sweeps of each step returned (else an empty list)."""
    sweeps = []
    done = 0
    while done < steps:
        n = steps - done if not chunk else min(chunk, steps - done)
        if controller is not None:
            controller(world)
        if one_by_one:
            for _ in range(n):
                world.step(1)
                sweeps.append(int(world.get_solver_sweeps(0)))
        else:
            world.step(n)
        done += n
    return sweeps


def trace(world, *, step: int | None = None, scan: int = 1000, sweeps: int = 40, controller=None, chunk: int = 0,
          rows: int = 0, reference_tolerance: float = 1e-12, reference_sweeps: int = 100_000) -> dict:
    """The rows described in the module's docstring, for step ``step`` of ``world`` from its present state (None:
    the step with the most sweeps among the first ``scan``), driven by ``controller`` every ``chunk`` steps as
    :func:`run_steps` does, at the world's own tolerance, with the ``rows`` solver rows the last sweep changed
    most (``"solver_rows"``). The world is left at the start of the traced step, its solver settings as found."""
    if rows < 0:
        raise ValueError(f"rows must be >= 0, got {rows}")
    world.compile()
    start = world.checkpoint()
    if step is None:
        counts = run_steps(world, scan, controller, chunk, one_by_one=True)
        step = int(np.argmax(counts))
        world.restore(start)
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    run_steps(world, step, controller, chunk)
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
    return {"step": step, "tolerance": saved[0], "own_sweeps": own_sweeps,
            "own_to_reference": float(np.abs(own - reference).max()), "reference_sweeps": reference_count,
            "rows": table, "solver_rows": solver_rows}
