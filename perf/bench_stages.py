"""Does a parallel stage inside one env pay on this machine? The static pairs' narrowphase (every shape with the
ground, a height map or a soil bed) of a one-env world, run serially as the step does, against the same
work as a parallel loop over (env, pair), and the cost of launching an empty parallel or serial loop.

    python -m perf.bench_stages [--calls 100] [--repeats 5]

The step kernel runs every stage of an env on one thread (``kernels/step.py``); a stage run in parallel
would need its own launch per step (only a kernel's outermost loops run in parallel), so it pays only where
the stage's serial time exceeds the parallel launch plus the stage divided among the cores. Serial and
parallel runs are interleaved, so the machine's drift hits both alike. Prints medians in microseconds per
call and the parallel / serial ratio; JSON goes to perf/results/stages.json.
"""

import argparse
import json
import os
import statistics
import time

import numpy as np


def _kernels():
    import taichi as ti

    from taichi_terra.kernels.collision.pairs import collide_pair
    from taichi_terra.kernels.common.arrays import SETTINGS_F, SETTINGS_I, StepData
    from taichi_terra.kernels.common.schema import get

    nd = ti.types.ndarray()

    def narrowphase(parallel: bool):
        @ti.func
        def pair(D: ti.template(), e, p):
            collide_pair(D, e, p, get(D.settings_f, e, 0, SETTINGS_F.ground_height),
                         get(D.settings_f, e, 0, SETTINGS_F.margin), get(D.settings_f, e, 0, SETTINGS_F.dt))

        @ti.func
        def stage(D: ti.template()):
            if ti.static(parallel):
                for e, p in ti.ndrange(D.q.shape[0], get(D.settings_i, 0, 0, SETTINGS_I.n_static_pairs)):
                    pair(D, e, p)
            else:
                ti.loop_config(serialize=True)
                for e in range(D.q.shape[0]):
                    for p in range(get(D.settings_i, e, 0, SETTINGS_I.n_static_pairs)):
                        pair(D, e, p)

        @ti.kernel
        def run(model_i: nd, model_f: nd, heights: nd, q: nd, u: nd, state_f: nd, state_i: nd, scratch_f: nd,
                scratch_i: nd):
            stage(StepData(model_i, model_i=model_i, model_f=model_f, heights=heights, q=q, u=u, state_f=state_f,
                           state_i=state_i, scratch_f=scratch_f, scratch_i=scratch_i))

        return run

    def empty(parallel: bool):
        @ti.kernel
        def run(q: nd):
            ti.loop_config(serialize=not parallel)
            for e in range(q.shape[0]):
                q[e, 0] += 0.0

        return run

    return {"serial": narrowphase(False), "parallel": narrowphase(True), "empty_serial": empty(False),
            "empty_parallel": empty(True)}


def worlds():
    """One-env worlds whose static narrowphase is the largest share of a step we have."""
    import taichi_terra as tt

    w = tt.World(dt=1e-3)
    w.add_ground()
    for k in range(1000):
        b = w.add_box(0.2, 0.2, 0.2, 1.0)
        b.set_position([(k % 32) * 1.0, (k // 32) * 1.0, 0.1])
    yield "1000 boxes on the ground", w

    w = tt.World(dt=1e-3)
    n = 64
    x = np.linspace(0.0, 6.0, n)
    w.add_heightmap(n, n, 6.4, 6.4, 0.0, 0.0, (0.1 * np.sin(x)[None, :] * np.ones((n, 1))).ravel())
    for k in range(64):
        b = w.add_sphere(0.1, 1.0) if k % 2 else w.add_box(0.2, 0.2, 0.2, 1.0)
        b.set_position([(k % 8) * 0.7 - 2.5, (k // 8) * 0.7 - 2.5, 0.25])
    yield "64 bodies on a height map", w

    n = 103
    w = tt.World(dt=1e-3)
    w.add_deformable_terrain(n, n, 1.2, 1.2, 0.0, 0.0, np.zeros(n * n),
                             tt.SoilMaterial(bekker_kphi=2e5, sinkage_exponent=1.1, damping=3e4))
    plate = w.add_box(0.4, 0.6, 0.02, 20.0)
    plate.set_position([0.6 / (n - 1), 0.6 / (n - 1), 0.01])
    yield "a plate on a soil bed (one pair)", w


def _interleaved(fns: dict, calls: int, repeats: int) -> dict:
    import taichi as ti

    runs = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    ti.sync()
    for _ in range(repeats):
        for k, fn in fns.items():
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            ti.sync()
            runs[k].append((time.perf_counter() - t) / calls * 1e6)
    return {k: statistics.median(v) for k, v in runs.items()}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    import taichi_terra as tt

    tt.init("cpu", "f64")
    k = _kernels()
    results = []
    q = None
    for name, world in worlds():
        world.build()
        world.step(20)
        m, s, x = world._model, world._state, world._scratch
        a = (m.model_i, m.model_f, m.heights, s.q, s.u, s.state_f, s.state_i, x.scratch_f, x.scratch_i)
        snap = world.checkpoint()  # the stage kernels rewrite the contact slots; the world resumes from here
        t = _interleaved({"step": lambda: world.step(1), "serial": lambda: k["serial"](*a),
                          "parallel": lambda: k["parallel"](*a)}, args.calls, args.repeats)
        world.restore(snap)
        row = {"world": name, "static_pairs": world._model.n_pairs, "step_us": t["step"],
               "narrowphase_serial_us": t["serial"], "narrowphase_parallel_us": t["parallel"],
               "parallel_over_serial": t["parallel"] / t["serial"]}
        results.append(row)
        print(f"{name:34s} ({row['static_pairs']:4d} pairs): step {t['step']:7.0f} us | static narrowphase serial "
              f"{t['serial']:6.0f} us, parallel over (env, pair) {t['parallel']:6.0f} us "
              f"(x{row['parallel_over_serial']:.2f})")
        q = s.q
    t = _interleaved({"serial": lambda: k["empty_serial"](q), "parallel": lambda: k["empty_parallel"](q)},
                     20 * args.calls, args.repeats)
    launch = {"empty_serial_launch_us": t["serial"], "empty_parallel_launch_us": t["parallel"]}
    print(f"launch of an empty loop: serial {t['serial']:.1f} us, parallel {t['parallel']:.1f} us")
    root = os.path.join(os.path.dirname(__file__), "results")
    os.makedirs(root, exist_ok=True)
    out = {"worlds": results, **launch}
    with open(os.path.join(root, "stages.json"), "w") as f:
        json.dump(out, f, indent=2)
    return out


if __name__ == "__main__":
    main()
