"""The off-road buggy of ``scenes/buggy_soil.py`` driving straight over its soil bed (scene ``buggy``), for several
env counts (each env its own bed: its own sinkage, ruts and slip history over the shared undeformed heights).

    python -m perf buggy [--envs 1 16 256] [--spacing 0.04] [--tolerance 1e-4] [--steps 300] [--repeats 3]

Each case: the first step (compilation included), ``--warmup`` steps driving off from standstill, then
``--repeats`` rounds of the same steps from that state (medians): env-steps/s, ms per step and, for one env, the
real-time factor (dt = 1 ms); the mean sweeps per step of env 0 over 100 steps after the rounds. The solver
tolerance is the scene's (``taichi_terra.bodies.buggy.SOLVER_TOLERANCE``, with its error bound) unless ``--tolerance`` says
otherwise (the world's default is 1e-6 m/s).
"""
from __future__ import annotations

import os

import numpy as np

from .. import scenes
from ..scenes.vehicles import DT, make_buggy
from ..timing import Window, measure, public
from . import init_backend

SMOKE = ["--envs", "1", "--steps", "3", "--env-steps", "3", "--repeats", "1", "--warmup", "2", "--sweep-steps", "2"]
OUT = "buggy.json"


def add_arguments(p) -> None:
    p.add_argument("--envs", type=int, nargs="+", default=[1, 16, 256])
    p.add_argument("--spacing", type=float, default=0.04, help="bed sample spacing [m]")
    p.add_argument("--tolerance", type=float, default=None,
                   help="sweep tolerance [m/s] (default: the scene's, taichi_terra.bodies.buggy.SOLVER_TOLERANCE)")
    p.add_argument("--steps", type=int, default=300, help="most timed steps per round")
    p.add_argument("--env-steps", type=int, default=3000, help="timed env-steps per round")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=300, help="steps driving off before the rounds")
    p.add_argument("--sweep-steps", type=int, default=100, help="steps after the rounds whose sweeps are averaged")


def bench(n_envs: int, args) -> dict:
    built = scenes.build("buggy", n_envs, spacing=args.spacing)
    world, buggy = built.world, built.parts["buggy"]
    world.solver.tolerance = args.tolerance
    steps = max(5, min(args.steps, args.env_steps // n_envs))
    run = measure(world, Window(steps, args.repeats, args.warmup))
    speed = float(np.mean(buggy.system.get_generalized_velocity()[:, 0]))
    sweeps = []
    for _ in range(args.sweep_steps):
        world.step(1)
        sweeps.append(int(world.get_solver_sweeps(0)))
    bed = world.heightmaps[0]
    return {"n_envs": n_envs, "spacing": args.spacing, "timed_steps": steps, **public(run),
            "real_time_factor": run["env_steps_per_s"] * DT / n_envs, "tolerance": world.solver.tolerance,
            "mean_sweeps": float(np.mean(sweeps)), "forward_speed_end": speed,
            "n_soil_samples_per_env": bed.x_samples * bed.y_samples}


def run(args) -> dict:
    if args.tolerance is None:
        args.tolerance = make_buggy().SOLVER_TOLERANCE
    cfg = init_backend("cpu", "f64")
    threads = cfg["threads"] or os.cpu_count()
    print(f"cpu, f64, {threads} threads, bed 16 m x 6 m at {args.spacing} m, dt {DT} s, sweep tolerance "
          f"{args.tolerance:g} m/s")
    results = []
    for n in args.envs:
        r = bench(n, args)
        results.append(r)
        print(f"{n:5d} envs: {r['env_steps_per_s']:9,.0f} env-steps/s, {r['ms_per_step']:8.2f} ms per step "
              f"(real time x{r['real_time_factor']:.2f} per env), {r['timed_steps']} steps/round, first step "
              f"{r['first_step_s']:.1f} s, {r['mean_sweeps']:.1f} sweeps/step, {r['n_soil_samples_per_env']} samples "
              f"per bed, speed {r['forward_speed_end']:.3f} m/s", flush=True)
    return {"threads": threads, "results": results}
