"""Start-up of every demo scene: the first run on a machine (an empty Taichi cache) and a later one (the cache
that run left), each in a new process, as a user meets them.

    python -m perf startup                      # every scene, cold then warm
    python -m perf startup --scenes soil_ruts --warm-runs 3

For each scene a process runs it headless for ``--seconds`` (default 0.05 s simulated) at 320 x 180 pixels and
reports: ``import_s`` (Python, taichi_terra and the scene module), ``compile_s`` (building the world and
compiling its step kernel before the first frame: ``World.compile``) and ``wall_s`` (the process, from start to
exit). A cold run points Taichi's offline cache (``TI_OFFLINE_CACHE_FILE_PATH``) at an empty folder; the warm
runs then reuse that folder (``--warm-only`` skips the cold run: the folder then is Taichi's own cache). Prints
one table (warm figures: the median of ``--warm-runs``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from ..timing import ROOT, median

SMOKE = ["--scenes", "push_boxes", "--warm-only"]
OUT = "startup.json"
SCENES = ["soil_ruts", "slope_and_wall", "many_worlds", "cradle_and_pile", "push_boxes", "robot_crowd",
          "quadruped_terrain", "tracked_robot_steps", "conveyor", "rotating_intruder", "hexapod_sand", "buggy_soil"]

CHILD = """
import importlib.util, json, sys, time
t0 = time.perf_counter()
import taichi_terra
spec = importlib.util.spec_from_file_location("scene", {path!r})
scene = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scene)
t1 = time.perf_counter()
timing = scene.main({argv!r})
print("STARTUP " + json.dumps({{"import_s": t1 - t0, **timing}}))
"""


def run_scene(name: str, cache: str, seconds: float) -> dict:
    """One new process running scene ``name`` with Taichi's offline cache in ``cache``."""
    argv = ["--headless", "--quiet", "--seconds", str(seconds), "--fps", "20", "--width", "320", "--height", "180"]
    code = CHILD.format(path=str(ROOT / "scenes" / f"{name}.py"), argv=argv)
    env = dict(os.environ, TI_OFFLINE_CACHE_FILE_PATH=cache)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"{name}: exit {out.returncode}\n{out.stderr[-2000:]}")
    line = [s for s in out.stdout.splitlines() if s.startswith("STARTUP ")][-1]
    result = json.loads(line[len("STARTUP "):])
    result["process_s"] = wall
    return result


def add_arguments(p) -> None:
    p.add_argument("--scenes", nargs="+", default=SCENES, choices=SCENES)
    p.add_argument("--seconds", type=float, default=0.05, help="simulated seconds per run (default 0.05)")
    p.add_argument("--warm-runs", type=int, default=1, help="warm runs per scene (default 1)")
    p.add_argument("--warm-only", action="store_true", help="no cold run: the warm runs use Taichi's own cache")


def _runs(name: str, args) -> dict:
    if args.warm_only:
        from taichi_terra.backend import offline_cache_path

        cache = str(offline_cache_path())
        return {"cold": None, "warm": [run_scene(name, cache, args.seconds) for _ in range(args.warm_runs)]}
    with tempfile.TemporaryDirectory(prefix="ticache-") as cache:
        cold = run_scene(name, cache, args.seconds)
        return {"cold": cold, "warm": [run_scene(name, cache, args.seconds) for _ in range(args.warm_runs)]}


def run(args) -> dict:
    if args.warm_runs < 1:
        raise SystemExit(f"--warm-runs must be >= 1, got {args.warm_runs}")
    rows = {}
    for name in args.scenes:
        rows[name] = r = _runs(name, args)
        w = {k: median(x[k] for x in r["warm"]) for k in ("compile_s", "process_s")}
        cold = (f"cold: compile {r['cold']['compile_s']:6.1f} s, process {r['cold']['process_s']:6.1f} s | "
                if r["cold"] else "")
        print(f"{name:22s} {cold}warm: compile {w['compile_s']:5.1f} s, process {w['process_s']:5.1f} s", flush=True)
    print()
    print("| scene | cold: first step compile [s] | cold: whole run [s] | warm: compile [s] | warm: whole run [s] |")
    print("|---|---:|---:|---:|---:|")
    for name, r in rows.items():
        w = {k: median(x[k] for x in r["warm"]) for k in ("compile_s", "process_s")}
        cold = f"{r['cold']['compile_s']:.1f} | {r['cold']['process_s']:.1f}" if r["cold"] else "- | -"
        print(f"| {name} | {cold} | {w['compile_s']:.1f} | {w['process_s']:.1f} |")
    return {"seconds": args.seconds, "warm_runs": args.warm_runs, "cpu_count": os.cpu_count(),
            "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d"), "scenes": rows}
