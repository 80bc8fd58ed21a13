"""Tracked robot on steps: a robot on two side tracks and two flipper tracks drives over a row of steps.

    python scenes/tracked_robot_steps.py                      # a window (orbit with the mouse)
    python scenes/tracked_robot_steps.py --headless --record tracked_robot_steps.gif

The robot is the templated tracked robot of ``spec/tracks.md`` (``taichi_terra.bodies.tracked_robot``): a
30 kg body on two belts of 1 m footprints 0.28 m apart, wrapped around a front sprocket and a rear idler of
0.178 m, and a flipper on each side pivoting about the sprocket axis, whose belt the same sprocket runs
through a pulley. Velocity drives turn the sprockets at 4 rad/s (0.71 m/s); the flippers are held tipped up
by 0.5 rad, so their belts meet each step's edge first and pull the front up. The steps are a height map:
three rises of 0.12 m, each 0.7 m deep, then a level top. The belts' tread marks move with the belts.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import OrbitCamera, app

SPROCKET_SPEED = 4.0  # [rad/s]
FLIPPER_ANGLE = -0.5  # [rad] (negative tips the flippers up)
RISE, RUN, FIRST = 0.12, 0.7, 1.0  # step height, depth, where the first one starts [m]
N_STEPS = 3
SPACING = 0.02  # height-map sample spacing [m]


def step_heights(nx: int, ny: int, x0: float) -> np.ndarray:
    """The steps' heights [m], shape (ny * nx,): ``RISE`` more at each ``RUN`` from ``FIRST`` on."""
    x = x0 + SPACING * np.arange(nx)
    h = RISE * np.clip(np.floor((x - FIRST) / RUN) + 1.0, 0.0, N_STEPS)
    return np.tile(h, ny)


def build(args) -> app.Scene:
    import taichi_terra as tt
    from taichi_terra.bodies.tracked_robot import drive_tracked_robot, tracked_robot_urdf

    world = tt.World(dt=2e-3, n_envs=args.envs)
    length, width = 6.5, 1.6
    nx, ny = round(length / SPACING) + 1, round(width / SPACING) + 1
    x0 = -1.2
    heights = step_heights(nx, ny, x0)
    tone = 0.55 + 0.5 * heights / (RISE * N_STEPS)
    colors = np.stack([0.62 * tone, 0.6 * tone, 0.55 * tone], axis=1)
    world.add_heightmap(nx, ny, length, width, x0 + 0.5 * length, 0.0, heights, colors=colors)
    robot = world.add_articulated_system(tracked_robot_urdf(flippers=True), position=(0.0, 0.0, 0.194))
    drive_tracked_robot(robot, SPROCKET_SPEED, flipper_angle=FLIPPER_ANGLE)
    q = robot.get_generalized_coordinate(0)  # (the flippers start at their angle; q runs one ahead of u)
    q[[1 + robot.get_generalized_velocity_index(f"{s}_flipper_joint") for s in ("left", "right")]] = FLIPPER_ANGLE
    robot.set_generalized_coordinate(q)

    def report(w):
        q = robot.get_generalized_coordinate(0)
        u = robot.get_generalized_velocity(0)
        speeds = ", ".join(f"{t['name']} {robot.get_track_speed(k, env=0):+.2f}"
                           for k, t in enumerate(robot.get_tracks()))
        return (f"env 0 after {w.time:.2f} s: body at x = {q[0]:.2f} m, z = {q[2]:.3f} m (the top step is "
                f"{RISE * N_STEPS:.2f} m high from x = {FIRST + (N_STEPS - 1) * RUN:.2f} m), moving at "
                f"{u[0]:.2f} m/s; belt speeds [m/s]: {speeds}")

    camera = OrbitCamera(target=(1.2, 0.0, 0.3), distance=3.4, yaw=math.radians(-50.0), pitch=math.radians(38.0))
    return app.Scene(world, camera=camera, envs=None if args.envs == 1 else "all", report=report,
                     follow=robot)


def main(argv=None) -> dict:
    return app.main(build, "tracked_robot_steps", __doc__.splitlines()[0], argv, seconds=6.0)


if __name__ == "__main__":
    main()
