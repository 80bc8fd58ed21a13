"""Plates: a body's surface cut into small flat triangles for resistive force theory.

Each plate is one triangle of a surface mesh: its centroid [m] and outward unit normal in the frame of the body or
link it belongs to, and its area [m^2]. The medium's force acts at the centroid (the centroid rule is exact for a
fully buried flat face in translation, where the force is linear in depth). Meshes are refined by splitting
faces into congruent triangles no larger than the target area, so the plates of a face are of even size.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..validation import check_int, check_positive

#: plates per body when neither ``count`` nor ``area`` is given (RFT-SiM's hexapod used 500 per body)
DEFAULT_COUNT = 500


@dataclass(frozen=True)
class PlateSet:
    """The plates of one body or link, in its frame. Made by :meth:`taichi_terra.World.add_plates`.

    Attributes:
        index: its index in the world (plates of later sets follow those of earlier ones).
        owner: the :class:`~taichi_terra.Body`, or the :class:`~taichi_terra.ArticulatedSystem` with ``link``.
        link: the link's name (``None`` for a free body).
        centroids: [m], shape (n, 3).
        normals: outward unit normals, shape (n, 3).
        areas: [m^2], shape (n,).
        first: index of its first plate among all the world's plates (:meth:`World.get_plate_forces` rows).
        carrier: the body's index, or (system index, link index).
    """

    index: int
    owner: object
    link: str | None
    centroids: np.ndarray
    normals: np.ndarray
    areas: np.ndarray
    first: int
    carrier: object

    @property
    def n_plates(self) -> int:
        return len(self.areas)

    @property
    def rows(self) -> slice:
        """Its rows in :meth:`World.get_plate_forces`."""
        return slice(self.first, self.first + self.n_plates)


def shape_mesh(shape):
    """A closed triangle mesh (``trimesh.Trimesh``) of a :mod:`~taichi_terra.bodies.shapes` shape, in the shape's
    frame."""
    import trimesh

    from ..bodies.shapes import ShapeType

    p = np.asarray(shape.params, np.float64)
    if shape.type == ShapeType.BOX:
        return trimesh.creation.box(extents=2.0 * p[:3])
    if shape.type == ShapeType.SPHERE:
        return trimesh.creation.icosphere(subdivisions=2, radius=p[0])
    if shape.type == ShapeType.CAPSULE:
        return trimesh.creation.capsule(height=2.0 * p[1], radius=p[0], count=[32, 32])
    if shape.type == ShapeType.CYLINDER:
        return trimesh.creation.cylinder(radius=p[0], height=2.0 * p[1], sections=48)
    return trimesh.Trimesh(vertices=np.asarray(shape.vertices, np.float64), faces=np.asarray(shape.faces))


def collision_mesh(collision):
    """A URDF :class:`~taichi_terra.bodies.urdf.CollisionShape` as a triangle mesh in the link frame: the mesh
    file itself for a ``<mesh>`` (scaled; not its convex hull), a primitive's surface otherwise."""
    import trimesh

    p = np.asarray(collision.params, np.float64)
    if collision.kind == "box":
        mesh = trimesh.creation.box(extents=p[:3])
    elif collision.kind == "sphere":
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=p[0])
    elif collision.kind == "cylinder":
        mesh = trimesh.creation.cylinder(radius=p[0], height=p[1], sections=48)
    elif collision.kind == "capsule":
        mesh = trimesh.creation.capsule(height=p[1], radius=p[0], count=[32, 32])
    else:
        mesh = trimesh.load(collision.path, force="mesh")
        mesh.apply_scale(p[:3]) if p.shape == (3,) else None
    transform = np.eye(4)
    transform[:3, :3] = np.asarray(collision.rotation, np.float64)
    transform[:3, 3] = np.asarray(collision.position, np.float64)
    mesh.apply_transform(transform)
    return mesh


def refine(mesh, *, count=None, area=None, name="mesh"):
    """Plates of ``mesh`` (a ``trimesh.Trimesh`` in the owner's frame): ``(centroids, normals, areas)``.

    Each face is cut into ``k^2`` congruent triangles, ``k`` the least that makes them no larger than ``area``
    [m^2]; with ``count``, for the largest such area that still gives at least ``count`` plates (fewer only where
    the mesh has more faces than that);
    outward normals are checked on closed meshes (an inside-out mesh is turned right; one with inconsistent winding
    is refused), and an open mesh is used as given with a warning (its normals cannot be checked). Faces of zero area
    are dropped."""
    import trimesh

    if count is not None and area is not None:
        raise ValueError("add_plates: give count or area, not both")
    if area is not None:
        target = check_positive("area", area)
    else:
        n = DEFAULT_COUNT if count is None else check_int("count", count, 1)
        target = float(mesh.area) / n
    mesh = trimesh.Trimesh(vertices=np.asarray(mesh.vertices, np.float64), faces=np.asarray(mesh.faces),
                           process=True)
    if len(mesh.faces) == 0 or mesh.area <= 0.0:
        raise ValueError(f"{name}: the mesh has no area")
    if mesh.is_watertight:
        if not mesh.is_winding_consistent:
            raise ValueError(f"{name}: the mesh's faces are not wound consistently, so its outward normals are "
                             "unknown")
        if mesh.volume < 0.0:
            mesh.invert()
    else:
        warnings.warn(f"{name}: the mesh is open; its face normals are taken as outward as given", stacklevel=3)
    vertices, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    tri = vertices[faces]
    cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    twice = np.linalg.norm(cross, axis=1)
    keep = twice > 1e-12 * twice.max()
    tri, cross, twice = tri[keep], cross[keep], twice[keep]
    normals = cross / twice[:, None]
    splits = _splits(twice, target)
    if area is None:  # the largest target area whose plates still number at least the count (or one per face)
        n = DEFAULT_COUNT if count is None else count
        lo, hi = target, float(0.5 * twice.sum())
        for _ in range(60):
            mid = np.sqrt(lo * hi)
            if int((_splits(twice, mid) ** 2).sum()) >= n:
                lo = mid
            else:
                hi = mid
        splits = _splits(twice, lo)
    centroids, plate_normals, areas = [], [], []
    for k in np.unique(splits):
        pick = splits == k
        cells = _grid_centroids(int(k))  # (k^2, 2): barycentric (along AB, along AC) of each sub-triangle's centroid
        a, b, c = tri[pick, 0], tri[pick, 1], tri[pick, 2]
        pts = a[:, None] + cells[None, :, :1] * (b - a)[:, None] + cells[None, :, 1:] * (c - a)[:, None]
        centroids.append(pts.reshape(-1, 3))
        plate_normals.append(np.repeat(normals[pick], k * k, axis=0))
        areas.append(np.repeat(0.5 * twice[pick] / (k * k), k * k))
    return np.concatenate(centroids), np.concatenate(plate_normals), np.concatenate(areas)


def _splits(twice: np.ndarray, target: float) -> np.ndarray:
    """Per face (twice its area given), the least k that makes its k^2 triangles no larger than ``target``."""
    return np.maximum(1, np.ceil(np.sqrt(0.5 * twice / target) * (1.0 - 1e-12))).astype(int)


def _grid_centroids(k: int) -> np.ndarray:
    """A triangle cut into k^2 congruent triangles by k-1 lines parallel to each side: their centroids in
    barycentric (s, t) coordinates, P = A + s (B - A) + t (C - A)."""
    out = []
    for i in range(k):
        for j in range(k - i):
            out.append(((3 * i + 1) / (3 * k), (3 * j + 1) / (3 * k)))  # (i, j), (i+1, j), (i, j+1)
            if i + j <= k - 2:
                out.append(((3 * i + 2) / (3 * k), (3 * j + 2) / (3 * k)))  # (i+1, j), (i+1, j+1), (i, j+1)
    return np.array(out)
