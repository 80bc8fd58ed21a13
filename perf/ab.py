"""A/B of two versions of the package on the same benchmarks, in one run on one machine.

    python -m perf.ab --base <git revision> [--quick] [--skip-vulkan]

Version A is ``--base`` (checked out into a temporary git worktree, untouched), version B this working tree.
Each benchmark runs for A, then for B, in its own process, back to back, so that drift of a shared machine
hits both alike:

- ``bench_rigid``: sphere and box on the sine terrain at 1 and 1024 envs, and the control-loop case
- ``bench_soil``: the plate settling on a soil bed
- ``bench_many_bodies``: the stages of a step with 200 to 1000 boxes
- ``bench_planar``: the planar pens and the push scene (``--quick`` sizes)
- compile time of the step kernel, cold: cpu f64, and vulkan f32 with cold Taichi and mesa caches

It prints every timing both versions report, with the ratio B / A written as a speed ratio (above 1: B is
faster), and writes them to JSON (default ``perf/results/ab.json``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LABEL_KEYS = ("engine", "shape", "n_envs", "layout", "boxes", "scene", "size", "n", "mode", "start", "material",
              "kind", "bodies")

_RUN = """
import json, sys
sys.path.insert(0, {tree!r})
import importlib
bench = importlib.import_module({module!r})
result = bench.main({argv!r})
json.dump(result, open({out!r}, "w"), default=float)
"""

_COMPILE = """
import json, sys, time
sys.path.insert(0, {tree!r})
import taichi_terra as tt
tt.init({arch!r}, {precision!r})
w = tt.World()
w.add_ground()
w.add_sphere(0.1, 1.0).set_position([0.0, 0.0, 0.5])
t = time.perf_counter()
w.step(1)
json.dump({{"compile_s": time.perf_counter() - t}}, open({out!r}, "w"))
"""


def _benchmarks(quick: bool):
    steps = "100" if quick else "300"
    return [
        ("perf.bench_rigid", ["--envs", "1", "1024", "--steps", steps, "--repeats", "3", "--warmup", "100",
                              "--loop-envs", "1", "1024", "--loop-calls", "100"]),
        ("perf.bench_soil", ["--steps", "100" if quick else "200", "--repeats", "3"]),
        ("perf.bench_many_bodies", ["--steps", "10" if quick else "30", "--repeats", "3"]),
        ("perf.bench_planar", ["--quick", "--repeats", "5"]),
    ]


def _flatten(obj, prefix=""):
    """Numeric leaves of a result, keyed by a readable path (list items by their labelling fields)."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            if isinstance(v, dict):
                label = ",".join(f"{k}={v[k]}" for k in LABEL_KEYS if k in v and not isinstance(v[k], (dict, list)))
                out.update(_flatten(v, f"{prefix}[{label or i}]"))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out[prefix] = float(obj)
    return out


def _timing(key: str) -> str | None:
    """'rate' (higher is better), 'time' (lower is better) or None for a key that is not a timing."""
    last = key.rsplit(".", 1)[-1]
    if last.endswith("_all"):
        return None
    if last.endswith("per_s") or last.endswith("per_s_median"):
        return "rate"
    if last.startswith("ms_per") or last.endswith("_s") or last.endswith("_ms"):
        return "time"
    return None


def _run(code: str, tree: str, env: dict, timeout: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        proc = subprocess.run([sys.executable, "-c", code.replace("__OUT__", out)], cwd=tree, env=env,
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"benchmark failed in {tree}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
        with open(out) as f:
            return json.load(f)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="git revision of version A")
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    parser.add_argument("--skip-vulkan", action="store_true", help="no vulkan compile time")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per benchmark process")
    parser.add_argument("--out", default=os.path.join(ROOT, "perf", "results", "ab.json"))
    args = parser.parse_args(argv)
    base_tree = tempfile.mkdtemp(prefix="tt_ab_base_")
    subprocess.run(["git", "worktree", "add", "--detach", base_tree, args.base], cwd=ROOT, check=True,
                   capture_output=True)
    trees = {"A": base_tree, "B": ROOT}
    results = {"base": args.base, "A": {}, "B": {}}
    try:
        for module, bench_argv in _benchmarks(args.quick):
            for version, tree in trees.items():
                env = dict(os.environ, PYTHONPATH=tree)
                t = time.perf_counter()
                code = _RUN.format(tree=tree, module=module, argv=bench_argv + ["--out", "__OUT__"]
                                   if module != "perf.bench_many_bodies" else bench_argv, out="__OUT__")
                results[version][module] = _run(code, tree, env, args.timeout)
                print(f"{module:24s} {version}: {time.perf_counter() - t:6.1f} s", flush=True)
        archs = [("cpu", "f64")] + ([] if args.skip_vulkan else [("vulkan", "f32")])
        for arch, precision in archs:
            for version, tree in trees.items():
                with tempfile.TemporaryDirectory() as cache:
                    env = dict(os.environ, PYTHONPATH=tree, TI_OFFLINE_CACHE_FILE_PATH=os.path.join(cache, "ti"),
                               MESA_SHADER_CACHE_DIR=os.path.join(cache, "mesa"), MESA_SHADER_CACHE_DISABLE="true")
                    code = _COMPILE.format(tree=tree, arch=arch, precision=precision, out="__OUT__")
                    results[version][f"compile_{arch}_{precision}"] = _run(code, tree, env, args.timeout)
                print(f"compile {arch} {precision} {version}: "
                      f"{results[version][f'compile_{arch}_{precision}']['compile_s']:.1f} s", flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", base_tree], cwd=ROOT, capture_output=True)
    flat_a, flat_b = _flatten(results["A"]), _flatten(results["B"])
    rows = []
    for key in sorted(set(flat_a) & set(flat_b)):
        kind = _timing(key)
        if kind is None or flat_a[key] <= 0.0 or flat_b[key] <= 0.0:
            continue
        speed = flat_b[key] / flat_a[key] if kind == "rate" else flat_a[key] / flat_b[key]
        rows.append({"key": key, "kind": kind, "A": flat_a[key], "B": flat_b[key], "speed_B_over_A": speed})
    only_b = {k: v for k, v in flat_b.items() if k not in flat_a and _timing(k)}
    results["table"] = rows
    results["only_B"] = only_b
    print(f"\n{'measure':90s} {'A':>12s} {'B':>12s} {'B speed':>8s}")
    for r in rows:
        print(f"{r['key'][:90]:90s} {r['A']:12.6g} {r['B']:12.6g} {r['speed_B_over_A']:8.2f}")
    for k, v in only_b.items():
        print(f"{k[:90]:90s} {'-':>12s} {v:12.6g}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2, default=float)
    print(f"wrote {args.out}")
    return results


if __name__ == "__main__":
    main()
