"""The viewer's granular media: each RFT plate as a dot at its centroid, coloured by the stress the sand puts on
it, and each flat medium's surface as a grid of lines that the buried parts of bodies show through (mixed into
:class:`~taichi_terra.viewer.Viewer`)."""
from __future__ import annotations

import numpy as np

from .terrain_layer import _field

#: the plate colours: no stress (or not in the sand), then the colour map's low and high ends
PLATE_IDLE = (0.35, 0.38, 0.45)
STRESS_COLORS = ((0.98, 0.85, 0.25), (0.85, 0.12, 0.08))
SAND_COLOR = (0.80, 0.66, 0.42)
#: spacing of a flat sand surface's grid lines, as a fraction of the scene's size
SAND_GRID = 0.1


def stress_colors(stress: np.ndarray, scale: float) -> np.ndarray:
    """RGB per plate for stresses [Pa]: ``PLATE_IDLE`` at zero, then from ``STRESS_COLORS[0]`` to
    ``STRESS_COLORS[1]`` as the stress rises to ``scale`` [Pa] (clipped)."""
    t = np.clip(stress / scale, 0.0, 1.0)[:, None]
    low, high = (np.asarray(c, float) for c in STRESS_COLORS)
    rgb = (1.0 - t) * low + t * high
    rgb[stress <= 0.0] = PLATE_IDLE
    return rgb


class SandLayer:
    """The plates and sand surfaces; the viewer supplies ``world``, ``_envs``, ``_offsets`` and ``_bounds``."""

    #: stress [Pa] at the top of the plates' colour map; None: the largest stress in the frame
    stress_scale = None

    def _plate_positions(self, env: int) -> np.ndarray:
        """World centroids [m] of every plate in ``env``, shape (n, 3)."""
        out = []
        for ps in self.world.plate_sets:
            if ps.link is None:
                pos, rot = ps.owner.get_position(env), ps.owner.get_rotation_matrix(env)
            else:
                pos, rot = ps.owner.get_frame_position(ps.link, env), ps.owner.get_frame_orientation(ps.link, env)
            out.append(pos + ps.centroids @ rot.T)
        return np.concatenate(out) if out else np.zeros((0, 3))

    def plate_arrays(self):
        """Points [m] (tile offsets applied) and RGB colours of the shown envs' plates, and the stress at the top
        of the colour map [Pa]."""
        sets = self.world.plate_sets
        if not sets:
            return np.zeros((0, 3)), np.zeros((0, 3)), 0.0
        areas = np.concatenate([ps.areas for ps in sets])
        pts, stresses = [], []
        for t, e in enumerate(self._envs):
            pts.append(self._plate_positions(e) + self._offsets[t])
            forces = self.world.get_plate_forces(e)["force"]
            stresses.append(np.linalg.norm(forces, axis=1) / areas)
        stress = np.concatenate(stresses)
        scale = self.stress_scale if self.stress_scale is not None else max(float(stress.max()), 1e-30)
        return np.concatenate(pts), stress_colors(stress, scale), scale

    def _sand_lines(self) -> np.ndarray:
        """Grid lines over each flat medium's surface, within its region and the scene's bounds, per shown env:
        segment end points [m], shape (2 k, 3)."""
        lo, hi = self._bounds
        size = max(float(np.max(hi - lo)), 0.5)
        step = SAND_GRID * size
        segments = []
        for medium in self.world.granular_media:
            if medium.height is None:  # (a height map's surface is drawn as terrain)
                continue
            margin = size + 0.5  # (room to walk on: the grid is drawn once)
            x0, x1 = max(medium.region[0], lo[0] - margin), min(medium.region[1], hi[0] + margin)
            y0, y1 = max(medium.region[2], lo[1] - margin), min(medium.region[3], hi[1] + margin)
            if x0 >= x1 or y0 >= y1:
                continue
            z = medium.height
            for x in np.arange(x0, x1 + 1e-9, step):
                segments.append(((x, y0, z), (x, y1, z)))
            for y in np.arange(y0, y1 + 1e-9, step):
                segments.append(((x0, y, z), (x1, y, z)))
        if not segments:
            return np.zeros((0, 3))
        seg = np.asarray(segments, float).reshape(-1, 3)
        return np.concatenate([seg + off for off in self._offsets])

    def _draw_sand(self, scene) -> None:
        if not self.world.granular_media and not self.world.plate_sets:
            return
        if getattr(self, "_sand_line_field", None) is None:
            lines = self._sand_lines()
            self._sand_line_count = len(lines)
            self._sand_line_field = _field(len(lines), lines)
        if self._sand_line_count:
            scene.lines(self._sand_line_field, 1.0, color=SAND_COLOR, vertex_count=self._sand_line_count)
        pts, rgb, _scale = self.plate_arrays()
        if not len(pts):
            return
        if getattr(self, "_plate_pts", None) is None or self._plate_pts.shape[0] != len(pts):
            self._plate_pts, self._plate_rgb = _field(len(pts)), _field(len(pts))
        self._plate_pts.from_numpy(pts.astype(np.float32))
        self._plate_rgb.from_numpy(rgb.astype(np.float32))
        spacing = float(np.sqrt(np.median(np.concatenate([ps.areas for ps in self.world.plate_sets]))))
        scene.particles(self._plate_pts, 0.6 * spacing, per_vertex_color=self._plate_rgb, index_count=len(pts))
