"""Every demo scene runs headless for 1 s of simulated time (short settings) and draws what it simulates, the
same in every picture and (but the quadruped's, whose step kernel would compile a second time there) in
another process; the scenes' command line rejects bad input before anything is simulated and reports progress
through tqdm."""
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from drawing_oracle import centre_pixels, expect_3d, expect_planar, sample_grid, visual_links
from PIL import Image

pytestmark = pytest.mark.needs("vulkan")  # (the scenes draw through GGUI, which renders through Vulkan)

SCENES = Path(__file__).resolve().parents[1] / "scenes"
W, H = 480, 270
SHORT = ["--headless", "--quiet", "--seconds", "1", "--fps", "10", "--width", str(W), "--height", str(H)]
CAPTURES = 8  # pictures of the final state taken in the test's process, besides the run's own still
#: scene, extra arguments, steps in 1 s (dt = 1 ms; a planar world's dt = 0.1 s)
CASES = [("slope_and_wall", [], 1000), ("soil_ruts", [], 1000), ("many_worlds", ["--envs", "4"], 1000),
         ("cradle_and_pile", [], 1000), ("push_boxes", [], 10), ("robot_crowd", ["--envs", "3"], 10),
         ("quadruped_terrain", ["--envs", "2"], 1000),  # 2 envs: the tree kernel test_articulated compiled
         ("tracked_robot_steps", ["--envs", "2"], 500), ("conveyor", ["--envs", "2"], 500),  # (dt = 2 ms)
         ("rotating_intruder", ["--envs", "1"], 1000), ("hexapod_sand", ["--envs", "1"], 1000),
         ("buggy_soil", ["--envs", "1"], 1000), ("randomized_terrain", ["--envs", "16"], 1000)]
#: scenes checked in this process only (their step kernel would compile a second time in the other one)
HERE_ONLY = {"quadruped_terrain", "tracked_robot_steps", "conveyor", "rotating_intruder", "hexapod_sand",
             "buggy_soil"}
#: the links of an articulated scene's first system that must be drawn where they are
LINKS_SHOWN = {"quadruped_terrain": lambda shown: "trunk" in shown and {link[:2] for link in shown} >= {
    "FL", "FR", "RL", "RR"},
    "tracked_robot_steps": lambda shown: {"base", "left_flipper", "right_flipper"} <= shown,
    "conveyor": lambda shown: "world" in shown,  # (the belt's frame link is fixed to the root, merged into it)
    "rotating_intruder": lambda shown: "plate" in shown,
    "hexapod_sand": lambda shown: "body" in shown,
    "buggy_soil": lambda shown: "chassis" in shown}
_RUNS = {}  # scene -> what its run in this process saw (see ``run_here``)

OTHER_PROCESS = textwrap.dedent("""
    import importlib.util, sys
    for name, argv in {runs!r}:
        spec = importlib.util.spec_from_file_location(name, {scenes!r} + "/" + name + ".py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.main(argv)
""")


def load(name):
    spec = importlib.util.spec_from_file_location(f"scene_{name}", SCENES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def other_process(tmp_path_factory):
    """Every scene's run, with a still, in one more process, started with the first scene test so that both
    processes work at once. Yields (process, folder of the stills ``<scene>.png``)."""
    out = tmp_path_factory.mktemp("other_process")
    runs = [(name, SHORT + extra + ["--still", str(out / f"{name}.png")]) for name, extra, _ in CASES
            if name not in HERE_ONLY]
    proc = subprocess.Popen([sys.executable, "-c", OTHER_PROCESS.format(runs=runs, scenes=str(SCENES))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    yield proc, out
    if proc.poll() is None:
        proc.kill()
    for stream in (proc.stdout, proc.stderr):  # (closed also where no test read them: a worker that started the
        if not stream.closed:                   # process without running the test that reads it)
            stream.close()
    proc.wait()


def run_here(name, extra, folder) -> dict:
    """Run a scene in this process, recording a GIF and a still into ``folder``; returns the run's timing and
    the final state's expected picture, overlay rectangle, object count and pictures (its still first)."""
    from taichi_terra.viewer import app

    seen = {}

    def inspect(viewer, world):
        grid = sample_grid(W, H, 5)
        if getattr(world, "is_planar", False):
            seen["expect"] = expect_planar(viewer, world, grid)
            seen["n_objects"] = len(viewer.envs) * len(world.objects)
        else:
            seen["expect"] = expect_3d(viewer, world, np.concatenate([grid, centre_pixels(viewer, world)]))
            seen["n_objects"] = len(viewer.envs) * (len(world.bodies) + len(world.heightmaps))
            seen["links"] = dict(world._model.body_links)  # body index -> (system, link name)
            seen["visual_links"] = visual_links(world)  # visual index -> its link's name
        seen["overlay"] = getattr(viewer, "overlay_box", None)
        seen["images"] = [(f"capture {k}", viewer.capture()) for k in range(CAPTURES)]
        if seen.get("links"):  # the link frames as axes, and a camera that follows the robot
            viewer.show_frames = True
            seen["with_frames"] = viewer.capture()
            robot = world.articulated_systems[0]
            viewer.follow = robot
            viewer.capture()
            seen["followed"] = (viewer.camera.target.copy(),
                                robot.get_frame_position(robot.get_body_names()[0], viewer.envs[0]))

    seen["out"] = app.main(load(name).build, name, "a scene", SHORT + extra + [
        "--record", str(folder / "a.gif"), "--still", str(folder / "a.png")], on_finish=inspect)
    seen["images"].insert(0, ("still", np.asarray(Image.open(folder / "a.png"))))
    _RUNS[name] = seen
    return seen


def outside(image, box):
    """The image with the overlay's rectangle (its frame rates change from picture to picture) blanked."""
    out = image.copy()
    if box is not None:
        out[box[1]:box[3], box[0]:box[2]] = 0
    return out


def count_colour(image, rgb, tol=2.0) -> int:
    """Pixels of ``image`` within ``tol`` 8-bit levels of the colour ``rgb`` (in [0, 1])."""
    return int((np.abs(np.asarray(image, float) - 255.0 * np.asarray(rgb)).max(axis=2) <= tol).sum())


def check_pictures(name, seen, images) -> None:
    """Each picture shows what the geometry says (at least half of the objects in view, each drawn in 80 % of
    its samples, 98 % of all samples right) and equals the run's still outside the overlay."""
    expect, first = seen["expect"], outside(seen["images"][0][1], seen["overlay"])
    for label, image in images:
        assert image.shape == (H, W, 3)
        verdict = expect.judge(image)
        assert len(verdict.objects()) >= 0.5 * seen["n_objects"], (label, len(verdict.objects()))
        assert not verdict.failing(0.8), f"{name}, {label}: not drawn {verdict.failing(0.8)}, e.g. {verdict.wrong[:4]}"
        assert sum(verdict.matched.values()) >= 0.98 * sum(verdict.expected.values()), (label, verdict.wrong[:8])
        assert np.array_equal(outside(image, seen["overlay"]), first), f"{name}: {label} differs from the still"


@pytest.mark.parametrize("name,extra,steps", CASES)
def test_scene_runs_headless_and_draws_what_it_simulates(name, extra, steps, tmp_path, request):
    """1 s is 1000 steps at dt = 1 ms (10 at a planar world's 0.1 s), drawn as 10 frames whatever the physics
    rate. Reference for the pictures: the world's own geometry. Every sampled pixel (a 5 px grid, plus each
    body's and height map's projected centre) is cast as a view ray into the final state, and the object the
    ray meets first must be the one the pixel shows (see ``drawing_oracle``), in the run's still and in 8 more
    pictures of the same state, all the same outside the text overlay. (Taichi 1.7's GGUI lost whole meshes
    at random in some frames: its shader read an unwritten instance transform; the viewer now passes one.)"""
    if name not in HERE_ONLY:
        request.getfixturevalue("other_process")  # (started with the first scene, to run beside this process)
    seen = run_here(name, extra, tmp_path)
    assert seen["out"]["frames"] == 10
    assert seen["out"]["steps"] == steps
    assert seen["out"]["sim_time"] == pytest.approx(1.0, abs=1e-9)
    assert (tmp_path / "a.gif").stat().st_size > 0
    check_pictures(name, seen, seen["images"])
    if seen.get("links"):  # an articulated robot: its links are drawn where they are (the quadruped's trunk and
        # a shape of each leg; the tracked robot's body and flippers; the conveyor's belt)
        verdict = seen["expect"].judge(seen["images"][0][1])
        shown = {seen["links"][k[1]][1] for k in verdict.objects() if k[0] == "body" and k[1] in seen["links"]
                 and k[2] == 0}
        shown |= {seen["visual_links"][k[1]] for k in verdict.objects() if k[0] == "visual" and k[2] == 0}
        assert LINKS_SHOWN[name](shown), sorted(shown)
        from taichi_terra.viewer.viewer import AXIS_COLORS

        still, framed = (outside(im, seen["overlay"]) for im in (seen["images"][0][1], seen["with_frames"]))
        for rgb in AXIS_COLORS:  # each axis colour appears (lines are drawn unlit) where it did not before
            assert count_colour(framed, rgb) > count_colour(still, rgb), rgb
        np.testing.assert_allclose(seen["followed"][0], seen["followed"][1], atol=1e-9)  # tile 0 has no offset


def test_another_process_draws_the_same_pictures(other_process, tmp_path):
    """The same runs in a second process (started with the first scene test) leave stills that pass the same
    checks against this process's final states, and equal this process's stills outside the overlay."""
    proc, folder = other_process
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err[-3000:]
    for name, extra, _ in CASES:
        if name in HERE_ONLY:
            continue
        seen = _RUNS.get(name) or run_here(name, extra, tmp_path)  # run here too if its own test was not
        check_pictures(name, seen, [("still of another process", np.asarray(Image.open(folder / f"{name}.png")))])


@pytest.mark.parametrize("argv,message", [
    (["--arch", "metal"], "--arch"),
    (["--envs", "-2"], "--envs"),
    (["--seconds", "0"], "--seconds"),
    (["--fps", "0"], "--fps"),
    (["--record", "/proc/x.gif"], "not writable"),
    (["--record", "/nonexistent/x.gif"], "does not exist"),
    (["--record", "x.avi"], "unsupported"),
    (["--still", "x.jpg"], "unsupported"),
    (["--arch", "vulkan", "--precision", "f64"], "f64"),
    (["--show", "mesh"], "--show"),
])
def test_bad_command_line_stops_before_simulating(argv, message, capsys):
    from taichi_terra.viewer import app

    def build(args):
        raise AssertionError("the scene was built despite a bad argument")

    with pytest.raises(SystemExit) as err:
        app.main(build, "test", "a scene", argv + ["--headless"])
    assert err.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("flags,shown", [([], False), (["--progress"], True), (["--quiet"], False)])
def test_progress_bar_shows_on_a_terminal_or_when_asked(flags, shown, capsys):
    """The headless progress bar is tqdm's, on stderr: off when stderr is not a terminal (as under pytest) unless
    --progress asks for it, and off with --quiet, which also drops the report."""
    from taichi_terra.viewer import app

    def build(args):
        import taichi_terra.planar as planar

        world = planar.World(dt=0.1)
        world.add_circle(0.2, mass=1.0)
        return app.Scene(world, report=lambda w: "the report")

    out = app.main(build, "tiny", "a scene", ["--headless", "--seconds", "0.5", "--fps", "10", "--width", "64",
                                               "--height", "48", *flags])
    assert out["frames"] == 5
    captured = capsys.readouterr()
    assert ("5/5" in captured.err) == shown
    assert ("the report" in captured.out) == ("--quiet" not in flags)


def test_quiet_and_progress_exclude_each_other(capsys):
    from taichi_terra.viewer import app

    with pytest.raises(SystemExit) as err:
        app.main(lambda args: None, "test", "a scene", ["--headless", "--quiet", "--progress"])
    assert err.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_control_period_calls_the_controller_within_a_frame():
    """A scene's controller runs before each frame's steps, and with ``control_period`` every that many
    simulated seconds too: a planar world at dt = 0.1 s drawn at 2 fps takes 5 steps a frame, which a 0.2 s
    period splits into 2 + 2 + 1 (3 calls a frame, at t = 0, 0.2, 0.4 s of it). A bad period is rejected."""
    from taichi_terra.viewer import app

    times = []

    def build(args, period=0.2):
        import taichi_terra.planar as planar

        world = planar.World(dt=0.1)
        world.add_circle(0.2, mass=1.0)
        return app.Scene(world, controller=lambda w: times.append(round(w.time, 9)), control_period=period)

    argv = ["--headless", "--quiet", "--seconds", "1", "--fps", "2", "--width", "64", "--height", "48"]
    out = app.main(build, "tiny", "a scene", argv)
    assert out["steps"] == 10 and times == [0.0, 0.2, 0.4, 0.5, 0.7, 0.9]
    for bad in (0.0, -1.0, float("nan"), True, "0.1"):
        with pytest.raises(ValueError, match="control_period"):
            app.main(lambda args, bad=bad: build(args, bad), "tiny", "a scene", argv)
