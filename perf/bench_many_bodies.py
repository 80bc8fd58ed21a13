"""Many bodies per env: what the broadphase, the narrowphase and the solver each cost, for 200 boxes in one
env and 50 boxes in each of 64 envs (and 1000 spread boxes in one env, where an all-pairs test would cost most).

    python -m perf.bench_many_bodies [--steps 200] [--repeats 3]

Two layouts of the same boxes on the ground: ``spread`` (a grid with 1 m between boxes: each box touches only
the ground) and ``pile`` (a 3-layer brick stack: many box-box contacts). For each, after 50 settling steps:
the whole step; the broadphase alone (sort and sweep, run by a kernel here on the world's own arrays); the
contact search (broadphase plus every pair's narrowphase); and, in the same run, an all-pairs bounding-sphere
test of the same bodies, the cost a broadphase saves. The solver's share is the step minus the contact
search. Prints medians in ms per step and env-steps/s; JSON goes to perf/results/many_bodies.json.
"""

import argparse
import json
import os
import statistics
import time

import numpy as np


def build(n_envs: int, n_boxes: int, layout: str):
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    world.add_ground()
    side = int(np.ceil(np.sqrt(n_boxes)))
    for k in range(n_boxes):
        b = world.add_box(0.2, 0.2, 0.2, 1.0)
        if layout == "spread":
            b.set_position([(k % side) * 1.0, (k // side) * 1.0, 0.1])
        else:  # bricks: layers of side/2 x side/2 boxes, every other layer shifted by half a box
            per = max(1, (side // 2) ** 2)
            layer, i = divmod(k, per)
            row = max(1, side // 2)
            shift = 0.1 * (layer % 2)
            b.set_position([(i % row) * 0.201 + shift, (i // row) * 0.201 + shift, 0.1 + 0.2005 * layer])
    return world


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
            stage_contacts(D, e)

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
    import taichi as ti

    fn(1)
    ti.sync()
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(steps)
        ti.sync()
        runs.append((time.perf_counter() - t) / steps * 1e3)
    return statistics.median(runs)


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


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    import taichi_terra as tt

    tt.init("cpu", "f64")
    kernels = _stage_kernels()
    results = []
    for n_envs, n_boxes, layouts in ((1, 200, ("spread", "pile")), (64, 50, ("spread", "pile")),
                                     (1, 1000, ("spread",))):
        for layout in layouts:
            world = build(n_envs, n_boxes, layout)
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
    root = os.path.join(os.path.dirname(__file__), "results")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "many_bodies.json"), "w") as f:
        json.dump(results, f, indent=2)
    return {"results": results}


if __name__ == "__main__":
    main()
