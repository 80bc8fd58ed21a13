"""torch tensors over a world's state, without copies on cpu.

``import taichi_terra.torch_views`` needs torch (the ``[torch]`` extra). :func:`state` returns the free
bodies' state and :func:`articulated_state` a system's generalized coordinates and velocities as torch
tensors with the env axis first. On the ``cpu`` backend each tensor shares the memory of the world's arrays:

- after a step the same tensor holds the new values (no call, no copy);
- writing into it (in place: ``t[...] = x``, ``t.add_(x)``) sets what the next step starts from, as the
  world's setters would, minus their checks (a quaternion written here is not normalised; the caller keeps
  it unit).

The tensors stay valid while the world lives. On the GPU backends the world's arrays are not in host memory:
there :func:`state` and :func:`articulated_state` return copies (``copied`` in :func:`describe` says which),
read at the call.
"""
from __future__ import annotations

import numpy as np

try:
    import torch
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError("taichi_terra.torch_views needs torch: pip install 'taichi_terra[torch]'") from exc

#: the free-body quantities of :func:`state`: (arena, first column, width) in a body's row
_FREE = {"position": ("q", 0, 3), "orientation": ("q", 3, 4), "linear_velocity": ("u", 0, 3),
         "angular_velocity": ("u", 3, 3)}


def _arena_view(world, name: str) -> tuple[np.ndarray, bool]:
    """Arena ``name`` of the world's state or control as a numpy array (n_envs, size): the live memory on cpu
    (``False``: not copied), else a copy (``True``)."""
    world.build()
    group = world._control if name == "control" else world._state
    view = group._views.get(name)
    if view is not None:
        return view, False
    return group.read(name), True


def _block(world, arena: str, block: str) -> tuple[np.ndarray, bool]:
    data, copied = _arena_view(world, arena)
    return world._model.layouts[arena].view(data, block), copied


def state(world) -> dict:
    """Every free body's state in every env as torch tensors, env axis first (as ``World.get_state``):
    ``position`` [m] (n_envs, n_bodies, 3), ``orientation`` (w, x, y, z) (n_envs, n_bodies, 4),
    ``linear_velocity`` [m/s] and ``angular_velocity`` [rad/s] (n_envs, n_bodies, 3). On cpu they share the
    world's memory (module docstring); their dtype is the world's precision (float64 or float32)."""
    out = {}
    for name, (arena, c0, width) in _FREE.items():
        rows, _copied = _block(world, arena, "free_body")
        out[name] = torch.from_numpy(rows[..., c0:c0 + width])
    return out


def loads(world) -> dict:
    """Every free body's external ``force`` [N] (at its centre of mass) and ``torque`` [N m], world frame,
    (n_envs, n_bodies, 3) each (as ``Body.set_external_force``): a policy's actions written in place act in
    the next step (cpu; module docstring)."""
    rows, _copied = _block(world, "control", "body_load")
    nb = len(world.bodies)
    return {"force": torch.from_numpy(rows[:, :nb, 0:3]), "torque": torch.from_numpy(rows[:, :nb, 3:6])}


def articulated_state(world, system) -> dict:
    """One articulated system's generalized coordinates ``q`` (n_envs, nq) and velocities ``u`` (n_envs, nv)
    as torch tensors (the system's order: ``get_generalized_coordinate``), sharing the world's memory on cpu."""
    if system not in world.articulated_systems:
        raise ValueError("system: not one of this world's articulated systems")
    k = world.articulated_systems.index(system)
    world.build()
    m = world._model
    q0, u0 = m.tree_q0[k], m.tree_u0[k]
    q, _ = _block(world, "q", "tree")
    u, _ = _block(world, "u", "tree")
    return {"q": torch.from_numpy(q[:, q0:q0 + system.get_generalized_coordinate_dim(), 0]),
            "u": torch.from_numpy(u[:, u0:u0 + system.get_dof(), 0])}


def describe(world) -> dict:
    """Whether the tensors of this world's views are ``copied`` (GPU backends) or share its memory (cpu)."""
    _data, copied = _arena_view(world, "q")
    return {"copied": copied}
