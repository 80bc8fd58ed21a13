"""The benchmarks (``perf/``), so that none rots unnoticed: every mode of ``python -m perf MODE`` runs in its smoke
mode (a few steps at one env, in this process, sharing its compiled kernels), every scene of the registry builds
and steps, every ``python -m perf.bench_*`` entry point is a mode's, and the backend harness's quick run covers
every harness scene on cpu f64 and f32, its JSON following its schema and cpu f32 ending within its rounding bound
of cpu f64. Timings are not asserted (only that they are positive)."""
import copy
import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perf import cli, harness_report, scenes  # noqa: E402
from perf.modes import MODES  # noqa: E402
from perf.modes.backends import BACKENDS, f32_tolerance  # noqa: E402


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """``python -m perf --quick``: the harness scenes on cpu f64 and f32, each backend in a process of its own."""
    out = tmp_path_factory.mktemp("harness")
    proc = subprocess.run([sys.executable, "-m", "perf", "--quick", "--out-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, json.loads((out / "harness.json").read_text())


def _check_mode(name: str, result: dict, tmp_path) -> None:
    """What each mode's smoke run must have produced, beyond running."""
    if name == "viewer":  # the buggy drawn both ways: its visuals have more triangles than its collision shapes
        robot = result["robots"][0]
        assert robot["visual"]["triangles"] > 5 * robot["collision"]["triangles"] > 0
        assert robot["visual"]["drawing_s"] > 0.0 and robot["collision"]["drawing_s"] > 0.0
    if name == "articulated":  # (the tree-stage kernel still builds on the step's tree functions)
        rows = [r for r in result["results"] if r["engine"] == "taichi_terra"]
        assert rows and all(r["env_steps_per_s"] > 0.0 and r["tree_stages_env_steps_per_s"] > 0.0 for r in rows)
    if name == "rft":
        assert all(f["max_abs_diff_over_max_force"] <= 1e-9 for f in result["forces"])
    if name == "soil":
        assert result["steps_per_s_median"] > 0.0 and np.isfinite(result["sinkage_m"])
    if name == "terrain_tiles":
        assert result["step_shared_ms"] > 0.0 and result["step_per_env_ms"] > 0.0 and result["place_all_ms"] > 0.0
    if name == "layouts":  # (on cpu both layouts compute the same bits: test_kernel_features.py)
        assert all(r["distance_m"] == 0.0 and not r["staged"]["past_loop_limit"] for r in result["rows"])
    saved = json.loads((tmp_path / f"{name}.json").read_text())
    assert saved["mode"] == name and saved["machine"]["cpu_count"] >= 1 and saved["result"] == json.loads(
        json.dumps(result, default=float))


_MARKS = {"viewer": pytest.mark.needs("vulkan"),
          "ray_rollouts": pytest.mark.filterwarnings("ignore")}  # (Ray's own start-up and shutdown warnings)


@pytest.mark.parametrize("name", [pytest.param(m, marks=_MARKS[m]) if m in _MARKS else m
                                  for m in MODES if m != "backends"])
def test_every_mode_runs_in_its_smoke_mode(name, tmp_path):
    if name in ("torch_io", "rl_throughput"):
        pytest.importorskip("torch")
    if name in ("rl_throughput", "ray_rollouts"):
        pytest.importorskip("rsl_rl")
    if name == "ray_rollouts":
        pytest.importorskip("ray")
    result = cli.run_mode(name, ["--smoke", "--out", str(tmp_path / f"{name}.json")])
    assert isinstance(result, dict) and result
    _check_mode(name, result, tmp_path)


@pytest.mark.parametrize("name", list(scenes.SCENES))
def test_every_scene_builds_and_steps(name):
    """Each scene at one env, two steps under its controller: finite positions of everything it has."""
    from perf.modes.backends import positions
    from perf.timing import advance

    scene = scenes.get(name)
    built = scene.build(1)
    advance(built.world, 2, built.control, scene.chunk)
    assert np.isfinite(positions(built.world)).all()
    assert scene.what and scene.full.envs and scene.quick.envs == (1,)


def test_every_bench_entry_point_is_a_mode():
    """``python -m perf.bench_X`` (and ``perf.harness``, ``perf.sweep_trace``) run mode X: the names that
    ``perf/ab.py`` and the docs use. One runs as a command, in its smoke mode."""
    names = [p.stem for p in (ROOT / "perf").glob("bench_*.py")] + ["harness", "sweep_trace"]
    assert len(names) >= 14
    for module in names:
        main = importlib.import_module(f"perf.{module}").main
        assert main.mode in MODES, module
    proc = subprocess.run([sys.executable, "-m", "perf.bench_stages", "--smoke", "--out", "-"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "launch of an empty loop" in proc.stdout


def test_quick_run_covers_every_scene_on_cpu_f64_and_f32_and_writes_table_and_plot(quick):
    out, result = quick
    assert harness_report.validate(result, scenes.SCENES, BACKENDS) == []
    assert [b["backend"] for b in result["backends"]] == ["cpu-f64", "cpu-f32"]
    for b in result["backends"]:
        assert b["available"] and "crashed" not in b
        ran = {(r["scene"], r["n_envs"]) for r in b["runs"] if "error" not in r}
        assert ran == {(s, n) for s in scenes.HARNESS for n in scenes.get(s).quick.envs}
        assert all(r["finite"] and r["env_steps_per_s"] > 0.0 for r in b["runs"])
    table = (out / "harness.md").read_text()
    for name in scenes.HARNESS:
        assert f"| {name} | 1 |" in table
    png = (out / "harness.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_cpu_f32_ends_within_the_rounding_bound_of_cpu_f64_on_every_bounded_scene(quick):
    """Reference: cpu f64 on the same scene, the same steps from the same start. The bound is
    ``f32_tolerance``: 64 float32 roundings of the scene's length per step, added up linearly over the steps
    (2.9e-7 m measured against 4.6e-4 m allowed for the sphere after 401 steps; 1.6e-5 m at most elsewhere).
    Two scenes have none, and say why (``Scene.unbounded``): the pile, where f32's sweeps stop at their cap,
    and the buggy, whose soil samples enter the footprints on different steps. Those must still end near f64
    (the pile standing, the buggy where it was): within a centimetre."""
    _out, result = quick
    f32 = {(r["scene"], r["n_envs"]): r for r in result["backends"][1]["runs"]}
    for (name, n), r in f32.items():
        scene = scenes.get(name)
        if scene.unbounded:
            assert "f32_tolerance_m" not in r
            assert r["max_position_diff_m"] < 0.01, (name, n)
        else:
            assert r["f32_tolerance_m"] == pytest.approx(f32_tolerance(scene, r["steps"] + 1 + r["warmup"]))
            assert r["max_position_diff_m"] <= r["f32_tolerance_m"], (name, n, r["max_position_diff_m"])


def test_schema_check_names_what_is_missing_or_mistyped(quick):
    _out, result = quick
    broken = copy.deepcopy(result)
    del broken["backends"][0]["runs"][0]["ms_per_step"]
    broken["backends"][1]["runs"][0]["n_envs"] = "one"
    broken["backends"][1]["backend"] = "tpu-f16"
    broken["wall_s"] = True
    problems = harness_report.validate(broken, scenes.SCENES, BACKENDS)
    assert "backends[0].runs[0]: missing 'ms_per_step'" in problems
    assert "backends[1].runs[0].n_envs: str, not int" in problems
    assert any(p.startswith("backends[1].backend: 'tpu-f16'") for p in problems)
    assert "result.wall_s: bool, not float" in problems
    assert harness_report.validate([], scenes.SCENES, BACKENDS) == ["the result is not a JSON object"]


def test_an_absent_backend_is_reported_unavailable_not_failed(tmp_path):
    """A worker for a backend this machine lacks (cuda here, or a bad one) exits with code 3 and says why; on
    a machine without an NVIDIA device (no /dev/nvidia0 ...) it must."""
    out = tmp_path / "w.json"
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from perf.modes import backends; " \
        f"sys.exit(backends.worker('cuda-f32', ['rigid_sphere'], {{'rigid_sphere': [1]}}, " \
        f"{{'rigid_sphere': 5}}, 1, {{'rigid_sphere': 0}}, {str(out)!r}, None))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    data = json.loads(out.read_text())
    if not any(Path("/dev").glob("nvidia[0-9]*")):
        assert proc.returncode == 3, proc.stderr[-2000:]
    if proc.returncode == 0:  # (a machine with CUDA: the run happened)
        assert data["available"] and np.isfinite(data["runs"][0]["positions"]).all()
    else:
        assert proc.returncode == 3, proc.stderr[-2000:]
        assert data["available"] is False and data["reason"]
        assert harness_report.validate({
            "machine": {}, "quick": True, "repeats": 1, "jobs": 1, "scenes": {}, "peers": [], "wall_s": 0.0,
            "backends": [{**data, "wall_s": 0.1}]}, scenes.SCENES, BACKENDS) == []
