"""The one command line of the benchmarks: ``python -m perf [MODE] [options]``.

    python -m perf                         # the backend harness: every scene, every backend found
    python -m perf --quick                 # its smoke run: cpu f64 and f32, one env per scene, few steps
    python -m perf articulated --envs 1 64 # a mode (perf/modes/), with its own options (--help)
    python -m perf MODE --smoke            # a few steps at one small env count: what the test suite runs
    python -m perf.bench_articulated ...   # the same as ``python -m perf articulated ...``

Every mode takes ``--out PATH`` (its JSON result, by default ``perf/results/<name>.json``; written by
``perf/timing.write_result``) and ``--smoke``. ``python -m perf --list`` lists the modes.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time

from .modes import MODES
from .timing import RESULTS, write_result


def load(name: str):
    """The module of mode ``name``."""
    if name not in MODES:
        raise ValueError(f"unknown mode {name!r}; known: {', '.join(MODES)}")
    return importlib.import_module(f"perf.modes.{MODES[name][0]}")


def parser_for(name: str) -> argparse.ArgumentParser:
    module = load(name)
    parser = argparse.ArgumentParser(prog=f"python -m perf {name}", description=module.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true",
                        help=f"a run of seconds: {' '.join(module.SMOKE) or '(its defaults)'}, then these options")
    out = module.OUT if isinstance(module.OUT, str) else module.OUT.__doc__
    parser.add_argument("--out", default=None, help=f"JSON result (default perf/results/{out}; '-': none)")
    module.add_arguments(parser)
    return parser


def run_mode(name: str, argv=None) -> dict:
    """Run mode ``name`` with command-line arguments ``argv`` (default: the process's); returns its result."""
    module = load(name)
    argv = list(sys.argv[1:] if argv is None else argv)
    given = list(argv)
    if "--smoke" in argv:  # (the smoke arguments first: any given after them win)
        argv = list(module.SMOKE) + argv
    args = parser_for(name).parse_args(argv)
    t = time.perf_counter()
    result = module.run(args)
    wall = time.perf_counter() - t
    if getattr(module, "WRITES_OWN", False):  # (the backend harness writes its own files: perf/harness_report.py)
        return result
    out = args.out or str(RESULTS / (module.OUT(args) if callable(module.OUT) else module.OUT))
    if out != "-":
        write_result(out, name, given, result, wall)
        print(f"wrote {out}", flush=True)
    return result


def entry(name: str):
    """``main(argv=None)`` of mode ``name``: what ``python -m perf.bench_<name>`` runs."""
    def main(argv=None) -> dict:
        return run_mode(name, argv)
    main.__doc__ = f"Run ``python -m perf {name}`` with ``argv``; returns its result."
    main.mode = name
    return main


def main(argv=None) -> dict | None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--list"]:
        for name, (_module, what) in MODES.items():
            print(f"{name:12s} {what}")
        return None
    if argv and argv[0] in MODES:
        return run_mode(argv[0], argv[1:])
    return run_mode("backends", argv)
