"""The backend harness's report (perf/modes/backends.py): its JSON layout and check, the markdown table and the plot."""
from __future__ import annotations

import math

import numpy as np


#: the result's layout: required keys and their types, per level (ints are not floats; floats may be ints)
SCHEMA = {
    "top": {"machine": dict, "quick": bool, "repeats": int, "jobs": int, "scenes": dict, "backends": list,
            "peers": list, "wall_s": float},
    "scene": {"what": str, "envs": list, "steps": int},
    "backend": {"backend": str, "available": bool, "wall_s": float},
    "available": {"init_s": float, "runs": list},
    "unavailable": {"reason": str},
    "run": {"scene": str, "n_envs": int, "steps": int, "warmup": int, "build_s": float, "first_step_s": float,
            "env_steps_per_s": float, "env_steps_per_s_all": list, "ms_per_step": float,
            "sweeps_per_step": float, "finite": bool, "positions": list},
    "failed_run": {"scene": str, "n_envs": int, "error": str},
    "optional_run": {"max_position_diff_m": float, "f32_tolerance_m": float},
    "optional_top": {"shared_kernel": bool},
}


def _check(obj: dict, level: str, where: str, errors: list, required: bool = True) -> None:
    for key, kind in SCHEMA[level].items():
        if key not in obj:
            if required:
                errors.append(f"{where}: missing {key!r}")
            continue
        value = obj[key]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float else \
            isinstance(value, int) and not isinstance(value, bool) if kind is int else isinstance(value, kind)
        if not ok:
            errors.append(f"{where}.{key}: {type(value).__name__}, not {kind.__name__}")


def validate(result: dict, scenes, backends) -> list:
    """What is wrong with a harness result's layout (:data:`SCHEMA`), its scenes and backends among the names
    ``scenes`` and ``backends`` knows (the harness's ``SCENES`` and ``BACKENDS``): an empty list when nothing
    is."""
    errors = []
    if not isinstance(result, dict):
        return ["the result is not a JSON object"]
    _check(result, "top", "result", errors)
    _check(result, "optional_top", "result", errors, required=False)
    for name, scene in (result.get("scenes") or {}).items():
        if name not in scenes:
            errors.append(f"scenes: unknown scene {name!r}")
        _check(scene, "scene", f"scenes.{name}", errors)
    for i, b in enumerate(result.get("backends") or []):
        where = f"backends[{i}]"
        _check(b, "backend", where, errors)
        if b.get("backend") not in backends:
            errors.append(f"{where}.backend: {b.get('backend')!r} is not one of {tuple(backends)}")
        _check(b, "available" if b.get("available") else "unavailable", where, errors)
        for j, r in enumerate(b.get("runs") or []):
            _check(r, "failed_run" if "error" in r else "run", f"{where}.runs[{j}]", errors)
            _check(r, "optional_run", f"{where}.runs[{j}]", errors, required=False)
            if "positions" in r and np.shape(r["positions"])[-1:] != (3,):
                errors.append(f"{where}.runs[{j}].positions: not a list of (x, y, z)")
    return errors


def _fmt(v: float) -> str:
    return f"{v / 1e3:,.1f} k" if v >= 1e4 else f"{v:,.0f}"


def markdown(result: dict) -> str:
    """The table of a run, one row per (scene, n_envs), one column group per backend."""
    live = [b for b in result["backends"] if b.get("available") and b.get("runs")]
    def state(b):
        return b.get("crashed") or ("ran" if b.get("available") else "unavailable")
    lines = ["Backends: " + ", ".join(f"{b['backend']} ({state(b)})" for b in result["backends"])
             + f". Machine: {result['machine']['cpu_count']} cores, "
        f"{result['machine']['platform']}.", "",
        "| scene | n_envs | " + " | ".join(f"{b['backend']} env-steps/s (ms/step, first step, sweeps, "
                                              f"agreement)" for b in live) + " |",
        "|---|---:|" + "---:|" * len(live)]
    keys = []
    for b in live:
        for r in b["runs"]:
            if (r["scene"], r["n_envs"]) not in keys:
                keys.append((r["scene"], r["n_envs"]))
    for scene, n in keys:
        cells = []
        for b in live:
            r = next((r for r in b["runs"] if r["scene"] == scene and r["n_envs"] == n), None)
            if r is None:
                cells.append("")
            elif "error" in r:
                cells.append("error")
            else:
                agree = "" if b["backend"] == "cpu-f64" or "max_position_diff_m" not in r else \
                    f", {r['max_position_diff_m']:.1e} m"
                cells.append(f"{_fmt(r['env_steps_per_s'])} ({r['ms_per_step']:.3g} ms, {r['first_step_s']:.1f} s, "
                             f"{r['sweeps_per_step']:.0f}{agree})")
        lines.append(f"| {scene} | {n} | " + " | ".join(cells) + " |")
    sweep = result.get("max_envs")
    if sweep:
        for backend, best in sweep.items():
            if backend != "scene":
                lines.append(f"\nLargest n_envs of {sweep['scene']} that ran on {backend}: " + (
                    "none" if best is None else f"{best['n_envs']} ({_fmt(best['env_steps_per_s'])} env-steps/s)."))
    for p in result.get("peers", []):
        lines.append(f"\nPeer: {p['engine']} {p['version']}, {p['scene']}, one world: {_fmt(p['steps_per_s'])} "
                     "steps/s.")
    return "\n".join(lines) + "\n"


def plot(result: dict, path: str) -> None:
    """Env-steps/s against n_envs (both log scale), one panel per scene, one line per backend (pillow)."""
    from PIL import Image, ImageDraw

    live = [b for b in result["backends"] if b.get("available") and b.get("runs")]
    scenes = []
    for b in live:
        for r in b["runs"]:
            if r["scene"] not in scenes and "error" not in r:
                scenes.append(r["scene"])
    colours = {"cpu-f64": (31, 119, 180), "cpu-f32": (255, 127, 14), "vulkan-f32": (44, 160, 44),
               "cuda-f32": (214, 39, 40), "cuda-f64": (148, 103, 189)}
    cols = 4
    rows = max(1, math.ceil(len(scenes) / cols))
    pw, ph = 300, 220
    img = Image.new("RGB", (cols * pw, rows * ph + 30), "white")
    d = ImageDraw.Draw(img)
    for i, b in enumerate(live):
        d.line([(10 + 150 * i, 15), (40 + 150 * i, 15)], fill=colours.get(b["backend"], (0, 0, 0)), width=3)
        d.text((45 + 150 * i, 9), b["backend"], fill="black")
    for k, scene in enumerate(scenes):
        x0, y0 = (k % cols) * pw, 30 + (k // cols) * ph
        runs = [(b["backend"], r) for b in live for r in b["runs"] if r["scene"] == scene and "error" not in r]
        ns = [r["n_envs"] for _, r in runs]
        vs = [r["env_steps_per_s"] for _, r in runs]
        lx0, lx1 = math.log10(min(ns)), math.log10(max(ns)) + 1e-9
        ly0, ly1 = math.floor(math.log10(min(vs))), math.ceil(math.log10(max(vs)) + 1e-9)
        left, right, top, bottom = x0 + 45, x0 + pw - 15, y0 + 20, y0 + ph - 30
        d.rectangle([left, top, right, bottom], outline=(160, 160, 160))
        d.text((left, y0 + 4), scene, fill="black")
        for e in range(int(ly0), int(ly1) + 1):
            y = bottom - (e - ly0) / max(ly1 - ly0, 1) * (bottom - top)
            d.line([(left, y), (right, y)], fill=(230, 230, 230))
            d.text((x0 + 4, y - 6), f"1e{e}", fill="black")
        for n in sorted(set(ns)):
            x = left + (math.log10(n) - lx0) / max(lx1 - lx0, 1e-9) * (right - left) if lx1 - lx0 > 1e-6 \
                else 0.5 * (left + right)
            d.text((x - 8, bottom + 4), str(n), fill="black")

        def xy(n, v):
            x = left + (math.log10(n) - lx0) / (lx1 - lx0) * (right - left) if lx1 - lx0 > 1e-6 \
                else 0.5 * (left + right)
            return x, bottom - (math.log10(v) - ly0) / max(ly1 - ly0, 1) * (bottom - top)
        for b in live:
            pts = sorted((r["n_envs"], r["env_steps_per_s"]) for name, r in runs if name == b["backend"])
            if not pts:
                continue
            c = colours.get(b["backend"], (0, 0, 0))
            xys = [xy(n, v) for n, v in pts]
            if len(xys) > 1:
                d.line(xys, fill=c, width=2)
            for x, y in xys:
                d.ellipse([x - 3, y - 3, x + 3, y + 3], fill=c)
    d.text((5, rows * ph + 16), "env-steps/s (log) against n_envs (log)", fill="black")
    img.save(path)
