"""URDF parser: a plain-Python, SI-unit description of an articulated system (no Taichi).

:func:`parse_urdf` reads a URDF file or string into an :class:`ArticulatedModel`: links in a
depth-first order (parent before child, siblings in the file order of their joints), one :class:`Joint`
per non-root link, mass properties in the link frames and collision shapes with their placements.
Fixed joints are merged into their parent (mass, centre of mass and inertia combined by the
parallel-axis theorem, collision shapes and child joints re-attached with the composed placement); the
merged links stay resolvable through :attr:`ArticulatedModel.merged`.

The parser is written on the standard library's :mod:`xml.etree.ElementTree` rather than on
yourdfpy (0.0.60), because yourdfpy drops unknown elements (a later ``<track>`` parser needs them),
returns ``<dynamics>`` values as strings and silently accepts a missing parent link, duplicate link
names and cycles. trimesh (and scipy, for the convex hull) are imported only when a collision mesh has to
be read.

Conventions and leniencies:

* ``<origin xyz rpy>``: both default to zero; the rotation is ``R = Rz(yaw) Ry(pitch) Rx(roll)``
  (fixed-axis roll, pitch, yaw), mapping child-frame vectors into the parent frame.
* A joint's frame is its child link's frame, so a movable link's frame is its joint frame.
* A revolute or prismatic joint without ``<limit>`` (URDF requires one, many files omit it) is
  unlimited: ``lower``, ``upper``, ``velocity`` and ``effort`` are ``None``. A continuous joint has no
  position limits even if ``<limit lower upper>`` is given.
* ``<axis>`` defaults to (1, 0, 0) and is normalised; a zero axis is an error on revolute, continuous
  and prismatic joints only (exporters write ``<axis xyz="0 0 0"/>`` on fixed joints).
* ``<dynamics>`` may carry a ``rotor_inertia`` (armature) attribute besides ``damping`` and
  ``friction``; all three default to 0.
* ``<capsule radius length>`` is accepted as a collision shape (axis z, ``length`` between the centres
  of the end spheres). A mesh ``scale`` may be one number or three.
* ``<visual>`` elements are read for drawing only (:class:`Visual`; the physics never reads them): origin,
  geometry (the collision shapes' kinds) and colour, from an inline ``<material>`` (``<color rgba>``, or a
  ``<texture filename>`` whose mean colour stands for it) or from a ``<material name>`` defined under
  ``<robot>``. A visual mesh file that cannot be found is a warning naming the file and the link, not an
  error: the viewer then draws that link's collision shapes (``viewer/links.py``). The file is read only
  when it is drawn.
* A link without ``<inertial>`` (or ``<mass>``) has mass 0; a missing ``<inertia>`` attribute is 0
  (urdfdom requires all six). Negative masses and inertias that are not positive semi-definite are errors
  on every link. After merging, every link that moves (all of them, except
  the root when ``base="fixed"``) must have a positive mass and a symmetric positive definite inertia
  whose principal moments satisfy the triangle inequality.
* Every child of ``<robot>`` other than ``<link>`` and ``<joint>`` (``<material>``, ``<transmission>``,
  ``<gazebo>``, ``<track>``, ...) is kept untouched in :attr:`ArticulatedModel.extras`. ``<track>`` elements
  are also read, checked and given their belt geometry (``tracks.py``): :attr:`ArticulatedModel.tracks`.

Every problem raises :class:`URDFError`, whose message names the file (or ``<string>``), the element
and the rule broken.

Compared with Pinocchio's URDF reader (checked in ``tests/test_urdf.py``): the merged mass properties,
joint placements and merged-link frames agree, but Pinocchio orders siblings by joint name, gives a
continuous joint two position coordinates (cos, sin), stores a free-flyer quaternion as (x, y, z, w) and
does not read ``rotor_inertia``.
"""
from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np

from ..validation import real_limits
from .tracks import parse_tracks
from .urdf_model import _JOINT_DOFS, ArticulatedModel, CollisionShape, Joint, Link, URDFError, Visual

#: Joint types with a meaningful axis.
_AXIS_JOINTS = ("revolute", "continuous", "prismatic")
#: Collision shapes and the attributes giving their ``params``.
_SHAPE_PARAMS = {"box": ("size",), "sphere": ("radius",), "cylinder": ("radius", "length"),
                 "capsule": ("radius", "length"), "mesh": ()}
#: Relative tolerance of the inertia checks (negative principal moments, triangle inequality).
_INERTIA_RTOL = 1e-6


def rpy_matrix(rpy) -> np.ndarray:
    """Rotation matrix ``Rz(yaw) Ry(pitch) Rx(roll)`` of URDF angles ``(roll, pitch, yaw)`` [rad]."""
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def parse_urdf(source, *, package_dirs=(), base: str = "floating") -> ArticulatedModel:
    """Parse a URDF into an :class:`ArticulatedModel` with fixed joints merged.

    Args:
        source: a file path (str or path-like) or the XML text itself (a str holding a ``<``).
        package_dirs: directories used to resolve ``package://pkg/path`` mesh names: each directory
            either contains ``pkg/`` or is itself named ``pkg``.
        base: "floating" or "fixed" (the root welded to the world; it may then be massless).

    Raises:
        URDFError: the URDF breaks a rule (the message names the file, the element and the rule).
    """
    if base not in ("floating", "fixed"):
        raise ValueError(f"base must be 'floating' or 'fixed', got {base!r}")
    dirs = _directories("package_dirs", package_dirs)
    if isinstance(source, str) and ("<" in source or not source.strip()):
        if not source.strip():
            raise URDFError("<string>: the URDF text is empty (source is a file path or the URDF's XML text)")
        fname, base_dir, text = "<string>", os.getcwd(), source.lstrip()
    else:
        fname = os.fspath(source)
        base_dir = os.path.dirname(os.path.abspath(fname))
        try:
            with open(fname, "rb") as f:
                text = f.read()
        except (OSError, ValueError) as e:  # (ValueError: a NUL byte in the path)
            raise URDFError(f"{fname}: cannot read the URDF file: {getattr(e, 'strerror', None) or e}") from None
    return _Parser(fname, base_dir, dirs).parse(text, base)


def make_chain_urdf(n_links: int, *, length: float = 0.1, radius: float = 0.01, mass: float = 0.1) -> str:
    """URDF text of a chain hanging along -z: a massless ``base`` and ``n_links`` capsule rods ``link1``..,
    each on a revolute joint ``joint<i>`` whose axis alternates between x and y.

    Args:
        n_links: number of movable links (and of joints).
        length: rod length and joint spacing [m].
        radius: rod radius [m].
        mass: rod mass [kg].
    """
    i_perp = mass * (3 * radius**2 + length**2) / 12
    i_axial = mass * radius**2 / 2
    parts = ['<robot name="chain">', '  <link name="base"/>']
    for i in range(1, n_links + 1):
        parent = "base" if i == 1 else f"link{i - 1}"
        z0 = 0.0 if i == 1 else -length
        axis = "1 0 0" if i % 2 else "0 1 0"
        parts += [
            f'  <link name="link{i}">',
            f'    <inertial><origin xyz="0 0 {-length / 2!r}"/><mass value="{mass!r}"/>',
            f'      <inertia ixx="{i_perp!r}" iyy="{i_perp!r}" izz="{i_axial!r}" ixy="0" ixz="0" iyz="0"/>',
            "    </inertial>",
            f'    <collision><origin xyz="0 0 {-length / 2!r}"/>',
            f'      <geometry><capsule radius="{radius!r}" length="{length!r}"/></geometry></collision>',
            "  </link>",
            f'  <joint name="joint{i}" type="revolute"><parent link="{parent}"/><child link="link{i}"/>',
            f'    <origin xyz="0 0 {z0!r}"/><axis xyz="{axis}"/>',
            '    <limit lower="-3.14" upper="3.14" effort="10" velocity="10"/></joint>',
        ]
    parts.append("</robot>")
    return "\n".join(parts) + "\n"


def _directories(name: str, dirs) -> tuple[str, ...]:
    """``dirs`` (a list of str or path-like directories, not one str) as a tuple of str."""
    if isinstance(dirs, (str, bytes)) or not hasattr(dirs, "__iter__"):
        raise TypeError(f"{name} must be a list of directories (str or path-like), got {dirs!r}")
    dirs = list(dirs)
    bad = [d for d in dirs if not isinstance(d, str) and not hasattr(d, "__fspath__")]
    if bad:
        raise TypeError(f"{name} must hold directories (str or path-like), got {bad[0]!r}")
    return tuple(str(os.fspath(d)) for d in dirs)


class _Parser:
    """One parse: the file name for messages and the directories that resolve mesh file names."""

    def __init__(self, fname: str, base_dir: str, package_dirs: tuple[str, ...]):
        self.fname = fname
        self.base_dir = base_dir
        self.package_dirs = package_dirs
        #: ``{name: rgba or None}`` of the materials defined under ``<robot>``
        self.materials: dict[str, np.ndarray | None] = {}

    def error(self, element: str, rule: str) -> URDFError:
        return URDFError(f"{self.fname}: {element}: {rule}")

    # ---------------------------------------------------------------- document

    def parse(self, text, base: str) -> ArticulatedModel:
        try:
            robot = ET.fromstring(text)
        except ET.ParseError as e:
            raise self.error("XML", f"malformed XML ({e})") from None
        if robot.tag != "robot":
            raise self.error(f"<{robot.tag}>", "the root element must be <robot>")
        name = robot.get("name", "")
        for elem in robot.findall("material"):  # (before the links: a visual may name one defined after it)
            self.materials[self.material_name(elem, "robot")] = self.material_rgba(elem, "robot")
        links: dict[str, Link] = {}
        joints: dict[str, Joint] = {}
        extras: list[ET.Element] = []
        for elem in robot:
            if elem.tag == "link":
                link = self.parse_link(elem)
                if link.name in links:
                    raise self.error(f"link '{link.name}'", "duplicate link name")
                links[link.name] = link
            elif elem.tag == "joint":
                joint = self.parse_joint(elem)
                if joint.name in joints:
                    raise self.error(f"joint '{joint.name}'", "duplicate joint name")
                joints[joint.name] = joint
            else:
                extras.append(elem)
        if not links:
            raise self.error(f"robot '{name}'", "the robot has no <link>")
        order, parent_joint = self.tree(links, joints)
        kept_links, kept_joints, merged = self.merge(order, links, parent_joint)
        for link in kept_links[1 if base == "fixed" else 0:]:
            self.check_movable(link, merged)
        model = ArticulatedModel(name=name, root=order[0], links=kept_links, joints=kept_joints, base=base,
                                 extras=extras, merged=merged, source=self.fname)
        return replace(model, tracks=parse_tracks(model))

    # ---------------------------------------------------------------- attributes

    def numbers(self, elem: ET.Element, attr: str, n: int, default, where: str) -> np.ndarray:
        """Attribute ``attr`` of ``elem`` as ``n`` finite floats; ``default`` if absent (``None``: required)."""
        text = elem.get(attr)
        if text is None:
            if default is None:
                raise self.error(where, f"<{elem.tag}> lacks the required '{attr}' attribute")
            return np.array(default, dtype=np.float64).reshape(n)
        try:
            values = np.array([float(s) for s in text.split()], dtype=np.float64)
        except ValueError:
            values = None
        if values is None or values.size != n or not np.all(np.isfinite(values)):
            raise self.error(where, f"{attr}=\"{text}\" of <{elem.tag}> must be {n} finite number(s)")
        return values

    def number(self, elem: ET.Element, attr: str, default: float | None, where: str, required: bool = False):
        """Attribute ``attr`` as one finite float; ``default`` if absent and not ``required``."""
        if elem.get(attr) is None and not required:
            return default
        return float(self.numbers(elem, attr, 1, None, where)[0])

    def origin(self, parent: ET.Element, where: str) -> tuple[np.ndarray, np.ndarray]:
        """Position [m] and rotation of the ``<origin>`` child of ``parent`` (identity if absent)."""
        elem = parent.find("origin")
        if elem is None:
            return np.zeros(3), np.eye(3)
        rpy = self.numbers(elem, "rpy", 3, (0, 0, 0), where)
        return self.numbers(elem, "xyz", 3, (0, 0, 0), where), rpy_matrix(rpy)

    # ---------------------------------------------------------------- links

    def parse_link(self, elem: ET.Element) -> Link:
        name = elem.get("name")
        if not name:
            raise self.error("link (unnamed)", "<link> lacks the 'name' attribute")
        where = f"link '{name}'"
        mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        inertial = elem.find("inertial")
        if inertial is not None:
            com, rot = self.origin(inertial, where)
            mass_elem = inertial.find("mass")
            if mass_elem is not None:
                mass = self.number(mass_elem, "value", None, where, required=True)
            if mass < 0:
                raise self.error(where, f"mass {mass!r} must be >= 0")
            inertia_elem = inertial.find("inertia")
            if inertia_elem is not None:
                ixx, ixy, ixz, iyy, iyz, izz = (self.number(inertia_elem, a, 0.0, where)
                                                for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
                inertia = rot @ np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]) @ rot.T
            eig = np.linalg.eigvalsh(inertia)
            if eig[0] < -_INERTIA_RTOL * max(abs(eig[-1]), 1e-300):
                raise self.error(where, f"inertia must be positive semi-definite (principal moments {eig})")
        collisions = [self.parse_collision(c, where) for c in elem.findall("collision")]
        visuals = [self.parse_visual(v, where) for v in elem.findall("visual")]
        return Link(name=name, mass=mass, com=com, inertia=inertia, collisions=collisions, visuals=visuals)

    def geometry(self, elem: ET.Element, where: str, what: str) -> tuple[str, np.ndarray, str | None]:
        """The shape of the ``<geometry>`` of ``elem`` (a ``<collision>`` or ``<visual>``, named ``what`` in
        messages): its kind, its params (:class:`CollisionShape`) and, for a mesh, its file name."""
        geometry = elem.find("geometry")
        shape = None if geometry is None else next((g for g in geometry if g.tag in _SHAPE_PARAMS), None)
        if shape is None:
            found = [] if geometry is None else [f"<{g.tag}>" for g in geometry]
            raise self.error(where, f"{what} <geometry> has no known shape child (box, sphere, cylinder, "
                                    f"capsule or mesh); found {', '.join(found) or 'none'}")
        kind = shape.tag
        if kind == "mesh":
            filename = shape.get("filename")
            if not filename:
                raise self.error(where, "<mesh> lacks the required 'filename' attribute")
            n_scale = 1 if len(shape.get("scale", "").split()) == 1 else 3
            scale = self.numbers(shape, "scale", n_scale, np.ones(n_scale), where) * np.ones(3)
            if np.any(scale == 0.0):
                raise self.error(where, f"<mesh> scale must not be zero, got {scale}")
            return kind, scale, filename
        if kind == "box":
            params = self.numbers(shape, "size", 3, None, where)
        else:
            params = np.array([self.number(shape, a, None, where, required=True) for a in _SHAPE_PARAMS[kind]])
        if np.any(params <= 0):
            raise self.error(where, f"<{kind}> dimensions must be > 0, got {params}")
        return kind, params, None

    def parse_collision(self, elem: ET.Element, where: str) -> CollisionShape:
        position, rotation = self.origin(elem, where)
        kind, params, filename = self.geometry(elem, where, "collision")
        if kind == "mesh":
            path = self.resolve_mesh(filename, where)
            return CollisionShape(kind, params, position, rotation, vertices=self.hull(path, params, where), path=path)
        return CollisionShape(kind, params, position, rotation)

    def parse_visual(self, elem: ET.Element, where: str) -> Visual:
        """A ``<visual>``: its placement, shape and colour. A mesh file that cannot be found is a warning (the
        viewer draws the link's collision shapes instead); the file is read only when drawn."""
        position, rotation = self.origin(elem, where)
        kind, params, filename = self.geometry(elem, where, "visual")
        path = None
        if kind == "mesh":
            try:
                path = self.resolve_mesh(filename, where)
            except URDFError as e:
                warnings.warn(f"{e}; the viewer draws the link's collision shapes instead", UserWarning,
                              stacklevel=2)
        rgba, material = None, None
        m = elem.find("material")
        if m is not None:
            material = m.get("name") or None
            if m.find("color") is not None or m.find("texture") is not None:
                rgba = self.material_rgba(m, where)
            else:  # (a name defined nowhere, as exporters write: no colour, the viewer's own)
                rgba = self.materials.get(material)
        return Visual(kind, params, position, rotation, rgba=rgba, material=material, filename=filename, path=path)

    def material_name(self, elem: ET.Element, where: str) -> str:
        name = elem.get("name")
        if not name:
            raise self.error(where, "a <material> under <robot> lacks the 'name' attribute")
        return name

    def material_rgba(self, elem: ET.Element, where: str) -> np.ndarray | None:
        """The colour of a ``<material>``: its ``<color rgba>`` (four numbers in [0, 1]), else the mean colour of
        its ``<texture filename>`` (a warning where that cannot be read), else None."""
        color = elem.find("color")
        if color is not None:
            rgba = self.numbers(color, "rgba", 4, None, where)
            if rgba.min() < 0.0 or rgba.max() > 1.0:
                raise self.error(where, f"<color rgba=\"{color.get('rgba')}\"> must be four numbers in [0, 1]")
            return rgba
        texture = elem.find("texture")
        if texture is None or not texture.get("filename"):
            return None
        try:
            path = self.resolve_mesh(texture.get("filename"), where)
            from PIL import Image

            with Image.open(path) as image:
                pixels = np.asarray(image.convert("RGBA"), np.float64).reshape(-1, 4) / 255.0
            return pixels.mean(axis=0)
        except Exception as e:  # (not found, or not an image PIL reads)
            warnings.warn(f"{self.fname}: {where}: cannot read texture '{texture.get('filename')}' for its colour "
                          f"({e}); the viewer uses its own colour", UserWarning, stacklevel=2)
            return None

    def resolve_mesh(self, filename: str, where: str) -> str:
        """Path of a mesh (or texture) file: ``package://pkg/rest`` through the package directories, ``file://`` and
        relative names against the URDF's directory (the cwd for a string)."""
        if filename.startswith("package://"):
            pkg, _, rest = filename[len("package://"):].partition("/")
            tried = []
            for d in self.package_dirs:
                tried.append(os.path.join(d, pkg, rest))
                if os.path.basename(os.path.normpath(d)) == pkg:
                    tried.append(os.path.join(d, rest))
            for path in tried:
                if os.path.isfile(path):
                    return path
            raise self.error(where, f"mesh '{filename}' not found; tried {tried or 'nothing (no package_dirs)'}")
        if filename.startswith("file://"):
            filename = filename[len("file://"):]
        path = os.path.join(self.base_dir, filename)
        if not os.path.isfile(path):
            raise self.error(where, f"mesh file '{path}' not found")
        return path

    def hull(self, path: str, scale: np.ndarray, where: str) -> np.ndarray:
        """Convex hull vertices [m] of the mesh file at ``path`` after scaling, shape (n, 3)."""
        import trimesh
        from scipy.spatial import ConvexHull, QhullError

        try:
            points = np.asarray(trimesh.load(path, force="mesh").vertices, dtype=np.float64) * scale
        except Exception as e:  # trimesh raises many types on unreadable files
            raise self.error(where, f"cannot read mesh file '{path}': {e}") from None
        if len(points) == 0:
            raise self.error(where, f"cannot read mesh file '{path}': no vertices")
        centred = points - points.mean(axis=0)
        if np.linalg.matrix_rank(centred, tol=1e-9 * np.abs(centred).max()) < 3:
            raise self.error(where, f"mesh file '{path}' has no volume (its {len(points)} vertices are coplanar)")
        try:
            return points[ConvexHull(points).vertices]
        except QhullError as e:
            raise self.error(where, f"mesh file '{path}' has no convex hull: {e}") from None

    def check_movable(self, link: Link, merged: dict) -> None:
        """A link that moves needs a positive mass and a physical inertia about its centre of mass."""
        names = [n for n, (owner, _, _) in merged.items() if owner == link.name]
        where = f"link '{link.name}'" + (f" (with merged links {names})" if names else "")
        if link.mass <= 0:
            raise self.error(where, "a moving link needs a mass > 0 (no <inertial>/<mass> given?)")
        eig = np.linalg.eigvalsh(link.inertia)
        if eig[0] <= 1e-12 * eig[-1]:
            raise self.error(where, f"inertia must be symmetric positive definite (principal moments {eig})")
        if eig[0] + eig[1] < eig[2] * (1 - _INERTIA_RTOL):
            raise self.error(where, f"inertia principal moments {eig} break the triangle inequality")
        precision, largest, tiny = real_limits()
        if not (tiny <= link.mass <= largest and tiny <= eig[0] and eig[-1] <= largest):
            raise self.error(where, f"mass {link.mass!r} and principal moments {eig} must lie between {tiny:.3g} "
                                    f"and {largest:.3g} to be finite and invertible in {precision}")

    # ---------------------------------------------------------------- joints

    def parse_joint(self, elem: ET.Element) -> Joint:
        name = elem.get("name")
        if not name:
            raise self.error("joint (unnamed)", "<joint> lacks the 'name' attribute")
        where = f"joint '{name}'"
        jtype = elem.get("type")
        if jtype == "planar":
            raise self.error(where, "planar joints are not supported")
        if jtype not in ("fixed", *_JOINT_DOFS):
            raise self.error(where, f"unknown joint type {jtype!r} (supported: fixed, {', '.join(_JOINT_DOFS)})")
        ends = []
        for tag in ("parent", "child"):
            e = elem.find(tag)
            if e is None or not e.get("link"):
                raise self.error(where, f"<{tag} link=...> is missing")
            ends.append(e.get("link"))
        position, rotation = self.origin(elem, where)
        axis = np.array([1.0, 0.0, 0.0])
        axis_elem = elem.find("axis")
        if axis_elem is not None and jtype in _AXIS_JOINTS:
            axis = self.numbers(axis_elem, "xyz", 3, (1, 0, 0), where)
            norm = np.linalg.norm(axis)
            if norm < 1e-12:
                raise self.error(where, "the joint axis is zero")
            axis = axis / norm
        props = {}
        limit = elem.find("limit")
        if limit is not None:
            for attr in ("lower", "upper") if jtype in ("revolute", "prismatic") else ():
                props[attr] = self.number(limit, attr, None, where)
            for attr in ("velocity", "effort"):
                props[attr] = self.number(limit, attr, None, where)
            lower, upper = props.get("lower"), props.get("upper")
            if lower is not None and upper is not None and lower > upper:
                raise self.error(where, f"limit lower {lower} > upper {upper}")
        dynamics = elem.find("dynamics")
        if dynamics is not None:
            for attr in ("damping", "friction", "rotor_inertia"):
                props[attr] = self.number(dynamics, attr, 0.0, where)
        return Joint(name=name, type=jtype, parent=ends[0], child=ends[1], position=position, rotation=rotation,
                     axis=axis, **props)

    # ---------------------------------------------------------------- tree

    def tree(self, links: dict[str, Link], joints: dict[str, Joint]) -> tuple[list[str], dict[str, Joint]]:
        """Depth-first order of the link names (children in file order) and each non-root link's joint."""
        parent_joint: dict[str, Joint] = {}
        children: dict[str, list[str]] = {name: [] for name in links}
        for joint in joints.values():
            for end in (joint.parent, joint.child):
                if end not in links:
                    raise self.error(f"joint '{joint.name}'", f"link '{end}' does not exist")
            if joint.child in parent_joint:
                raise self.error(f"link '{joint.child}'", f"is the child of two joints, "
                                                          f"'{parent_joint[joint.child].name}' and '{joint.name}'")
            parent_joint[joint.child] = joint
            children[joint.parent].append(joint.child)
        roots = [name for name in links if name not in parent_joint]
        if len(roots) > 1:
            raise self.error(f"links {roots}", "more than one root (links that are no joint's child)")
        order = roots[:]
        stack = list(reversed(children[roots[0]])) if roots else []
        while stack:
            name = stack.pop()
            order.append(name)
            stack.extend(reversed(children[name]))
        if len(order) < len(links):
            reached = set(order)
            start = next(name for name in links if name not in reached)
            cycle = [start]
            while parent_joint[cycle[-1]].parent not in cycle:
                cycle.append(parent_joint[cycle[-1]].parent)
            cycle = cycle[cycle.index(parent_joint[cycle[-1]].parent):]
            names = [parent_joint[c].name for c in cycle]
            raise self.error(f"joints {names}", f"form a cycle through links {cycle}")
        return order, parent_joint

    def merge(self, order: list[str], links: dict[str, Link], parent_joint: dict[str, Joint]):
        """Merge the fixed joints' children into their parents; the kept links, their joints and the
        ``merged`` table of :class:`ArticulatedModel`."""
        owner = {order[0]: (order[0], np.zeros(3), np.eye(3))}
        kept_joints = []
        for name in order[1:]:
            joint = parent_joint[name]
            body, p, r = owner[joint.parent]
            position, rotation = p + r @ joint.position, r @ joint.rotation
            if joint.type == "fixed":
                owner[name] = (body, position, rotation)
            else:
                owner[name] = (name, np.zeros(3), np.eye(3))
                kept_joints.append(replace(joint, parent=body, position=position, rotation=rotation))
        merged = {name: owner[name] for name in order if owner[name][0] != name}
        members = {name: [] for name in order if owner[name][0] == name}
        for name in order:
            members[owner[name][0]].append((links[name], *owner[name][1:]))
        kept_links = [_combine(name, members[name]) for name in members]
        return kept_links, kept_joints, merged


def _combine(name: str, parts: list[tuple[Link, np.ndarray, np.ndarray]]) -> Link:
    """One link from links placed at ``(position, rotation)`` in its frame: masses added, centre of mass
    averaged, inertias rotated into the frame and moved to the common centre of mass (parallel axes)."""
    masses = np.array([link.mass for link, _, _ in parts])
    coms = np.array([p + r @ link.com for link, p, r in parts])
    mass = float(masses.sum())
    com = masses @ coms / mass if mass > 0 else parts[0][0].com
    inertia = np.zeros((3, 3))
    for m, c, (link, _, r) in zip(masses, coms, parts):
        d = c - com
        inertia += r @ link.inertia @ r.T + m * (d @ d * np.eye(3) - np.outer(d, d))
    collisions = [replace(s, position=p + r @ s.position, rotation=r @ s.rotation)
                  for link, p, r in parts for s in link.collisions]
    visuals = [replace(v, position=p + r @ v.position, rotation=r @ v.rotation)
               for link, p, r in parts for v in link.visuals]
    return Link(name=name, mass=mass, com=com, inertia=0.5 * (inertia + inertia.T), collisions=collisions,
                visuals=visuals)
