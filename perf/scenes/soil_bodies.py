"""The bodies that the soil benchmarks (``perf/modes/soil.py``) settle on a soil bed: every one weighs 20 kg in
all and stands on 0.24 m^2 of flat box footprint, so every one has the same analytic sinkage s = (m g / (A kphi))^(1/n).

- ``rigid``: a free 0.4 x 0.6 x 0.02 m box (``world.add_box``).
- ``articulated``: the same plate as the floating root of a 60-DOF system: a mast of 54 links (0.05 kg each,
  2 cm apart) on revolute joints about alternating x and y axes stands on the plate's centre, each joint
  held upright by a PD drive (kp 400 N m/rad, kd 4 N m s/rad). Every soil row on the plate sees the
  60-DOF response.
- ``pinned``: the plate as a one-link floating system and eight 1 kg weights, each its own floating
  system, held to points on the plate's top by eight pins (eight independent 3D relations). A weight's
  centre of mass is its pin point, so it loads the plate straight down.
- ``multilink``: a 64-DOF body on four separate 0.2 x 0.3 m pads. A floating frame (6 DOF) carries a trunk
  on an x and a y slider (2); the trunk carries each pad on a chain of 14 free horizontal sliders
  alternating along x and y (4 x 14). The pads carry the load through the chains, and couple with each
  other through the trunk.

``build(kind, world, plate_xy)`` adds the body and returns a function ``sinkage(env)`` [m]: how far the
footprint's bottom has moved below where it started (z = 0).
"""
from __future__ import annotations

import numpy as np

MASS, SX, SY, THICK = 20.0, 0.4, 0.6, 0.02  # [kg], [m]
KINDS = ("rigid", "articulated", "pinned", "multilink")

MAST_LINKS, MAST_LINK_MASS, MAST_SPACING = 54, 0.05, 0.02  # [-], [kg], [m]
MAST_KP, MAST_KD = 400.0, 4.0  # [N m/rad], [N m s/rad]
WEIGHT = 1.0  # [kg] each pinned weight
PIN_POINTS = [(sx * 0.15, sy * y, 0.5 * THICK) for sx in (-1, 1) for sy in (-1, 1) for y in (0.08, 0.25)]
PAD_X, PAD_Y = 0.2, 0.3  # [m] a multilink pad (four of them: 0.24 m^2)
PAD_CENTRES = [(sx * 0.3, sy * 0.35) for sx in (-1, 1) for sy in (-1, 1)]  # [m] from the trunk
CHAIN = 14  # sliders per pad
FRAME_MASS, CARRIAGE_MASS, TRUNK_MASS, SLIDER_MASS = 0.5, 0.2, 4.0, 0.05  # [kg]
TRUNK_Z = 0.1  # [m] the trunk's height above the pads' bottoms


def _inertial(mass: float, xyz=(0.0, 0.0, 0.0), box=None) -> str:
    """An ``<inertial>`` of a box of full sizes ``box`` [m], or of a small sphere (radius 1 cm)."""
    if box is None:
        i = [0.4 * mass * 0.01 ** 2] * 3
    else:
        x, y, z = box
        i = [mass / 12 * (y * y + z * z), mass / 12 * (x * x + z * z), mass / 12 * (x * x + y * y)]
    return (f'<inertial><origin xyz="{xyz[0]!r} {xyz[1]!r} {xyz[2]!r}"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{i[0]!r}" iyy="{i[1]!r}" izz="{i[2]!r}" ixy="0" ixz="0" iyz="0"/></inertial>')


def _box_link(name: str, mass: float, sx: float, sy: float, sz: float) -> str:
    return (f'<link name="{name}">{_inertial(mass, box=(sx, sy, sz))}<collision><geometry>'
            f'<box size="{sx!r} {sy!r} {sz!r}"/></geometry></collision></link>')


def _joint(name: str, kind: str, parent: str, child: str, xyz, axis: str) -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz[0]!r} {xyz[1]!r} {xyz[2]!r}"/><axis xyz="{axis}"/></joint>')


def mast_urdf() -> str:
    """The articulated plate: the 0.4 x 0.6 m plate (root) and a 54-link PD-held mast on its centre."""
    plate_mass = MASS - MAST_LINKS * MAST_LINK_MASS
    parts = [_box_link("plate", plate_mass, SX, SY, THICK)]
    parent = "plate"
    for k in range(MAST_LINKS):
        name = f"mast{k}"
        parts.append(f'<link name="{name}">{_inertial(MAST_LINK_MASS)}</link>')
        z = 0.5 * THICK + MAST_SPACING if k == 0 else MAST_SPACING
        parts.append(_joint(f"j{k}", "continuous", parent, name, (0.0, 0.0, z), "1 0 0" if k % 2 == 0 else "0 1 0"))
        parent = name
    return f'<robot name="mast_plate">{"".join(parts)}</robot>'


def plate_urdf(mass: float) -> str:
    return f'<robot name="plate">{_box_link("plate", mass, SX, SY, THICK)}</robot>'


def weight_urdf() -> str:
    return f'<robot name="weight"><link name="weight">{_inertial(WEIGHT)}</link></robot>'


def multilink_urdf() -> str:
    """The 64-DOF four-pad body; the pads' bottoms at z = 0 when the root frame is at z = TRUNK_Z."""
    pad_mass = (MASS - FRAME_MASS - CARRIAGE_MASS - TRUNK_MASS) / 4 - (CHAIN - 1) * SLIDER_MASS
    parts = [f'<link name="frame">{_inertial(FRAME_MASS)}</link>', f'<link name="carriage">{_inertial(CARRIAGE_MASS)}</link>',
             f'<link name="trunk">{_inertial(TRUNK_MASS)}</link>',
             _joint("frame_x", "prismatic", "frame", "carriage", (0.0, 0.0, 0.0), "1 0 0"),
             _joint("frame_y", "prismatic", "carriage", "trunk", (0.0, 0.0, 0.0), "0 1 0")]
    for p, (cx, cy) in enumerate(PAD_CENTRES):
        parent, xyz = "trunk", (cx, cy, 0.5 * THICK - TRUNK_Z)
        for k in range(CHAIN):
            last = k == CHAIN - 1
            name = f"pad{p}" if last else f"pad{p}_slider{k}"
            parts.append(_box_link(name, pad_mass, PAD_X, PAD_Y, THICK) if last
                         else f'<link name="{name}">{_inertial(SLIDER_MASS)}</link>')
            parts.append(_joint(f"pad{p}_j{k}", "prismatic", parent, name, xyz, "1 0 0" if k % 2 == 0 else "0 1 0"))
            parent, xyz = name, (0.0, 0.0, 0.0)
    return f'<robot name="four_pads">{"".join(parts)}</robot>'


def build(kind: str, world, plate_xy=(0.0, 0.0)):
    """Add body ``kind`` to ``world`` with its footprint's centre at ``plate_xy`` [m] and its bottom at z = 0;
    returns ``sinkage(env)`` [m]."""
    x0, y0 = plate_xy
    z0 = 0.5 * THICK
    if kind == "rigid":
        plate = world.add_box(SX, SY, THICK, MASS)
        plate.set_position([x0, y0, z0])
        return lambda env: z0 - plate.get_position(env)[2]
    if kind == "articulated":
        system = world.add_articulated_system(mast_urdf(), position=(x0, y0, z0))
        zeros = np.zeros(system.get_dof())
        system.set_pd_gains(np.r_[np.zeros(6), np.full(MAST_LINKS, MAST_KP)],
                            np.r_[np.zeros(6), np.full(MAST_LINKS, MAST_KD)])
        system.set_pd_target(system.get_generalized_coordinate(0), zeros)
        return lambda env: z0 - system.get_frame_position("plate", env)[2]
    if kind == "pinned":
        plate = world.add_articulated_system(plate_urdf(MASS - len(PIN_POINTS) * WEIGHT), position=(x0, y0, z0))
        for point in PIN_POINTS:
            weight = world.add_articulated_system(weight_urdf(), position=(x0 + point[0], y0 + point[1], z0 + point[2]))
            world.add_pin(plate, "plate", point, weight, "weight", (0.0, 0.0, 0.0))
        return lambda env: z0 - plate.get_frame_position("plate", env)[2]
    if kind == "multilink":
        system = world.add_articulated_system(multilink_urdf(), position=(x0, y0, TRUNK_Z))
        pads = [f"pad{p}" for p in range(len(PAD_CENTRES))]
        return lambda env: z0 - float(np.mean([system.get_frame_position(p, env)[2] for p in pads]))
    raise ValueError(f"body must be one of {KINDS}, got {kind!r}")


def dof(world) -> int:
    """Velocity coordinates of everything in ``world``: 6 per free body, the systems' own."""
    return 6 * len(world.bodies) + sum(s.get_dof() for s in world.articulated_systems)
