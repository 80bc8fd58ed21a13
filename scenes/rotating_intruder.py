"""Rotating intruder: a flat plate on a motor sweeps through sand and pulls its carriage along a rail.

    python scenes/rotating_intruder.py                      # a window (orbit with the mouse)
    python scenes/rotating_intruder.py --headless --record rotating_intruder.gif

The rotating-intruder experiment of ``spec/rft_granular.md``: a 20 mm wide flat plate turns half a turn about a
horizontal axis 9 cm above the sand, reaching 5.5 cm deep, at 0.5, 1 and 2 rad/s (one env per speed, side by
side). Its motor is a stiff velocity drive on a carriage that slides along a rail with Coulomb friction; the
sand (resistive force theory, RFT-SiM's play sand: zeta = 3.75 N/cm^3) resists the plate, so the motor's torque
rises and falls with the plate's depth, and the reaction pushes the carriage forward. The plates are coloured by
the stress on them. The report gives each env's peak torque and the carriage's advance.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import OrbitCamera, app

SPEEDS = (0.5, 1.0, 2.0)  # [rad/s], env k turns at SPEEDS[k % 3]
AXIS_HEIGHT = 0.09  # above the sand [m]
DEPTH = 0.055  # the plate's deepest reach [m]
WIDTH, THICKNESS = 0.02, 0.004  # [m]
LENGTH = AXIS_HEIGHT + DEPTH  # from the axis to the plate's tip [m]
RAIL_FRICTION = 0.5  # [N]
START = -0.5 * math.pi  # [rad] the plate starts horizontal (pointing along +x) and turns through straight down


def intruder_urdf(*, carriage: bool = True, carriage_mass: float = 0.8, plate_mass: float = 0.03) -> str:
    """The URDF of the rig: a fixed ``rail``; with ``carriage``, a ``carriage`` link sliding along x on it
    (joint ``slide``, friction ``RAIL_FRICTION``); the ``plate`` turning about y on joint ``motor`` (pointing down
    at 0), the motor's axis ``AXIS_HEIGHT`` above z = 0."""
    ip = plate_mass * LENGTH ** 2 / 12.0
    plate = (f'<link name="plate"><inertial><origin xyz="0 0 {-LENGTH / 2}"/><mass value="{plate_mass}"/>'
             f'<inertia ixx="{ip}" iyy="{ip}" izz="{ip / 100}" ixy="0" ixz="0" iyz="0"/></inertial>'
             f'<collision><origin xyz="0 0 {-LENGTH / 2}"/><geometry><box size="{THICKNESS} {WIDTH} {LENGTH}"/>'
             '</geometry></collision></link>')
    motor_parent = "carriage" if carriage else "rail"
    motor = (f'<joint name="motor" type="continuous"><parent link="{motor_parent}"/><child link="plate"/>'
             f'<origin xyz="0 0 {AXIS_HEIGHT}"/><axis xyz="0 1 0"/><limit effort="50" velocity="10"/></joint>')
    rig = '<link name="rail"/>'
    if carriage:
        ic = carriage_mass * 0.01
        rig += (f'<link name="carriage"><inertial><mass value="{carriage_mass}"/><inertia ixx="{ic}" iyy="{ic}" '
                f'izz="{ic}" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                '<joint name="slide" type="prismatic"><parent link="rail"/><child link="carriage"/>'
                f'<axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="0" velocity="10"/>'
                f'<dynamics friction="{RAIL_FRICTION}"/></joint>')
    return f'<robot name="rotating_intruder">{rig}{plate}{motor}</robot>'


def drive(rig, speeds) -> None:
    """A stiff velocity drive on each env's motor at ``speeds[env]`` [rad/s]."""
    nv = rig.get_dof()
    motor = rig.get_generalized_velocity_index("motor")
    kd = np.zeros(nv)
    kd[motor] = 20.0
    target = np.zeros((len(speeds), nv))
    target[:, motor] = speeds
    rig.set_pd_gains(np.zeros(nv), kd)
    rig.set_pd_target(np.zeros((len(speeds), rig.get_generalized_coordinate_dim())), target)
    q = rig.get_generalized_coordinate()
    q[:, motor] = START
    u = np.zeros((len(speeds), nv))
    u[:, motor] = speeds
    rig.set_generalized_coordinate(q)
    rig.set_generalized_velocity(u)


def build(args) -> app.Scene:
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=args.envs)
    world.add_granular_medium(0.0, zeta=3.75, smoothing=1.0, mode="row")
    rig = world.add_articulated_system(intruder_urdf(), base="fixed")
    world.add_plates(rig, "plate", area=4e-6)
    speeds = np.array([SPEEDS[k % 3] for k in range(args.envs)])
    drive(rig, speeds)
    motor, slide = rig.get_generalized_velocity_index("motor"), rig.get_generalized_velocity_index("slide")
    peaks = np.zeros(args.envs)

    stopped = np.zeros(args.envs, bool)

    def stop_after_half_turn(w):  # (each env's drive stops its plate once it has turned half a turn; the peak
        # torque is sampled every 10 ms)
        q = rig.get_generalized_coordinate()
        peaks[:] = np.maximum(peaks, np.abs(rig.get_generalized_force()[:, motor]))
        done = q[:, motor] >= START + math.pi
        if (done != stopped).any():
            stopped[:] = done
            target = np.zeros((args.envs, rig.get_dof()))
            target[:, motor] = np.where(done, 0.0, speeds)
            rig.set_pd_target(np.zeros((args.envs, rig.get_generalized_coordinate_dim())), target)

    def report(w):
        q = rig.get_generalized_coordinate()
        lines = [f"after {w.time:.2f} s:"]
        for e in range(args.envs):
            lines.append(f"  env {e} at {speeds[e]:.1f} rad/s: plate at {math.degrees(q[e, motor] - START):.0f} "
                         f"deg of 180, peak motor torque {peaks[e]:.3f} N m, carriage advanced "
                         f"{1000 * q[e, slide]:.1f} mm")
        return "\n".join(lines)

    camera = OrbitCamera(target=(0.08, 0.0, 0.02), distance=0.26, yaw=math.radians(-35.0), pitch=math.radians(12.0))
    if args.envs > 1:  # (tiles 0.45 m apart)
        camera = OrbitCamera(target=(0.25, -0.2, 0.0), distance=1.2, yaw=math.radians(-60.0), pitch=math.radians(25.0))
    return app.Scene(world, camera=camera, envs=None if args.envs == 1 else "all", report=report,
                     controller=stop_after_half_turn, control_period=0.01,
                     viewer_options={"tile_spacing": (0.45, 0.45)})


def main(argv=None) -> dict:
    return app.main(build, "rotating_intruder", __doc__.splitlines()[0], argv, seconds=6.5, envs=3)


if __name__ == "__main__":
    main()
