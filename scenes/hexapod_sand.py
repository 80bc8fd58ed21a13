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

from taichi_terra.bodies.hexapod import add_hexapod, foot_depths, gait, hexapod_urdf, set_gait
from taichi_terra.viewer import Annotations, OrbitCamera, app

#: the scene's names, the model's among them (``taichi_terra/bodies/hexapod.py``)
__all__ = ["add_hexapod", "build", "foot_depths", "gait", "hexapod_urdf", "main", "set_gait"]


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
