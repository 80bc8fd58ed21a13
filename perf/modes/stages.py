"""Does a parallel stage inside one env pay on this machine? The static pairs' narrowphase (every shape with the
ground, a height map or a soil bed) of a one-env world, run serially as the step does, against the same work as a
parallel loop over (env, pair), and the cost of launching an empty parallel or serial loop.

    python -m perf stages [--calls 100] [--repeats 5]

The step kernel runs every stage of an env on one thread (``kernels/step.py``); a stage run in parallel would need
its own launch per step (only a kernel's outermost loops run in parallel), so it pays only where the stage's
serial time exceeds the parallel launch plus the stage divided among the cores. Worlds: the scenes
``stage_boxes``, ``stage_heightmap`` and ``stage_soil``, one env each. Serial and parallel runs are interleaved,
so the machine's drift hits both alike. Prints medians in microseconds per call and the parallel / serial ratio.
"""
from .. import scenes
from ..timing import interleaved
from . import init_backend

SMOKE = ["--calls", "2", "--repeats", "1", "--scenes", "stage_heightmap"]
OUT = "stages.json"
WORLDS = ("stage_boxes", "stage_heightmap", "stage_soil")


def add_arguments(p) -> None:
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--scenes", nargs="+", default=list(WORLDS), choices=list(WORLDS))


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
                         get(D.settings_f, e, 0, SETTINGS_F.margin), get(D.settings_f, e, 0, SETTINGS_F.dt), False)

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


def run(args) -> dict:
    init_backend("cpu", "f64")
    k = _kernels()
    results = []
    q = None
    for name in args.scenes:
        world = scenes.build(name).world
        world.build()
        world.step(20)
        m, s, x = world._model, world._state, world._scratch
        a = (m.model_i, m.model_f, m.heights, s.q, s.u, s.state_f, s.state_i, x.scratch_f, x.scratch_i)
        snap = world.checkpoint()  # the stage kernels rewrite the contact slots; the world resumes from here
        t = {key: 1e6 * v for key, v in interleaved(
            {"step": lambda: world.step(1), "serial": lambda: k["serial"](*a),
             "parallel": lambda: k["parallel"](*a)}, args.calls, args.repeats).items()}
        world.restore(snap)
        row = {"world": scenes.get(name).what, "static_pairs": world._model.n_pairs, "step_us": t["step"],
               "narrowphase_serial_us": t["serial"], "narrowphase_parallel_us": t["parallel"],
               "parallel_over_serial": t["parallel"] / t["serial"]}
        results.append(row)
        print(f"{row['world']:50s} ({row['static_pairs']:4d} pairs): step {t['step']:7.0f} us | static narrowphase "
              f"serial {t['serial']:6.0f} us, parallel over (env, pair) {t['parallel']:6.0f} us "
              f"(x{row['parallel_over_serial']:.2f})")
        q = s.q
    t = {key: 1e6 * v for key, v in interleaved(
        {"serial": lambda: k["empty_serial"](q), "parallel": lambda: k["empty_parallel"](q)},
        20 * args.calls, args.repeats).items()}
    print(f"launch of an empty loop: serial {t['serial']:.1f} us, parallel {t['parallel']:.1f} us")
    return {"worlds": results, "empty_serial_launch_us": t["serial"], "empty_parallel_launch_us": t["parallel"]}
