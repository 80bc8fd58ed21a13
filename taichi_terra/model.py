"""The static model shared by all envs: links, shapes, contact pairs, terrain, materials.

Built once by ``World.build()`` from the builder's Python descriptions into Taichi ndarrays (kernels
take ndarrays, so they compile once per process, not once per world). After the build the topology is
fixed; poses of static geometry and material properties may still change between steps.
"""
from __future__ import annotations

import numpy as np
import taichi as ti

from .backend import np_real, ti_real
from .bodies.shapes import ShapeType
from .kernels.common.layout import (B_MAT, B_NPL, B_NPT, B_PL0, B_PT0, B_QS, B_TYPE, B_US, F_INFL, F_MASS, F_RAD,
                             HM_SOIL0, P_BODY, P_CAP, P_KIND, P_OTHER, P_SLOT, PAIR_GROUND, PAIR_HEIGHTMAP, PAIR_SHAPES,
                             PAIR_SOIL,
                             ivec8)
from .validation import quat_to_matrix


#: extra contact slots per pair for height-map triangles and terrain samples under a shape
_HEIGHTMAP_EXTRA = {ShapeType.SPHERE: 8, ShapeType.CAPSULE: 24, ShapeType.BOX: 24, ShapeType.CYLINDER: 24,
                    ShapeType.MESH: 24}


def _ndarray(dtype, data: np.ndarray, element_dims: int):
    """An ndarray holding ``data``, whose last ``element_dims`` axes are the element (vector/matrix);
    an empty ``data`` gives a one-element placeholder (kernels never read it)."""
    shape = data.shape[: data.ndim - element_dims]
    if not data.size:
        return ti.ndarray(dtype, (1,) * max(len(shape), 1))
    arr = ti.ndarray(dtype, shape)
    arr.from_numpy(np.ascontiguousarray(data))
    return arr


def _collision_heights(hm) -> np.ndarray:
    """The samples the kernels collide with: a soil bed's undeformed surface (its sinkage is state), a static
    map's collision heights."""
    return hm.get_undeformed_heights() if getattr(hm, "is_soil", False) else hm.get_contact_heights()


def pair_capacity(kind: int, shape_a, shape_b=None, spacing=None) -> int:
    """Contact slots reserved for one pair (``spacing``: a soil bed's (dx, dy) [m])."""
    n_extra = 2 if shape_a.type == ShapeType.CYLINDER else 0
    if kind == PAIR_SOIL:  # one quadrature point per bed sample under the shape's bounding disc
        d = 2.0 * shape_a.bounding_radius
        return (int(d / spacing[0]) + 2) * (int(d / spacing[1]) + 2)
    if kind == PAIR_GROUND:
        return len(shape_a.points) + n_extra
    if kind == PAIR_HEIGHTMAP:
        return len(shape_a.points) + n_extra + _HEIGHTMAP_EXTRA[shape_a.type]
    n_extra_b = 2 if shape_b.type == ShapeType.CYLINDER else 0
    return len(shape_a.points) + n_extra + len(shape_b.points) + n_extra_b + 1


def shape_pair_limits(shapes, max_pairs=None, max_contacts=None) -> tuple[int, int]:
    """Size of the per-env shape-shape pair table and of the contact pool those pairs share.

    Defaults: thirteen pairs per body (in a packed pile of cubes each bounding sphere meets its 26
    neighbours', half of them counted per body), never more than the n (n - 1) / 2 pairs there are; and
    four contacts per pair (a pile of boxes uses about three), at least room for the largest pair."""
    n = len(shapes)
    all_pairs = n * (n - 1) // 2
    if max_pairs is None:
        max_pairs = min(all_pairs, 13 * n)
    if max_contacts is None:
        big = sorted(shapes, key=lambda sh: pair_capacity(PAIR_GROUND, sh), reverse=True)  # most sample points
        largest = pair_capacity(PAIR_SHAPES, big[0], big[1]) if n >= 2 else 0
        max_contacts = max(4 * max_pairs, largest) if max_pairs else 0
    return int(max_pairs), int(max_contacts)


class Model:
    """Static arrays; see ``kernels/layout.py`` for the packed column meanings."""

    def __init__(self, shapes, materials, body_materials, ground, heightmaps, max_shape_pairs=None,
                 max_shape_contacts=None):
        real = np_real()
        tr = ti_real()
        vec2, vec3, vec4, mat3 = (ti.types.vector(2, tr), ti.types.vector(3, tr), ti.types.vector(4, tr),
                                  ti.types.matrix(3, 3, tr))
        nb = len(shapes)
        self.n_bodies = nb
        self.nq = 7 * nb
        self.nv = 6 * nb
        # ---- links and shapes
        body_i = np.zeros((nb, 8), np.int32)
        body_f = np.zeros((nb, 8), real)
        pts, pls = [], []
        n_pts = n_pls = 0
        for b, sh in enumerate(shapes):
            body_i[b, B_TYPE] = int(sh.type)
            body_i[b, B_PT0], body_i[b, B_NPT] = n_pts, len(sh.points)
            body_i[b, B_PL0], body_i[b, B_NPL] = n_pls, len(sh.planes)
            body_i[b, B_QS], body_i[b, B_US] = 7 * b, 6 * b
            body_i[b, B_MAT] = body_materials[b]
            body_f[b, 0:4] = sh.params
            body_f[b, F_INFL], body_f[b, F_RAD], body_f[b, F_MASS] = sh.inflation, sh.bounding_radius, sh.mass
            pts.append(sh.points)
            pls.append(sh.planes)
            n_pts += len(sh.points)
            n_pls += len(sh.planes)
        self.body_i = _ndarray(ivec8, body_i, 1)
        self.body_f = _ndarray(ti.types.vector(8, tr), body_f, 1)
        inertia = np.array([sh.inertia for sh in shapes], real).reshape(nb, 3, 3)
        self.body_inertia = _ndarray(mat3, inertia, 2)
        self.points = _ndarray(vec3, np.concatenate(pts).astype(real) if pts else np.zeros((0, 3), real), 1)
        self.planes = _ndarray(vec4, np.concatenate(pls).astype(real) if n_pls else np.zeros((0, 4), real), 1)
        # ---- static contact pairs: each shape with the ground and each height map (shape-shape pairs are found
        #      per step by the broadphase and take their slots from a shared pool after the static slots)
        pairs = []
        for b, sh in enumerate(shapes):
            if ground is not None:
                pairs.append((PAIR_GROUND, b, -1, pair_capacity(PAIR_GROUND, sh)))
            for m, hm in enumerate(heightmaps):
                if getattr(hm, "is_soil", False):
                    spacing = (hm.x_size / (hm.x_samples - 1), hm.y_size / (hm.y_samples - 1))
                    pairs.append((PAIR_SOIL, b, m, pair_capacity(PAIR_SOIL, sh, spacing=spacing)))
                else:
                    pairs.append((PAIR_HEIGHTMAP, b, m, pair_capacity(PAIR_HEIGHTMAP, sh)))
        self.n_pairs = len(pairs)
        pair_i = np.zeros((max(len(pairs), 1), 8), np.int32)
        slot = 0
        for p, (kind, b, other, cap) in enumerate(pairs):
            pair_i[p, P_KIND], pair_i[p, P_BODY], pair_i[p, P_OTHER] = kind, b, other
            pair_i[p, P_SLOT], pair_i[p, P_CAP] = slot, cap
            slot += cap
        self.pool_start = slot
        self.max_shape_pairs, self.max_shape_contacts = shape_pair_limits(shapes, max_shape_pairs,
                                                                          max_shape_contacts)
        self.n_slots = slot + self.max_shape_contacts
        self.pairs = pairs
        self._pair_slots = [int(pair_i[p, P_SLOT]) for p in range(len(pairs))]
        self.pair_i = _ndarray(ivec8, pair_i, 1)
        # (friction, restitution): one row per static pair, then the table of every material pair
        self.n_materials = len(materials.names)
        self.pair_mat = ti.ndarray(vec2, (self.n_pairs + self.n_materials ** 2,))
        self.update_materials(materials, body_materials, ground, heightmaps)
        # ---- height maps (concatenated samples) and their poses
        nm = len(heightmaps)
        hm_int = np.zeros((max(nm, 1), 8), np.int32)
        hm_geom = np.zeros((max(nm, 1), HM_SOIL0 + 8), real)
        heights = []
        off = soil_off = soil_row = 0
        self.soil_row_offsets = []  # first soil-bed sample row of each map, for row revisions (-1: rigid map)
        self.soil_offsets = []  # first soil sample of each map (-1: rigid map)
        for m, hm in enumerate(heightmaps):
            n_samples = hm.x_samples * hm.y_samples
            is_soil = getattr(hm, "is_soil", False)
            hm_int[m, :5] = (off, hm.x_samples, hm.y_samples, soil_off if is_soil else -1,
                          soil_row if is_soil else -1)
            hm_geom[m, :HM_SOIL0] = (hm.x_size, hm.y_size, hm.center_x, hm.center_y)
            if is_soil:
                hm_geom[m, HM_SOIL0:] = hm.material.as_array()
            self.soil_offsets.append(soil_off if is_soil else -1)
            self.soil_row_offsets.append(soil_row if is_soil else -1)
            soil_row += hm.y_samples if is_soil else 0
            heights.append(_collision_heights(hm))
            off += n_samples
            soil_off += n_samples if is_soil else 0
        self.n_soil_samples = soil_off
        self.n_soil_rows = soil_row
        self.hm_int = _ndarray(ti.types.vector(8, ti.i32), hm_int, 1)
        self.hm_geom = _ndarray(ti.types.vector(HM_SOIL0 + 8, tr), hm_geom, 1)
        self.hm_heights = _ndarray(tr, np.concatenate(heights).astype(real) if heights else np.zeros(1, real), 0)
        # pose of each map frame: rows 0-2 the rotation (map to world), row 3 the origin [m]
        self.hm_frame = ti.ndarray(ti.types.matrix(4, 3, tr), (max(nm, 1),))
        self.update_heightmap_poses(heightmaps)

    def pair_slot(self, p: int) -> int:
        """First contact slot of pair ``p``."""
        return self._pair_slots[p]

    def update_materials(self, materials, body_materials, ground, heightmaps) -> None:
        """Refresh each pair's (friction, restitution) from the material table."""
        nm = self.n_materials
        mat = np.zeros((self.n_pairs + nm * nm, 2), np_real())
        for p, (kind, b, other, _cap) in enumerate(self.pairs):
            if kind == PAIR_GROUND:
                other_mat = materials.index(ground.material)
            else:
                other_mat = materials.index(heightmaps[other].material_name)
            mat[p] = materials.lookup(body_materials[b], other_mat)
        for i in range(nm):
            for j in range(nm):
                mat[self.n_pairs + i * nm + j] = materials.lookup(i, j)
        self.pair_mat.from_numpy(mat)

    def update_heightmap_data(self, heightmaps) -> None:
        """Rewrite the collision samples and grid geometry of every map (after ``HeightMap.update``)."""
        real = np_real()
        geom = self.hm_geom.to_numpy()
        heights = []
        for m, hm in enumerate(heightmaps):
            geom[m, :HM_SOIL0] = (hm.x_size, hm.y_size, hm.center_x, hm.center_y)
            heights.append(_collision_heights(hm))
        self.hm_geom.from_numpy(geom)
        if heights:
            self.hm_heights.from_numpy(np.concatenate(heights).astype(real))

    def update_heightmap_poses(self, heightmaps) -> None:
        nm = max(len(heightmaps), 1)
        pos = np.zeros((nm, 3), np_real())
        rot = np.tile(np.eye(3), (nm, 1, 1)).astype(np_real())
        for m, hm in enumerate(heightmaps):
            pos[m] = hm.get_position()
            rot[m] = quat_to_matrix(hm.get_orientation())
        self.hm_frame.from_numpy(np.ascontiguousarray(np.concatenate([rot, pos[:, None, :]], axis=1)))
