"""Scenes that the benchmarks (``perf/``) and the tests both build, defined here once.

- :func:`tracked_ridges_world`: the tracked robot with flippers (:mod:`taichi_terra.bodies.tracked_robot`)
  driving over a 129 x 129 height map of gentle ridges (0.02 m, 3 m long).
- Planar contact scenes as plain dicts (:func:`pen_scene`, :func:`push_scene`), so every engine (this package's
  planar world, IR-SIM in ``perf/peers``) builds the same bodies from one description, and
  :func:`build_planar_world`, a ``planar.World`` of one. The dict:

    {
      "dt": 0.1,                 # s, step time
      "gravity": 9.81,           # m/s^2, for ground friction (friction * mass * g)
      "walls": [[(x0, y0), (x1, y1), ...], ...],   # m, static line strings
      "bodies": [
        {"shape": "circle", "radius": r,                  # m
         "position": (x, y), "angle": th,                 # m, rad
         "kind": "passive" | "driven",
         "mass": m, "friction": mu,                       # kg, ground Coulomb coefficient
         # driven only:
         "kinematics": "diff", "command": (v, omega)},    # m/s, rad/s
        {"shape": "rectangle", "width": w, "height": h,   # m, extent along the body's x and y
         ...same keys...},
      ],
    }

  A closed wall line string has five points, the first equal to the last. Walls carry no friction of their own:
  :func:`build_planar_world` gives them ``WALL_FRICTION`` (0.5), as IR-SIM's world default. Everything is pure
  numpy and seeded, so a scene is the same on every call.
"""
from __future__ import annotations

import math

import numpy as np


#: the tracked robot's sprocket speed when driving [rad/s]
SPROCKET_SPEED = 4.0


def tracked_ridges_world(n_envs: int, *, speed: float = SPROCKET_SPEED, urdf: str | None = None):
    """The tracked robot with flippers on a 129 x 129 height map over 8 m x 8 m of ridges
    ``z = 0.02 sin(2 pi x / 3)`` [m], its base at (-2, 0, 0.22) m, its sprockets velocity-controlled at
    ``speed`` [rad/s] and its flippers held at -0.5 rad; dt = 2 ms. ``urdf``: another robot description
    (default: :func:`~taichi_terra.bodies.tracked_robot.tracked_robot_urdf` with flippers). Returns
    ``(world, system)``."""
    from .world import World
    from .bodies.tracked_robot import drive_tracked_robot, tracked_robot_urdf

    world = World(dt=2e-3, n_envs=n_envs)
    n = 129
    x = np.linspace(-4.0, 4.0, n)
    world.add_heightmap(n, n, 8.0, 8.0, 0.0, 0.0, (0.02 * np.sin(2.0 * math.pi * x / 3.0)[None, :]
                                                    * np.ones((n, 1))).ravel())
    system = world.add_articulated_system(urdf or tracked_robot_urdf(flippers=True), position=(-2.0, 0.0, 0.22))
    drive_tracked_robot(system, speed, flipper_angle=-0.5)
    return world, system


# -- planar scenes ------------------------------------------------------------------------------------------------
DT = 0.1                 # s
GRAVITY = 9.81           # m/s^2
PEN_RADIUS = 0.2         # m, circle radius in pen scenes
PEN_SIDE = 0.4           # m, square side in pen scenes
PEN_MASS = 1.0           # kg
PEN_FRICTION = 0.5
PEN_SHAPES = ("circle", "square")
WALL_FRICTION = 0.5        # walls' Coulomb coefficient (IR-SIM's world default)


def _pen(x0: float, y0: float, x1: float, y1: float) -> list[tuple[float, float]]:
    """Closed line string (5 points, m) around the rectangle [x0, x1] x [y0, y1]."""
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]


def _body(shape: str, size: dict, x: float, y: float, angle: float,
          mass: float, friction: float) -> dict:
    """A passive body description; ``size`` holds the shape's dimensions (m)."""
    return {"shape": shape, **size, "position": (float(x), float(y)),
            "angle": float(angle), "kind": "passive", "mass": float(mass),
            "friction": float(friction)}


def pen_scene(n: int, shape: str = "circle", fill: float = 0.5, seed: int = 0) -> dict:
    """``n`` passive bodies dropped at random into a square pen.

    Bodies are circles of radius 0.2 m or squares of side 0.4 m (random heading,
    uniform in [-pi, pi) rad), 1 kg each, ground friction 0.5. The pen is one
    closed wall line string around the square [-L/2, L/2]^2 (m), centred at the
    origin, whose inner area L^2 is chosen so that the bodies cover ``fill`` of it:
    L = sqrt(n * body_area / fill). Centres are uniform over the positions that
    keep each body wholly inside the pen, so bodies overlap one another at random;
    one contact step then separates them.

    Args:
        n: number of bodies (>= 1).
        shape: "circle" or "square".
        fill: fraction of the pen's inner area covered by the bodies, in (0, 1).
        seed: seed of ``numpy.random.default_rng``.

    Returns:
        The scene dict (see the module docstring); dt = 0.1 s, gravity 9.81 m/s^2.
    """
    if shape not in PEN_SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {PEN_SHAPES}")
    if n < 1 or not 0.0 < fill < 1.0:
        raise ValueError("need n >= 1 and 0 < fill < 1")
    rng = np.random.default_rng(seed)
    if shape == "circle":
        area = math.pi * PEN_RADIUS**2
        angles = np.zeros(n)
        half_extent = np.full(n, PEN_RADIUS)
    else:
        area = PEN_SIDE**2
        angles = rng.uniform(-math.pi, math.pi, n)
        # half of the axis-aligned bounding box of the turned square
        half_extent = 0.5 * PEN_SIDE * (np.abs(np.cos(angles)) + np.abs(np.sin(angles)))
    half = 0.5 * math.sqrt(n * area / fill)
    if np.any(half_extent > half):
        raise ValueError("pen too small for one body; raise n or lower fill")
    u = rng.uniform(0.0, 1.0, (n, 2))
    lo = -half + half_extent
    xy = lo[:, None] + u * (2.0 * (half - half_extent))[:, None]

    size = ({"radius": PEN_RADIUS} if shape == "circle"
            else {"width": PEN_SIDE, "height": PEN_SIDE})
    kind = "circle" if shape == "circle" else "rectangle"
    bodies = [_body(kind, size, x, y, th, PEN_MASS, PEN_FRICTION)
              for (x, y), th in zip(xy, angles)]
    return {"dt": DT, "gravity": GRAVITY,
            "walls": [_pen(-half, -half, half, half)], "bodies": bodies}


# push scene (m, kg)
ROBOT_SIZE = (0.6, 0.4)
ROBOT_MASS = 20.0
ROBOT_FRICTION = 1.0
ROBOT_COMMAND = (0.5, 0.0)   # m/s, rad/s
BOX_SIDE = 0.3
BOX_COUNT = 10
BOX_GAP = 0.01
FIRST_GAP = 0.05             # robot front to first box
WALL_GAP = 0.5               # last box to the wall
WALL_HALF_LENGTH = 1.0
PEN_MARGIN = 1.0


def push_scene() -> dict:
    """A diff-drive robot pushing a row of ten boxes into a wall.

    The robot (rectangle 0.6 m along x by 0.4 m, 20 kg, friction 1.0, command
    (0.5 m/s, 0 rad/s)) is centred at the origin heading +x, front face at
    x = 0.3 m. Ten passive boxes (0.3 m square, 1 kg, friction 0.5) follow along
    +x on y = 0: the first one's back face 5 cm ahead of the robot's front, 1 cm
    between boxes, so box i is centred at x = 0.5 + 0.31 i m (0.5 ... 3.29 m).
    A straight vertical wall (line string x = 3.94 m, y in [-1, 1] m) stands
    0.5 m beyond the last box's front face (3.44 m), and a closed pen 1 m
    clear of everything (x in [-1.3, 4.94] m, y in [-1.5, 1.5] m) keeps the
    bodies in. All headings are 0.

    The robot's traction, 1.0 * 20 kg * 9.81 = 196 N, beats the ten boxes'
    ground friction, 10 * 0.5 * 1 kg * 9.81 = 49 N: the robot pushes the whole
    row until it is packed against the wall (0.64 m of free travel, about 13
    steps of 0.05 m), then stalls.

    Returns:
        The scene dict (see the module docstring); dt = 0.1 s, gravity 9.81 m/s^2.
    """
    length, width = ROBOT_SIZE
    robot = _body("rectangle", {"width": length, "height": width}, 0.0, 0.0, 0.0,
                  ROBOT_MASS, ROBOT_FRICTION)
    robot.update(kind="driven", kinematics="diff", command=ROBOT_COMMAND)
    first = 0.5 * length + FIRST_GAP + 0.5 * BOX_SIDE
    boxes = [_body("rectangle", {"width": BOX_SIDE, "height": BOX_SIDE},
                   first + i * (BOX_SIDE + BOX_GAP), 0.0, 0.0, 1.0, 0.5)
             for i in range(BOX_COUNT)]
    wall_x = boxes[-1]["position"][0] + 0.5 * BOX_SIDE + WALL_GAP
    wall = [(wall_x, -WALL_HALF_LENGTH), (wall_x, WALL_HALF_LENGTH)]
    pen = _pen(-0.5 * length - PEN_MARGIN, -WALL_HALF_LENGTH - 0.5,
               wall_x + PEN_MARGIN, WALL_HALF_LENGTH + 0.5)
    return {"dt": DT, "gravity": GRAVITY, "walls": [pen, wall],
            "bodies": [robot] + boxes}


def build_planar_world(scene: dict, n_envs: int, **options):
    """A ``planar.World`` of ``scene`` (:func:`pen_scene`, :func:`push_scene`) in ``n_envs`` identical envs.

    Walls become static line strings (friction 0.5); bodies become circles or rectangles with the scene's pose,
    mass and friction; driven bodies get their kinematics and hold their command. The walls come first, then
    the bodies in scene order. ``options`` go to the World (e.g. ``iterations``)."""
    from .planar import World

    world = World(dt=scene["dt"], n_envs=n_envs, gravity=scene["gravity"], **options)
    for wall in scene["walls"]:
        world.add_linestring(wall, friction=WALL_FRICTION)
    for body in scene["bodies"]:
        opts = {"position": body["position"], "angle": body["angle"], "mass": body["mass"],
                "friction": body["friction"]}
        if body["kind"] == "driven":
            opts["kinematics"] = body["kinematics"]
        if body["shape"] == "circle":
            obj = world.add_circle(body["radius"], **opts)
        elif body["shape"] == "rectangle":
            obj = world.add_rectangle(body["width"], body["height"], **opts)
        else:
            raise ValueError(f"unknown shape {body['shape']!r}")
        if body["kind"] == "driven":
            obj.set_command(body["command"])
    return world
