"""Rigid bodies on a height map: env-steps/s over n_envs, compile time, and MuJoCo on the same scene.

    python -m perf.bench_rigid --arch cpu --envs 1 64 1024 4096 --steps 500 --repeats 5

For each scene (sphere or box on the 101 x 101 sine terrain of perf/scenes.py) and each n_envs it
builds a world, times the first step (kernel compilation, or the offline-cache load) separately, runs
``--warmup`` steps, then ``--repeats`` timed runs of ``--steps`` steps and reports the median
env-steps/s. When ``mujoco`` is installed, the same scene runs there in the same process (one world,
median steps/s) and the ratio taichi_terra env-steps/s : MuJoCo steps/s is printed. Results go to
JSON (default ``perf/results/rigid_<arch>.json``).

The control-loop case (``--loop-envs``, default 1 and 1024; ten spheres on the same terrain) calls
``step()`` once per control step, as a policy loop does, and reads every body's state (position,
orientation, linear and angular velocity, all envs) each time. It reports, as medians over repeats: the
wall time of one ``step()`` call, the kernel time of one step (``step(n)`` divided by n), the overhead of a
call (their difference), the time to read the state through the body getters, and the time of one
``world.get_state()`` and one ``world.set_state()`` (every body of every env), the latter both with
``get_state``'s own arrays (strided views) and with C-contiguous arrays, as a reset usually builds them.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

from taichi_terra import codegen

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


LOOP_BODIES = 10


def read_state(world):
    """Every body's position, orientation, linear and angular velocity in every env, through the body API."""
    return [(b.get_position(), b.get_orientation(), b.get_linear_velocity(), b.get_angular_velocity())
            for b in world.bodies]


def measure_control_loop(n_envs: int, calls: int, repeats: int) -> dict:
    """Per-call costs of a control loop over ``LOOP_BODIES`` spheres on the sine terrain, ``n_envs`` envs."""
    import numpy as np
    import taichi as ti

    import taichi_terra as tt

    from .scenes import DT, FRICTION, SAMPLES, SIZE, terrain_heights

    world = tt.World(dt=DT, n_envs=n_envs)
    world.set_default_material(FRICTION, 0.0)
    world.add_heightmap(SAMPLES, SAMPLES, SIZE, SIZE, 0.0, 0.0, terrain_heights())
    for k in range(LOOP_BODIES):
        world.add_sphere(0.1, 1.0).set_position([-3.6 + 0.8 * k, 0.15 * (k % 3), 0.3])
    world.step(200)
    ti.sync()

    def median_per_call(fn, n):
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            ti.sync()
            times.append((time.perf_counter() - t) / n)
        return statistics.median(times)

    one_call = median_per_call(world.step, calls)
    kernel = median_per_call(lambda: world.step(calls), 1) / calls
    read = median_per_call(lambda: read_state(world), calls)
    state = read_state(world)
    assert all(np.all(np.isfinite(a)) for arrays in state for a in arrays)
    out = {"n_envs": n_envs, "bodies": LOOP_BODIES, "step_call_s": one_call, "kernel_per_step_s": kernel,
           "step_overhead_s": one_call - kernel, "read_state_s": read}
    if hasattr(world, "get_state"):  # every body of every env in one call each way
        out["get_state_s"] = median_per_call(world.get_state, calls)
        snap = world.get_state()  # views into one copy of q and one of u
        out["set_state_s"] = median_per_call(lambda: world.set_state(**snap), calls)
        assert all(np.all(np.isfinite(a)) for a in snap.values())
        # a reset as a user writes it: freshly built (C-contiguous) arrays
        fresh = {k: np.ascontiguousarray(v) for k, v in snap.items()}
        out["set_state_contiguous_s"] = median_per_call(lambda: world.set_state(**fresh), calls)
    return out


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
    parser.add_argument("--loop-envs", type=int, nargs="*", default=[1, 1024],
                        help="n_envs of the control-loop case (none: skip it)")
    parser.add_argument("--loop-calls", type=int, default=100, help="step() calls per timed control-loop run")
    parser.add_argument("--out", default=None, help="JSON path (default perf/results/rigid_<arch>.json)")
    args = parser.parse_args(argv)
    if min(args.envs + args.loop_envs) < 1 or args.steps < 1 or args.repeats < 1 or args.warmup < 0 \
            or args.loop_calls < 1:
        parser.error("--envs, --loop-envs, --steps, --repeats and --loop-calls must be >= 1 and --warmup >= 0")

    import taichi_terra as tt

    precision = args.precision or ("f32" if args.arch == "vulkan" else "f64")
    t0 = time.perf_counter()
    tt.init(arch=args.arch, precision=precision, threads=args.threads)
    init_s = time.perf_counter() - t0

    from .peers import mujoco_peer

    results = {"arch": args.arch, "precision": precision, "threads": args.threads, "init_s": init_s,
               "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                           "python": platform.python_version(),
                           "llvm_options": list(codegen.requested())},
               "steps": args.steps, "repeats": args.repeats, "runs": [], "peers": [], "control_loop": []}
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
    for n in args.loop_envs:
        loop = measure_control_loop(n, args.loop_calls, args.repeats)
        results["control_loop"].append(loop)
        print(f"control loop, {loop['bodies']} spheres, n_envs={n:<5d} step() {loop['step_call_s'] * 1e3:8.3f} ms "
              f"(kernel {loop['kernel_per_step_s'] * 1e3:.3f} ms, overhead {loop['step_overhead_s'] * 1e3:.3f} ms), "
              f"reading every body's state through the bodies {loop['read_state_s'] * 1e3:.3f} ms"
              + (f", world.get_state() {loop['get_state_s'] * 1e3:.3f} ms, world.set_state() "
                 f"{loop['set_state_s'] * 1e3:.3f} ms (its own arrays; "
                 f"{loop['set_state_contiguous_s'] * 1e3:.3f} ms from contiguous arrays)"
                 if "get_state_s" in loop else ""))
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
