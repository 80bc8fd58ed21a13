"""Start-up of every demo scene: the first run on a machine (an empty Taichi cache) and a later one (the cache
that run left), each in a new process, as a user meets them.

    python -m perf.bench_startup                      # every scene, cold then warm
    python -m perf.bench_startup --scenes soil_ruts --warm-runs 3

For each scene a process runs it headless for ``--seconds`` (default 0.05 s simulated) at 320 x 180 pixels and
reports: ``import_s`` (Python, taichi_terra and the scene module), ``compile_s`` (building the world and
compiling its step kernel before the first frame: ``World.compile``) and ``wall_s`` (the process, from start to
exit). A cold run points Taichi's offline cache (``TI_OFFLINE_CACHE_FILE_PATH``) at an empty folder; the warm
runs then reuse that folder. Prints one table (warm figures: the median of ``--warm-runs``) and writes JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", nargs="+", default=SCENES, choices=SCENES)
    p.add_argument("--seconds", type=float, default=0.05, help="simulated seconds per run (default 0.05)")
    p.add_argument("--warm-runs", type=int, default=1, help="warm runs per scene (default 1)")
    p.add_argument("--out", default=str(ROOT / "perf" / "results" / "startup.json"))
    args = p.parse_args(argv)
    if args.warm_runs < 1:
        p.error(f"--warm-runs must be >= 1, got {args.warm_runs}")
    rows = {}
    for name in args.scenes:
        with tempfile.TemporaryDirectory(prefix="ticache-") as cache:
            cold = run_scene(name, cache, args.seconds)
            warm = [run_scene(name, cache, args.seconds) for _ in range(args.warm_runs)]
        rows[name] = {"cold": cold, "warm": warm}
        w = {k: statistics.median(r[k] for r in warm) for k in ("compile_s", "process_s")}
        print(f"{name:22s} cold: compile {cold['compile_s']:6.1f} s, process {cold['process_s']:6.1f} s | "
              f"warm: compile {w['compile_s']:5.1f} s, process {w['process_s']:5.1f} s", flush=True)
    print()
    print("| scene | cold: first step compile [s] | cold: whole run [s] | warm: compile [s] | warm: whole run [s] |")
    print("|---|---:|---:|---:|---:|")
    for name, r in rows.items():
        w = {k: statistics.median(x[k] for x in r["warm"]) for k in ("compile_s", "process_s")}
        print(f"| {name} | {r['cold']['compile_s']:.1f} | {r['cold']['process_s']:.1f} | {w['compile_s']:.1f} | "
              f"{w['process_s']:.1f} |")
    result = {"seconds": args.seconds, "warm_runs": args.warm_runs, "cpu_count": os.cpu_count(),
              "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d"), "scenes": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
