"""Handles to the objects of a planar world, and the checks of their parameters."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..kernels.planar.arrays import DRIVEN, KIN_ACKER, KIN_DIFF, KIN_OMNI, PASSIVE, STATIC
from ..validation import as_float_array
from .shapes import MassProperties, Piece

KINDS = {"static": STATIC, "passive": PASSIVE, "driven": DRIVEN}
KINEMATICS = {"diff": KIN_DIFF, "omni": KIN_OMNI, "acker": KIN_ACKER}
#: what each kinematics model's command (u0, u1) means
COMMANDS = {"diff": "(forward speed [m/s], yaw rate [rad/s])",
            "omni": "(forward speed, lateral speed) [m/s] in the body frame",
            "acker": "(forward speed [m/s], steering angle [rad])"}


def per_env(name: str, value, width: int, n_envs: int) -> np.ndarray:
    """``value`` of shape (width,) (every env) or (n_envs, width), finite, as an (n_envs, width) float array."""
    try:
        arr = as_float_array(name, value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers of shape ({width},) or ({n_envs}, {width})") from exc
    if arr.shape == (width,):
        arr = np.broadcast_to(arr, (n_envs, width))
    if arr.shape != (n_envs, width):
        raise ValueError(f"{name} must have shape ({width},) or (n_envs={n_envs}, {width}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return np.array(arr)


@dataclass
class ObjectSpec:
    """Everything the builder knows about one object (body frame, SI units)."""

    name: str
    kind: str
    pieces: list[Piece]
    props: MassProperties
    mass: float  # [kg], inf for static objects
    inertia: float  # [kg m^2] about the centre of mass, inf for static objects
    friction: float
    restitution: float
    kinematics: str | None = None
    wheelbase: float = 1.0  # [m] (acker)
    grid: object = None  # GridBoundary of an occupancy map
    pose: np.ndarray = field(default=None)  # (n_envs, 4) x, y, heading, steering
    velocity: np.ndarray = field(default=None)  # (n_envs, 3)
    command: np.ndarray = field(default=None)  # (n_envs, 2)

    @property
    def bound(self) -> float:
        """Radius [m] about the centre of mass that holds every piece."""
        return max(p.reach(self.props.center) for p in self.pieces)


class PlanarObject:
    """One object of a :class:`~taichi_terra.planar.World`: static, passive or driven.

    Getters take ``env=None`` (every env, env axis first) or an env index. Poses are (x [m], y [m], heading
    [rad]) of the object's body frame, in which its shape was given; velocities are the world-frame (vx, vy)
    [m/s] of its centre of mass and its yaw rate [rad/s].
    """

    def __init__(self, world, index: int, spec: ObjectSpec):
        self._world, self.index, self._spec = world, index, spec

    name = property(lambda self: self._spec.name, doc="the object's name")
    kind = property(lambda self: self._spec.kind, doc="'static', 'passive' or 'driven'")
    kinematics = property(lambda self: self._spec.kinematics, doc="'diff', 'omni', 'acker', or None")
    mass = property(lambda self: self._spec.mass, doc="[kg] (inf for static objects)")
    inertia = property(lambda self: self._spec.inertia, doc="[kg m^2] about the centre of mass (inf if static)")
    friction = property(lambda self: self._spec.friction, doc="ground and surface friction coefficient")
    restitution = property(lambda self: self._spec.restitution, doc="bounciness in [0, 1]")
    area = property(lambda self: self._spec.props.area, doc="[m^2]")
    center_of_mass = property(lambda self: self._spec.props.center.copy(), doc="(2,) [m] in the body frame")
    bounding_radius = property(lambda self: self._spec.bound, doc="[m] about the centre of mass")

    @property
    def traction(self) -> float:
        """Ground friction force ``friction * mass * gravity`` [N]: what a push must overcome to slide a passive
        body, and the most a driven object can push with (inf for static objects)."""
        return self._spec.friction * self._spec.mass * self._world.gravity if self._spec.kind != "static" \
            else math.inf

    def __repr__(self) -> str:
        kin = f", {self.kinematics}" if self.kinematics else ""
        return f"PlanarObject({self.index}, {self.name!r}, {self.kind}{kin})"

    def get_pose(self, env=None) -> np.ndarray:
        """(x, y, heading) [m, m, rad]: (n_envs, 3), or (3,) for one env."""
        return self._world._get("pose", self.index, env)[..., :3]

    def set_pose(self, pose, env=None) -> None:
        """Place the body frame at (x, y, heading): shape (3,) or (n_envs, 3) for every env, (3,) for one."""
        self._world._set_state("pose", self.index, pose, env)

    def get_velocity(self, env=None) -> np.ndarray:
        """(vx, vy, yaw rate) of the centre of mass [m/s, m/s, rad/s]: (n_envs, 3), or (3,) for one env."""
        return self._world._get("velocity", self.index, env)

    def set_velocity(self, velocity, env=None) -> None:
        """Give a passive body a velocity (vx, vy, yaw rate), world frame; it then coasts under friction."""
        self._world._set_state("velocity", self.index, velocity, env)

    def get_steering(self, env=None) -> np.ndarray:
        """Steering angle [rad] of an ``acker`` object: (n_envs,), or a float for one env."""
        return self._world._get("pose", self.index, env)[..., 3]

    def set_command(self, command, env=None) -> None:
        """Velocity command of a driven object, held until changed: shape (2,) or (n_envs, 2); its meaning
        depends on the kinematics (see :data:`COMMANDS`)."""
        self._world._set_state("command", self.index, command, env)

    def get_command(self, env=None) -> np.ndarray:
        return self._world._get("command", self.index, env)

    def get_geometry(self, env: int = 0, *, circle_sides: int = 64):
        """The object's shape posed in env ``env``, as a shapely geometry in world metres: its polygons and
        discs (each disc as a regular polygon of ``circle_sides`` sides inscribed in it) merged into one area,
        and its segments (walls, grid-map boundaries) as lines beside it."""
        import shapely
        from shapely.geometry import LineString, Point, Polygon

        from .shapes import CIRCLE, POLYGON

        if isinstance(env, bool) or not isinstance(env, (int, np.integer)):
            raise TypeError(f"env must be an int, got {env!r}")
        if isinstance(circle_sides, bool) or not isinstance(circle_sides, (int, np.integer)) or circle_sides < 8:
            raise ValueError(f"circle_sides must be an int >= 8, got {circle_sides!r}")
        x, y, h = self.get_pose(env)
        rot = np.array([[math.cos(h), -math.sin(h)], [math.sin(h), math.cos(h)]])
        parts = []
        for piece in self._spec.pieces:
            v = piece.vertices @ rot.T + (x, y)
            if piece.kind == CIRCLE:  # quad_segs: sides per quarter circle
                parts.append(Point(v[0]).buffer(piece.radius, quad_segs=max(2, int(circle_sides) // 4)))
            elif piece.kind == POLYGON:
                parts.append(Polygon(v))
            else:
                parts.append(LineString(v))
        return shapely.unary_union(parts)

    def get_contact_reports(self, env: int = 0) -> list:
        """This object's contacts in env ``env`` in the last step, from its side (:class:`ContactReport`)."""
        return [c.report(self) for c in self._world.get_contact_list(env) if c.a is self or c.b is self]
