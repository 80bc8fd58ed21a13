"""Randomized terrain: 16 envs, each on a tile of its own (slopes, steps, rough ground and soft soil patches at
four levels of difficulty, each soft tile with its own soil), a wheel driven across each, drawn as a grid.

    python scenes/randomized_terrain.py                                      # a window
    python scenes/randomized_terrain.py --headless --record randomized_terrain.gif

Rows are levels (easiest at the back), columns the kinds. The tiles come from ``taichi_terra.TerrainTiles``:
one rigid height map and one soil bed, each with heights per env, in one world stepped in one launch. The
wheel (a speed-tracking push along its rolling direction, for 0.75 m) heads for a soft patch where its tile
has one; the beds are coloured by sinkage, so its ruts show there.
"""
from __future__ import annotations

import math

import numpy as np

from taichi_terra.viewer import OrbitCamera, Style, app

KINDS = ("slope", "steps", "rough", "soft_soil")
LEVELS = 4
TILE, SAMPLES, SPACING = 2.0, 41, 2.4
WHEEL_R, WHEEL_W, WHEEL_M = 0.14, 0.1, 8.0
SPEED = 0.3  # [m/s] the wheel's target speed
REACH = 0.75  # [m] from its start the wheel is pushed this far (then held back), short of the tile's edge
G = 9.81


def build(args) -> app.Scene:
    import taichi_terra as tt

    n = args.envs
    world = tt.World(dt=1e-3, n_envs=n)
    tiles = tt.TerrainTiles(SAMPLES, SAMPLES, TILE, TILE, levels=LEVELS, kinds=KINDS, seed=7,
                            shapes=tt.TileShapes(platform=0.5, max_grade=0.35, max_step=0.06, step_width=0.25,
                                                 max_roughness=0.08))
    parts = tiles.add_to(world)
    x, y = tiles.grid()  # a checker of 0.25 m squares on the rigid ground: slopes and steps read at a glance
    checker = ((np.floor(x / 0.25 + 1e-9) + np.floor(y / 0.25 + 1e-9)) % 2).reshape(-1, 1)
    parts["map"].set_color(np.array([0.5, 0.53, 0.47]) + checker * np.array([0.08, 0.08, 0.07]))
    kinds = [KINDS[e % len(KINDS)] for e in range(n)]
    levels = [min(e // len(KINDS), LEVELS - 1) for e in range(n)]
    tiles.place_all(kinds, levels)
    # each env's heading: towards its first soft patch, else along +x
    heading = np.zeros(n)
    for e in range(n):
        patches = tiles.tile(kinds[e], levels[e]).patches
        if patches:
            heading[e] = math.atan2(patches[0][1], patches[0][0])
    direction = np.stack([np.cos(heading), np.sin(heading), np.zeros(n)], axis=1)
    wheel = world.add_cylinder(WHEEL_R, WHEEL_W, WHEEL_M)
    wheel.set_position(np.stack([-0.1 * direction[:, 0], -0.1 * direction[:, 1], np.full(n, WHEEL_R + 0.01)], 1))
    # axle across the heading: the cylinder's axis (z) turned to the heading's left
    rot = np.zeros((n, 3, 3))
    rot[:, :, 0] = direction
    rot[:, :, 2] = np.stack([-direction[:, 1], direction[:, 0], np.zeros(n)], axis=1)
    rot[:, :, 1] = np.cross(rot[:, :, 2], rot[:, :, 0])
    wheel.set_orientation(rot)
    gain = 10.0  # [1/s] speed tracking, held for a whole frame: gain * frame time < 1
    scan_points = np.array([[0.3, 0.0], [0.6, 0.0]])  # ahead of the wheel, in its yaw frame

    def controller(w):
        v = wheel.get_linear_velocity()
        along = np.sum(v * direction, axis=1)
        target = np.where(np.sum(wheel.get_position() * direction, axis=1) + 0.1 < REACH, SPEED, 0.0)
        f = WHEEL_M * gain * (target - along)[:, None] * direction
        side = v - along[:, None] * direction
        f[:, :2] -= WHEEL_M * gain * side[:, :2]
        f = np.clip(f, -3.0 * WHEEL_M * G, 3.0 * WHEEL_M * G)
        wheel.set_external_force(f)

    def report(w):
        p = wheel.get_position()
        gone = np.sum(p * direction, axis=1) + 0.1  # (from the start, 0.1 m behind the tile's centre)
        bed = parts["bed"]
        sink = [bed.get_soil_state(e)["plastic_sinkage"].max() * 1e3 for e in range(n)]
        ahead = w.scan_heights(scan_points, wheel)[:, 1]
        by_kind = ", ".join(f"{k} {np.mean(gone[[e for e in range(n) if kinds[e] == k]]):.2f} m"
                            for k in KINDS if k in kinds)
        return (f"{n} envs after {w.time:.2f} s: mean travel by kind: {by_kind}; deepest rut in a soft tile "
                f"{max(sink):.1f} mm; ground 0.6 m ahead of the wheels from {np.nanmin(ahead):.3f} to "
                f"{np.nanmax(ahead):.3f} m")

    shown = list(range(min(n, 16)))
    cols = min(len(KINDS), len(shown))
    rows = math.ceil(len(shown) / cols)
    centre = np.array([(cols - 1) * SPACING / 2, -(rows - 1) * SPACING / 2, 0.0])
    camera = OrbitCamera(target=centre + np.array([0.0, 0.4, 0.0]),
                         distance=max(3.5, 1.25 * max(cols, rows) * SPACING), yaw=math.radians(-90.0),
                         pitch=math.radians(36.0))
    return app.Scene(world, camera=camera, envs=shown, controller=controller,
                     viewer_options={"tile_spacing": (SPACING, SPACING),
                                     "style": Style(color_by="sinkage", color_range=0.03)},
                     report=report)


def main(argv=None) -> dict:
    return app.main(build, "randomized_terrain", __doc__.splitlines()[0], argv, seconds=4.0, fps=12.0, envs=16)


if __name__ == "__main__":
    main()
