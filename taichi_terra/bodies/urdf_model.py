"""The URDF parser's data types (no Taichi): :class:`ArticulatedModel` and its :class:`Link`, :class:`Joint`,
:class:`CollisionShape` and :class:`Visual`, and :class:`URDFError`. ``urdf.py`` builds them and
``tracks.py`` reads them; both import them from here."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

#: Joint types kept after fixed joints are merged, with their numbers of velocity and position coordinates.
_JOINT_DOFS = {"revolute": (1, 1), "continuous": (1, 1), "prismatic": (1, 1), "floating": (6, 7)}


class URDFError(ValueError):
    """A URDF that cannot be parsed; the message names the file, the element and the rule broken."""


@dataclass(frozen=True, eq=False)
class CollisionShape:
    """A collision shape attached to a link.

    Attributes:
        kind: "box", "sphere", "cylinder", "capsule" or "mesh".
        params: dimensions as the URDF gives them [m]: box full sizes (3,); sphere (radius,);
            cylinder and capsule (radius, length) with the axis along the shape's z (a capsule's length
            is between its end-sphere centres); mesh the scale factors (3,) [-].
        position: shape origin in the link frame [m], shape (3,).
        rotation: shape axes in the link frame (columns), shape (3, 3).
        vertices: meshes only: convex hull vertices in the shape frame after scaling [m], shape (n, 3).
        path: meshes only: the resolved mesh file path.
    """

    kind: str
    params: np.ndarray
    position: np.ndarray
    rotation: np.ndarray
    vertices: np.ndarray | None = None
    path: str | None = None


@dataclass(frozen=True, eq=False)
class Visual:
    """What a link looks like in the viewer: a shape or a mesh file, placed on the link, with a colour.

    Attributes:
        kind: "box", "sphere", "cylinder", "capsule" or "mesh".
        params: as :class:`CollisionShape`'s (a mesh's scale factors (3,)).
        position: visual origin in the link frame [m], shape (3,).
        rotation: visual axes in the link frame (columns), shape (3, 3).
        rgba: colour, red, green, blue and opacity in [0, 1], shape (4,); ``None`` where the URDF gives none.
        material: the material's name, ``None`` where the visual names none.
        filename: meshes only: the file name as the URDF writes it.
        path: meshes only: the resolved file path; ``None`` where it was not found (a warning said so).
    """

    kind: str
    params: np.ndarray
    position: np.ndarray
    rotation: np.ndarray
    rgba: np.ndarray | None = None
    material: str | None = None
    filename: str | None = None
    path: str | None = None


@dataclass(frozen=True, eq=False)
class Link:
    """A rigid link (after fixed-joint merging: the union of the merged links).

    Attributes:
        name: the link name.
        mass: [kg].
        com: centre of mass in the link frame [m], shape (3,).
        inertia: inertia tensor about the centre of mass, in link-frame axes [kg m^2], shape (3, 3).
        collisions: collision shapes, placed in the link frame.
        visuals: what the viewer draws for the link, placed in the link frame (:class:`Visual`).
    """

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    collisions: list[CollisionShape] = field(default_factory=list)
    visuals: list[Visual] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Joint:
    """A joint moving its child link relative to its parent link.

    Attributes:
        name: the joint name.
        type: "revolute", "continuous", "prismatic" or "floating".
        parent, child: link names (the parent after fixed-joint merging).
        position: joint frame origin in the parent link frame [m], shape (3,).
        rotation: joint frame axes in the parent link frame (columns), shape (3, 3).
        axis: unit joint axis in the joint frame, shape (3,).
        lower, upper: position limits [rad or m], ``None`` if unlimited (continuous, or no limit given).
        velocity: velocity limit [rad/s or m/s], ``None`` if not given.
        effort: effort limit [N m or N], ``None`` if not given.
        damping: viscous damping [N m s/rad or N s/m].
        friction: dry friction [N m or N].
        rotor_inertia: armature added to the joint's diagonal inertia [kg m^2 or kg].
    """

    name: str
    type: str
    parent: str
    child: str
    position: np.ndarray
    rotation: np.ndarray
    axis: np.ndarray
    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    effort: float | None = None
    damping: float = 0.0
    friction: float = 0.0
    rotor_inertia: float = 0.0


@dataclass(frozen=True, eq=False)
class ArticulatedModel:
    """A tree of links connected by joints, fixed joints merged.

    Attributes:
        name: the robot name.
        root: name of the root link (``links[0]``).
        links: links in a topological (depth-first) order, parent before child.
        joints: ``joints[k]`` moves ``links[k + 1]``.
        base: "floating" (the root has 6 free dofs) or "fixed" (the root is welded to the world).
        extras: children of ``<robot>`` other than links and joints, untouched.
        merged: ``{link name: (link, position (3,) [m], rotation (3, 3))}`` for each link merged away by
            fixed joints: the kept link it now belongs to and its frame's placement in that link's frame.
        source: the file name, or "<string>".
        tracks: the ``<track>`` elements, checked, with their belt geometry
            (:class:`~taichi_terra.bodies.tracks.Track`).
    """

    name: str
    root: str
    links: list[Link]
    joints: list[Joint]
    base: str
    extras: list[ET.Element]
    merged: dict[str, tuple[str, np.ndarray, np.ndarray]]
    source: str
    tracks: list = field(default_factory=list)

    @property
    def n_dof(self) -> int:
        """Number of velocity coordinates: 6 for a floating base, 1 per 1-dof joint, 6 per floating joint."""
        return (6 if self.base == "floating" else 0) + sum(_JOINT_DOFS[j.type][0] for j in self.joints)

    @property
    def n_q(self) -> int:
        """Number of position coordinates: a floating base takes 7 (position, unit quaternion (w, x, y, z)),
        a 1-dof joint 1 and a floating joint 7 (same layout as the base)."""
        return (7 if self.base == "floating" else 0) + sum(_JOINT_DOFS[j.type][1] for j in self.joints)

    @property
    def total_mass(self) -> float:
        """Sum of the link masses [kg] (merging conserves mass)."""
        return float(sum(link.mass for link in self.links))

    def link_index(self, name: str) -> int:
        """Index of link ``name`` in :attr:`links`; a merged link raises a KeyError naming its new owner."""
        for i, link in enumerate(self.links):
            if link.name == name:
                return i
        if name in self.merged:
            raise KeyError(f"link '{name}' was merged into link '{self.merged[name][0]}' by a fixed joint")
        raise KeyError(f"no link '{name}'")
