"""Every benchmark scene on every backend present, side by side, in one run.

    python -m perf                        # every scene, every backend found, the default env counts
    python -m perf --quick                # a smoke run: cpu f64 and f32, one env per scene, few steps
    python -m perf --backends cpu-f64 vulkan-f32 --scenes rigid_sphere planar_push --envs 1 64

Each backend (``cpu-f64``, ``cpu-f32``, ``vulkan-f32``, ``cuda-f32``, ``cuda-f64``) runs in a process of its own
(Taichi's arch and precision are fixed per process); a backend that cannot start on this machine is listed as
unavailable, not failed. In each, every scene is built for each env count, its first step timed (the kernel's
compile or its load from Taichi's offline cache), ``warmup`` steps run, a checkpoint taken, then ``repeats``
rounds of ``steps`` steps from it are timed. After the first round the positions of env 0 (every free body's
centre, every link frame's origin, every planar object's centre) are kept: each backend's largest distance
from cpu f64's, after the same steps from the same start, is its agreement. Env 0 starts the same at every env
count, so the comparison holds at each.

Output: one JSON file and one markdown table (``perf/results/harness.json``, ``harness.md``; ``--out-dir``)
with env-steps/s, ms per step, first-step time, sweeps per step and the agreement, the peer engines' rates
where ``mujoco`` is installed, and a PNG plot of env-steps/s against n_envs per backend and scene
(``--plot``), by ``perf/harness_report.py``, whose ``SCHEMA`` the JSON follows. The scenes are those of
``perf/scenes/`` with ``harness=True`` (``--scenes`` may name any scene of the registry), at each scene's ``full``
sizes (``--quick``: its ``quick`` ones). ``--out`` names the worker's file (a backend's runs); the result is in
``--out-dir``.

Each scene compiles its own step kernel, with only the parts its world uses, as a user's script does (its
first step is that compile); ``--shared-kernel`` (on in ``--quick``) has the scenes of a backend share one
articulated kernel with every part instead (``taichi_terra.init(specialize=False)``), compiled once.

``--max-envs SCENE`` instead doubles the env count of one scene from ``--envs``' largest until a run fails
(memory) or takes longer than ``--max-run-s``, each attempt in its own process, and reports the largest that ran.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ..scenes import HARNESS, SCENES
from ..timing import RESULTS, ROOT, Window, machine, measure as time_world, public

WRITES_OWN = True  # (harness.json, .md and .png: perf/harness_report.py)
SMOKE = ["--quick", "--backends", "cpu-f64", "--jobs", "1", "--scenes", "rigid_sphere", "planar_push", "--steps", "3",
         "--warmup", "2", "--repeats", "1"]
OUT = "harness.json"
BACKENDS = ("cpu-f64", "cpu-f32", "vulkan-f32", "cuda-f32", "cuda-f64")
#: float32's unit roundoff
EPS32 = 2.0 ** -24


# -- agreement ----------------------------------------------------------------------------------------------------

def f32_tolerance(scene, steps: int) -> float:
    """The largest distance [m] an f32 backend may end from cpu f64 after ``steps`` steps of ``scene``.

    Each step rounds each coordinate to float32, a relative error of at most ``EPS32`` of the scene's length
    ``scale``; over ``steps`` steps these add up at worst linearly, and each step's update is a sum of some
    tens of rounded terms (the contact sweep's impulses, the integrator's terms), counted as 64. So
    ``64 EPS32 scale steps``: 3.8e-6 scale per step... of rounding at worst, 1.9e-4 m after 50 steps at 1 m.
    A contact that opens or closes one step apart in the two precisions can add a step's motion; scenes
    where that happens (piles, chaotic pushes) exceed it, and the test names them."""
    return 64.0 * EPS32 * scene.scale * steps


# -- one backend, in its own process -----------------------------------------------------------------------------

def positions(world) -> np.ndarray:
    """Env 0's positions [m], shape (k, 3): free bodies' centres, link frames' origins (rigid worlds), or
    planar objects' centres (z = 0)."""
    if hasattr(world, "get_poses"):  # planar
        p = np.asarray(world.get_poses(0), np.float64)[:, :2]
        return np.c_[p, np.zeros(len(p))]
    rows = [np.asarray(b.get_position(0), np.float64) for b in world.bodies if not getattr(b, "on_link", False)]
    for system in world.articulated_systems:
        rows += [np.asarray(system.get_frame_position(link, 0), np.float64) for link in system.get_body_names()]
    return np.array(rows).reshape(-1, 3)


def _sweeps(world) -> float:
    if hasattr(world, "get_sweeps"):
        return float(np.mean(world.get_sweeps()))
    return float(np.mean(world.get_solver_sweeps()))


def measure(name: str, n_envs: int, steps: int, repeats: int, warmup: int) -> dict:
    """Scene ``name`` at one env count on the process's backend (``perf.timing.measure``), and env 0's positions
    after the first round."""
    scene = SCENES[name]
    t = time.perf_counter()
    built = scene.build(n_envs)
    build_s = time.perf_counter() - t
    world = built.world
    run = time_world(world, Window(steps, repeats, warmup), built.control, scene.chunk,
                     after_round=lambda k, _snap: (_sweeps(world), positions(world) if k == 0 else None))
    found = world.get_diverged() if hasattr(world, "get_diverged") else {}
    if found:  # (a diverged env stands still: its rate and positions would mislead)
        e = min(found)
        raise RuntimeError(f"env {e} diverged after its step {found[e]['step']}: {found[e]['what']}")
    sweeps = [s for s, _ in run["after_round"]]
    pos = run["after_round"][0][1]
    return {"scene": name, "n_envs": n_envs, "steps": steps, "warmup": warmup, "build_s": build_s,
            **public(run), "sweeps_per_step": float(np.median(sweeps)), "finite": bool(np.isfinite(pos).all()),
            "positions": pos.tolist()}


def worker(backend: str, scenes: list, envs: dict, steps: dict, repeats: int, warmup: dict, out: str,
           threads: int | None, specialize: bool = True) -> int:
    """Run ``scenes`` on ``backend`` and write the runs to ``out`` (JSON); exit code 3 when the backend cannot
    start here."""
    import taichi_terra as tt

    arch, precision = backend.split("-")
    t = time.perf_counter()
    try:
        tt.init(arch, precision, threads=threads, specialize=specialize)
    except Exception as exc:  # (no such device or driver on this machine)
        with open(out, "w") as f:
            json.dump({"backend": backend, "available": False, "reason": f"{type(exc).__name__}: {exc}"}, f)
        return 3
    result = {"backend": backend, "available": True, "init_s": time.perf_counter() - t, "runs": []}
    for name in scenes:
        for n in envs[name]:
            try:
                run = measure(name, n, steps[name], repeats, warmup[name])
            except Exception as exc:  # (a run that does not fit, say, is reported and the others go on)
                run = {"scene": name, "n_envs": n, "error": f"{type(exc).__name__}: {exc}"[:500]}
            result["runs"].append(run)
            with open(out, "w") as f:  # (written after every run: a crash keeps what ran)
                json.dump(result, f)
            print(f"  {backend:10s} {name:13s} n_envs={n:<6d} " + (
                f"{run['env_steps_per_s']:>12,.0f} env-steps/s  first step {run['first_step_s']:.2f} s"
                if "error" not in run else f"error: {run['error'][:80]}"), flush=True)
    return 0


# -- the whole run -----------------------------------------------------------------------------------------------

def _start_backend(backend: str, args, scenes: list, envs: dict, steps: dict, tmp: Path):
    """Start ``backend``'s worker process; returns what :func:`_finish_backend` takes."""
    warmup = {s: args.warmup if args.warmup is not None else
              (SCENES[s].quick if args.quick else SCENES[s].full).warmup for s in scenes}
    out = tmp / f"harness_{backend}.json"
    if out.exists():
        out.unlink()
    cmd = [sys.executable, "-m", "perf", "backends", "--worker", backend, "--scenes", *scenes,
           "--envs-json", json.dumps(envs), "--steps-json", json.dumps(steps), "--repeats", str(args.repeats),
           "--warmup-json", json.dumps(warmup), "--out", str(out)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if args.shared_kernel:
        cmd += ["--shared-kernel"]
    return backend, out, time.perf_counter(), subprocess.Popen(cmd, cwd=ROOT)


def _finish_backend(started, timeout: float) -> dict:
    backend, out, t, proc = started
    try:
        code = proc.wait(timeout=max(1.0, timeout - (time.perf_counter() - t)))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = "timeout"
    data = json.loads(out.read_text()) if out.exists() else {"backend": backend, "available": True, "runs": []}
    out.unlink(missing_ok=True)
    data["wall_s"] = time.perf_counter() - t
    if code not in (0, 3):
        data["crashed"] = f"exit {code}" if code != "timeout" else f"timed out after {timeout:.0f} s"
    return data


def run_backends(backends: list, args, scenes: list, envs: dict, steps: dict, tmp: Path) -> list:
    """Each backend's runs, ``args.jobs`` worker processes at a time, in ``backends``' order."""
    pending, running, done = list(backends), [], {}
    while pending or running:
        while pending and len(running) < args.jobs:
            running.append(_start_backend(pending.pop(0), args, scenes, envs, steps, tmp))
        first = running.pop(0)
        done[first[0]] = _finish_backend(first, args.timeout)
        if not done[first[0]].get("available"):
            print(f"{first[0]}: unavailable: {done[first[0]].get('reason', '')[:200]}", flush=True)
    return [done[b] for b in backends]


def agreement(backends: list) -> None:
    """Add each run's largest distance [m] from cpu f64's positions (same scene, env count and steps)."""
    ref = {(r["scene"], r["n_envs"], r["steps"]): np.array(r["positions"])
           for b in backends if b["backend"] == "cpu-f64" for r in b.get("runs", []) if "positions" in r}
    for b in backends:
        for r in b.get("runs", []):
            key = (r.get("scene"), r.get("n_envs"), r.get("steps"))
            if "positions" in r and key in ref and ref[key].shape == np.shape(r["positions"]):
                r["max_position_diff_m"] = float(np.abs(np.array(r["positions"]) - ref[key]).max()) \
                    if b["backend"] != "cpu-f64" else 0.0
                if b["backend"].endswith("f32") and not SCENES[r["scene"]].unbounded:
                    r["f32_tolerance_m"] = f32_tolerance(SCENES[r["scene"]], r["steps"] + 1 + r["warmup"])


def peers(scenes: list, repeats: int) -> list:
    """MuJoCo on the rigid scenes, where installed (one world, steps/s)."""
    out = []
    try:
        from ..peers import mujoco_peer
    except Exception:
        return out
    if not mujoco_peer.mujoco_available():
        return out
    for name in scenes:
        if name in ("rigid_sphere", "rigid_box"):
            r = mujoco_peer.measure(name.split("_")[1], steps=1000, repeats=repeats)
            out.append({"engine": "mujoco", "scene": name, "version": r["version"],
                        "steps_per_s": r["steps_per_s_median"]})
    return out


def max_envs(args, scene: str, start: int, tmp: Path) -> dict:
    """Double ``scene``'s env count from ``start`` on each backend until a run fails or exceeds ``--max-run-s``."""
    found = {}
    for backend in args.backends:
        best, n = None, start
        while True:
            t = time.perf_counter()
            data = run_backends([backend], args, [scene], {scene: [n]}, {scene: SCENES[scene].quick.steps}, tmp)[0]
            if not data.get("available"):
                break
            runs = data.get("runs", [])
            if not runs or "error" in runs[0] or data.get("crashed"):
                break
            best = runs[0]
            if time.perf_counter() - t > args.max_run_s:
                break
            n *= 2
        found[backend] = None if best is None else {"n_envs": best["n_envs"],
                                                    "env_steps_per_s": best["env_steps_per_s"]}
        print(f"{backend}: largest n_envs of {scene} that ran: {found[backend]}", flush=True)
    return found


def add_arguments(parser) -> None:
    parser.add_argument("--quick", action="store_true", help="cpu f64 and f32, one env per scene, few steps")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=None,
                        help="default: all five (quick: cpu-f64 cpu-f32); those that cannot start are skipped")
    parser.add_argument("--scenes", nargs="+", choices=list(SCENES), default=list(HARNESS))
    parser.add_argument("--envs", type=int, nargs="+", default=None, help="env counts (default: per scene)")
    parser.add_argument("--steps", type=int, default=None, help="timed steps per round (default: per scene)")
    parser.add_argument("--repeats", type=int, default=None, help="timed rounds (default 5, quick 2)")
    parser.add_argument("--warmup", type=int, default=None, help="steps before the checkpoint (default: per scene)")
    parser.add_argument("--threads", type=int, default=None, help="cpu threads (default: all cores)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per backend's process")
    parser.add_argument("--shared-kernel", action="store_true",
                        help="one articulated step kernel with every optional part for all scenes (taichi_terra.init's "
                             "specialize=False; default: each scene's own, as users get; quick: shared)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="backends run at once (default 1; quick: 2, its timings then share the cores)")
    parser.add_argument("--out-dir", default=str(RESULTS))
    parser.add_argument("--plot", default=None, help="PNG path (default: <out-dir>/harness.png)")
    parser.add_argument("--max-envs", default=None, choices=list(SCENES),
                        help="instead, find the largest env count of this scene that runs on each backend, "
                             "doubling from --envs' largest")
    parser.add_argument("--max-run-s", type=float, default=120.0)
    # worker mode (one backend per process)
    parser.add_argument("--worker", default=None, choices=BACKENDS, help=argparse.SUPPRESS)
    parser.add_argument("--envs-json", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--steps-json", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--warmup-json", default=None, help=argparse.SUPPRESS)


def run(args) -> dict:
    from ..harness_report import markdown, plot, validate

    args.repeats = args.repeats or (2 if args.quick else 5)
    args.jobs = args.jobs or (2 if args.quick else 1)
    args.shared_kernel = args.shared_kernel or args.quick
    if args.repeats < 1 or (args.warmup is not None and args.warmup < 0) \
            or (args.steps is not None and args.steps < 1) or (args.envs and min(args.envs) < 1):
        raise SystemExit("--repeats, --steps and --envs must be >= 1 and --warmup >= 0")
    if args.jobs < 1:
        raise SystemExit("--jobs must be >= 1")
    if args.worker:
        sys.exit(worker(args.worker, args.scenes, json.loads(args.envs_json), json.loads(args.steps_json),
                        args.repeats, json.loads(args.warmup_json), args.out, args.threads,
                        not args.shared_kernel))

    args.backends = args.backends or (["cpu-f64", "cpu-f32"] if args.quick else list(BACKENDS))
    if "cpu-f64" not in args.backends and not args.max_envs:
        args.backends = ["cpu-f64"] + args.backends  # (the reference of the agreement)
    if args.max_envs:  # (the sweep alone)
        args.scenes = [args.max_envs]
    sizes = {s: SCENES[s].quick if args.quick else SCENES[s].full for s in args.scenes}
    envs = {s: list(args.envs or sizes[s].envs) for s in args.scenes}
    steps = {s: args.steps or sizes[s].steps for s in args.scenes}
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    backends = [] if args.max_envs else run_backends(args.backends, args, args.scenes, envs, steps, out_dir)
    agreement(backends)
    result = {"machine": machine(),
              "quick": bool(args.quick), "repeats": args.repeats, "jobs": args.jobs,
              "shared_kernel": bool(args.shared_kernel),
              "scenes": {s: {"what": SCENES[s].what, "envs": envs[s], "steps": steps[s]} for s in args.scenes},
              "backends": backends, "peers": [] if args.quick else peers(args.scenes, args.repeats)}
    if args.max_envs:
        start = max(args.envs or SCENES[args.max_envs].full.envs)
        result["max_envs"] = {"scene": args.max_envs, **max_envs(args, args.max_envs, start, out_dir)}
    result["wall_s"] = time.perf_counter() - t0
    problems = validate(result, SCENES, BACKENDS)
    if problems:  # (a bug of this file: the result is still written, for a look)
        print("the result does not follow SCHEMA:", *problems[:10], sep="\n  ")
    (out_dir / "harness.json").write_text(json.dumps(result, indent=1))
    table = markdown(result)
    (out_dir / "harness.md").write_text(table)
    plot(result, args.plot or str(out_dir / "harness.png"))
    print(table)
    print(f"wrote {out_dir / 'harness.json'}, harness.md, {args.plot or out_dir / 'harness.png'} "
          f"in {result['wall_s']:.0f} s")
    return result
