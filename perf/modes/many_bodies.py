"""Many bodies per env: what the broadphase, the narrowphase and the solver each cost, for 200 boxes in one
env and 50 boxes in each of 64 envs (and 1000 spread boxes in one env, where an all-pairs test would cost most).

    python -m perf many_bodies [--steps 200] [--repeats 3]

Two layouts of the same boxes on the ground (scene ``boxes``): ``spread`` (a grid with 1 m between boxes: each box
touches only the ground) and ``pile`` (a 3-layer brick stack: many box-box contacts). For each, after 50 settling
steps: the whole step; the broadphase alone (sort and sweep, run by a kernel here on the world's own arrays); the
contact search (broadphase plus every pair's narrowphase); and, in the same run, an all-pairs bounding-sphere
test of the same bodies, the cost a broadphase saves. The solver's share is the step minus the contact search.
Prints medians in ms per step and env-steps/s.
"""
import numpy as np

from .. import scenes
from ..timing import median, per_call
from . import init_backend

SMOKE = ["--steps", "2", "--repeats", "1", "--cases", "1x200"]
OUT = "many_bodies.json"
#: case -> (n_envs, boxes, layouts)
CASES = {"1x200": (1, 200, ("spread", "pile")), "64x50": (64, 50, ("spread", "pile")), "1x1000": (1, 1000, ("spread",))}


def add_arguments(p) -> None:
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES), help="envs x boxes")


def _stage_kernels():
    """Kernels that run one stage of a step on a world's arrays, ``n`` times per env."""
    import taichi as ti

    from taichi_terra.kernels.collision.broadphase import broadphase, reach
    from taichi_terra.kernels.common.arrays import ENV, SETTINGS_F, SETTINGS_I, StepData
    from taichi_terra.kernels.common.schema import get, put
    from taichi_terra.kernels.step import stage_contacts

    nd = ti.types.ndarray()

    @ti.func
    def broad_env(D: ti.template(), e, n):
        for _ in range(n):
            broadphase(D, e, get(D.settings_i, e, 0, SETTINGS_I.n_bodies),
                       get(D.settings_i, e, 0, SETTINGS_I.max_shape_pairs),
                       get(D.settings_i, e, 0, SETTINGS_I.sweep_axis), get(D.settings_f, e, 0, SETTINGS_F.margin),
                       get(D.settings_f, e, 0, SETTINGS_F.dt))

    @ti.func
    def all_pairs_env(D: ti.template(), e, n):
        nb = get(D.settings_i, e, 0, SETTINGS_I.n_bodies)
        half, dt = 0.5 * get(D.settings_f, e, 0, SETTINGS_F.margin), get(D.settings_f, e, 0, SETTINGS_F.dt)
        for _ in range(n):
            found = 0
            for i in range(nb):
                ci, ri = reach(D, e, i, half, dt)
                for j in range(i + 1, nb):
                    cj, rj = reach(D, e, j, half, dt)
                    if (ci - cj).norm() < ri + rj:
                        found += 1
            put(D.env, e, 0, ENV.pairs_dropped, found)  # (kept, so the test is not optimised away)

    @ti.func
    def contacts_env(D: ti.template(), e, n):
        for _ in range(n):
            stage_contacts(D, e, False, False)

    def kernel(stage):
        @ti.kernel
        def run(n: ti.i32, model_i: nd, model_f: nd, heights: nd, q: nd, u: nd, state_f: nd, state_i: nd,
                scratch_f: nd, scratch_i: nd):
            for e in range(q.shape[0]):
                stage(StepData(model_i, model_i=model_i, model_f=model_f, heights=heights, q=q,
                               u=u, state_f=state_f, state_i=state_i, scratch_f=scratch_f, scratch_i=scratch_i),
                      e, n)
        return run

    return kernel(broad_env), kernel(all_pairs_env), kernel(contacts_env)


def _median_ms(fn, steps: int, repeats: int) -> float:
    """Median ms per step of ``fn(steps)`` over ``repeats`` rounds, after an untimed ``fn(1)``."""
    fn(1)
    return 1e3 * median(per_call(lambda: fn(steps), 1, repeats, warm=False)) / steps


def measure(world, kernels, steps: int, repeats: int) -> dict:
    broad_only, all_pairs, contacts_only = kernels
    m, s, x = world._model, world._state, world._scratch
    world.step(50)
    args = (m.model_i, m.model_f, m.heights, s.q, s.u, s.state_f, s.state_i, x.scratch_f, x.scratch_i)
    row = {"step": _median_ms(world.step, steps, repeats)}
    snap = world.checkpoint()  # the stage kernels rewrite contacts and pair tables; the step after them starts here
    row["broadphase"] = _median_ms(lambda n: broad_only(n, *args), steps, repeats)
    row["all_pairs_test"] = _median_ms(lambda n: all_pairs(n, *args), steps, repeats)
    row["contact_search"] = _median_ms(lambda n: contacts_only(n, *args), steps, repeats)
    world.restore(snap)
    world.step(1)
    return row


def run(args) -> dict:
    init_backend("cpu", "f64")
    kernels = _stage_kernels()
    results = []
    for case in args.cases:
        n_envs, n_boxes, layouts = CASES[case]
        for layout in layouts:
            kind = "spread" if layout == "spread" else "bricks"
            world = scenes.build("boxes", n_envs, boxes=n_boxes, layout=kind).world
            world.build()
            t = measure(world, kernels, args.steps, args.repeats)
            contacts = int(np.mean([len(world.get_contacts(e)) for e in range(min(n_envs, 4))]))
            pairs = int(np.mean([len(world.get_shape_pairs(e)) for e in range(min(n_envs, 4))]))
            row = {"n_envs": n_envs, "boxes": n_boxes, "layout": layout, "shape_pairs_per_env": pairs,
                   "slots_per_env": world._model.n_slots, "contacts_per_env": contacts,
                   "sweeps": float(np.mean(world.get_solver_sweeps())),
                   "env_steps_per_s": n_envs / (t["step"] * 1e-3), **{f"{k}_ms": v for k, v in t.items()}}
            row["narrowphase_ms"] = t["contact_search"] - t["broadphase"]
            row["solver_ms"] = t["step"] - t["contact_search"]
            row["all_pairs_over_broadphase"] = t["all_pairs_test"] / t["broadphase"]
            results.append(row)
            print(f"{n_envs:3d} env x {n_boxes:3d} boxes, {layout:6s}: {pairs:5d} pairs, {row['slots_per_env']:6d} "
                  f"slots, {contacts:5d} contacts/env, {row['sweeps']:5.1f} sweeps | step {t['step']:8.3f} ms "
                  f"({row['env_steps_per_s']:,.0f} env-steps/s) = broadphase {t['broadphase']:.3f} + narrowphase "
                  f"{row['narrowphase_ms']:.3f} + solver {row['solver_ms']:.3f} | all-pairs test "
                  f"{t['all_pairs_test']:.3f} ms ({row['all_pairs_over_broadphase']:.1f}x the broadphase)")
    return {"results": results}
