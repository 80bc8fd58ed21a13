"""Quick start: a sphere, a box, a capsule, a cylinder and a convex mesh dropped on a height map, headless.

    python scenes/quickstart.py [--arch cpu] [--envs 4] [--seconds 2]

Prints where each body came to rest, its speed and the contacts holding it, for every env.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def build(n_envs: int):
    import trimesh

    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    world.set_material_pair_prop("rubber", "soil", 0.9, 0.3)
    n = 41
    xs = np.linspace(-2.0, 2.0, n)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    hills = 0.15 * np.sin(1.5 * X) * np.cos(1.2 * Y) + 0.05 * X  # a wavy slope
    terrain = world.add_heightmap_from_matrix(4.0, 4.0, 0.0, 0.0, hills, material="soil")
    bodies = {
        "sphere": world.add_sphere(0.12, 1.0, material="rubber"),
        "box": world.add_box(0.3, 0.2, 0.15, 2.0, material="soil"),
        "capsule": world.add_capsule(0.07, 0.25, 0.8),
        "cylinder": world.add_cylinder(0.1, 0.2, 1.2),
        "mesh": world.add_mesh(trimesh.creation.icosphere(subdivisions=1, radius=0.12), 0.9),
    }
    rng = np.random.default_rng(7)
    for k, body in enumerate(bodies.values()):
        start = np.column_stack([np.full(n_envs, -1.2 + 0.6 * k), rng.uniform(-1.0, 1.0, n_envs),
                                 np.full(n_envs, 0.8)])
        body.set_position(start)
        q = rng.normal(size=(n_envs, 4))
        body.set_orientation(q / np.linalg.norm(q, axis=1, keepdims=True))
    return world, terrain, bodies


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Drop five shapes on a height map and report where they rest.")
    parser.add_argument("--arch", default="cpu", choices=["cpu", "cuda", "vulkan", "gpu"])
    parser.add_argument("--envs", type=int, default=4, help="number of environments (>= 1)")
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated time [s] (> 0)")
    args = parser.parse_args(argv)
    if args.envs < 1 or not args.seconds > 0:
        parser.error("--envs must be >= 1 and --seconds > 0")

    import taichi_terra as tt

    tt.init(arch=args.arch, precision="f32" if args.arch == "vulkan" else "f64")
    world, terrain, bodies = build(args.envs)
    steps = max(1, int(round(args.seconds / world.dt)))
    t0 = time.perf_counter()
    world.step()
    t1 = time.perf_counter()
    world.step(steps - 1) if steps > 1 else None
    t2 = time.perf_counter()
    print(f"taichi_terra {tt.__version__} on {args.arch}: {args.envs} envs x {steps} steps of {world.dt * 1e3:g} ms "
          f"(first step incl. compilation {t1 - t0:.2f} s, then {args.envs * (steps - 1) / max(t2 - t1, 1e-9):,.0f} "
          f"env-steps/s)")
    for env in range(min(args.envs, 4)):
        print(f"env {env}: after {world.time:.2f} s, {len(world.get_contacts(env))} contacts")
        for name, body in bodies.items():
            p = body.get_position(env)
            gap = p[2] - terrain.get_height(p[0], p[1])
            speed = np.linalg.norm(body.get_linear_velocity(env))
            print(f"  {name:8s} at ({p[0]:+.3f}, {p[1]:+.3f}, {p[2]:+.3f}) m, {gap:.3f} m above the terrain, "
                  f"moving at {speed:.3f} m/s")
    if args.envs > 4:
        print(f"... and {args.envs - 4} more envs")


if __name__ == "__main__":
    main()
