"""Rigid bodies on a height map: env-steps/s over n_envs, compile time, and MuJoCo on the same scene.

    python -m perf.bench_rigid --arch cpu --envs 1 64 1024 4096 --steps 500 --repeats 5

For each scene (sphere or box on the 101 x 101 sine terrain of perf/scenes.py) and each n_envs it
builds a world, times the first step (kernel compilation, or the offline-cache load) separately, runs
``--warmup`` steps, then ``--repeats`` timed runs of ``--steps`` steps and reports the median
env-steps/s. When ``mujoco`` is installed, the same scene runs there in the same process (one world,
median steps/s) and the ratio taichi_terra env-steps/s : MuJoCo steps/s is printed. Results go to
JSON (default ``perf/results/rigid_<arch>.json``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

from .scenes import SHAPES, build_taichi_terra


def measure_taichi_terra(shape: str, n_envs: int, steps: int, repeats: int, warmup: int) -> dict:
    import taichi as ti

    t0 = time.perf_counter()
    world, body = build_taichi_terra(shape, n_envs)
    world.step()
    ti.sync()
    first_step_s = time.perf_counter() - t0
    world.step(warmup)
    ti.sync()
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        world.step(steps)
        ti.sync()
        rates.append(n_envs * steps / (time.perf_counter() - t))
    sweeps = world.get_solver_sweeps()
    return {"engine": "taichi_terra", "shape": shape, "n_envs": n_envs, "first_step_s": first_step_s,
            "env_steps_per_s_median": statistics.median(rates), "env_steps_per_s_all": rates,
            "mean_sweeps_last_step": float(sweeps.mean()), "contact_overflow": int(world.get_contact_overflow().sum()),
            "env0_final_position": body.get_position(0).tolist()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="cpu", choices=["cpu", "cuda", "vulkan", "gpu"])
    parser.add_argument("--precision", default=None, choices=["f64", "f32"],
                        help="default: f64, f32 on vulkan")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024, 4096])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--steps", type=int, default=500, help="steps per timed run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--no-peers", action="store_true", help="skip MuJoCo even when installed")
    parser.add_argument("--out", default=None, help="JSON path (default perf/results/rigid_<arch>.json)")
    args = parser.parse_args(argv)
    if min(args.envs) < 1 or args.steps < 1 or args.repeats < 1 or args.warmup < 0:
        parser.error("--envs, --steps and --repeats must be >= 1 and --warmup >= 0")

    import taichi_terra as tt

    precision = args.precision or ("f32" if args.arch == "vulkan" else "f64")
    t0 = time.perf_counter()
    tt.init(arch=args.arch, precision=precision, threads=args.threads)
    init_s = time.perf_counter() - t0

    from .peers import mujoco_peer

    results = {"arch": args.arch, "precision": precision, "threads": args.threads, "init_s": init_s,
               "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                           "python": platform.python_version()},
               "steps": args.steps, "repeats": args.repeats, "runs": [], "peers": []}
    for shape in args.shapes:
        peer = None
        if not args.no_peers and mujoco_peer.mujoco_available():
            peer = mujoco_peer.measure(shape, steps=max(args.steps, 1000), repeats=args.repeats)
            results["peers"].append(peer)
            print(f"{shape:6s} mujoco {peer['version']:>8s} 1 world   {peer['steps_per_s_median']:>12,.0f} steps/s")
        for n in args.envs:
            run = measure_taichi_terra(shape, n, args.steps, args.repeats, args.warmup)
            if peer is not None:
                run["ratio_to_mujoco"] = run["env_steps_per_s_median"] / peer["steps_per_s_median"]
            results["runs"].append(run)
            ratio = f"  x{run['ratio_to_mujoco']:.2f} mujoco" if peer is not None else ""
            print(f"{shape:6s} taichi_terra n_envs={n:<5d} {run['env_steps_per_s_median']:>12,.0f} env-steps/s"
                  f"  first step {run['first_step_s']:.2f} s  sweeps {run['mean_sweeps_last_step']:.1f}{ratio}")
    if results["runs"]:
        # the first world of the process pays for compiling (or loading from Taichi's offline cache) the step kernel
        results["compile_s"] = results["runs"][0]["first_step_s"]
        print(f"step kernel compile (first step of the first world): {results['compile_s']:.2f} s")
    out = args.out or os.path.join(os.path.dirname(__file__), "results", f"rigid_{args.arch}.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {out}")
    return results


if __name__ == "__main__":
    main()
