"""Ray casts from Python: one ray (``World.ray_test``) or many per env in one kernel launch
(``World.ray_test_batch``), against the ground, every height map and soil bed (with its pose) and every body.
The kernel is ``kernels/collision/rays.py``."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import as_float_array, check_env, check_positive

#: how far below the lowest undeformed terrain a height scan still looks [m] (a soil bed's ruts)
SCAN_DEPTH = 10.0

KINDS = {0: None, 1: "ground", 2: "heightmap", 3: "body", 4: "link"}


@dataclass
class RayHit:
    """The first thing a ray meets.

    Attributes:
        point: world hit point [m], shape (3,).
        normal: unit world surface normal there, shape (3,).
        distance: from the origin along the ray [m].
        kind: ``"ground"``, ``"heightmap"`` (soil beds included), ``"body"`` or ``"link"`` (a collision shape
            of an articulated system's link).
        index: the height map's or body's index (0 for the ground; a link shape's index among all bodies).
        object: the :class:`HeightMap`, :class:`Body` or :class:`Ground` hit; for a link, the pair
            ``(ArticulatedSystem, link name)``.
    """

    point: np.ndarray
    normal: np.ndarray
    distance: float
    kind: str
    index: int
    object: object


class Rays:
    """Ray casts on the device for a built world: one launch of ``kernels/collision/rays.py`` per batch.

    Args:
        model, state, scratch: the world's arrays.
        pose_links: called before a cast in a world with articulated systems, to bring their links' frames to
            the current state (the kernel poses link shapes from them).
        n_maps: the world's height maps and soil beds.
    """

    def __init__(self, model, state, scratch, pose_links, n_maps: int):
        self._model, self._state, self._scratch = model, state, scratch
        self._pose_links, self._n_maps = pose_links, int(n_maps)

    def link_of(self, body: int) -> tuple[int, str]:
        """(system index, link name) of the link that world body ``body`` (a link shape) belongs to."""
        return self._model.body_links[body]

    def cast(self, origins: np.ndarray, dirs: np.ndarray, lengths: np.ndarray, ground, bodies: bool = True) -> dict:
        """The first hit of every ray: ``origins`` [m] and unit ``dirs``, shape (n_envs, n_rays, 3), checked;
        ``lengths`` [m], shape (n_envs, n_rays); ``ground``: the world's ground plane or None; ``bodies``: the
        body and link shapes are hit too (else the terrain alone). Returns :meth:`RayCaster.ray_test_batch`'s
        dict."""
        import taichi as ti

        from . import backend
        from .kernels.collision.rays import cast_rays_kernel

        ne, n_rays = origins.shape[0], origins.shape[1]
        if n_rays == 0:
            empty = np.zeros((ne, 0))
            return {"hit": empty.astype(bool), "distance": empty, "point": np.zeros((ne, 0, 3)),
                    "normal": np.zeros((ne, 0, 3)), "kind": empty.astype(np.int64), "index": empty.astype(np.int64)}
        real = backend.np_real()
        vec3 = ti.types.vector(3, backend.ti_real())
        arrays = []
        for data in (origins, dirs):
            nd = ti.ndarray(vec3, (ne, n_rays))
            nd.from_numpy(np.ascontiguousarray(data, dtype=real))
            arrays.append(nd)
        len_nd = ti.ndarray(backend.ti_real(), (ne, n_rays))
        len_nd.from_numpy(np.ascontiguousarray(lengths, dtype=real))
        out_t = ti.ndarray(backend.ti_real(), (ne, n_rays))
        out_n = ti.ndarray(vec3, (ne, n_rays))
        out_what = ti.ndarray(ti.types.vector(2, ti.i32), (ne, n_rays))
        m, s = self._model, self._state
        trees = m.n_trees > 0
        if trees and bodies:
            self._pose_links()
        n_bodies = (m.n_bodies if trees else m.n_free) if bodies else 0
        cast_rays_kernel(trees)(arrays[0], arrays[1], len_nd, n_bodies, m.n_free if bodies else 0,
                                self._n_maps, int(ground is not None),
                                ground.height if ground is not None else 0.0, m.model_i, m.model_f, m.heights, s.q,
                                s.state_f, self._scratch.scratch_f, out_t, out_n, out_what)
        t = out_t.to_numpy().astype(np.float64)
        what = out_what.to_numpy().astype(np.int64)
        hit = what[..., 0] != 0
        point = np.where(hit[..., None], origins + dirs * np.where(hit, t, 0.0)[..., None], np.nan)
        normal = np.where(hit[..., None], out_n.to_numpy().astype(np.float64), np.nan)
        return {"hit": hit, "distance": np.where(hit, t, np.inf), "point": point, "normal": normal,
                "kind": what[..., 0], "index": np.where(hit, what[..., 1], -1)}


class RayCaster:
    """The ray queries of :class:`taichi_terra.World`: they check their input and name what was hit; the casts
    run in the world's :class:`Rays`, made at its build."""

    _PARTS = ("_rays",)

    def ray_test(self, origin, direction, max_length: float, env: int = 0) -> RayHit | None:
        """The first hit of the ray from ``origin`` [m] along ``direction`` (any length, normalized here)
        within ``max_length`` [m] in ``env``, or ``None``. Rays starting inside a body ignore that body; height
        maps are hit from their upper side."""
        check_env(env, self.n_envs)
        if env is None:
            raise TypeError("env must be an int")
        o = self._ray_array("origin", origin, (3,))
        d = self._ray_array("direction", direction, (3,))
        out = self.ray_test_batch(np.tile(o, (self.n_envs, 1, 1)), np.tile(d, (self.n_envs, 1, 1)), max_length)
        k = int(out["kind"][env, 0])
        if k == 0:
            return None
        i = int(out["index"][env, 0])
        obj = {1: self.ground, 2: self.heightmaps[i] if k == 2 else None, 3: self.bodies[i] if k == 3 else None,
               4: None}[k]
        if k == 4:
            system, link = self._rays.link_of(i)
            obj = (self.articulated_systems[system], link)
        return RayHit(out["point"][env, 0], out["normal"][env, 0], float(out["distance"][env, 0]), KINDS[k], i, obj)

    def scan_heights(self, points, frame, env: int | None = None, fill: float = float("nan")) -> np.ndarray:
        """The terrain's height [m] (world z) under a grid of points carried by a body, in every env at once:
        a height scan for a policy's observation.

        Args:
            points: shape (n_points, 2) [m]: (forward, left) offsets in ``frame``'s yaw-aligned frame (its
                position, turned about the world z axis by its yaw; its roll and pitch ignored).
            frame: a free body (:class:`~taichi_terra.bodies.body.Body`), or ``(system, link)``: an
                articulated system of this world and one of its link names.
            env: one env (returns shape (n_points,)) or ``None``: every env (shape (n_envs, n_points)).
            fill: the value [m] where no terrain lies under a point (off every map, over a hole of one and
                with no ground below).

        The heights are those of the topmost terrain surface under each point: the ground plane, the height
        maps, each soil bed's deformed surface and each granular medium's surface in that env (what a
        vertical ray from above meets first; bodies and links are not seen). Over a gap it is the surface
        below the gap, or ``fill``: a vertical ray never reads the gap's edge as a wall."""
        check_env(env, self.n_envs)
        pts = self._ray_array("points", points, (2,))
        if pts.ndim != 2:
            raise ValueError(f"points must have shape (n_points, 2), got {pts.shape}")
        fill = float(fill)
        if np.isinf(fill):
            raise ValueError(f"fill must be finite or NaN, got {fill!r}")
        pos, rot = self._frame_pose(frame)
        yaw = np.arctan2(rot[:, 1, 0], rot[:, 0, 0])
        c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
        x = pos[:, None, 0] + c * pts[None, :, 0] - s * pts[None, :, 1]
        y = pos[:, None, 1] + s * pts[None, :, 0] + c * pts[None, :, 1]
        lowest, highest = self._terrain_span()
        top = max(highest, float(pos[:, 2].max())) + 1.0
        bottom = lowest - SCAN_DEPTH
        ne, n = x.shape
        origins = np.stack([x, y, np.full_like(x, top)], axis=2)
        dirs = np.broadcast_to(np.array([0.0, 0.0, -1.0]), origins.shape)
        self.build()
        out = self._rays.cast(origins, dirs, np.full((ne, n), top - bottom + 1.0), self.ground, bodies=False)
        heights = np.where(out["hit"], top - out["distance"], fill)
        return heights if env is None else heights[int(env)]

    def _frame_pose(self, frame) -> tuple[np.ndarray, np.ndarray]:
        """Every env's position (n_envs, 3) and rotation (n_envs, 3, 3) of a scan's ``frame``."""
        from .bodies.articulated import ArticulatedSystem
        from .bodies.body import Body

        if isinstance(frame, Body):
            if frame not in self.bodies:
                raise ValueError("frame: the body is not one of this world's")
            return frame.get_position(), frame.get_rotation_matrix().reshape(-1, 3, 3)
        if isinstance(frame, tuple) and len(frame) == 2 and isinstance(frame[0], ArticulatedSystem):
            system, link = frame
            if system not in self.articulated_systems:
                raise ValueError("frame: the articulated system is not one of this world's")
            if not isinstance(link, str) or link not in system.get_body_names():
                raise ValueError(f"frame: unknown link {link!r}; known: {system.get_body_names()}")
            return system.get_frame_position(link), system.get_frame_orientation(link).reshape(-1, 3, 3)
        raise TypeError("frame must be a free body or a (system, link) pair, got "
                        f"{type(frame).__name__}")

    def _terrain_corners_z(self) -> list[float]:
        """World z of the corners of each map's box of samples (finite ones, undeformed) and the ground's."""
        out = [] if self.ground is None else [float(self.ground.height)]
        for hm in self.heightmaps:
            h = hm.get_contact_heights()
            h = h[np.isfinite(h)]
            if not len(h):
                continue
            hx, hy = 0.5 * hm.x_size, 0.5 * hm.y_size
            cx, cy = hm.center_x, hm.center_y
            corners = np.array([[cx + sx * hx, cy + sy * hy, z] for sx in (-1, 1) for sy in (-1, 1)
                                for z in (h.min(), h.max())])
            out += list((hm.get_position()[None] + corners @ hm.get_rotation_matrix().T)[:, 2])
        return out

    def _terrain_span(self) -> tuple[float, float]:
        """The lowest and highest world z [m] of the undeformed terrain (map corners and the ground; a soil
        bed's ruts go below by at most :data:`SCAN_DEPTH`)."""
        z = self._terrain_corners_z()
        return (min(z), max(z)) if z else (0.0, 0.0)

    @staticmethod
    def _ray_array(name, value, tail) -> np.ndarray:
        try:
            a = as_float_array(name, value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be an array of numbers") from exc
        if a.shape[-len(tail):] != tail:
            raise ValueError(f"{name} must end in shape {tail}, got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite")
        return a

    def ray_test_batch(self, origins, directions, max_length) -> dict:
        """Cast many rays per env in one kernel launch (a height scan, a planar lidar).

        ``origins`` and ``directions``: shape (n_rays, 3) (the same rays in every env) or (n_envs, n_rays, 3)
        [m]; directions need not be unit. ``max_length``: one number or shape (n_envs, n_rays) [m], > 0.
        Returns a dict of arrays with the env axis first: ``hit`` (bool, (n_envs, n_rays)), ``distance``
        [m] (inf where nothing was hit), ``point`` [m] and ``normal`` ((n_envs, n_rays, 3), NaN where nothing
        was hit), ``kind`` (0 none, 1 ground, 2 height map, 3 body, 4 a link of an articulated system) and
        ``index`` (the map or body, -1 none; a link shape's body index). Links are posed at the current state.
        """
        ne = self.n_envs
        o = self._ray_array("origins", origins, (3,))
        d = self._ray_array("directions", directions, (3,))
        if o.ndim == 2:
            o = np.broadcast_to(o, (ne, *o.shape))
        if d.ndim == 2:
            d = np.broadcast_to(d, (ne, *d.shape))
        if o.ndim != 3 or o.shape[0] != ne or d.shape != o.shape:
            raise ValueError(f"origins and directions must both have shape (n_rays, 3) or ({ne}, n_rays, 3), "
                             f"got {np.shape(origins)} and {np.shape(directions)}")
        norm = np.linalg.norm(d, axis=2, keepdims=True)
        if np.any(norm == 0.0):
            raise ValueError("directions must be non-zero vectors")
        n_rays = o.shape[1]
        if np.ndim(max_length) == 0:
            lengths = np.full((ne, n_rays), check_positive("max_length", max_length))
        else:
            lengths = self._ray_array("max_length", np.asarray(max_length)[..., None], (1,))[..., 0]
            if lengths.shape != (ne, n_rays) or np.any(lengths <= 0.0):
                raise ValueError(f"max_length must be a positive number or shape ({ne}, {n_rays}) of them")
        self.build()
        return self._rays.cast(o, d / norm, lengths, self.ground)
