"""The hexapod of ``spec/rft_granular.md``'s last experiment, as far as the spec describes it: a 4.04 kg body on six
legs of two joints each (a swing about the vertical, a lift about the leg's own horizontal axis), position-
controlled servos, each foot a dactyl (a curved claw; here a capsule of 1 cm radius) carrying RFT plates, and its
tripod gait of one cycle per second. ``scenes/hexapod_sand.py`` walks it in sand; ``taichi_terra.envs``'s
``HexapodSandWalk`` trains a policy on it.

Generalized coordinates: the floating base's seven, then (swing0, lift0, swing1, lift1, ...) [rad], legs 0 to 5
as :data:`HIPS` lists them (front, middle, rear; left then right).
"""
from __future__ import annotations

import math

import numpy as np

BODY = (0.30, 0.18, 0.05)  # [m]
BODY_MASS = 2.84  # [kg]; six legs of 0.2 kg make 4.04
LEG_MASS = (0.05, 0.15)  # hip link, leg link [kg]
HIPS = ((0.12, 1), (0.0, 1), (-0.12, 1), (0.12, -1), (0.0, -1), (-0.12, -1))  # (x [m], side: +1 left, -1 right)
REACH, DROP = 0.10, 0.12  # the foot's centre from the lift axis: outwards, downwards [m]
FOOT = (0.01, 0.03)  # dactyl capsule: radius, length [m]
SWING, LIFT = math.radians(20.0), math.radians(25.0)  # gait amplitudes [rad]
PERIOD = 1.0  # [s] one gait cycle
TRIPODS = ((0, 2, 4), (1, 3, 5))  # legs 0 (front left), 4 (middle right), 2 (rear left) together
KP, KD, EFFORT = 30.0, 0.6, 4.0  # servo gains [N m/rad, N m s/rad] and limit [N m]


def _inertia(mass, sx, sy, sz):
    return (f'<inertia ixx="{mass * (sy * sy + sz * sz) / 12}" iyy="{mass * (sx * sx + sz * sz) / 12}" '
            f'izz="{mass * (sx * sx + sy * sy) / 12}" ixy="0" ixz="0" iyz="0"/>')


def _visual(geometry: str, rgb: str, xyz="0 0 0", rpy="0 0 0") -> str:
    return (f'<visual><origin xyz="{xyz}" rpy="{rpy}"/><geometry>{geometry}</geometry>'
            f'<material name="{rgb}"/></visual>')


#: the colours the hexapod is drawn in
MATERIALS = ('<material name="shell"><color rgba="0.16 0.36 0.62 1"/></material>'
             '<material name="servo"><color rgba="0.18 0.18 0.2 1"/></material>'
             '<material name="leg"><color rgba="0.8 0.81 0.83 1"/></material>'
             '<material name="tip"><color rgba="0.1 0.1 0.1 1"/></material>')


def hexapod_urdf(payload: float = 0.0) -> str:
    """The hexapod's URDF; ``payload`` [kg] is added to the body (at its centre). Its visuals: the body as a blue
    shell on a dark plate, a servo at each hip, grey legs and black feet."""
    mass = BODY_MASS + payload
    parts = [f'<robot name="hexapod">{MATERIALS}<link name="body"><inertial><mass value="{mass}"/>'
             f'{_inertia(mass, *BODY)}</inertial><collision><geometry><box size="{BODY[0]} {BODY[1]} {BODY[2]}"/>'
             f'</geometry></collision>'
             + _visual(f'<box size="{BODY[0]} {BODY[1]} {0.5 * BODY[2]}"/>', "servo", f"0 0 {-0.25 * BODY[2]}")
             + _visual(f'<box size="{0.9 * BODY[0]} {0.8 * BODY[1]} {0.5 * BODY[2]}"/>', "shell",
                       f"0 0 {0.25 * BODY[2]}")
             + '</link>']
    for k, (x, side) in enumerate(HIPS):
        y = side * 0.5 * BODY[1]
        m0, m1 = LEG_MASS
        parts.append(f'<link name="hip{k}"><inertial><mass value="{m0}"/>{_inertia(m0, 0.03, 0.03, 0.03)}'
                     '</inertial>' + _visual('<cylinder radius="0.018" length="0.04"/>', "servo") + '</link>')
        parts.append(f'<joint name="swing{k}" type="revolute"><parent link="body"/><child link="hip{k}"/>'
                     f'<origin xyz="{x} {y} 0"/><axis xyz="0 0 1"/>'
                     f'<limit lower="-1" upper="1" effort="{EFFORT}" velocity="10"/></joint>')
        foot_y, foot_z = side * REACH, -DROP
        arm = math.hypot(REACH, DROP)
        tilt = side * math.atan2(REACH, DROP)  # (the leg's box from the lift axis to the foot)
        parts.append(f'<link name="leg{k}"><inertial><origin xyz="0 {foot_y / 2} {foot_z / 2}"/>'
                     f'<mass value="{m1}"/>{_inertia(m1, 0.02, 0.02, arm)}</inertial>'
                     f'<collision><origin xyz="0 {foot_y / 2} {foot_z / 2}" rpy="{tilt} 0 0"/>'
                     f'<geometry><box size="0.015 0.015 {arm}"/></geometry></collision>'
                     f'<collision><origin xyz="0 {foot_y} {foot_z}"/>'
                     f'<geometry><capsule radius="{FOOT[0]}" length="{FOOT[1]}"/></geometry></collision>'
                     + _visual(f'<box size="0.02 0.02 {arm}"/>', "leg", f"0 {foot_y / 2} {foot_z / 2}", f"{tilt} 0 0")
                     + _visual(f'<capsule radius="{FOOT[0]}" length="{FOOT[1]}"/>', "tip", f"0 {foot_y} {foot_z}")
                     + '</link>')
        parts.append(f'<joint name="lift{k}" type="revolute"><parent link="hip{k}"/><child link="leg{k}"/>'
                     f'<axis xyz="{side} 0 0"/><limit lower="-1" upper="1" effort="{EFFORT}" velocity="10"/>'
                     '</joint>')
    parts.append("</robot>")
    return "".join(parts)


def gait(t) -> np.ndarray:
    """Joint targets (swing0, lift0, swing1, lift1, ...) [rad] at time ``t`` [s] of the tripod gait: a standing
    leg swings back from +SWING to -SWING (its foot moves from front to back, pushing the body forward) while
    the other tripod lifts by LIFT (a half sine) and swings forward. ``t`` a number: shape (12,); an array of
    times: shape (len(t), 12)."""
    times = np.atleast_1d(np.asarray(t, dtype=np.float64))
    phase = (times / PERIOD) % 1.0
    out = np.zeros((len(times), 12))
    for g, legs in enumerate(TRIPODS):
        p = (phase + 0.5 * g) % 1.0  # each tripod: stance over [0, 0.5), swing over [0.5, 1)
        stance = p < 0.5
        sweep = np.where(stance, 1.0 - 4.0 * p, -1.0 + 4.0 * (p - 0.5))
        lift = np.where(stance, 0.0, np.sin(2.0 * math.pi * (p - 0.5)))
        for k in legs:
            side = HIPS[k][1]
            out[:, 2 * k] = -side * SWING * sweep  # (left legs: a negative swing angle puts the foot forward)
            out[:, 2 * k + 1] = LIFT * lift
    return out[0] if np.ndim(t) == 0 else out


def add_hexapod(world, payload: float = 0.0, *, plates: int = 500, height: float = None):
    """The hexapod standing with its feet on the sand's surface (z = 0) and its servos holding the gait's first
    pose; each foot (the dactyl of each leg link) gets about ``plates`` plates (at least that many, and at least
    32: 512 for the default 500, 128 for 100). Returns the system."""
    robot = world.add_articulated_system(hexapod_urdf(payload),
                                         position=(0.0, 0.0, DROP + FOOT[0] + 0.5 * FOOT[1] if height is None
                                                   else height))
    import trimesh

    rings = max(4, min(16, math.ceil(math.sqrt(plates / 2))))  # (a capsule of n x n segments has 2 n^2 faces, and
    # a mesh is cut into plates no coarser than its faces: 500 plates take 16 x 16, 100 take 8 x 8)
    for k, (_x, side) in enumerate(HIPS):  # (plates on the dactyl, the part of the leg that enters the sand)
        foot = trimesh.creation.capsule(height=FOOT[1], radius=FOOT[0], count=[rings, rings])
        foot.apply_translation((0.0, side * REACH, -DROP))
        world.add_plates(robot, f"leg{k}", count=plates, mesh=foot)
    nv = robot.get_dof()
    kp, kd = np.zeros(nv), np.zeros(nv)
    kp[6:], kd[6:] = KP, KD
    robot.set_pd_gains(kp, kd)
    q = robot.get_generalized_coordinate()
    q[:, 7:] = gait(0.0)
    robot.set_generalized_coordinate(q)
    set_gait(robot, 0.0)
    return robot


def set_gait(robot, t: float) -> None:
    """The servos' targets at time ``t`` [s] (the same in every env)."""
    n_envs = robot.get_generalized_coordinate().shape[0]
    target = np.zeros((n_envs, robot.get_generalized_coordinate_dim()))
    target[:, 7:] = gait(t)
    rate = np.zeros((n_envs, robot.get_dof()))
    rate[:, 6:] = (gait(t + 1e-3) - gait(t)) / 1e-3
    robot.set_pd_target(target, rate)


def foot_depths(world, env: int = 0) -> np.ndarray:
    """Each foot's deepest plate below the sand [m] (0 for a foot above it)."""
    depth = world.get_plate_forces(env)["depth"]
    return np.array([max(0.0, depth[ps.rows].max()) for ps in world.plate_sets])
