"""Many worlds: 64 independent envs, each dropping four bodies with randomized poses and spins onto the same
bumpy height map, stepped together and drawn as a tiled grid.

    python scenes/many_worlds.py                         # a window
    python scenes/many_worlds.py --headless --record many_worlds.gif
    python scenes/many_worlds.py --envs 4096 --headless --quiet   # (draws the first 64)

Every env is its own world with its own state; one step call advances them all in one kernel launch.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import OrbitCamera, app

MAX_TILES = 64


def build(args) -> app.Scene:
    import taichi_terra as tt

    n = args.envs
    world = tt.World(dt=1e-3, n_envs=n)
    k = 21
    xs = np.linspace(-0.8, 0.8, k)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    bumps = 0.06 * np.sin(4.0 * X) * np.cos(3.0 * Y) - 0.08 * (X ** 2 + Y ** 2)  # a wavy bowl
    shade = 0.5 + 0.5 * (bumps - bumps.min()) / (np.ptp(bumps) + 1e-12)
    colors = np.stack([0.42 + 0.2 * shade, 0.5 + 0.15 * shade, 0.38 + 0.1 * shade], axis=-1)
    world.add_heightmap_from_matrix(1.6, 1.6, 0.0, 0.0, bumps, colors=colors.transpose(1, 0, 2).reshape(-1, 3))
    world.add_ground(-0.3)  # catches what rolls off the map
    rng = np.random.default_rng(2026)
    bodies = [world.add_sphere(0.08, 1.0), world.add_box(0.16, 0.12, 0.1, 1.5), world.add_capsule(0.05, 0.16, 0.8),
              world.add_cylinder(0.07, 0.1, 1.0)]
    for i, body in enumerate(bodies):
        ang = 2.0 * math.pi * i / len(bodies)
        base = np.array([0.4 * math.cos(ang), 0.4 * math.sin(ang), 0.45 + 0.15 * i])
        body.set_position(base + rng.uniform(-0.12, 0.12, (n, 3)))
        q = rng.normal(size=(n, 4))
        body.set_orientation(q / np.linalg.norm(q, axis=1, keepdims=True))
        body.set_linear_velocity(rng.uniform(-0.5, 0.5, (n, 3)))
        body.set_angular_velocity(rng.uniform(-4.0, 4.0, (n, 3)))

    def report(w):
        z = np.stack([b.get_position()[:, 2] for b in bodies], axis=1)
        speed = np.stack([np.linalg.norm(b.get_linear_velocity(), axis=1) for b in bodies], axis=1)
        return (f"{n} envs after {w.time:.2f} s: body heights {z.min():.3f} to {z.max():.3f} m, "
                f"median speed {np.median(speed):.3f} m/s, {int(np.sum(w.get_contact_overflow()))} contacts dropped")

    tiles = list(range(min(n, MAX_TILES)))
    cols = math.ceil(math.sqrt(len(tiles)))
    spacing = 2.0
    centre = np.array([(cols - 1) * spacing / 2, -(math.ceil(len(tiles) / cols) - 1) * spacing / 2, 0.0])
    camera = OrbitCamera(target=centre, distance=max(3.0, 1.3 * cols * spacing), yaw=math.radians(-90.0),
                         pitch=math.radians(55.0))
    return app.Scene(world, camera=camera, envs=tiles, viewer_options={"tile_spacing": (spacing, spacing)},
                     report=report)


def main(argv=None) -> dict:
    return app.main(build, "many_worlds", __doc__.splitlines()[0], argv, seconds=3.0, envs=64)


if __name__ == "__main__":
    main()
