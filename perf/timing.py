"""Timing and results, for every benchmark mode: how a world's steps are timed, what is reported of the rounds
(medians, ratios round by round), and the result file.

Timing a world (:func:`measure`): build it (the caller), time its first step (the step kernel's compile, or its
load from Taichi's offline cache), run ``warmup`` steps, take a checkpoint, then time ``repeats`` rounds of the
same ``steps`` steps, each from that checkpoint (the same work every round). A scene driven by a controller has
it called before every ``chunk`` steps, inside the timed rounds, as a policy loop would. Rates are env-steps per
second (every env counted); a figure is the median of its rounds, and a ratio to a peer is taken round by round
(each against the peer's figure of the same round: on a shared machine both drift together) and reported as its
median and range.

The result file (:func:`write_result`): one JSON object per run of a mode, ``{"mode", "argv", "machine",
"date", "wall_s", "result"}``, where ``result`` is what the mode's ``run`` returned (what ``perf/ab.py``
compares); ``machine`` says where it ran (cores, platform, Python, Taichi, the LLVM options in use).
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"


@dataclass(frozen=True)
class Window:
    """What is timed of a world: ``repeats`` rounds of ``steps`` steps, after ``warmup`` untimed steps."""
    steps: int
    repeats: int
    warmup: int = 0


def median(values) -> float:
    return float(statistics.median(values))


def ratios(ours, theirs) -> dict:
    """Round-by-round ratios ``ours[i] / theirs[i]``: their median, range and all of them."""
    r = [a / b for a, b in zip(ours, theirs)]
    return {"median": median(r), "min": min(r), "max": max(r), "all": r}


def _sync() -> None:
    import taichi as ti

    ti.sync()


def advance(world, steps: int, control=None, chunk: int = 0) -> None:
    """``steps`` steps of ``world``; ``control(world)``, if given, before every ``chunk`` of them."""
    if control is None or chunk <= 0:
        world.step(steps)
        return
    done = 0
    while done < steps:
        control(world)
        n = min(chunk, steps - done)
        world.step(n)
        done += n


def first_step(world, control=None, chunk: int = 0) -> float:
    """Wall time [s] of ``world``'s first step, its compilation included."""
    t = time.perf_counter()
    advance(world, 1, control, chunk)
    _sync()
    return time.perf_counter() - t


def round_rate(world, snap, steps: int, control=None, chunk: int = 0) -> float:
    """Env-steps per second of ``steps`` steps of ``world`` from checkpoint ``snap`` (every env counted)."""
    world.restore(snap)
    _sync()
    t = time.perf_counter()
    advance(world, steps, control, chunk)
    _sync()
    return world.n_envs * steps / (time.perf_counter() - t)


def measure(world, window: Window, control=None, chunk: int = 0, before_round=None, after_round=None) -> dict:
    """Time ``world`` as the module docstring says. ``before_round()``, if given, runs untimed at the start of
    every round (a peer engine measured beside it), ``after_round(k, checkpoint)`` at the end of round ``k`` (what
    the world reached; another measure of the same window from ``checkpoint``), and their return values are kept
    (``"before_round"``, ``"after_round"``).

    Returns ``first_step_s``, ``env_steps_per_s`` (the median), ``env_steps_per_s_all``, ``ms_per_step`` (all
    envs), and ``checkpoint``, the state the rounds start from (the world is left after its last round)."""
    first = first_step(world, control, chunk)
    advance(world, window.warmup, control, chunk)
    _sync()
    snap = world.checkpoint()
    rates, before, after = [], [], []
    for k in range(window.repeats):
        if before_round is not None:
            before.append(before_round())
        rates.append(round_rate(world, snap, window.steps, control, chunk))
        if after_round is not None:
            after.append(after_round(k, snap))
    out = {"checkpoint": snap, "first_step_s": first, "before_round": before, "after_round": after}
    if rates:
        rate = median(rates)
        out.update(env_steps_per_s=rate, env_steps_per_s_all=rates, ms_per_step=1e3 * world.n_envs / rate)
    return out


def per_call(fn, calls: int, repeats: int, warm: bool = True) -> list:
    """Seconds per call of ``fn()``, ``calls`` calls per round, one figure per round (after one untimed call if
    ``warm``)."""
    if warm:
        fn()
        _sync()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        _sync()
        out.append((time.perf_counter() - t) / calls)
    return out


def interleaved(fns: dict, calls: int, repeats: int) -> dict:
    """Median seconds per call of each of ``fns`` (name -> function), their rounds interleaved so that the
    machine's drift hits all alike."""
    runs = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    _sync()
    for _ in range(repeats):
        for k, fn in fns.items():
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            _sync()
            runs[k].append((time.perf_counter() - t) / calls)
    return {k: median(v) for k, v in runs.items()}


def machine() -> dict:
    """Where a result was measured."""
    from taichi_terra import codegen

    out = {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
           "llvm_options": list(codegen.requested())}
    try:
        import taichi as ti

        out["taichi"] = ".".join(map(str, ti.__version__))
    except ImportError:  # (a mode that only starts other processes)
        pass
    return out


def public(row: dict) -> dict:
    """``row`` without what cannot go to JSON (a checkpoint, a world)."""
    return {k: v for k, v in row.items() if k not in ("checkpoint", "world", "before_round", "after_round")}


def write_result(path, mode: str, argv, result, wall_s: float) -> Path:
    """Write one run of ``mode`` (its command-line ``argv`` and what its ``run`` returned) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"mode": mode, "argv": list(argv), "machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M"),
               "wall_s": wall_s, "result": result}
    path.write_text(json.dumps(payload, indent=1, default=float))
    return path
