"""The static model shared by all envs: links, shapes, contact pairs, terrain, materials, settings.

Built once by ``World.build()`` from the builder's Python descriptions into the model arrays declared in
``kernels/common/arrays.py`` (kernels take ndarrays, so they compile once per process, not once per world).
After the build the topology is fixed; poses of static geometry, material properties and settings may still
change between steps. The model also fixes where every block of the per-env arrays lies (``layouts``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import taichi as ti

from .backend import np_real, ti_real
from .bodies.shapes import ShapeType
from .kernels.common import arrays as A
from .kernels.common.layout import SHAPE_PAIR_ROOM, JOINT_FIXED_ROOT, JOINT_FLOATING, PAIR_GROUND, PAIR_HEIGHTMAP, PAIR_SHAPES, PAIR_SOIL
from .validation import quat_to_matrix

#: extra contact slots per pair for height-map triangles and terrain samples under a shape
_HEIGHTMAP_EXTRA = {ShapeType.SPHERE: 8, ShapeType.CAPSULE: 24, ShapeType.BOX: 24, ShapeType.CYLINDER: 24,
                    ShapeType.MESH: 24}


def _collision_heights(hm) -> np.ndarray:
    """The samples the kernels collide with, flat: a soil bed's undeformed surface (its sinkage is state), a
    static map's collision heights; a map with heights per env holds every env's, env after env."""
    h = hm.get_undeformed_heights() if getattr(hm, "is_soil", False) else hm.get_contact_heights()
    return h.reshape(-1)


def pair_capacity(kind: int, shape_a, shape_b=None, spacing=None) -> int:
    """Contact slots reserved for one pair (``spacing``: a soil bed's (dx, dy) [m])."""
    n_extra = 2 if shape_a.type == ShapeType.CYLINDER else 0
    if kind == PAIR_SOIL:  # one quadrature point per bed sample under the shape's bounding disc
        return soil_pair_span(shape_a, spacing[0]) * soil_pair_span(shape_a, spacing[1])
    if kind == PAIR_GROUND:
        return len(shape_a.points) + n_extra
    if kind == PAIR_HEIGHTMAP:
        return len(shape_a.points) + n_extra + _HEIGHTMAP_EXTRA[shape_a.type]
    n_extra_b = 2 if shape_b.type == ShapeType.CYLINDER else 0
    return len(shape_a.points) + n_extra + len(shape_b.points) + n_extra_b + 1


def medium_row(medium) -> np.ndarray:
    """A granular medium's row of the ``medium`` block (``kernels/common/arrays.py`` MEDIUM_F)."""
    out = np.zeros(A.MEDIUM_F.stride)
    out[A.MEDIUM_F.zeta], out[A.MEDIUM_F.smoothing] = medium.zeta, medium.smoothing
    out[A.MEDIUM_F.height] = 0.0 if medium.height is None else medium.height
    out[A.MEDIUM_F.region:A.MEDIUM_F.region + 4] = medium.region
    out[A.MEDIUM_F.coefficients:A.MEDIUM_F.coefficients + 9] = medium.coefficients
    return out


def soil_pair_span(shape, spacing: float) -> int:
    """How many bed samples at ``spacing`` [m] along one axis a shape's soil quadrature may visit at most:
    those within its bounding radius plus half a spacing of its centre."""
    return int(2.0 * shape.bounding_radius / spacing) + 2


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


def _shape_pairs_possible(n_free: int, link_bodies, trees) -> bool:
    """Whether any two bodies may ever collide: two free bodies, a free body and a link, links of two trees,
    or links of one tree with self-collision on (conservatively: whenever it has shapes on two links)."""
    if n_free >= 2 or (n_free and link_bodies):
        return True
    links = {}
    for lb in link_bodies:
        links.setdefault(lb[0], set()).add(lb[1])
    return len(links) >= 2 or any(trees[t].self_collision and len(ls) >= 2 for t, ls in links.items())


def _dof_structure(rows, nv: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``DOF_I`` columns of one tree from its joint rows (root first, parents before children): each
    dof's subtree end, the first dof of its run of consecutive ancestors and the dof before that run.

    A floating root's six dofs are a chain (each the parent of the next); every other joint has one dof, whose
    parent is the last dof of the nearest ancestor joint that has dofs (-1 under a fixed root). The factor's
    sparsity (``dynamics/tree_solve.py``) needs each subtree's dofs to be consecutive (a depth-first order, as
    the URDF reader makes): a tree whose rows break this is refused."""
    parent = np.full(nv, -1, np.int64)
    last = []  # per joint row: its last dof, or its nearest ancestor's with dofs (-1: none)
    for k, r in enumerate(rows):
        above = -1 if r["parent"] < 0 else last[r["parent"]]
        n = 6 if r["type"] == JOINT_FLOATING else (0 if r["type"] == JOINT_FIXED_ROOT else 1)
        for i in range(n):
            parent[r["dof"] + i] = above if i == 0 else r["dof"] + i - 1
        last.append(r["dof"] + n - 1 if n else above)
    end = np.arange(1, nv + 1)
    for d in range(nv - 1, -1, -1):  # (children after parents: a dof's end is final when reached)
        if parent[d] >= 0:
            end[parent[d]] = max(end[parent[d]], end[d])
    size = np.ones(nv, np.int64)
    for d in range(nv - 1, -1, -1):
        if parent[d] >= 0:
            size[parent[d]] += size[d]
    if np.any(end - np.arange(nv) != size):
        raise ValueError("articulated tree: a subtree's dofs are not consecutive (the joints must be in "
                         "depth-first order)")
    run = np.arange(nv)
    for d in range(1, nv):
        if parent[d] == d - 1:
            run[d] = run[d - 1]
    up = parent[run]
    return end, run, up


@dataclass(frozen=True)
class ModelParts:
    """What a world holds, as :class:`Model` is built from it. ``shapes`` and ``body_materials`` (material
    indices): the free bodies'; ``materials``: the world's material table; ``ground``: the ground plane or None;
    ``heightmaps``: height maps and soil beds in the world's order; ``max_shape_pairs`` and
    ``max_shape_contacts``: the shape-shape pool's limits (None: from the shapes); ``trees``: the articulated
    systems; ``link_bodies``: the shapes on tree links as ``(tree index, link index, Shape, position, rotation,
    material index, track index)`` (track -1: not a belt), placed after the free bodies; ``pins``:
    :class:`~taichi_terra.bodies.pin.Pin` objects; ``tracks``: ``(tree index, link index, drive dofs within the
    tree, gains, width)`` per track; ``plates``: ``(carrier, centroids, normals, areas)`` per plate set, its
    carrier a free body's index or ``(tree index, link index)``, in the order of their plates; ``media``:
    ``(GranularMedium, map index or -1)`` per medium."""
    shapes: Sequence
    materials: object
    body_materials: Sequence
    ground: object
    heightmaps: Sequence
    max_shape_pairs: int | None = None
    max_shape_contacts: int | None = None
    trees: Sequence = ()
    link_bodies: Sequence = ()
    pins: Sequence = ()
    tracks: Sequence = ()
    plates: Sequence = ()
    media: Sequence = ()


class Model:
    """The model arrays (``model_i``, ``model_f``, ``heights``; declared in ``kernels/common/arrays.py``) and
    the layouts of every array of the world: the row count of each block follows from the scene."""

    def __init__(self, parts: ModelParts):
        """The model of the world whose contents ``parts`` lists (:class:`ModelParts`)."""
        (shapes, materials, body_materials, ground, heightmaps, max_shape_pairs, max_shape_contacts, trees,
         link_bodies, pins, tracks, plates, media) = (
            parts.shapes, parts.materials, parts.body_materials, parts.ground, parts.heightmaps,
            parts.max_shape_pairs, parts.max_shape_contacts, parts.trees, parts.link_bodies, parts.pins,
            parts.tracks, parts.plates, parts.media)
        self.real = np_real()
        n_free = len(shapes)
        self.n_free = n_free
        shapes = list(shapes) + [lb[2] for lb in link_bodies]
        body_materials = list(body_materials) + [lb[5] for lb in link_bodies]
        self.body_materials = body_materials
        #: body index -> (tree index, link index) of the bodies on tree links
        self.body_link_index = {n_free + k: (lb[0], lb[1]) for k, lb in enumerate(link_bodies)}
        #: body index -> (system index, link name), filled by the world
        self.body_links: dict = {}
        nb = len(shapes)
        # ---- articulated trees: each tree's rows in the joint blocks, its coordinates and velocities
        tree_rows = [t.joint_rows() for t in trees]
        self.n_trees = len(trees)
        self.tree_q0 = list(np.cumsum([0] + [t.get_generalized_coordinate_dim() for t in trees])[:-1].astype(int))
        self.tree_u0 = list(np.cumsum([0] + [t.get_dof() for t in trees])[:-1].astype(int))
        self.tree_joint0 = list(np.cumsum([0] + [len(r) for r in tree_rows])[:-1].astype(int))
        self.n_joints = sum(len(r) for r in tree_rows)  # (tree joint rows: one per link)
        self.tree_matrix0 = list(np.cumsum([0] + [t.get_dof() ** 2 for t in trees])[:-1].astype(int))
        n_joints = self.n_joints
        n_tree_q = sum(t.get_generalized_coordinate_dim() for t in trees)
        n_tree_u = sum(t.get_dof() for t in trees)
        self.n_pins = len(pins)
        # a pin within one tree (or holding one to the world) keeps its tree's response to it for the step
        # (solver/pins.py): three columns of nv rows
        pin_response0, n_pin_response = [], 0
        #: per tree, its pins with response columns (solver/pin_block.py), and each pin's index among them
        self.tree_loop_pins = [0] * len(trees)
        self.pin_local = []
        for pin in pins:
            sa, _la, sb, _lb = pin.rows()
            within = sb < 0 or sb == sa
            pin_response0.append(n_pin_response if within else -1)
            n_pin_response += 3 * trees[sa].get_dof() if within else 0
            self.pin_local.append(self.tree_loop_pins[sa] if within else -1)
            self.tree_loop_pins[sa] += int(within)
        self.tree_pin_matrix0 = list(np.cumsum([0] + [(3 * n) ** 2 for n in self.tree_loop_pins])[:-1].astype(int))
        self.tree_pin_vector0 = list(np.cumsum([0] + [3 * n for n in self.tree_loop_pins])[:-1].astype(int))
        self.n_tracks = len(tracks)
        n_solver_rows = 2 * n_joints + self.n_pins  # beyond the contact slots: joint limits, friction, pins
        self.n_plates = int(sum(len(p[3]) for p in plates))
        self.n_media = len(media)
        self.n_plate_carriers = n_free + n_joints if plates else 0
        self.n_bodies = nb
        self.nq = A.Q_FREE.stride * n_free
        self.nv = A.U_FREE.stride * n_free
        self.ground = ground
        # ---- static contact pairs: each shape with the ground and each height map (shape-shape pairs are found
        #      per step by the broadphase and take their slots from a shared pool after the static slots)
        pairs = []
        #: the ``quad_row`` entries of each static pair: a soil pair's footprint rows at most (0: no soil pair)
        self.soil_quad_rows = 0
        sand_maps = {m for _medium, m in media if m >= 0}
        welded = {n_free + k for k, lb in enumerate(link_bodies) if lb[1] == 0 and trees[lb[0]].model.base == "fixed"}
        for b, sh in enumerate(shapes):
            if b in welded:  # a fixed base's root link does not move: no pairs with static geometry
                continue
            if ground is not None:
                pairs.append((PAIR_GROUND, b, -1, pair_capacity(PAIR_GROUND, sh)))
            for m, hm in enumerate(heightmaps):
                if m in sand_maps:  # a granular medium's surface: its plates feel it, shapes pass through
                    continue
                if getattr(hm, "is_soil", False):
                    spacing = (hm.x_size / (hm.x_samples - 1), hm.y_size / (hm.y_samples - 1))
                    pairs.append((PAIR_SOIL, b, m, pair_capacity(PAIR_SOIL, sh, spacing=spacing)))
                    self.soil_quad_rows = max(self.soil_quad_rows, soil_pair_span(sh, spacing[1]))
                else:
                    pairs.append((PAIR_HEIGHTMAP, b, m, pair_capacity(PAIR_HEIGHTMAP, sh)))
        self.pairs = pairs
        self.n_pairs = len(pairs)
        self._pair_slots = list(np.cumsum([0] + [cap for *_x, cap in pairs])[:-1].astype(int))
        self.pool_start = int(sum(cap for *_x, cap in pairs))
        #: whether any two bodies may touch (else the step skips the broadphase and the default table is empty)
        self.broadphase = _shape_pairs_possible(n_free, link_bodies, trees)
        if max_shape_pairs is None and not self.broadphase:
            max_shape_pairs = 0
        self.max_shape_pairs, self.max_shape_contacts = shape_pair_limits(shapes, max_shape_pairs,
                                                                          max_shape_contacts)
        self.n_slots = self.pool_start + self.max_shape_contacts
        #: rows of the found_point blocks (kernels/common/arrays.py FOUND_F): one per static slot, then
        #: SHAPE_PAIR_ROOM per shape pair, where any are found apart
        self.n_found = ((self.pool_start if self.soil_quad_rows or self.max_shape_pairs else 0)
                        + SHAPE_PAIR_ROOM * self.max_shape_pairs)
        self.n_materials = len(materials.names)
        # ---- height maps: samples concatenated; soil beds also number their samples and sample rows
        self.soil_offsets, self.soil_row_offsets = [], []  # per map: first soil sample / sample row (-1: rigid)
        n_samples = n_soil = n_soil_rows = 0
        sample0 = self.map_sample0 = []  # per map: its first sample in ``heights``
        for hm in heightmaps:
            is_soil = getattr(hm, "is_soil", False)
            sample0.append(n_samples)
            self.soil_offsets.append(n_soil if is_soil else -1)
            self.soil_row_offsets.append(n_soil_rows if is_soil else -1)
            n_samples += _collision_heights(hm).size  # (every env's, for a map with heights per env)
            n_soil += hm.x_samples * hm.y_samples if is_soil else 0
            n_soil_rows += hm.y_samples if is_soil else 0
        self.n_soil_samples, self.n_soil_rows = n_soil, n_soil_rows
        n_points = sum(len(sh.points) for sh in shapes)
        n_planes = sum(len(sh.planes) for sh in shapes)
        # ---- the layout of every array: row counts per block
        n_pair_rows = self.n_pairs + self.max_shape_pairs
        rows = {
            "model_i": {"offsets": 1, "settings_i": 1, "body": nb, "pair": self.n_pairs, "map": len(heightmaps),
                        "tree": self.n_trees, "joint": n_joints, "dof": n_tree_u, "pin": self.n_pins,
                        "track": self.n_tracks, "plate": self.n_plates, "plate_range": self.n_plate_carriers,
                        "medium": self.n_media},
            "model_f": {"settings_f": 1, "body": nb, "inertia": nb, "point": n_points, "plane": n_planes,
                        "map": len(heightmaps),
                        "joint": n_joints, "pin": self.n_pins, "track": self.n_tracks, "plate": self.n_plates},
            "heights": {"sample": n_samples},
            "q": {"free_body": n_free, "tree": n_tree_q}, "u": {"free_body": n_free, "tree": n_tree_u},
            "state_f": {"contact": self.n_slots, "soil": n_soil, "pin": self.n_pins, "joint_state": n_joints,
                        "plate_state": self.n_plates},
            "state_i": {"env": 1, "pair_count": n_pair_rows, "feature": self.n_slots, "sweep_order": nb,
                        "shape_pair": self.max_shape_pairs, "prev_shape_pair": self.max_shape_pairs,
                        "soil_span": n_soil_rows},
            "control": {"body_load": nb, "drive": n_tree_u, "gravity": 1, "mass_scale": n_free + n_joints,
                        "pair_material": self.n_pairs + self.n_materials ** 2, "soil_material": len(heightmaps),
                        "medium": self.n_media},
            "scratch_f": {"link": nb, "reach": nb, "row": self.n_slots + n_solver_rows, "frame": n_joints,
                          "link_dyn": n_joints,
                          "tree_mass": sum(t.get_dof() ** 2 for t in trees),
                          "tree_factor": sum(t.get_dof() ** 2 for t in trees),
                          "tree_inverse": sum(t.get_dof() ** 2 for t in trees), "tree_dof": n_tree_u,
                          "link_response": sum(len(r) * t.get_dof() for t, r in zip(trees, tree_rows)),
                          "block_matrix": A.BLOCK_ROWS ** 2 if trees else 0,
                          "block_vector": A.BLOCK_ROWS if trees else 0,
                          "block_system": A.BLOCK_UNKNOWNS ** 2 if trees else 0,
                          "block_unknown": A.BLOCK_UNKNOWNS if trees else 0, "pin_response": n_pin_response,
                          "pin_matrix": sum((3 * n) ** 2 for n in self.tree_loop_pins),
                          "pin_vector": 3 * sum(self.tree_loop_pins),
                          "track_dyn": self.n_tracks,
                          "soil_group": A.SOIL_GROUP_LINKS if trees and n_soil else 0,
                          "soil_group_matrix": (6 * A.SOIL_GROUP_LINKS) ** 2 if trees and n_soil else 0,
                          "soil_group_vector": 6 * A.SOIL_GROUP_LINKS if trees and n_soil else 0,
                          "plate_out": self.n_plates, "plate_load": self.n_plate_carriers,
                          "sand": self.n_plate_carriers, "u_seen": max(6 * n_free + n_tree_u, 1),
                          "sweep_state": 1, "found_point": self.n_found},
            "scratch_i": {"row": self.n_slots + n_solver_rows, "sweep": nb,
                          "soil_claim": n_soil if trees else 0, "tree_step": self.n_trees,
                          "block": A.BLOCK_ROWS if trees else 0, "block_state": 1,
                          "soil_group": A.SOIL_GROUP_BLOCKS if trees and n_soil else 0, "soil_group_state": 1,
                          "launch": 1, "stage": 1, "found_point": self.n_found,
                          "quad_row": self.n_pairs * self.soil_quad_rows},
            "soil_rev": {"row_revision": n_soil_rows},
        }
        self.layouts = {a.name: a.layout(rows[a.name]) for a in A.ARENAS}
        # ---- model_i
        li = self.layouts["model_i"]
        self.data_i = li.empty(self.real)
        offsets = li.view(self.data_i, "offsets")[0]
        for arena in A.ARENAS:
            for block in arena.blocks:
                if block is not A.OFFSETS:
                    offsets[A.offset_column(arena, block)] = self.layouts[arena.name].offsets[block.name]
        body = li.view(self.data_i, "body")
        n_pts = n_pls = 0
        for b, sh in enumerate(shapes):
            body[b, A.BODY_I.shape] = int(sh.type)
            body[b, A.BODY_I.point0], body[b, A.BODY_I.n_points] = n_pts, len(sh.points)
            body[b, A.BODY_I.plane0], body[b, A.BODY_I.n_planes] = n_pls, len(sh.planes)
            if b < n_free:
                body[b, A.BODY_I.q0], body[b, A.BODY_I.u0] = A.Q_FREE.stride * b, A.U_FREE.stride * b
                body[b, A.BODY_I.joint] = -1
            else:
                tree, link = link_bodies[b - n_free][:2]
                body[b, A.BODY_I.q0] = body[b, A.BODY_I.u0] = -1
                body[b, A.BODY_I.joint] = self.tree_joint0[tree] + link
            body[b, A.BODY_I.track] = link_bodies[b - n_free][6] if b >= n_free else -1
            body[b, A.BODY_I.material] = body_materials[b]
            n_pts += len(sh.points)
            n_pls += len(sh.planes)
        pair = li.view(self.data_i, "pair")
        for p, (kind, b, other, cap) in enumerate(pairs):
            pair[p, [A.PAIR.kind, A.PAIR.body, A.PAIR.other, A.PAIR.slot0, A.PAIR.capacity]] = (
                kind, b, other, self._pair_slots[p], cap)
        hmap = li.view(self.data_i, "map")
        for m, hm in enumerate(heightmaps):
            hmap[m, [A.MAP_I.sample0, A.MAP_I.nx, A.MAP_I.ny, A.MAP_I.soil0, A.MAP_I.soil_row0,
                     A.MAP_I.env_stride]] = (sample0[m], hm.x_samples, hm.y_samples, self.soil_offsets[m],
                                             self.soil_row_offsets[m], hm.x_samples * hm.y_samples * hm.per_env)
        settings = li.view(self.data_i, "settings_i")[0]
        for col, value in (("n_static_pairs", self.n_pairs), ("pool0", self.pool_start),
                           ("n_materials", self.n_materials), ("n_soil_samples", n_soil), ("n_bodies", nb),
                           ("n_maps", len(heightmaps)), ("max_shape_pairs", self.max_shape_pairs),
                           ("n_slots", self.n_slots), ("n_trees", self.n_trees), ("n_free_bodies", n_free),
                           ("n_pins", self.n_pins), ("broadphase", int(self.broadphase)),
                           ("n_tracks", self.n_tracks), ("n_plates", self.n_plates), ("n_media", self.n_media),
                           ("n_plate_carriers", self.n_plate_carriers), ("soil_quad_rows", self.soil_quad_rows)):
            settings[getattr(A.SETTINGS_I, col)] = value
        self._pack_trees(li, trees, tree_rows)
        pin_i = li.view(self.data_i, "pin")
        for k, pin in enumerate(pins):
            sa, la, sb, lb = pin.rows()
            pin_i[k, A.PIN_I.joint_a] = self.tree_joint0[sa] + la
            pin_i[k, A.PIN_I.joint_b] = -1 if sb < 0 else self.tree_joint0[sb] + lb
            pin_i[k, A.PIN_I.response0] = pin_response0[k]
            pin_i[k, A.PIN_I.local] = self.pin_local[k]
        track_i = li.view(self.data_i, "track")
        for k, (tree, link, dofs, gains, width) in enumerate(tracks):
            assert 1 <= len(dofs) <= A.TRACK_DRIVES  # (the URDF loader's rule, bodies/tracks.py)
            padded = list(dofs) + [dofs[-1]] * (A.TRACK_DRIVES - len(dofs))
            track_i[k, A.TRACK_I.tree], track_i[k, A.TRACK_I.joint] = tree, self.tree_joint0[tree] + link
            track_i[k, A.TRACK_I.n_drives] = len(dofs)
            track_i[k, A.TRACK_I.dof:A.TRACK_I.dof + A.TRACK_DRIVES] = padded
        # ---- model_f
        lf = self.layouts["model_f"]
        self.data_f = lf.empty(self.real)
        body = lf.view(self.data_f, "body")
        for b, sh in enumerate(shapes):
            body[b, A.BODY_F.params:A.BODY_F.params + 4] = sh.params
            body[b, A.BODY_F.inflation], body[b, A.BODY_F.radius] = sh.inflation, sh.bounding_radius
            body[b, A.BODY_F.mass] = sh.mass
            offset, rotation = (np.zeros(3), np.eye(3)) if b < n_free else link_bodies[b - n_free][3:5]
            body[b, A.BODY_F.offset:A.BODY_F.offset + 3] = offset
            body[b, A.BODY_F.offset_rotation:A.BODY_F.offset_rotation + 9] = np.asarray(rotation).reshape(9)
            lf.view(self.data_f, "inertia")[b] = np.asarray(sh.inertia, np.float64).reshape(9)
        if n_points:
            lf.view(self.data_f, "point")[...] = np.concatenate([sh.points for sh in shapes])
        if n_planes:
            lf.view(self.data_f, "plane")[...] = np.concatenate([sh.planes for sh in shapes if len(sh.planes)])
        self._pack_joints_f(lf)
        pin_f = lf.view(self.data_f, "pin")
        for k, pin in enumerate(pins):
            pin_f[k, A.PIN_F.point_a:A.PIN_F.point_a + 3] = pin.point_a
            pin_f[k, A.PIN_F.point_b:A.PIN_F.point_b + 3] = pin.point_b
        track_f = lf.view(self.data_f, "track")
        for k, (_tree, _link, dofs, gains, width) in enumerate(tracks):
            track_f[k, A.TRACK_F.gain:A.TRACK_F.gain + len(gains)] = gains
            track_f[k, A.TRACK_F.width] = width
        self._pack_plates(li, lf, plates, media, n_free)
        # ---- the arrays
        self.model_i = self._ndarray(A.MODEL_I, self.data_i)
        self.model_f = self._ndarray(A.MODEL_F, self.data_f)
        self.heights = self._ndarray(A.HEIGHTS, self.layouts["heights"].empty(self.real))
        self.update_heightmap_data(heightmaps, upload=False)
        self.update_heightmap_poses(heightmaps, upload=False)
        self._settings_key = None
        self.model_i.from_numpy(self.data_i)
        self.model_f.from_numpy(self.data_f)

    def _pack_trees(self, li, trees, tree_rows) -> None:
        """The tree and joint blocks (``model_i``) of every articulated tree; the float joint block is packed
        with ``model_f``."""
        tree = li.view(self.data_i, "tree")
        joint = li.view(self.data_i, "joint")
        dof = li.view(self.data_i, "dof")
        response0 = 0
        for t, (system, rows) in enumerate(zip(trees, tree_rows)):
            j0, q0, u0 = self.tree_joint0[t], self.tree_q0[t], self.tree_u0[t]
            tree[t, [A.TREE.joint0, A.TREE.n_joints, A.TREE.q0, A.TREE.u0, A.TREE.nv, A.TREE.matrix0,
                     A.TREE.inverse_dynamics, A.TREE.self_collision, A.TREE.loop_pins, A.TREE.pin_matrix0,
                     A.TREE.pin_vector0]] = (
                j0, len(rows), q0, u0, system.get_dof(), self.tree_matrix0[t], int(system.computes_inverse_dynamics),
                int(system.self_collision), self.tree_loop_pins[t], self.tree_pin_matrix0[t],
                self.tree_pin_vector0[t])
            for k, r in enumerate(rows):
                joint[j0 + k, [A.JOINT_I.tree, A.JOINT_I.parent, A.JOINT_I.type, A.JOINT_I.q, A.JOINT_I.u,
                               A.JOINT_I.dof, A.JOINT_I.response0]] = (
                    t, -1 if r["parent"] < 0 else j0 + r["parent"], r["type"], q0 + r["q"], u0 + r["u"], r["dof"],
                    response0)
                response0 += system.get_dof()
            for col, values in zip((A.DOF_I.end, A.DOF_I.run, A.DOF_I.up), _dof_structure(rows, system.get_dof())):
                dof[u0:u0 + system.get_dof(), col] = values
        self._tree_rows = tree_rows

    def set_inverse_dynamics(self, tree: int, on: bool) -> None:
        """Turn the transmitted-wrench stage on or off for one tree (uploads ``model_i``)."""
        li = self.layouts["model_i"]
        li.view(self.data_i, "tree")[tree, A.TREE.inverse_dynamics] = int(on)
        self.model_i.from_numpy(self.data_i)

    def _pack_joints_f(self, lf) -> None:
        joint = lf.view(self.data_f, "joint")
        k = 0
        for rows in self._tree_rows:
            for r in rows:
                link, j = r["link"], r["joint"]
                values = {"origin": r["origin"], "origin_rotation": np.asarray(r["origin_rotation"]).reshape(9),
                          "axis": r["axis"], "mass": link.mass, "com": link.com,
                          "inertia": np.asarray(link.inertia).reshape(9),
                          "armature": 0.0 if j is None else j.rotor_inertia,
                          "damping": 0.0 if j is None else j.damping, "friction": 0.0 if j is None else j.friction,
                          "lower": -np.inf if j is None or j.lower is None else j.lower,
                          "upper": np.inf if j is None or j.upper is None else j.upper,
                          "velocity_limit": np.inf if j is None or j.velocity is None else j.velocity,
                          "effort_limit": np.inf if j is None or j.effort is None else j.effort}
                for col, value in values.items():
                    c0, w = A.JOINT_F.columns[col]
                    joint[k, c0:c0 + w] = value
                k += 1

    def _ndarray(self, arena, data: np.ndarray):
        arr = ti.ndarray(arena.ti_dtype(ti_real()), data.shape)
        arr.from_numpy(data)
        return arr

    def arrays(self) -> dict:
        """The model's arrays by name."""
        return {"model_i": self.model_i, "model_f": self.model_f, "heights": self.heights}

    def pair_slot(self, p: int) -> int:
        """First contact slot of pair ``p``."""
        return int(self._pair_slots[p])

    def _pack_plates(self, li, lf, plates, media, n_free) -> None:
        """The RFT plates (grouped by carrier, one set per carrier), their carriers' ranges and the media."""
        plate_i, plate_f = li.view(self.data_i, "plate"), lf.view(self.data_f, "plate")
        ranges = li.view(self.data_i, "plate_range")
        first = 0
        for carrier, centroids, normals, areas in plates:
            row = carrier if isinstance(carrier, int) else n_free + self.tree_joint0[carrier[0]] + carrier[1]
            n = len(areas)
            ranges[row, A.PLATE_RANGE.first], ranges[row, A.PLATE_RANGE.count] = first, n
            plate_i[first:first + n, A.PLATE_I.carrier] = row
            plate_f[first:first + n, A.PLATE_F.centroid:A.PLATE_F.centroid + 3] = centroids
            plate_f[first:first + n, A.PLATE_F.normal:A.PLATE_F.normal + 3] = normals
            plate_f[first:first + n, A.PLATE_F.area] = areas
            first += n
        medium_i = li.view(self.data_i, "medium")
        for k, (medium, m) in enumerate(media):
            medium_i[k, A.MEDIUM_I.map] = m
            medium_i[k, A.MEDIUM_I.normalization] = 0 if medium.normalization == "unit" else 1
            medium_i[k, A.MEDIUM_I.row] = int(medium.mode == "row")
        #: each medium's row of the ``medium`` block (control, per env) as it was added
        self.medium_rows = np.zeros((len(media), A.MEDIUM_F.stride))
        for k, (medium, _m) in enumerate(media):
            self.medium_rows[k] = medium_row(medium)

    def set_settings(self, floats: dict, ints: dict) -> None:
        """Write the float and integer settings (columns of ``settings_f`` / ``settings_i`` by name); the
        arrays are uploaded only when a value changed."""
        key = (tuple(sorted(floats.items())), tuple(sorted(ints.items())))
        if key == self._settings_key:
            return
        sf = self.layouts["model_f"].view(self.data_f, "settings_f")[0]
        for col, value in floats.items():
            c0, w = A.SETTINGS_F.columns[col]
            sf[c0:c0 + w] = value
        si = self.layouts["model_i"].view(self.data_i, "settings_i")[0]
        for col, value in ints.items():
            si[getattr(A.SETTINGS_I, col)] = value
        self.model_f.from_numpy(self.data_f)
        self.model_i.from_numpy(self.data_i)
        self._settings_key = key

    def material_sides(self, materials, ground, heightmaps) -> np.ndarray:
        """The two material indices of each row of the ``pair_material`` block (control), shape (rows, 2):
        each static pair's body and its ground or map, then every (i, j) of the material table."""
        nm = self.n_materials
        sides = np.zeros((self.n_pairs + nm * nm, 2), np.int64)
        for p, (kind, b, other, _cap) in enumerate(self.pairs):
            if kind == PAIR_GROUND:
                other_mat = materials.index(ground.material)
            else:
                other_mat = materials.index(heightmaps[other].material_name)
            sides[p] = (self.body_materials[b], other_mat)
        i, j = np.divmod(np.arange(nm * nm), nm)
        sides[self.n_pairs:, 0], sides[self.n_pairs:, 1] = i, j
        return sides

    def material_table(self, materials, ground, heightmaps) -> np.ndarray:
        """Each ``pair_material`` row's (friction, restitution) from the world's material table, shape
        (rows, 2)."""
        sides = self.material_sides(materials, ground, heightmaps)
        return np.array([materials.lookup(int(a), int(b)) for a, b in sides], np.float64).reshape(-1, 2)

    def update_heightmap_data(self, heightmaps, upload: bool = True) -> None:
        """Rewrite the collision samples and grid geometry of every map (after ``HeightMap.update``)."""
        lf = self.layouts["model_f"]
        hmap = lf.view(self.data_f, "map")
        heights = []
        for m, hm in enumerate(heightmaps):
            hmap[m, A.MAP_F.size:A.MAP_F.size + 2] = (hm.x_size, hm.y_size)
            hmap[m, A.MAP_F.centre:A.MAP_F.centre + 2] = (hm.center_x, hm.center_y)
            heights.append(_collision_heights(hm))
            finite = heights[-1][np.isfinite(heights[-1])]
            hmap[m, A.MAP_F.top] = finite.max() if finite.size else -1e300
        if heights:
            data = self.layouts["heights"].empty(self.real)
            self.layouts["heights"].view(data, "sample")[:, 0] = np.concatenate(heights)
            self.heights.from_numpy(data)
        if upload:
            self.model_f.from_numpy(self.data_f)

    def update_map_env_heights(self, hm, envs) -> None:
        """Rewrite the heights of ``hm`` (a map with heights per env) in ``envs`` (an env index or a slice of
        envs) alone; every other sample stays as it is. The map's top (the broad phase's bound) rises to the
        new samples' highest where they are higher; it is recomputed exactly by
        :meth:`update_heightmap_data`."""
        from .backend import host_view

        n = hm.x_samples * hm.y_samples
        every = hm.env_height_rows()  # (n_envs, n), not a copy
        first, stop, _ = (envs.indices(len(every)) if isinstance(envs, slice) else (int(envs), int(envs) + 1, 1))
        start = self.layouts["heights"].offsets["sample"] + self.map_sample0[hm.index] + first * n
        view = host_view(self.heights)
        if view is not None:
            view[start:start + (stop - first) * n] = every[first:stop].reshape(-1)
        else:  # (GPU backends: the array is written whole)
            data = self.heights.to_numpy()
            data[start:start + (stop - first) * n] = every[first:stop].reshape(-1)
            self.heights.from_numpy(data)
        new = every[first:stop]
        finite = new[np.isfinite(new)]
        hmap = self.layouts["model_f"].view(self.data_f, "map")
        if finite.size and finite.max() > hmap[hm.index, A.MAP_F.top]:
            hmap[hm.index, A.MAP_F.top] = finite.max()
            self.model_f.from_numpy(self.data_f)

    def update_heightmap_poses(self, heightmaps, upload: bool = True) -> None:
        """Rewrite every map's pose (rotation map to world, origin [m])."""
        hmap = self.layouts["model_f"].view(self.data_f, "map")
        for m, hm in enumerate(heightmaps):
            hmap[m, A.MAP_F.rotation:A.MAP_F.rotation + 9] = quat_to_matrix(hm.get_orientation()).reshape(9)
            hmap[m, A.MAP_F.origin:A.MAP_F.origin + 3] = hm.get_position()
        if upload:
            self.model_f.from_numpy(self.data_f)
