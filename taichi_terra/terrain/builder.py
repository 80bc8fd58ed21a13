"""The World's calls that add terrain: height maps from samples, matrices, PNG and text files and the Perlin
generator, and deformable soil beds. Mixed into :class:`taichi_terra.World`."""
from __future__ import annotations

import numpy as np

from ..materials import DEFAULT_MATERIAL


class TerrainBuilder:
    def add_heightmap(self, x_samples: int, y_samples: int, x_size: float, y_size: float, center_x: float,
                      center_y: float, heights, *, material: str = DEFAULT_MATERIAL, colors=None):
        """A static height map; ``heights[y * x_samples + x]`` [m]. See :class:`taichi_terra.HeightMap`."""
        from .heightmap import GridSpec, HeightMap

        self.materials.index(material)
        self._require_builder("adding a height map")
        hm = HeightMap(self, len(self._heightmaps), GridSpec(x_samples, y_samples, x_size, y_size, center_x, center_y),
                       heights, material, colors)
        self._heightmaps.append(hm)
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
        self._require_builder("adding a height map")
        nx, ny, heights = load_png(path, height_scale, height_offset)
        return self.add_heightmap(nx, ny, x_size, y_size, center_x, center_y, heights, material=material)

    def add_heightmap_from_file(self, center_x: float, center_y: float, path, *, material: str = DEFAULT_MATERIAL):
        """A height map from the plain text format: ``x_samples y_samples x_size y_size`` then the heights."""
        from .sources import load_text

        self.materials.index(material)
        self._require_builder("adding a height map")
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
        self._require_builder("adding a height map")
        t = terrain_properties
        return self.add_heightmap(t.x_samples, t.y_samples, t.x_size, t.y_size, center_x, center_y, t.generate(),
                                  material=material)

    def add_deformable_terrain(self, x_samples: int, y_samples: int, x_size: float, y_size: float, center_x: float,
                               center_y: float, heights, material):
        """A soil bed (:class:`taichi_terra.DeformableTerrain`) with the layout and pose rules of a height
        map; ``material`` is a :class:`taichi_terra.SoilMaterial`. Bodies sink into it and leave ruts."""
        from .deformable import DeformableTerrain
        from .heightmap import GridSpec

        self._require_builder("adding a deformable terrain")
        bed = DeformableTerrain(self, len(self._heightmaps),
                                GridSpec(x_samples, y_samples, x_size, y_size, center_x, center_y), heights, material)
        self._heightmaps.append(bed)
        return bed

