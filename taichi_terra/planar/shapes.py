"""Planar shapes: convex pieces, mass properties and occupancy-grid boundaries, built once with shapely.

Every shape is decomposed into convex pieces that the contact kernels test pairwise:

* a **circle** stays exact: centre and radius;
* a **convex polygon** is one piece (its vertices counter-clockwise, with the outward normal of each edge);
* a **non-convex polygon** (or one with holes) is split into the triangles of its constrained Delaunay
  triangulation (``shapely.constrained_delaunay_triangles``);
* a **line string** becomes its segments (two-vertex pieces with one normal), which is what walls and
  occupancy-map boundaries are made of.

Coordinates are in metres in the object's body frame. Mass properties (area, centre of mass, polar moment of
inertia) are taken from the same pieces, so what collides is what has mass.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import LineString, MultiLineString, MultiPolygon, Point, Polygon
from shapely.geometry.base import BaseGeometry

CIRCLE, POLYGON, SEGMENT = 0, 1, 2
_AREA_TOL = 1e-12  # [m^2] a polygon with less area is degenerate
_LENGTH_TOL = 1e-12  # [m] shorter edges are dropped


@dataclass
class Piece:
    """One convex piece in the body frame.

    ``kind`` is CIRCLE, POLYGON or SEGMENT. ``vertices`` is (n, 2) [m]: the centre for a circle (n = 1), the
    counter-clockwise corners of a polygon, the two ends of a segment. ``normals`` is (n, 2): the outward unit
    normal of the edge from vertex i to vertex i + 1 (a segment has one normal, in row 0; a circle none).
    """

    kind: int
    vertices: np.ndarray
    normals: np.ndarray
    radius: float = 0.0

    def area(self) -> float:
        if self.kind == CIRCLE:
            return math.pi * self.radius ** 2
        if self.kind == SEGMENT:
            return 0.0
        x, y = self.vertices[:, 0], self.vertices[:, 1]
        return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))

    def centroid(self) -> np.ndarray:
        if self.kind == CIRCLE:
            return self.vertices[0].copy()
        if self.kind == SEGMENT:
            return self.vertices.mean(axis=0)
        x, y = self.vertices[:, 0], self.vertices[:, 1]
        cross = x * np.roll(y, -1) - np.roll(x, -1) * y
        a6 = 3.0 * np.sum(cross)
        return np.array([np.sum((x + np.roll(x, -1)) * cross), np.sum((y + np.roll(y, -1)) * cross)]) / a6

    def polar_moment(self) -> float:
        """Polar second moment of area about the piece's own centroid [m^4] (times density: inertia)."""
        if self.kind == CIRCLE:
            return 0.5 * math.pi * self.radius ** 4
        if self.kind == SEGMENT:
            return 0.0
        v = self.vertices - self.centroid()
        x0, y0 = v[:, 0], v[:, 1]
        x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
        cross = x0 * y1 - x1 * y0
        return float(np.sum(cross * (x0 * x0 + x0 * x1 + x1 * x1 + y0 * y0 + y0 * y1 + y1 * y1)) / 12.0)

    def reach(self, point: np.ndarray) -> float:
        """Largest distance from ``point`` to the piece [m]."""
        d = np.linalg.norm(self.vertices - point, axis=1).max()
        return float(d + self.radius)


def circle_piece(center, radius: float) -> Piece:
    c = np.asarray(center, dtype=np.float64).reshape(1, 2)
    return Piece(CIRCLE, c, np.zeros((1, 2)), float(radius))


def _edge_normals(vertices: np.ndarray) -> np.ndarray:
    edges = np.roll(vertices, -1, axis=0) - vertices
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
    return normals / np.linalg.norm(normals, axis=1, keepdims=True)


def _ring(coords) -> np.ndarray:
    """Vertices of a closed ring without the repeated last point or consecutive duplicates."""
    v = np.asarray(coords, dtype=np.float64)[:-1]
    keep = np.linalg.norm(v - np.roll(v, 1, axis=0), axis=1) > _LENGTH_TOL
    return v[keep]


def _convex_piece(vertices: np.ndarray) -> Piece:
    return Piece(POLYGON, vertices, _edge_normals(vertices))


def check_polygon(name: str, polygon: Polygon) -> Polygon:
    """A valid polygon with area, oriented counter-clockwise; a ValueError naming ``name`` otherwise."""
    if polygon.is_empty or not polygon.is_valid:
        reason = shapely.is_valid_reason(polygon) if not polygon.is_empty else "empty"
        raise ValueError(f"{name} must be a simple polygon with area (no self-intersection): {reason}")
    if polygon.area <= _AREA_TOL:
        raise ValueError(f"{name} must enclose an area > {_AREA_TOL} m^2, got {polygon.area:g}")
    return shapely.geometry.polygon.orient(polygon, 1.0)


def polygon_pieces(polygon: Polygon) -> list[Piece]:
    """One convex piece, or the constrained Delaunay triangles of a non-convex polygon."""
    hull = polygon.convex_hull
    if not polygon.interiors and hull.area - polygon.area <= 1e-9 * max(polygon.area, 1e-300):
        return [_convex_piece(_ring(polygon.exterior.coords))]
    triangles = shapely.constrained_delaunay_triangles(polygon)
    out = []
    for tri in getattr(triangles, "geoms", [triangles]):
        if isinstance(tri, Polygon) and tri.area > _AREA_TOL:
            out.append(_convex_piece(_ring(shapely.geometry.polygon.orient(tri, 1.0).exterior.coords)))
    return out


def line_pieces(points: np.ndarray) -> list[Piece]:
    """The segments of a polyline, zero-length ones dropped."""
    out = []
    for p, q in itertools.pairwise(points):
        d = q - p
        length = float(np.hypot(*d))
        if length > _LENGTH_TOL:
            out.append(Piece(SEGMENT, np.array([p, q]), np.array([[d[1], -d[0]], [0.0, 0.0]]) / length))
    return out


def geometry_pieces(name: str, geometry) -> list[Piece]:
    """Convex pieces of a shapely geometry, or of a ``("circle", (cx, cy), r)`` part; ValueError on bad parts."""
    if isinstance(geometry, tuple) and len(geometry) == 3 and geometry[0] == "circle":
        center, radius = np.asarray(geometry[1], dtype=np.float64), geometry[2]
        if center.shape != (2,) or not np.all(np.isfinite(center)):
            raise ValueError(f"{name}: a circle part's centre must be 2 finite numbers, got {geometry[1]!r}")
        if not (isinstance(radius, (int, float)) and math.isfinite(radius) and radius > 0):
            raise ValueError(f"{name}: a circle part's radius must be finite and > 0, got {radius!r}")
        return [circle_piece(center, float(radius))]
    if not isinstance(geometry, BaseGeometry):
        raise TypeError(f"{name} must be shapely geometries or ('circle', (cx, cy), r) tuples, "
                        f"got {type(geometry).__name__}")
    if geometry.is_empty:
        raise ValueError(f"{name} must not be empty")
    if isinstance(geometry, Polygon):
        return polygon_pieces(check_polygon(name, geometry))
    if isinstance(geometry, LineString):
        pieces = line_pieces(np.asarray(geometry.coords, dtype=np.float64)[:, :2])
        if not pieces:
            raise ValueError(f"{name}: a line string needs two distinct points")
        return pieces
    if isinstance(geometry, Point):
        raise ValueError(f"{name}: a point has no extent; use a circle part ('circle', (x, y), r)")
    if isinstance(geometry, (MultiPolygon, MultiLineString)) or hasattr(geometry, "geoms"):
        return [p for part in geometry.geoms for p in geometry_pieces(name, part)]
    raise TypeError(f"{name}: unsupported geometry {geometry.geom_type}")


@dataclass
class MassProperties:
    """Area [m^2], centre of mass [m] (body frame) and polar moment of area about it [m^4] of a set of pieces."""

    area: float
    center: np.ndarray
    moment: float

    def inertia(self, mass: float) -> float:
        """Moment of inertia [kg m^2] of a uniform body of this shape and ``mass`` about its centre of mass."""
        return mass * self.moment / self.area if self.area > 0 else 0.0


def mass_properties(pieces: list[Piece]) -> MassProperties:
    areas = np.array([p.area() for p in pieces])
    total = float(areas.sum())
    if total <= 0.0:  # segments only: the centre of the vertices, no area
        pts = np.concatenate([p.vertices for p in pieces])
        return MassProperties(0.0, pts.mean(axis=0), 0.0)
    cents = np.array([p.centroid() for p in pieces])
    center = (areas[:, None] * cents).sum(axis=0) / total
    moment = sum(p.polar_moment() + a * float(np.sum((c - center) ** 2)) for p, a, c in zip(pieces, areas, cents))
    return MassProperties(total, center, float(moment))


@dataclass
class GridBoundary:
    """Boundary segments of an occupancy grid and the bucket index that finds those near a box.

    ``segments`` is (S, 2, 2) [m], world frame. Buckets are square cells of side ``cell`` [m] over the grid's
    extent starting at ``origin``: ``offsets`` (nbx * nby + 1,) delimit, in ``items``, the segments whose
    bounding box meets each bucket (bucket ``ix * nby + iy``).
    """

    segments: np.ndarray
    origin: np.ndarray
    cell: float
    shape: tuple
    offsets: np.ndarray = field(repr=False)
    items: np.ndarray = field(repr=False)


def _runs(mask: np.ndarray):
    """(row, start, stop) of the runs of True along axis 1 of a 2D bool array."""
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    diff = np.diff(padded, axis=1)
    rows, starts = np.nonzero(diff == 1)
    _, stops = np.nonzero(diff == -1)
    return rows, starts, stops


def grid_boundary(occupancy: np.ndarray, resolution: float, origin: np.ndarray, bucket_cells: int = 4) -> GridBoundary:
    """Boundary of the occupied cells of ``occupancy[ix, iy]`` (cell ``(ix, iy)`` covers
    ``origin + resolution * [ix, ix + 1] x [iy, iy + 1]``), as maximal straight segments, with a bucket index."""
    occ = np.asarray(occupancy, dtype=bool)
    nx, ny = occ.shape
    pad = np.zeros((nx + 2, ny + 2), dtype=bool)
    pad[1:-1, 1:-1] = occ
    segs = []
    # vertical edges at x = origin + ix * res: where column ix - 1 and column ix differ, merged along y
    vert = pad[1:, 1:-1] != pad[:-1, 1:-1]  # (nx + 1, ny)
    for ix, y0, y1 in zip(*_runs(vert)):
        x = origin[0] + ix * resolution
        segs.append([[x, origin[1] + y0 * resolution], [x, origin[1] + y1 * resolution]])
    horiz = (pad[1:-1, 1:] != pad[1:-1, :-1]).T  # (ny + 1, nx)
    for iy, x0, x1 in zip(*_runs(horiz)):
        y = origin[1] + iy * resolution
        segs.append([[origin[0] + x0 * resolution, y], [origin[0] + x1 * resolution, y]])
    segments = np.array(segs, dtype=np.float64).reshape(-1, 2, 2)
    cell = bucket_cells * resolution
    nbx, nby = max(1, math.ceil(nx / bucket_cells)), max(1, math.ceil(ny / bucket_cells))
    lists = [[] for _ in range(nbx * nby)]
    for s, seg in enumerate(segments):
        lo = np.floor((seg.min(axis=0) - origin) / cell).astype(int)
        hi = np.floor((seg.max(axis=0) - origin) / cell).astype(int)
        for bx in range(max(lo[0], 0), min(hi[0], nbx - 1) + 1):
            for by in range(max(lo[1], 0), min(hi[1], nby - 1) + 1):
                lists[bx * nby + by].append(s)
    offsets = np.zeros(nbx * nby + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in lists])
    items = np.array([s for b in lists for s in b], dtype=np.int64)
    return GridBoundary(segments, np.asarray(origin, dtype=np.float64), float(cell), (nbx, nby), offsets, items)
