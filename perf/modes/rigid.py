"""Rigid bodies on a height map: env-steps/s over n_envs, compile time, and MuJoCo on the same scene.

    python -m perf rigid --arch cpu --envs 1 64 1024 4096 --steps 500 --repeats 5

For each scene (sphere or box on the 101 x 101 sine terrain of perf/scenes/rigid.py, scenes ``rigid_sphere``
and ``rigid_box``) and each n_envs it builds a world, times the first step (kernel compilation, or the offline-
cache load) separately, runs ``--warmup`` steps, then ``--repeats`` timed rounds of ``--steps`` steps from that
state and reports the median env-steps/s. When ``mujoco`` is installed, the same scene runs there in the same
process (one world, median steps/s) and the ratio taichi_terra env-steps/s : MuJoCo steps/s is printed.

The control-loop case (``--loop-envs``, default 1 and 1024; scene ``control_loop``, ten spheres on the same
terrain) calls ``step()`` once per control step, as a policy loop does, and reads every body's state (position,
orientation, linear and angular velocity, all envs) each time. It reports, as medians over repeats: the wall time
of one ``step()`` call, the kernel time of one step (``step(n)`` divided by n), the overhead of a call (their
difference), the time to read the state through the body getters, and the time of one ``world.get_state()`` and
one ``world.set_state()`` (every body of every env), the latter both with ``get_state``'s own arrays (strided
views) and with C-contiguous arrays, as a reset usually builds them.
"""
from __future__ import annotations

import numpy as np

from .. import scenes
from ..scenes.rigid import SHAPES
from ..timing import Window, machine, measure, median, per_call, public
from . import add_backend_arguments, init_backend

SMOKE = ["--envs", "1", "--shapes", "sphere", "--steps", "5", "--repeats", "1", "--warmup", "2", "--loop-envs", "1",
         "--loop-calls", "2", "--no-peers"]


def OUT(args):
    """rigid_<arch>.json"""
    return f"rigid_{args.arch}.json"


def add_arguments(p) -> None:
    add_backend_arguments(p)
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024, 4096])
    p.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    p.add_argument("--steps", type=int, default=500, help="steps per timed round")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--no-peers", action="store_true", help="skip MuJoCo even when installed")
    p.add_argument("--loop-envs", type=int, nargs="*", default=[1, 1024],
                   help="n_envs of the control-loop case (none: skip it)")
    p.add_argument("--loop-calls", type=int, default=100, help="step() calls per timed control-loop round")


def read_state(world):
    """Every body's position, orientation, linear and angular velocity in every env, through the body API."""
    return [(b.get_position(), b.get_orientation(), b.get_linear_velocity(), b.get_angular_velocity())
            for b in world.bodies]


def measure_taichi_terra(shape: str, n_envs: int, window: Window) -> dict:
    built = scenes.build(f"rigid_{shape}", n_envs)
    world, body = built.world, built.parts["body"]
    run = measure(world, window)
    sweeps = world.get_solver_sweeps()
    return {"engine": "taichi_terra", "shape": shape, "n_envs": n_envs, "first_step_s": run["first_step_s"],
            "env_steps_per_s_median": run["env_steps_per_s"], "env_steps_per_s_all": run["env_steps_per_s_all"],
            "mean_sweeps_last_step": float(sweeps.mean()), "contact_overflow": int(world.get_contact_overflow().sum()),
            "env0_final_position": body.get_position(0).tolist()}


def measure_control_loop(n_envs: int, calls: int, repeats: int) -> dict:
    """Per-call costs of a control loop over the ``control_loop`` scene's spheres, ``n_envs`` envs."""
    world = scenes.build("control_loop", n_envs).world
    world.step(200)

    def each(fn, n):
        return median(per_call(fn, n, repeats))

    one_call = each(world.step, calls)
    kernel = each(lambda: world.step(calls), 1) / calls
    read = each(lambda: read_state(world), calls)
    state = read_state(world)
    assert all(np.all(np.isfinite(a)) for arrays in state for a in arrays)
    out = {"n_envs": n_envs, "bodies": len(world.bodies), "step_call_s": one_call, "kernel_per_step_s": kernel,
           "step_overhead_s": one_call - kernel, "read_state_s": read}
    out["get_state_s"] = each(world.get_state, calls)
    snap = world.get_state()  # views into one copy of q and one of u
    out["set_state_s"] = each(lambda: world.set_state(**snap), calls)
    fresh = {k: np.ascontiguousarray(v) for k, v in snap.items()}  # a reset as users write it
    out["set_state_contiguous_s"] = each(lambda: world.set_state(**fresh), calls)
    return out


def run(args) -> dict:
    import time

    if min(args.envs + args.loop_envs) < 1 or args.steps < 1 or args.repeats < 1 or args.warmup < 0:
        raise SystemExit("--envs, --loop-envs, --steps and --repeats must be >= 1 and --warmup >= 0")
    t0 = time.perf_counter()
    cfg = init_backend(args.arch, args.precision, args.threads)
    init_s = time.perf_counter() - t0
    from ..peers import mujoco_peer

    results = {"arch": cfg["arch"], "precision": cfg["precision"], "threads": cfg["threads"], "init_s": init_s,
               "machine": machine(), "steps": args.steps, "repeats": args.repeats, "runs": [], "peers": [],
               "control_loop": []}
    window = Window(args.steps, args.repeats, args.warmup)
    for shape in args.shapes:
        peer = None
        if not args.no_peers and mujoco_peer.mujoco_available():
            peer = mujoco_peer.measure(shape, steps=max(args.steps, 1000), repeats=args.repeats)
            results["peers"].append(peer)
            print(f"{shape:6s} mujoco {peer['version']:>8s} 1 world   {peer['steps_per_s_median']:>12,.0f} steps/s")
        for n in args.envs:
            run_ = measure_taichi_terra(shape, n, window)
            if peer is not None:
                run_["ratio_to_mujoco"] = run_["env_steps_per_s_median"] / peer["steps_per_s_median"]
            results["runs"].append(public(run_))
            ratio = f"  x{run_['ratio_to_mujoco']:.2f} mujoco" if peer is not None else ""
            print(f"{shape:6s} taichi_terra n_envs={n:<5d} {run_['env_steps_per_s_median']:>12,.0f} env-steps/s"
                  f"  first step {run_['first_step_s']:.2f} s  sweeps {run_['mean_sweeps_last_step']:.1f}{ratio}")
    for n in args.loop_envs:
        loop = measure_control_loop(n, args.loop_calls, args.repeats)
        results["control_loop"].append(loop)
        print(f"control loop, {loop['bodies']} spheres, n_envs={n:<5d} step() {loop['step_call_s'] * 1e3:8.3f} ms "
              f"(kernel {loop['kernel_per_step_s'] * 1e3:.3f} ms, overhead {loop['step_overhead_s'] * 1e3:.3f} ms), "
              f"reading every body's state through the bodies {loop['read_state_s'] * 1e3:.3f} ms, "
              f"world.get_state() {loop['get_state_s'] * 1e3:.3f} ms, world.set_state() "
              f"{loop['set_state_s'] * 1e3:.3f} ms (its own arrays; "
              f"{loop['set_state_contiguous_s'] * 1e3:.3f} ms from contiguous arrays)")
    if results["runs"]:
        # the first world of the process pays for compiling (or loading from Taichi's offline cache) its kernel
        results["compile_s"] = results["runs"][0]["first_step_s"]
        print(f"step kernel compile (first step of the first world): {results['compile_s']:.2f} s")
    return results
