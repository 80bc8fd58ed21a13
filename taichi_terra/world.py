"""World: a facade over its parts, with ``build()``, ``step()``, settings and checkpoints.

Each part holds one kind of thing and receives what it uses: :class:`~.body_state.FreeBodies` (free bodies),
:class:`~.terrain.builder.Terrain` (ground, height maps, soil beds), :class:`~.bodies.articulated_world.Articulation`
(articulated systems, pins), :class:`~.granular.builder.Granular` (granular media, RFT plates), and, made at the
build, :class:`~.checkpoints.Checkpoints`, :class:`~.terrain.soil_state.SoilStore`, :class:`~.contacts.Contacts`,
:class:`~.rays.Rays`, :class:`~.body_state.BodyStates` and :class:`~.divergence.DivergenceReports`. The World's
public calls are grouped by part in faces (``TerrainBuilder``, ``ArticulatedBuilder``, ...), each of which uses
the World's public API and its own part only (``tests/test_world_parts.py`` checks it).

``step(n)`` is one launch of the ``simulate`` kernel (``kernels/step.py``; one launch per step on vulkan),
whose docstring lists the stages of a step in order. The kernel binds the arrays declared in
``kernels/common/arrays.py``: the Model (``model.py``), State, Control and Scratch (``state.py``).
"""
from __future__ import annotations

import contextlib
import copy
import time
from dataclasses import dataclass

import numpy as np

from . import backend, frontend, kernel_cache
from .bodies import shapes as _shapes
from .bodies.articulated_world import Articulation, ArticulatedBuilder
from .bodies.body import Body
from .body_state import BodyStateAccess, BodyStates, FreeBodies
from .checkpoints import Checkpoint, Checkpoints, check_fits
from .clock import Clock
from .contacts import Contacts, ContactQueries, ContactSet  # noqa: F401  (ContactSet: public via world)
from .divergence import DivergenceReports, DivergenceWatch
from .granular.builder import Granular, GranularBuilder
from .materials import DEFAULT_MATERIAL, MaterialTable
from .rays import RayCaster, Rays
from .terrain.builder import Terrain, TerrainBuilder
from .terrain.soil_state import SoilStore
from .validation import as_vector, check_env, check_finite, check_int, check_positive, require_unbuilt

#: steps per kernel launch on vulkan, for worlds without and with soil beds. On a driver that limits a thread's
#: loop iterations per launch (lavapipe: 65,535, all loops together; ``kernels/common/lanes.driver_loop_limit``)
#: every world takes one step per call of its stage kernels, a launch per stage (``World._staged``): a stack of
#: five boxes ran past the limit in launches of eight steps, and a box settling on soil, 40 steps in launches of
#: 8 and of 40, sank 1.2 and 0.16 mm instead of 6.8 mm. A launch that still runs past the limit (the contact
#: search of 200 boxes) is reported, not hidden: the kernel marks the env (``kernels/step.py``
#: ``loops_ran_out``, read by ``get_diverged``)
_VULKAN_STEPS_PER_LAUNCH = 8
_VULKAN_SOIL_STEPS_PER_LAUNCH = 1
#: step kernel variants this process has compiled (the compile notice is for the first world of each)
_COMPILED_VARIANTS: set = set()


@dataclass
class SolverConfig:
    """Contact solver settings.

    Attributes:
        max_sweeps: Gauss-Seidel sweeps per step at most.
        tolerance: the sweeps stop once a whole sweep changed no generalized velocity (every free body's
            and tree's ``u``) by more than this [m/s] (an angular or joint velocity: [rad/s] or [m/s]), nor
            by more than a third of it while the changes shrink slowly (by less than a quarter a sweep). Rows
            that still trade impulse then move nothing, or move it slowly. The default, 1 um/s, is a position
            error of 1e-9 m per millisecond step and 1e-4 of the velocity gravity adds in one. Where the sweeps
            converge slowly (a stack of boxes, a vehicle's suspension loops) the velocities can stop several
            tolerances from converged: docs/physics/solver.md.
        slop: penetration left uncorrected, so resting contacts do not jitter [m].
        erp: fraction of the penetration beyond ``slop`` removed per step.
        max_push: largest separation speed used to remove penetration [m/s].
        restitution_threshold: approach speed below which contacts do not bounce [m/s].
        contact_margin: gap within which contacts are created ahead of touching (speculative) [m].
        warm_start: start each sweep from the last step's impulse of the same contact feature.
        terrain_warm_start: the same for soil quadrature points (the last converged traction of the same
            bed sample and body).
        contact_block: solve the loaded contacts of articulated trees with static geometry (up to twelve
            per env) together in each sweep, each off, sticking or sliding, instead of one by one (see
            docs/physics/solver.md): a solution of the same contact laws, in fewer sweeps (where friction
            allows several, not always the one the row-by-row sweeps reach). ``False`` sweeps them one by
            one.
        soil_block: solve the soil points under each body (or tree link) together, by Newton's method on
            its six velocities (see docs/physics/solver.md): the same fixed point as sweeping them one by
            one, in a few passes instead of tens of sweeps. ``False`` sweeps them one by one.
        pin_block: solve the pins of each articulated tree (its closed loops and its pins to the world)
            together, and let every contact and soil row on its links push it as a system whose pins hold
            (see docs/physics/solver.md): the same result, to within ``tolerance``, in far fewer sweeps for
            a vehicle's suspension loops. ``False`` sweeps each pin on its own.
        tree_soil_block: with ``soil_block``, solve the soil blocks of the links of articulated trees (up to
            six per env: a vehicle's wheels, a robot's feet) together, by Newton's method on their links'
            velocities (see docs/physics/solver.md): the same result, to within ``tolerance``, in fewer
            sweeps. ``False`` solves each link's block on its own.
        sweeps_per_launch: on a Vulkan driver that limits a thread's loop iterations per launch (lavapipe, where
            a step is a launch per stage: docs/guides/pitfalls.md), the sweeps run in launches of this many
            sweeps each. ``None``: 8, or 1 in a world with tracks or with articulated trees on soil beds (a
            sweep of the tracked robot's tracks spends about a third of lavapipe's limit, and the buggy's
            launches of 16 ran past it in its step 17). Fewer sweeps per launch fit larger worlds, in more
            launches; a launch past the limit is reported by ``get_diverged``. Only the ``"staged"``
            :attr:`World.step_layout` uses it.
    """

    max_sweeps: int = 100
    tolerance: float = 1e-6
    slop: float = 1e-4
    erp: float = 0.2
    max_push: float = 1.0
    restitution_threshold: float = 0.1
    contact_margin: float = 5e-3
    warm_start: bool = True
    terrain_warm_start: bool = True
    contact_block: bool = True
    soil_block: bool = True
    pin_block: bool = True
    tree_soil_block: bool = True
    sweeps_per_launch: int | None = None

    def key(self) -> tuple:
        """Every setting, as a tuple (what a world compares to know whether they changed)."""
        return (self.max_sweeps, self.tolerance, self.slop, self.erp, self.max_push, self.restitution_threshold,
                self.contact_margin, self.warm_start, self.terrain_warm_start, self.contact_block,
                self.soil_block, self.pin_block, self.tree_soil_block, self.sweeps_per_launch)

    def validate(self) -> None:
        check_int("max_sweeps", self.max_sweeps, 1)
        if self.max_sweeps > 2 ** 24:
            raise ValueError(f"max_sweeps must be <= 2**24, got {self.max_sweeps}")
        if self.sweeps_per_launch is not None:
            check_int("sweeps_per_launch", self.sweeps_per_launch, 1)
        for name in ("tolerance", "slop", "max_push", "restitution_threshold", "contact_margin"):
            v = check_finite(name, getattr(self, name))
            if v < 0.0:
                raise ValueError(f"{name} must be >= 0, got {v}")
        if not 0.0 <= check_finite("erp", self.erp) <= 1.0:
            raise ValueError(f"erp must be in [0, 1], got {self.erp}")
        for name in ("warm_start", "terrain_warm_start", "contact_block", "soil_block", "pin_block",
                     "tree_soil_block"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool")


class World(TerrainBuilder, ArticulatedBuilder, GranularBuilder, RayCaster, ContactQueries, BodyStateAccess,
            DivergenceWatch):
    """A batch of ``n_envs`` independent copies of one scene.

    Args:
        dt: time step [s].
        gravity: [m/s^2], shape (3,).
        n_envs: number of environments stepped together (>= 1).
        solver: a :class:`SolverConfig` (defaults when ``None``).
        max_shape_pairs: size of each env's table of shape-shape pairs that may touch (found every step by
            a sort-and-sweep broadphase); default 13 per body (a packed pile of cubes), at most all pairs,
            and 0 (no broadphase at all) when no two bodies can ever touch (one articulated system without
            self-collision and no free bodies, or a single free body). Pairs beyond it are dropped and
            counted (:meth:`get_pair_overflow`).
        max_shape_contacts: contact slots per env shared by the shape-shape pairs; default four per pair
            of the table. Contacts beyond it are dropped and counted (:meth:`get_contact_overflow`).
        bounds: the divergence watch's bound [m] on each coordinate of a free body's centre and of a floating
            root's origin (:attr:`bounds`).
        speed_limit: its bound on each velocity component [m/s or rad/s] (:attr:`speed_limit`).
        on_divergence: ``"flag"`` (an env found diverged stands still and is reported by
            :meth:`get_diverged`) or ``"raise"`` (also :meth:`step` raises :class:`DivergenceError`).

    Add bodies, ground and height maps, then call :meth:`step` (the first call builds the model; after
    that the topology is fixed). Taichi is initialised with the defaults (cpu, f64) if
    :func:`taichi_terra.init` was not called first.
    """

    def __init__(self, dt: float = 1e-3, gravity=(0.0, 0.0, -9.81), n_envs: int = 1, *,
                 solver: SolverConfig | None = None, max_shape_pairs: int | None = None,
                 max_shape_contacts: int | None = None, bounds: float = 1e5, speed_limit: float = 1e5,
                 on_divergence: str = "flag"):
        self._dt = check_positive("dt", dt)
        self.bounds = bounds
        self.speed_limit = speed_limit
        if on_divergence not in ("flag", "raise"):
            raise ValueError(f"on_divergence must be 'flag' or 'raise', got {on_divergence!r}")
        self.on_divergence = on_divergence
        self._max_shape_pairs = None if max_shape_pairs is None else check_int("max_shape_pairs", max_shape_pairs, 0)
        self._max_shape_contacts = (None if max_shape_contacts is None
                                    else check_int("max_shape_contacts", max_shape_contacts, 0))
        self._gravity = as_vector("gravity", gravity, 3)
        self._env_gravity = {}  # env -> gravity set for that env alone before the build
        self._mass_scales = []  # (mass_scale row, env or None, factor) set before the build
        self._n_envs = check_int("n_envs", n_envs, 1)
        if solver is not None and not isinstance(solver, SolverConfig):
            raise TypeError(f"solver must be a SolverConfig or None, got {type(solver).__name__}")
        self.solver = copy.deepcopy(solver) if solver is not None else SolverConfig()
        self.solver.validate()
        # initialise Taichi if needed, before any array exists. On vulkan a launch runs at most
        # _VULKAN_STEPS_PER_LAUNCH steps (set at build)
        self._vulkan = backend.config()["arch"] == "vulkan"
        self._step_chunk = None
        self.materials = MaterialTable()
        self._clock = Clock()
        # the parts that hold what the world is made of (each receives what it uses)
        self._free = FreeBodies(self._n_envs)
        self._terrain = Terrain(self._n_envs, self.build)
        self._articulation = Articulation(self._n_envs, self._dt, self._clock, self.build, self._sync_settings)
        self._granular = Granular(self._n_envs, self._clock)
        self._model = None
        self._state = None
        self._soil = None  # the soil beds' state once built (terrain/soil_state.py)
        self._checkpoints = None  # checkpoints and env resets once built (checkpoints.py)
        self._contacts = None  # what the last step left about contacts, once built (contacts.py)
        self._rays = None  # ray casts on the device, once built (rays.py)
        self._divergence = None  # the divergence watch's reports once built (divergence.py)
        self._step_graph = None
        self._layout = None  # step_layout as set (None: the backend's default)
        self._material_table = None  # each pair_material row's (friction, restitution) as last set for every env
        self._env_material_pairs = []  # (a, b, friction, restitution, env) set for one env before the build
        self._settings_key = None  # the solver settings, gravity and time step last validated and uploaded

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
        """Simulated time since the start [s] (as a checkpoint restores it)."""
        return self._clock.time

    @property
    def step_count(self) -> int:
        """Steps taken since the start (as a checkpoint restores it)."""
        return self._clock.steps

    @property
    def gravity(self) -> np.ndarray:
        """Gravity [m/s^2], shape (3,), as last set for every env (:meth:`get_gravity` reads one env's)."""
        return self._gravity.copy()

    def set_gravity(self, gravity, env=None) -> None:
        """Gravity [m/s^2], shape (3,), in every env (``env=None``) or in env ``env`` alone; may change between
        steps, before or after the build. Checkpoints keep each env's; one-env values set before the build are
        applied at the build, over every env's value."""
        g = as_vector("gravity", gravity, 3)
        env = check_env(env, self._n_envs)
        if env is None:
            self._gravity = g
            self._env_gravity = {}
        elif not self.built:
            self._env_gravity[env] = g
        if self.built:
            self._control.set_block("control", "gravity", "gravity", g, envs=slice(None) if env is None else env)

    def set_body_mass(self, body, mass: float, env=None) -> None:
        """A free body's mass [kg] (> 0) in every env (``env=None``) or in env ``env`` alone; its inertia scales
        with it (the same shape, a denser or lighter material), its centre of mass stays. Before or after the
        build, between steps; checkpoints keep each env's."""
        if body not in self.bodies:
            raise ValueError("body: not one of this world's free bodies")
        factor = check_positive("mass", mass) / body.mass
        self._set_mass_scale(body.index, factor, env)

    def get_body_mass(self, body, env: int = 0) -> float:
        """A free body's mass [kg] in env ``env``."""
        if body not in self.bodies:
            raise ValueError("body: not one of this world's free bodies")
        return body.mass * self._mass_scale(body.index, env)

    def set_link_mass(self, system, link: str, mass: float, env=None) -> None:
        """The mass [kg] (> 0) of articulated system ``system``'s link ``link``, in every env (``env=None``) or
        in env ``env`` alone; its inertia about its centre of mass scales with it, its centre of mass stays
        (the URDF's ``<inertial>`` times a factor). Before or after the build, between steps; checkpoints keep
        each env's."""
        row, nominal = self._link_mass_row(system, link)
        self._set_mass_scale(row, check_positive("mass", mass) / nominal, env)

    def get_link_mass(self, system, link: str, env: int = 0) -> float:
        """The mass [kg] of ``system``'s link ``link`` in env ``env``."""
        row, nominal = self._link_mass_row(system, link)
        return nominal * self._mass_scale(row, env)

    def _link_mass_row(self, system, link: str) -> tuple[int, float]:
        """The ``mass_scale`` row of a link (after the free bodies: its tree joint row) and its URDF mass."""
        if system not in self.articulated_systems:
            raise ValueError("system: not one of this world's articulated systems")
        names = system.get_body_names()
        if not isinstance(link, str) or link not in names:
            raise ValueError(f"link must be one of {names}, got {link!r}")
        k = self.articulated_systems.index(system)
        rows = sum(len(s.get_body_names()) for s in self.articulated_systems[:k])  # (a joint row per link)
        index = names.index(link)
        mass = float(system.model.links[index].mass)
        if not mass > 0.0:
            raise ValueError(f"link {link!r} has no mass to scale (its URDF gives {mass!r})")
        return len(self.bodies) + rows + index, mass

    def _set_mass_scale(self, row: int, factor: float, env) -> None:
        env = check_env(env, self._n_envs)
        if not self.built:
            self._mass_scales.append((row, env, factor))
            return
        self._control.set_block("control", "mass_scale", "scale", factor,
                                envs=(slice(None) if env is None else env, row))

    def _mass_scale(self, row: int, env) -> float:
        env = check_env(env, self._n_envs)
        if env is None:
            raise TypeError("env must be an int here")
        if not self.built:
            factor = 1.0
            for r, e, f in self._mass_scales:
                if r == row and e in (None, env):
                    factor = f
            return factor
        return float(self._control.block("control", "mass_scale", "scale")[env, row, 0])

    def get_gravity(self, env: int = 0) -> np.ndarray:
        """Env ``env``'s gravity [m/s^2], shape (3,)."""
        env = check_env(env, self._n_envs)
        if env is None:
            raise TypeError("env must be an int here")
        if not self.built:
            return self._env_gravity.get(env, self._gravity).copy()
        return self._control.block("control", "gravity", "gravity")[env, 0].astype(np.float64)

    @property
    def bodies(self) -> list:
        """The free bodies, in index order."""
        return list(self._free.bodies)

    @property
    def bounds(self) -> float:
        """The divergence watch's bound [m]: an env in which a free body's centre or a floating root's origin has
        a coordinate beyond it (in absolute value) after a step is reported diverged (:meth:`get_diverged`)."""
        return self._bounds

    @bounds.setter
    def bounds(self, value: float) -> None:
        self._bounds = check_positive("bounds", value)

    @property
    def speed_limit(self) -> float:
        """The divergence watch's bound on every velocity component [m/s for linear, rad/s for angular and joint
        rates]."""
        return self._speed_limit

    @speed_limit.setter
    def speed_limit(self, value: float) -> None:
        self._speed_limit = check_positive("speed_limit", value)

    @property
    def step_layout(self) -> str:
        """How a step runs (``kernels/step.py``): ``"fused"``, one kernel in which each env's thread runs every
        stage of its steps, or ``"staged"``, the GPU layout: a launch per stage, the static contact pairs over
        (env, pair), a soil pair's quadrature over (env, pair, row of its footprint), the shape-shape pairs over
        (env, pair), the soil history over (env, sample row), the free bodies' integration over (env, body),
        the sweeps a few per launch (``solver.sweeps_per_launch``). Both compute the same step. The default is ``"staged"`` on a Vulkan
        driver that limits a thread's loop iterations per launch (lavapipe: docs/guides/pitfalls.md) and
        ``"fused"`` elsewhere, the faster on cpu; ``None`` sets it back. It may be set on any backend, before or
        after the build (a world whose envs times the items of any of those launches exceed
        ``kernels/common/lanes.MAX_LANES`` runs fused)."""
        if self._layout is not None:
            return self._layout
        from .kernels.common.lanes import driver_loop_limit

        return "staged" if self._vulkan and driver_loop_limit() is not None else "fused"

    @step_layout.setter
    def step_layout(self, value) -> None:
        if value is not None and value not in ("fused", "staged"):
            raise ValueError(f"step_layout must be 'fused', 'staged' or None, got {value!r}")
        self._layout = value
        self._step_graph = None

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

    # ------------------------------------------------------------------ materials
    def add_material(self, name: str) -> None:
        """Declare a material name; unset pairs with it use the default friction and restitution."""
        self.materials.add(name)

    def set_material_pair_prop(self, a: str, b: str, friction: float, restitution: float, env=None) -> None:
        """Coulomb friction coefficient (>= 0) and restitution (in [0, 1]) between materials ``a`` and ``b``,
        in every env (``env=None``: declared here if new) or in env ``env`` alone (both must be declared).
        May change between steps, before or after the build; checkpoints keep each env's values. After the
        build, a later call for every env (or :meth:`set_default_material`) sets the pairs it changes in every
        env again; one-env values set before the build are applied at the build, over every env's values."""
        env = check_env(env, self._n_envs)
        if env is None:
            self.materials.set_pair(a, b, friction, restitution)
            self._refresh_materials()
            return
        ia, ib = self.materials.index(a, "a"), self.materials.index(b, "b")
        props = MaterialTable._check(friction, restitution)
        if not self.built:
            self._env_material_pairs.append((ia, ib, *props, env))
            return
        self._write_env_material_pair(ia, ib, props, env)

    def get_material_pair_prop(self, a: str, b: str, env: int = 0) -> tuple[float, float]:
        """(friction, restitution) between materials ``a`` and ``b`` in env ``env`` (builds the world)."""
        env = check_env(env, self._n_envs)
        if env is None:
            raise TypeError("env must be an int here")
        ia, ib = self.materials.index(a, "a"), self.materials.index(b, "b")
        self.build()
        row = self._model.n_pairs + ia * self._model.n_materials + ib
        friction, restitution = self._control.block("control", "pair_material")[env, row]
        return float(friction), float(restitution)

    def _write_env_material_pair(self, ia: int, ib: int, props, env: int) -> None:
        """Write (friction, restitution) ``props`` into env ``env``'s rows of the pair (``ia``, ``ib``)."""
        sides = self._model.material_sides(self.materials, self.ground, self.heightmaps)
        rows = np.flatnonzero(((sides[:, 0] == ia) & (sides[:, 1] == ib)) | ((sides[:, 0] == ib) & (sides[:, 1] == ia)))
        data = self._control.block("control", "pair_material")
        data[env, rows] = props
        self._control.set_block("control", "pair_material", None, data)

    def set_default_material(self, friction: float, restitution: float) -> None:
        """Friction and restitution of every pair without its own properties (initially 0.8 and 0)."""
        self.materials.set_default(friction, restitution)
        self._refresh_materials()

    def _refresh_materials(self) -> None:
        """Write the rows of the material table that changed into every env (once built)."""
        if self.built:
            table = self._model.material_table(self.materials, self.ground, self.heightmaps)
            changed = np.any(table != self._material_table, axis=1)
            if changed.any():
                data = self._control.block("control", "pair_material")
                data[:, changed] = table[changed]
                self._control.set_block("control", "pair_material", None, data)
            self._material_table = table

    # ------------------------------------------------------------------ builders
    def _add_body(self, shape, material: str) -> Body:
        mat = self.materials.index(material)
        require_unbuilt(self.built, "adding a body")
        body = Body(self._free, len(self._free.bodies), shape, material)
        self._free.add(body, mat)
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

    # ------------------------------------------------------------------ build and step
    def build(self) -> None:
        """Freeze the topology and allocate the model and state arrays (done by the first step)."""
        if self.built:
            return
        from .model import Model, ModelParts
        from .state import Control, Scratch, State

        free, terrain, articulation, granular = self._free, self._terrain, self._articulation, self._granular
        nb = len(free.bodies)
        link_bodies, tracks = articulation.model_rows(self.materials, nb)
        model = Model(ModelParts([b.shape for b in free.bodies], self.materials, free.materials, terrain.ground,
                                 terrain.heightmaps, self._max_shape_pairs, self._max_shape_contacts,
                                 articulation.systems, link_bodies, articulation.pins, tracks,
                                 **granular.model_args(terrain.heightmaps)))
        ne = self._n_envs
        q0, u0, f0, t0 = free.initial()
        beds = [hm for hm in terrain.heightmaps if hm.is_soil]
        soil0 = np.concatenate([bed._init_state for bed in beds], axis=1) if beds else None
        sys_q, sys_u = articulation.initial()
        self._state = State(model, ne, q0, u0, soil0, sys_q, sys_u)
        self._control = Control(model, ne)
        self._material_table = model.material_table(self.materials, terrain.ground, terrain.heightmaps)
        self._control.set_block("control", "pair_material", None, self._material_table[None])
        if model.n_media:
            self._control.set_block("control", "medium", None, granular.env_medium_rows(model.medium_rows))
        scales = np.ones((ne, model.n_free + model.n_joints, 1))
        for row_, env, factor in self._mass_scales:
            scales[slice(None) if env is None else env, row_, 0] = factor
        self._mass_scales = []
        self._control.set_block("control", "mass_scale", None, scales)
        gravity = np.tile(self._gravity, (ne, 1))
        for env, g in self._env_gravity.items():
            gravity[env] = g
        self._env_gravity = {}
        self._control.set_block("control", "gravity", "gravity", gravity[:, None])
        if beds:
            from .kernels.common.arrays import SOIL_MATERIAL

            soil = np.zeros((ne, len(terrain.heightmaps), SOIL_MATERIAL.stride))
            for bed in beds:
                soil[:, bed.index] = bed.env_materials_array()
            self._control.set_block("control", "soil_material", None, soil)
        if nb:  # (the free bodies' rows: the shapes on links after them take no load)
            for col, value in (("force", f0), ("torque", t0)):
                load = np.zeros((ne, model.n_bodies, 3))
                load[:, :nb] = value
                self._control.set_block("control", "body_load", col, load)
        self._scratch = Scratch(model, ne)
        self._model = model
        for ia, ib, friction, restitution, env in self._env_material_pairs:  # (on top of every env's values)
            self._write_env_material_pair(ia, ib, (friction, restitution), env)
        self._env_material_pairs = []
        if self._vulkan:
            from .kernels.common.lanes import driver_loop_limit

            limited = driver_loop_limit() is not None  # (then a launch runs one step, in either step_layout)
            self._step_chunk = (_VULKAN_SOIL_STEPS_PER_LAUNCH if beds or limited else _VULKAN_STEPS_PER_LAUNCH)
        self._sweep_axis = self._broadphase_axis(q0)
        self._soil = SoilStore(model.soil_offsets, model.soil_row_offsets, self._state)
        self._checkpoints = Checkpoints(self._state, self._control, self._scratch, self._soil, beds, ne)
        self._contacts = Contacts(model, self._state, self._dt)
        self._rays = Rays(model, self._state, self._scratch, articulation.update_tree_frames, len(terrain.heightmaps))
        self._divergence = DivergenceReports(self._state, model.n_free,
                                             [system.model.name for system in articulation.systems])
        free.attach(BodyStates(self._state, self._control, ne, nb))
        terrain.attach(model, self._soil, self._contacts, self._control)
        articulation.attach(model, self._state, self._control, self._scratch)
        granular.attach(model, self._scratch,
                        {**model.arrays(), **self._state.arrays(), **self._control.arrays(), **self._scratch.arrays()},
                        nb, self._control)
        if beds:  # revisions advanced by soil-state edits made before the build; the first step sees every sample
            self._soil.start(beds)

    def step(self, n_steps: int = 1) -> None:
        """Advance every env by ``n_steps`` time steps.

        One call costs one kernel launch (on vulkan one per step; on the GPU backends a world with RFT plates also
        launches the plates' stage before each step); settings (``solver``, gravity) are
        checked and uploaded only when they changed since the last call.
        """
        n = n_steps if type(n_steps) is int and n_steps >= 1 else check_int("n_steps", n_steps, 1)
        self._sync_settings()
        if self._model.n_plates and not self._fused_plates():  # the RFT stage's own launch before each step
            # (kernels/rft/plates.py)
            plate_run, plate_args = self._granular.stage()
            run, args = self._graph()
            args["n_steps"] = 1
            for _ in range(n):
                plate_run(plate_args)
                run(args)
        elif self._model.n_bodies or self._model.n_trees:
            run, args = self._graph()
            if self._step_graph[2] is not None:  # the GPU layout: a call of its graph runs one step
                args["n_steps"] = 1
                for _ in range(n):
                    run(args)
            elif self._step_chunk is None or self._step_chunk >= n:
                args["n_steps"] = n
                run(args)
            else:  # vulkan
                for start in range(0, n, self._step_chunk):
                    args["n_steps"] = min(self._step_chunk, n - start)
                    run(args)
        self._clock.advance(n, self._dt)
        if self.on_divergence == "raise" and (self._model.n_bodies or self._model.n_trees):
            self._raise_if_diverged()

    def _sync_settings(self) -> None:
        """Build the world if it is not, and bring the settings the kernels read (``solver``, gravity, the
        ground's height, the divergence watch's bounds) to the device: the one place they are validated and
        written, by :meth:`step` and by every query that runs a kernel. Validated only when one changed since
        the last call, and before the build, so that a rejected setting leaves an unbuilt world editable."""
        if type(self.solver) is not SolverConfig and not isinstance(self.solver, SolverConfig):
            raise TypeError(f"world.solver must be a SolverConfig, got {type(self.solver).__name__}")
        ground = self._terrain.ground
        key = (self.solver.key(), None if ground is None else ground.height,
               self._bounds, self._speed_limit)
        changed = key != self._settings_key
        if changed:
            self.solver.validate()
        self.build()
        if changed:
            if self._model.n_bodies or self._model.n_trees:
                self._upload_params()
            self._settings_key = key

    def _upload_params(self) -> None:
        """Write dt and the solver settings into the model's settings rows (the arrays are uploaded only when a
        value changed)."""
        cfg = self.solver
        floats = {"dt": self._dt, "tolerance": cfg.tolerance, "slop": cfg.slop,
                  "erp": cfg.erp, "max_push": cfg.max_push, "restitution_threshold": cfg.restitution_threshold,
                  "margin": cfg.contact_margin,
                  "ground_height": self.ground.height if self.ground is not None else 0.0,
                  "bound": self._bounds, "speed_limit": self._speed_limit}
        ints = {"max_sweeps": cfg.max_sweeps, "warm_start": int(cfg.warm_start),
                "terrain_warm_start": int(cfg.terrain_warm_start), "contact_block": int(cfg.contact_block),
                "soil_block": int(cfg.soil_block), "pin_block": int(cfg.pin_block),
                "tree_soil_block": int(cfg.tree_soil_block),
                "sweep_axis": self._sweep_axis}
        self._model.set_settings(floats, ints)

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

    def _fused_plates(self) -> bool:
        """Whether the step kernel runs the RFT stage itself (on cpu): each env's thread evaluates its plates,
        carrier by carrier, at the start of each of its steps, so ``step(n)`` stays one launch. On the GPU
        backends the RFT stage is a kernel of its own, parallel over (env, plate), launched before each step
        (there one thread per env would take each env's plates one by one)."""
        return bool(self._model.n_plates) and backend.config()["arch"] == "cpu" and not self._staged()

    def _graph(self):
        """The step kernel as a compiled Taichi graph, built once per world: one call binds every array in
        C++ instead of Python. Returns the function that runs it and its argument dict (``n_steps`` set by
        the caller). A world of one env on cpu runs its env loop on the calling thread. The GPU layout's graph
        (:meth:`_staged`) launches the sweeps as often as ``solver.max_sweeps`` needs, ``solver.sweeps_per_launch``
        at a time: it is made again when either changes."""
        graph = self._step_graph
        sweeps = (self.solver.max_sweeps, self.solver.sweeps_per_launch)
        if graph is not None and (graph[2] is None or graph[2] == sweeps):
            return graph[0], graph[1]
        if self._staged():
            self._step_graph = (*self._staged_graph(), sweeps)
        else:
            from .kernels.common.arrays import ARENAS
            from .kernels.step import env_spread, simulate_kernel, stand_in

            arch = backend.config()["arch"]
            variant = self._step_variant()
            serial = variant[0]
            arrays = {**self._model.arrays(), **self._state.arrays(), **self._control.arrays(),
                      **self._scratch.arrays()}
            new = variant not in _COMPILED_VARIANTS
            scalars = {"n_steps": 0, "spread": env_spread(self._n_envs, arch, backend.cpu_threads(), serial),
                       "stamp": 0}
            with backend.compile_notice(self._variant_name(*variant)) if new else contextlib.nullcontext():
                run, args = kernel_cache.compiled_step(
                    "step", variant, lambda: simulate_kernel(*variant), stand_in, scalars,
                    {a.name: arrays[a.name] for a in ARENAS},
                    lambda: self._scratch.block("scratch_i", "launch", "stamp"))
            _COMPILED_VARIANTS.add(variant)
            self._step_graph = (run, args, None)
        return self._step_graph[0], self._step_graph[1]

    def _staged(self) -> bool:
        """Whether the step runs in the GPU layout, a launch per stage (``kernels/step.py`` ``stage_kernels``;
        :attr:`step_layout`)."""
        if self.step_layout != "staged":  # (first: step() asks on every call in a world with RFT plates)
            return False
        from .kernels.common.lanes import gpu_lanes

        # (past MAX_LANES threads a stage kernel would have no lanes: the fused kernel sizes its own loop)
        return gpu_lanes(self._n_envs * max(1, *self._gpu_items().values())) > 0

    def _sweeps_per_launch(self) -> int:
        """Sweeps per launch in the GPU layout: ``solver.sweeps_per_launch``, or by default 1 in a world with
        tracks or with trees on soil beds and ``kernels/step.py``'s ``SWEEPS_PER_LAUNCH`` in the others."""
        from .kernels.step import SWEEPS_PER_LAUNCH

        if self.solver.sweeps_per_launch is not None:
            return int(self.solver.sweeps_per_launch)
        m = self._model
        return 1 if m.n_tracks > 0 or (m.n_trees > 0 and m.n_soil_samples > 0) else SWEEPS_PER_LAUNCH

    def _gpu_items(self) -> dict:
        """How many of each item an env has that the GPU layout's launches run over (``kernels/step.py``
        ``gpu_launches``)."""
        from .kernels import step as S
        from .kernels.common.layout import PAIR_SOIL

        m = self._model
        footprint = max([cap for kind, _b, _m, cap in m.pairs if kind == PAIR_SOIL], default=0)
        return {S.OVER_PAIRS: m.n_pairs, S.OVER_SOIL_ROWS: m.n_soil_rows, S.OVER_BODIES: m.n_free,
                S.OVER_FOOTPRINT_ROWS: m.n_pairs * m.soil_quad_rows if footprint >= S.SPLIT_FOOTPRINT else 0,
                S.OVER_SHAPE_PAIRS: m.max_shape_pairs if m.max_shape_pairs >= S.SPLIT_SHAPE_PAIRS else 0}

    def _staged_graph(self):
        """The step's stage kernels as one compiled graph (a call runs one step) and its argument dict."""
        from .kernels.common.arrays import ARENAS, FEATURES
        from .kernels.common.lanes import gpu_lanes
        from .kernels.step import stage_kernels

        m = self._model
        trees = m.n_trees > 0
        features = backend.step_features(m.n_soil_samples, m.n_pins, m.n_tracks, m.n_plates) if trees else FEATURES
        cfg = backend.config()
        what = (f"the step's stage kernels ({'articulated trees' if trees else 'free bodies'}, "
                f"{gpu_lanes(self._n_envs)} lanes; {cfg['arch']} {cfg['precision']})")
        arrays = {**m.arrays(), **self._state.arrays(), **self._control.arrays(), **self._scratch.arrays()}
        run, args = backend.compiled_launch(
            stage_kernels(trees, self._n_envs, features, self.solver.max_sweeps, self._gpu_items(),
                          self._sweeps_per_launch()),
            ("n_steps", "spread", "stamp"), {a.name: arrays[a.name] for a in ARENAS})
        args["spread"] = 1
        pending = [what]  # (the driver compiles the shaders at their first launch: the notice is around it)

        def run_staged(a, _run=run):
            if pending:
                with backend.compile_notice(pending.pop()):
                    _run(a)
            else:
                _run(a)
        return run_staged, args

    def _step_variant(self) -> tuple:
        """The step kernel this world runs, as ``kernels.step.simulate_kernel``'s arguments ``(serial, trees,
        plates, lanes, split, features)``. On cpu: one env on the calling thread; the RFT stage in the kernel
        (the plates' carriers are counted at run time); the tree stages as functions of their own. On vulkan:
        one thread per env in ``lanes`` (:func:`~.kernels.common.lanes.gpu_lanes`). With trees, the optional
        parts the world uses (:func:`~taichi_terra.backend.step_features`: all of them where ``init``'s
        ``specialize`` is off); the free-body kernel always has them all (it compiles in seconds)."""
        from .kernels.common.arrays import FEATURES
        from .kernels.common.lanes import gpu_lanes

        arch = backend.config()["arch"]
        m = self._model
        trees = m.n_trees > 0
        features = backend.step_features(m.n_soil_samples, m.n_pins, m.n_tracks, m.n_plates) if trees else FEATURES
        return (arch == "cpu" and self._n_envs == 1, trees, arch == "cpu",
                gpu_lanes(self._n_envs) if arch == "vulkan" else 0,
                arch == "cpu" and trees and frontend.real_functions_work(), features)

    def _variant_name(self, serial: bool, trees: bool, plates: bool, lanes: int, split: bool, features: tuple) -> str:
        """The step kernel variant, as the compile notice names it."""
        cfg = backend.config()
        parts = ["free bodies"]
        if trees:
            parts = [f"articulated trees with {', '.join(features)}" if features else "articulated trees"]
        parts.append("one env, serial" if serial else f"{lanes} lanes" if lanes else "parallel over envs")
        return f"the step kernel ({', '.join(parts)}; {cfg['arch']} {cfg['precision']})"

    def compile(self) -> float:
        """Build the world (:meth:`build`) and compile its step kernel now rather than in the first
        :meth:`step`, so that the first step's time is the step's alone.

        The first world of its kind in a process compiles the step kernel (seconds to minutes on a 2-core cpu;
        the times are in ``docs/performance.md``; a notice on stderr says so, see :func:`taichi_terra.init`'s
        ``verbose``); later worlds of the same kind in the process reuse it. Steps nothing. (On lavapipe, where
        the step runs a launch per stage, the driver compiles the stages' shaders at the first step instead.)
        Returns the wall time it took [s].
        """
        start = time.perf_counter()
        self.build()
        if self._model.n_bodies or self._model.n_trees:
            self._graph()
            if self._model.n_plates and not self._fused_plates():
                self._granular.stage()
        return time.perf_counter() - start

    def _signature(self) -> tuple:
        """What a checkpoint's arrays and meaning depend on: envs, time step, shapes (type, size, mass), static
        geometry (which fix the contact pairs) and articulated systems (base and joints) and pins."""
        shapes = tuple((int(b.shape.type), tuple(np.round(b.shape.params, 12)), round(b.shape.mass, 12),
                        len(b.shape.points)) for b in self._free.bodies)
        maps = tuple((hm.x_samples, hm.y_samples) for hm in self._terrain.heightmaps)
        systems = tuple((s.model.name, s.model.base, tuple(s.get_joint_names())) for s in self._articulation.systems)
        pins = tuple(p.rows() for p in self._articulation.pins)
        plates = tuple((ps.carrier, ps.n_plates) for ps in self._granular.plate_sets)
        return (self._n_envs, self._dt, shapes, self._terrain.ground is not None, maps, self._max_shape_pairs,
                self._max_shape_contacts, systems, pins, plates, len(self._granular.media))

    def checkpoint(self) -> Checkpoint:
        """A copy of the per-env state (coordinates, velocities, loads, contacts, warm-start cache) and of what
        the last step reported (drive forces, joint wrenches, plate forces)."""
        self.build()
        return self._checkpoints.take(self._clock.time, self._clock.steps, self._signature())

    def restore(self, checkpoint: Checkpoint) -> None:
        """Return to a checkpoint; stepping on replays bit-for-bit on the same backend. A checkpoint that
        does not fit this world raises and changes nothing."""
        check_fits(checkpoint, self._signature())  # (before the build: a rejected call leaves the world editable)
        self.build()
        self._clock.time, self._clock.steps = self._checkpoints.restore(checkpoint)

    def reset_envs(self, envs, checkpoint: Checkpoint) -> None:
        """Put the envs ``envs`` (an index or a sequence of them) back to ``checkpoint`` (of this world), their
        divergence report cleared with the rest of their state; the other envs keep theirs. The world's time
        and step count are not changed (they are the other envs')."""
        idx = np.atleast_1d(np.asarray(envs))
        if idx.dtype.kind not in "iu" or idx.ndim != 1 or idx.size == 0:
            raise TypeError(f"envs must be an env index or a non-empty sequence of them, got {envs!r}")
        for e in idx:
            check_env(int(e), self._n_envs)
        check_fits(checkpoint, self._signature())
        self.build()
        self._checkpoints.reset_envs(idx, checkpoint)


