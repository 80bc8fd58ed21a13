"""Tracks in a URDF: the ``<track>`` element, its rules and the belt's collision geometry (no Taichi).

A track (``spec/tracks.md``) is a belt wrapped around two or more wheels of one link, moved by the joints
its drives name (belt speed ``s = g^T u``). :func:`parse_tracks` reads the ``<track>`` children that
:func:`~taichi_terra.bodies.urdf.parse_urdf` keeps in :attr:`ArticulatedModel.extras`, checks every rule of
the spec and builds the belt's collision shapes in the frame of the link that carries it (after fixed
joints are merged):

* a cylinder around each wheel that the belt wraps over an arc (radius: the wheel's plus the belt's
  thickness; ``width`` long, along the track axis); a wheel that only touches a straight run (a road wheel
  between two of the same size) adds none;
* a box along each straight run between two wrapped wheels, from the belt's outer surface inwards to the
  nearer wheel centre, so the track is solid between its upper and lower runs.

The wheels' discs, grown by the thickness, are taken in the plane through the first wheel centre normal to
the axis; the belt is the convex hull of those discs, walked counter-clockwise seen from ``+axis`` (the
direction a positive belt speed runs it).

``<track>`` attributes and children: ``name``, ``link``, ``width`` [m] (> 0), ``thickness`` [m] (>= 0),
``material``, ``color`` ("r g b a"), ``visual`` ("true"/"false"); ``<axis xyz>``; two or more ``<wheel>``
with ``radius`` [m] (> 0) and either ``joint`` (a movable child joint of the link: the centre is its origin
and its axis must be parallel to the track's) or ``xyz`` (a point in the link frame); one or more
``<drive joint gain>`` (at most four; a revolute, continuous or prismatic joint; a finite, nonzero gain:
belt speed per unit joint velocity [m/rad or m/m]).
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from .urdf_model import ArticulatedModel, CollisionShape, URDFError

#: relative tolerance of the geometric rules (wheels inside others, discs touching the belt's runs)
_GEOM_RTOL = 1e-9
#: wheel centres further than this, relative to the track's size, from the first wheel's plane are off it
_PLANE_RTOL = 1e-6
_MOVABLE = ("revolute", "continuous", "prismatic")
#: drives of one track at most (the step holds them in fixed slots: kernels/common/arrays.py TRACK_DRIVES)
MAX_DRIVES = 4


@dataclass(frozen=True, eq=False)
class TrackWheel:
    """A wheel the belt wraps: its centre in the carrying link's frame [m], radius [m], and the joint whose
    origin gave the centre (``None``: given by ``xyz``)."""

    center: np.ndarray
    radius: float
    joint: str | None = None


@dataclass(frozen=True, eq=False)
class TrackDrive:
    """A joint that moves the belt, and its gain: belt speed per unit joint velocity [m/rad or m/m]."""

    joint: str
    gain: float


@dataclass(frozen=True, eq=False)
class Track:
    """A belt around wheels of one link.

    Attributes:
        name: the track's name (unique in the robot).
        link: the link that carries the belt (after fixed joints are merged).
        axis: unit axis the wheels turn about, in the link frame, shape (3,).
        width: belt width along the axis [m].
        thickness: belt thickness outside the wheels [m].
        material: collision material name, or ``None``.
        color: RGBA of the belt's visual, shape (4,), or ``None``.
        visual: whether the belt is drawn.
        wheels: the wheels, in the file's order.
        drives: the drives, in the file's order.
        wrapped: indices into ``wheels`` of the wheels on the belt's loop, counter-clockwise seen from
            ``+axis``.
        shapes: the belt's collision shapes in the link frame: one cylinder per wheel wrapped over an arc,
            then one box per straight run.
    """

    name: str
    link: str
    axis: np.ndarray
    width: float
    thickness: float
    material: str | None
    color: np.ndarray | None
    visual: bool
    wheels: list[TrackWheel]
    drives: list[TrackDrive]
    wrapped: list[int] = field(default_factory=list)
    shapes: list[CollisionShape] = field(default_factory=list)
    loop: list = field(default_factory=list)

    def perimeter(self) -> float:
        """Length of the belt's outer surface around the loop [m]."""
        return float(sum(np.linalg.norm(p[2] - p[1]) if p[0] == "run" else p[2] * p[4] for p in self.loop))

    def marks(self, travel: float, spacing: float) -> np.ndarray:
        """Tread marks across the belt's outer surface in the link frame, shape (k, 2, 3) [m]: k about
        ``spacing`` [m] apart (evenly, a whole number around the loop), each from one edge of the belt to
        the other, moved ``travel`` [m] along the loop in the direction a positive belt speed runs it (the
        belt's travel is ``g^T q`` of its drives' coordinates)."""
        perimeter = self.perimeter()
        k = max(1, int(round(perimeter / spacing)))
        at = np.mod(np.arange(k) * (perimeter / k) + travel, perimeter)
        points = np.empty((k, 3))
        start = 0.0
        for piece in self.loop:
            if piece[0] == "run":
                length = float(np.linalg.norm(piece[2] - piece[1]))
                inside = (at >= start) & (at < start + length)
                f = (at[inside] - start) / length
                points[inside] = piece[1] + f[:, None] * (piece[2] - piece[1])
            else:
                _kind, centre, radius, n0, sweep = piece
                length = radius * sweep
                inside = (at >= start) & (at < start + length)
                angle = (at[inside] - start) / radius
                side = np.cross(self.axis, n0)
                points[inside] = centre + radius * (np.cos(angle)[:, None] * n0 + np.sin(angle)[:, None] * side)
            start += length
        half = 0.5 * self.width * self.axis
        return np.stack([points - half, points + half], axis=1)


def parse_tracks(model: ArticulatedModel) -> list[Track]:
    """The tracks of ``model`` (its ``<track>`` extras), checked and with their belt geometry.

    Raises:
        URDFError: a track breaks a rule; the message names the file, the track and the rule.
    """
    tracks = [_parse_track(model, elem) for elem in model.extras if elem.tag == "track"]
    seen = set()
    for t in tracks:
        if t.name in seen:
            raise URDFError(f"{model.source}: track '{t.name}': duplicate track name")
        seen.add(t.name)
    return tracks


def _error(model: ArticulatedModel, name: str, rule: str) -> URDFError:
    return URDFError(f"{model.source}: track '{name}': {rule}")


def _numbers(model, name, elem: ET.Element, attr: str, n: int) -> np.ndarray:
    text = elem.get(attr)
    if text is None:
        raise _error(model, name, f"<{elem.tag}> lacks the required '{attr}' attribute")
    try:
        values = np.array([float(s) for s in text.split()], dtype=np.float64)
    except ValueError:
        values = None
    if values is None or values.size != n or not np.all(np.isfinite(values)):
        raise _error(model, name, f"{attr}=\"{text}\" of <{elem.tag}> must be {n} finite number(s)")
    return values


def _parse_track(model: ArticulatedModel, elem: ET.Element) -> Track:
    name = elem.get("name")
    if not name:
        raise URDFError(f"{model.source}: track (unnamed): <track> lacks the 'name' attribute")
    link_name = elem.get("link")
    if not link_name:
        raise _error(model, name, "<track> lacks the 'link' attribute")
    kept = {link.name: link for link in model.links}
    if link_name in kept:
        link, p, r = link_name, np.zeros(3), np.eye(3)
    elif link_name in model.merged:
        link, p, r = model.merged[link_name]
    else:
        raise _error(model, name, f"unknown link '{link_name}'")
    width = float(_numbers(model, name, elem, "width", 1)[0])
    if width <= 0.0:
        raise _error(model, name, f"width must be > 0, got {width!r}")
    thickness = float(_numbers(model, name, elem, "thickness", 1)[0]) if elem.get("thickness") is not None else 0.0
    if thickness < 0.0:
        raise _error(model, name, f"thickness must be >= 0, got {thickness!r}")
    color = _numbers(model, name, elem, "color", 4) if elem.get("color") is not None else None
    visual_text = elem.get("visual", "true").strip().lower()
    if visual_text not in ("true", "false"):
        raise _error(model, name, f"visual must be 'true' or 'false', got {elem.get('visual')!r}")
    axis_elem = elem.find("axis")
    if axis_elem is None:
        raise _error(model, name, "<track> lacks its <axis>")
    axis = r @ _numbers(model, name, axis_elem, "xyz", 3)
    if np.linalg.norm(axis) == 0.0:
        raise _error(model, name, "the <axis> must not be zero")
    axis = axis / np.linalg.norm(axis)
    joints = {j.name: j for j in model.joints}
    wheels = []
    for w in elem.findall("wheel"):
        radius = float(_numbers(model, name, w, "radius", 1)[0])
        if radius <= 0.0:
            raise _error(model, name, f"a wheel radius must be > 0, got {radius!r}")
        jname = w.get("joint")
        if jname is not None and w.get("xyz") is not None:
            raise _error(model, name, "a <wheel> takes either 'joint' or 'xyz', not both")
        if jname is not None:
            joint = joints.get(jname)
            if joint is None:
                raise _error(model, name, f"wheel joint '{jname}' is not a movable joint of the robot")
            if joint.parent != link:
                raise _error(model, name, f"wheel joint '{jname}' is not a child joint of link '{link_name}'")
            jaxis = joint.rotation @ joint.axis
            if np.linalg.norm(np.cross(jaxis, axis)) > 1e-6:
                raise _error(model, name, f"the axis of wheel joint '{jname}' is not parallel to the track's axis")
            child = kept[joint.child]
            if child.collisions:
                raise _error(model, name, f"wheel link '{joint.child}' has its own collision geometry (the belt is "
                                          f"the contact surface: remove the wheel's <collision>)")
            wheels.append(TrackWheel(joint.position.copy(), radius, jname))
        else:
            wheels.append(TrackWheel(p + r @ _numbers(model, name, w, "xyz", 3), radius))
    if len(wheels) < 2:
        raise _error(model, name, f"a track needs at least two <wheel>, got {len(wheels)}")
    drives = []
    for d in elem.findall("drive"):
        jname = d.get("joint")
        if not jname:
            raise _error(model, name, "<drive> lacks the 'joint' attribute")
        joint = joints.get(jname)
        if joint is None or joint.type not in _MOVABLE:
            raise _error(model, name, f"drive joint '{jname}' is not a revolute, continuous or prismatic joint of "
                                      f"the robot")
        gain = float(_numbers(model, name, d, "gain", 1)[0])
        if gain == 0.0:
            raise _error(model, name, f"drive joint '{jname}' has a zero gain")
        drives.append(TrackDrive(jname, gain))
    if not drives:
        raise _error(model, name, "a track needs at least one <drive> (an idler belt: a passive joint with no "
                                  "gains)")
    if len(drives) > MAX_DRIVES:
        raise _error(model, name, f"a track takes at most {MAX_DRIVES} <drive> elements, got {len(drives)}")
    wrapped, shapes, loop = _belt_geometry(model, name, wheels, axis, width, thickness)
    return Track(name=name, link=link, axis=axis, width=width, thickness=thickness, material=elem.get("material"),
                 color=color, visual=visual_text == "true", wheels=wheels, drives=drives, wrapped=wrapped,
                 shapes=shapes, loop=loop)


def _plane_basis(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors ``e1, e2`` with ``(e1, e2, axis)`` right-handed."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = helper - axis * (helper @ axis)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(axis, e1)


def _belt_geometry(model: ArticulatedModel, name: str, wheels: list[TrackWheel], axis: np.ndarray, width: float,
                   thickness: float) -> tuple[list[int], list[CollisionShape], list]:
    """Check the wheels' layout; the wrapped wheels, the belt's shapes and the loop of its outer surface
    (:class:`Track`): counter-clockwise seen from ``+axis``, a ``("run", start, end)`` per straight run and an
    ``("arc", centre, radius, start direction, angle)`` around each wrapped wheel, in the link frame."""
    centers = np.array([w.center for w in wheels])
    radii = np.array([w.radius for w in wheels]) + thickness
    scale = max(float(np.ptp(centers, axis=0).max()), float(radii.max()))
    off = (centers - centers[0]) @ axis
    if np.abs(off).max() > _PLANE_RTOL * scale:
        k = int(np.argmax(np.abs(off)))
        raise _error(model, name, f"wheel {k} lies {abs(off[k]):.3g} m off the plane of the first wheel, normal "
                                  f"to the axis (all wheels must be in one plane)")
    e1, e2 = _plane_basis(axis)
    c2 = np.stack([(centers - centers[0]) @ e1, (centers - centers[0]) @ e2], axis=1)
    n = len(c2)
    for i in range(n):
        for j in range(n):
            if i != j and np.linalg.norm(c2[i] - c2[j]) + wheels[i].radius <= \
                    wheels[j].radius * (1.0 + _GEOM_RTOL):
                raise _error(model, name, f"wheel {i} lies inside wheel {j}")
    runs = _hull_of_discs(c2, radii, _GEOM_RTOL * scale)
    on_hull = {k for _i, _j, _nrm, touching in runs for k in touching}
    for i in range(n):
        if i not in on_hull:
            raise _error(model, name, f"wheel {i} lies inside the belt (a rigid belt wraps the convex hull of "
                                      f"its wheels: move the wheel out to the belt or remove it)")
    # every run starts where the one before it ended, on an arc of that wheel (the runs' normals differ); the
    # wheels between a run's ends only touch it
    rot = np.stack([e1, e2, axis], axis=1)  # a cylinder's axis (its z) along the track axis
    wrapped = [i for i, _j, _nrm, _t in runs]
    shapes = [CollisionShape("cylinder", np.array([radii[i], width]), centers[i].copy(), rot) for i in wrapped]
    for i, j, nrm, _touching in runs:
        a = c2[i] + radii[i] * nrm
        b = c2[j] + radii[j] * nrm
        length = float(np.linalg.norm(b - a))
        depth = float(min(radii[i], radii[j]))
        mid2 = 0.5 * (a + b) - 0.5 * depth * nrm
        t2 = (b - a) / length
        t3 = t2[0] * e1 + t2[1] * e2
        n3 = nrm[0] * e1 + nrm[1] * e2
        center = centers[0] + mid2[0] * e1 + mid2[1] * e2
        box_rot = np.stack([t3, axis, n3], axis=1)  # x along the run, y along the axis, z outwards
        shapes.append(CollisionShape("box", np.array([length, width, depth]), center, box_rot))
    loop = []
    to3 = lambda v2: v2[0] * e1 + v2[1] * e2  # noqa: E731
    for k, (i, j, nrm, _touching) in enumerate(runs):
        loop.append(("run", centers[0] + to3(c2[i] + radii[i] * nrm), centers[0] + to3(c2[j] + radii[j] * nrm)))
        nxt = runs[(k + 1) % len(runs)][2]  # the arc around wheel j turns from this run's normal to the next's
        sweep = math.atan2(nrm[0] * nxt[1] - nrm[1] * nxt[0], nrm @ nxt) % (2.0 * math.pi)
        loop.append(("arc", centers[0] + to3(c2[j]), float(radii[j]), to3(nrm), sweep))
    return wrapped, shapes, loop


def _hull_of_discs(c: np.ndarray, r: np.ndarray, tol: float) -> list[tuple[int, int, np.ndarray, list[int]]]:
    """The straight runs of the convex hull of discs (centres ``c`` (n, 2), radii ``r``), counter-clockwise:
    ``(i, j, normal, touching)``, the run from disc ``i`` to disc ``j`` with its outward unit ``normal`` and
    every disc it touches, in order along it (more than two where discs line up, as road wheels do).

    The runs lie on the common outer tangents ``n . c_i + r_i = n . c_j + r_j`` that no disc crosses; a
    counter-clockwise loop has its outward normal on the right of the direction of travel, and the normals
    turn counter-clockwise along it."""
    n = len(c)
    found = []  # (angle of the normal, normal, a disc on the run)
    for i in range(n):
        for j in range(n):
            d = c[j] - c[i]
            dist = float(np.linalg.norm(d))
            if i == j or dist == 0.0:
                continue
            u = d / dist
            perp = np.array([u[1], -u[0]])  # right of the direction i -> j
            s = (r[i] - r[j]) / dist
            nrm = s * u + math.sqrt(max(0.0, 1.0 - s * s)) * perp
            if np.all(c @ nrm + r <= nrm @ c[i] + r[i] + tol):
                angle = math.atan2(nrm[1], nrm[0])
                found.append((angle + 2.0 * math.pi if angle < 1e-12 - math.pi else angle, nrm, i))
    found.sort(key=lambda x: x[0])
    runs = []
    for k, (angle, nrm, i) in enumerate(found):
        if k > 0 and angle - found[k - 1][0] <= 1e-12:
            continue  # (the same line, from another pair of the discs on it)
        t = np.array([-nrm[1], nrm[0]])  # the direction of travel
        h = nrm @ c[i] + r[i]
        touching = sorted((m for m in range(n) if c[m] @ nrm + r[m] >= h - tol), key=lambda m: c[m] @ t)
        runs.append((touching[0], touching[-1], nrm, touching))
    return runs
