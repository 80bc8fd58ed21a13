"""Backend and precision selection: the one place that calls ``ti.init``."""
from __future__ import annotations

import contextlib
import numbers
import os
import sys
from pathlib import Path

from . import codegen, frontend

_ARCHS = ("cpu", "cuda", "vulkan", "gpu")
_PRECISIONS = ("f64", "f32")
#: the kernel modules the Python side imports before :func:`init` (array declarations and constants): they make no
#: Taichi type with ``float``. Every other kernel module does (``ti.types.vector(6, float)``, Taichi dataclasses),
#: and such a type takes the precision in force when its module is imported: imported before ``init``, float32.
_SAFE_BEFORE_INIT = {"taichi_terra.kernels", "taichi_terra.kernels.common", "taichi_terra.kernels.common.arrays",
                     "taichi_terra.kernels.common.layout", "taichi_terra.kernels.common.schema",
                     "taichi_terra.kernels.planar", "taichi_terra.kernels.planar.arrays"}


def _early_kernel_modules() -> list:
    """The kernel modules already imported whose Taichi types would keep float32 in an f64 run."""
    return sorted(m for m in sys.modules if m.startswith("taichi_terra.kernels.") and m not in _SAFE_BEFORE_INIT)
_config: dict | None = None
_verbose = True
_specialize = True


def init(arch: str = "cpu", precision: str = "f64", threads: int | None = None, *, verbose: bool = True,
         specialize: bool | None = None) -> dict:
    """Initialise Taichi for taichi_terra.

    Args:
        arch: ``"cpu"``, ``"cuda"``, ``"vulkan"`` or ``"gpu"`` (the best available GPU backend).
        precision: ``"f64"`` or ``"f32"``; the floating-point type of every field and kernel.
            ``vulkan`` supports ``"f32"`` only.
        threads: CPU worker threads (``None``: one per core). Only meaningful on ``cpu``.
        verbose: say on stderr when a kernel compiles (the first step of a world whose step kernel this
            process has not compiled yet: seconds to minutes, see :func:`compile_notice`). ``False`` is silent.
        specialize: ``True`` (the default): the step kernel of a world with articulated trees is compiled
            with only the optional parts that world uses (soil beds, pins, belts, RFT plates;
            :func:`step_features`), so its first compile is shorter; worlds that use the same parts share it.
            ``False``: every such world shares one kernel with every part, compiled once per process (fewer
            compiles where one process builds worlds of many kinds, as a test suite does). Both step alike,
            bit for bit. ``None`` keeps the current setting. It applies to worlds compiled after the call.

    On ``cpu`` it first passes a few options to the LLVM inside Taichi (:mod:`taichi_terra.codegen`: less
    compile time, the same results) and sets Taichi's ``random_seed`` to a hash of those that change the IR
    Taichi caches, which keys its offline cache by them (the seed is otherwise read by ``ti.random`` alone).

    Calling ``init`` again with the same arguments does nothing; with different arguments it raises
    ``RuntimeError`` (Taichi's runtime is process-global and re-initialising invalidates every field).
    ``verbose`` and ``specialize`` may change in a later call with the same backend.
    Returns the active configuration as a dict.
    """
    global _config, _verbose, _specialize
    if not isinstance(verbose, bool):
        raise TypeError(f"verbose must be a bool, got {type(verbose).__name__}")
    if specialize is not None and not isinstance(specialize, bool):
        raise TypeError(f"specialize must be a bool or None, got {type(specialize).__name__}")
    if arch not in _ARCHS:
        raise ValueError(f"arch must be one of {_ARCHS}, got {arch!r}")
    if precision not in _PRECISIONS:
        raise ValueError(f"precision must be one of {_PRECISIONS}, got {precision!r}")
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 1:
            raise ValueError(f"threads must be None or a positive int, got {threads!r}")
        threads = int(threads)
    if arch == "vulkan" and precision == "f64":
        raise ValueError("precision 'f64' is not supported on arch 'vulkan' (use precision='f32')")
    wanted = {"arch": arch, "precision": precision, "threads": threads}
    if _config is not None:
        if _config == wanted:
            _verbose = verbose
            if specialize is not None:
                _specialize = specialize
            return dict(_config)
        raise RuntimeError(
            f"taichi_terra is already initialised with {_config}; cannot re-initialise with {wanted} "
            "in the same process"
        )
    os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")
    os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
    import taichi as ti
    from taichi.lang import impl

    early = _early_kernel_modules() if precision == "f64" and impl.get_runtime().default_fp != ti.f64 else []
    if early:
        raise RuntimeError(f"taichi_terra.init: {', '.join(early)} imported before init; the Taichi vector and struct "
                           "types such a module makes take float32 when it is imported then, and an f64 run would "
                           "compute in them: import taichi_terra.kernels modules after taichi_terra.init")

    ti_arch = {"cpu": ti.cpu, "cuda": ti.cuda, "vulkan": ti.vulkan, "gpu": ti.gpu}[arch]
    kwargs = dict(arch=ti_arch, default_fp=ti.f64 if precision == "f64" else ti.f32, default_ip=ti.i32,
                  log_level=ti.WARN, offline_cache=True,
                  # the step kernel with articulated trees alone takes tens of MB of cache; Taichi's default cap
                  # (100 MB, least recently used files dropped) evicted it between runs, which then compiled
                  # it again (about 90 s on a 2-core CPU)
                  offline_cache_max_size_of_files=1024 ** 3)
    if arch != "gpu":
        kwargs["enable_fallback"] = False
    if threads is not None:
        kwargs["cpu_max_num_threads"] = threads
    # Taichi's advanced IR optimisations cost more than ten times the compile time of the step kernel
    # (measured: 69 s vs 6 s cold on a 2-core CPU) for step rates within noise of each other.
    kwargs["advanced_optimization"] = False
    # On cpu every float operation runs as written (no fused multiply-adds, no reassociation): results then
    # depend on the equations alone, not on how the compiler schedules them, so a rewrite of the kernels
    # that keeps the arithmetic replays the same trajectories bit for bit (tests/test_golden.py). Measured
    # on the rigid benchmark: no slower than fast math (sphere 143k vs 135k env-steps/s at 1 env).
    if arch == "cpu":
        kwargs["fast_math"] = False
        # a few optional LLVM passes left out: the articulated step kernel's IR half the size, its compile on a
        # new machine 68 s -> 33 s and in a later process 25 s -> 10 s, same results (codegen.py); the seed
        # keys Taichi's cache by those options (codegen.cache_salt)
        codegen.apply()
        kwargs["random_seed"] = codegen.cache_salt()
    ti.init(**kwargs)
    frontend.speed_up()
    _config = wanted
    _verbose = verbose
    if specialize is not None:
        _specialize = specialize
    return dict(_config)


def step_features(n_soil_samples: int, n_pins: int, n_tracks: int, n_plates: int) -> tuple:
    """The optional parts (``kernels/common/arrays.py``'s ``FEATURES``) the step kernel of a world with
    articulated trees is compiled with: those the world uses (``soil`` for soil samples, ``pins``, ``belts``
    for tracks, ``rft`` for RFT plates) where :func:`init`'s ``specialize`` is on, else all of them."""
    from .kernels.common.arrays import FEATURES

    if not _specialize:
        return FEATURES
    used = {"soil": n_soil_samples > 0, "pins": n_pins > 0, "belts": n_tracks > 0, "rft": n_plates > 0}
    return tuple(f for f in FEATURES if used[f])


def is_initialized() -> bool:
    """Whether :func:`init` has run in this process."""
    return _config is not None


def config() -> dict:
    """The active configuration; initialises with the defaults (cpu, f64) if nothing was chosen yet."""
    if _config is None:
        init()
    return dict(_config)


def offline_cache_path() -> Path:
    """Where Taichi keeps compiled kernels between runs (its offline cache: ``~/.cache/taichi/ticache`` unless
    ``TI_OFFLINE_CACHE_FILE_PATH`` names another folder; :func:`init` sets neither). Needs no ``init``."""
    env = os.environ.get("TI_OFFLINE_CACHE_FILE_PATH")
    if env:
        return Path(env)
    from taichi._lib import core

    return Path(core.get_repo_dir()) / "ticache"


@contextlib.contextmanager
def compile_notice(what: str):
    """Say on stderr that ``what`` compiles now, and how long it took once done (nothing if ``init`` was
    called with ``verbose=False``).

    Taichi compiles a kernel on its first use in a process: its Python front end turns the kernel's source
    into IR (every inlined ``ti.func`` at each call site), then the backend (LLVM on cpu) compiles that, which
    the offline cache keeps. A step kernel's front end runs in the first process only
    (:mod:`taichi_terra.kernel_cache`), so the first run on a machine takes longest and later runs load the
    kernel. The times measured on a 2-core cpu are in the docs (``docs/performance.md``).
    """
    if not _verbose:
        yield
        return
    import sys
    import time

    print(f"taichi_terra: compiling {what}; later runs load it from Taichi's cache "
          f"({offline_cache_path()})", file=sys.stderr, flush=True)
    start = time.perf_counter()
    yield
    print(f"taichi_terra: compiled in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)


def cpu_threads() -> int:
    """The worker threads Taichi's cpu backend runs parallel loops on (``init``'s ``threads``, or one per
    core)."""
    from taichi.lang import impl

    return int(impl.current_cfg().cpu_max_num_threads)


def np_real():
    """The numpy float type matching the chosen precision."""
    import numpy as np

    return np.float64 if config()["precision"] == "f64" else np.float32


def ti_real():
    """The Taichi float type matching the chosen precision."""
    import taichi as ti

    return ti.f64 if config()["precision"] == "f64" else ti.f32


def host_view(arr):
    """A numpy array that shares the memory of the Taichi ndarray ``arr`` (scalar elements), or ``None``
    where kernels do not run in host memory (GPU backends).

    On ``cpu`` kernels run synchronously in host memory, so reading or writing the view between kernel
    launches costs a numpy copy instead of a copy kernel (``to_numpy`` launches one, about 0.3 ms and
    more for large arrays). The view is valid for the life of ``arr``.
    """
    if config()["arch"] != "cpu" or tuple(arr.element_shape):
        return None
    import ctypes

    import numpy as np
    from taichi.lang import impl

    dtype = {"f64": np.float64, "f32": np.float32, "i32": np.int32, "i64": np.int64}.get(str(arr.dtype))
    if dtype is None:
        return None
    count = int(np.prod(arr.shape))
    ptr = impl.get_runtime().prog.get_ndarray_data_ptr_as_int(arr.arr)
    buf = (ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(ptr)
    return np.frombuffer(buf, dtype=dtype).reshape(arr.shape)


def element_type(arr):
    """The Taichi element type of an ndarray (scalar, vector or matrix), as graph arguments need it."""
    import taichi as ti

    shape = tuple(arr.element_shape)
    if not shape:
        return arr.dtype
    if len(shape) == 1:
        return ti.types.vector(shape[0], arr.dtype)
    return ti.types.matrix(shape[0], shape[1], arr.dtype)


def compiled_launch(kernel, scalars: tuple, arrays: dict):
    """``kernel`` as a compiled Taichi graph: a call binds every array in C++ instead of Python (a kernel
    called from Python converts each ndarray argument, about 15 us apiece on a 2-core cpu).

    ``kernel``'s parameters are the ``i32`` scalars named in ``scalars``, then the ndarrays of ``arrays``
    (name -> ndarray), in that order. ``kernel`` may be a sequence of kernels with those parameters: the graph
    launches them in that order. Returns ``(run, args)``: set the scalars in ``args``, then ``run(args)``
    launches the kernel (or each kernel of the sequence) once.
    """
    import taichi as ti
    from taichi.lang import impl

    sym = [ti.graph.Arg(ti.graph.ArgKind.SCALAR, name, ti.i32) for name in scalars]
    sym += [ti.graph.Arg(ti.graph.ArgKind.NDARRAY, name, dtype=element_type(arr), ndim=len(arr.shape))
            for name, arr in arrays.items()]
    builder = ti.graph.GraphBuilder()
    for one in (kernel if isinstance(kernel, (list, tuple)) else (kernel,)):
        builder.dispatch(one, *sym)
    graph = builder.compile()
    compiled = getattr(graph, "_compiled_graph", None)
    if compiled is not None and hasattr(compiled, "jit_run"):
        # the arrays' C++ handles bound once: a call skips Taichi's per-call conversion of the dict
        args = {name: arr.arr for name, arr in arrays.items()}
        config = impl.get_runtime().prog.config()

        def run(a, _run=compiled.jit_run, _config=config):
            _run(_config, a)
    else:
        args = dict(arrays)
        run = graph.run
    args.update({name: 0 for name in scalars})
    return run, args
