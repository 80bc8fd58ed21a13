"""Reading and writing every body's state: numpy through the world's getters and setters, against torch tensors
that share the world's memory (``taichi_terra/torch_views.py``).

    python -m perf torch_io [--envs 4096] [--bodies 10] [--calls 50] [--repeats 5] [--torch-threads N]

A world of ``--envs`` envs with ``--bodies`` boxes each, on cpu f64. Per call, median microseconds:

- ``numpy read``: ``world.get_state()`` (two copies: the coordinates and the velocities);
- ``torch read``: ``torch_views.state(world)`` (no copy: tensors over the world's arrays, made anew each call)
  and then reading the positions as the views hold them (the same tensors after a step: no call at all);
- ``numpy write``: ``world.set_state(position=..., linear_velocity=...)`` with float64 arrays of every env
  (checked, then copied in);
- ``torch write``: ``tensor.copy_(...)`` into the position and velocity views (one copy each, unchecked).

Calls are interleaved (``perf/timing.py``) so that the machine's drift hits all alike. ``--torch-threads``:
torch's thread pool beside Taichi's (on 2 cores, torch's default of 2 threads made each strided ``copy_`` 20 times
slower than with 1: docs/performance.md). Needs torch.
"""
from ..timing import interleaved
from . import init_backend

SMOKE = ["--envs", "8", "--bodies", "2", "--calls", "2", "--repeats", "1"]
OUT = "torch_io.json"


def add_arguments(p) -> None:
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--bodies", type=int, default=10)
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--torch-threads", type=int, default=None,
                   help="torch.set_num_threads before timing (default: torch's own choice)")


def run(args) -> dict:
    import numpy as np
    import torch

    init_backend("cpu", "f64")
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    import taichi_terra as tt
    from taichi_terra import torch_views

    world = tt.World(dt=1e-3, n_envs=args.envs)
    world.add_ground()
    for k in range(args.bodies):
        world.add_box(0.2, 0.2, 0.2, 1.0).set_position([0.3 * k, 0.0, 0.5])
    world.step(1)
    views = torch_views.state(world)
    pos = np.array(world.get_state()["position"])
    vel = np.zeros_like(pos)
    pos_t, vel_t = torch.from_numpy(pos.copy()), torch.from_numpy(vel.copy())
    sink = []
    t = interleaved({
        "numpy_read": lambda: sink.append(world.get_state()["position"][0, 0, 0]),
        "torch_read": lambda: sink.append(torch_views.state(world)["position"][0, 0, 0]),
        "numpy_write": lambda: world.set_state(position=pos, linear_velocity=vel),
        "torch_write": lambda: (views["position"].copy_(pos_t), views["linear_velocity"].copy_(vel_t)),
    }, args.calls, args.repeats)
    us = {k: 1e6 * v for k, v in t.items()}
    row = {"n_envs": args.envs, "n_bodies": args.bodies, "torch_threads": torch.get_num_threads(), **{f"{k}_us": v for k, v in us.items()},
           "copies": {"numpy_read": 2, "torch_read": 0, "numpy_write": 2, "torch_write": 2},
           "read_ratio": us["numpy_read"] / us["torch_read"], "write_ratio": us["numpy_write"] / us["torch_write"]}
    print(f"{args.envs} envs x {args.bodies} bodies, cpu f64, torch on {torch.get_num_threads()} threads, "
          f"median us per call: "
          f"read numpy {us['numpy_read']:.1f} (2 copies), torch {us['torch_read']:.1f} (0 copies, "
          f"x{row['read_ratio']:.1f}); write numpy {us['numpy_write']:.1f} (checked, 2 copies), "
          f"torch {us['torch_write']:.1f} (2 copies, unchecked, x{row['write_ratio']:.1f})")
    return row
