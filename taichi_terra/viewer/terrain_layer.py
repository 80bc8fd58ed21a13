"""The viewer's terrain: every height map and soil bed as one triangle mesh per shown env, with per-vertex
colour, rewritten row by row as the maps' height revisions move on (mixed into :class:`Viewer`)."""
from __future__ import annotations

import numpy as np

COLOR_MODES = ("base", "sinkage", "plastic_sinkage")


def _field(n: int, data: np.ndarray | None = None):
    import taichi as ti

    f = ti.Vector.field(3, ti.f32, max(n, 1))
    if data is not None and len(data):
        f.from_numpy(np.ascontiguousarray(data, dtype=np.float32))
    return f


def _index_field(indices: np.ndarray):
    import taichi as ti

    f = ti.field(ti.i32, max(indices.size, 3))
    if indices.size:
        f.from_numpy(np.ascontiguousarray(indices.reshape(-1), dtype=np.int32))
    return f


class TerrainLayer:
    """Building and updating the terrain mesh; the viewer supplies ``world``, ``_envs``, ``_offsets``,
    ``stats`` and the colouring settings."""

    def _build_terrain(self) -> None:
        import taichi as ti

        from ..backend import ti_real

        self._maps = []
        nt = len(self._envs)
        v0 = 0
        for hm in self.world.heightmaps:
            nx, ny = hm.x_samples, hm.y_samples
            # (a map with heights per env: one array per tile; else one that every tile draws)
            heights = [ti.ndarray(ti_real(), (nx * ny,)) for _t in range(nt if hm.per_env else 1)]
            colors = ti.ndarray(ti.types.vector(3, ti.f32), (nx * ny,))
            colors.from_numpy(hm.get_colors().astype(np.float32))
            entry = {"hm": hm, "nx": nx, "ny": ny, "heights": heights, "colors": colors, "v0": v0,
                     "color_rev": hm._color_rev,
                     "soil0": self.world._state.soil_base(self.world._model.soil_offsets[hm.index]), "pose": None,
                     "drawn": np.full((nt, ny), -1, np.int64), "heights_rev": None,
                     "finite": [None] * len(heights), "loaded": np.full(len(heights), -1, np.int64)}
            for k in range(len(heights)):
                self._load_heights(entry, k)
            self._maps.append(entry)
            v0 += nx * ny * nt
        self._n_terrain_verts = v0
        self._t_verts, self._t_normals, self._t_colors = _field(v0), _field(v0), _field(v0)
        self._build_terrain_indices()

    def _load_heights(self, entry, k: int) -> None:
        """Upload a map's drawn heights into its array ``k`` (tile ``k`` of a map with heights per env, else
        the one array): a bed's undeformed surface (its sinkage comes from the soil state), a static map's
        visual heights."""
        from ..backend import np_real

        hm = entry["hm"]
        e = self._envs[k] if hm.per_env else 0
        h = hm.get_undeformed_heights(e) if hm.is_soil else hm.get_surface_heights(e)
        entry["heights"][k].from_numpy(h.astype(np_real()))
        entry["finite"][k] = np.isfinite(h)
        entry["loaded"][k] = hm._heights_rev[e]
        if not hm.is_soil and not hm.per_env:
            entry["heights_rev"] = hm.get_height_row_revisions(0)

    def _build_terrain_indices(self) -> None:
        """Two triangles per cell, split along the (x, y)-(x+1, y+1) diagonal like the collision surface;
        cells touching a non-finite sample are holes and get no triangles."""
        parts = []
        for entry in self._maps:
            nx, ny = entry["nx"], entry["ny"]
            ix, iy = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
            a = (iy * nx + ix).reshape(-1)
            b, c, d = a + 1, a + nx + 1, a + nx
            for t in range(len(self._envs)):
                ok = entry["finite"][t if len(entry["finite"]) > 1 else 0].reshape(ny, nx)
                t1 = (ok[:-1, :-1] & ok[:-1, 1:] & ok[1:, 1:]).reshape(-1)
                t2 = (ok[:-1, :-1] & ok[1:, 1:] & ok[1:, :-1]).reshape(-1)
                tri = np.concatenate([np.stack([a, b, c], 1)[t1], np.stack([a, c, d], 1)[t2]])
                parts.append(tri + entry["v0"] + t * nx * ny)
        idx = np.concatenate(parts).astype(np.int32) if parts else np.zeros((0, 3), np.int32)
        self._n_terrain_idx = idx.size
        self._t_idx = _index_field(idx)

    def _update_terrain(self) -> None:
        import taichi as ti

        from ..kernels.render.meshes import COLOR_BASE, terrain_rows

        settings = (self.color_by, self.color_range, self.rut_color, self.sinkage_scale)
        redraw_all = settings != self._drawn_settings
        self._drawn_settings = settings
        mode = COLOR_MODES.index(self.color_by)
        rebuild_indices = False
        for entry in self._maps:
            hm = entry["hm"]
            nx, ny = entry["nx"], entry["ny"]
            revs = hm.get_height_row_revisions(None)
            reload = [k for k in range(len(entry["heights"]))  # (heights set anew in a tile's env)
                      if entry["loaded"][k] != hm._heights_rev[self._envs[k] if hm.per_env else 0]]
            if not hm.is_soil and not hm.per_env and not np.array_equal(revs[0], entry["heights_rev"]):
                reload = [0]  # an edited static map: new visual heights (and maybe holes)
            for k in reload:
                finite = entry["finite"][k]
                self._load_heights(entry, k)
                rebuild_indices |= not np.array_equal(finite, entry["finite"][k])
            pose = np.vstack([hm.get_rotation_matrix(), hm.get_position()[None]]).astype(np.float32)
            moved = entry["pose"] is None or not np.array_equal(pose, entry["pose"])
            if hm._color_rev != entry["color_rev"]:  # new base colours: upload them and redraw the map
                entry["color_rev"] = hm._color_rev
                entry["colors"].from_numpy(hm.get_colors().astype(np.float32))
                moved = True
            if moved:
                entry["pose"] = pose
                entry["frame"] = ti.ndarray(ti.f32, (4, 3))
                entry["frame"].from_numpy(pose)
            dx, dy = hm.x_size / (nx - 1), hm.y_size / (ny - 1)
            x0, y0 = hm.center_x - 0.5 * hm.x_size, hm.center_y - 0.5 * hm.y_size
            for t, e in enumerate(self._envs):
                if redraw_all or moved:
                    rows = np.arange(ny)
                else:  # the changed rows, and their neighbours, whose normals they enter
                    changed = revs[e] != entry["drawn"][t]
                    changed[1:] |= changed[:-1].copy()
                    changed[:-1] |= changed[1:].copy()
                    rows = np.nonzero(changed)[0]
                if not rows.size:
                    continue
                rows_nd = ti.ndarray(ti.i32, (rows.size,))
                rows_nd.from_numpy(rows.astype(np.int32))
                terrain_rows(rows_nd, entry["heights"][t if hm.per_env else 0], entry["colors"],
                             self.world._state.state_f,
                             entry["soil0"], e, nx, ny, x0, y0, dx, dy, entry["frame"],
                             ti.Vector(self._offsets[t].tolist(), ti.f32), self.sinkage_scale,
                             mode if hm.is_soil else COLOR_BASE, self.color_range, ti.Vector(self.rut_color, ti.f32),
                             entry["v0"] + t * nx * ny, self._t_verts, self._t_normals, self._t_colors)
                entry["drawn"][t] = revs[e]
                self.stats["terrain_rows_written"] += int(rows.size)
        if rebuild_indices:
            self._build_terrain_indices()
