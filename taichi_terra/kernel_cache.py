"""Step kernels loaded from Taichi's offline cache without running Taichi's front end again.

Taichi keys a compiled kernel in its offline cache by a hash of the kernel's IR, and builds that IR from the
kernel's Python source (its front end) in every process before it can look the kernel up: 1.4 s for the
free-body step kernel and 2 to 3.7 s for an articulated one on a 2-core cpu, paid again by every run on a
machine whose cache holds the code (``docs/performance.md``).

:func:`compiled_step` keys a step kernel instead by what its IR is built from (:func:`key`: the kernels'
source, Taichi's, Python's and numpy's versions, the backend and precision, LLVM's options; Taichi's settings,
threads included; and the variant's compile-time switches). The first process to meet a key compiles the kernel as
before and also a *stand-in* (``kernels/step.py``'s ``stand_in``): a kernel with the same parameters that does
nothing, whose body holds the key, so Taichi's own key for it follows from ours. It notes both of Taichi's keys
(Taichi's debug log names them) in ``<offline cache>/taichi_terra/front/<key>.json``. A later process copies the
kernel's cache file over the stand-in's and compiles the stand-in, whose front end takes milliseconds: Taichi
finds the stand-in's key and loads the kernel's code from the copied file.

Every launch of the step kernel writes its ``stamp`` argument to each env's ``LAUNCH`` row before any step; the
stand-in writes nothing. The first launch (no steps) checks it, so code that is the stand-in's own (its cache
entry written after the copy, dropped, or not yet in the cache when the process started) did nothing, is seen
at once, and the kernel is then compiled in full as without this module. ``TAICHI_TERRA_FRONT_CACHE=0`` turns
the module off (every process runs Taichi's front end).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from . import backend

_PACKAGE = Path(__file__).resolve().parent
#: the sources the step kernels' IR is built from (the kernels import nothing else of the package), and this
#: module, whose keys name what is cached
_SOURCES = ("kernels", "frontend.py", "backend.py", "codegen.py", "kernel_cache.py")
_fingerprints: dict = {}
#: key -> "stand-in" (its cache entry loads the kernel's code) or "kernel" (compiled in full in this process)
_loaded: dict = {}
#: key -> the stand-in kernel (one per key and process, as Taichi compiles each kernel object once)
_stand_ins: dict = {}
_STAMP = 0


def enabled() -> bool:
    """Whether step kernels are loaded through their stand-ins (``TAICHI_TERRA_FRONT_CACHE`` is not ``0``)."""
    return os.environ.get("TAICHI_TERRA_FRONT_CACHE", "1") != "0"


def fingerprint(arch: str, precision: str) -> str:
    """What a compiled step kernel depends on besides its variant and Taichi's settings: the kernels' source (and
    the modules they import from the package, and this one), the versions of Taichi, Python and numpy, the
    backend, the precision and, on cpu, the LLVM options that change the IR Taichi caches (a hash; computed once
    per process and set of LLVM options)."""
    from . import codegen

    salt = codegen.cache_salt(codegen.requested()) if arch == "cpu" else 0  # (the LLVM options Taichi's key misses)
    if (arch, precision, salt) in _fingerprints:
        return _fingerprints[arch, precision, salt]
    import numpy
    import taichi
    from taichi._lib import core

    h = hashlib.sha256(f"{taichi.__version__} {core.get_commit_hash()} {sys.version_info[:3]} {numpy.__version__} "
                       f"{arch} {precision} {salt}".encode())
    paths = []
    for name in _SOURCES:
        p = _PACKAGE / name
        paths += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    for path in paths:
        h.update(path.relative_to(_PACKAGE).as_posix().encode())
        h.update(path.read_bytes())
    _fingerprints[arch, precision, salt] = h.hexdigest()
    return _fingerprints[arch, precision, salt]


def _taichi_settings() -> str:
    """Every plain setting of Taichi's active compile configuration (its cache key covers some of them: the
    threads, the seed ``init`` salts with LLVM's options, the optimisation switches...), as text."""
    from taichi.lang import impl

    cfg = impl.current_cfg()
    items = []
    for name in sorted(dir(cfg)):
        value = None if name.startswith("_") else getattr(cfg, name, None)
        if isinstance(value, (bool, int, float, str)):
            items.append(f"{name}={value!r}")
    return ";".join(items)


def key(what: str, variant: tuple) -> str:
    """The key of kernel ``what`` (a name) compiled as ``variant`` (its compile-time switches, as their repr)
    on the active backend and Taichi settings."""
    cfg = backend.config()
    return hashlib.sha256(f"{fingerprint(cfg['arch'], cfg['precision'])} {_taichi_settings()} {what} {variant!r}"
                          .encode()).hexdigest()


def tag(k: str) -> tuple:
    """``k`` (a hex key) as the eight ints below 2**31 a stand-in's body holds: 248 of its bits."""
    return tuple(int(k[8 * i:8 * i + 8], 16) >> 1 for i in range(8))


def _index_path(k: str) -> Path:
    return backend.offline_cache_path() / "taichi_terra" / "front" / f"{k}.json"


def _cache_file(taichi_key: str) -> Path:
    return backend.offline_cache_path() / f"{taichi_key}.tic"


def _next_stamp() -> int:
    global _STAMP
    _STAMP = _STAMP % 1_000_000 + 1
    return (os.getpid() % 2000) * 1_000_000 + _STAMP


def _read_index(k: str) -> dict | None:
    try:
        entry = json.loads(_index_path(k).read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(entry, dict) and all(isinstance(entry.get(n), str) and re.fullmatch(r"T[0-9a-f]{64}", entry[n])
                                         for n in ("kernel", "stand_in"))
    return entry if ok else None


def _write_index(k: str, kernel_key: str, stand_in_key: str) -> None:
    path = _index_path(k)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump({"kernel": kernel_key, "stand_in": stand_in_key}, f)
        os.replace(tmp, path)
    except OSError:  # (a read-only cache: later processes run the front end, as without this module)
        pass


def _copy_code(entry: dict) -> bool:
    """Copy the kernel's cache file over the stand-in's (where their sizes differ). False where the kernel's
    file is gone (dropped from the cache) or the copy failed."""
    src, dst = _cache_file(entry["kernel"]), _cache_file(entry["stand_in"])
    try:
        size = src.stat().st_size
        if dst.exists() and dst.stat().st_size == size:
            return True
        fd, tmp = tempfile.mkstemp(dir=dst.parent, suffix=".tmp")
        os.close(fd)
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
        return True
    except OSError:
        return False


def _taichi_key(call) -> str | None:
    """Taichi's cache key of the kernel that ``call`` launches: read from Taichi's debug log, which names it
    at each lookup (stderr is redirected meanwhile; what else was written there is written back)."""
    from taichi._lib import core

    levels = ("trace", "debug", "info", "warn", "error", "critical")
    level = next((lv for lv in levels if core.logging_effective(lv)), "warn")
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        core.set_logging_level("debug")
        try:
            call()
        finally:
            core.set_logging_level(level)
            core.flush_log()
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        text = log.read().decode(errors="replace")
    found = re.findall(r"kernel '[^']*'(?: from (?:in-memory )?cache)? \(key='(T[0-9a-f]{64})'\)", text)
    rest = "".join(line for line in text.splitlines(True) if not line.startswith("[D "))
    if rest:
        sys.stderr.write(rest)
    return found[-1] if found else None


def _launcher(kernel, scalars: dict, arrays: dict):
    run, args = backend.compiled_launch(kernel, tuple(scalars), arrays)
    args.update(scalars)
    return run, args


def compiled_step(what: str, variant: tuple, kernel, stand_in, scalars: dict, arrays: dict, stamps):
    """A step kernel as :func:`taichi_terra.backend.compiled_launch` gives it, ``(run, args)``, compiled: its
    first launch done, with the scalars ``scalars`` (they must make it take no step) and a fresh ``stamp``.

    Args:
        what: the kernel's name; with ``variant`` (its compile-time switches) it keys the kernel.
        kernel: a function returning the Taichi kernel (called only where it must be compiled in full).
        stand_in: a function of a tag (:func:`tag`) returning a kernel with the same parameters that does
            nothing and holds the tag.
        scalars: the kernel's ``i32`` scalar parameters (name -> value for the first launch), ``stamp`` among
            them.
        arrays: its ndarray parameters (name -> ndarray).
        stamps: a function returning what each env's ``LAUNCH`` row holds (a numpy array).
    """
    import numpy as np

    def first_launch(kernel_now):
        """The kernel launched once (Taichi compiles it then) with a fresh stamp; whether it wrote it."""
        run, args = _launcher(kernel_now, scalars, arrays)
        args["stamp"] = s = _next_stamp()
        run(args)
        return run, args, bool(np.all(np.asarray(stamps()) == s))

    k = key(what, variant)
    if enabled() and k not in _stand_ins:
        _stand_ins[k] = stand_in(tag(k))
    if enabled() and _loaded.get(k) != "kernel":
        entry = _read_index(k)
        if entry is not None and (_loaded.get(k) == "stand-in" or _copy_code(entry)):
            run, args, stamped = first_launch(_stand_ins[k])
            if stamped:
                _loaded[k] = "stand-in"
                return run, args
    run, args, stamped = first_launch(kernel())
    if not stamped:
        raise RuntimeError(f"{what}: the step kernel did not write its stamp")
    if enabled() and _loaded.get(k) != "kernel":
        kernel_key = _taichi_key(lambda: run(args))
        s_run, s_args = _launcher(_stand_ins[k], scalars, arrays)
        stand_in_key = _taichi_key(lambda: s_run(s_args))
        if kernel_key and stand_in_key and kernel_key != stand_in_key:
            _write_index(k, kernel_key, stand_in_key)
    _loaded[k] = "kernel"
    return run, args
