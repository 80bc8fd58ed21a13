"""Many bodies per env: the cost of the pair stage (every body pair's bounding-sphere test and its contact
slots) against the contact work, for 200 boxes in one env and 50 boxes in each of 64 envs.

    python -m perf.bench_many_bodies [--steps 200] [--repeats 3]

Two layouts of the same boxes on the ground: ``spread`` (a grid with 1 m between boxes: each box touches only
the ground, so box-box pairs are rejected by their bounding spheres) and ``pile`` (a 3-layer brick stack: many
box-box contacts). The difference between a box world and the same world without box-box pairs is what the
pair stage costs. Prints median ms per step and env-steps/s; JSON goes to perf/results/many_bodies.json.
"""
from __future__ import annotations

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


def time_world(world, steps: int, repeats: int) -> float:
    import taichi as ti

    world.step(50)
    ti.sync()
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        world.step(steps)
        ti.sync()
        runs.append((time.perf_counter() - t) / steps)
    return statistics.median(runs)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    import taichi_terra as tt

    tt.init("cpu", "f64")
    results = []
    for n_envs, n_boxes in ((1, 200), (64, 50)):
        for layout in ("spread", "pile"):
            world = build(n_envs, n_boxes, layout)
            world.build()
            n_pairs = world._model.n_pairs
            t = time_world(world, args.steps, args.repeats)
            contacts = int(np.mean([len(world.get_contacts(e)) for e in range(min(n_envs, 4))]))
            row = {"n_envs": n_envs, "boxes": n_boxes, "layout": layout, "pairs_per_env": n_pairs,
                   "slots_per_env": world._model.n_slots, "contacts_per_env": contacts, "ms_per_step": t * 1e3,
                   "env_steps_per_s": n_envs / t, "sweeps": float(np.mean(world.get_solver_sweeps()))}
            results.append(row)
            print(f"{n_envs:3d} env x {n_boxes:3d} boxes, {layout:6s}: {n_pairs:6d} pairs, {row['slots_per_env']:7d} "
                  f"slots, {contacts:5d} contacts/env, {row['sweeps']:5.1f} sweeps: {t * 1e3:8.2f} ms/step "
                  f"({row['env_steps_per_s']:,.0f} env-steps/s)")
    root = os.path.join(os.path.dirname(__file__), "results")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "many_bodies.json"), "w") as f:
        json.dump(results, f, indent=2)
    return {"results": results}


if __name__ == "__main__":
    main()
