"""Viewer benchmark: frames per second of the headless GGUI viewer on the soil-ruts scene.

    python -m perf viewer [--width 640] [--height 480] [--frames 60] [--repeats 5] [--envs 1]

Builds ``scenes/soil_ruts.py`` (scene ``ruts``) and, after warm-up, times frames of the scene as a recording would
make them (simulate 1/30 s, then draw and read back one frame), splitting each frame into physics and drawing.
Also times a frame whose terrain is re-uploaded whole, against the normal one that rewrites only the rows whose
height revisions moved on. Then draws the buggy in 1 and 16 tiles (``--robot-envs``, scene ``buggy_tiles``) as
its URDF visuals and as its collision shapes. Prints medians over repeats and their ratios.
"""
from __future__ import annotations

import time

from .. import scenes
from ..timing import median
from . import init_backend

SMOKE = ["--width", "64", "--height", "48", "--frames", "2", "--repeats", "1", "--robot-envs", "1"]
OUT = "viewer.json"


def add_arguments(p) -> None:
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)
    p.add_argument("--frames", type=int, default=60, help="frames per timed repeat")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--envs", type=int, default=1)
    p.add_argument("--fps", type=float, default=30.0, help="simulated frames per second (physics per frame)")
    p.add_argument("--robot-envs", type=int, nargs="*", default=[1, 16],
                   help="env counts of the robot frames (the buggy tiled; none: skip them)")


def run(args) -> dict:
    from taichi_terra.viewer import Viewer, Window

    init_backend("cpu", "f64")
    built = scenes.build("ruts", args.envs, seconds=args.repeats * args.frames / args.fps + 1.0)
    world, scene = built.world, built.parts["scene"]
    steps = round(1.0 / (args.fps * world.dt))
    viewer = Viewer(world, headless=True, window=Window(args.width, args.height), camera=scene.camera,
                    **scene.viewer_options)
    t0 = time.perf_counter()
    world.step(steps)
    viewer.capture()
    first = time.perf_counter() - t0
    for _ in range(10):  # warm-up: compile everything a frame uses
        scene.controller(world)
        world.step(steps)
        viewer.capture()
    physics, drawing, full_upload, rows = [], [], [], []
    for _ in range(args.repeats):
        tp = td = 0.0
        rows0 = viewer.stats["terrain_rows_written"]
        for _ in range(args.frames):
            a = time.perf_counter()
            scene.controller(world)
            world.step(steps)
            b = time.perf_counter()
            viewer.capture()
            td += time.perf_counter() - b
            tp += b - a
        physics.append(tp / args.frames)
        drawing.append(td / args.frames)
        rows.append((viewer.stats["terrain_rows_written"] - rows0) / args.frames)
        a = time.perf_counter()
        for _ in range(5):  # the same frame with every row rewritten (a new colour range forces it)
            viewer.color_range *= 1.0 + 1e-9
            viewer.capture()
        full_upload.append((time.perf_counter() - a) / 5)
    med = {k: median(v) for k, v in (("physics_s", physics), ("drawing_s", drawing),
                                                 ("full_upload_drawing_s", full_upload), ("rows_per_frame", rows))}
    frame = med["physics_s"] + med["drawing_s"]
    bed = world.heightmaps[0]
    result = {"width": args.width, "height": args.height, "envs": args.envs, "steps_per_frame": steps,
              "bed_samples": bed.n_samples, "bed_rows": bed.y_samples, "first_frame_s": first, **med,
              "viewer_fps": 1.0 / med["drawing_s"], "scene_fps": 1.0 / frame,
              "full_over_partial": med["full_upload_drawing_s"] / med["drawing_s"]}
    print(f"soil_ruts, {args.width}x{args.height} headless, bed {bed.x_samples}x{bed.y_samples} samples, "
          f"{steps} steps per frame (medians of {args.repeats} x {args.frames} frames):")
    print(f"  drawing a frame      {med['drawing_s'] * 1e3:7.1f} ms  ({result['viewer_fps']:.1f} frames/s), "
          f"{med['rows_per_frame']:.1f} of {bed.y_samples} terrain rows rewritten per frame")
    print(f"  with a full upload   {med['full_upload_drawing_s'] * 1e3:7.1f} ms  "
          f"(x{result['full_over_partial']:.2f} the row-wise frame)")
    print(f"  physics per frame    {med['physics_s'] * 1e3:7.1f} ms")
    print(f"  scene, both          {frame * 1e3:7.1f} ms  ({result['scene_fps']:.1f} frames/s); first frame incl. "
          f"compilation {first:.1f} s")
    viewer.close()
    result["robots"] = [robot_frames(n, args) for n in args.robot_envs]
    return result


def robot_frames(n_envs: int, args) -> dict:
    """Drawing the buggy of ``taichi_terra.bodies.buggy`` in ``n_envs`` tiles, as its URDF visuals (meshes of
    body, tyres and rims) and as its collision shapes: median time to draw and read back a frame, its pose
    moved between frames (nothing is stepped: this is the viewer's cost alone)."""
    from taichi_terra.viewer import Annotations, Style, Viewer, Window

    built = scenes.build("buggy_tiles", n_envs)
    world, buggy = built.world, built.parts["buggy"]
    q0 = buggy.system.get_generalized_coordinate()
    out = {"envs": n_envs}
    for show in ("visual", "collision"):
        viewer = Viewer(world, headless=True, window=Window(args.width, args.height), envs="all",
                        style=Style(show=show), annotations=Annotations(overlay=False))
        triangles = (viewer._n_idx["always"] + viewer._n_idx["visual" if show == "visual" else "collision"]) // 3
        times = []
        for k in range(10 + args.repeats * args.frames):
            q = q0.copy()
            q[:, 0] += 0.01 * k  # (moved along x: every link pose changes)
            buggy.system.set_generalized_coordinate(q)
            a = time.perf_counter()
            viewer.capture()
            if k >= 10:
                times.append(time.perf_counter() - a)
        viewer.close()
        out[show] = {"drawing_s": median(times), "triangles": triangles}
    ratio = out["visual"]["drawing_s"] / out["collision"]["drawing_s"]
    out["visual_over_collision"] = ratio
    print(f"  buggy x {n_envs:3d} tiles: visuals {out['visual']['triangles']:7,d} triangles "
          f"{out['visual']['drawing_s'] * 1e3:6.1f} ms a frame; collision shapes {out['collision']['triangles']:7,d} "
          f"triangles {out['collision']['drawing_s'] * 1e3:6.1f} ms (x{ratio:.2f})", flush=True)
    return out
