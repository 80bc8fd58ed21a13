"""Collision shapes of rigid links: geometry, mass properties and contact sample points.

Every shape is expressed in its link frame, whose origin is the centre of mass. Capsules and
cylinders have their axis along the link's z axis. Meshes are replaced by their convex hull and
re-centred so that the link origin is the hull's centre of mass (the hull's axes are kept).
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

from ..validation import check_positive, real_limits

#: Number of fixed sample points on each rim of a cylinder.
CYLINDER_RIM_POINTS = 8


class ShapeType(enum.IntEnum):
    SPHERE = 0
    BOX = 1
    CAPSULE = 2
    CYLINDER = 3
    MESH = 4


@dataclass
class Shape:
    """A convex collision shape with uniform density.

    Attributes:
        type: the :class:`ShapeType`.
        params: shape dimensions, shape (4,): sphere (r), box (half x, half y, half z),
            capsule and cylinder (r, half height), mesh (bounding radius about the centre of mass) [m].
        mass: [kg].
        inertia: inertia tensor about the centre of mass in the link frame [kg m^2], shape (3, 3).
        points: contact sample points in the link frame [m], shape (k, 3).
        inflation: radius added around every sample point [m] (spheres and capsules).
        planes: outward face planes ``(n, d)`` with ``n . p <= d`` on the shape, shape (f, 4): every face of
            a box or mesh, the two caps of a cylinder. Their normals are the candidate separating axes.
        bounding_radius: radius of a sphere about the link origin enclosing the shape [m].
        vertices, faces: a triangle mesh of the surface for rendering and export (meshes only).
    """

    type: ShapeType
    params: np.ndarray
    mass: float
    inertia: np.ndarray
    points: np.ndarray
    inflation: float
    bounding_radius: float
    planes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None


def _finite(make):
    """``make`` (a shape constructor) whose shape must come out finite: sizes and a mass that pass their own
    checks (finite, > 0) can still overflow an inertia or a plane, or underflow an inertia to zero, in f64 or
    in the f32 the kernels may run in (a 1e308 kg sphere is finite in f64 only); such a shape is refused,
    naming the arguments."""
    import functools
    import inspect

    signature = inspect.signature(make)

    @functools.wraps(make)
    def checked(*args, **kwargs):
        precision, largest, tiny = real_limits()
        try:
            with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
                shape = make(*args, **kwargs)
                ok = (np.isfinite(shape.inertia).all() and np.isfinite(shape.points).all()
                      and np.isfinite(shape.planes).all() and math.isfinite(shape.bounding_radius))
                eig = np.linalg.eigvalsh(shape.inertia) if ok else np.zeros(3)
                ok = (ok and eig.min() >= tiny and shape.mass >= tiny
                      and max(eig.max(), shape.mass, shape.bounding_radius) <= largest
                      and np.abs(shape.planes).max(initial=0.0) <= largest)
        except (OverflowError, ZeroDivisionError):  # (Python's float arithmetic raises where numpy's gives inf)
            ok = False
        if not ok:
            bound = signature.bind(*args, **kwargs)
            given = ", ".join(f"{k}={v!r}" for k, v in bound.arguments.items() if k != "mesh_or_path")
            raise ValueError(f"{make.__name__}({given}): the sizes and mass give an inertia or extent that is not "
                             f"finite and positive in {precision} floating point "
                             f"(between {tiny:.3g} and {largest:.3g})")
        return shape
    return checked


@_finite
def sphere(radius: float, mass: float) -> Shape:
    r = check_positive("radius", radius)
    m = check_positive("mass", mass)
    inertia = np.eye(3) * (0.4 * m * r * r)
    return Shape(ShapeType.SPHERE, np.array([r, 0.0, 0.0, 0.0]), m, inertia, np.zeros((1, 3)), r, r)


@_finite
def box(size_x: float, size_y: float, size_z: float, mass: float) -> Shape:
    sx = check_positive("size_x", size_x)
    sy = check_positive("size_y", size_y)
    sz = check_positive("size_z", size_z)
    m = check_positive("mass", mass)
    inertia = np.diag([m * (sy * sy + sz * sz), m * (sx * sx + sz * sz), m * (sx * sx + sy * sy)]) / 12.0
    h = np.array([sx, sy, sz]) * 0.5
    corners = np.array([[i, j, k] for k in (-1, 1) for j in (-1, 1) for i in (-1, 1)], dtype=float) * h
    planes = np.array([[sgn * (k == 0), sgn * (k == 1), sgn * (k == 2), h[k]] for k in range(3) for sgn in (1.0, -1.0)])
    return Shape(ShapeType.BOX, np.array([h[0], h[1], h[2], 0.0]), m, inertia, corners, 0.0,
                 float(np.linalg.norm(h)), planes=planes)


@_finite
def capsule(radius: float, height: float, mass: float) -> Shape:
    """A capsule: a cylinder of ``height`` between the centres of two hemispherical caps."""
    r = check_positive("radius", radius)
    h = check_positive("height", height)
    m = check_positive("mass", mass)
    v_cyl = math.pi * r * r * h
    v_sph = 4.0 / 3.0 * math.pi * r ** 3
    mc = m * v_cyl / (v_cyl + v_sph)
    ms = m - mc
    izz = mc * r * r / 2.0 + ms * 2.0 * r * r / 5.0
    ixx = mc * (h * h / 12.0 + r * r / 4.0) + ms * (2.0 * r * r / 5.0 + h * h / 4.0 + 3.0 * h * r / 8.0)
    pts = np.array([[0.0, 0.0, -0.5 * h], [0.0, 0.0, 0.5 * h]])
    return Shape(ShapeType.CAPSULE, np.array([r, 0.5 * h, 0.0, 0.0]), m, np.diag([ixx, ixx, izz]), pts, r,
                 0.5 * h + r)


@_finite
def cylinder(radius: float, height: float, mass: float) -> Shape:
    r = check_positive("radius", radius)
    h = check_positive("height", height)
    m = check_positive("mass", mass)
    ixx = m * (3.0 * r * r + h * h) / 12.0
    ang = np.arange(CYLINDER_RIM_POINTS) * (2.0 * math.pi / CYLINDER_RIM_POINTS)
    rim = np.stack([r * np.cos(ang), r * np.sin(ang), np.zeros_like(ang)], axis=1)
    pts = np.concatenate([rim + [0.0, 0.0, -0.5 * h], rim + [0.0, 0.0, 0.5 * h]])
    caps = np.array([[0.0, 0.0, 1.0, 0.5 * h], [0.0, 0.0, -1.0, 0.5 * h]])
    return Shape(ShapeType.CYLINDER, np.array([r, 0.5 * h, 0.0, 0.0]), m, np.diag([ixx, ixx, 0.5 * m * r * r]),
                 pts, 0.0, math.hypot(r, 0.5 * h), planes=caps)


@_finite
def mesh(mesh_or_path, mass: float) -> Shape:
    """Convex hull of a ``trimesh.Trimesh`` or of a mesh file, with inertia from the hull.

    The hull is shifted so that its centre of mass sits at the link origin.
    """
    import trimesh

    m = check_positive("mass", mass)
    if isinstance(mesh_or_path, (str, bytes)) or hasattr(mesh_or_path, "__fspath__"):
        try:
            loaded = trimesh.load(mesh_or_path, force="mesh")
        except Exception as exc:  # trimesh raises many types; name the file
            raise ValueError(f"mesh_or_path: cannot load mesh file {mesh_or_path!r}: {exc}") from exc
    elif isinstance(mesh_or_path, trimesh.Trimesh):
        loaded = mesh_or_path
    else:
        raise TypeError("mesh_or_path must be a trimesh.Trimesh or a path to a mesh file, "
                        f"got {type(mesh_or_path).__name__}")
    if len(loaded.vertices) < 4 or not np.all(np.isfinite(loaded.vertices)):
        raise ValueError("mesh_or_path: the mesh needs at least 4 finite vertices")
    try:
        hull = loaded.convex_hull
    except Exception as exc:
        raise ValueError(f"mesh_or_path: cannot build a convex hull: {exc}") from exc
    if not hull.is_volume or hull.volume <= 0.0:
        raise ValueError("mesh_or_path: the convex hull has no volume (flat or degenerate mesh)")
    com = np.asarray(hull.center_mass, dtype=float)
    inertia = np.asarray(hull.moment_inertia, dtype=float) * (m / hull.mass)
    verts = np.asarray(hull.vertices, dtype=float) - com
    faces = np.asarray(hull.faces, dtype=np.int64)
    normals = np.asarray(hull.face_normals, dtype=float)
    d = np.einsum("ij,ij->i", normals, verts[faces[:, 0]])
    planes = np.unique(np.round(np.concatenate([normals, d[:, None]], axis=1), 12), axis=0)
    radius = float(np.max(np.linalg.norm(verts, axis=1)))
    return Shape(ShapeType.MESH, np.array([radius, 0.0, 0.0, 0.0]), m, inertia, verts, 0.0, radius,
                 planes=planes, vertices=verts, faces=faces)
