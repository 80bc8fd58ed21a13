"""The backend harness (``python -m perf``) in its quick mode: a smoke run whose timings are not asserted, its JSON
layout, and cpu f32 against cpu f64 on every scene."""
import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perf import harness, harness_report  # noqa: E402


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("harness")
    proc = subprocess.run([sys.executable, "-m", "perf", "--quick", "--out-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, json.loads((out / "harness.json").read_text())


def test_quick_run_covers_every_scene_on_cpu_f64_and_f32_and_writes_table_and_plot(quick):
    out, result = quick
    assert harness_report.validate(result, harness.SCENES, harness.BACKENDS) == []
    assert [b["backend"] for b in result["backends"]] == ["cpu-f64", "cpu-f32"]
    for b in result["backends"]:
        assert b["available"] and "crashed" not in b
        ran = {(r["scene"], r["n_envs"]) for r in b["runs"] if "error" not in r}
        assert ran == {(s, n) for s, scene in harness.SCENES.items() for n in scene.quick_envs}
        assert all(r["finite"] and r["env_steps_per_s"] > 0.0 for r in b["runs"])
    table = (out / "harness.md").read_text()
    for name in harness.SCENES:
        assert f"| {name} | 1 |" in table
    png = (out / "harness.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_cpu_f32_ends_within_the_rounding_bound_of_cpu_f64_on_every_bounded_scene(quick):
    """Reference: cpu f64 on the same scene, the same steps from the same start. The bound is
    ``harness.f32_tolerance``: 64 float32 roundings of the scene's length per step, added up linearly over the
    steps (2.9e-7 m measured against 4.6e-4 m allowed for the sphere after 401 steps; 1.6e-5 m at most elsewhere).
    Two scenes have none, and say why (``Scene.unbounded``): the pile, where f32's sweeps stop at their cap,
    and the buggy, whose soil samples enter the footprints on different steps. Those must still end near f64
    (the pile standing, the buggy where it was): within a centimetre."""
    _out, result = quick
    f32 = {(r["scene"], r["n_envs"]): r for r in result["backends"][1]["runs"]}
    for (name, n), r in f32.items():
        scene = harness.SCENES[name]
        if scene.unbounded:
            assert "f32_tolerance_m" not in r
            assert r["max_position_diff_m"] < 0.01, (name, n)
        else:
            assert r["f32_tolerance_m"] == pytest.approx(harness.f32_tolerance(scene, r["steps"] + 1 + r["warmup"]))
            assert r["max_position_diff_m"] <= r["f32_tolerance_m"], (name, n, r["max_position_diff_m"])


def test_schema_check_names_what_is_missing_or_mistyped(quick):
    _out, result = quick
    broken = copy.deepcopy(result)
    del broken["backends"][0]["runs"][0]["ms_per_step"]
    broken["backends"][1]["runs"][0]["n_envs"] = "one"
    broken["backends"][1]["backend"] = "tpu-f16"
    broken["wall_s"] = True
    problems = harness_report.validate(broken, harness.SCENES, harness.BACKENDS)
    assert "backends[0].runs[0]: missing 'ms_per_step'" in problems
    assert "backends[1].runs[0].n_envs: str, not int" in problems
    assert any(p.startswith("backends[1].backend: 'tpu-f16'") for p in problems)
    assert "result.wall_s: bool, not float" in problems
    assert harness_report.validate([], harness.SCENES, harness.BACKENDS) == ["the result is not a JSON object"]


def test_an_absent_backend_is_reported_unavailable_not_failed(tmp_path):
    """A worker for a backend this machine lacks (cuda here, or a bad one) exits with code 3 and says why; on
    a machine without an NVIDIA device (no /dev/nvidia0 ...) it must."""
    out = tmp_path / "w.json"
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from perf import harness; " \
        f"sys.exit(harness.worker('cuda-f32', ['rigid_sphere'], {{'rigid_sphere': [1]}}, " \
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
        assert harness_report.validate({**json.loads(json.dumps({
            "machine": {}, "quick": True, "repeats": 1, "jobs": 1, "scenes": {}, "peers": [], "wall_s": 0.0})),
            "backends": [{**data, "wall_s": 0.1}]}, harness.SCENES, harness.BACKENDS) == []


def test_the_tree_stage_timing_kernel_builds_on_the_current_tree_functions():
    """``perf.bench_articulated`` and ``perf.bench_tracks`` time the tree stages alone with a kernel of their
    own that calls the step's tree functions; it must still compile and run when their signatures change
    (``tree_dynamics`` gained its ``loads`` argument once and both benchmarks stopped at their first case).
    Reference: the measure's own bookkeeping (positive rates, the rounds asked for)."""
    from perf.bench_articulated import _tree_only_kernel, chain_world, measure

    row = measure(chain_world, 1, 5, 1, 2, _tree_only_kernel())
    assert row["env_steps_per_s"] > 0.0 and row["tree_stages_env_steps_per_s"] > 0.0
    assert len(row["env_steps_per_s_all"]) == 1
