"""The off-road buggy of ``scenes/buggy_soil.py`` driving straight over its soil bed, for several env counts
(each env its own bed: its own sinkage, ruts and slip history over the shared undeformed heights).

    python -m perf.bench_buggy [--envs 1 16 256] [--spacing 0.04] [--tolerance 1e-4] [--steps 300] [--repeats 3]

Each case: the first step (compilation included), ``--warmup`` steps driving off from standstill, then
``--repeats`` rounds of the same steps from that state (medians): env-steps/s, ms per step and, for one env,
the real-time factor (dt = 1 ms); the mean sweeps per step of env 0 over 100 steps after the rounds. The solver tolerance is
the scene's (``make_buggy.SOLVER_TOLERANCE``, with its error bound) unless ``--tolerance`` says otherwise (the
world's default is 1e-6 m/s). JSON goes to perf/results/buggy.json.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

from .timing import first_step, round_rate

ROOT = Path(__file__).resolve().parents[1]
DT = 1e-3  # [s], as the scene
SOIL = dict(bekker_kphi=2.0e6, elastic_stiffness=2.0e7, damping=4.0e4, sinkage_exponent=1.1, cohesion=100.0)


def buggy_world(n_envs: int, spacing: float, tolerance: float | None = None):
    """The scene's bed (16 m x 6 m at ``spacing``) and the buggy at its start, its rear drives requesting
    0.8 m/s and its wheels straight; the sweeps' ``tolerance`` [m/s] (None: the world's default)."""
    import taichi_terra as tt

    sys.path.insert(0, str(ROOT / "scenes" / "assets"))
    import make_buggy as mb

    world = tt.World(dt=DT, n_envs=n_envs)
    if tolerance is not None:
        world.solver.tolerance = tolerance
    nx, ny = round(16.0 / spacing) + 1, round(6.0 / spacing) + 1
    world.add_deformable_terrain(nx, ny, 16.0, 6.0, 0.0, 0.0, np.zeros(nx * ny), tt.SoilMaterial(**SOIL))
    buggy = mb.add_buggy(world, position=(-6.0, 0.0, mb.RIDE_HEIGHT), speed=0.8)
    return world, buggy


def bench(n_envs: int, args) -> dict:
    world, buggy = buggy_world(n_envs, args.spacing, args.tolerance)
    first = first_step(world)
    world.step(args.warmup)
    snap = world.checkpoint()
    steps = max(5, min(args.steps, args.env_steps // n_envs))
    rates = [round_rate(world, snap, steps) for _ in range(args.repeats)]
    rate = statistics.median(rates)
    speed = float(np.mean(buggy.system.get_generalized_velocity()[:, 0]))
    sweeps = []
    for _ in range(100):
        world.step(1)
        sweeps.append(int(world.get_solver_sweeps(0)))
    return {"n_envs": n_envs, "spacing": args.spacing, "first_step_s": first, "timed_steps": steps,
            "env_steps_per_s": rate, "env_steps_per_s_all": rates, "ms_per_step": 1e3 * n_envs / rate,
            "real_time_factor": rate * DT / n_envs, "tolerance": world.solver.tolerance,
            "mean_sweeps": float(np.mean(sweeps)),
            "forward_speed_end": speed, "n_soil_samples_per_env": world.heightmaps[0].x_samples
            * world.heightmaps[0].y_samples}


def main(argv=None) -> list:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, nargs="+", default=[1, 16, 256])
    p.add_argument("--spacing", type=float, default=0.04, help="bed sample spacing [m]")
    p.add_argument("--tolerance", type=float, default=None,
                   help="sweep tolerance [m/s] (default: the scene's, make_buggy.SOLVER_TOLERANCE)")
    p.add_argument("--steps", type=int, default=300, help="most timed steps per round")
    p.add_argument("--env-steps", type=int, default=3000, help="timed env-steps per round")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=300, help="steps driving off before the rounds")
    p.add_argument("--out", default=str(ROOT / "perf" / "results" / "buggy.json"))
    args = p.parse_args(argv)
    if args.tolerance is None:
        sys.path.insert(0, str(ROOT / "scenes" / "assets"))
        import make_buggy as mb

        args.tolerance = mb.SOLVER_TOLERANCE
    import taichi_terra as tt

    tt.init("cpu", "f64")
    import taichi as ti

    threads = ti.lang.impl.current_cfg().cpu_max_num_threads
    print(f"cpu, f64, {threads} Taichi threads, bed 16 m x 6 m at {args.spacing} m, dt {DT} s, sweep tolerance "
          f"{args.tolerance:g} m/s")
    results = []
    for n in args.envs:
        r = bench(n, args)
        results.append(r)
        print(f"{n:5d} envs: {r['env_steps_per_s']:9,.0f} env-steps/s, {r['ms_per_step']:8.2f} ms per step "
              f"(real time x{r['real_time_factor']:.2f} per env), {r['timed_steps']} steps/round, first step "
              f"{r['first_step_s']:.1f} s, {r['mean_sweeps']:.1f} sweeps/step, {r['n_soil_samples_per_env']} samples "
              f"per bed, speed {r['forward_speed_end']:.3f} m/s", flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"threads": threads, "results": results}, f, indent=1)
    return results


if __name__ == "__main__":
    main()
