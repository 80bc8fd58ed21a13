"""Static height-map terrain: a regular grid of heights in its own frame, placed by a pose.

Layout: the sample at grid index (x, y) is ``heights[y * x_samples + x]``; index 0 sits at the minimum
x and y of the grid. The grid covers ``[center_x - x_size/2, center_x + x_size/2] x [center_y - y_size/2,
center_y + y_size/2]`` in the map frame, heights along the frame's z. A point ``p`` of the frame lies at
``position + R p`` in the world. Each cell is split into two triangles along the diagonal from its
(x, y) corner to its (x+1, y+1) corner; heights between samples are linear on those triangles.
Triangles touching a non-finite sample are holes: nothing collides with them and they are not drawn.
Runtime edits (``update``, visual updates, colours, revisions) are in ``terrain/updates.py``.

The surface is one-sided: everything below it (along the frame's -z) is inside the terrain.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import as_vector, check_finite, check_int, check_positive, quat_to_matrix, rotation_to_quat
from .updates import DEFAULT_COLOR, HeightMapUpdates


@dataclass(frozen=True)
class GridSpec:
    """A height map's grid as its builder was given it: ``x_samples`` x ``y_samples`` samples over ``x_size`` x
    ``y_size`` [m], centred at (``center_x``, ``center_y``) [m] in the map's frame (the module docstring)."""
    x_samples: object
    y_samples: object
    x_size: object
    y_size: object
    center_x: object
    center_y: object


class HeightMap(HeightMapUpdates):
    """A static height map. Create it with :meth:`taichi_terra.World.add_heightmap`."""

    def __init__(self, terrain, index: int, grid: GridSpec, heights, material: str, colors=None,
                 per_env: bool = False):
        nx = check_int("x_samples", grid.x_samples, 2)
        ny = check_int("y_samples", grid.y_samples, 2)
        self._x_size = check_positive("x_size", grid.x_size)
        self._y_size = check_positive("y_size", grid.y_size)
        self._center = (check_finite("center_x", grid.center_x), check_finite("center_y", grid.center_y))
        if not isinstance(per_env, bool):
            raise TypeError(f"per_env must be True or False, got {per_env!r}")
        ne = terrain.n_envs
        try:
            given = np.array(heights, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("heights must be a sequence of numbers") from exc
        if given.ndim == 2 and given.shape == (ne, nx * ny):
            per_env, h = True, given[0].copy()
        elif given.ndim != 1:
            raise ValueError(f"heights must be 1-D with x_samples * y_samples = {nx * ny} entries, or shape "
                             f"(n_envs, x_samples * y_samples) = ({ne}, {nx * ny}) for heights per env (use "
                             f"add_heightmap_from_matrix for a 2-D grid), got shape {given.shape}")
        elif given.size != nx * ny:
            raise ValueError(f"heights must have x_samples * y_samples = {nx * ny} entries, got {given.size}")
        else:
            h = given
        self._colors = self._check_colors(colors, nx * ny)
        self._color_map_set = colors is not None  # set_color_patch needs a full colour map first
        self._color_rev = 0  # advances with every colour change (renderers re-upload the colours)
        self._terrain = terrain  # the world's Terrain (terrain/builder.py)
        self.index = index
        self.material_name = material  # rigid contact material (see World.set_material_pair_prop)
        self._nx, self._ny = nx, ny
        self._heights = h  # visual heights (what is drawn and what get_height reads)
        self._contact = h.copy()  # collision surface (differs after a visual-only update)
        self._updated = False  # height or colour changed since set_updated_false()
        self._visual_update = False  # heights changed since set_updated_false()
        self._dirty = None  # None, "all", or (min_x, max_x, min_y, max_y) of patch edits
        self._position = np.zeros(3)
        self._quat = np.array([1.0, 0.0, 0.0, 0.0])
        self._row_rev = np.zeros(ny, dtype=np.int64)  # height revision of each sample row (shared by all envs)
        #: a map with heights per env: every env's (drawn and collision alike), shape (n_envs, n); else None
        self._env_heights = None
        self._env_row_rev = None  # and its row revisions per env, shape (n_envs, y_samples)
        self._heights_rev = np.zeros(ne, np.int64)  # per env: advances when set_heights or update change it
        if per_env:
            self._env_heights = given.copy() if given.ndim == 2 else np.tile(h, (ne, 1))
            self._env_row_rev = np.zeros((ne, ny), np.int64)

    @staticmethod
    def _check_colors(colors, n):
        if colors is None:
            return np.tile(np.asarray(DEFAULT_COLOR, dtype=float), (n, 1))
        c = np.asarray(colors, dtype=float)
        if c.shape == (3,):
            c = np.tile(c, (n, 1))
        if c.shape != (n, 3) or not np.all(np.isfinite(c)) or c.min() < 0.0 or c.max() > 1.0:
            raise ValueError(f"colors must be one RGB triple or shape ({n}, 3), values in [0, 1]")
        return c

    is_soil = False  # deformable beds (terrain/deformable.py) say True

    @property
    def material(self) -> str:
        """Name of the rigid contact material."""
        return self.material_name

    # ----------------------------------------------------------------- geometry
    @property
    def x_samples(self) -> int:
        return self._nx

    @property
    def y_samples(self) -> int:
        return self._ny

    @property
    def x_size(self) -> float:
        """Extent along the frame's x [m]."""
        return self._x_size

    @property
    def y_size(self) -> float:
        """Extent along the frame's y [m]."""
        return self._y_size

    @property
    def center_x(self) -> float:
        """Grid centre x in the height-map frame [m] (the world x only under the identity pose)."""
        return self._center[0]

    @property
    def center_y(self) -> float:
        """Grid centre y in the height-map frame [m]."""
        return self._center[1]

    @property
    def per_env(self) -> bool:
        """Whether each env has heights of its own (:meth:`set_heights`); else every env shares one set."""
        return self._env_heights is not None

    def env_height_rows(self) -> np.ndarray:
        """A map with heights per env: every env's samples as it holds them, shape (n_envs, n) (read-only: not
        a copy)."""
        rows = self._env_heights.view()
        rows.flags.writeable = False
        return rows

    def _env_or_all(self, env, shared: np.ndarray) -> np.ndarray:
        """A copy of the samples of ``env``: ``shared`` for a map whose envs share them; for a map with heights
        per env, env ``env``'s (n,), or every env's (n_envs, n) for ``env=None``."""
        env = self._terrain.check_env(env)
        if self._env_heights is None:
            return shared.copy()
        return self._env_heights.copy() if env is None else self._env_heights[env].copy()

    def _one_env(self, env, shared: np.ndarray) -> np.ndarray:
        """The samples a point query of ``env`` reads (not a copy): a map with heights per env needs an env."""
        env = self._terrain.check_env(env)
        if self._env_heights is None:
            return shared
        if env is None:
            raise ValueError("env: this map has heights per env; name the env to query (an int)")
        return self._env_heights[env]

    def get_heights(self, env: int | None = None) -> np.ndarray:
        """A copy of the (visual) height samples [m], index y * x_samples + x: shape (x_samples * y_samples,)
        for a map whose envs share them (``env`` only checked) or for ``env=i``; (n_envs, n) for every env of
        a map with heights per env."""
        return self._env_or_all(env, self._heights)

    def get_contact_heights(self, env: int | None = None) -> np.ndarray:
        """A copy of the collision surface's samples [m] (differs from :meth:`get_heights` after a visual-only
        update), shaped as :meth:`get_heights` returns them."""
        return self._env_or_all(env, self._contact)

    def set_heights(self, heights, env: int | None = None) -> None:
        """Replace the heights [m] (drawn and collision alike) of every env or of env ``env``, between steps.

        ``heights``: shape (x_samples * y_samples,), index y * x_samples + x (every env takes them for
        ``env=None``), or shape (n_envs, x_samples * y_samples) with ``env=None``, one set per env. Non-finite
        samples are holes, as at creation. A map whose envs share one set of heights becomes a map with heights
        per env the first time they differ, which is possible only before the world is built (the samples are
        laid out at the build): pass ``per_env=True`` when adding the map (or heights of shape
        (n_envs, n)) to change one env's heights after it. Grid and pose stay; a checkpoint does not hold
        heights (they are terrain, like :meth:`update`). Bad input raises and changes nothing.
        """
        n, ne = self._nx * self._ny, self._terrain.n_envs
        env = self._terrain.check_env(env)
        try:
            h = np.array(heights, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("heights must be an array of numbers") from exc
        if env is not None and h.shape != (n,):
            raise ValueError(f"heights must have shape ({n},) for one env, got {h.shape}")
        if env is None and h.shape not in ((n,), (ne, n)):
            raise ValueError(f"heights must have shape ({n},) or (n_envs, {n}) = ({ne}, {n}), got {h.shape}")
        self._check_heights(h)
        if self._env_heights is None and (env is not None or h.ndim == 2):
            if self._terrain.built:
                raise ValueError("env: this map's envs share one set of heights since the world was built; "
                                 "add it with per_env=True (or heights of shape (n_envs, n)) to give envs "
                                 "heights of their own")
            self._env_heights = np.tile(self._contact, (ne, 1))
            self._env_row_rev = np.tile(self._row_rev, (ne, 1))
        if self._env_heights is None:  # every env shares them: as a full update that keeps the grid
            self._advance_rows(self._heights, h)
            self._heights, self._contact = h, h.copy()
            self._heights_rev += 1
            self._mark("all")
            self._terrain.on_data(self)
            return
        target = slice(None) if env is None else slice(env, env + 1)
        new = np.broadcast_to(h, self._env_heights[target].shape)
        changed = (self._env_heights[target].view(np.int64) != new.view(np.int64)).reshape(-1, self._ny, self._nx)
        self._env_heights[target] = new
        self._env_row_rev[target] += changed.any(axis=2)
        self._heights_rev[target] += changed.any(axis=(1, 2))
        self._heights, self._contact = self._env_heights[0].copy(), self._env_heights[0].copy()
        self._mark("all")
        self._terrain.on_env_heights(self, target if env is None else env)

    def _check_heights(self, h: np.ndarray) -> None:
        """Samples a map accepts: any (non-finite ones are holes); a soil bed checks for finite ones."""
        return None

    def get_com_position(self) -> np.ndarray:
        """World position of the grid centre [m], shape (3,)."""
        return self._position + quat_to_matrix(self._quat) @ np.array([*self._center, 0.0])

    # --------------------------------------------------------------------- pose
    def set_position(self, x, y=None, z=None) -> None:
        """Move the frame origin to ``(x, y, z)`` [m] (three numbers or one 3-vector)."""
        if (y is None) != (z is None):
            raise TypeError("set_position takes one 3-vector or three numbers x, y, z")
        p = as_vector("position", [x, y, z] if y is not None else x, 3)
        self._position = p
        self._terrain.on_pose(self)

    def get_position(self) -> np.ndarray:
        """World position of the frame origin [m], shape (3,)."""
        return self._position.copy()

    def set_orientation(self, rotation, *more) -> None:
        """Rotate the frame about its origin: a quaternion (w, x, y, z), four numbers, or a 3x3 matrix."""
        q = rotation_to_quat("orientation", (rotation, *more) if more else rotation)
        self._quat = q
        self._terrain.on_pose(self)

    def get_orientation(self) -> np.ndarray:
        """Unit quaternion (w, x, y, z) of the frame, shape (4,)."""
        return self._quat.copy()

    def get_rotation_matrix(self) -> np.ndarray:
        """Rotation from the map frame to the world, shape (3, 3)."""
        return quat_to_matrix(self._quat)

    # ------------------------------------------------------------------ queries
    def _locate(self, x, y):
        """Cell indices and in-cell fractions of world (x, y), clamped to the grid (orientation ignored)."""
        dx = self._x_size / (self._nx - 1)
        dy = self._y_size / (self._ny - 1)
        fx = (check_finite("x", x) - self._position[0] - (self._center[0] - 0.5 * self._x_size)) / dx
        fy = (check_finite("y", y) - self._position[1] - (self._center[1] - 0.5 * self._y_size)) / dy
        fx = min(max(fx, 0.0), self._nx - 1.0)
        fy = min(max(fy, 0.0), self._ny - 1.0)
        ix = min(int(fx), self._nx - 2)
        iy = min(int(fy), self._ny - 2)
        return ix, iy, fx - ix, fy - iy, dx, dy

    def _interp(self, values, x, y):
        ix, iy, u, v, _, _ = self._locate(x, y)
        nx = self._nx
        v00, v10 = values[iy * nx + ix], values[iy * nx + ix + 1]
        v01, v11 = values[(iy + 1) * nx + ix], values[(iy + 1) * nx + ix + 1]
        # barycentric weights: exact at the three corners of the triangle
        if u >= v:
            return (1.0 - u) * v00 + (u - v) * v10 + v * v11
        return (1.0 - v) * v00 + (v - u) * v01 + u * v11

    def get_height(self, x: float, y: float, env: int | None = None) -> float:
        """Surface height [m] at world (x, y), reading the grid as if only the translation were applied.

        Points outside the grid use the nearest edge. For a rotated map, the surface point above the
        unrotated (x, y) is ``o + R ((x, y, h) - o)`` with ``o`` the position (see the module docs). A map
        with heights per env needs ``env``.
        """
        return float(self._interp(self._one_env(env, self._heights), x, y) + self._position[2])

    def get_contact_height(self, x: float, y: float, env: int | None = None) -> float:
        """Height [m] of the collision surface at world (x, y), read like :meth:`get_height`; the two differ
        only after a visual-only update."""
        return float(self._interp(self._one_env(env, self._contact), x, y) + self._position[2])

    def get_normal(self, x: float, y: float, env: int | None = None) -> np.ndarray:
        """Unit normal (+z side) of the collision triangle under world (x, y), orientation ignored, shape (3,);
        a map with heights per env needs ``env``."""
        h = self._one_env(env, self._contact)
        ix, iy, u, v, dx, dy = self._locate(x, y)
        nx = self._nx
        h00, h10 = h[iy * nx + ix], h[iy * nx + ix + 1]
        h01, h11 = h[(iy + 1) * nx + ix], h[(iy + 1) * nx + ix + 1]
        if u >= v:
            gx, gy = (h10 - h00) / dx, (h11 - h10) / dy
        else:
            gx, gy = (h11 - h01) / dx, (h01 - h00) / dy
        n = np.array([-gx, -gy, 1.0])
        return n / np.linalg.norm(n)

    def get_color(self, x: float, y: float) -> np.ndarray:
        """Base RGB colour in [0, 1] at world (x, y), interpolated like the height, shape (3,)."""
        return np.array([self._interp(self._colors[:, k], x, y) for k in range(3)])

    def get_colors(self) -> np.ndarray:
        """A copy of the per-vertex base colours (RGB in [0, 1]), shape (x_samples * y_samples, 3)."""
        return self._colors.copy()

    # ------------------------------------------------------------------ renderers
    def get_height_row_revisions(self, env: int | None = None) -> np.ndarray:
        """One revision per sample row (index y), which advances whenever a height in that row changes.

        Revisions are never cleared, so any number of renderers can each keep the last revision they drew
        and redraw only the rows whose revision has moved on. A static map's heights are the same in every
        env unless it has heights per env (:meth:`set_heights`); the result has shape (n_envs, y_samples) for
        ``env=None`` and (y_samples,) for ``env=i``.
        """
        env = self._terrain.check_env(env)
        every = np.tile(self._row_rev, (self._terrain.n_envs, 1)) if self._env_row_rev is None \
            else self._env_row_rev.copy()
        return every if env is None else every[env]

    def get_surface_heights(self, env: int | None = None) -> np.ndarray:
        """The surface as drawn [m] along the map's z, index y * x_samples + x: shape (n_envs, n) for
        ``env=None`` and (n,) for ``env=i``. For a static map these are its heights in that env."""
        env = self._terrain.check_env(env)
        every = self._env_heights if self._env_heights is not None else self._heights[None]
        if env is None:
            return np.broadcast_to(every, (self._terrain.n_envs, every.shape[1])).copy()
        return every[env if self._env_heights is not None else 0].copy()
