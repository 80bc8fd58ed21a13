"""What the sweep tolerance costs and what it leaves: the soil checks and the soil scenes run at several
tolerances and against a reference swept to 1e-10 m/s (up to 30,000 sweeps a step), in one process.

    python -m perf tolerance [--cases plate wheel ruts buggy quadruped_soil] [--tolerances 1e-3 ... 1e-8]
                             [--seconds S] [--out perf/results/tolerance.json] [--plot docs/img/tolerance.png]

Cases and the figures compared with the reference run (each is what a soil test or a scene reports):

- ``plate``: the soil tests' 20 kg plate settling on a Bekker bed (``kphi = 1e5``, ``n = 1``) for 2 s: its
  sinkage [mm] (closed form 8.175 mm);
- ``wheel``: the soil tests' driven rigid wheel (224 kg) at slips 0.1 and 0.3 on the vehicle bed: its drawbar
  pull [N] (the Janosi integral over the contact) and its sinkage;
- ``ruts``: ``scenes/soil_ruts.py``'s 6 s timeline: where the sled, the wheel and the ball end, and the ruts they
  leave (the bed's heights);
- ``buggy``: the buggy driving off on its 16 m x 6 m bed at 4 cm for 3 s: where its chassis ends, and its ruts;
- ``quadruped_soil``: the 30 kg quadruped under PD standing on soil for 2 s: where its trunk ends, and its
  footprints;
- ``stack``: rigid contacts for comparison: five 20 cm boxes stacked on the ground, each 1 cm off the one
  below, resting for 2 s: where the boxes end.

For every case and tolerance: the largest position difference from the reference over the bodies (free bodies'
positions, articulated bases' positions) [m], the largest difference of the bed's heights (the ruts) [m], the
case's own figure, the mean sweeps per step, and the real-time factor of a run stepped in chunks (the wheel's
carriage is driven from Python every step, so it reports no real-time factor). The plot (error and sweeps against
tolerance) goes to ``--plot``; ``--replot`` redraws it from ``--out`` without running anything. The scenes
``ruts``, ``buggy``, ``quadruped_soil`` and ``stack`` come from perf/scenes/; ``plate`` and ``wheel`` are the soil
tests' own (``tests/test_soil_bed.py``, ``tests/test_soil_wheel.py``), so that their figures are the tests'.
"""
from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

from taichi_terra.sweep_trace import run_steps

from .. import scenes
from ..timing import RESULTS, ROOT
from . import init_backend

SMOKE = ["--cases", "stack", "--tolerances", "1e-3", "--seconds", "0.003"]
OUT = "tolerance.json"
CASES = ("plate", "wheel", "ruts", "buggy", "quadruped_soil", "stack")
TOLERANCES = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
REFERENCE = {"tolerance": 1e-10, "max_sweeps": 30000}


def _test_module(name):
    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plate(solver, seconds):
    import taichi_terra as tt

    bed_tests = _test_module("test_soil_bed")
    mat = tt.SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, damping=3e4)
    world, _bed, plate, R = bed_tests.plate_world(mat)
    _configure(world, solver)
    steps = round((seconds or 2.0) / world.dt)
    run = _stepped(world, steps, None, 0)
    run["figure"] = {"sinkage_m": float(bed_tests.sinkage(plate, R))}
    return run


def _wheel(solver, seconds):
    wheel_tests = _test_module("test_soil_wheel")
    pull, _vertical, sinkage, _slip = wheel_tests.drawbar_run([0.1, 0.3], solver=solver)
    return {"figure": {"pull_N": pull.tolist(), "sinkage_m": sinkage.tolist()}}


def _scene(case):
    def build(solver, seconds):
        scene = scenes.get(case)
        built = scene.build(1)
        _configure(built.world, solver)
        steps = round((seconds or scene.seconds) / built.world.dt)
        return _stepped(built.world, steps, built.control, scene.chunk)

    return build


BUILD = {"plate": _plate, "wheel": _wheel, "ruts": _scene("ruts"), "buggy": _scene("buggy"),
         "quadruped_soil": _scene("quadruped_soil"), "stack": _scene("stack")}


def _configure(world, solver):
    for name, value in solver.items():
        setattr(world.solver, name, value)


def _positions(world) -> np.ndarray:
    """Every free body's position and every articulated system's base position, env 0 [m]."""
    rows = [b.get_position(0) for b in world.bodies]
    rows += [s.get_generalized_coordinate(0)[:3] for s in world.articulated_systems]
    return np.array(rows)


def _heights(world) -> np.ndarray:
    beds = [h for h in world.heightmaps if hasattr(h, "get_soil_state")]
    return np.concatenate([b.get_heights(0).ravel() for b in beds]) if beds else np.zeros(0)


def _stepped(world, steps, controller, chunk) -> dict:
    """Run ``steps`` twice from the start: in chunks, timed, and one step at a time for the sweeps."""
    import taichi as ti

    world.compile()
    start = world.checkpoint()

    def run(one_by_one):
        return np.array(run_steps(world, steps, controller, chunk, one_by_one))

    ti.sync()
    t = time.perf_counter()
    run(False)
    ti.sync()
    wall = time.perf_counter() - t
    world.restore(start)
    sweeps = run(True)
    return {"steps": steps, "simulated_s": steps * world.dt, "wall_s": wall,
            "real_time_factor": steps * world.dt / wall, "sweeps_mean": float(sweeps.mean()),
            "sweeps_max": int(sweeps.max()), "cap_share": float(np.mean(sweeps >= world.solver.max_sweeps)),
            "positions": _positions(world).tolist(), "heights": _heights(world).tolist()}


def _error(run: dict, ref: dict) -> dict:
    out = {}
    if "positions" in run:
        out["position_m"] = float(np.max(np.abs(np.subtract(run["positions"], ref["positions"]))))
        heights = np.subtract(run["heights"], ref["heights"])
        out["heights_m"] = float(np.max(np.abs(heights))) if heights.size else 0.0
    for name, value in run.get("figure", {}).items():
        out[name] = float(np.max(np.abs(np.subtract(value, ref["figure"][name]))))
    return out


def measure(case: str, tolerances, seconds) -> dict:
    ref = BUILD[case](dict(REFERENCE), seconds)
    rows = []
    for tol in tolerances:
        run = BUILD[case]({"tolerance": tol}, seconds)
        rows.append({"tolerance": tol, **{k: run[k] for k in ("real_time_factor", "sweeps_mean", "sweeps_max",
                                                             "cap_share") if k in run},
                     "figure": run.get("figure"), "error": _error(run, ref)})
        e = rows[-1]["error"]
        cost = (f"{run['sweeps_mean']:6.2f} sweeps/step (max {run['sweeps_max']}), "
                f"{run['real_time_factor']:6.2f}x real time; " if "sweeps_mean" in run else "")
        print(f"{case:15s} tol {tol:.0e}: {cost}from the reference: "
              + ", ".join(f"{k} {v:.2e}" for k, v in e.items()), flush=True)
    reference = {k: ref[k] for k in ("real_time_factor", "sweeps_mean", "sweeps_max", "cap_share", "figure")
                 if k in ref}
    if "sweeps_mean" in ref:
        print(f"{case:15s} reference (1e-10, cap 30,000): {ref['sweeps_mean']:.1f} sweeps/step "
              f"(max {ref['sweeps_max']})", flush=True)
    return {"case": case, "reference": reference, "rows": rows}


def plot(results: list, path: str, size=(900, 420)) -> None:
    """Two panels, tolerance on a log axis: the largest error from the reference [m] (positions and ruts,
    whichever is larger), and the mean sweeps per step, one line per case."""
    from PIL import Image, ImageDraw

    colours = {"plate": (120, 120, 120), "wheel": (150, 60, 170), "ruts": (40, 140, 60), "buggy": (220, 80, 30),
               "quadruped_soil": (40, 90, 200), "stack": (0, 0, 0)}
    w, h = size
    image = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(image)
    tols = sorted({r["tolerance"] for c in results for r in c["rows"]})
    lx0, lx1 = np.log10(tols[0]), np.log10(tols[-1])

    def panel(x0, x1, title, label, values, lo, hi):
        top, bottom = 40, h - 70
        d.rectangle([x0, top, x1, bottom], outline="black")
        d.text((x0, 14), title, fill="black")
        d.text((x0 - 60, top - 14), label, fill="black")

        def xy(t, v):
            fx = (np.log10(t) - lx0) / (lx1 - lx0)
            fy = (np.log10(max(v, 10.0 ** lo)) - lo) / (hi - lo)
            return x0 + 10 + (x1 - x0 - 20) * fx, bottom - (bottom - top) * fy

        for t in tols:
            x, y = xy(t, 10.0 ** lo)
            d.line([x, y, x, y + 5], fill="black")
            d.text((x - 12, y + 8), f"{t:.0e}", fill="black")
        for p in range(int(lo), int(hi) + 1):
            x, y = xy(tols[0], 10.0 ** p)
            d.line([x0 - 5, y, x0, y], fill="black")
            d.line([x0, y, x1, y], fill=(230, 230, 230))
            d.text((x0 - 42, y - 6), f"1e{p}", fill="black")
        d.text(((x0 + x1) // 2 - 60, bottom + 26), "tolerance [m/s]", fill="black")
        for case, pts in values.items():
            pts = [xy(t, v) for t, v in pts]
            if len(pts) > 1:
                d.line(pts, fill=colours[case], width=2)
            for x, y in pts:
                d.ellipse([x - 3, y - 3, x + 3, y + 3], fill=colours[case])

    errors = {c["case"]: [(r["tolerance"], max(r["error"].get("position_m", 0.0), r["error"].get("heights_m", 0.0),
                                               r["error"].get("sinkage_m", 0.0)))
                          for r in c["rows"]] for c in results}
    sweeps = {c["case"]: [(r["tolerance"], r["sweeps_mean"]) for r in c["rows"]]
              for c in results if "sweeps_mean" in c["rows"][0]}
    panel(80, w // 2 - 30, "largest position or rut difference from the reference [m]", "", errors, -12, -2)
    panel(w // 2 + 70, w - 20, "sweeps per step (mean)", "", sweeps, 0, 3)
    x = 90
    for case, colour in colours.items():
        if case in errors:
            d.line([x, h - 18, x + 16, h - 18], fill=colour, width=3)
            d.text((x + 20, h - 24), case, fill="black")
            x += 40 + 7 * len(case)
    image.save(path)


def add_arguments(p) -> None:
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    p.add_argument("--tolerances", nargs="+", type=float, default=list(TOLERANCES))
    p.add_argument("--seconds", type=float, default=None, help="simulated time per case [s] (default: its own)")
    p.add_argument("--plot", default=None, help="write the plot here (a .png)")
    p.add_argument("--replot", action="store_true", help="only redraw the plot from --out")


def run(args) -> dict:
    if args.replot:
        results = json.loads(Path(args.out or RESULTS / OUT).read_text())["result"]["results"]
    else:
        init_backend("cpu", "f64")
        results = [measure(case, args.tolerances, args.seconds) for case in args.cases]
    if args.plot:
        plot(results, args.plot)
    return {"results": results}
