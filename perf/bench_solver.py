"""Sweeps per step and real-time factors of the scenes whose step is mostly the contact and soil solve, at one
env, at the world's default tolerance (or ``--tolerance``):

- ``ruts``: ``scenes/soil_ruts.py`` (a sled, a wheel and a ball dropped, dragged and lifted on a 7,865-sample
  bed), its 6 s timeline with the scene's own controller, applied every 50 steps as the scene does;
- ``buggy``: the buggy of ``scenes/buggy_soil.py`` driving off from standstill on its 16 m x 6 m bed at 4 cm;
- ``quadruped_soil``: the 30 kg quadruped under PD standing on a soil bed (the tests' ``_standing_quadruped``);
- ``quadruped_fixed``: the same robot welded to the world at its trunk (``base="fixed"``), 2 mm below where the
  free one settles, its feet pressed into the same bed: what the feet's soil takes without the trunk coupling
  them;
- ``tracked``: the tracked robot driving over the sine height map of ``perf.bench_tracks``;
- ``buggy_50m``: the buggy driving off on a 50 m x 50 m bed at 5 cm (1001 x 1001 samples, about a million:
  the size of Project Chrono's SCM benchmark patch), with the memory one env's arrays take.

    python -m perf.bench_solver [--cases ruts buggy ...] [--tolerance 1e-6] [--seconds S] [--repeats 3]
                                [--row-by-row] [--no-pin-blocks] [--no-soil-groups]

``--row-by-row`` sweeps the soil points one by one (``SolverConfig.soil_block=False``) instead of solving
each body's soil points as a block; ``--no-pin-blocks`` sweeps each pin on its own
(``SolverConfig.pin_block=False``) instead of a tree's pins together with its rows pushing it with them held;
``--no-soil-groups`` solves each tree link's soil block on its own (``SolverConfig.tree_soil_block=False``)
instead of a tree's wheels together.

Each case compiles first (not timed), then runs its timeline ``--repeats`` times from the same checkpoint;
the wall time is the median. A further run steps one step at a time to record the sweeps of every step
(mean, 95th percentile, max, share at the cap). Real-time factor = simulated time / wall time. JSON goes to
perf/results/solver.json.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CASES = ("ruts", "buggy", "quadruped_soil", "quadruped_fixed", "tracked", "buggy_50m")


def _ruts(tolerance):
    sys.path.insert(0, str(ROOT / "scenes"))
    import soil_ruts

    scene = soil_ruts.build(types.SimpleNamespace(envs=1, seconds=6.0))
    world = scene.world
    if tolerance is not None:
        world.solver.tolerance = tolerance
    return world, 6.0, scene.controller, 50


def _buggy(tolerance):
    from .bench_buggy import buggy_world

    world, _buggy = buggy_world(1, 0.04, tolerance)
    return world, 3.0, None, 0


def _buggy_50m(tolerance):
    import taichi_terra as tt

    from .bench_buggy import DT, SOIL

    sys.path.insert(0, str(ROOT / "scenes" / "assets"))
    import make_buggy as mb

    world = tt.World(dt=DT, n_envs=1)
    if tolerance is not None:
        world.solver.tolerance = tolerance
    n = 1001
    world.add_deformable_terrain(n, n, 50.0, 50.0, 0.0, 0.0, np.zeros(n * n), tt.SoilMaterial(**SOIL))
    mb.add_buggy(world, position=(-20.0, 0.0, mb.RIDE_HEIGHT), speed=0.8)
    return world, 3.0, None, 0


def env_bytes(world) -> int:
    """Bytes one env's arrays take (State, Control and Scratch; the Model is shared by all envs)."""
    import taichi as ti

    from taichi_terra.backend import ti_real
    from taichi_terra.kernels.common import arrays as A

    real = 8 if ti_real() == ti.f64 else 4
    return sum(world._model.layouts[a.name].size * {"i32": 4, "i64": 8}.get(a.dtype, real)
               for a in A.ARENAS if a.per_env)


def _quadruped_soil(tolerance, base="floating", height=0.45):
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=1)
    if tolerance is not None:
        world.solver.tolerance = tolerance
    n = 41
    mat = tt.SoilMaterial(bekker_kphi=2e7, sinkage_exponent=1.0, damping=2e4)
    world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n), mat)
    system = world.add_articulated_system((ROOT / "tests" / "data" / "urdf" / "quadruped.urdf").read_text(),
                                          base=base, position=(0.0, 0.0, height))
    free = 6 if base == "floating" else 0
    q = system.get_generalized_coordinate(0)
    q[q.size - 12:] = [0.0, 0.6, -1.2] * 4
    system.set_generalized_coordinate(q)
    system.set_pd_gains(np.r_[np.zeros(free), np.full(12, 300.0)], np.r_[np.zeros(free), np.full(12, 20.0)])
    system.set_pd_target(q, np.zeros(free + 12))
    return world, 2.0, None, 0


def _quadruped_fixed(tolerance):
    return _quadruped_soil(tolerance, base="fixed", height=FREE_TRUNK_HEIGHT - 0.002)


#: where the free quadruped's trunk settles on its bed [m] (measured at 1.5 s, tolerance 1e-6 m/s)
FREE_TRUNK_HEIGHT = 0.40396


def _tracked(tolerance):
    from .bench_tracks import tracked_world

    world, _system = tracked_world(1)
    if tolerance is not None:
        world.solver.tolerance = tolerance
    return world, 2.0, None, 0


BUILD = {"ruts": _ruts, "buggy": _buggy, "quadruped_soil": _quadruped_soil, "quadruped_fixed": _quadruped_fixed,
         "tracked": _tracked,
         "buggy_50m": _buggy_50m}


def _run(world, steps, controller, chunk, one_by_one=False):
    """Step ``steps`` steps (the controller every ``chunk`` steps); the sweeps of each step if ``one_by_one``."""
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


def measure(case: str, tolerance, repeats: int, seconds, soil_block: bool = True, pin_block: bool = True,
            soil_group: bool = True) -> dict:
    import taichi as ti

    world, sim_s, controller, chunk = BUILD[case](tolerance)
    world.solver.soil_block = soil_block
    if hasattr(world.solver, "pin_block"):  # (bench an older revision too: perf/ab.py)
        world.solver.pin_block = pin_block
    if hasattr(world.solver, "tree_soil_block"):
        world.solver.tree_soil_block = soil_group
    if seconds is not None:
        sim_s = seconds
    steps = round(sim_s / world.dt)
    t = time.perf_counter()
    world.compile()
    compile_s = time.perf_counter() - t
    start = world.checkpoint()
    walls = []
    for _ in range(repeats):
        world.restore(start)
        ti.sync()
        t = time.perf_counter()
        _run(world, steps, controller, chunk)
        ti.sync()
        walls.append(time.perf_counter() - t)
    world.restore(start)
    sweeps = np.array(_run(world, steps, controller, chunk, one_by_one=True))
    wall = statistics.median(walls)
    cap = world.solver.max_sweeps
    return {"case": case, "tolerance": world.solver.tolerance, "soil_block": soil_block, "pin_block": pin_block,
            "soil_group": soil_group,
            "simulated_s": sim_s, "steps": steps,
            "compile_s": compile_s, "wall_s": wall, "real_time_factor": sim_s / wall,
            "ms_per_step": 1e3 * wall / steps, "sweeps_mean": float(sweeps.mean()),
            "sweeps_p95": float(np.percentile(sweeps, 95)), "sweeps_max": int(sweeps.max()),
            "cap_share": float(np.mean(sweeps >= cap)), "env_bytes": env_bytes(world)}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    p.add_argument("--tolerance", type=float, default=None, help="sweep tolerance [m/s] (default: the world's)")
    p.add_argument("--seconds", type=float, default=None, help="simulated time per case [s] (default: its own)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--row-by-row", action="store_true", help="sweep soil points one by one (no soil blocks)")
    p.add_argument("--no-pin-blocks", action="store_true", help="sweep each pin on its own (no pin blocks)")
    p.add_argument("--no-soil-groups", action="store_true",
                   help="solve each tree link's soil block on its own (no soil groups)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import taichi_terra as tt

    tt.init("cpu", "f64")
    results = []
    for case in args.cases:
        r = measure(case, args.tolerance, args.repeats, args.seconds, not args.row_by_row, not args.no_pin_blocks,
                    not args.no_soil_groups)
        results.append(r)
        mode = (" row by row" if args.row_by_row else "") + (" no pin blocks" if args.no_pin_blocks else "") + \
            (" no soil groups" if args.no_soil_groups else "")
        print(f"{case:15s} tol {r['tolerance']:.0e}{mode}: {r['real_time_factor']:6.2f}x real time "
              f"({r['ms_per_step']:.3f} ms/step), sweeps mean {r['sweeps_mean']:.2f}, p95 {r['sweeps_p95']:.0f}, "
              f"max {r['sweeps_max']} ({r['cap_share']:.0%} at the cap); compile {r['compile_s']:.1f} s; "
              f"{r['env_bytes'] / 2 ** 20:.1f} MiB per env", flush=True)
    out = args.out or os.path.join(os.path.dirname(__file__), "results", "solver.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=2)
    return {"results": results}


if __name__ == "__main__":
    main()
