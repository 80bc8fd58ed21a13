"""The command line shared by the demo scenes in ``scenes/``.

A scene script defines ``build(args) -> Scene`` and calls :func:`main`. Every scene takes::

    --arch cpu|cuda|vulkan|gpu   --precision f32|f64   --envs N   --headless   --seconds S
    --record PATH (.gif, .mp4 or a folder of PNG frames)   --still PATH (.png)   --fps F
    --width W --height H   --quiet | --progress

A headless run shows a progress bar (``tqdm``) on stderr when stderr is a terminal; ``--progress`` shows it
anyway (a log file, CI), ``--quiet`` neither the bar, the report nor the compile notice.

Drawing needs a Vulkan driver (on a machine without a GPU, Mesa's software one) and ``.mp4`` recording needs
ffmpeg: a scene installs what is missing where it can (root, ``apt-get``; see :mod:`taichi_terra.system`) and
otherwise stops at once with one line naming the command that would. The world's step kernel is compiled
before the first frame (:meth:`~taichi_terra.World.compile`) and the report gives that time apart from the
physics.

All arguments (including the output paths) are checked before Taichi starts. Frames are drawn at ``--fps``
frames per simulated second, independent of the physics time step: each frame advances the world by the
steps that bring it to that frame's time.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

ARCHS = ("cpu", "cuda", "vulkan", "gpu")


@dataclass
class Scene:
    """What a scene's ``build`` returns.

    Attributes:
        world: the world to run.
        camera: an :class:`~taichi_terra.viewer.OrbitCamera` (a planar world: ``(cx, cy, half_height)`` [m]),
            or ``None`` to frame everything.
        follow: a body for the camera to follow (a planar world: an object with an ``index``), or ``None``.
        envs: envs to draw (``None``: env 0; ``"all"`` or a list: tiled).
        controller: called as ``controller(world)`` before each frame's steps (scripted pushes and drags).
        control_period: if set, the controller is also called every ``control_period`` simulated seconds
            [s], > 0, within a frame's steps (rounded to whole steps, at least one), so that what it does does
            not depend on ``--fps`` (a gait's PD targets).
        viewer_options: further keyword arguments of the viewer: :class:`~taichi_terra.viewer.Viewer` (e.g.
            ``style``, ``annotations``, ``tile_spacing``; the command line's ``--show`` replaces the ``show`` of
            its ``style``), or :class:`~taichi_terra.viewer.PlanarViewer` for a planar world (``world.is_planar``;
            e.g. ``style``). The runner gives the viewer its ``headless``, ``window`` (size and title from the
            command line), ``envs``, ``camera`` and ``follow`` itself.
        report: called as ``report(world)`` at the end; returns text printed as the scene's result.
    """

    world: object
    camera: object = None
    follow: object = None
    envs: object = None
    controller: Callable | None = None
    control_period: float | None = None
    viewer_options: dict = field(default_factory=dict)
    report: Callable | None = None


def parser(description: str, *, seconds: float = 4.0, envs: int = 1, fps: float = 30.0, width: int = 960,
           height: int = 540) -> argparse.ArgumentParser:
    """The scenes' argument parser, with a scene's own defaults."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--arch", default="cpu", choices=ARCHS, help="Taichi backend (default: cpu)")
    p.add_argument("--precision", default=None, choices=("f32", "f64"),
                   help="floating point type (default: f64, f32 on vulkan)")
    p.add_argument("--envs", type=int, default=envs, help=f"number of environments, >= 1 (default: {envs})")
    p.add_argument("--headless", action="store_true", help="render offscreen, no window")
    p.add_argument("--seconds", type=float, default=seconds, help=f"simulated time [s], > 0 (default: {seconds})")
    p.add_argument("--record", default=None, metavar="PATH",
                   help="write the frames: PATH.gif, PATH.mp4 (needs ffmpeg) or a folder of PNG frames")
    p.add_argument("--still", default=None, metavar="PATH", help="save the last frame as a PNG")
    p.add_argument("--fps", type=float, default=fps, help=f"frames per simulated second (default: {fps:g})")
    p.add_argument("--width", type=int, default=width, help=f"image width [px] (default: {width})")
    p.add_argument("--height", type=int, default=height, help=f"image height [px] (default: {height})")
    p.add_argument("--show", default="visual", choices=("visual", "collision", "both"),
                   help="draw robots as their URDF visuals, their collision shapes or both (default: visual; "
                        "the v key cycles them)")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument("--quiet", action="store_true", help="no progress bar and no report")
    talk.add_argument("--progress", action="store_true",
                      help="show the progress bar even when stderr is not a terminal")
    return p


def parse(p: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """Parse and check every argument; a bad one exits with a message before anything is simulated."""
    from .recorder import check_output_path

    args = p.parse_args(argv)
    if args.envs < 1:
        p.error(f"--envs must be >= 1, got {args.envs}")
    if not (math.isfinite(args.seconds) and args.seconds > 0.0):
        p.error(f"--seconds must be a positive number of simulated seconds, got {args.seconds}")
    if not (math.isfinite(args.fps) and 0.0 < args.fps <= 240.0):
        p.error(f"--fps must be in (0, 240], got {args.fps}")
    for name in ("width", "height"):
        if not 16 <= getattr(args, name) <= 8192:
            p.error(f"--{name} must be in [16, 8192] pixels, got {getattr(args, name)}")
    if args.precision is None:
        args.precision = "f32" if args.arch == "vulkan" else "f64"
    if args.arch == "vulkan" and args.precision == "f64":
        p.error("--precision f64 is not available on --arch vulkan (use f32)")
    try:
        if args.record is not None:
            from .. import system
            from .recorder import Recorder

            if str(args.record).lower().endswith(".mp4"):
                system.provide(["ffmpeg"], quiet=args.quiet)  # (where it can; the check below names what is missing)

            Recorder(args.record, args.fps)  # checks the path and the encoder; writes nothing yet
        if args.still is not None:
            check_output_path("still", args.still, (".png",))
    except (TypeError, ValueError) as exc:
        p.error(f"--{exc!s}")
    return args


def _progress_bar(total: int, args: argparse.Namespace):
    """A ``tqdm`` bar over the frames of a headless run, on stderr; disabled with ``--quiet``, and when stderr
    is not a terminal unless ``--progress`` asks for it."""
    from tqdm import tqdm

    shown = args.headless and not args.quiet and (args.progress or sys.stderr.isatty())
    return tqdm(total=total, unit="frame", disable=not shown, file=sys.stderr, dynamic_ncols=True, leave=True)


def run(scene_build: Callable, args: argparse.Namespace, name: str, *, on_finish: Callable | None = None) -> dict:
    """Initialise Taichi, build the scene, run it for ``args.seconds`` and draw/record it. Returns timing:
    ``frames``, ``steps``, ``sim_time`` [s], ``wall_s``, ``compile_s`` (building the world and compiling its
    step kernel, before the first frame), ``physics_s`` and ``render_s`` (wall seconds).

    Raises :class:`~taichi_terra.system.MissingSystemSoftware` where the Vulkan driver is missing and could
    not be installed (:func:`main` turns it into a one-line exit).

    ``on_finish``, if given, is called as ``on_finish(viewer, world)`` once, right after the last frame (and the
    still) is drawn and before the viewer closes: a place to take more pictures or measurements of the end state.
    """
    import taichi as ti

    import taichi_terra as tt

    from .options import Style, Window, option
    from .planar_viewer import PlanarViewer
    from .recorder import Recorder
    from .viewer import Viewer

    from .. import system

    system.require(["vulkan"], quiet=args.quiet)  # (GGUI draws through Vulkan, headless or not)
    tt.init(arch=args.arch, precision=args.precision, verbose=not args.quiet)
    t_build = time.perf_counter()
    scene = scene_build(args)
    world = scene.world
    if hasattr(world, "compile"):  # (the first step's compile, reported apart from the physics)
        world.compile()
    compile_s = time.perf_counter() - t_build
    chunk = None  # steps per controller call within a frame
    if scene.control_period is not None:
        if isinstance(scene.control_period, bool) or not (
                isinstance(scene.control_period, (int, float)) and math.isfinite(scene.control_period)
                and scene.control_period > 0.0):
            raise ValueError(f"Scene.control_period must be a positive number of seconds or None, "
                             f"got {scene.control_period!r}")
        chunk = max(1, round(scene.control_period / world.dt))
    recorder = Recorder(args.record, args.fps) if args.record is not None else None
    planar = getattr(world, "is_planar", False)
    viewer_class = PlanarViewer if planar else Viewer  # 2D view of a planar world
    options = dict(scene.viewer_options)
    if not planar:  # --show picks the link look, over the scene's own Style
        options["style"] = replace(option("style", options.get("style"), Style), show=getattr(args, "show", "visual"))
    window = Window(args.width, args.height, title=f"taichi_terra: {name}")
    viewer = viewer_class(world, headless=args.headless, window=window, envs=scene.envs, camera=scene.camera,
                          follow=scene.follow, **options)
    start = world.checkpoint()
    t_begin = world.time

    n_frames = max(1, math.ceil(args.seconds * args.fps - 1e-9))
    progress = _progress_bar(n_frames, args)
    counters = {"frame": 0, "steps": 0, "compile_s": compile_s, "physics_s": 0.0, "render_s": 0.0}

    def reset():  # the r key: back to the start (recording goes on)
        world.restore(start)
        counters["frame"] = 0

    t0 = time.perf_counter()
    image = None
    reported = False
    try:
        # headless: until --seconds are simulated; in a window: until it is closed (the simulation pauses
        # after --seconds; r restarts it)
        while args.headless and counters["frame"] < n_frames or not args.headless and viewer.running:
            step_once = False
            if not args.headless:
                step_once = viewer.handle_input(on_reset=reset)["step_once"]
                if not viewer.running:
                    break
            frame = counters["frame"]
            if frame < n_frames and (not viewer.paused or step_once):
                # steps that bring the world to the end of this frame, t_begin + (frame + 1) / fps
                n = round((t_begin + (frame + 1) / args.fps - world.time) / world.dt)
                ta = time.perf_counter()
                _advance(world, scene, n, chunk)
                if n > 0:
                    ti.sync()  # GPU backends run asynchronously: count the steps as physics time
                    counters["steps"] += n
                counters["physics_s"] += time.perf_counter() - ta
                counters["frame"] = frame + 1
                tb = time.perf_counter()
                if args.headless or recorder is not None:
                    image = viewer.capture()
                    if recorder is not None:
                        recorder.add(image)
                if not args.headless:
                    viewer.show()
                counters["render_s"] += time.perf_counter() - tb
                progress.set_postfix_str(f"t = {world.time:.2f} s", refresh=False)
                progress.update(1)
                if not args.headless:  # keep to real time
                    lag = (world.time - t_begin) - (time.perf_counter() - t0)
                    if lag > 0.0:
                        time.sleep(min(lag, 0.1))
            else:
                viewer.show()
                time.sleep(1.0 / 60.0)
            if counters["frame"] == n_frames and not reported:
                reported = True
                if args.still is not None:
                    from PIL import Image

                    Image.fromarray(image if image is not None else viewer.capture()).save(args.still)
                progress.close()
                _report(args, name, scene, world, counters, time.perf_counter() - t0, t_begin)
                if on_finish is not None:
                    on_finish(viewer, world)
    finally:
        progress.close()
        if recorder is not None:
            recorder.close()
        viewer.close()
    return {"frames": counters["frame"], "steps": counters["steps"], "sim_time": world.time - t_begin,
            "wall_s": time.perf_counter() - t0, "compile_s": compile_s, "physics_s": counters["physics_s"],
            "render_s": counters["render_s"]}


def _advance(world, scene, n: int, chunk: int | None) -> None:
    """Run a frame's ``n`` steps: the controller first, and again every ``chunk`` steps if ``chunk`` is set."""
    parts = [n] if chunk is None or n <= chunk else [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])
    for k in parts:
        if scene.controller is not None:
            scene.controller(world)
        if k > 0:
            world.step(k)


def _report(args, name, scene, world, counters, wall, t_begin) -> None:
    if args.quiet:
        return
    frames = counters["frame"]
    print(f"{name}: {frames} frames, {counters['steps']} steps ({world.time - t_begin:.2f} s simulated, "
          f"{args.envs} env{'s' if args.envs > 1 else ''}) in {wall:.2f} s after {counters['compile_s']:.2f} s "
          f"building and compiling: physics {counters['physics_s']:.2f} s, "
          f"drawing {counters['render_s'] / max(frames, 1) * 1e3:.1f} ms per {args.width}x{args.height} frame")
    if scene.report is not None:
        print(scene.report(world))
    for path in (args.record, args.still):
        if path is not None:
            print(f"wrote {path}{' (when the window closes)' if path == args.record and not args.headless else ''}")


def main(scene_build: Callable, name: str, description: str, argv=None, *, on_finish: Callable | None = None,
         **defaults) -> dict:
    """Parse the command line (``argv``, default ``sys.argv[1:]``), then :func:`run` the scene. Exits with
    one line on stderr where software the scene needs is missing and could not be installed."""
    from ..system import MissingSystemSoftware

    args = parse(parser(description, **defaults), argv)
    try:
        return run(scene_build, args, name, on_finish=on_finish)
    except MissingSystemSoftware as exc:
        raise SystemExit(f"{name}: {exc}") from None
