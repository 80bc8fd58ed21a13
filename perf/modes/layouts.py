"""The step's GPU layout against the fused kernel on one backend: env-steps/s of each, and how far apart they end.

    python -m perf layouts [--arch vulkan] [--scenes rigid_sphere soil_plate rft_boxes soil_10k]
                           [--envs 1 32 1024] [--steps 20] [--repeats 3] [--warmup 5]

A world steps in one of two layouts (``World.step_layout``, ``kernels/step.py``): ``fused``, one kernel in which
an env's thread runs every stage of its steps, and ``staged``, the GPU layout: a launch per stage, the static
contact pairs over (env, pair), the soil history over (env, sample row), the sweeps a few per launch and, on the
GPU backends, the RFT plates over (env, plate) before the step in either layout. For each scene and env count it
builds the world once per layout, times its first step (the kernels' compile, or their load from the caches),
runs ``--warmup`` steps, then ``--repeats`` rounds of ``--steps`` steps from that state, the two layouts' rounds
interleaved so that the machine's drift hits both alike. It reports each layout's median env-steps/s, the
staged / fused ratio round by round (median and range), whether either run reported a launch past the Vulkan
driver's loop limit (``get_diverged``: then its figures are of wrong steps, and the row says so), and the
largest distance between the two runs' free bodies after the same steps (0 where both compute alike).

Scenes (``perf/scenes/``): ``rigid_sphere`` (a sphere on a 101 x 101 sine map), ``soil_plate`` (a 20 kg plate on a
41 x 41 bed), ``rft_boxes`` (six boxes with 500 plates each in sand) and ``soil_10k`` (a 1 m plate loading 10,000
samples of a bed at 1 cm, one env: ``--envs`` does not apply to it).
"""
from __future__ import annotations

import numpy as np

from .. import scenes
from ..timing import advance, first_step, median, ratios, round_rate
from . import add_backend_arguments, init_backend

SMOKE = ["--arch", "cpu", "--scenes", "rigid_sphere", "--envs", "1", "--steps", "2", "--repeats", "1",
         "--warmup", "1"]
OUT = "layouts.json"
SCENES = ("rigid_sphere", "soil_plate", "rft_boxes", "soil_10k")
LAYOUTS = ("fused", "staged")
#: scenes run at one env whatever ``--envs`` says
ONE_ENV = ("soil_10k",)


def add_arguments(p) -> None:
    add_backend_arguments(p)
    p.set_defaults(arch="vulkan")
    p.add_argument("--scenes", nargs="+", default=list(SCENES), choices=list(scenes.SCENES))
    p.add_argument("--envs", type=int, nargs="+", default=[1, 32, 1024])
    p.add_argument("--steps", type=int, default=20, help="steps per timed round")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5)


def _positions(world) -> np.ndarray:
    return np.asarray(world.get_state()["position"], float) if world.bodies else np.zeros((world.n_envs, 0, 3))


def measure_pair(name: str, n_envs: int, steps: int, repeats: int, warmup: int) -> dict:
    """Both layouts of scene ``name`` at ``n_envs`` envs, their rounds interleaved (module docstring)."""
    scene = scenes.get(name)
    runs = {}
    for layout in LAYOUTS:
        built = scene.build(n_envs)
        world = built.world
        world.step_layout = layout
        world.build()
        first = first_step(world, built.control, scene.chunk)
        advance(world, warmup, built.control, scene.chunk)
        runs[layout] = {"built": built, "first_step_s": first, "snap": world.checkpoint(), "rates": []}
    for _ in range(repeats):
        for layout in LAYOUTS:
            r = runs[layout]
            r["rates"].append(round_rate(r["built"].world, r["snap"], steps, r["built"].control, scene.chunk))
    out = {"scene": name, "n_envs": n_envs}
    for layout in LAYOUTS:
        r, world = runs[layout], runs[layout]["built"].world
        found = world.get_diverged()
        out[layout] = {"first_step_s": r["first_step_s"], "env_steps_per_s": median(r["rates"]),
                       "env_steps_per_s_all": r["rates"], "ms_per_step": 1e3 * n_envs / median(r["rates"]),
                       "past_loop_limit": sorted({f["stage"] or "step" for f in found.values()
                                                  if "loop limit" in f["what"]}),
                       "diverged_envs": len(found), "sweeps": float(world.get_solver_sweeps().mean())}
    out["staged_over_fused"] = ratios(runs["staged"]["rates"], runs["fused"]["rates"])
    a, b = (_positions(runs[layout]["built"].world) for layout in LAYOUTS)
    out["distance_m"] = float(np.abs(a - b).max()) if a.size else 0.0
    return out


def _cell(r: dict) -> str:
    past = r["past_loop_limit"]
    note = f", past the loop limit in {'/'.join(past)}" if past else ""
    return f"{r['env_steps_per_s']:,.0f} ({r['ms_per_step']:.2f} ms, first {r['first_step_s']:.1f} s{note})"


def run(args) -> dict:
    cfg = init_backend(args.arch, args.precision, args.threads)
    rows = []
    print(f"step layouts on {cfg['arch']} {cfg['precision']}: env-steps/s (ms per step, first step), "
          f"staged / fused median [range], largest distance between the two runs' bodies")
    for name in args.scenes:
        for n_envs in ([1] if name in ONE_ENV else args.envs):
            r = measure_pair(name, n_envs, args.steps, args.repeats, args.warmup)
            rows.append(r)
            ratio = r["staged_over_fused"]
            print(f"{name:14s} {n_envs:5d}  fused {_cell(r['fused'])}  staged {_cell(r['staged'])}  "
                  f"{ratio['median']:.2f} [{ratio['min']:.2f}, {ratio['max']:.2f}]  {r['distance_m']:.1e} m",
                  flush=True)
    return {"backend": cfg, "rows": rows}
