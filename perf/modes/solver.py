"""Sweeps per step and real-time factors of the scenes whose step is mostly the contact and soil solve, at one
env, at the world's default tolerance (or ``--tolerance``):

- ``ruts``: ``scenes/soil_ruts.py`` (a sled, a wheel and a ball dropped, dragged and lifted on a 7,865-sample
  bed), its 6 s timeline with the scene's own controller, applied every 50 steps as the scene does;
- ``buggy``: the buggy of ``scenes/buggy_soil.py`` driving off from standstill on its 16 m x 6 m bed at 4 cm;
- ``quadruped_soil``: the 30 kg quadruped under PD standing on a soil bed;
- ``quadruped_fixed``: the same robot welded to the world at its trunk (``base="fixed"``), 2 mm below where the
  free one settles, its feet pressed into the same bed: what the feet's soil takes without the trunk coupling
  them;
- ``tracked``: the tracked robot driving over the sine height map of ``python -m perf tracks``;
- ``buggy_50m``: the buggy driving off on a 50 m x 50 m bed at 5 cm (1001 x 1001 samples, about a million:
  the size of Project Chrono's SCM benchmark patch), with the memory one env's arrays take.

    python -m perf solver [--cases ruts buggy ...] [--tolerance 1e-6] [--seconds S] [--repeats 3]
                          [--row-by-row] [--no-pin-blocks] [--no-soil-groups]

Each case is the scene of that name (perf/scenes/), its timeline ``Scene.seconds`` long. ``--row-by-row`` sweeps
the soil points one by one (``SolverConfig.soil_block=False``) instead of solving each body's soil points as a
block; ``--no-pin-blocks`` sweeps each pin on its own (``SolverConfig.pin_block=False``) instead of a tree's pins
together with its rows pushing it with them held; ``--no-soil-groups`` solves each tree link's soil block on its
own (``SolverConfig.tree_soil_block=False``) instead of a tree's wheels together.

Each case compiles first (not timed), then runs its timeline ``--repeats`` times from the same checkpoint; the
wall time is the median. A further run steps one step at a time to record the sweeps of every step (mean, 95th
percentile, max, share at the cap). Real-time factor = simulated time / wall time.
"""
from __future__ import annotations

import time

import numpy as np

from taichi_terra.sweep_trace import run_steps

from .. import scenes
from ..timing import median
from . import init_backend

CASES = ("ruts", "buggy", "quadruped_soil", "quadruped_fixed", "tracked", "buggy_50m")
SMOKE = ["--cases", "quadruped_soil", "--seconds", "0.005", "--repeats", "1"]
OUT = "solver.json"


def add_arguments(p) -> None:
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    p.add_argument("--tolerance", type=float, default=None, help="sweep tolerance [m/s] (default: the world's)")
    p.add_argument("--seconds", type=float, default=None, help="simulated time per case [s] (default: its own)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--row-by-row", action="store_true", help="sweep soil points one by one (no soil blocks)")
    p.add_argument("--no-pin-blocks", action="store_true", help="sweep each pin on its own (no pin blocks)")
    p.add_argument("--no-soil-groups", action="store_true",
                   help="solve each tree link's soil block on its own (no soil groups)")


def build_case(case: str, tolerance=None):
    """Scene ``case`` in one env at sweep ``tolerance`` (None: the world's); returns (built, scene)."""
    scene = scenes.get(case)
    built = scene.build(1)
    if tolerance is not None:
        built.world.solver.tolerance = tolerance
    return built, scene


def env_bytes(world) -> int:
    """Bytes one env's arrays take (State, Control and Scratch; the Model is shared by all envs)."""
    import taichi as ti

    from taichi_terra.backend import ti_real
    from taichi_terra.kernels.common import arrays as A

    real = 8 if ti_real() == ti.f64 else 4
    return sum(world._model.layouts[a.name].size * {"i32": 4, "i64": 8}.get(a.dtype, real)
               for a in A.ARENAS if a.per_env)


def measure(case: str, args) -> dict:
    import taichi as ti

    built, scene = build_case(case, args.tolerance)
    world, controller, chunk = built.world, built.control, scene.chunk
    world.solver.soil_block = not args.row_by_row
    world.solver.pin_block = not args.no_pin_blocks
    world.solver.tree_soil_block = not args.no_soil_groups
    sim_s = args.seconds if args.seconds is not None else scene.seconds
    steps = round(sim_s / world.dt)
    t = time.perf_counter()
    world.compile()
    compile_s = time.perf_counter() - t
    start = world.checkpoint()
    walls = []
    for _ in range(args.repeats):
        world.restore(start)
        ti.sync()
        t = time.perf_counter()
        run_steps(world, steps, controller, chunk)
        ti.sync()
        walls.append(time.perf_counter() - t)
    world.restore(start)
    sweeps = np.array(run_steps(world, steps, controller, chunk, one_by_one=True))
    wall = median(walls)
    return {"case": case, "tolerance": world.solver.tolerance, "soil_block": not args.row_by_row,
            "pin_block": not args.no_pin_blocks, "soil_group": not args.no_soil_groups, "simulated_s": sim_s,
            "steps": steps, "compile_s": compile_s, "wall_s": wall, "real_time_factor": sim_s / wall,
            "ms_per_step": 1e3 * wall / steps, "sweeps_mean": float(sweeps.mean()),
            "sweeps_p95": float(np.percentile(sweeps, 95)), "sweeps_max": int(sweeps.max()),
            "cap_share": float(np.mean(sweeps >= world.solver.max_sweeps)), "env_bytes": env_bytes(world)}


def run(args) -> dict:
    init_backend("cpu", "f64")
    results = []
    mode = (" row by row" if args.row_by_row else "") + (" no pin blocks" if args.no_pin_blocks else "") + \
        (" no soil groups" if args.no_soil_groups else "")
    for case in args.cases:
        r = measure(case, args)
        results.append(r)
        print(f"{case:15s} tol {r['tolerance']:.0e}{mode}: {r['real_time_factor']:6.2f}x real time "
              f"({r['ms_per_step']:.3f} ms/step), sweeps mean {r['sweeps_mean']:.2f}, p95 {r['sweeps_p95']:.0f}, "
              f"max {r['sweeps_max']} ({r['cap_share']:.0%} at the cap); compile {r['compile_s']:.1f} s; "
              f"{r['env_bytes'] / 2 ** 20:.1f} MiB per env", flush=True)
    return {"results": results}
