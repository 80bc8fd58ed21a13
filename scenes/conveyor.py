"""Conveyor: boxes dropped on a moving belt ride it at the belt's speed and slide off its end down a ramp.

    python scenes/conveyor.py                      # a window (orbit with the mouse)
    python scenes/conveyor.py --headless --record conveyor.gif

The conveyor is an articulated system on a fixed base: a 2 m belt, 0.5 m wide, around two rollers of 0.1 m
at 0.5 m height (``spec/tracks.md``, "Conveyors"). A velocity PD on the driven roller holds it at 6 rad/s, so
the belt's upper run moves at 0.6 m/s; the tread marks drawn on the belt move with it. Each box lands on
the belt, slips until friction has brought it to the belt's speed (the roller's drive feels that friction),
rides to the end and slides down a ramp (friction 0.3 against the boxes, 25 degrees).
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import OrbitCamera, app

ROLLER_SPEED = 6.0  # [rad/s]
GAIN = 0.1  # belt speed per roller rad/s [m]
CONVEYOR = """<robot name="conveyor">
  <link name="world"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="frame"/><origin xyz="0 0 0.5"/></joint>
  <link name="frame"/>
  <link name="roller_link"><inertial><mass value="2"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="roller" type="continuous"><parent link="frame"/><child link="roller_link"/>
    <origin xyz="1 0 0"/><axis xyz="0 1 0"/><limit effort="200" velocity="100"/></joint>
  <track name="belt" link="frame" width="0.5" thickness="0.02" material="belt" color="0.2 0.22 0.25 1">
    <axis xyz="0 1 0"/><wheel joint="roller" radius="0.1"/><wheel xyz="-1 0 0" radius="0.1"/>
    <drive joint="roller" gain="0.1"/></track>
</robot>"""
RAMP_ANGLE = math.radians(25.0)
RAMP_X0, RAMP_TOP = 1.15, 0.6
RAMP_LENGTH = RAMP_TOP / math.tan(RAMP_ANGLE)  # (down to the ground)
BOXES = ((-0.85, 0.0, 0.2, 0.2, 0.2, 2.0), (-0.45, 0.08, 0.25, 0.15, 0.12, 1.0), (-0.05, -0.1, 0.18, 0.3, 0.1, 1.5),
         (-0.9, 0.1, 0.12, 0.12, 0.24, 0.8))


def build(args) -> app.Scene:
    import taichi_terra as tt

    world = tt.World(dt=2e-3, n_envs=args.envs)
    world.add_material("box")
    world.add_material("ramp")
    world.add_ground(0.0)
    world.set_material_pair_prop("box", "belt", 0.8, 0.0)
    world.set_material_pair_prop("box", "ramp", 0.3, 0.0)
    nx, ny = 33, 9
    x = np.linspace(0.0, RAMP_LENGTH, nx)
    heights = np.tile(RAMP_TOP - math.tan(RAMP_ANGLE) * x, ny)
    shade = np.where((np.arange(nx * ny) // 2) % 2, 0.62, 0.56)[:, None] * np.array([1.0, 0.95, 0.85])
    world.add_heightmap(nx, ny, RAMP_LENGTH, 1.0, RAMP_X0 + 0.5 * RAMP_LENGTH, 0.0, heights, material="ramp",
                        colors=shade)
    conveyor = world.add_articulated_system(CONVEYOR, base="fixed")
    conveyor.set_pd_gains([0.0], [100.0])
    conveyor.set_pd_target([0.0], [ROLLER_SPEED])
    conveyor.set_generalized_velocity([ROLLER_SPEED])
    boxes = []
    for k, (bx, by, sx, sy, sz, mass) in enumerate(BOXES):
        box = world.add_box(sx, sy, sz, mass, material="box")
        box.set_position((bx, by, 0.62 + 0.5 * sz + 0.05 + 0.25 * k))
        boxes.append(box)

    def report(w):
        s = conveyor.get_track_speed(0, env=0)
        lines = [f"env 0 after {w.time:.2f} s: belt at {s:.3f} m/s, roller drive "
                 f"{conveyor.get_generalized_force(0)[0]:.2f} N m"]
        for k, box in enumerate(boxes):
            p, v = box.get_position(0), box.get_linear_velocity(0)
            lines.append(f"  box {k}: at x = {p[0]:+.2f} m, z = {p[2]:.2f} m, moving at {v[0]:+.2f} m/s along x")
        return "\n".join(lines)

    camera = OrbitCamera(target=(0.5, 0.0, 0.4), distance=4.2, yaw=math.radians(-60.0), pitch=math.radians(28.0))
    return app.Scene(world, camera=camera, envs=None if args.envs == 1 else "all", report=report)


def main(argv=None) -> dict:
    return app.main(build, "conveyor", __doc__.splitlines()[0], argv, seconds=5.0)


if __name__ == "__main__":
    main()
