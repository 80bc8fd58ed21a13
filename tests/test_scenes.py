"""Every demo scene runs headless for 1 s of simulated time (short settings), and the scenes' command line
rejects bad input before anything is simulated."""
import importlib.util
from pathlib import Path

import pytest

SCENES = Path(__file__).resolve().parents[1] / "scenes"
SHORT = ["--headless", "--quiet", "--seconds", "1", "--fps", "10", "--width", "96", "--height", "64"]


def load(name):
    spec = importlib.util.spec_from_file_location(f"scene_{name}", SCENES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name,extra,steps", [
    ("slope_and_wall", [], 1000), ("soil_ruts", [], 1000), ("many_worlds", ["--envs", "4"], 1000),
    ("cradle_and_pile", [], 1000),
    ("push_boxes", [], 10), ("robot_crowd", ["--envs", "3"], 10),  # planar worlds: dt = 0.1 s
])
def test_scene_runs_headless_for_one_second(name, extra, steps, tmp_path):
    """1 s is 1000 steps at dt = 1 ms (10 at a planar world's 0.1 s), drawn as 10 frames whatever the physics
    rate."""
    out = load(name).main(SHORT + extra + ["--record", str(tmp_path / "a.gif"), "--still", str(tmp_path / "a.png")])
    assert out["frames"] == 10
    assert out["steps"] == steps
    assert out["sim_time"] == pytest.approx(1.0, abs=1e-9)
    assert (tmp_path / "a.gif").stat().st_size > 0 and (tmp_path / "a.png").stat().st_size > 0


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
])
def test_bad_command_line_stops_before_simulating(argv, message, capsys):
    from taichi_terra.viewer import app

    def build(args):
        raise AssertionError("the scene was built despite a bad argument")

    with pytest.raises(SystemExit) as err:
        app.main(build, "test", "a scene", argv + ["--headless"])
    assert err.value.code == 2
    assert message in capsys.readouterr().err
