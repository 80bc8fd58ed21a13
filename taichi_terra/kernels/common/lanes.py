"""Parallel loops over a compile-time number of threads ("lanes"), for the SPIR-V backends (vulkan)."""

#: the most threads a loop over lanes launches (vulkan allows 65,535 groups of 128 threads per dimension)
MAX_LANES = 1 << 22

#: loop iterations a thread runs in one launch on lavapipe (Mesa's software Vulkan driver), all its loops
#: counted together: llvmpipe gives each shader invocation one counter (``LP_MAX_TGSI_LOOP_ITERATIONS``), spent
#: at every loop's back-edge, and once it is spent every loop ends at its next back-edge, so the work after
#: it runs on wrong values without an error. Kernels keep a thread's work per launch below it: a stage per
#: launch, loops over what is there (a list's length, not a table's capacity); ``tests/test_vulkan_loops.py``
#: shows the limit and ``docs/guides/pitfalls.md`` explains it
LAVAPIPE_LOOP_LIMIT = 65535


def gpu_lanes(count: int) -> int:
    """Threads of a parallel loop over ``count`` items on vulkan: the next power of two from 32, or 0 (a loop
    Taichi sizes itself) past :data:`MAX_LANES`.

    Taichi (1.7) launches a loop whose bound is known only at run time on the SPIR-V backends with 65,536
    threads, whatever the bound, each thread taking every 65,536th iteration. A thread with nothing to do still
    costs its share of the shader's set-up, and the step kernel's is large: on lavapipe every launch of the step
    kernel took about 0.6 s, for one env as for 64. A loop over a compile-time number of lanes, lane ``i``
    taking item ``i`` when ``i < count`` (``for lane in range(lanes): if lane < count: ...``), launches only
    those threads; powers of two keep the number of kernel variants (each compiled once) small. (A lane does not
    loop over several items: on lavapipe, a thread's loop iterations per launch are limited,
    :data:`LAVAPIPE_LOOP_LIMIT`.)"""
    count = int(count)
    if count > MAX_LANES:
        return 0
    lanes = 32
    while lanes < count:
        lanes *= 2
    return lanes


_LOOP_LIMIT: dict = {}


def driver_loop_limit():
    """:data:`LAVAPIPE_LOOP_LIMIT` where the Vulkan driver limits a thread's loop iterations per launch (lavapipe),
    else ``None`` (a GPU's own driver). Measured once per process on vulkan, by a thread counting to
    ``LAVAPIPE_LOOP_LIMIT + 2`` in one launch; ``None`` on the other backends. Call after ``taichi_terra.init``."""
    from ... import backend

    if backend.config()["arch"] != "vulkan":
        return None
    if "limit" not in _LOOP_LIMIT:
        import taichi as ti

        @ti.kernel
        def count(n: ti.i32, out: ti.types.ndarray()):
            for thread in range(1):  # one thread
                c = 0
                for _ in range(n):
                    c += 1
                out[thread] = c

        out = ti.ndarray(ti.i32, 1)
        count(LAVAPIPE_LOOP_LIMIT + 2, out)
        ran = int(out.to_numpy()[0])
        _LOOP_LIMIT["limit"] = None if ran == LAVAPIPE_LOOP_LIMIT + 2 else ran
    return _LOOP_LIMIT["limit"]
