"""The planar contact world: 2D robots and objects that push, slide and turn, batched over envs.

``step(n)`` is one kernel launch whatever the number of objects, envs and steps (``kernels/planar/step.py``;
on vulkan one launch per step).
Each step of an env is the kinematic step (driven objects follow their commands, passive bodies coast under
ground friction) and then the contact step (``kernels/planar/contact.py``), which separates overlapping
objects by position-based dynamics.
"""
from __future__ import annotations

import math
import numbers
from typing import ClassVar

import numpy as np
import shapely

from .. import backend
from ..kernels.planar import arrays as L
from ..validation import as_float_array, check_env, check_finite, check_int, check_positive, real_limits
from .objects import COMMANDS, KINDS, KINEMATICS, ObjectSpec, PlanarObject, per_env
from .reports import Contact, ContactArrays, ObjectContactArrays, object_view
from .shapes import circle_piece, geometry_pieces, grid_boundary, line_pieces, mass_properties

#: gap left between separated bodies [m]
CONTACT_SLOP = 1e-6
#: bodies closer than this rest against each other [m]
REST_TOLERANCE = 1e-5
#: most Gauss-Seidel sweeps per step
CONTACT_ITERATIONS = 32


def _nonneg(name: str, value) -> float:
    v = check_finite(name, value)
    if v < 0.0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return v


def _unit(name: str, value) -> float:
    v = _nonneg(name, value)
    if v > 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return v


#: the keyword options of every ``add_*`` method (:meth:`World.add_geometry` documents them), by what they set:
#: where the object starts, how it moves, its body, and its label
PLACEMENT_OPTIONS = ("position", "angle")
DRIVE_OPTIONS = ("kind", "kinematics", "wheelbase")
BODY_OPTIONS = ("mass", "inertia", "friction", "restitution")
OBJECT_OPTIONS = (*PLACEMENT_OPTIONS, *DRIVE_OPTIONS, *BODY_OPTIONS, "name")


def _drive(options: dict) -> tuple:
    """The object's ``kind``, ``kinematics`` and wheelbase [m] (1 unless given) from its options, checked."""
    kind, kinematics, wheelbase = (options.get(key) for key in DRIVE_OPTIONS)
    if kinematics is not None and kinematics not in KINEMATICS:
        raise ValueError(f"kinematics must be one of {sorted(KINEMATICS)} or None, got {kinematics!r}")
    kind = kind if kind is not None else ("driven" if kinematics is not None else "passive")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    if (kind == "driven") != (kinematics is not None):
        raise ValueError(f"kinematics is required for a driven object and not allowed for a {kind} one "
                         f"(kind={kind!r}, kinematics={kinematics!r})")
    if wheelbase is not None and kinematics != "acker":
        raise ValueError("wheelbase applies to 'acker' kinematics only")
    return kind, kinematics, 1.0 if wheelbase is None else check_positive("wheelbase", wheelbase)


def _mass_and_inertia(kind: str, props, mass, inertia) -> tuple:
    """Mass [kg] and inertia about the centre of mass [kg m^2] of an object of ``kind`` whose pieces have the
    mass properties ``props``: inf for a static one; ``mass`` (default 1) and ``inertia`` (default: a uniform
    body of this shape) checked otherwise."""
    if kind == "static":
        if mass is not None and not (isinstance(mass, numbers.Real) and math.isinf(mass) and mass > 0):
            raise ValueError("mass: a static object is immovable; leave mass unset (or inf)")
        if inertia is not None:
            raise ValueError("inertia: a static object is immovable; leave inertia unset")
        return math.inf, math.inf
    if props.area <= 0.0:
        raise ValueError(f"a {kind} object needs an area (mass spreads over it); line strings are static")
    m = check_positive("mass", 1.0 if mass is None else mass)
    I = props.inertia(m) if inertia is None else check_positive("inertia", inertia)
    precision, largest, tiny = real_limits()
    if not (tiny <= m <= largest and tiny <= I <= largest):
        raise ValueError(f"mass={m!r} kg gives an inertia {I!r} kg m^2; both must lie between {tiny:.3g} "
                         f"and {largest:.3g} to be finite and invertible in {precision}")
    return m, I


def _start_pose(options: dict, n_envs: int) -> np.ndarray:
    """The pose (x [m], y [m], heading [rad], steering angle 0) the object starts at in every env, shape
    (n_envs, 4), from its options ``position`` (default (0, 0)) and ``angle`` (default 0), checked."""
    position = options.get("position", (0.0, 0.0))
    pos = as_float_array("position", position)
    if pos.shape != (2,) or not np.all(np.isfinite(pos)):
        raise ValueError(f"position must be 2 finite numbers (x, y) [m], got {position!r}")
    ang = check_finite("angle", options.get("angle", 0.0))
    return np.tile([pos[0], pos[1], ang, 0.0], (n_envs, 1))


class World:
    """A batched 2D world of static, passive and driven objects in position-based contact.

    Args:
        dt: step time [s], > 0.
        n_envs: independent copies of the world, each with its own states and commands (>= 1).
        gravity: [m/s^2] >= 0; ground friction of a body is ``friction * mass * gravity``.
        friction: default friction coefficient of objects (ground and surfaces), >= 0.
        restitution: default restitution of objects in [0, 1] (a pair uses the mean of its two).
        iterations: most Gauss-Seidel sweeps per step (>= 1).
        slop: gap left between separated bodies [m], >= 0.
        rest_tolerance: bodies closer than this rest against each other [m], >= 0.
        max_pairs: candidate pairs kept per env per step (default: min(n (n - 1) / 2, 16 n) for n objects);
            more are dropped and counted (:meth:`get_pair_overflow`).
    """

    is_planar = True

    def __init__(self, dt: float = 0.1, n_envs: int = 1, gravity: float = 9.81, friction: float = 0.5, *,
                 restitution: float = 0.0, iterations: int = CONTACT_ITERATIONS, slop: float = CONTACT_SLOP,
                 rest_tolerance: float = REST_TOLERANCE, max_pairs: int | None = None):
        self.dt = check_positive("dt", dt)
        self.n_envs = check_int("n_envs", n_envs, 1)
        self.gravity = _nonneg("gravity", gravity)
        self.friction = _nonneg("friction", friction)
        self.restitution = _unit("restitution", restitution)
        self.iterations = check_int("iterations", iterations, 1)
        self.slop = _nonneg("slop", slop)
        self.rest_tolerance = _nonneg("rest_tolerance", rest_tolerance)
        self._max_pairs = None if max_pairs is None else check_int("max_pairs", max_pairs, 1)
        self._specs: list[ObjectSpec] = []
        self.objects: list[PlanarObject] = []
        self.time = 0.0
        self._built = False

    # -- building --------------------------------------------------------------------------------------------

    def add_circle(self, radius: float, **options) -> PlanarObject:
        """A disc of ``radius`` [m] centred on its body frame. Options as in :meth:`add_geometry`."""
        r = check_positive("radius", radius)
        return self._add("circle", lambda: [circle_piece((0.0, 0.0), r)], options)

    def add_rectangle(self, width: float, height: float, **options) -> PlanarObject:
        """A ``width`` x ``height`` [m] rectangle centred on its body frame, width along the heading."""
        w, h = check_positive("width", width) / 2, check_positive("height", height) / 2
        return self._add("rectangle", lambda: geometry_pieces("rectangle", shapely.box(-w, -h, w, h)), options)

    def add_polygon(self, vertices, **options) -> PlanarObject:
        """A simple polygon from its (n, 2) vertices [m] in the body frame, convex or not (a non-convex one is
        split into constrained Delaunay triangles). Degenerate polygons raise ValueError."""
        v = as_float_array("vertices", vertices)
        if v.ndim != 2 or v.shape[1] != 2 or v.shape[0] < 3 or not np.all(np.isfinite(v)):
            raise ValueError(f"vertices must be a finite (n >= 3, 2) array, got shape {v.shape}")
        return self._add("polygon", lambda: geometry_pieces("vertices", shapely.Polygon(v)), options)

    def add_linestring(self, points, **options) -> PlanarObject:
        """A wall along the (n, 2) points [m] (a closed pen repeats its first point last); static only."""
        p = as_float_array("points", points)
        if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 2 or not np.all(np.isfinite(p)):
            raise ValueError(f"points must be a finite (n >= 2, 2) array, got shape {p.shape}")
        def pieces():
            out = line_pieces(p)
            if not out:
                raise ValueError("points must contain two distinct points")
            return out

        options.setdefault("kind", "static")
        return self._add("linestring", pieces, options)

    def add_compound(self, parts, **options) -> PlanarObject:
        """One rigid object made of several parts (shapely polygons or line strings, or ``("circle", (cx, cy),
        r)`` tuples), in the body frame; its mass is spread over their area."""
        if isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__"):
            raise TypeError("parts must be a list of shapely geometries or ('circle', (cx, cy), r) tuples")
        parts = list(parts)
        if not parts:
            raise ValueError("parts must not be empty")
        return self._add("compound", lambda: [p for i, part in enumerate(parts)
                                              for p in geometry_pieces(f"parts[{i}]", part)], options)

    def add_geometry(self, geometry, **options) -> PlanarObject:
        """Any shapely geometry in the body frame (polygons, line strings, or collections of them).

        Keyword options (all objects):
            kind: 'static' (immovable), 'passive' (pushed, coasts under ground friction) or 'driven' (follows
                velocity commands); default 'driven' when ``kinematics`` is given, else 'passive'.
            position: (x, y) [m] of the body frame, default (0, 0); angle: heading [rad], default 0.
            mass: [kg] > 0 (passive and driven; default 1); static objects take none.
            friction: >= 0 (default: the world's); restitution: in [0, 1] (default: the world's).
            inertia: [kg m^2] > 0 about the centre of mass (default: a uniform body of this shape).
            kinematics: 'diff', 'omni' or 'acker' (driven only); wheelbase: [m] > 0 (acker, default 1).
            name: a label (default: '<shape><index>').
        """
        return self._add("geometry", lambda: geometry_pieces("geometry", geometry), options)

    def add_grid_map(self, occupancy, resolution: float, origin=(0.0, 0.0), *, friction=None,
                     name: str | None = None) -> PlanarObject:
        """A static occupancy-grid map: ``occupancy[ix, iy]`` (truthy: occupied) is the cell spanning
        ``origin + resolution * ([ix, ix + 1], [iy, iy + 1])`` [m]. Its boundary is a set of segments, and a
        bucket index hands each object only the segments near it. A map cannot be moved."""
        occ = np.asarray(occupancy)
        if occ.ndim != 2 or occ.size == 0 or occ.dtype.kind not in "biuf":
            raise ValueError(f"occupancy must be a non-empty 2D array of booleans or numbers, got shape {occ.shape}")
        res = check_positive("resolution", resolution)
        org = as_float_array("origin", origin)
        if org.shape != (2,) or not np.all(np.isfinite(org)):
            raise ValueError(f"origin must be 2 finite numbers, got {origin!r}")
        grid = grid_boundary(occ > 0.5 if occ.dtype.kind == "f" else occ.astype(bool), res, org)
        if len(grid.segments) == 0:
            raise ValueError("occupancy has no occupied cell")
        pieces = [p for seg in grid.segments for p in line_pieces(seg)]
        if not pieces:
            raise ValueError(f"resolution={res!r} m: the occupied cells' sides are too short to make segments")
        return self._add("map", pieces, {"kind": "static", "friction": friction, "name": name}, grid)

    def _add(self, shape: str, pieces, options: dict, grid=None) -> PlanarObject:
        """Add an object of ``shape`` made of ``pieces`` (a list, or a callable that makes it), with the keyword
        ``options`` of :meth:`add_geometry` (a dict, each checked before anything is added); ``grid``: the
        boundary of an occupancy map."""
        if self._built:
            raise RuntimeError("the world is built (it has stepped); add objects before the first step")
        unknown = sorted(set(options) - set(OBJECT_OPTIONS))
        if unknown:
            raise TypeError(f"unknown object option(s) {unknown}; the options are {', '.join(OBJECT_OPTIONS)}")
        kind, kinematics, wheelbase = _drive(options)
        pieces, props = _finite_pieces(shape, pieces)
        mass, inertia = _mass_and_inertia(kind, props, options.get("mass"), options.get("inertia"))
        pose = _start_pose(options, self.n_envs)
        friction, restitution, name = options.get("friction"), options.get("restitution"), options.get("name")
        index = len(self._specs)
        spec = ObjectSpec(
            name=str(name) if name is not None else f"{shape}{index}", kind=kind, pieces=pieces, props=props,
            mass=mass, inertia=inertia, friction=self.friction if friction is None else _nonneg("friction", friction),
            restitution=self.restitution if restitution is None else _unit("restitution", restitution),
            kinematics=kinematics, wheelbase=wheelbase, grid=grid, pose=pose, velocity=np.zeros((self.n_envs, 3)),
            command=np.zeros((self.n_envs, 2)))
        self._specs.append(spec)
        obj = PlanarObject(self, index, spec)
        self.objects.append(obj)
        return obj

    @property
    def driven(self) -> list[PlanarObject]:
        """The driven objects, in the order :meth:`set_commands` takes their commands."""
        return [o for o in self.objects if o.kind == "driven"]

    @property
    def max_pairs(self) -> int:
        n = len(self._specs)
        return self._max_pairs if self._max_pairs is not None else max(1, min(n * (n - 1) // 2, 16 * n))

    def build(self) -> None:
        """Allocate the arrays (done by the first :meth:`step`); objects cannot be added afterwards."""
        if self._built:
            return
        if not self._specs:
            raise RuntimeError("the world has no objects; add some before stepping")
        from .model import PlanarArrays

        self._arrays = PlanarArrays(self)
        self._built = True

    # -- stepping --------------------------------------------------------------------------------------------

    def step(self, n: int = 1) -> None:
        """Advance every env by ``n`` steps of ``dt``: one kernel launch (on vulkan one per step)."""
        n = check_int("n", n, 0)
        self.build()
        if n:
            self._arrays.step(n)
        for _ in range(n):  # (the clock adds dt once per step, as it always has)
            self.time += self.dt

    def set_commands(self, commands) -> None:
        """Commands of every driven object (:attr:`driven` order): shape (n_driven, 2) for every env or
        (n_envs, n_driven, 2). Each row's meaning depends on the object's kinematics (``objects.COMMANDS``)."""
        drivers = self.driven
        arr = as_float_array("commands", commands)
        nd = len(drivers)
        if arr.shape == (nd, 2):
            arr = np.broadcast_to(arr, (self.n_envs, nd, 2))
        if arr.shape != (self.n_envs, nd, 2):
            raise ValueError(f"commands must have shape (n_driven={nd}, 2) or (n_envs={self.n_envs}, {nd}, 2), "
                             f"got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("commands must be finite")
        if not self._built:
            for k, o in enumerate(drivers):
                o._spec.command = np.array(arr[:, k])
            return
        cmd = self._arrays.cmd.to_numpy()
        cmd[:, [o.index for o in drivers]] = arr
        self._arrays.cmd.from_numpy(np.ascontiguousarray(cmd, dtype=backend.np_real()))

    # -- state access ----------------------------------------------------------------------------------------

    def get_poses(self, env=None) -> np.ndarray:
        """(x, y, heading) of every object: (n_envs, n_objects, 3), or (n_objects, 3) for one env."""
        return self._get("pose", slice(None), env)[..., :3]

    def get_velocities(self, env=None) -> np.ndarray:
        """(vx, vy, yaw rate) of every object's centre of mass: (n_envs, n_objects, 3) or (n_objects, 3)."""
        return self._get("velocity", slice(None), env)

    #: state name -> (array of the built world, columns a setter writes)
    _FIELDS: ClassVar[dict] = {"pose": ("pose", 3), "velocity": ("vel", 3), "command": ("cmd", 2)}

    def _get(self, what: str, index, env):
        env = check_env(env, self.n_envs)
        if self._built:
            out = getattr(self._arrays, self._FIELDS[what][0]).to_numpy().astype(np.float64)[:, index]
        else:  # the builder's (n_envs, width) rows of each object
            out = np.stack([getattr(s, what) for s in self._specs], axis=1)[:, index]
        return out if env is None else out[env]

    def _set_state(self, what: str, index: int, value, env) -> None:
        spec = self._specs[index]
        env = check_env(env, self.n_envs)
        name, width = self._FIELDS[what]
        if what == "pose" and spec.grid is not None:
            raise ValueError("a grid map cannot be moved: its boundary is fixed in the world frame")
        if what == "command" and spec.kind != "driven":
            raise ValueError(f"command: {spec.name} is {spec.kind}; only driven objects take commands")
        if what == "velocity" and spec.kind != "passive":
            raise ValueError(f"velocity: {spec.name} is {spec.kind}; only passive bodies take a velocity "
                             "(a driven object moves by its command)")
        rows = per_env(what, value, width, self.n_envs if env is None else 1)
        envs = slice(None) if env is None else slice(env, env + 1)
        if not self._built:
            getattr(spec, what)[envs, :width] = rows
            return
        arr = getattr(self._arrays, name)
        data = arr.to_numpy()
        data[envs, index, :width] = rows
        arr.from_numpy(np.ascontiguousarray(data))
        if what == "pose":
            self._arrays.refresh()

    # -- reports ---------------------------------------------------------------------------------------------

    def get_contacts(self, env=None) -> ContactArrays:
        """The last step's contacts, one row per touching pair, for every env (or one env: the env axis is
        kept with length 1). See :class:`ContactArrays`."""
        env = check_env(env, self.n_envs)
        if not self._built:
            z = np.zeros((self.n_envs, 0))
            out = ContactArrays(np.zeros(self.n_envs, np.int64), z.astype(np.int64), z.astype(np.int64),
                                np.zeros((self.n_envs, 0, 2)), z, np.zeros((self.n_envs, 0, 2)), z)
        else:
            out = self._arrays.contacts()
        if env is not None:
            out = ContactArrays(*(getattr(out, f)[env:env + 1] for f in ContactArrays.__dataclass_fields__))
        return out

    def get_object_contacts(self, env=None) -> ObjectContactArrays:
        """The last step's contacts from each object's side (:class:`ObjectContactArrays`)."""
        return object_view(self.get_contacts(env), len(self._specs))

    def get_contact_list(self, env: int = 0) -> list[Contact]:
        """The last step's contacts in env ``env`` as :class:`Contact` records (objects as handles)."""
        if check_env(env, self.n_envs) is None:
            raise ValueError("env must be an int in [0, n_envs) for a contact list")
        c = self.get_contacts(env)
        return [Contact(self.objects[c.a[0, i]], self.objects[c.b[0, i]], c.normal[0, i].copy(),
                        float(c.depth[0, i]), c.point[0, i].copy(), float(c.force[0, i])) for i in range(c.count[0])]

    def _check_env(self, env) -> None:
        check_env(env, self.n_envs)

    def _env_info(self, column: int, env):
        env = check_env(env, self.n_envs)
        data = self._arrays.env_i.to_numpy()[:, column] if self._built else np.zeros(self.n_envs, np.int32)
        return data if env is None else int(data[env])

    def get_sweeps(self, env=None):
        """Gauss-Seidel sweeps the last step ran, per env (at most ``iterations``)."""
        return self._env_info(L.EI_SWEEPS, env)

    def get_pair_count(self, env=None):
        """Candidate pairs the last step considered, per env."""
        return self._env_info(L.EI_PAIRS, env)

    def get_pair_overflow(self, env=None):
        """Candidate pairs dropped in the last step because the pair table (``max_pairs``) was full, per env."""
        return self._env_info(L.EI_DROPPED, env)

    # -- checkpoints -----------------------------------------------------------------------------------------

    def checkpoint(self) -> dict:
        """A copy of every env's state (poses, velocities, commands, last contacts) and the time."""
        self.build()
        return {"time": self.time, **self._arrays.snapshot()}

    def restore(self, checkpoint: dict) -> None:
        """Return to a :meth:`checkpoint` of this world; stepping from it replays bit for bit."""
        self.build()
        if not isinstance(checkpoint, dict) or "time" not in checkpoint:
            raise TypeError("checkpoint must come from this world's checkpoint()")
        self._arrays.load(checkpoint)
        self.time = checkpoint["time"]

    # -- drawing ---------------------------------------------------------------------------------------------

    def draw_data(self, env: int = 0) -> dict:
        """World-frame geometry of env ``env`` for a 2D viewer (see ``taichi_terra.viewer.PlanarViewer``)."""
        from .drawing import draw_data

        return draw_data(self, check_env(env, self.n_envs) or 0)

    @staticmethod
    def command_meaning(kinematics: str) -> str:
        """What a command (u0, u1) means for a kinematics model."""
        if kinematics not in COMMANDS:
            raise ValueError(f"kinematics must be one of {sorted(COMMANDS)}, got {kinematics!r}")
        return COMMANDS[kinematics]



def _finite_pieces(shape: str, pieces):
    """``pieces`` (a list, or a callable making it) and their mass properties, refused with a ValueError when
    sizes or coordinates that are each finite overflow a corner, a normal, the area or the inertia."""
    try:
        with np.errstate(all="ignore"):
            if callable(pieces):
                pieces = pieces()
            props = mass_properties(pieces)
            ok = (all(np.isfinite(p.vertices).all() and np.isfinite(p.normals).all() and math.isfinite(p.radius)
                      for p in pieces)
                  and math.isfinite(props.area) and np.isfinite(props.center).all() and math.isfinite(props.moment))
    except OverflowError:  # (Python's float arithmetic raises where numpy's gives inf)
        ok = False
    if not ok:
        raise ValueError(f"{shape}: the sizes or coordinates overflow the shape's corners, area or inertia; "
                         "keep them within a physical range")
    return pieces, props
