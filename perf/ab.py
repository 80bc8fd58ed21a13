"""A/B of two versions of the package on the same benchmarks, in one run on one machine.

    python -m perf.ab --base <git revision> [--rounds N] [--quick] [--skip-vulkan]

Version A is ``--base`` (checked out into a temporary git worktree, untouched), version B this working tree.
Each version's benchmarks are imported from its own tree as ``perf.bench_rigid`` and so on and run by their
``main(argv)``, which returns the measured result: the one interface that both layouts of ``perf/`` have (the
scripts of one file each before ``perf/modes/``, the entry points over ``python -m perf MODE`` after), so a base
revision from either side compares.
Each benchmark runs for A and for B, each in its own process, back to back, so that drift of a shared machine
hits both alike; with ``--rounds N`` the whole set runs N times, A first in even rounds and B first in odd
ones, and each measure's ratio is the median of its N paired ratios (their range is printed beside it, a
direct view of the machine's run-to-run spread):

- ``bench_rigid``: sphere and box on the sine terrain at 1 and 1024 envs, and the control-loop case
- ``bench_soil``: the plate settling on a soil bed
- ``bench_many_bodies``: the stages of a step with 200 to 1000 boxes
- ``bench_planar``: the planar pens and the push scene (``--quick`` sizes)
- compile time of the step kernel, cold: cpu f64, and vulkan f32 with cold Taichi and mesa caches

It prints every timing both versions report (medians over the rounds), with the ratio B / A written as a
speed ratio (above 1: B is faster), and writes them to JSON (default ``perf/results/ab.json``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
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


def _round(trees: dict, order, args, k: int) -> dict:
    """One run of every benchmark and compile measure for both versions, in ``order`` each time."""
    results = {"A": {}, "B": {}}
    for module, bench_argv in _benchmarks(args.quick):
        for version in order:
            tree = trees[version]
            env = dict(os.environ, PYTHONPATH=tree)
            t = time.perf_counter()
            code = _RUN.format(tree=tree, module=module, argv=bench_argv + ["--out", "__OUT__"]
                               if module != "perf.bench_many_bodies" else bench_argv, out="__OUT__")
            results[version][module] = _run(code, tree, env, args.timeout)
            print(f"round {k}: {module:24s} {version}: {time.perf_counter() - t:6.1f} s", flush=True)
    archs = [("cpu", "f64")] + ([] if args.skip_vulkan else [("vulkan", "f32")])
    for arch, precision in archs:
        for version in order:
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, PYTHONPATH=trees[version], TI_OFFLINE_CACHE_FILE_PATH=os.path.join(cache, "ti"),
                           MESA_SHADER_CACHE_DIR=os.path.join(cache, "mesa"), MESA_SHADER_CACHE_DISABLE="true")
                code = _COMPILE.format(tree=trees[version], arch=arch, precision=precision, out="__OUT__")
                results[version][f"compile_{arch}_{precision}"] = _run(code, trees[version], env, args.timeout)
            print(f"round {k}: compile {arch} {precision} {version}: "
                  f"{results[version][f'compile_{arch}_{precision}']['compile_s']:.1f} s", flush=True)
    return results


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="git revision of version A")
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    parser.add_argument("--skip-vulkan", action="store_true", help="no vulkan compile time")
    parser.add_argument("--rounds", type=int, default=1, help="run everything this many times (paired ratios)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per benchmark process")
    parser.add_argument("--out", default=os.path.join(ROOT, "perf", "results", "ab.json"))
    args = parser.parse_args(argv)
    base_tree = tempfile.mkdtemp(prefix="tt_ab_base_")
    subprocess.run(["git", "worktree", "add", "--detach", base_tree, args.base], cwd=ROOT, check=True,
                   capture_output=True)
    trees = {"A": base_tree, "B": ROOT}
    rounds = []
    try:
        for k in range(args.rounds):
            order = ("A", "B") if k % 2 == 0 else ("B", "A")
            rounds.append(_round(trees, order, args, k))
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", base_tree], cwd=ROOT, capture_output=True)
    results = {"base": args.base, "rounds": len(rounds), "A": rounds[0]["A"], "B": rounds[0]["B"]}
    flats = [(_flatten(r["A"]), _flatten(r["B"])) for r in rounds]
    rows = []
    for key in sorted(set(flats[0][0]) & set(flats[0][1])):
        kind = _timing(key)
        pairs = [(a[key], b[key]) for a, b in flats if key in a and key in b]
        if kind is None or any(x <= 0.0 or y <= 0.0 for x, y in pairs):
            continue
        speeds = [y / x if kind == "rate" else x / y for x, y in pairs]
        rows.append({"key": key, "kind": kind, "A": statistics.median(x for x, _y in pairs),
                     "B": statistics.median(y for _x, y in pairs), "speed_B_over_A": statistics.median(speeds),
                     "speed_min": min(speeds), "speed_max": max(speeds)})
    only_b = {k: v for k, v in flats[0][1].items() if k not in flats[0][0] and _timing(k)}
    results["table"] = rows
    results["only_B"] = only_b
    results["all_rounds"] = rounds
    print(f"\n{'measure':84s} {'A':>11s} {'B':>11s} {'B speed':>8s} {'range':>11s}")
    for r in rows:
        print(f"{r['key'][:84]:84s} {r['A']:11.5g} {r['B']:11.5g} {r['speed_B_over_A']:8.2f} "
              f"{r['speed_min']:5.2f}-{r['speed_max']:4.2f}")
    for k, v in only_b.items():
        print(f"{k[:84]:84s} {'-':>11s} {v:11.5g}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2, default=float)
    print(f"wrote {args.out}")
    return results


if __name__ == "__main__":
    main()
