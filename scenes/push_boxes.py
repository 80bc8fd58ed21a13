"""Push boxes: a diff-drive robot pushes a row of ten boxes into a wall until the packed row stalls it, then
backs off, drives round the row and shoves the last two boxes sideways, sliding them along the wall.

    python scenes/push_boxes.py                      # a window (drag to pan, +/- zoom, c toggles contacts)
    python scenes/push_boxes.py --headless --record push_boxes.gif --still push_boxes.png

A planar world (``taichi_terra.planar``) stepped at dt = 0.1 s. The robot (0.6 x 0.4 m, 20 kg, friction 1.0)
pushes with at most its traction, 1.0 * 20 kg * 9.81 m/s^2 = 196 N, and the boxes (0.3 m square, 1 kg,
friction 0.5) resist with 4.9 N each, so it drives the whole row until the row is packed against the wall,
and then stalls. A scripted controller (a plan of timed drives, waypoints and turns, closed-loop on the
robot's pose) then takes it back, round the row and up against the two boxes at the wall. The closed pen
keeps everything in. Red dots are contacts, their lines the contact forces.

The controller runs before each frame's steps, so at ``--fps`` >= 10 (one step per frame or fewer) the
motion does not depend on the frame rate.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import app

ROBOT = (0.6, 0.4)  # [m] length (along the heading) x width
BOX = 0.3  # [m] box side
N_BOXES = 10
START_X = -1.9  # [m] robot centre at t = 0
ROW_GAPS = (0.1, 0.1)  # [m] robot front to the first box, then between boxes
WALL_X = 2.65  # [m] the wall, x = WALL_X for |y| <= 1 m
PEN = (-2.6, -1.6, 3.2, 1.6)  # [m] xmin, ymin, xmax, ymax
PUSH_SPEED = 0.5  # [m/s]
TRANSIT_SPEED = 1.0  # [m/s] top speed between waypoints
MAX_YAW_RATE = 2.5  # [rad/s]
YAW_GAIN = 5.0  # [1/s] yaw rate per radian of heading error
#: the controller's plan, done in order: ("drive", until [s], speed [m/s]) straight on; ("goto", (x, y) [m])
#: turns toward the point and drives there; ("face", heading [rad]) turns in place
PLAN = [("drive", 3.2, PUSH_SPEED),  # push the row into the wall; stalls at about 2.5 s
        ("drive", 4.0, -PUSH_SPEED),  # back off 0.4 m
        ("goto", (-0.6, -0.65)),  # clear the row's rear corner
        ("goto", (2.3, -0.65)),  # along the row, below it
        ("face", math.pi / 2),
        ("drive", math.inf, PUSH_SPEED)]  # shove the last two boxes up along the wall


def wrap(angle):
    """An angle [rad] in [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def plan_command(step, pose, time: float):
    """The diff-drive command (forward speed [m/s], yaw rate [rad/s]) for a ``PLAN`` step from the robot's
    ``pose`` (x, y, heading) at ``time`` [s], or None once the step is done."""
    what, arg = step[0], step[1]
    turn = lambda err: float(np.clip(YAW_GAIN * err, -MAX_YAW_RATE, MAX_YAW_RATE))
    if what == "drive":
        return (step[2], 0.0) if time < arg - 1e-9 else None
    if what == "face":
        err = wrap(arg - pose[2])
        return (0.0, turn(err)) if abs(err) > 0.02 else None
    offset = np.subtract(arg, pose[:2])
    dist = float(np.hypot(*offset))
    if dist < 0.05:
        return None
    err = wrap(math.atan2(offset[1], offset[0]) - pose[2])
    speed = min(TRANSIT_SPEED, 2.0 * dist) * max(0.0, math.cos(err)) ** 4  # creep until it faces the point
    return speed, turn(err)


def build(args) -> app.Scene:
    from taichi_terra import planar

    world = planar.World(dt=0.1, n_envs=args.envs)
    robot = world.add_rectangle(*ROBOT, kinematics="diff", mass=20.0, friction=1.0, position=(START_X, 0.0),
                                name="robot")
    first = START_X + ROBOT[0] / 2 + ROW_GAPS[0] + BOX / 2
    boxes = [world.add_rectangle(BOX, BOX, mass=1.0, friction=0.5, position=(first + k * (BOX + ROW_GAPS[1]), 0.0),
                                 name=f"box{k}") for k in range(N_BOXES)]
    world.add_linestring([(WALL_X, -1.0), (WALL_X, 1.0)], name="wall")
    x0, y0, x1, y1 = PEN
    world.add_linestring([(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)], name="pen")
    step_of_env = np.zeros(args.envs, int)  # the PLAN step each env's robot is on

    def controller(w):
        poses = robot.get_pose()
        commands = np.zeros((w.n_envs, 2))
        for e in range(w.n_envs):
            while (command := plan_command(PLAN[step_of_env[e]], poses[e], w.time)) is None:
                step_of_env[e] += 1
            commands[e] = command
        robot.set_command(commands)

    def report(w):
        x, y, heading = robot.get_pose(0)
        c = w.get_contacts(0)
        depth = c.depth[0, :c.count[0]]
        deepest = float(depth.max()) if len(depth) else 0.0
        pushes = robot.get_contact_reports(0)
        lines = [f"env 0 after {w.time:.2f} s:",
                 f"  robot at ({x:+.3f}, {y:+.3f}) m, heading {math.degrees(heading):+.1f} deg",
                 "  boxes at [m]: " + ", ".join(f"({p[0]:+.2f}, {p[1]:+.2f})" for p in (b.get_pose(0) for b in boxes)),
                 f"  {c.count[0]} contacts; deepest overlap pushed apart in the last step {deepest * 1e3:.2f} mm",
                 "  contact forces on the robot: " + (", ".join(
                     f"{r.force:.1f} N from {r.other.name} along ({r.normal[0]:+.2f}, {r.normal[1]:+.2f})"
                     for r in pushes) or "none")]
        return "\n".join(lines)

    return app.Scene(world=world, camera=None, controller=controller, report=report)  # camera: frame the pen


def main(argv=None) -> dict:
    return app.main(build, "push_boxes", __doc__.splitlines()[0], argv, seconds=12.5)


if __name__ == "__main__":
    main()
