"""Triangle meshes of the collision shapes, in the body frame, for drawing.

Each shape gives vertices, per-vertex normals and triangles. Flat-faced shapes (boxes, cylinders, convex
meshes) get one vertex per face corner so their faces shade flat; spheres and capsules share vertices and
shade smoothly. The meshes match the collision geometry exactly at their vertices.
"""
from __future__ import annotations

import numpy as np

from ..bodies.shapes import Shape, ShapeType


def _flat(vertices: np.ndarray, faces: np.ndarray):
    """One vertex per face corner, each carrying its face's normal."""
    v = vertices[faces].reshape(-1, 3)
    n = np.cross(vertices[faces[:, 1]] - vertices[faces[:, 0]], vertices[faces[:, 2]] - vertices[faces[:, 0]])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
    return v, np.repeat(n, 3, axis=0), np.arange(len(v), dtype=np.int32).reshape(-1, 3)


def _smooth(mesh):
    return (np.asarray(mesh.vertices, float), np.asarray(mesh.vertex_normals, float),
            np.asarray(mesh.faces, np.int32))


def tessellate(shape: Shape, segments: int = 32):
    """``(vertices [m] (k, 3), normals (k, 3), triangles (t, 3) int32)`` of ``shape`` in its body frame."""
    import trimesh

    p = shape.params
    if shape.type == ShapeType.SPHERE:
        return _smooth(trimesh.creation.icosphere(subdivisions=2, radius=p[0]))
    if shape.type == ShapeType.BOX:
        m = trimesh.creation.box(extents=2.0 * p[:3])
        return _flat(np.asarray(m.vertices, float), np.asarray(m.faces))
    if shape.type == ShapeType.CAPSULE:  # axis along z, total length 2 (half height + radius)
        return _smooth(trimesh.creation.capsule(height=2.0 * p[1], radius=p[0], count=[segments, segments // 2]))
    if shape.type == ShapeType.CYLINDER:
        m = trimesh.creation.cylinder(radius=p[0], height=2.0 * p[1], sections=segments)
        return _flat(np.asarray(m.vertices, float), np.asarray(m.faces))
    if shape.type == ShapeType.MESH:
        return _flat(np.asarray(shape.vertices, float), np.asarray(shape.faces))
    raise ValueError(f"cannot draw shape type {shape.type!r}")
