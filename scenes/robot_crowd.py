"""Robot crowd: four driven robots (two diff-drive, one omni, one car-like) sweep through a crowd of forty
passive bodies (discs, squares, L shapes and a dumbbell) in an arena walled by an occupancy-grid map.

    python scenes/robot_crowd.py                       # a window ([ and ] switch envs, c toggles contacts)
    python scenes/robot_crowd.py --envs 16 --headless --record robot_crowd.gif --still robot_crowd.png

A planar world (``taichi_terra.planar``) stepped at dt = 0.1 s. The arena is an 8 x 6 m occupancy grid of
0.2 m cells: a one-cell border and two 0.6 m pillars, whose cell boundaries are the walls (drawn as
outlines). Each robot follows a scripted path, which the controller turns into velocity commands before
every frame: the diff-drive box circles through the left half, the diff-drive disc shuttles back and forth
along the top, the omni base strafes up and down across the middle without turning, and the car laps the
right pillar. The robots (20 kg, traction 196 N) shove the bodies (1 kg, 4.9 N of ground friction each),
which stop soon after a push. The L shapes are non-convex polygons (split into triangles for contact), the
dumbbell is one compound body of two discs and a bar.

Every env starts alike, but env e runs the paths 1 + 0.05 (e mod 8) times as fast, so the envs diverge;
env 0 (at the nominal speed) is drawn.
"""
from __future__ import annotations

import math

import numpy as np
from shapely.geometry import box as shapely_box

from taichi_terra.viewer import app

CELL = 0.2  # [m] occupancy-grid resolution
ARENA = (40, 30)  # cells along x and y (8 x 6 m), centred on the origin
PILLARS = [(-1.6, 1.0), (1.6, -1.0)]  # [m] pillar centres; each pillar is 3 x 3 cells
N_BODIES = 40
ROBOT_MASS, ROBOT_FRICTION = 20.0, 1.0  # [kg], traction 20 * 9.81 = 196 N
BODY_MASS, BODY_FRICTION = 1.0, 0.5  # [kg], each body resists with 4.9 N
TOP_SPEED = 1.2  # [m/s] of every robot
LOOKAHEAD = 0.6  # [s] the diff drives and the car chase their path point this far ahead
MAX_STEER = 0.6  # [rad] the car's steering limit
WHEELBASE = 0.5  # [m] the car's
ENV_SPEEDUP = 0.05  # env e runs the paths 1 + ENV_SPEEDUP * (e % 8) times as fast
L_SHAPE = np.array([(0.0, 0.0), (0.5, 0.0), (0.5, 0.16), (0.16, 0.16), (0.16, 0.42), (0.0, 0.42)]) - (0.17, 0.13)


def triangle(t, period):
    """A triangle wave in [0, 1] of ``period`` [s], 0 at t = 0."""
    u = np.mod(t / period, 1.0)
    return 1.0 - np.abs(1.0 - 2.0 * u)


#: the robots, in command order: name -> (kinematics, path (x, y) [m] as a function of time t [s] (arrays))
ROBOTS = {
    "sweeper": ("diff", lambda t: (-1.3 + 1.3 * np.cos(0.4 * t - math.pi / 2),  # circles, 0.52 m/s
                                   -0.8 + 1.3 * np.sin(0.4 * t - math.pi / 2))),
    "shuttle": ("diff", lambda t: (3.0 - 4.0 * triangle(t, 16.0), 1.95 + 0 * t)),  # back and forth, 0.5 m/s
    "strafer": ("omni", lambda t: (0.3 + 0 * t, -2.2 + 4.4 * triangle(t, 17.6))),  # up and down, 0.5 m/s
    "car": ("acker", lambda t: (1.6 + 1.8 * np.cos(math.pi / 2 - 0.35 * t),  # clockwise round a pillar
                                -1.0 + 1.3 * np.sin(math.pi / 2 - 0.35 * t))),
}


def path_pose(path, t):
    """Points (n, 2) [m] of a path at times ``t`` (n,) [s] and the headings (n,) [rad] of its direction there."""
    p, ahead = np.stack(path(t), -1), np.stack(path(t + 0.05), -1)
    return p, np.arctan2(ahead[:, 1] - p[:, 1], ahead[:, 0] - p[:, 0])


def wrap(angle):
    """Angles [rad] in [-pi, pi)."""
    return np.mod(angle + math.pi, 2.0 * math.pi) - math.pi


def track(kinematics: str, path, pose: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Commands (n_envs, 2) that bring robots at ``pose`` (n_envs, 3) onto ``path`` at times ``t`` (n_envs,) [s]:
    a diff drive turns toward the point LOOKAHEAD ahead and drives as it faces it, the car steers for it by
    pure pursuit, the omni base moves with the path's velocity plus a pull onto its point, in its body frame."""
    x, y, h = pose.T
    if kinematics == "omni":
        now, soon = np.stack(path(t), -1), np.stack(path(t + 0.1), -1)
        v = (soon - now) / 0.1 + 2.0 * (now - pose[:, :2])  # [m/s] world frame
        v *= np.minimum(1.0, TOP_SPEED / np.maximum(np.linalg.norm(v, axis=1), 1e-9))[:, None]
        c, s = np.cos(h), np.sin(h)
        return np.stack([c * v[:, 0] + s * v[:, 1], -s * v[:, 0] + c * v[:, 1]], -1)
    gx, gy = path(t + LOOKAHEAD)
    dist = np.hypot(gx - x, gy - y)
    err = wrap(np.arctan2(gy - y, gx - x) - h)
    if kinematics == "acker":
        steer = np.clip(np.arctan2(2.0 * WHEELBASE * np.sin(err), np.maximum(dist, 0.3)), -MAX_STEER, MAX_STEER)
        return np.stack([np.clip(1.2 * dist, 0.0, TOP_SPEED), steer], -1)
    speed = np.clip(1.2 * dist, 0.0, TOP_SPEED) * np.maximum(np.cos(err), 0.0) ** 2
    return np.stack([speed, np.clip(4.0 * err, -2.5, 2.5)], -1)


def occupancy_map() -> np.ndarray:
    """``occ[ix, iy]``: True where cell (ix, iy) is wall: the border and the pillars."""
    occ = np.zeros(ARENA, bool)
    occ[[0, -1], :] = occ[:, [0, -1]] = True
    for px, py in PILLARS:
        ix, iy = round(px / CELL + ARENA[0] / 2), round(py / CELL + ARENA[1] / 2)
        occ[ix - 1:ix + 2, iy - 1:iy + 2] = True
    return occ


def add_crowd(world, rng, keep_clear) -> list:
    """Forty passive bodies at jittered sites of a 0.7 x 0.8 m grid, 0.75 m clear of ``keep_clear`` points."""
    sites = [(x, y) for x in np.linspace(-2.8, 2.8, 9) for y in np.linspace(-2.0, 2.0, 6)
             if min(math.dist((x, y), p) for p in keep_clear) > 0.75]
    sites = [sites[i] for i in np.sort(rng.choice(len(sites), N_BODIES, replace=False))]
    bodies = []
    for k, (x, y) in enumerate(sites):
        opts = {"position": (x + rng.uniform(-0.08, 0.08), y + rng.uniform(-0.08, 0.08)),
                "angle": rng.uniform(-math.pi, math.pi), "mass": BODY_MASS, "friction": BODY_FRICTION}
        if k == 20:  # one compound body: two discs on a bar
            bodies.append(world.add_compound([("circle", (-0.25, 0.0), 0.12), ("circle", (0.25, 0.0), 0.12),
                                              shapely_box(-0.25, -0.04, 0.25, 0.04)], name="dumbbell", **opts))
        elif k % 7 == 3:
            bodies.append(world.add_polygon(L_SHAPE, name=f"L{k}", **opts))
        elif k % 2:
            side = rng.uniform(0.28, 0.42)
            bodies.append(world.add_rectangle(side, side, name=f"square{k}", **opts))
        else:
            bodies.append(world.add_circle(rng.uniform(0.13, 0.22), name=f"disc{k}", **opts))
    return bodies


def build(args) -> app.Scene:
    from taichi_terra import planar

    n = args.envs
    world = planar.World(dt=0.1, n_envs=n)
    world.add_grid_map(occupancy_map(), CELL, origin=(-ARENA[0] * CELL / 2, -ARENA[1] * CELL / 2), name="arena")
    rate = 1.0 + ENV_SPEEDUP * (np.arange(n) % 8)  # (n,) path time per second, per env
    starts = {name: path_pose(path, np.zeros(n)) for name, (_, path) in ROBOTS.items()}
    bodies = add_crowd(world, np.random.default_rng(7), PILLARS + [tuple(p[0]) for p, _ in starts.values()])
    shapes = {"sweeper": lambda **o: world.add_rectangle(0.6, 0.4, **o),
              "shuttle": lambda **o: world.add_circle(0.25, **o),
              "strafer": lambda **o: world.add_rectangle(0.45, 0.45, **o),
              "car": lambda **o: world.add_rectangle(0.7, 0.36, wheelbase=WHEELBASE, **o)}
    robots = []
    for name, (kinematics, _) in ROBOTS.items():
        robot = shapes[name](kinematics=kinematics, mass=ROBOT_MASS, friction=ROBOT_FRICTION, name=name)
        p, heading = starts[name]
        robot.set_pose(np.column_stack([p, heading]))
        robots.append(robot)
    start = world.get_poses()

    def controller(w):
        t = rate * w.time
        w.set_commands(np.stack([track(kin, path, robot.get_pose(), t)
                                 for robot, (kin, path) in zip(robots, ROBOTS.values())], axis=1))

    def report(w):
        passive = np.array([b.index for b in bodies])
        speed = np.linalg.norm(w.get_velocities()[:, passive, :2], axis=-1)  # (n_envs, n_bodies) [m/s]
        moved = np.linalg.norm(w.get_poses()[:, passive, :2] - start[:, passive, :2], axis=-1)
        c = w.get_contacts()
        deepest = [float(c.depth[e, :c.count[e]].max(initial=0.0)) for e in range(w.n_envs)]
        n_moved = int((moved[0] > 0.05).sum())
        lines = [f"env 0 after {w.time:.2f} s:",
                 (f"  passive bodies: mean speed {speed[0].mean():.3f} m/s, {n_moved} of {len(bodies)} moved more "
                  f"than 5 cm (farthest {moved[0].max():.2f} m)"),
                 f"  {c.count[0]} contacts, deepest overlap pushed apart in the last step {deepest[0] * 1e3:.2f} mm"]
        if w.n_envs > 1:
            lines.append(f"all {w.n_envs} envs: passive mean speed {speed.mean():.3f} m/s, {c.count.sum()} contacts "
                         f"({c.count.min()} to {c.count.max()} per env), deepest {max(deepest) * 1e3:.2f} mm, "
                         f"{int(np.sum(w.get_pair_overflow()))} candidate pairs dropped")
        return "\n".join(lines)

    return app.Scene(world=world, controller=controller, report=report)  # camera None: frame the arena


def main(argv=None) -> dict:
    return app.main(build, "robot_crowd", __doc__.splitlines()[0], argv, seconds=12.0)


if __name__ == "__main__":
    main()
