"""Slope and wall: a box and a cylinder rest on a 20-degree height map while a ball, a capsule and a small
sphere roll and slide down and stop against a wall map at its foot.

    python scenes/slope_and_wall.py                      # a window (orbit with the mouse)
    python scenes/slope_and_wall.py --headless --record slope_and_wall.gif

Both maps are ordinary height maps placed by a pose: the slope is tilted 20 degrees about x and the wall is
a map rotated 90 degrees about x. Friction 0.8 exceeds tan 20 degrees, so the box and cylinder hold.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import OrbitCamera, app

ANGLE = math.radians(20.0)
WALL_Y = -3.0


def rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def checker(nx: int, ny: int, a, b) -> np.ndarray:
    """Per-vertex colours alternating between ``a`` and ``b`` every other sample."""
    ix, iy = np.meshgrid(np.arange(nx), np.arange(ny))
    odd = ((ix + iy) % 2).reshape(-1, 1)
    return np.where(odd, np.asarray(b, float), np.asarray(a, float))


def build(args) -> app.Scene:
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=args.envs)
    slope = world.add_heightmap(13, 17, 6.0, 8.0, 0.0, 0.0, np.zeros(13 * 17),
                                colors=checker(13, 17, (0.55, 0.62, 0.45), (0.5, 0.57, 0.41)))
    slope.set_orientation(rot_x(ANGLE))  # local +y goes uphill; downhill is world -y
    wall = world.add_heightmap(13, 7, 6.0, 3.0, 0.0, 0.0, np.zeros(13 * 7),
                               colors=checker(13, 7, (0.7, 0.45, 0.35), (0.64, 0.41, 0.32)))
    wall.set_orientation(rot_x(-math.pi / 2))  # surface normal along world +y
    wall.set_position([0.0, WALL_Y, -1.0])
    R = rot_x(ANGLE)

    def on_slope(body, x, y_local, lift):
        body.set_position(R @ np.array([x, y_local, lift]))
        body.set_orientation(R)

    box = world.add_box(0.3, 0.3, 0.3, 2.0)
    on_slope(box, -1.5, 1.0, 0.15)
    cyl = world.add_cylinder(0.15, 0.3, 2.0)
    on_slope(cyl, 1.5, 1.0, 0.15)
    ball = world.add_sphere(0.2, 1.0)
    on_slope(ball, -0.5, 2.5, 0.2)
    cap = world.add_capsule(0.1, 0.4, 1.0)
    on_slope(cap, 0.5, 2.5, 0.1)
    cap.set_orientation(R @ np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]))  # axis along x
    small = world.add_sphere(0.05, 0.2)
    on_slope(small, 2.0, 3.0, 0.05)

    def report(w):
        lines = []
        for name, b in (("box", box), ("cylinder", cyl), ("ball", ball), ("capsule", cap), ("small sphere", small)):
            p = b.get_position(0)
            lines.append(f"  {name:12s} at ({p[0]:+.3f}, {p[1]:+.3f}, {p[2]:+.3f}) m, "
                         f"{p[1] - WALL_Y:.3f} m from the wall")
        return f"env 0 after {w.time:.2f} s:\n" + "\n".join(lines)

    camera = OrbitCamera(target=(0.0, -1.3, -0.2), distance=7.5, yaw=math.radians(55.0), pitch=math.radians(32.0))
    return app.Scene(world, camera=camera, envs=None if args.envs == 1 else "all", report=report)


def main(argv=None) -> dict:
    return app.main(build, "slope_and_wall", __doc__.splitlines()[0], argv, seconds=4.0)


if __name__ == "__main__":
    main()
