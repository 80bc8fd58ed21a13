"""Cradle and pile: a Newton's cradle of touching steel balls on ice passes the first ball's momentum to the
last one, while forty boxes, balls, cylinders and capsules fall into a heap in a bowl beside it.

    python scenes/cradle_and_pile.py                      # a window (orbit with the mouse)
    python scenes/cradle_and_pile.py --headless --record cradle_and_pile.gif

The balls touch exactly, so the whole chain is struck within one step: impacts are resolved in waves, one
contact after the other, and the momentum arrives at the last ball instead of being shared. The heap is
found by the broadphase every step (``world.get_shape_pairs``); its bodies rest on each other's faces.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import Annotations, OrbitCamera, app

R_BALL = 0.06
N_BALLS = 5
N_PILE = 40
V0 = 0.6  # [m/s] the first ball's speed
BOWL = (0.6, 0.5)  # [m] centre of the heap's bowl


def build(args) -> app.Scene:
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=args.envs)
    world.set_material_pair_prop("steel", "steel", 0.0, 1.0)  # frictionless, perfectly elastic
    world.set_material_pair_prop("steel", "ice", 0.0, 0.0)
    world.add_ground(material="default")
    strip = world.add_heightmap(2, 2, 3.0, 0.4, 0.3, -0.9, np.zeros(4), material="ice",
                                colors=np.tile([0.75, 0.85, 0.95], (4, 1)))
    strip.set_position([0.0, 0.0, 1e-3])  # ice over the ground, long enough for the last ball to slide on
    balls = [world.add_sphere(R_BALL, 1.0, material="steel") for _ in range(N_BALLS)]
    for k, b in enumerate(balls):
        b.set_position([-0.3 + 2.0 * R_BALL * k, -0.9, R_BALL + 1e-3])
    balls[0].set_position([-0.8, -0.9, R_BALL + 1e-3])
    balls[0].set_linear_velocity([V0, 0.0, 0.0])

    # a bowl (a height map) that keeps the heap together: 0.35 m deep at its rim, 0.8 m out
    xs = np.linspace(-0.8, 0.8, 17)
    X, Y = np.meshgrid(xs, xs)
    rim = 0.35 * np.minimum((X ** 2 + Y ** 2) / 0.64, 1.5)
    shade = 0.55 + 0.1 * rim.reshape(-1, 1) / rim.max()
    world.add_heightmap(17, 17, 1.6, 1.6, 0.0, 0.0, rim.reshape(-1),
                        colors=np.concatenate([shade, 0.9 * shade, 0.7 * shade], axis=1)).set_position(
        [BOWL[0], BOWL[1], 0.0])
    rng = np.random.default_rng(4)
    adders = [lambda: world.add_box(0.16, 0.12, 0.1, 1.0), lambda: world.add_sphere(0.07, 0.8),
              lambda: world.add_cylinder(0.07, 0.12, 0.9), lambda: world.add_capsule(0.05, 0.14, 0.7)]
    pile = []
    for k in range(N_PILE):
        body = adders[k % 4]()
        layer, i = divmod(k, 10)
        body.set_position([BOWL[0] - 0.4 + 0.2 * (i % 5) + rng.uniform(-0.03, 0.03), BOWL[1] - 0.1 + 0.2 * (i // 5),
                           0.3 + 0.25 * layer])
        q = rng.normal(size=4)
        body.set_orientation(q / np.linalg.norm(q))
        pile.append(body)

    def report(w):
        v = [b.get_linear_velocity(0)[0] for b in balls]
        top = max(b.get_position(0)[2] for b in pile)
        return (f"env 0 after {w.time:.2f} s:\n  cradle ball speeds along x [m/s]: "
                + ", ".join(f"{x:+.3f}" for x in v)
                + f"\n  heap: {len(w.get_shape_pairs(0))} shape pairs, {len(w.get_contacts(0))} contacts, "
                  f"top at {top:.3f} m")

    camera = OrbitCamera(target=(0.0, -0.1, 0.1), distance=3.4, yaw=math.radians(30.0), pitch=math.radians(35.0))
    return app.Scene(world, camera=camera, envs=None if args.envs == 1 else "all", report=report,
                     viewer_options={"annotations": Annotations(show_contacts=True)})


def main(argv=None) -> dict:
    return app.main(build, "cradle_and_pile", __doc__.splitlines()[0], argv, seconds=3.0)


if __name__ == "__main__":
    main()
