"""World XML: ground, height maps (with an optional soil child), primitive bodies, material pairs, articulated
systems and pins.

    <world dt="0.001" gravity="0 0 -9.81" n_envs="1">
      <material_pair a="rubber" b="soil" friction="0.9" restitution="0.2"/>
      <ground height="0" material="default"/>
      <heightmap name="soil" x_size="2" y_size="2" x_sample="3" y_sample="3" center_x="0" center_y="0"
                 pos="0 0 0" quat="1 0 0 0" height="0 0 0 0 0 0 0 0 0">
        <soil bekker_kc="0" bekker_kphi="40000" sinkage_exponent="1.1" elastic_stiffness="2000000"
              damping="2000" cohesion="100" friction_coefficient="0.6" shear_displacement="0.01"/>
      </heightmap>
      <sphere radius="0.1" mass="1" pos="0 0 1" quat="1 0 0 0" material="rubber"/>
      <box size_x=".." size_y=".." size_z=".." mass=".."/>  <capsule radius height mass/>  <cylinder .../>
      <mesh file="rock.obj" mass="2"/>  (or inline vertices="..." faces="...": a convex hull is used)
      <heightmap png="terrain.png" x_size="10" y_size="10" height_scale="0.001" height_offset="0"/>
      <heightmap file="terrain.txt" center_x="0" center_y="0"/>
      <heightmap center_x="0" center_y="0"><terrain frequency="0.2" x_size="10" ... seed="3"/></heightmap>
    </world>

Articulated systems and pins (state of the exported env, loaded into every env)::

      <articulated name="dog" urdf="quadruped.urdf" base="floating" pos="0 0 0.45" quat="1 0 0 0"
                   package_dirs="meshes" q="..." u="..." force="..." kp="..." kd="..." position_target="..."
                   velocity_target="..." held="..." inverse_dynamics="0" self_collision="0"/>
      (or the <robot> inline as the element's child)
      <pin system_a="dog" link_a="FL_shank" point_a="0 0 -0.2" system_b="dog" link_b="FR_shank" point_b="..."/>
      (without system_b, point_b is a world point)

Granular media and RFT plates (after the height maps, bodies and systems they name)::

      <granular_medium height="0" coefficients="li2013" zeta="3.75" normalization="unit" smoothing="0.1"
                       mode="force" region="-1 1 -1 1"/>   (or heightmap="0": the index of a height map)
      <plates body="0" centroids="..." normals="..." areas="..."/>   (or system="dog" link="FL_foot")

The drive attributes hold one number per dof (``position_target``: per dof too, the base's entries zero);
``held`` one per joint: the sign of the effort limit a drive is held at in the next step (see
``ArticulatedSystem.get_held_drives``), written only where some drive is held.
Relative file paths start at the XML file's folder (the working directory for an XML string). Every
height map also takes ``pos``, ``quat`` and ``material``.

A ``<soil>`` child turns the height map into a deformable bed; exported soil elements also carry the
``sinkage``, ``plastic_sinkage`` and ``shear`` arrays of the exported env, which loading restores (in every
env). Loader errors name the file (or "<string>") and the element.
"""
from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET

import numpy as np

_BODY_ATTRS = {"sphere": ("radius", "mass"), "box": ("size_x", "size_y", "size_z", "mass"),
               "capsule": ("radius", "height", "mass"), "cylinder": ("radius", "height", "mass")}
_SOIL_STATE = ("sinkage", "plastic_sinkage", "shear")


class WorldXMLError(ValueError):
    """A world file that cannot be loaded; the message names the file and the element."""


def _floats(where, el, name, count=None, default=None):
    raw = el.get(name)
    if raw is None:
        if default is not None:
            return default
        raise WorldXMLError(f"{where}: <{el.tag}> needs the attribute {name!r}")
    try:
        vals = [float(x) for x in raw.split()]
    except ValueError as exc:
        raise WorldXMLError(f"{where}: <{el.tag} {name}=...> must hold numbers") from exc
    if count is not None and len(vals) != count:
        raise WorldXMLError(f"{where}: <{el.tag} {name}=...> must hold {count} numbers, got {len(vals)}")
    return vals


def _one(where, el, name, default=None):
    return _floats(where, el, name, 1, None if default is None else [default])[0]


def _int(where, el, name, default=None) -> int:
    """Attribute ``name`` of ``el`` as an integer (a number with no fractional part, "3" or "3.0")."""
    value = _one(where, el, name, default)
    if not math.isfinite(value) or value != int(value):
        raise WorldXMLError(f"{where}: <{el.tag}>: {name} must be an integer, got {el.get(name)!r}")
    return int(value)


def load_world_xml(source, **world_kwargs):
    """Build a :class:`taichi_terra.World` from an XML file path or an XML string. ``world_kwargs``
    (``n_envs``, ``solver``) override the file's attributes."""
    from ..terrain.soil import SOIL_FIELDS, SoilMaterial
    from ..world import World

    if isinstance(source, (str, os.PathLike)) and os.path.exists(str(source)):
        where = str(source)
        try:
            root = ET.parse(where).getroot()
        except ET.ParseError as exc:
            raise WorldXMLError(f"{where}: not well-formed XML ({exc})") from exc
    elif isinstance(source, str):
        where = "<string>"
        try:
            root = ET.fromstring(source)
        except ET.ParseError as exc:
            raise WorldXMLError(f"{where}: not well-formed XML ({exc}); a path must name an existing file") from exc
    else:
        raise TypeError("source must be a path to an XML file or an XML string")
    base = os.path.dirname(os.path.abspath(where)) if where != "<string>" else os.getcwd()
    if root.tag != "world":
        raise WorldXMLError(f"{where}: the root element must be <world>, got <{root.tag}>")
    kwargs = {"dt": _one(where, root, "dt", 1e-3), "gravity": _floats(where, root, "gravity", 3, [0.0, 0.0, -9.81]),
              "n_envs": _int(where, root, "n_envs", 1)}
    for name in ("max_shape_pairs", "max_shape_contacts"):  # optional broadphase limits
        if root.get(name) is not None:
            kwargs[name] = _int(where, root, name)
    kwargs.update(world_kwargs)
    try:
        world = World(**kwargs)
    except (TypeError, ValueError) as exc:
        raise WorldXMLError(f"{where}: <world>: {exc}") from exc
    soil_states = []
    systems: dict = {}  # name -> ArticulatedSystem, in order
    for el in root:
        try:
            if el.tag == "material_pair":
                world.set_material_pair_prop(el.get("a"), el.get("b"), _one(where, el, "friction"),
                                             _one(where, el, "restitution", 0.0))
            elif el.tag == "ground":
                world.add_ground(_one(where, el, "height", 0.0), material=el.get("material", "default"))
            elif el.tag == "heightmap" and (el.get("png") or el.get("file") or el.find("terrain") is not None):
                hm = _heightmap_from_source(world, where, base, el)
                hm.set_position(_floats(where, el, "pos", 3, [0.0, 0.0, 0.0]))
                hm.set_orientation(_floats(where, el, "quat", 4, [1.0, 0.0, 0.0, 0.0]))
            elif el.tag == "heightmap":
                nx, ny = _int(where, el, "x_sample"), _int(where, el, "y_sample")
                args = (nx, ny, _one(where, el, "x_size"), _one(where, el, "y_size"), _one(where, el, "center_x", 0.0),
                        _one(where, el, "center_y", 0.0), np.array(_floats(where, el, "height")))
                soil = el.find("soil")
                if soil is not None:
                    material = SoilMaterial(**{f: _one(where, soil, f, getattr(SoilMaterial, f)) for f in SOIL_FIELDS})
                    hm = world.add_deformable_terrain(*args, material)
                    if all(soil.get(k) is not None for k in _SOIL_STATE):
                        soil_states.append((hm, [np.array(_floats(where, soil, k, nx * ny)) for k in _SOIL_STATE]))
                else:
                    hm = world.add_heightmap(*args, material=el.get("material", "default"))
                hm.set_position(_floats(where, el, "pos", 3, [0.0, 0.0, 0.0]))
                hm.set_orientation(_floats(where, el, "quat", 4, [1.0, 0.0, 0.0, 0.0]))
            elif el.tag == "mesh":
                mesh = _mesh(where, base, el)
                body = world.add_mesh(mesh, _one(where, el, "mass"), material=el.get("material", "default"))
                body.set_position(_floats(where, el, "pos", 3, [0.0, 0.0, 0.0]))
                body.set_orientation(_floats(where, el, "quat", 4, [1.0, 0.0, 0.0, 0.0]))
                body.set_linear_velocity(_floats(where, el, "lin_vel", 3, [0.0, 0.0, 0.0]))
                body.set_angular_velocity(_floats(where, el, "ang_vel", 3, [0.0, 0.0, 0.0]))
            elif el.tag in _BODY_ATTRS:
                add = getattr(world, f"add_{el.tag}")
                body = add(*(_one(where, el, a) for a in _BODY_ATTRS[el.tag]), material=el.get("material", "default"))
                body.set_position(_floats(where, el, "pos", 3, [0.0, 0.0, 0.0]))
                body.set_orientation(_floats(where, el, "quat", 4, [1.0, 0.0, 0.0, 0.0]))
                body.set_linear_velocity(_floats(where, el, "lin_vel", 3, [0.0, 0.0, 0.0]))
                body.set_angular_velocity(_floats(where, el, "ang_vel", 3, [0.0, 0.0, 0.0]))
            elif el.tag == "articulated":
                _articulated(world, where, base, el, systems)
            elif el.tag == "pin":
                _pin(world, where, el, systems)
            elif el.tag == "granular_medium":
                _granular_medium(world, where, el)
            elif el.tag == "plates":
                _plates(world, where, el, systems)
            else:
                raise WorldXMLError(f"{where}: unknown element <{el.tag}>")
        except WorldXMLError:
            raise
        except (TypeError, ValueError, RuntimeError) as exc:
            raise WorldXMLError(f"{where}: <{el.tag}>: {exc}") from exc
    for bed, (s, sp, j) in soil_states:
        try:
            bed.set_soil_state(s, sp, j)
        except (TypeError, ValueError) as exc:
            raise WorldXMLError(f"{where}: <soil>: {exc}") from exc
    return world


_DRIVE_ATTRS = ("force", "kp", "kd", "position_target", "velocity_target")


def _articulated(world, where, base, el, systems) -> str:
    """Add the ``<articulated>`` element's system (its URDF from ``urdf`` or an inline ``<robot>``) with its
    state; returns its name (``name``, default ``sys<k>``)."""
    name = el.get("name", f"sys{len(systems)}")
    if name in systems:
        raise WorldXMLError(f"{where}: <articulated name={name!r}>: the name is taken")
    robot = el.find("robot")
    if (el.get("urdf") is None) == (robot is None):
        raise WorldXMLError(f"{where}: <articulated name={name!r}> needs a urdf attribute or an inline <robot>, "
                            "not both")
    urdf = os.path.join(base, el.get("urdf")) if robot is None else ET.tostring(robot, encoding="unicode")
    dirs = [os.path.join(base, d) for d in el.get("package_dirs", "").split(";") if d]
    system = world.add_articulated_system(urdf, base=el.get("base", "floating"),
                                          position=_floats(where, el, "pos", 3, [0.0, 0.0, 0.0]),
                                          orientation=_floats(where, el, "quat", 4, [1.0, 0.0, 0.0, 0.0]),
                                          package_dirs=dirs,
                                          self_collision=_int(where, el, "self_collision", 0) != 0)
    systems[name] = system
    nq, nv = system.get_generalized_coordinate_dim(), system.get_dof()
    if el.get("q") is not None:
        system.set_generalized_coordinate(_floats(where, el, "q", nq))
    if el.get("u") is not None:
        system.set_generalized_velocity(_floats(where, el, "u", nv))
    if el.get("force") is not None:
        system.set_generalized_force(_floats(where, el, "force", nv))
    if el.get("kp") is not None or el.get("kd") is not None:
        system.set_pd_gains(_floats(where, el, "kp", nv, [0.0] * nv), _floats(where, el, "kd", nv, [0.0] * nv))
    if el.get("position_target") is not None or el.get("velocity_target") is not None:
        per_dof = np.array(_floats(where, el, "position_target", nv, [0.0] * nv))
        target = np.zeros(nq)
        target[nq - (nv - (6 if system.floating else 0)):] = per_dof[6 if system.floating else 0:]
        system.set_pd_target(target, _floats(where, el, "velocity_target", nv, [0.0] * nv))
    if el.get("held") is not None:
        system.set_held_drives(_floats(where, el, "held", len(system.get_joint_names())))
    if el.get("inverse_dynamics") is not None:
        system.set_compute_inverse_dynamics(_int(where, el, "inverse_dynamics") != 0)
    return name


def _pin(world, where, el, systems) -> None:
    def system(key):
        name = el.get(key)
        if name not in systems:
            raise WorldXMLError(f"{where}: <pin {key}={name!r}>: no <articulated> of that name before it "
                                f"(have {list(systems)})")
        return systems[name]

    b = system("system_b") if el.get("system_b") is not None else None
    world.add_pin(system("system_a"), el.get("link_a"), _floats(where, el, "point_a", 3), b,
                  el.get("link_b") if b is not None else None, _floats(where, el, "point_b", 3))


def _granular_medium(world, where, el) -> None:
    """A ``<granular_medium>``: a flat ``height`` or the surface of ``heightmap`` (its index), the medium's
    settings, and an optional ``region``."""
    if el.get("heightmap") is not None:
        k = _int(where, el, "heightmap")
        if not 0 <= k < len(world.heightmaps):
            raise WorldXMLError(f"{where}: <granular_medium>: heightmap must index one of the "
                                f"{len(world.heightmaps)} height maps before it, got {k}")
        surface = world.heightmaps[k]
    else:
        surface = _one(where, el, "height", 0.0)
    coefficients = el.get("coefficients", "li2013")
    if coefficients not in ("li2013", "poppy_loose", "poppy_close"):
        coefficients = _floats(where, el, "coefficients", 9)
    region = _floats(where, el, "region", 4) if el.get("region") is not None else None
    world.add_granular_medium(surface, coefficients=coefficients, zeta=_one(where, el, "zeta", 3.75),
                              normalization=el.get("normalization", "unit"), smoothing=_one(where, el, "smoothing", 0.1),
                              region=region, mode=el.get("mode", "force"))


def _plates(world, where, el, systems) -> None:
    """A ``<plates>`` set of a free ``body`` (its index) or of a ``system``'s ``link``: ``centroids``,
    ``normals`` (3 numbers per plate, in the owner's frame) and ``areas``."""
    if el.get("body") is not None:
        k = _int(where, el, "body")
        if not 0 <= k < len(world.bodies):
            raise WorldXMLError(f"{where}: <plates>: body must index one of the {len(world.bodies)} bodies before "
                                f"it, got {k}")
        owner, link = world.bodies[k], None
    else:
        name = el.get("system")
        if name not in systems:
            raise WorldXMLError(f"{where}: <plates>: system must name an <articulated> before it, got {name!r}")
        owner, link = systems[name], el.get("link")
    areas = np.array(_floats(where, el, "areas"))
    n = len(areas)
    world._add_plates_exact(owner, link, np.reshape(_floats(where, el, "centroids", 3 * n), (n, 3)),
                            np.reshape(_floats(where, el, "normals", 3 * n), (n, 3)), areas)


def _heightmap_from_source(world, where, base, el):
    """A static map from a PNG (``png``, ``x_size``, ``y_size``, ``height_scale``, ``height_offset``), a text file
    (``file``) or a ``<terrain>`` child (the TerrainProperties fields); relative paths start at the XML file."""
    from ..terrain.sources import TerrainProperties

    cx, cy = _one(where, el, "center_x", 0.0), _one(where, el, "center_y", 0.0)
    material = el.get("material", "default")
    if el.get("png"):
        return world.add_heightmap_from_png(cx, cy, os.path.join(base, el.get("png")), _one(where, el, "x_size"),
                                            _one(where, el, "y_size"), _one(where, el, "height_scale", 1.0),
                                            _one(where, el, "height_offset", 0.0), material=material)
    if el.get("file"):
        return world.add_heightmap_from_file(cx, cy, os.path.join(base, el.get("file")), material=material)
    t = el.find("terrain")
    ints = ("x_samples", "y_samples", "fractal_octaves", "seed")
    fields = {}
    for name, default in TerrainProperties.__dataclass_fields__.items():
        if t.get(name) is not None:
            value = _one(where, t, name)
            fields[name] = int(value) if name in ints and value == int(value) else value
    return world.add_heightmap_from_terrain(cx, cy, TerrainProperties(**fields), material=material)


def _mesh(where, base, el):
    """A trimesh from ``file`` (relative to the XML file) or from inline ``vertices`` and ``faces``."""
    import trimesh

    if el.get("file"):
        return os.path.join(base, el.get("file"))
    verts = np.array(_floats(where, el, "vertices"))
    faces = np.array(_floats(where, el, "faces"))
    if verts.size % 3 or faces.size % 3 or np.any(faces != np.round(faces)):
        raise WorldXMLError(f"{where}: <mesh> vertices and faces must be triples (faces of integer indices)")
    return trimesh.Trimesh(verts.reshape(-1, 3), faces.reshape(-1, 3).astype(np.int64), process=False)


def _quat_of(rotation) -> np.ndarray:
    from ..validation import rotation_to_quat

    return rotation_to_quat("orientation", np.asarray(rotation))


def _fmt(values) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(values, dtype=float).reshape(-1))


def export_world_xml(world, path=None, env: int = 0) -> str:
    """The world as XML (poses and velocities of ``env``, soil histories of ``env``); written to ``path``
    when given. Meshes are written inline (their hull's vertices and faces)."""
    from ..bodies.shapes import ShapeType
    from ..terrain.soil import SOIL_FIELDS

    root = ET.Element("world", dt=repr(world.dt), gravity=_fmt(world.gravity), n_envs=str(world.n_envs))
    for name in ("max_shape_pairs", "max_shape_contacts"):  # only limits the user set (defaults follow the bodies)
        if getattr(world, f"_{name}") is not None:
            root.set(name, str(getattr(world, f"_{name}")))
    table = world.materials
    for (ia, ib), (mu, e) in sorted(table._pairs.items()):
        ET.SubElement(root, "material_pair", a=table.names[ia], b=table.names[ib], friction=repr(mu),
                      restitution=repr(e))
    if world.ground is not None:
        ET.SubElement(root, "ground", height=repr(world.ground.height), material=world.ground.material)
    for hm in world.heightmaps:
        heights = hm.get_undeformed_heights(env) if hm.is_soil else hm.get_contact_heights(env)  # (collision surface)
        el = ET.SubElement(root, "heightmap", name=f"map{hm.index}", x_size=repr(hm.x_size), y_size=repr(hm.y_size),
                           x_sample=str(hm.x_samples), y_sample=str(hm.y_samples), center_x=repr(hm.center_x),
                           center_y=repr(hm.center_y), pos=_fmt(hm.get_position()), quat=_fmt(hm.get_orientation()),
                           height=_fmt(heights))
        if hm.is_soil:
            attrs = {f: repr(float(getattr(hm.material, f))) for f in SOIL_FIELDS}
            state = hm.get_soil_state(env)
            attrs.update({k: _fmt(state[k]) for k in _SOIL_STATE})
            ET.SubElement(el, "soil", **attrs)
        else:
            el.set("material", hm.material_name)
    names = {ShapeType.SPHERE: "sphere", ShapeType.BOX: "box", ShapeType.CAPSULE: "capsule",
             ShapeType.CYLINDER: "cylinder"}
    for body in world.bodies:
        kind = names.get(body.shape.type)
        if kind is None:  # a convex mesh: its hull inline (the body frame is the hull's centre of mass)
            ET.SubElement(root, "mesh", mass=repr(body.mass), material=body.material,
                          vertices=_fmt(body.shape.vertices), faces=" ".join(str(int(i)) for i in
                                                                             body.shape.faces.reshape(-1)),
                          pos=_fmt(body.get_position(env)), quat=_fmt(body.get_orientation(env)),
                          lin_vel=_fmt(body.get_linear_velocity(env)), ang_vel=_fmt(body.get_angular_velocity(env)))
            continue
        prm = body.shape.params
        dims = {"sphere": {"radius": prm[0]}, "box": {"size_x": 2 * prm[0], "size_y": 2 * prm[1], "size_z": 2 * prm[2]},
                "capsule": {"radius": prm[0], "height": 2 * prm[1]},
                "cylinder": {"radius": prm[0], "height": 2 * prm[1]}}[kind]
        ET.SubElement(root, kind, **{k: repr(float(v)) for k, v in dims.items()}, mass=repr(body.mass),
                      material=body.material, pos=_fmt(body.get_position(env)), quat=_fmt(body.get_orientation(env)),
                      lin_vel=_fmt(body.get_linear_velocity(env)), ang_vel=_fmt(body.get_angular_velocity(env)))
    names = {}
    for system in world.articulated_systems:
        names[system] = f"sys{system.index}"
        attrs = {"name": names[system], "base": system.model.base, "pos": _fmt(system._base_position),
                 "quat": _fmt(_quat_of(system._base_rotation)),
                 "q": _fmt(system.get_generalized_coordinate(env)), "u": _fmt(system.get_generalized_velocity(env)),
                 "inverse_dynamics": str(int(system.computes_inverse_dynamics)),
                 "self_collision": str(int(system.self_collision))}
        for col in _DRIVE_ATTRS:
            attrs[col] = _fmt(system._get_drive(col, env))
        held = system.get_held_drives(env)
        if held.any():
            attrs["held"] = _fmt(held)
        if system.package_dirs:
            attrs["package_dirs"] = ";".join(os.path.abspath(d) for d in system.package_dirs)
        source = system.urdf_source
        if isinstance(source, str) and source.lstrip().startswith("<"):
            ET.SubElement(root, "articulated", **attrs).append(ET.fromstring(source.strip()))
        else:
            ET.SubElement(root, "articulated", urdf=os.path.abspath(os.fspath(source)), **attrs)
    for pin in world.pins:
        attrs = {"system_a": names[pin.system_a], "link_a": pin.link_a, "point_a": _fmt(pin.point_a),
                 "point_b": _fmt(pin.point_b)}
        if pin.system_b is not None:
            attrs.update(system_b=names[pin.system_b], link_b=pin.link_b)
        ET.SubElement(root, "pin", **attrs)
    for medium in world.granular_media:
        attrs = {"coefficients": _fmt(medium.coefficients), "zeta": repr(medium.zeta),
                 "normalization": medium.normalization, "smoothing": repr(medium.smoothing), "mode": medium.mode}
        if medium.heightmap is None:
            attrs["height"] = repr(medium.height)
        else:
            attrs["heightmap"] = str(world.heightmaps.index(medium.heightmap))
        if np.isfinite(medium.region).all():
            attrs["region"] = _fmt(medium.region)
        ET.SubElement(root, "granular_medium", **attrs)
    for ps in world.plate_sets:
        owner = {"body": str(ps.owner.index)} if ps.link is None else {"system": names[ps.owner], "link": ps.link}
        ET.SubElement(root, "plates", **owner, centroids=_fmt(ps.centroids), normals=_fmt(ps.normals),
                      areas=_fmt(ps.areas))
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    if path is not None:
        with open(path, "w") as f:
            f.write(text + "\n")
    return text
