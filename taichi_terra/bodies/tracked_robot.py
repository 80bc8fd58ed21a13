"""A templated tracked robot: the URDF of a body on two side tracks, with two optional flippers.

:func:`tracked_robot_urdf` writes the robot of ``spec/tracks.md``'s example: a box body carried by two belts,
one on each side, each wrapped around a front sprocket (a continuous joint that drives it with its pitch
radius as gain) and a rear idler wheel; with ``flippers=True``, a flipper on each side pivots about the
sprocket's axis, and its own belt (around a wheel on the pivot and a smaller one at its tip) is run by the
same sprocket through a pulley: its belt speed relative to the flipper is ``r (u_sprocket - u_flipper)``.

Coordinates (the body frame): x forwards, y to the left, z up; the wheel centres lie in the plane z = 0, so a
robot standing on flat ground at height ``h`` has its body origin at ``h + wheel_radius + thickness``. Its
generalized velocities: the floating base's six, then ``left_sprocket``, ``right_sprocket`` and, with
flippers, ``left_flipper_joint`` and ``right_flipper_joint`` (joint names in :func:`tracked_robot_urdf`'s
docstring).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from ..validation import check_finite


def _inertial(mass: float, ixx: float, iyy: float, izz: float, xyz=(0.0, 0.0, 0.0)) -> str:
    return (f'<inertial><origin xyz="{xyz[0]!r} {xyz[1]!r} {xyz[2]!r}"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{ixx!r}" iyy="{iyy!r}" izz="{izz!r}" ixy="0" ixz="0" iyz="0"/></inertial>')


@dataclass(frozen=True)
class TrackedRobotDesign:
    """The dimensions, masses and drive limit of :func:`tracked_robot_urdf`'s robot, checked when made
    (``ValueError`` naming the attribute and the rule).

    Attributes:
        length: distance between the sprocket and the idler centres [m]: the footprint's length on flat
            ground.
        spacing: distance between the two side belts' mid-planes [m]; more than ``width``.
        wheel_radius: radius of the sprockets and idlers [m] (the drives' gain: belt speed per sprocket
            rad/s).
        thickness, width: the belts' [m] (a thickness of 0 is allowed).
        body_mass: the body's mass [kg]; its inertia is that of a box ``length`` x ``spacing`` x 0.2 m. Its
            collision shape is a box 0.12 m high between the belts, from the wheel centres' plane up, 0.9
            ``length`` long.
        sprocket_mass, sprocket_inertia: each sprocket's mass [kg] and its moment of inertia about its
            axis [kg m^2].
        com_offset: the body's centre of mass ahead of the footprints' middle [m].
        effort: the sprockets' effort limit [N m].
        flipper_length: distance between a flipper's two wheel centres [m] (with flippers).
    """

    length: float = 1.0
    spacing: float = 0.28
    wheel_radius: float = 0.178
    thickness: float = 0.015
    width: float = 0.08
    body_mass: float = 30.0
    sprocket_mass: float = 1.0
    sprocket_inertia: float = 0.016
    com_offset: float = 0.0
    effort: float = 200.0
    flipper_length: float = 0.35

    def __post_init__(self):
        for f in fields(self):
            v = check_finite(f.name, getattr(self, f.name))
            if f.name == "thickness" and v < 0.0:
                raise ValueError(f"thickness must be >= 0, got {v!r}")
            if f.name not in ("thickness", "com_offset") and v <= 0.0:
                raise ValueError(f"{f.name} must be > 0, got {v!r}")
        if self.spacing <= self.width:
            raise ValueError(f"spacing must exceed width (the two belts would overlap), got {self.spacing!r} <= "
                             f"{self.width!r}")


def tracked_robot_urdf(design: TrackedRobotDesign | None = None, *, flippers: bool = False,
                       material: str | None = None, visuals: bool = True) -> str:
    """The URDF text of a tracked robot (see the module docstring).

    Args:
        design: its dimensions, masses and drive limit (:class:`TrackedRobotDesign`; ``None``: the default
            design).
        flippers: add a flipper on each side (joints ``left_flipper_joint``, ``right_flipper_joint``, limits
            +-pi/2, effort 500 N m) with tracks ``left_flipper`` and ``right_flipper``.
        material: the belts' collision material name, or None.
        visuals: give the robot ``<visual>`` elements, what the viewer draws (the physics never reads them): an
            olive hull (the collision box's footprint, drawn up to above the belts, with a deck over them) with a
            sensor mast, the sprockets' hubs and the flippers' side plates. ``False``: the viewer draws the
            collision shapes.

    Joint names: ``left_sprocket``, ``right_sprocket`` (and the flipper joints); track names: ``left``,
    ``right`` (and ``left_flipper``, ``right_flipper``).
    """
    d = TrackedRobotDesign() if design is None else design
    if not isinstance(d, TrackedRobotDesign):
        raise TypeError(f"design must be a TrackedRobotDesign or None, got {type(design).__name__}")
    length, spacing, wheel_radius, thickness, width = d.length, d.spacing, d.wheel_radius, d.thickness, d.width
    body_mass, sprocket_mass, sprocket_inertia, effort = d.body_mass, d.sprocket_mass, d.sprocket_inertia, d.effort
    flipper_length, com = d.flipper_length, d.com_offset
    mat = f' material="{material}"' if material else ""
    m, L, h = body_mass, length, 0.2
    hull = (0.9 * L, spacing - width - 0.02, 0.12)  # the body's collision box, between the belts, above the wheels
    def visual(geometry: str, color: str, xyz=(0.0, 0.0, 0.0), rpy="0 0 0") -> str:
        if not visuals:
            return ""
        return (f'<visual><origin xyz="{xyz[0]!r} {xyz[1]!r} {xyz[2]!r}" rpy="{rpy}"/><geometry>{geometry}</geometry>'
                f'<material name="{color}"/></visual>')

    colors = ('<material name="hull"><color rgba="0.36 0.42 0.24 1"/></material>'
              '<material name="metal"><color rgba="0.5 0.52 0.55 1"/></material>'
              '<material name="dark"><color rgba="0.15 0.15 0.17 1"/></material>') if visuals else ""
    mast = min(0.25, 0.8 * spacing)
    top = wheel_radius + thickness + 0.06  # the drawn hull's top: above the belts, with a deck over them
    parts = [f'<robot name="tracked_robot">{colors}<link name="base">'
             + _inertial(m, m * (spacing ** 2 + h ** 2) / 12, m * (L ** 2 + h ** 2) / 12,
                         m * (L ** 2 + spacing ** 2) / 12, (com, 0.0, 0.0))
             + f'<collision><origin xyz="0 0 {0.5 * hull[2]!r}"/><geometry><box size="{hull[0]!r} {hull[1]!r} '
               f'{hull[2]!r}"/></geometry></collision>'
             + visual(f'<box size="{hull[0]!r} {hull[1]!r} {top!r}"/>', "hull", (0.0, 0.0, 0.5 * top))
             + visual(f'<box size="{0.75 * L!r} {spacing + width + 0.04!r} 0.025"/>', "hull",
                      (-0.05 * L, 0.0, top + 0.0125))
             + visual(f'<box size="0.08 0.08 {mast!r}"/>', "dark", (0.3 * hull[0], 0.0, top + 0.5 * mast))
             + visual(f'<box size="0.1 {0.5 * mast!r} 0.06"/>', "metal",
                      (0.3 * hull[0] + 0.02, 0.0, top + mast + 0.03))
             + '</link>']
    r_small = 0.5 * wheel_radius
    for side, y in (("left", 0.5 * spacing), ("right", -0.5 * spacing)):
        parts.append(f'<link name="{side}_sprocket_link">'
                     + _inertial(sprocket_mass, 0.6 * sprocket_inertia, sprocket_inertia, 0.6 * sprocket_inertia)
                     + visual(f'<cylinder radius="{0.45 * wheel_radius!r}" length="{width + 0.01!r}"/>', "metal",
                              rpy="1.5707963267948966 0 0")
                     + '</link>'
                     f'<joint name="{side}_sprocket" type="continuous"><parent link="base"/>'
                     f'<child link="{side}_sprocket_link"/><origin xyz="{0.5 * L!r} {y!r} 0"/>'
                     f'<axis xyz="0 1 0"/><limit effort="{effort!r}" velocity="1000"/></joint>')
        parts.append(f'<track name="{side}" link="base" width="{width!r}" thickness="{thickness!r}"{mat}>'
                     f'<axis xyz="0 1 0"/><wheel joint="{side}_sprocket" radius="{wheel_radius!r}"/>'
                     f'<wheel xyz="{-0.5 * L!r} {y!r} 0" radius="{wheel_radius!r}"/>'
                     f'<drive joint="{side}_sprocket" gain="{wheel_radius!r}"/></track>')
        if flippers:
            yf = y + (1.0 if y > 0 else -1.0) * (width + 0.02)
            fl = flipper_length
            parts.append(f'<link name="{side}_flipper">'
                         + _inertial(2.0, 0.005, 0.03, 0.03, (0.4 * fl, 0.0, 0.0))
                         + visual(f'<box size="{fl!r} {width + 0.006!r} {0.8 * r_small!r}"/>', "hull",
                                  (0.5 * fl, 0.0, 0.0))
                         + '</link>'
                         f'<joint name="{side}_flipper_joint" type="revolute"><parent link="base"/>'
                         f'<child link="{side}_flipper"/><origin xyz="{0.5 * L!r} {yf!r} 0"/><axis xyz="0 1 0"/>'
                         f'<limit lower="-1.5707963" upper="1.5707963" effort="500" velocity="10"/></joint>')
            parts.append(f'<track name="{side}_flipper" link="{side}_flipper" width="{width!r}" '
                         f'thickness="{thickness!r}"{mat}><axis xyz="0 1 0"/>'
                         f'<wheel xyz="0 0 0" radius="{0.9 * wheel_radius!r}"/>'
                         f'<wheel xyz="{fl!r} 0 0" radius="{r_small!r}"/>'
                         f'<drive joint="{side}_sprocket" gain="{wheel_radius!r}"/>'
                         f'<drive joint="{side}_flipper_joint" gain="{-wheel_radius!r}"/></track>')
    parts.append('</robot>')
    return "".join(parts)


def drive_tracked_robot(system, sprocket_speed: float, *, flipper_angle: float | None = None,
                        sprocket_kd: float = 60.0, flipper_kp: float = 2000.0, flipper_kd: float = 100.0) -> None:
    """PD drives for a robot of :func:`tracked_robot_urdf` (``system``, an articulated system): both sprockets
    velocity-controlled at ``sprocket_speed`` [rad/s] (gain ``sprocket_kd`` [N m s/rad]) and, with
    ``flipper_angle`` [rad] given, both flippers held there (negative tips them up; gains ``flipper_kp``
    [N m/rad], ``flipper_kd``). Every other dof is left undriven."""
    nv, nq = system.get_dof(), system.get_generalized_coordinate_dim()
    shift = nq - nv  # (a floating base's quaternion: coordinates run one ahead of velocities)
    kp, kd, q_target, u_target = [0.0] * nv, [0.0] * nv, [0.0] * nq, [0.0] * nv
    for side in ("left", "right"):
        sprocket = system.get_generalized_velocity_index(f"{side}_sprocket")
        kd[sprocket], u_target[sprocket] = sprocket_kd, sprocket_speed
        if flipper_angle is not None:
            flipper = system.get_generalized_velocity_index(f"{side}_flipper_joint")
            kp[flipper], kd[flipper] = flipper_kp, flipper_kd
            q_target[shift + flipper] = flipper_angle
    system.set_pd_gains(kp, kd)
    system.set_pd_target(q_target, u_target)
