"""World: builder calls, ``build()``, ``step()``, checkpoints and contact queries.

``step(n)`` is one launch of the ``simulate`` kernel (one launch per step on vulkan) (``kernels/step.py``): per env, per step, the
narrowphase fills each pair's contact slots (``kernels/collision.py``), then free velocities, contact
rows, Gauss-Seidel sweeps and integration follow (``kernels/dynamics.py``, ``kernels/contact.py``).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from . import backend
from .bodies import shapes as _shapes
from .bodies.body import _SLOTS, Body
from .materials import DEFAULT_MATERIAL, MaterialTable
from .contacts import ContactQueries, ContactSet  # noqa: F401  (ContactSet: public via world)
from .rays import RayCaster
from .terrain.builder import TerrainBuilder
from .validation import (as_float_array, as_vector, check_env, check_finite, check_int, check_positive,
                         rotation_to_quat)


# the array arguments of the step kernel, in order (names of Model / State arrays). At most 31: on Vulkan
# (lavapipe) a kernel's 32nd array argument was silently left unbound (its writes lost), and a 34th crashed.
MAX_KERNEL_ARRAYS = 31
SIMULATE_ARGS = ("q", "u", "f_ext", "t_ext", "body_i", "body_f", "body_inertia", "points",
                 "planes", "pair_i", "pair_mat", "hm_int", "hm_geom", "hm_frame", "hm_heights",
                 "body_iw", "c_count", "c_pos", "c_nrm", "c_depth", "c_feat", "c_imp",
                 "c_w", "c_lam", "c_target", "c_list", "broad", "env_info", "soil_state", "soil_rev", "params")
MODEL_ARRAYS = ("body_i", "body_f", "body_inertia", "points", "planes", "pair_i", "pair_mat", "hm_int", "hm_geom",
                "hm_frame", "hm_heights")
STATE_ARRAYS = tuple(name for name in SIMULATE_ARGS if name not in MODEL_ARRAYS)
assert len(SIMULATE_ARGS) <= MAX_KERNEL_ARRAYS, "the step kernel takes too many arrays for Vulkan: pack some"


def _element_type(arr):
    """The Taichi element type of an ndarray (scalar, vector or matrix), as graph arguments need it."""
    import taichi as ti

    shape = tuple(arr.element_shape)
    if not shape:
        return arr.dtype
    if len(shape) == 1:
        return ti.types.vector(shape[0], arr.dtype)
    return ti.types.matrix(shape[0], shape[1], arr.dtype)


@dataclass
class SolverConfig:
    """Contact solver settings.

    Attributes:
        max_sweeps: Gauss-Seidel sweeps per step at most.
        tolerance: stop sweeping when, for every row, ``W_nn |delta lambda|`` (the velocity change the
            row's impulse update causes along its normal, an estimate for all three components) is below
            this [m/s].
        slop: penetration left uncorrected, so resting contacts do not jitter [m].
        erp: fraction of the penetration beyond ``slop`` removed per step.
        max_push: largest separation speed used to remove penetration [m/s].
        restitution_threshold: approach speed below which contacts do not bounce [m/s].
        contact_margin: gap within which contacts are created ahead of touching (speculative) [m].
        warm_start: start each sweep from the last step's impulse of the same contact feature.
        terrain_warm_start: the same for soil quadrature points (the last converged traction of the same
            bed sample and body).
    """

    max_sweeps: int = 100
    tolerance: float = 1e-10
    slop: float = 1e-4
    erp: float = 0.2
    max_push: float = 1.0
    restitution_threshold: float = 0.1
    contact_margin: float = 5e-3
    warm_start: bool = True
    terrain_warm_start: bool = True

    def validate(self) -> None:
        check_int("max_sweeps", self.max_sweeps, 1)
        if self.max_sweeps > 2 ** 24:
            raise ValueError(f"max_sweeps must be <= 2**24, got {self.max_sweeps}")
        for name in ("tolerance", "slop", "max_push", "restitution_threshold", "contact_margin"):
            v = check_finite(name, getattr(self, name))
            if v < 0.0:
                raise ValueError(f"{name} must be >= 0, got {v}")
        if not 0.0 <= check_finite("erp", self.erp) <= 1.0:
            raise ValueError(f"erp must be in [0, 1], got {self.erp}")
        for name in ("warm_start", "terrain_warm_start"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool")


@dataclass
class Ground:
    """An infinite horizontal plane ``z = height``; everything below it is inside."""

    height: float
    material: str


@dataclass
class Checkpoint:
    """A copy of a world's per-env state; restore it into the same world (or one built identically)."""

    arrays: dict
    time: float
    step_count: int
    signature: tuple


class World(TerrainBuilder, RayCaster, ContactQueries):
    """A batch of ``n_envs`` independent copies of one scene.

    Args:
        dt: time step [s].
        gravity: [m/s^2], shape (3,).
        n_envs: number of environments stepped together (>= 1).
        solver: a :class:`SolverConfig` (defaults when ``None``).
        max_shape_pairs: size of each env's table of shape-shape pairs that may touch (found every step by
            a sort-and-sweep broadphase); default 13 per body (a packed pile of cubes), at most all pairs.
            Pairs beyond it are dropped and counted (:meth:`get_pair_overflow`).
        max_shape_contacts: contact slots per env shared by the shape-shape pairs; default four per pair
            of the table. Contacts beyond it are dropped and counted (:meth:`get_contact_overflow`).

    Add bodies, ground and height maps, then call :meth:`step` (the first call builds the model; after
    that the topology is fixed). Taichi is initialised with the defaults (cpu, f64) if
    :func:`taichi_terra.init` was not called first.
    """

    def __init__(self, dt: float = 1e-3, gravity=(0.0, 0.0, -9.81), n_envs: int = 1, *,
                 solver: SolverConfig | None = None, max_shape_pairs: int | None = None,
                 max_shape_contacts: int | None = None):
        self._dt = check_positive("dt", dt)
        self._max_shape_pairs = None if max_shape_pairs is None else check_int("max_shape_pairs", max_shape_pairs, 0)
        self._max_shape_contacts = (None if max_shape_contacts is None
                                    else check_int("max_shape_contacts", max_shape_contacts, 0))
        self._gravity = as_vector("gravity", gravity, 3)
        self._n_envs = check_int("n_envs", n_envs, 1)
        if solver is not None and not isinstance(solver, SolverConfig):
            raise TypeError(f"solver must be a SolverConfig or None, got {type(solver).__name__}")
        self.solver = copy.deepcopy(solver) if solver is not None else SolverConfig()
        self.solver.validate()
        backend.config()  # initialise Taichi if needed, before any array exists
        self.materials = MaterialTable()
        self._bodies: list[Body] = []
        self._body_materials: list[int] = []
        self._init: list[dict] = []
        self._ground: Ground | None = None
        self._heightmaps = []
        self._model = None
        self._state = None
        self._step_graph = None
        self._time = 0.0
        self._steps = 0

    # ------------------------------------------------------------------ properties
    @property
    def dt(self) -> float:
        """Time step [s]."""
        return self._dt

    @property
    def n_envs(self) -> int:
        return self._n_envs

    @property
    def time(self) -> float:
        """Simulated time since the start [s]."""
        return self._time

    @property
    def gravity(self) -> np.ndarray:
        """Gravity [m/s^2], shape (3,)."""
        return self._gravity.copy()

    def set_gravity(self, gravity) -> None:
        """Gravity [m/s^2], shape (3,); may change between steps."""
        self._gravity = as_vector("gravity", gravity, 3)

    @property
    def bodies(self) -> list:
        return list(self._bodies)

    @property
    def heightmaps(self) -> list:
        return list(self._heightmaps)

    @property
    def ground(self) -> Ground | None:
        return self._ground

    @property
    def max_shape_pairs(self) -> int:
        """Size of each env's shape-shape pair table (the default is resolved by the build)."""
        self.build()
        return self._model.max_shape_pairs

    @property
    def max_shape_contacts(self) -> int:
        """Contact slots per env shared by the shape-shape pairs (the default is resolved by the build)."""
        self.build()
        return self._model.max_shape_contacts

    @property
    def built(self) -> bool:
        return self._model is not None

    def _require_builder(self, what: str) -> None:
        if self.built:
            raise RuntimeError(f"{what}: the world is already built (after the first step the topology is fixed)")

    # ------------------------------------------------------------------ materials
    def add_material(self, name: str) -> None:
        """Declare a material name; unset pairs with it use the default friction and restitution."""
        self.materials.add(name)

    def set_material_pair_prop(self, a: str, b: str, friction: float, restitution: float) -> None:
        """Coulomb friction coefficient (>= 0) and restitution (in [0, 1]) between materials ``a`` and ``b``
        (declared here if new). May change between steps."""
        self.materials.set_pair(a, b, friction, restitution)
        self._refresh_materials()

    def set_default_material(self, friction: float, restitution: float) -> None:
        """Friction and restitution of every pair without its own properties (initially 0.8 and 0)."""
        self.materials.set_default(friction, restitution)
        self._refresh_materials()

    def _refresh_materials(self) -> None:
        if self.built:
            self._model.update_materials(self.materials, self._body_materials, self._ground, self._heightmaps)

    # ------------------------------------------------------------------ builders
    def _add_body(self, shape, material: str) -> Body:
        mat = self.materials.index(material)
        self._require_builder("adding a body")
        body = Body(self, len(self._bodies), shape, material)
        ne = self._n_envs
        q = np.zeros((ne, 7))
        q[:, 3] = 1.0
        self._init.append({"q": q, "u": np.zeros((ne, 6)), "f": np.zeros((ne, 3)), "t": np.zeros((ne, 3))})
        self._bodies.append(body)
        self._body_materials.append(mat)
        return body

    def add_sphere(self, radius: float, mass: float, *, material: str = DEFAULT_MATERIAL) -> Body:
        """A solid sphere of ``radius`` [m] and ``mass`` [kg]."""
        return self._add_body(_shapes.sphere(radius, mass), material)

    def add_box(self, size_x: float, size_y: float, size_z: float, mass: float, *,
                material: str = DEFAULT_MATERIAL) -> Body:
        """A solid box with full edge lengths ``size_x, size_y, size_z`` [m] and ``mass`` [kg]."""
        return self._add_body(_shapes.box(size_x, size_y, size_z, mass), material)

    def add_capsule(self, radius: float, height: float, mass: float, *, material: str = DEFAULT_MATERIAL) -> Body:
        """A capsule along the body z axis: ``radius`` [m], ``height`` [m] between the centres of its two caps,
        ``mass`` [kg]."""
        return self._add_body(_shapes.capsule(radius, height, mass), material)

    def add_cylinder(self, radius: float, height: float, mass: float, *, material: str = DEFAULT_MATERIAL) -> Body:
        """A solid cylinder along the body z axis: ``radius`` [m], ``height`` [m] end to end, ``mass`` [kg]."""
        return self._add_body(_shapes.cylinder(radius, height, mass), material)

    def add_mesh(self, mesh_or_path, mass: float, *, material: str = DEFAULT_MATERIAL) -> Body:
        """The convex hull of a ``trimesh.Trimesh`` or mesh file, with uniform density and ``mass`` [kg].
        The body origin is the hull's centre of mass."""
        return self._add_body(_shapes.mesh(mesh_or_path, mass), material)

    def add_ground(self, height: float = 0.0, *, material: str = DEFAULT_MATERIAL) -> Ground:
        """The infinite plane ``z = height`` [m]."""
        h = check_finite("height", height)
        self.materials.index(material)
        self._require_builder("adding the ground")
        if self._ground is not None:
            raise RuntimeError("add_ground: the world already has a ground plane")
        self._ground = Ground(h, material)
        return self._ground

    # ---- soil state (used by DeformableTerrain)
    def _soil_rows(self, bed) -> slice:
        off = self._model.soil_offsets[bed.index]
        return slice(off, off + bed.n_samples)

    def _soil_state_get(self, bed, env) -> np.ndarray:
        self._check_env(env)
        if env is None:
            raise TypeError("env must be an int here")
        if not self.built:
            return bed._init_state[int(env)].copy()
        return self._state.soil_state.to_numpy()[int(env), self._soil_rows(bed)].astype(np.float64)

    def _soil_state_set(self, bed, rows: np.ndarray, env) -> None:
        self._check_env(env)
        target = slice(None) if env is None else int(env)
        if not self.built:
            before = bed._init_state[:, :, 0].copy()
            bed._init_state[target] = rows
            bed._rev_before_build += self._changed_rows(bed, before, bed._init_state[:, :, 0])
            return
        full = self._state.soil_state.to_numpy()
        before = full[:, self._soil_rows(bed), 0].copy()
        full[target, self._soil_rows(bed)] = rows
        self._state.soil_state.from_numpy(full)
        self._bump_soil_rows(bed, self._changed_rows(bed, before, full[:, self._soil_rows(bed), 0]))

    @staticmethod
    def _changed_rows(bed, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Per env and sample row of ``bed``: 1 where a sinkage (so a surface height) differs, else 0."""
        diff = before.reshape(before.shape[0], bed.y_samples, bed.x_samples) != \
            after.reshape(after.shape[0], bed.y_samples, bed.x_samples)
        return diff.any(axis=2).astype(np.int64)

    def _soil_rev_slice(self, bed) -> slice:
        off = self._model.soil_row_offsets[bed.index]
        return slice(off, off + bed.y_samples)

    def _bump_soil_rows(self, bed, bump: np.ndarray) -> None:
        """Advance the row revisions of ``bed`` by ``bump``, shape (n_envs, y_samples)."""
        if np.any(bump):
            rev = self._state.soil_rev.to_numpy()
            rev[:, self._soil_rev_slice(bed)] += bump
            self._state.soil_rev.from_numpy(rev)

    def _soil_rev_get(self, bed, env) -> np.ndarray:
        self._check_env(env)
        if not self.built:
            rev = bed._rev_before_build.copy()
        else:
            rev = self._state.soil_rev.to_numpy()[:, self._soil_rev_slice(bed)].astype(np.int64)
        return rev if env is None else rev[int(env)]

    def _on_heightmap_data(self, hm) -> None:
        if self.built:
            self._model.update_heightmap_data(self._heightmaps)

    def _on_heightmap_pose(self, hm) -> None:
        if self.built:
            self._model.update_heightmap_poses(self._heightmaps)

    # ------------------------------------------------------------------ build and step
    def build(self) -> None:
        """Freeze the topology and allocate the model and state arrays (done by the first step)."""
        if self.built:
            return
        from .model import Model
        from .state import State

        model = Model([b.shape for b in self._bodies], self.materials, self._body_materials, self._ground,
                      self._heightmaps, self._max_shape_pairs, self._max_shape_contacts)
        ne, nb = self._n_envs, len(self._bodies)
        if nb:
            q0 = np.concatenate([d["q"] for d in self._init], axis=1)
            u0 = np.concatenate([d["u"] for d in self._init], axis=1)
            f0 = np.stack([d["f"] for d in self._init], axis=1)
            t0 = np.stack([d["t"] for d in self._init], axis=1)
        else:
            q0 = u0 = f0 = t0 = None
        beds = [hm for hm in self._heightmaps if hm.is_soil]
        soil0 = np.concatenate([bed._init_state for bed in beds], axis=1) if beds else None
        self._state = State(model, ne, q0, u0, f0, t0, soil0)
        self._model = model
        self._sweep_axis = self._broadphase_axis(q0)
        if beds:  # revisions advanced by soil-state edits made before the build
            rev = np.zeros((ne, max(model.n_soil_rows, 1)), np.int64)
            for bed in beds:
                off = model.soil_row_offsets[bed.index]
                rev[:, off:off + bed.y_samples] = bed._rev_before_build
            self._state.soil_rev.from_numpy(rev)
        self._init = []

    def step(self, n_steps: int = 1) -> None:
        """Advance every env by ``n_steps`` time steps."""
        n = check_int("n_steps", n_steps, 1)
        if not isinstance(self.solver, SolverConfig):
            raise TypeError(f"world.solver must be a SolverConfig, got {type(self.solver).__name__}")
        self.solver.validate()
        self.build()
        if self._model.n_bodies == 0:
            self._time += n * self._dt
            self._steps += n
            return
        self._upload_params()
        graph, args = self._graph()
        # On vulkan (lavapipe) a launch of many steps was seen to stop after a few dozen of them, so there
        # each step is its own launch; elsewhere one launch runs all n steps.
        chunk = 1 if backend.config()["arch"] == "vulkan" else n
        for start in range(0, n, chunk):
            args["n_steps"] = min(chunk, n - start)
            graph.run(args)
        self._time += n * self._dt
        self._steps += n

    def _upload_params(self) -> None:
        """Write dt, gravity and the solver settings into the kernels' parameter arrays."""
        from .kernels.common import layout as L

        cfg = self.solver
        pf = np.zeros(L.N_PARAMS)
        pf[L.PF_DT] = self._dt
        pf[L.PF_GX:L.PF_GZ + 1] = self._gravity
        pf[L.PF_TOL], pf[L.PF_SLOP], pf[L.PF_ERP] = cfg.tolerance, cfg.slop, cfg.erp
        pf[L.PF_MAX_PUSH], pf[L.PF_REST_THRESHOLD] = cfg.max_push, cfg.restitution_threshold
        pf[L.PF_MARGIN] = cfg.contact_margin
        pf[L.PF_GROUND_HEIGHT] = self._ground.height if self._ground is not None else 0.0
        pf[L.PF_MAX_SWEEPS], pf[L.PF_WARM_START] = cfg.max_sweeps, float(cfg.warm_start)
        pf[L.PF_N_PAIRS] = self._model.n_pairs
        pf[L.PF_TERRAIN_WARM_START] = float(cfg.terrain_warm_start)
        pf[L.PF_N_SOIL] = self._model.n_soil_samples
        pf[L.PF_POOL0], pf[L.PF_N_MAT] = self._model.pool_start, self._model.n_materials
        pf[L.PF_AXIS] = self._sweep_axis
        self._state.params.from_numpy(pf.astype(backend.np_real()))

    def _broadphase_axis(self, q0) -> int:
        """The broadphase sweeps along the world axis, across gravity, on which the bodies' initial
        positions spread furthest (piles settle across gravity, so their bodies stay spread along it)."""
        if q0 is None:
            return 0
        pos = q0[0].reshape(-1, 7)[:, :3]  # env 0 (the axis changes speed, never the pairs found)
        spread = pos.max(axis=0) - pos.min(axis=0)
        g = np.abs(self._gravity)
        if g.max() > 0.0:
            spread = np.where(g >= 0.5 * g.max(), -np.inf, spread)
        return int(np.argmax(spread))

    def _graph(self):
        """The step kernel as a compiled Taichi graph, built once per world: one call binds every array
        in C++ instead of Python, so a ``step()`` costs one launch."""
        if self._step_graph is None:
            import taichi as ti

            from .kernels.step import simulate

            m, s = self._model, self._state
            arrays = {name: getattr(m, name) for name in MODEL_ARRAYS}
            arrays.update({name: getattr(s, name) for name in STATE_ARRAYS})
            sym = [ti.graph.Arg(ti.graph.ArgKind.NDARRAY, name, dtype=_element_type(arrays[name]),
                                ndim=len(arrays[name].shape)) for name in SIMULATE_ARGS]
            builder = ti.graph.GraphBuilder()
            builder.dispatch(simulate, ti.graph.Arg(ti.graph.ArgKind.SCALAR, "n_steps", ti.i32), *sym)
            self._step_graph = (builder.compile(), arrays)
        return self._step_graph

    # ------------------------------------------------------------------ checkpoints
    def _signature(self) -> tuple:
        """What a checkpoint's arrays and meaning depend on: envs, time step, shapes (type, size, mass) and
        static geometry (which fix the contact pairs)."""
        shapes = tuple((int(b.shape.type), tuple(np.round(b.shape.params, 12)), round(b.shape.mass, 12),
                        len(b.shape.points)) for b in self._bodies)
        maps = tuple((hm.x_samples, hm.y_samples) for hm in self._heightmaps)
        return (self._n_envs, self._dt, shapes, self._ground is not None, maps, self._max_shape_pairs,
                self._max_shape_contacts)

    def checkpoint(self) -> Checkpoint:
        """A copy of the per-env state (coordinates, velocities, loads, contacts, warm-start cache)."""
        self.build()
        return Checkpoint(self._state.snapshot(), self._time, self._steps, self._signature())

    def restore(self, checkpoint: Checkpoint) -> None:
        """Return to a checkpoint; stepping on replays bit-for-bit on the same backend. A checkpoint that
        does not fit this world raises and changes nothing."""
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"checkpoint must be a Checkpoint, got {type(checkpoint).__name__}")
        if checkpoint.signature != self._signature():
            raise ValueError("checkpoint: it was taken from a world with a different layout "
                             f"({checkpoint.signature} != {self._signature()})")
        if not isinstance(checkpoint.time, float) or not np.isfinite(checkpoint.time):
            raise ValueError(f"checkpoint.time must be a finite float, got {checkpoint.time!r}")
        if isinstance(checkpoint.step_count, bool) or not isinstance(checkpoint.step_count, int) \
                or checkpoint.step_count < 0:
            raise ValueError(f"checkpoint.step_count must be an int >= 0, got {checkpoint.step_count!r}")
        self.build()
        current = self._state.snapshot()
        arrays = checkpoint.arrays if isinstance(checkpoint.arrays, dict) else {}
        for name, ref in current.items():
            got = arrays.get(name)
            if not isinstance(got, np.ndarray) or got.shape != ref.shape or got.dtype != ref.dtype:
                raise ValueError(f"checkpoint.arrays[{name!r}] is missing or has the wrong shape or dtype "
                                 f"(expected {ref.shape} {ref.dtype})")
        self._state.load(arrays)
        for hm in self._heightmaps:  # the surface may differ from the one drawn: every row is a new revision
            if hm.is_soil:
                self._bump_soil_rows(hm, np.ones((self._n_envs, hm.y_samples), np.int64))
        self._time = checkpoint.time
        self._steps = checkpoint.step_count

    # ------------------------------------------------------------------ per-body state
    def _check_env(self, env) -> None:
        check_env(env, self._n_envs)

    def _parse_value(self, quantity: str, value, env) -> np.ndarray:
        """Validate a setter value; returns shape (n_target_envs or 1, width)."""
        per_env = env is None
        if quantity == "orientation":
            try:
                arr = as_float_array("orientation", value)
            except (TypeError, ValueError) as exc:
                raise TypeError("orientation must be a quaternion (w, x, y, z) or a 3x3 rotation matrix") from exc
            if arr.shape in ((4,), (3, 3)):
                return rotation_to_quat("orientation", arr)[None, :]
            if per_env and arr.ndim >= 2 and arr.shape[0] == self._n_envs and arr.shape[1:] in ((4,), (3, 3)):
                return np.stack([rotation_to_quat(f"orientation[{i}]", x) for i, x in enumerate(arr)])
            allowed = "(4,) or (3, 3)" + (f", or stacked ({self._n_envs}, 4) / ({self._n_envs}, 3, 3)" if per_env else "")
            raise ValueError(f"orientation must have shape {allowed}, got {arr.shape}")
        try:
            arr = as_float_array(quantity, value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{quantity} must be an array of numbers") from exc
        if arr.shape == (3,):
            out = arr[None, :]
        elif per_env and arr.shape == (self._n_envs, 3):
            out = arr
        else:
            allowed = "(3,)" + (f" or ({self._n_envs}, 3)" if per_env else "")
            raise ValueError(f"{quantity} must have shape {allowed}, got {arr.shape}")
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{quantity} must be finite")
        return out

    def _set_body(self, index: int, quantity: str, value, env) -> None:
        self._check_env(env)
        vals = self._parse_value(quantity, value, env)
        name, col, width = _SLOTS[quantity]
        rows = slice(None) if env is None else int(env)
        if not self.built:
            self._init[index][name][rows, col:col + width] = vals if env is None else vals[0]
            return
        arr_name = {"q": "q", "u": "u", "f": "f_ext", "t": "t_ext"}[name]
        nd = getattr(self._state, arr_name)
        full = nd.to_numpy()
        if name in ("q", "u"):
            start = (7 if name == "q" else 6) * index + col
            full[rows, start:start + width] = vals if env is None else vals[0]
        else:
            full[rows, index, :] = vals if env is None else vals[0]
        nd.from_numpy(full)

    def _get_body(self, index: int, quantity: str, env) -> np.ndarray:
        self._check_env(env)
        name, col, width = _SLOTS[quantity]
        if not self.built:
            data = self._init[index][name][:, col:col + width]
        elif name in ("q", "u"):
            full = (self._state.q if name == "q" else self._state.u).to_numpy()
            start = (7 if name == "q" else 6) * index + col
            data = full[:, start:start + width]
        else:
            data = (self._state.f_ext if name == "f" else self._state.t_ext).to_numpy()[:, index, :]
        data = np.array(data, dtype=np.float64)
        return data if env is None else data[int(env)]
