"""Hexapod in sand: a 4.04 kg, 12-joint hexapod walks a tripod gait through sand.

    python scenes/hexapod_sand.py                      # a window (orbit with the mouse)
    python scenes/hexapod_sand.py --headless --record hexapod_sand.gif
    python scenes/hexapod_sand.py --payload 1.0        # a payload on its back [kg]

The robot of ``spec/rft_granular.md``'s last experiment, as far as the spec describes it: 4.04 kg, six legs of
two joints (a swing about the vertical, a lift about the leg's own horizontal axis), position-controlled servos,
one gait cycle per second, walking in deep sand (zeta = 3.75 N/cm^3; resistive force theory on 500 plates per
foot, the sand's resistance as a row of the sweep, so a standing foot holds). Each foot is a dactyl, a curved
claw: here a capsule of 1 cm radius. The legs move in two tripods: while one tripod stands and swings
backwards, pushing the body forward, the other lifts, swings forwards and sets down. Plates are coloured by
their stress; the report gives the distance walked and the feet's sinkage.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import Annotations, OrbitCamera, app

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


def gait(t: float) -> np.ndarray:
    """Joint targets (swing0, lift0, swing1, lift1, ...) [rad] at time ``t`` [s] of the tripod gait: a standing
    leg swings back from +SWING to -SWING (its foot moves from front to back, pushing the body forward) while
    the other tripod lifts by LIFT (a half sine) and swings forward."""
    phase = (t / PERIOD) % 1.0
    out = np.zeros(12)
    for g, legs in enumerate(TRIPODS):
        p = (phase + 0.5 * g) % 1.0  # each tripod: stance over [0, 0.5), swing over [0.5, 1)
        for k in legs:
            side = HIPS[k][1]
            if p < 0.5:
                sweep, lift = 1.0 - 4.0 * p, 0.0
            else:
                sweep, lift = -1.0 + 4.0 * (p - 0.5), math.sin(2.0 * math.pi * (p - 0.5))
            out[2 * k] = -side * SWING * sweep  # (left legs: a negative swing angle puts the foot forward)
            out[2 * k + 1] = LIFT * lift
    return out


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


def build(args) -> app.Scene:
    import taichi_terra as tt

    payload = getattr(args, "payload", 0.0)  # (set by main's --payload)
    world = tt.World(dt=1e-3, n_envs=args.envs)
    world.add_granular_medium(0.0, zeta=3.75, smoothing=1.0, mode="row")
    robot = add_hexapod(world, payload)
    start = robot.get_generalized_coordinate(0)[:3].copy()
    sinkage = []

    def control(w):
        set_gait(robot, w.time)
        if w.time > 0.5:
            sinkage.append(foot_depths(w).max())

    def report(w):
        q = robot.get_generalized_coordinate(0)
        return (f"env 0 after {w.time:.2f} s (payload {payload:.2f} kg): walked {q[0] - start[0]:+.3f} m "
                f"along x ({(q[0] - start[0]) / max(w.time, 1e-9) * 100:.1f} cm/s), body at z = {q[2]:.3f} m, "
                f"deepest foot {1000 * (max(sinkage) if sinkage else 0.0):.1f} mm below the sand")

    camera = OrbitCamera(target=(0.1, 0.0, 0.05), distance=0.9, yaw=math.radians(-55.0), pitch=math.radians(22.0))
    return app.Scene(world, camera=camera, follow=robot, envs=None if args.envs == 1 else "all", report=report,
                     controller=control, control_period=0.01,
                     viewer_options={"annotations": Annotations(frame_size=0.06)})


def main(argv=None) -> dict:
    import argparse

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--payload", type=float, default=0.0, help="payload on the body [kg], >= 0 (default: 0)")
    known, rest = extra.parse_known_args(argv)
    if not (math.isfinite(known.payload) and known.payload >= 0.0):
        raise SystemExit(f"--payload must be a mass >= 0 [kg], got {known.payload}")

    def build_with_payload(args):
        args.payload = known.payload
        return build(args)

    return app.main(build_with_payload, "hexapod_sand", __doc__.splitlines()[0], rest, seconds=5.0)


if __name__ == "__main__":
    main()
