"""Runtime edits of a static height map: full updates (collision and drawing), visual-only updates and patches,
colours, the update flags with the visual dirty region, and the per-row height revisions.

Rule for non-finite samples: NaN and +-inf are stored unchanged, here as at creation, and mean a hole: no
triangle touching such a sample collides or is drawn. Invalid calls that the height-map specification says
are ignored (wrong sample count, geometry that does not match) warn with a ``RuntimeWarning`` and change
nothing; the patch methods return False instead.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

#: a height map's vertex colour where none is set (sandy grey-brown)
DEFAULT_COLOR = (0.55, 0.5, 0.42)


def _bits(a: np.ndarray) -> np.ndarray:
    """The float64 samples as integers: equal bits compare equal (NaN included), -0.0 differs from 0.0."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _heights_or_none(heights, n_min: int, exact: bool):
    try:
        h = np.array(heights, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        return None
    if np.ndim(heights) != 1 or (h.size != n_min if exact else h.size < n_min):
        return None
    return h


def _finite(*values) -> bool:
    return all(isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def _index(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        return None
    return int(value)


class HeightMapUpdates:
    """Mixed into :class:`taichi_terra.HeightMap` (which holds ``_heights``, ``_contact``, ``_row_rev`` ...)."""

    # ------------------------------------------------------------------ helpers
    def _advance_rows(self, old: np.ndarray, new: np.ndarray) -> np.ndarray:
        """Advance the revision of every row where ``new`` differs from ``old`` (bitwise); returns the mask
        of changed samples, shape (y_samples, x_samples)."""
        changed = (_bits(old) != _bits(new)).reshape(self._ny, self._nx)
        self._row_rev += changed.any(axis=1)
        return changed

    def _mark(self, region) -> None:
        self._updated = True
        self._visual_update = True
        if region == "all" or self._dirty == "all":
            self._dirty = "all"
        elif self._dirty is None:
            self._dirty = region
        else:
            a, b = self._dirty, region
            self._dirty = (min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3]))

    def _geometry_matches(self, center_x, center_y, x_size, y_size) -> bool:
        return _finite(center_x, center_y, x_size, y_size) and (float(center_x), float(center_y)) == self._center \
            and float(x_size) == self._x_size and float(y_size) == self._y_size

    # ------------------------------------------------------------------ full update
    def update(self, center_x, center_y, x_size, y_size=None, heights=None) -> bool:
        """Replace the heights (drawn and collision) and the grid's centre and size; the sample count is fixed.

        Call as ``update(center_x, center_y, x_size, y_size, heights)`` or ``update(center_x, center_y,
        terrain_properties)`` (a :class:`taichi_terra.TerrainProperties` with this map's sample counts).
        Centre in the map frame [m], sizes [m] > 0, ``heights[y * x_samples + x]`` [m] with exactly
        x_samples * y_samples entries; a map with heights per env takes them in every env. Invalid input warns,
        changes nothing and returns False.
        """
        from .sources import TerrainProperties

        if isinstance(x_size, TerrainProperties) and y_size is None and heights is None:
            props = x_size
            if (props.x_samples, props.y_samples) != (self._nx, self._ny):
                return self._reject("update", f"terrain_properties has {props.x_samples} x {props.y_samples} "
                                    f"samples; this map has {self._nx} x {self._ny} (the sample count is fixed)")
            x_size, y_size, heights = props.x_size, props.y_size, props.generate()
        if not _finite(center_x, center_y, x_size, y_size) or x_size <= 0 or y_size <= 0:
            return self._reject("update", "center_x and center_y must be finite, x_size and y_size finite and > 0")
        h = _heights_or_none(heights, self._nx * self._ny, exact=True)
        if h is None:
            return self._reject("update", f"heights must be a 1-D sequence of exactly {self._nx * self._ny} numbers")
        moved = (float(center_x), float(center_y), float(x_size), float(y_size)) != \
            (*self._center, self._x_size, self._y_size)
        self._advance_rows(self._heights, h)
        if moved:  # every row now lies elsewhere in the frame
            self._row_rev += 1
        self._center = (float(center_x), float(center_y))
        self._x_size, self._y_size = float(x_size), float(y_size)
        self._heights = h
        self._contact = h.copy()
        self._heights_rev += 1
        if self._env_heights is not None:  # (every env takes the new heights)
            self._env_row_rev += (self._env_heights.view(np.int64) != h.view(np.int64)).reshape(
                -1, self._ny, self._nx).any(axis=2) | moved
            self._env_heights[:] = h
        self._mark("all")
        self._terrain.on_data(self)
        return True

    def _reject(self, what: str, why: str) -> bool:
        warnings.warn(f"{what} ignored: {why}", RuntimeWarning, stacklevel=3)
        return False

    # ------------------------------------------------------------------ visual-only updates
    def update_visual_height(self, center_x, center_y, x_size, y_size, heights) -> bool:
        """Replace the drawn heights only (collision keeps its surface). The centre and size must equal the
        current ones and ``heights`` have x_samples * y_samples entries; otherwise it warns, changes nothing and
        returns False."""
        if self._env_heights is not None:
            return self._reject("update_visual_height", "a map with heights per env draws the heights it "
                                "collides with (use set_heights)")
        if not self._geometry_matches(center_x, center_y, x_size, y_size):
            return self._reject("update_visual_height", "center and size must equal the current ones "
                                f"({self._center[0]}, {self._center[1]}, {self._x_size}, {self._y_size})")
        h = _heights_or_none(heights, self._nx * self._ny, exact=True)
        if h is None:
            return self._reject("update_visual_height",
                                f"heights must be a 1-D sequence of exactly {self._nx * self._ny} numbers")
        changed = self._advance_rows(self._heights, h)
        self._heights = h
        if changed.any():
            self._mark("all")
        return True

    def update_visual_height_patch(self, center_x, center_y, x_size, y_size, heights, height_offset,
                                   min_x, max_x, min_y, max_y) -> bool:
        """Copy the inclusive sample range [min_x, max_x] x [min_y, max_y] (clamped to the grid) of the full-size
        ``heights`` (index y * x_samples + x), plus ``height_offset`` [m], into the drawn heights.

        Returns False, changing nothing, when the centre and size differ from the current ones, ``heights``
        has fewer than x_samples * y_samples entries, an index is not an int >= 0, the clamped patch is
        empty or the map has heights per env. Samples that keep their value bit for bit are not reported: no
        flag, dirty region or revision.
        """
        if self._env_heights is not None or not self._geometry_matches(center_x, center_y, x_size, y_size):
            return False
        h = _heights_or_none(heights, self._nx * self._ny, exact=False)
        bounds = [_index(v) for v in (min_x, max_x, min_y, max_y)]
        if h is None or None in bounds or not isinstance(height_offset, numbers.Real) \
                or isinstance(height_offset, bool):
            return False
        x0, x1 = bounds[0], min(bounds[1], self._nx - 1)
        y0, y1 = bounds[2], min(bounds[3], self._ny - 1)
        if x0 > x1 or y0 > y1:
            return False
        grid = h[:self._nx * self._ny].reshape(self._ny, self._nx)
        new = self._heights.copy().reshape(self._ny, self._nx)
        new[y0:y1 + 1, x0:x1 + 1] = grid[y0:y1 + 1, x0:x1 + 1] + float(height_offset)
        changed = self._advance_rows(self._heights, new.reshape(-1))
        if changed.any():
            ys, xs = np.nonzero(changed)
            self._heights = new.reshape(-1)
            self._mark((int(xs.min()), int(xs.max()), int(ys.min()), int(ys.max())))
        return True

    # ------------------------------------------------------------------ colours
    def set_color(self, colors) -> None:
        """Per-vertex base colours, shape (x_samples * y_samples, 3) with values in [0, 1]; ``None`` or an empty
        sequence returns to the default appearance (and clears the colour map)."""
        if colors is None or (hasattr(colors, "__len__") and len(colors) == 0):
            self._colors = np.tile(np.asarray(DEFAULT_COLOR, dtype=float), (self._nx * self._ny, 1))
            self._color_map_set = False
        else:
            c = np.asarray(colors, dtype=float) if not isinstance(colors, str) else np.zeros(0)
            if c.shape != (self._nx * self._ny, 3) or not np.all(np.isfinite(c)) or c.min() < 0 or c.max() > 1:
                raise ValueError(f"colors must have shape ({self._nx * self._ny}, 3) with values in [0, 1]")
            self._colors = c.copy()
            self._color_map_set = True
        self._color_rev += 1
        self._updated = True

    def set_color_patch(self, colors, min_x, max_x, min_y, max_y) -> bool:
        """Overwrite the inclusive range [min_x, max_x] x [min_y, max_y] (clamped) of the colour map with
        ``colors``, shape ((max_x - min_x + 1) * (max_y - min_y + 1), 3) of the clamped range, x fastest.
        Returns False, changing nothing, if no full colour map was set, the size does not match or the
        clamped range is empty."""
        bounds = [_index(v) for v in (min_x, max_x, min_y, max_y)]
        if not self._color_map_set or None in bounds:
            return False
        x0, x1 = bounds[0], min(bounds[1], self._nx - 1)
        y0, y1 = bounds[2], min(bounds[3], self._ny - 1)
        if x0 > x1 or y0 > y1:
            return False
        try:
            c = np.asarray(colors, dtype=float)
        except (TypeError, ValueError):
            return False
        if c.shape != ((x1 - x0 + 1) * (y1 - y0 + 1), 3) or not np.all(np.isfinite(c)) or c.min() < 0 or c.max() > 1:
            return False
        grid = self._colors.reshape(self._ny, self._nx, 3)
        grid[y0:y1 + 1, x0:x1 + 1] = c.reshape(y1 - y0 + 1, x1 - x0 + 1, 3)
        self._color_rev += 1
        self._updated = True
        return True

    def has_color_map(self) -> bool:
        """Whether a full per-vertex colour map is set (at creation or by :meth:`set_color`)."""
        return self._color_map_set

    # ------------------------------------------------------------------ flags for a server
    def is_updated(self) -> bool:
        """Whether heights or colours changed since :meth:`set_updated_false`."""
        return self._updated

    def has_visual_height_update(self) -> bool:
        """Whether the drawn heights changed since :meth:`set_updated_false`."""
        return self._visual_update

    def get_visual_dirty_region(self):
        """``(min_x, max_x, min_y, max_y)``, inclusive, of the samples changed by patch updates since
        :meth:`set_updated_false`; ``None`` when nothing changed or the whole map is dirty (a full update)."""
        return self._dirty if isinstance(self._dirty, tuple) else None

    def set_updated_false(self) -> None:
        """Clear the update flags and the dirty region (the row revisions are never cleared)."""
        self._updated = False
        self._visual_update = False
        self._dirty = None
