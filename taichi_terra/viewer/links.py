"""The shapes carried by articulated-system links, for the 3D viewer: which shapes, and where they are.

A link's collision shapes and its URDF visuals are drawn rigidly attached to its frame: each one's tessellation
is moved into the link frame once (by its placement on the link), so a frame only needs each link's world
pose. The poses of every link of every shown env come from one evaluation of the trees' kinematics (the kernel
behind ``ArticulatedSystem.get_frame_position``) and one read of the frame block: no Python loop over links or
envs per frame.
"""
from __future__ import annotations

import numpy as np

#: how many palette colours an articulated system takes: links alternate between them by depth in the tree
SYSTEM_COLORS = 2


def quaternions(rotations: np.ndarray) -> np.ndarray:
    """Unit quaternions (w, x, y, z) of rotation matrices ``rotations``, shape (..., 3, 3) -> (..., 4)
    (Shepperd's method: each matrix from its largest of w, x, y, z, so no branch divides by a small number)."""
    r = np.asarray(rotations, float)
    m00, m11, m22 = r[..., 0, 0], r[..., 1, 1], r[..., 2, 2]
    cand = np.stack([1.0 + m00 + m11 + m22, 1.0 + m00 - m11 - m22, 1.0 - m00 + m11 - m22,
                     1.0 - m00 - m11 + m22], -1)  # 4 w^2, 4 x^2, 4 y^2, 4 z^2
    big = np.argmax(cand, axis=-1)
    s = 2.0 * np.sqrt(np.maximum(np.take_along_axis(cand, big[..., None], -1)[..., 0], 1e-300))
    d21, d02, d10 = r[..., 2, 1] - r[..., 1, 2], r[..., 0, 2] - r[..., 2, 0], r[..., 1, 0] - r[..., 0, 1]
    s21, s02, s10 = r[..., 2, 1] + r[..., 1, 2], r[..., 0, 2] + r[..., 2, 0], r[..., 1, 0] + r[..., 0, 1]
    options = np.stack([
        np.stack([0.25 * s, d21 / s, d02 / s, d10 / s], -1),
        np.stack([d21 / s, 0.25 * s, s10 / s, s02 / s], -1),
        np.stack([d02 / s, s10 / s, 0.25 * s, s21 / s], -1),
        np.stack([d10 / s, s02 / s, s21 / s, 0.25 * s], -1)], -2)
    return np.take_along_axis(options, big[..., None, None], -2)[..., 0, :]


def axis_lines(origins: np.ndarray, rotations: np.ndarray, size: float, colors) -> tuple[np.ndarray, np.ndarray]:
    """Line segments drawing frames as three axes: ``origins`` [m] (..., 3) and frame-to-world ``rotations``
    (..., 3, 3), axes ``size`` [m] long, coloured ``colors`` (x, y, z RGB). Returns the segments' end points
    (k, 3), two per axis, and their colours (k, 3)."""
    tips = origins[..., None, :] + size * np.swapaxes(rotations, -1, -2)  # row i: the end of axis i
    ends = np.stack([np.broadcast_to(origins[..., None, :], tips.shape), tips], axis=-2)  # (..., axis, 2, 3)
    rgb = np.broadcast_to(np.asarray(colors, float)[:, None, :], ends.shape)
    return ends.reshape(-1, 3), rgb.reshape(-1, 3)


class LinkShapes:
    """Every shape on an articulated link of ``world`` (a built world), in body index order.

    Attributes:
        bodies: ``(body index, system index, link index, Shape, position [m] (3,), rotation (3, 3))`` per shape
            on a link: the model's bodies after the free ones, with the shape frame's placement on its link.
        slots: per entry of ``bodies``, its link's slot in :meth:`poses` (shapes on one link share a slot).
        depths: per entry of ``bodies``, its link's depth in its tree (the root 0).
        rows: the model's joint row of each link, in slot order, shape (n_links,): every link of every system.
    """

    def __init__(self, world):
        model = world._model
        if model is None:
            raise ValueError("the world must be built before its link shapes are drawn")
        self.world = world
        rows, depths, slot_of = [], [], {}
        for t, system in enumerate(world.articulated_systems):
            parent = [-1] + [system.model.link_index(j.parent) for j in system.model.joints]
            depth = []
            for k, p in enumerate(parent):
                depth.append(0 if p < 0 else depth[p] + 1)
                slot_of[(t, k)] = len(rows)
                rows.append(model.tree_joint0[t] + k)
                depths.append(depth[k])
        self.rows = np.array(rows, np.int64)
        self.bodies, self.slots, self.depths = [], [], []
        b = model.n_free
        for t, system in enumerate(world.articulated_systems):
            for link, shape, pos, rot in system.collision_bodies():
                if model.body_link_index.get(b) != (t, link):  # the model numbers its bodies the same way
                    raise RuntimeError(f"body {b}: expected the shape of link {link} of system {t}, the model has "
                                       f"{model.body_link_index.get(b)}")
                self.bodies.append((b, t, link, shape, np.asarray(pos, float), np.asarray(rot, float)))
                self.slots.append(slot_of[(t, link)])
                self.depths.append(depths[slot_of[(t, link)]])
                b += 1

        #: per entry of ``bodies``, the track whose belt the shape is part of, as ``(system index, track index)``,
        #: or None
        self.belt_of = []
        for t, system in enumerate(world.articulated_systems):
            self.belt_of += [None if k < 0 else (t, k) for k in system.collision_body_tracks()]
        #: world body indices of every belt's shapes (their contacts are coloured by traction)
        self.belt_bodies = np.array([b for (b, *_x), belt in zip(self.bodies, self.belt_of) if belt is not None],
                                    np.int64)
        #: the belts drawn with moving tread marks: ``(system index, link slot, Track, coordinate index of each
        #: drive, gains)``; a belt's travel is ``gains . q[coordinates]`` (its speed is ``g^T u``)
        self.belts = []
        for t, system in enumerate(world.articulated_systems):
            shift = 1 if system.floating else 0  # (a floating base's quaternion takes one more coordinate)
            for track in system.model.tracks:
                if track.visual:
                    coords = [system.get_generalized_velocity_index(d.joint) + shift for d in track.drives]
                    self.belts.append((t, slot_of[(t, system.model.link_index(track.link))], track,
                                       np.array(coords), np.array([d.gain for d in track.drives])))

        #: every URDF visual of every link, ``(system index, link index, link slot, depth, Visual)``
        self.visuals = []
        #: ``(system index, link index)`` of the links drawn by their collision shapes where the viewer shows
        #: visuals: those without visuals, and those with a visual mesh the URDF's reader could not find
        self.fallback = set()
        for t, system in enumerate(world.articulated_systems):
            for k, link in enumerate(system.model.links):
                for visual in link.visuals:
                    self.visuals.append((t, k, slot_of[(t, k)], depths[slot_of[(t, k)]], visual))
                if not link.visuals or any(v.kind == "mesh" and v.path is None for v in link.visuals):
                    self.fallback.add((t, k))

    def __len__(self) -> int:
        return len(self.bodies)

    def belt_marks(self, envs, frames, spacing: float) -> np.ndarray:
        """The tread marks of every drawn belt in each env of ``envs`` (n env indices) as line segments across
        the belt, world points [m], shape (n, k, 2, 3): ``spacing`` [m] apart along each loop, moved with the
        belt's travel, placed by the link frames ``frames`` (:meth:`frames` of the same envs)."""
        origins, rotations = frames
        out = []
        for i, e in enumerate(envs):
            q = [system.get_generalized_coordinate(int(e)) for system in self.world.articulated_systems]
            per_env = []
            for t, slot, track, coords, gains in self.belts:
                local = track.marks(float(gains @ q[t][coords]), spacing)
                per_env.append(origins[i, slot] + local @ rotations[i, slot].T)
            out.append(np.concatenate(per_env) if per_env else np.zeros((0, 2, 3)))
        return np.stack(out)

    def frames(self, envs) -> tuple[np.ndarray, np.ndarray]:
        """World origins [m], shape (n, n_links, 3), and frame-to-world rotations, shape (n, n_links, 3, 3), of
        every link (slot order) in each env of ``envs`` (n env indices), at the current state."""
        w = self.world
        w._articulation.evaluate_trees()  # one kernel launch: every tree of every env
        scratch = w._scratch
        data = scratch.read("scratch_f")
        layout = scratch._layouts["scratch_f"]
        idx = np.asarray(envs, np.int64)
        pos = layout.view(data, "frame", "position")[idx][:, self.rows]
        rot = layout.view(data, "frame", "rotation")[idx][:, self.rows].reshape(len(idx), len(self.rows), 3, 3)
        return np.array(pos, float), np.array(rot, float)

    def poses(self, envs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each link's pose in each env of ``envs`` (n env indices) as position [m] and quaternion
        (w, x, y, z), shape (n, n_links, 7); then the origins and rotations of :meth:`frames`."""
        pos, rot = self.frames(envs)
        return np.concatenate([pos, quaternions(rot)], axis=-1), pos, rot
