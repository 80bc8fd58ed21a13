"""The world's terrain: the ground plane, height maps and soil beds (:class:`Terrain`, the part that holds them
and serves their handles), and the World's calls that add them (:class:`TerrainBuilder`): height maps from
samples, matrices, PNG and text files and the Perlin generator, and deformable soil beds."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..materials import DEFAULT_MATERIAL
from ..validation import check_env, check_finite, require_unbuilt


@dataclass
class Ground:
    """An infinite horizontal plane ``z = height``; everything below it is inside."""

    height: float
    material: str


class Terrain:
    """The ground, height maps and soil beds of a world, and what their handles need from it: the env count, the
    model to update when a map moves or changes, and once built the soil state and the last step's contacts.

    Args:
        n_envs: the world's env count.
        build: builds the world (a soil bed's step statistics build it first, as every query does).
    """

    def __init__(self, n_envs: int, build):
        self.n_envs = int(n_envs)
        self._build = build
        self.ground: Ground | None = None
        self.heightmaps: list = []  # height maps and soil beds, in index order
        self._model = None
        self.soil = None  # the soil beds' state once built (terrain/soil_state.py)
        self._contacts = None  # the last step's contacts once built (contacts.py)
        self._control = None  # the per-env parameters once built (state.py Control)

    @property
    def built(self) -> bool:
        return self._model is not None

    def check_env(self, env) -> int | None:
        return check_env(env, self.n_envs)

    def require_unbuilt(self, what: str) -> None:
        require_unbuilt(self.built, what)

    def attach(self, model, soil, contacts, control) -> None:
        """The built world's model, soil state, contacts and per-env parameters (at the build)."""
        self._model, self.soil, self._contacts, self._control = model, soil, contacts, control

    def write_soil_material(self, bed, env) -> None:
        """A bed's soil material changed in env ``env`` (``None``: every env): the kernels take it (once
        built)."""
        if self._control is not None:
            envs = slice(None) if env is None else env
            rows = bed.env_materials_array() if env is None else bed._material_row(env)
            self._control.set_block("control", "soil_material", None, rows, envs=(envs, bed.index))

    def read_soil_material(self, bed, env: int):
        """Env ``env``'s soil material vector of ``bed`` as the kernels hold it (once built; else ``None``)."""
        if self._control is None:
            return None
        return self._control.block("control", "soil_material")[env, bed.index]

    def on_pose(self, hm) -> None:
        """A map moved: the model takes every map's pose (once built)."""
        if self._model is not None:
            self._model.update_heightmap_poses(self.heightmaps)

    def on_env_heights(self, hm, envs) -> None:
        """The heights of ``hm`` (a map with heights per env) changed in ``envs`` (an index or a slice): the
        model takes those envs' samples (once built)."""
        if self._model is not None:
            self._model.update_map_env_heights(hm, envs)

    def on_data(self, hm) -> None:
        """A map's heights or grid changed: the model takes them (once built)."""
        if self._model is not None:
            self._model.update_heightmap_data(self.heightmaps)

    def soil_step_stats(self, bed, env: int) -> dict:
        """The last step's soil contacts of ``bed`` in ``env`` (``contacts.py``); builds the world first."""
        self._build()
        return self._contacts.soil_step_stats(bed, env)


class TerrainBuilder:
    """The terrain calls of :class:`taichi_terra.World`; what they add is held by its :class:`Terrain`."""

    _PARTS = ("_terrain",)

    @property
    def ground(self) -> Ground | None:
        """The ground plane, or ``None``."""
        return self._terrain.ground

    @property
    def heightmaps(self) -> list:
        """The height maps and soil beds, in the order they were added."""
        return list(self._terrain.heightmaps)

    def add_ground(self, height: float = 0.0, *, material: str = DEFAULT_MATERIAL) -> Ground:
        """The infinite plane ``z = height`` [m]."""
        h = check_finite("height", height)
        self.materials.index(material)
        self._terrain.require_unbuilt("adding the ground")
        if self._terrain.ground is not None:
            raise RuntimeError("add_ground: the world already has a ground plane")
        self._terrain.ground = Ground(h, material)
        return self._terrain.ground

    def add_heightmap(self, x_samples: int, y_samples: int, x_size: float, y_size: float, center_x: float,
                      center_y: float, heights, *, material: str = DEFAULT_MATERIAL, colors=None,
                      per_env: bool = False):
        """A static height map; ``heights[y * x_samples + x]`` [m]. See :class:`taichi_terra.HeightMap`.

        Heights of shape (n_envs, x_samples * y_samples) give each env heights of its own; so does
        ``per_env=True`` (every env starts from ``heights``), after which :meth:`HeightMap.set_heights` changes
        one env's at any time. Without either, the envs share one set of samples (no copy per env)."""
        from .heightmap import GridSpec, HeightMap

        self.materials.index(material)
        self._terrain.require_unbuilt("adding a height map")
        terrain = self._terrain
        hm = HeightMap(terrain, len(terrain.heightmaps),
                       GridSpec(x_samples, y_samples, x_size, y_size, center_x, center_y), heights, material, colors,
                       per_env)
        terrain.heightmaps.append(hm)
        return hm

    def add_heightmap_from_matrix(self, x_size: float, y_size: float, center_x: float, center_y: float, heights, *,
                                  material: str = DEFAULT_MATERIAL, colors=None):
        """A height map from a 2-D array: ``heights[i, j]`` is the sample at x index i and y index j [m]."""
        try:
            h = np.asarray(heights, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError("heights must be a 2-D array of numbers (x samples, y samples)") from exc
        if h.ndim != 2 or min(h.shape) < 2:
            raise ValueError(f"heights must be a 2-D array with at least 2 x 2 samples (x samples, y samples), "
                             f"got shape {h.shape}")
        return self.add_heightmap(h.shape[0], h.shape[1], x_size, y_size, center_x, center_y, h.T.reshape(-1),
                                  material=material, colors=colors)

    def add_heightmap_from_png(self, center_x: float, center_y: float, path, x_size: float, y_size: float,
                               height_scale: float, height_offset: float = 0.0, *, material: str = DEFAULT_MATERIAL):
        """A height map from a grayscale PNG (8 or 16 bit): one sample per pixel, height = pixel * height_scale +
        height_offset [m]; image columns are x, rows from the bottom are y (see ``terrain/sources.py``)."""
        from .sources import load_png

        self.materials.index(material)
        self._terrain.require_unbuilt("adding a height map")
        nx, ny, heights = load_png(path, height_scale, height_offset)
        return self.add_heightmap(nx, ny, x_size, y_size, center_x, center_y, heights, material=material)

    def add_heightmap_from_file(self, center_x: float, center_y: float, path, *, material: str = DEFAULT_MATERIAL):
        """A height map from the plain text format: ``x_samples y_samples x_size y_size`` then the heights."""
        from .sources import load_text

        self.materials.index(material)
        self._terrain.require_unbuilt("adding a height map")
        nx, ny, sx, sy, heights = load_text(path)
        return self.add_heightmap(nx, ny, sx, sy, center_x, center_y, heights, material=material)

    def add_heightmap_from_terrain(self, center_x: float, center_y: float, terrain_properties, *,
                                   material: str = DEFAULT_MATERIAL):
        """A fractal Perlin terrain from a :class:`taichi_terra.TerrainProperties` (seeded: the same terrain on
        every backend)."""
        from .sources import TerrainProperties

        if not isinstance(terrain_properties, TerrainProperties):
            raise TypeError("terrain_properties must be a taichi_terra.TerrainProperties, "
                            f"got {type(terrain_properties).__name__}")
        self.materials.index(material)
        self._terrain.require_unbuilt("adding a height map")
        t = terrain_properties
        return self.add_heightmap(t.x_samples, t.y_samples, t.x_size, t.y_size, center_x, center_y, t.generate(),
                                  material=material)

    def add_deformable_terrain(self, x_samples: int, y_samples: int, x_size: float, y_size: float, center_x: float,
                               center_y: float, heights, material, *, per_env: bool = False):
        """A soil bed (:class:`taichi_terra.DeformableTerrain`) with the layout and pose rules of a height
        map; ``material`` is a :class:`taichi_terra.SoilMaterial`. Bodies sink into it and leave ruts.
        ``heights`` of shape (n_envs, n), or ``per_env=True``, give each env an undeformed surface of its own
        (as for :meth:`add_heightmap`)."""
        from .deformable import DeformableTerrain
        from .heightmap import GridSpec

        self._terrain.require_unbuilt("adding a deformable terrain")
        terrain = self._terrain
        bed = DeformableTerrain(terrain, len(terrain.heightmaps),
                                GridSpec(x_samples, y_samples, x_size, y_size, center_x, center_y), heights, material,
                                per_env)
        terrain.heightmaps.append(bed)
        return bed

