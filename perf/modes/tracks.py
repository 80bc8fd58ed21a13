"""Tracked robots: the templated robot of ``spec/tracks.md`` (two side tracks, two flipper tracks) on a height
map, for several env counts, and what its belt rows cost against plain rigid rows.

    python -m perf tracks [--envs 1 64 1024] [--steps 300] [--repeats 3]

Cases (each timed as ``python -m perf articulated`` times its cases: the first step, then ``--repeats`` rounds
of the same ``--steps`` steps from one state after ``--warmup``, medians, sweeps per step):

* ``tracked_driving`` (scene ``tracked``): sprockets velocity-controlled at 4 rad/s over gentle ridges (0.02 m,
  3 m long);
* ``tracked_standing``: the same robot holding its sprockets still (velocity target 0);
* ``plain_standing`` (scene ``tracked_plain``): the same robot with its belts' shapes as ordinary collision
  shapes of their links (no ``<track>``: contacts are plain rigid rows on the links, none merged, none pushing a
  drive), holding its sprockets still. Against ``tracked_standing`` this is the cost of belt rows on the same
  geometry.
"""
from __future__ import annotations

from ..timing import Window
from . import init_backend
from .articulated import measure_case, tree_only_kernel

SMOKE = ["--envs", "1", "--steps", "3", "--repeats", "1", "--warmup", "2"]
OUT = "tracks.json"
CASES = (("tracked_driving", "tracked"), ("tracked_standing", "tracked_standing"), ("plain_standing", "tracked_plain"))


def add_arguments(p) -> None:
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--steps", type=int, default=300, help="timed steps per round")
    p.add_argument("--repeats", type=int, default=3, help="rounds")
    p.add_argument("--warmup", type=int, default=100)


def run(args) -> dict:
    init_backend("cpu", "f64")
    kernel = tree_only_kernel()
    window = Window(args.steps, args.repeats, args.warmup)
    results, rates = [], {}
    for n in args.envs:
        for name, scene in CASES:
            row = {"model": name, "engine": "taichi_terra", **measure_case(scene, n, window, kernel)}
            rates[(name, n)] = row["env_steps_per_s"]
            results.append(row)
            print(f"{name:18s} {n:5d} envs ({row['dof']} dof): {row['env_steps_per_s']:10,.0f} env-steps/s, "
                  f"{row['sweeps']:.1f} sweeps ({row['sweep_cap_share']:.0%} of steps at the cap), "
                  f"first step {row['first_step_s']:.1f} s", flush=True)
        ratio = rates[("tracked_standing", n)] / rates[("plain_standing", n)]
        results.append({"n_envs": n, "belt_rows_over_plain_rows_rate": ratio})
        print(f"{'':18s} {n:5d} envs: belt rows run at {ratio:.2f}x the rate of plain rigid rows", flush=True)
    return {"results": results}
