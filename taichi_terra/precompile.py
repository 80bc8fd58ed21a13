"""Compile the step kernel's variants ahead of time, into Taichi's offline cache.

    python -m taichi_terra.precompile                          # cpu f64, every variant, one process per core
    python -m taichi_terra.precompile --precision f64 f32 --variants trees-serial free-serial
    python -m taichi_terra.precompile --variants trees-serial --parts soil pins   # a buggy's own kernel

A world's step kernel comes in a few variants (:data:`VARIANTS`): free bodies or articulated trees, one env on the
calling thread or many in parallel. The articulated variants here have every optional part (soil, pins, belts,
RFT): they are the kernel the worlds of a process share where ``taichi_terra.init(specialize=False)``, as in the
test suite. A world compiled with only its own parts (the default) uses the kernel with those parts: ``--parts``
(a variant named ``trees-serial+soil+pins``; ``trees-serial+`` for none) compiles that one. Each is compiled on
its first use in a process; the slow part of a first compile on a machine (Taichi's IR passes and LLVM's
optimisation: about 10 s for free bodies and 20 s for trees on a 2-core cpu) is kept in Taichi's offline cache,
which Taichi writes only when its program is finalised (at the latest as the process exits). So processes that
start together (test workers, a benchmark's backends) all compile cold. This module compiles the variants in
processes of their own that write the cache when done, so everything started after it finds them there; a marker
per variant beside the cache (keyed by the kernels' source, Taichi's version, the backend and the precision) lets
later calls skip what is there. (Taichi drops the least recently used entries past its size cap, 1 GiB as
``taichi_terra.init`` sets it; a variant whose entry went that way while its marker stayed compiles on its first
use, as without this module.)

Used by the test suite before its workers start, and by anyone preparing a machine (a container image, a cluster
job's first step).
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .backend import offline_cache_path

#: variant name -> (serial, trees): the step kernel's compile-time switches on cpu (``kernels/step.py``'s
#: ``simulate_kernel``); the variants with trees are the kernel with every optional part, which the worlds of a
#: process share where ``taichi_terra.init``'s ``specialize`` is off (as in the test suite)
VARIANTS = {
    "free-serial": (True, False),
    "free-parallel": (False, False),
    "trees-serial": (True, True),
    "trees-parallel": (False, True),
}
#: relative cold compile cost of a variant (trees: about three times free bodies)
_COST = {False: 1.0, True: 3.0}


def _parse(variant: str) -> tuple:
    """``variant``'s name in :data:`VARIANTS` and its optional parts: None for every part (the shared kernel),
    else a tuple (``trees-serial+soil+pins``; ``trees-serial+``: none). Raises ``ValueError`` naming the rule."""
    from .kernels.common.arrays import FEATURES

    name, plus, rest = variant.partition("+")
    if name not in VARIANTS:
        raise ValueError(f"variants must be among {tuple(VARIANTS)}, optionally with +parts, got {variant!r}")
    if not plus:
        return name, None
    if not VARIANTS[name][1]:
        raise ValueError(f"variants: only the trees variants take parts (+...), got {variant!r}")
    parts = tuple(p for p in rest.split("+") if p)
    unknown = [p for p in parts if p not in FEATURES]
    if unknown:
        raise ValueError(f"variants: parts must be among {FEATURES}, got {unknown} in {variant!r}")
    return name, tuple(f for f in FEATURES if f in parts)


def _world(variant: str):
    """The smallest world whose step kernel is ``variant``. Without parts: with RFT plates (so that what a
    world with plates compiles beside the step kernel is compiled too; the trees variants are compiled with
    ``specialize`` off, every part in). With parts (``+soil+pins``), a world that has those parts and no
    others: a tracked robot for belts (else a one-link chain), a pin from its link to the world, a 3 x 3 soil
    bed, a medium and plates."""
    import numpy as np

    import taichi_terra as tt
    from taichi_terra.bodies.tracked_robot import tracked_robot_urdf
    from taichi_terra.bodies.urdf import make_chain_urdf

    name, parts = _parse(variant)
    serial, trees = VARIANTS[name]
    wanted = ("rft",) if parts is None else parts
    world = tt.World(dt=1e-3, n_envs=1 if serial else 2)
    if trees and "belts" in wanted:
        owner, link = world.add_articulated_system(tracked_robot_urdf(), position=(0.0, 0.0, 1.0)), "base"
    elif trees:
        owner = world.add_articulated_system(make_chain_urdf(1), base="fixed", position=(0.0, 0.0, 1.0))
        link = "link1"
    else:
        owner = world.add_sphere(0.1, 1.0)
        owner.set_position([0.0, 0.0, 1.0])
        link = None
    if "pins" in wanted:
        world.add_pin(owner, link, (0.0, 0.0, 0.0), None, None, (0.0, 0.0, 1.0))
    if "soil" in wanted:
        world.add_deformable_terrain(3, 3, 1.0, 1.0, 0.0, 0.0, np.zeros(9), tt.SoilMaterial())
    if "rft" in wanted:
        world.add_granular_medium(0.0)
        world.add_plates(owner, link, count=8)
    return world


def fingerprint(arch: str, precision: str) -> str:
    """What a compiled step kernel depends on besides its variant (:func:`taichi_terra.kernel_cache.fingerprint`:
    the kernels' source, the versions of Taichi, Python and numpy, the backend, the precision, LLVM's options),
    shortened."""
    from .kernel_cache import fingerprint as full

    return full(arch, precision)[:24]


#: Taichi's offline cache folder
cache_path = offline_cache_path


def _marker(arch: str, precision: str, variant: str) -> Path:
    return cache_path() / "taichi_terra" / f"{fingerprint(arch, precision)}-{variant}.json"


def missing(variants, precisions=("f64",), arch: str = "cpu") -> list[tuple[str, str]]:
    """``(precision, variant)`` pairs without a marker, i.e. not known to be in the cache."""
    _check(variants, precisions, arch)
    return [(p, v) for p in precisions for v in variants if not _marker(arch, p, v).exists()]


def precompile(variants=tuple(VARIANTS), precisions=("f64",), *, arch: str = "cpu", jobs: int | None = None,
               quiet: bool = False) -> list[tuple[str, str]]:
    """Compile the ``(precision, variant)`` pairs not in the cache yet, in ``jobs`` processes at a time (default:
    one per core), each of which exits when done so that Taichi writes its cache. Says on stderr what it
    compiles unless ``quiet``. Returns the pairs it compiled; raises ``RuntimeError`` if a process failed (the
    pairs of the others are marked)."""
    todo = missing(variants, precisions, arch)
    if not todo:
        return []
    jobs = max(1, jobs or os.cpu_count() or 1)
    if not quiet:
        print(f"taichi_terra: compiling {len(todo)} step kernel variants ahead of time ({arch}: "
              f"{', '.join(f'{v} {p}' for p, v in todo)}), into {cache_path()}; later runs skip this",
              file=sys.stderr, flush=True)
    start = time.perf_counter()
    failed = []
    for precision in precisions:  # (Taichi's precision is one per process)
        mine = [v for p, v in todo if p == precision]
        shares: list[list[str]] = [[] for _ in range(min(jobs, len(mine)))]
        load = [0.0] * len(shares)
        cost = {v: _COST[VARIANTS[_parse(v)[0]][1]] for v in mine}
        for v in sorted(mine, key=lambda v: -cost[v]):  # the longest first, to the least loaded
            k = load.index(min(load))
            shares[k].append(v)
            load[k] += cost[v]
        procs = [(share, subprocess.Popen(
            [sys.executable, "-m", "taichi_terra.precompile", "--worker", "--arch", arch, "--precision", precision,
             "--variants", *share], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
            for share in shares]
        for share, proc in procs:
            _out, err = proc.communicate()
            if proc.returncode != 0:
                failed.append(f"{precision} {share}: exit {proc.returncode}: {err.strip()[-1000:]}")
                continue
            for v in share:  # (the process has exited: Taichi wrote its cache)
                marker = _marker(arch, precision, v)
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.write_text(json.dumps({"variant": v, "precision": precision, "arch": arch}))
    if failed:
        raise RuntimeError("precompile failed: " + "; ".join(failed))
    if not quiet:
        print(f"taichi_terra: compiled ahead of time in {time.perf_counter() - start:.1f} s", file=sys.stderr,
              flush=True)
    return todo


def _worker(arch: str, precision: str, variants: list) -> None:
    """Compile ``variants``, then write them to Taichi's offline cache while holding a lock: of two processes
    writing the cache at once one loses its entries (Taichi's own lock gives up after 250 ms), so the workers
    take turns. Taichi writes its cache when its program is finalised, which without ``ti.reset()`` happens
    somewhere in the interpreter's shutdown, possibly after the lock's file was closed (measured: one run in
    several lost a worker's two kernels); so it is finalised here, with the lock held."""
    import taichi as ti

    import taichi_terra as tt

    tt.init(arch=arch, precision=precision, verbose=False)
    for variant in variants:
        tt.init(arch=arch, precision=precision, verbose=False, specialize=_parse(variant)[1] is not None)
        _world(variant).compile()
    lock_dir = cache_path() / "taichi_terra"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / "exit.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        ti.reset()  # finalises Taichi's program, which writes what it compiled to the cache



def _check(variants, precisions, arch) -> None:
    for v in variants:
        _parse(v)
    for p in precisions:
        if p not in ("f64", "f32"):
            raise ValueError(f"precisions must be 'f64' or 'f32', got {p!r}")
    if arch != "cpu":
        raise ValueError(f"arch: only 'cpu' step kernels are precompiled here, got {arch!r}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variants", nargs="+", default=list(VARIANTS),
                   help=f"among {', '.join(VARIANTS)} (default: all), optionally with +parts (trees-serial+soil+pins)")
    p.add_argument("--parts", nargs="*", default=None,
                   help="the optional parts (soil, pins, belts, rft) of the trees variants' kernels: the kernel a "
                        "world with just those parts compiles (default: every part, the kernel worlds share where "
                        "taichi_terra.init's specialize is off); none given: no optional part")
    p.add_argument("--precision", nargs="+", default=["f64"], choices=["f64", "f32"])
    p.add_argument("--arch", default="cpu", choices=["cpu"])
    p.add_argument("--jobs", type=int, default=None, help="processes at once (default: one per core)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.parts is not None:
        args.variants = [f"{v}+{'+'.join(args.parts)}" if VARIANTS.get(v, (0, False))[1] else v
                         for v in args.variants]
    try:
        _check(args.variants, args.precision, args.arch)
    except ValueError as exc:
        p.error(str(exc))
    if args.worker:
        _worker(args.arch, args.precision[0], args.variants)
        return
    if args.jobs is not None and args.jobs < 1:
        p.error(f"--jobs must be >= 1, got {args.jobs}")
    done = precompile(args.variants, args.precision, arch=args.arch, jobs=args.jobs, quiet=args.quiet)
    if not done and not args.quiet:
        print("taichi_terra: every variant asked for is in the cache already", file=sys.stderr)


if __name__ == "__main__":
    main()
