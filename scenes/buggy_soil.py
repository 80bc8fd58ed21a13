"""Buggy on soil: an 896 kg off-road buggy drives a gentle S over a 16 m x 6 m soil bed and is lifted away.

    python scenes/buggy_soil.py                                      # a window
    python scenes/buggy_soil.py --headless --record buggy_soil.gif   # offscreen, writes an animation
    python scenes/buggy_soil.py --spacing 0.02                       # a finer bed [m]

The buggy (``taichi_terra.bodies.buggy``: double-wishbone suspension closed by pins, coil-overs and tyre
springs as joint springs, rack-and-pinion steering, rear-wheel drive) starts from standstill with its wheels
on the undeformed surface and drives from t = 0, no settling phase: its rear wheels' velocity drives request
0.8 m/s at the ground (the speed it reaches is what sinkage, slip and soil resistance leave). The rack steers a
gentle S (a smooth sine of time). Timeline [s]: drive 0 to 11 (the S from 1 to 10), brake and stand until 13,
then an upward force on the chassis lifts the car 0.5 m away, so the bed shows its elastic recovery and the
ruts that remain. The bed is coloured by sinkage (dark where the soil is pressed down), true to scale.

Soil (spec: deformable_terrain.md, "Vehicle example"): bekker_kphi 2e6 Pa/m^1.1, elastic_stiffness 2e7 Pa/m,
damping 4e4 Pa s/m, sinkage_exponent 1.1, cohesion 100 Pa; the other fields at their defaults.
"""
from __future__ import annotations

import math
import time

import numpy as np

from taichi_terra.bodies import buggy as mb
from taichi_terra.viewer import OrbitCamera, Style, app

BED_X, BED_Y, SPACING = 16.0, 6.0, 0.04  # [m]
START_X = -6.0  # chassis origin at the start [m] (the bed spans x in [-8, 8])
SPEED = 0.8  # requested ground speed of the rear wheels [m/s]
S_START, S_END, S_ANGLE = 1.0, 10.0, 0.20  # the S: from, to [s], steering amplitude [rad, mean front wheel]
DRIVE_END, LIFT_START = 11.0, 13.0  # [s]
LIFT_HEIGHT, LIFT_SPEED = 0.5, 0.4  # [m] above the start height, [m/s]
CONTROL_PERIOD = 0.01  # [s]
G = 9.81
SOIL = dict(bekker_kphi=2.0e6, elastic_stiffness=2.0e7, damping=4.0e4, sinkage_exponent=1.1, cohesion=100.0)


def steering(t: float) -> tuple[float, float]:
    """Mean front wheel angle [rad] (positive: left) and its rate [rad/s] at time ``t`` [s]: one period of
    ``S_ANGLE sin^3`` between ``S_START`` and ``S_END`` (left, then right; zero angle, rate and curvature
    rate at both ends), zero outside."""
    if not S_START <= t <= S_END:
        return 0.0, 0.0
    w = 2.0 * math.pi / (S_END - S_START)
    s = math.sin(w * (t - S_START))
    return S_ANGLE * s ** 3, 3.0 * S_ANGLE * s ** 2 * math.cos(w * (t - S_START)) * w


def wheel_forces(world, system) -> dict:
    """Normal force [N] of the soil on each wheel in the last step, by corner: the sum over that wheel's soil
    contacts of (impulse . normal) / dt."""
    c = world.get_contacts(0)
    out = {k: 0.0 for k in mb.CORNERS}
    for imp, nrm, label, link in zip(c.impulses, c.normals, c.static, c.link_b):
        if label.startswith("soil") and link is not None and link[1].endswith("_wheel"):
            out[link[1][:2]] += float(imp @ nrm) / world.dt
    return out


def patch_values(bed, field: np.ndarray, centre, half_x: float, half_y: float) -> np.ndarray:
    """Values of a per-sample ``field`` (shape (n_samples,)) in the rectangle ``centre`` +- (half_x, half_y)
    [m] of the bed's (unrotated, centred at the origin) sample grid."""
    xs = np.linspace(-0.5 * bed.x_size, 0.5 * bed.x_size, bed.x_samples)
    ys = np.linspace(-0.5 * bed.y_size, 0.5 * bed.y_size, bed.y_samples)
    X, Y = np.meshgrid(xs, ys)  # (ny, nx): heights[y * nx + x]
    inside = (np.abs(X - centre[0]) <= half_x) & (np.abs(Y - centre[1]) <= half_y)
    return field.reshape(bed.y_samples, bed.x_samples)[inside]


def build(args) -> app.Scene:
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=args.envs)
    world.solver.tolerance = mb.SOLVER_TOLERANCE  # (its error bound: taichi_terra/bodies/buggy.py)
    sp = getattr(args, "spacing", SPACING)  # (the generic scene parser has no --spacing)
    nx, ny = round(BED_X / sp) + 1, round(BED_Y / sp) + 1
    bed = world.add_deformable_terrain(nx, ny, BED_X, BED_Y, 0.0, 0.0, np.zeros(nx * ny), tt.SoilMaterial(**SOIL))
    buggy = mb.add_buggy(world, position=(START_X, 0.0, mb.RIDE_HEIGHT), speed=SPEED)
    system = buggy.system
    weight = buggy.mass * G
    log = {"t": [], "x": [], "y": [], "vx": [], "wheel": [], "force": [], "enter": [], "leave": []}
    rest = {}

    def controller(w):
        """The control callback, its entry and exit timed (the physics between two calls is the interval from
        one's exit to the next one's entry)."""
        enter = time.perf_counter()
        control(w)
        log["enter"].append(enter)
        log["leave"].append(time.perf_counter())

    def control(w):
        t = w.time
        if log["t"] and t < log["t"][-1]:  # the viewer's reset (r): start the logs again
            for v in log.values():
                v.clear()
            rest.clear()
        q, u = system.get_generalized_coordinate(), system.get_generalized_velocity()  # (n_envs, ...)
        log["t"].append(t)
        log["x"].append(q[0, 0])
        log["y"].append(q[0, 1])
        log["vx"].append(u[0, 0])
        log["wheel"].append(u[0, list(buggy.rear_wheels)].mean() * mb.WHEEL_RADIUS)
        log["force"].append(bed.get_soil_step_stats(0)["normal_force"] if w.step_count else 0.0)
        if t < DRIVE_END:
            angle, rate = steering(t)
            buggy.u_target[buggy.rack] = mb.steer_to_rack(rate)
            buggy.set_commands(speed=SPEED, rack=mb.steer_to_rack(angle))
        elif t < LIFT_START:
            buggy.u_target[buggy.rack] = 0.0
            buggy.set_commands(speed=0.0, rack=0.0)  # brake, wheels straight
            if t >= LIFT_START - 0.25 and "forces" not in rest:  # at rest: the wheels' loads and sinkage
                rest["forces"] = wheel_forces(w, system)
                rest["time"] = t
                rest["sinkage"] = bed.get_soil_state(0)["sinkage"].copy()
                rest["contacts"] = {c: system.get_frame_position(f"{c}_wheel", 0) for c in mb.CORNERS}
        else:  # lift: a force at the chassis origin carries the weight and tracks a rise, a torque keeps it level
            if "lift_from" not in rest:
                rest["lift_from"] = q[:, 2].copy()
                buggy.drive_off()
            m = buggy.mass
            target_vz = np.where(q[:, 2] < rest["lift_from"] + LIFT_HEIGHT, LIFT_SPEED, 0.0)
            f = np.zeros_like(u)
            gain = 8.0  # [1/s]
            f[:, 0:2] = -m * gain * u[:, 0:2]
            f[:, 2] = m * G + m * gain * (target_vz - u[:, 2])
            # level the chassis: its z axis back to vertical, spin damped (w, x, y, z quaternion)
            qw, qx, qy = q[:, 3], q[:, 4], q[:, 5]
            tilt = 2.0 * np.stack([qw * qx, qw * qy, np.zeros_like(qw)], axis=1)  # small-angle rotation vector
            f[:, 3:6] = -4.0e3 * tilt - 1.5e3 * u[:, 3:6]
            system.set_generalized_force(f)

    def measurements(w) -> dict:
        t = np.array(log["t"])
        x, vx = np.array(log["x"]), np.array(log["vx"])
        out = {"time": w.time, "distance": float(x[-1] - START_X) if len(x) else 0.0,
               "lateral_offset": float(log["y"][-1]) if log["y"] else 0.0, "weight": weight}
        cruise = (t > DRIVE_END - 4.0) & (t < DRIVE_END)  # the last 4 s of driving
        out["speed"] = float(vx[cruise].mean()) if cruise.any() else None
        out["speed_requested"] = SPEED
        if cruise.any():  # the rear wheels' rim speed, and their slip: 1 - ground speed / rim speed
            out["rear_rim_speed"] = float(np.array(log["wheel"])[cruise].mean())
            out["rear_slip"] = 1.0 - out["speed"] / out["rear_rim_speed"]
            out["cruise_load_over_weight"] = float(np.array(log["force"])[cruise].mean()) / weight
        if "forces" in rest:
            f = rest["forces"]
            out["wheel_force"] = f
            out["load_over_weight"] = sum(f.values()) / weight
            out["front_share"] = (f["fl"] + f["fr"]) / sum(f.values())
            sink = rest["sinkage"]
            half = {c: (0.2, 0.5 * (mb.FRONT_WIDTH if mb.is_front(c) else mb.REAR_WIDTH)) for c in mb.CORNERS}
            out["sinkage_at_rest"] = {c: float(patch_values(bed, sink, rest["contacts"][c], *half[c]).max())
                                      for c in mb.CORNERS}
            if w.time > LIFT_START + 0.5:
                st = bed.get_soil_state(0)
                out["rut"] = {c: float(patch_values(bed, st["plastic_sinkage"], rest["contacts"][c], *half[c]).max())
                              for c in mb.CORNERS}
                out["surface_after_lift"] = {c: float(patch_values(bed, st["sinkage"], rest["contacts"][c],
                                                                   *half[c]).max()) for c in mb.CORNERS}
        out["deepest_rut"] = float(bed.get_soil_state(0)["plastic_sinkage"].max())
        # physics time per step: the controller runs every CONTROL_PERIOD within a frame's steps, so the
        # median interval from one call's exit to the next one's entry is that many steps of physics (frames
        # are drawn between some; the controller's own reads and writes are left out)
        gaps = np.array(log["enter"][1:]) - np.array(log["leave"][:-1])
        if len(gaps) > 2:
            out["ms_per_step"] = float(np.median(gaps)) * 1e3 / round(CONTROL_PERIOD / w.dt)
            out["real_time_factor"] = w.dt * 1e3 / out["ms_per_step"]
        return out

    def report(w):
        r = measurements(w)
        build.last_report = r
        lines = [f"env 0 after {r['time']:.2f} s: drove {r['distance']:.2f} m along x, ended "
                 f"{r['lateral_offset']:+.2f} m off the centre line"]
        if r["speed"] is not None:
            lines.append(f"settled forward speed {r['speed']:.3f} m/s (requested {SPEED} m/s at the rear wheels, whose "
                         f"rims turn at {r['rear_rim_speed']:.3f} m/s: {r['rear_slip'] * 100:.1f} % slip)")
        if "wheel_force" in r:
            f = r["wheel_force"]
            lines.append("at rest: wheel loads [N] " + ", ".join(f"{c} {f[c]:.0f}" for c in mb.CORNERS)
                         + f"; sum / weight = {r['load_over_weight']:.5f} (front {r['front_share'] * 100:.1f} %)")
            lines.append("sinkage under the wheels at rest [mm]: " + ", ".join(
                f"{c} {v * 1e3:.1f}" for c, v in r["sinkage_at_rest"].items()))
        if "rut" in r:
            lines.append("after the lift, ruts where the wheels stood [mm]: " + ", ".join(
                f"{c} {v * 1e3:.1f}" for c, v in r["rut"].items()) + " (front: one pass; rear: front and rear)")
        lines.append(f"deepest rut on the bed {r['deepest_rut'] * 1e3:.1f} mm")
        if "ms_per_step" in r:
            lines.append(f"physics {r['ms_per_step']:.2f} ms per step (median): real-time factor "
                         f"{r['real_time_factor']:.3f}")
        return "\n".join(lines)

    build.measurements = measurements
    camera = OrbitCamera(target=(-1.2, 0.3, 0.0), distance=10.0, yaw=math.radians(-58.0), pitch=math.radians(38.0))
    return app.Scene(world, camera=camera, envs=None if args.envs == 1 else "all", controller=controller,
                     control_period=CONTROL_PERIOD, report=report,
                     viewer_options={"style": Style(color_by="sinkage", color_range=0.08)})


def main(argv=None) -> dict:
    """Run the scene; returns the run's timing (``frames``, ``steps``, ``sim_time``, ``wall_s``, ``physics_s``
    (the first step's compilation included), ``render_s``) and ``report``: the measurements of the final
    state (``speed`` [m/s], ``load_over_weight`` [-], ``wheel_force`` [N], ``sinkage_at_rest`` and ``rut`` [m]
    per corner, ``ms_per_step``, ``real_time_factor``, ...; those of phases not reached are left out)."""
    p = app.parser(__doc__.splitlines()[0], seconds=15.0, fps=20.0)
    p.add_argument("--spacing", type=float, default=SPACING, help=f"soil bed sample spacing [m] (default: {SPACING})")
    args = app.parse(p, argv)
    if not (math.isfinite(args.spacing) and 0.005 <= args.spacing <= 0.5):
        p.error(f"--spacing must be in [0.005, 0.5] m, got {args.spacing}")
    build.last_report = None

    def finish(viewer, world):
        build.last_report = build.measurements(world)

    out = app.run(build, args, "buggy_soil", on_finish=finish)
    out["report"] = build.last_report
    return out


if __name__ == "__main__":
    main()
