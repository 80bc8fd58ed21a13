"""Soil ruts: a sled, a wheel and a ball are dropped on a soil bed, dragged across it and lifted away,
leaving ruts; the surface springs back by its elastic part once the load is gone.

    python scenes/soil_ruts.py                                     # a window
    python scenes/soil_ruts.py --headless --record soil_ruts.gif   # offscreen, writes an animation

The bed is coloured by sinkage (dark where the soil is pressed down). The timeline scales with --seconds:
settling for the first 20 %, dragging (a speed-tracking horizontal force) until 65 %, then a lift.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import OrbitCamera, Style, app

BED_X, BED_Y, SPACING = 3.0, 1.6, 0.025
G = 9.81


def build(args) -> app.Scene:
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=args.envs)
    nx, ny = round(BED_X / SPACING) + 1, round(BED_Y / SPACING) + 1
    soil = tt.SoilMaterial(bekker_kphi=1.2e5, sinkage_exponent=1.0, elastic_stiffness=4e5, damping=2e3,
                           friction_coefficient=0.5, shear_displacement=0.02)
    bed = world.add_deformable_terrain(nx, ny, BED_X, BED_Y, 0.0, 0.0, np.zeros(nx * ny), soil)
    sled = world.add_box(0.4, 0.3, 0.1, 30.0)
    wheel = world.add_cylinder(0.15, 0.12, 20.0)
    ball = world.add_sphere(0.12, 10.0)
    start_x = -1.1
    lanes = {sled: (0.45, 0.06), wheel: (0.0, 0.16), ball: (-0.45, 0.13)}
    for body, (y, z) in lanes.items():
        body.set_position([start_x, y, z + 0.03])
    wheel.set_orientation([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # axle along y: rolls along x
    total = args.seconds
    drag_speed = 1.9 / (0.45 * total)  # crosses about 1.9 m while dragged

    gain = 10.0  # [1/s] speed tracking; the force is held for a whole frame, so gain * frame time < 1

    def controller(w):
        t = w.time / total
        for body in lanes:
            m = body.mass
            v = body.get_linear_velocity()  # (n_envs, 3)
            p = body.get_position()
            f = np.zeros_like(v)
            if 0.2 <= t < 0.65:  # drag: track the speed along x, hold the lane
                f[:, 0] = m * gain * (drag_speed - v[:, 0])
                if body is sled:  # it slides: add the soil's friction, mu m g, as feed-forward
                    f[:, 0] += soil.friction_coefficient * m * G
                f[:, 1] = -m * gain * v[:, 1]
            elif t >= 0.65:  # lift: carry the weight, rise at 0.8 m/s to 0.35 m, then hover
                target_vz = np.where(p[:, 2] < 0.35, 0.8, 0.0)
                f[:, 0] = -m * gain * v[:, 0]
                f[:, 1] = -m * gain * v[:, 1]
                f[:, 2] = m * G + m * gain * (target_vz - v[:, 2])
            body.set_external_force(f)
            if t >= 0.65:
                body.set_external_torque(-gain * body.get_angular_velocity() @ body.inertia)  # spin damping

    def report(w):
        st = bed.get_soil_state(0)
        rut = st["plastic_sinkage"].max()
        return (f"env 0 after {w.time:.2f} s: deepest rut {rut * 1e3:.1f} mm (permanent), "
                f"sinkage now {st['sinkage'].max() * 1e3:.1f} mm, {np.count_nonzero(st['plastic_sinkage'] > 1e-4)} "
                f"of {bed.n_samples} samples pressed down by more than 0.1 mm")

    camera = OrbitCamera(target=(0.1, 0.05, 0.0), distance=3.1, yaw=math.radians(-62.0), pitch=math.radians(33.0))
    return app.Scene(world, camera=camera, envs=None if args.envs == 1 else "all", controller=controller,
                     viewer_options={"style": Style(color_by="sinkage", color_range=0.03)}, report=report)


def main(argv=None) -> dict:
    return app.main(build, "soil_ruts", __doc__.splitlines()[0], argv, seconds=6.0, fps=20.0)


if __name__ == "__main__":
    main()
