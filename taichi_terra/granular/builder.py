"""A world's granular media and RFT plates: :class:`Granular`, the part that holds them, launches their stage and
reads their reports, and :class:`GranularBuilder`, the World's calls that add them and report each plate's
force."""
from __future__ import annotations

import numpy as np

from ..validation import check_env, require_unbuilt

from .media import make_medium
from .plates import PlateSet, collision_mesh, refine, shape_mesh


def _link_surface(shapes):
    """A function making one mesh of a link's collision shapes (in the link frame)."""
    def surface():
        import trimesh

        return trimesh.util.concatenate([collision_mesh(c) for c in shapes])
    return surface


class Granular:
    """The granular media and plate sets of a world; once built, the RFT stage's launch and the plates' reports.

    Args:
        n_envs: the world's env count.
        clock: its :class:`~taichi_terra.clock.Clock` (reports read zero before the first step).
    """

    def __init__(self, n_envs: int, clock):
        self.n_envs, self.clock = int(n_envs), clock
        self.media: list = []
        self.plate_sets: list = []
        self._model = self._scratch = self._arrays = self._control = None
        self._n_free = 0
        self._graph = None
        self._env_params = []  # (medium index, env, {column: value}) set for one env before the build

    @property
    def built(self) -> bool:
        return self._model is not None

    def require_unbuilt(self, what: str) -> None:
        require_unbuilt(self.built, what)

    def add_plate_set(self, owner, link, carrier, centroids, normals, areas) -> PlateSet:
        first = sum(ps.n_plates for ps in self.plate_sets)
        plates = PlateSet(len(self.plate_sets), owner, link, np.asarray(centroids, np.float64),
                          np.asarray(normals, np.float64), np.asarray(areas, np.float64), first, carrier)
        self.plate_sets.append(plates)
        return plates

    def model_args(self, heightmaps: list) -> dict:
        """The plates and media as :class:`~taichi_terra.model.Model` takes them (a medium's surface map as its
        index in ``heightmaps``)."""
        plates = [(ps.carrier, ps.centroids, ps.normals, ps.areas) for ps in self.plate_sets]
        media = [(m, -1 if m.heightmap is None else heightmaps.index(m.heightmap)) for m in self.media]
        return {"plates": plates, "media": media}

    def attach(self, model, scratch, arrays: dict, n_free: int, control) -> None:
        """The built world's model, scratch (where the plates' reports are), every array by name (the stage's
        launch binds them), its free-body count (the plates' loads follow the free bodies' rows with the
        links') and its control arrays (each env's media)."""
        self._model, self._scratch, self._arrays, self._n_free = model, scratch, arrays, int(n_free)
        self._control = control

    def env_medium_rows(self, rows: np.ndarray) -> np.ndarray:
        """Every env's ``medium`` rows at the build, shape (n_envs, n_media, stride): ``rows`` (each medium as
        added) with the values set for one env before the build over them."""
        out = np.tile(rows, (self.n_envs, 1, 1))
        for k, env, values in self._env_params:
            for col, value in values.items():
                out[env, k, col:col + np.size(value)] = value
        self._env_params = []
        return out

    def set_params(self, medium, values: dict, env) -> None:
        """Write ``values`` ({column of MEDIUM_F: value}) of ``medium`` for ``env`` (None: every env)."""
        if self._control is None:
            for e in (range(self.n_envs) if env is None else [env]):
                self._env_params.append((medium.index, e, values))
            return
        data = self._control.block("control", "medium")
        rows = slice(None) if env is None else env
        for col, value in values.items():
            data[rows, medium.index, col:col + np.size(value)] = value
        self._control.set_block("control", "medium", None, data)

    def get_params(self, medium, env: int) -> np.ndarray:
        """``medium``'s row of the ``medium`` block in ``env`` (its values as added, and those set since, before
        the build)."""
        if self._control is None:
            from ..model import medium_row

            row = medium_row(medium)
            for k, e, values in self._env_params:
                if k == medium.index and e == env:
                    for col, value in values.items():
                        row[col:col + np.size(value)] = value
            return row
        return self._control.block("control", "medium")[env, medium.index].astype(np.float64)

    def _carrier_row(self, carrier) -> int:
        if isinstance(carrier, tuple):
            return self._n_free + self._model.tree_joint0[carrier[0]] + carrier[1]
        return carrier

    def forces(self, env: int) -> np.ndarray:
        """Every plate's output row of the last step in ``env`` (``PLATE_OUT``), float64; zeros (and no
        medium) before the first step."""
        from ..kernels.common.arrays import PLATE_OUT

        data = np.array(self._scratch.block("scratch_f", "plate_out")[int(env)], np.float64)
        if self.clock.steps == 0:
            data[...] = 0.0
            data[:, PLATE_OUT.medium] = -1.0
        return data

    def loads(self) -> np.ndarray:
        """Each plate set's load rows of the last step, (n_envs, n_sets, 12) float64; zeros before the first."""
        rows = [self._carrier_row(ps.carrier) for ps in self.plate_sets]
        data = self._scratch.block("scratch_f", "plate_load")[:, rows].astype(np.float64)
        if self.clock.steps == 0:
            data[...] = 0.0
        return data

    def stage(self):
        """The RFT stage's compiled launch (``kernels/rft/plates.py``), built once per world."""
        if self._graph is None:
            from .. import backend
            from ..kernels.common.lanes import gpu_lanes
            from ..kernels.rft.plates import plates_kernel

            names = ("model_i", "model_f", "heights", "q", "u", "state_f", "control", "scratch_f")
            arch = backend.config()["arch"]
            serial = arch == "cpu" and self.n_envs == 1  # (as the step kernel's env loop)
            lanes = (0, 0, 0)
            if arch == "vulkan":
                ne = self.n_envs
                lanes = (gpu_lanes(ne), gpu_lanes(ne * self._model.n_plates),
                         gpu_lanes(ne * self._model.n_plate_carriers))
                if 0 in lanes:  # (past MAX_LANES: every loop as Taichi sizes it)
                    lanes = (0, 0, 0)
            self._graph = backend.compiled_launch(plates_kernel(self._model.n_trees > 0, serial, lanes), (),
                                                  {n: self._arrays[n] for n in names})
        return self._graph


class GranularBuilder:
    """The granular calls of :class:`taichi_terra.World`; what they add is held by its :class:`Granular`."""

    _PARTS = ("_granular",)

    @property
    def granular_media(self) -> list:
        """The granular media, in the order they were added."""
        return list(self._granular.media)

    @property
    def plate_sets(self) -> list:
        """The plate sets, in the order they were added (their plates in that order too)."""
        return list(self._granular.plate_sets)

    def set_medium_params(self, medium, *, zeta=None, surface_height=None, coefficients=None, env=None) -> None:
        """A granular medium's ``zeta`` [N/cm^3] (> 0), flat surface height [m] (a medium made with a height;
        a height map's surface moves with the map) and Li ``coefficients`` (a name or nine numbers, as
        :meth:`add_granular_medium` takes them), in every env (``env=None``) or in env ``env`` alone; the ones
        left ``None`` keep their values. Before or after the build, between steps; checkpoints keep each env's.
        Everything is checked before anything changes."""
        from ..kernels.common.arrays import MEDIUM_F
        from ..validation import check_finite, check_positive
        from .media import GranularMedium, parse_coefficients

        if not isinstance(medium, GranularMedium) or medium not in self._granular.media:
            raise ValueError("medium: not one of this world's granular media")
        env = check_env(env, self._granular.n_envs)
        values = {}
        if zeta is not None:
            values[MEDIUM_F.zeta] = check_positive("zeta", zeta)
        if surface_height is not None:
            if medium.height is None:
                raise ValueError("surface_height: this medium's surface is a height map (move the map instead)")
            values[MEDIUM_F.height] = check_finite("surface_height", surface_height)
        if coefficients is not None:
            values[MEDIUM_F.coefficients] = np.array(parse_coefficients(coefficients))
        if values:
            self._granular.set_params(medium, values, env)

    def get_medium_params(self, medium, env: int = 0) -> dict:
        """A granular medium's ``zeta`` [N/cm^3], ``surface_height`` [m] (``None``: a height map's surface) and
        ``coefficients`` (nine numbers) in env ``env``."""
        from ..kernels.common.arrays import MEDIUM_F
        from .media import GranularMedium

        if not isinstance(medium, GranularMedium) or medium not in self._granular.media:
            raise ValueError("medium: not one of this world's granular media")
        env = check_env(env, self._granular.n_envs)
        if env is None:
            raise TypeError("env must be an int here")
        row = self._granular.get_params(medium, env)
        return {"zeta": float(row[MEDIUM_F.zeta]),
                "surface_height": None if medium.height is None else float(row[MEDIUM_F.height]),
                "coefficients": tuple(float(x) for x in row[MEDIUM_F.coefficients:MEDIUM_F.coefficients + 9])}

    def add_granular_medium(self, surface=0.0, *, coefficients="li2013", zeta: float = 3.75,
                            normalization: str = "unit", smoothing: float = 0.1, region=None, mode: str = "force"):
        """Sand that resists the plates buried in it by resistive force theory (:mod:`taichi_terra.granular`).

        Args:
            surface: the sand's surface: a height [m] (flat), or a :class:`~taichi_terra.HeightMap` (not a soil
                bed) whose surface it is, depth measured along the map's z; that map then stops being rigid
                ground (shapes pass into the sand; the viewer still draws it).
            coefficients: Li 2013's stresses per unit depth as nine Fourier coefficients: ``"li2013"`` (the
                generic set, the default), ``"poppy_loose"``, ``"poppy_close"``, or nine numbers (A00, A10, B11,
                B01, B-11, C11, C01, C-11, D10).
            zeta: scale of the stresses [N/cm^3], the literature's unit: the vertical penetration stress per unit
                depth of a horizontal plate with the generic set (3.75 for RFT-SiM's play sand, 3.75e6 N/m^3).
            normalization: Treers' scaling functions normalized to 1 at full speed (``"unit"``) or as RFT-SiM's
                code does (``"rftsim"``).
            smoothing: each plate's force ``F <- a F_new + (1 - a) F_last``, ``a = smoothing`` in (0, 1] (RFT-SiM:
                0.1; 1: none). The last force is state: checkpoints restore it.
            region: ``(x_min, x_max, y_min, y_max)`` [m] where the medium acts (default everywhere); where
                regions overlap the medium added first acts.
            mode: ``"force"`` (RFT-SiM: each plate's force from its velocity at the start of the step, applied as
                a force) or ``"row"`` (a body's plates bound a row of the sweep along their resistance, so a body
                at rest in the sand holds still without smoothing); see
                :class:`~taichi_terra.granular.GranularMedium`.

        A plate feels the medium when its centroid is below the surface, in the region, and moving into the
        sand through its face; see :meth:`add_plates`. Bad arguments raise, naming the argument, and add
        nothing."""
        self._granular.require_unbuilt("adding a granular medium")
        medium = make_medium(len(self._granular.media), surface, coefficients, zeta, normalization, smoothing, region, mode)
        if medium.heightmap is not None and medium.heightmap not in self.heightmaps:
            raise ValueError("surface: the height map is not one of this world's")
        self._granular.media.append(medium)
        return medium

    def add_plates(self, owner, link: str | None = None, *, count: int | None = None, area: float | None = None,
                   mesh=None) -> PlateSet:
        """Cut a body's surface into RFT plates.

        Args:
            owner: a free :class:`~taichi_terra.Body`, or an :class:`~taichi_terra.ArticulatedSystem` with ``link``.
            link: the link's name (articulated systems only).
            count: about how many plates: at least that many (but where the mesh has more faces), cut as coarsely
                as that allows (default 500 when ``area`` is not given either).
            area: the largest plate's area [m^2].
            mesh: the surface to use (a ``trimesh.Trimesh`` or a mesh file, in the body's or link's frame) instead
                of the body's shape or the link's collision shapes (each shape's whole surface: where a link's
                shapes overlap, give the union here).

        Returns the :class:`~taichi_terra.granular.PlateSet` (centroids, normals and areas in the owner's frame).
        One set per body or link; an inside-out closed mesh is turned right, an open one is used with a warning."""
        import trimesh

        self._granular.require_unbuilt("adding plates")
        carrier, name, shapes = self._plate_owner(owner, link)
        if mesh is not None:
            surface = mesh if isinstance(mesh, trimesh.Trimesh) else trimesh.load(mesh, force="mesh")
        elif shapes is None:
            raise ValueError(f"{name} has no collision shapes: give a mesh")
        else:
            surface = shapes()
        centroids, normals, areas = refine(surface, count=count, area=area, name=name)
        return self._granular.add_plate_set(owner, link, carrier, centroids, normals, areas)

    def _plate_owner(self, owner, link):
        """``(carrier, name, surface)`` of a plate owner: its carrier (a body index or (system, link index)), a
        name for messages and a function making its default surface mesh (``None``: it has none). Raises on a
        bad owner, a link it lacks, or one that already has plates."""
        from ..bodies.articulated import ArticulatedSystem
        from ..bodies.body import Body

        if isinstance(owner, Body):
            if owner not in self.bodies:
                raise ValueError("owner: the body is not one of this world's")
            if link is not None:
                raise ValueError("link: a free body has no links")
            carrier, name = owner.index, f"body {owner.index}"

            def surface():
                return shape_mesh(owner.shape)
        elif isinstance(owner, ArticulatedSystem):
            if owner not in self.articulated_systems:
                raise ValueError("owner: the articulated system is not one of this world's")
            names = owner.get_body_names()
            if link not in names:
                raise ValueError(f"link must be one of {names}, got {link!r}")
            k = owner.model.link_index(link)
            carrier, name = (owner.index, k), f"link {link!r}"
            shapes = owner.model.links[k].collisions
            surface = _link_surface(shapes) if shapes else None
        else:
            raise TypeError(f"owner must be a Body or an ArticulatedSystem, got {type(owner).__name__}")
        if any(ps.carrier == carrier for ps in self._granular.plate_sets):
            raise ValueError(f"owner: {name} already has plates")
        return carrier, name, surface

    def _add_plates_exact(self, owner, link, centroids, normals, areas) -> PlateSet:
        """Plates given one by one (the world XML's): centroids [m] and unit normals (n, 3) in the owner's frame,
        areas (n,) [m^2] > 0."""
        self._granular.require_unbuilt("adding plates")
        carrier, _name, _surface = self._plate_owner(owner, link)
        c, n, a = (np.asarray(x, np.float64) for x in (centroids, normals, areas))
        if c.ndim != 2 or c.shape[1] != 3 or n.shape != c.shape or a.shape != (len(c),) or not len(c):
            raise ValueError("plates: centroids and normals must be (n, 3) and areas (n,), n >= 1")
        if not (np.isfinite(c).all() and np.isfinite(n).all() and (a > 0).all()):
            raise ValueError("plates: values must be finite and areas > 0")
        if np.abs(np.linalg.norm(n, axis=1) - 1.0).max() > 1e-9:
            raise ValueError("plates: normals must be unit vectors")
        return self._granular.add_plate_set(owner, link, carrier, c, n, a)

    # ------------------------------------------------------------------ reports
    def get_plate_forces(self, env: int = 0) -> dict:
        """Every plate's result of the last step in ``env`` (rows: plate sets in order, see ``PlateSet.rows``):
        ``force`` [N, world], the plate's resistance (smoothed): in a medium that applies forces, the force it
        took; in one whose resistance is a row, what it offered (its body's row may have used less, see
        :meth:`get_plate_loads`), shape (n, 3); ``depth`` [m] of its centroid below the surface (<= 0: above),
        shape (n,); ``medium``, the index of the medium it is in (-1: none), shape (n,). Zeros before the first
        step."""
        check_env(env, self.n_envs)
        if env is None:
            raise TypeError("env must be an int here")
        self.build()
        from ..kernels.common.arrays import PLATE_OUT

        data = self._granular.forces(int(env))
        return {"force": data[:, PLATE_OUT.force:PLATE_OUT.force + 3].copy(),
                "depth": data[:, PLATE_OUT.depth].copy(), "medium": data[:, PLATE_OUT.medium].astype(int)}

    def get_plate_loads(self, env: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per plate set, the sum of its plates' forces [N] and their moment [N m] about its owner's origin (a free
        body's centre of mass, a link frame's origin), world axes, as applied in the last step (sand rows
        included): two arrays of shape (n_sets, 3), or (n_envs, n_sets, 3) with ``env=None``."""
        check_env(env, self.n_envs)
        self.build()
        data = self._granular.loads()
        force, torque = data[..., 0:3] + data[..., 6:9], data[..., 3:6] + data[..., 9:12]
        return (force, torque) if env is None else (force[int(env)], torque[int(env)])
