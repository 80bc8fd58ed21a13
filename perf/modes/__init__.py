"""The benchmark modes of ``python -m perf MODE`` (``perf/cli.py``), one module each.

A mode module has a docstring (its ``--help``), ``add_arguments(parser)``, ``run(args) -> dict`` (what it
measured: the ``result`` of its JSON file, and what ``perf/ab.py`` compares), ``SMOKE`` (the arguments of a run of
a few steps at one small env count, seconds long: ``--smoke``, which the test suite runs) and ``OUT`` (its result
file's name in ``perf/results/``). Its scenes come from ``perf/scenes/``, its timing from ``perf/timing.py``.
"""
from __future__ import annotations

#: mode name -> module (under perf.modes) and what it times
MODES = {
    "backends": ("backends", "every harness scene on every backend present, side by side (the default mode)"),
    "rigid": ("rigid", "a sphere and a box on a sine terrain; MuJoCo alongside; the control loop"),
    "soil": ("soil", "a body settling on a soil bed; the contact law alone"),
    "many_bodies": ("many_bodies", "the stages of a step with many boxes"),
    "planar": ("planar", "the planar world's pens and push scene; IR-SIM alongside"),
    "articulated": ("articulated", "a 60-link chain and a standing quadruped; MuJoCo alongside"),
    "tracks": ("tracks", "the tracked robot driving and standing, belt rows against plain rows"),
    "rft": ("rft", "resistive force theory on plates against numpy; whole steps; the hexapod walking"),
    "buggy": ("buggy", "the buggy driving over soil"),
    "solver": ("solver", "sweeps per step and real time of the scenes that are mostly the contact and soil solve"),
    "tolerance": ("tolerance", "what each sweep tolerance costs and how far it leaves the soil checks"),
    "sweep_trace": ("sweep_trace", "one step's sweeps one by one: the rate of convergence"),
    "viewer": ("viewer", "drawing and reading back frames of the headless viewer"),
    "stages": ("stages", "serial against parallel stages within an env; kernel launch costs"),
    "layouts": ("layouts", "the step's GPU layout (a launch per stage) against the fused kernel"),
    "startup": ("startup", "every demo scene's first run on a machine (empty Taichi cache) and a later one"),
    "torch_io": ("torch_io", "reading and writing every body's state: numpy getters against torch views"),
    "terrain_tiles": ("terrain_tiles", "a map shared by every env against one with heights per env; moving tiles"),
    "rl_throughput": ("rl_throughput", "the RL tasks' env-steps/s with the policy's inference and observations"),
    "ray_rollouts": ("ray_rollouts", "rollouts on Ray actors against the same envs in one process"),
}


def init_backend(arch: str = "cpu", precision: str | None = None, threads: int | None = None) -> dict:
    """``taichi_terra.init`` for a mode: ``precision`` None is f64 (f32 on vulkan). A process that runs several
    modes (the test suite's smoke runs) keeps the backend it started with where arch and precision match, its
    thread count included. Returns the backend's configuration."""
    import taichi_terra as tt
    from taichi_terra import backend

    precision = precision or ("f32" if arch == "vulkan" else "f64")
    if backend.is_initialized():
        cfg = backend.config()
        if (cfg["arch"], cfg["precision"]) == (arch, precision):
            return cfg
    tt.init(arch=arch, precision=precision, threads=threads)
    return backend.config()


def add_backend_arguments(parser, archs=("cpu", "cuda", "vulkan", "gpu")) -> None:
    """``--arch``, ``--precision`` and ``--threads``, for the modes that run on any backend."""
    parser.add_argument("--arch", default="cpu", choices=list(archs))
    parser.add_argument("--precision", default=None, choices=["f64", "f32"], help="default: f64, f32 on vulkan")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
