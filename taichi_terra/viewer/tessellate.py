"""Triangle meshes of the collision shapes (in the body frame) and of URDF visuals (in their own frame), for
drawing.

Each shape gives vertices, per-vertex normals and triangles. Flat-faced shapes (boxes, cylinders, convex
meshes) get one vertex per face corner so their faces shade flat; spheres and capsules share vertices and
shade smoothly. The meshes match the collision geometry exactly at their vertices.
"""
from __future__ import annotations

import functools

import numpy as np

from ..bodies import shapes
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


def _own_colours(mesh) -> np.ndarray | None:
    """RGB in [0, 1] per vertex (k, 3) of what a mesh file says about its own colour: its vertex or face
    colours, its texture sampled at the vertices, else its material's colour; None where it says nothing."""
    visual = mesh.visual
    if visual.kind is None:
        return None
    try:
        colours = visual.to_color().vertex_colors if visual.kind == "texture" else visual.vertex_colors
        return np.asarray(colours, float)[:, :3] / 255.0
    except Exception:  # (a texture without coordinates: the material's colour, if it has one)
        main = getattr(getattr(visual, "material", None), "main_color", None)
        if main is None:
            return None
        return np.tile(np.asarray(main, float)[:3] / 255.0, (len(mesh.vertices), 1))


@functools.lru_cache(maxsize=64)
def _mesh_file(path: str):
    """Vertices (k, 3) [m], triangles (t, 3) and the colours of the file's own (:func:`_own_colours`, or None) of
    the mesh file at ``path`` as trimesh reads it (every part of a scene in one mesh, placed as the file places
    it; a file that states its unit, as COLLADA's ``<unit meter>`` does, converted to metres; others are taken
    to be in metres, as URDF's are), read once per process."""
    import trimesh

    try:
        mesh = trimesh.load(path, force="mesh")
    except Exception as e:  # (trimesh raises many types on unreadable files; .dae needs pycollada)
        hint = " (reading .dae files needs pycollada: pip install taichi_terra[meshes])" \
            if path.lower().endswith(".dae") and isinstance(e, (ImportError, ModuleNotFoundError)) else ""
        raise ValueError(f"cannot read visual mesh file '{path}': {e}{hint}") from None
    if mesh.units is not None and mesh.units not in ("m", "meter", "meters"):  # (a COLLADA file's <unit meter>)
        try:
            mesh.convert_units("meters")
        except Exception as e:
            raise ValueError(f"visual mesh file '{path}': cannot convert its unit {mesh.units!r} to metres: {e}") \
                from None
    vertices, faces = np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64)
    if len(vertices) == 0 or len(faces) == 0:
        raise ValueError(f"cannot read visual mesh file '{path}': it holds no triangles")
    if not np.all(np.isfinite(vertices)):
        raise ValueError(f"visual mesh file '{path}' has vertices that are not finite")
    return vertices, faces, _own_colours(mesh)


def tessellate_visual(visual, segments: int = 32):
    """``(vertices [m] (k, 3), normals (k, 3), triangles (t, 3) int32, colours)`` of a URDF
    :class:`~taichi_terra.bodies.urdf.Visual` in its own frame: a shape as the collision shape of its
    dimensions is drawn (:func:`tessellate`), a mesh file scaled by its ``scale`` and shaded flat (its path
    resolved; raises ValueError naming the file where it cannot be read). ``colours``: RGB in [0, 1] per vertex
    (k, 3) where a mesh file gives its own colours (vertex or face colours, a texture sampled at its vertices, a
    material's colour), else None."""
    p = np.asarray(visual.params, float)
    if visual.kind == "box":
        return (*tessellate(shapes.box(p[0], p[1], p[2], 1.0), segments), None)
    if visual.kind == "sphere":
        return (*tessellate(shapes.sphere(p[0], 1.0), segments), None)
    if visual.kind == "cylinder":
        return (*tessellate(shapes.cylinder(p[0], p[1], 1.0), segments), None)
    if visual.kind == "capsule":  # (length between the end spheres' centres)
        return (*tessellate(shapes.capsule(p[0], p[1], 1.0), segments), None)
    if visual.kind == "mesh":
        if visual.path is None:
            raise ValueError(f"visual mesh '{visual.filename}' was not found when the URDF was read")
        vertices, faces, colours = _mesh_file(visual.path)
        vertices = vertices * p
        if np.prod(np.sign(p)) < 0.0:  # a mirroring scale turns the faces inside out
            faces = faces[:, ::-1]
        return (*_flat(vertices, faces), None if colours is None else colours[faces].reshape(-1, 3))
    raise ValueError(f"cannot draw visual kind {visual.kind!r}")
