"""Per-env arrays: State (what evolves), Control (what the user applies), Scratch (rebuilt every step).

Every array has the env index first and is declared in ``kernels/common/arrays.py``; a checkpoint copies
State and Control (``arrays.CHECKPOINTED``) and, of Scratch, only the step's outputs the getters report
(``OUTPUTS``).
"""
from __future__ import annotations

import numpy as np
import taichi as ti

from .backend import host_view, ti_real
from .kernels.common import arrays as A


class _Arrays:
    """A group of per-env arrays, allocated from their layouts, with numpy access by block."""

    ARENAS: tuple = ()

    def __init__(self, model, n_envs: int):
        self.n_envs = n_envs
        self._layouts = {a.name: model.layouts[a.name] for a in self.ARENAS}
        self._views = {}
        for arena in self.ARENAS:
            size = self._layouts[arena.name].size
            arr = ti.ndarray(arena.ti_dtype(ti_real()), (n_envs, size))
            arr.fill(0)
            setattr(self, arena.name, arr)
            self._views[arena.name] = host_view(arr)

    def arrays(self) -> dict:
        return {a.name: getattr(self, a.name) for a in self.ARENAS}

    def read(self, name: str) -> np.ndarray:
        """The whole array ``name`` as numpy (shape (n_envs, size)); on cpu a view of the array's memory
        (copy it before the next step if it must stay as it is)."""
        view = self._views[name]
        return view if view is not None else getattr(self, name).to_numpy()

    def write(self, name: str, data: np.ndarray) -> None:
        """Replace the whole array ``name``."""
        view = self._views[name]
        if view is not None:
            view[...] = data
        else:
            getattr(self, name).from_numpy(np.ascontiguousarray(data))

    def block(self, name: str, block: str, col: str | None = None) -> np.ndarray:
        """A copy of one block (shape (n_envs, rows, stride)) or one of its columns (n_envs, rows, width)."""
        return np.array(self._layouts[name].view(self.read(name), block, col))

    def block_rows(self, name: str, block: str, index, col: str | None = None) -> np.ndarray:
        """A copy of ``block[index]`` (or of one column), ``index`` over (env, row): on cpu only those rows are
        copied."""
        return np.array(self._layouts[name].view(self.read(name), block, col)[index])

    def set_block(self, name: str, block: str, col: str | None, values, envs=slice(None)) -> None:
        """Write one block or column for the envs ``envs`` (the rest of the array is kept)."""
        view = self._views[name]
        data = view if view is not None else getattr(self, name).to_numpy()
        self._layouts[name].view(data, block, col)[envs] = values
        if view is None:
            getattr(self, name).from_numpy(data)


class State(_Arrays):
    """Generalized coordinates ``q`` and velocities ``u``, the last step's contacts and warm-start cache
    (``state_f``, ``state_i``), and the soil beds' row revisions (``soil_rev``, not checkpointed)."""

    ARENAS = (A.Q, A.U, A.STATE_F, A.STATE_I, A.SOIL_REV)

    def __init__(self, model, n_envs: int, q0: np.ndarray | None, u0: np.ndarray | None,
                 soil0: np.ndarray | None = None, tree_q0: np.ndarray | None = None, tree_u0: np.ndarray | None = None):
        super().__init__(model, n_envs)
        if q0 is not None:  # (n_envs, 7 n_bodies) and (n_envs, 6 n_bodies)
            self.set_block("q", "free_body", None, np.asarray(q0).reshape(n_envs, -1, A.Q_FREE.stride))
            self.set_block("u", "free_body", None, np.asarray(u0).reshape(n_envs, -1, A.U_FREE.stride))
        if tree_q0 is not None:  # (n_envs, every tree's nq) and (n_envs, every tree's nv)
            self.set_block("q", "tree", "coordinate", np.asarray(tree_q0)[..., None])
            self.set_block("u", "tree", "velocity", np.asarray(tree_u0)[..., None])
        state_i = self.read("state_i").copy()
        lay = self._layouts["state_i"]
        lay.view(state_i, "feature")[...] = -1
        lay.view(state_i, "sweep_order", "body")[..., 0] = np.arange(model.n_bodies)
        self.write("state_i", state_i)
        if soil0 is not None and model.n_soil_samples:
            state_f = self.read("state_f").copy()
            self._layouts["state_f"].view(state_f, "soil")[...] = soil0
            self.write("state_f", state_f)

    def soil_base(self, soil0: int) -> int:
        """Where soil sample ``soil0`` starts in ``state_f`` (-1 stays -1: a rigid map)."""
        if soil0 < 0:
            return -1
        return self._layouts["state_f"].offsets["soil"] + soil0 * A.SOIL.stride


class Control(_Arrays):
    """What the user applies between steps: each body's external force and torque (``control``)."""

    ARENAS = (A.CONTROL,)


class Scratch(_Arrays):
    """Rebuilt by every step: link responses, broadphase spheres, solver rows (``scratch_f``,
    ``scratch_i``)."""

    ARENAS = (A.SCRATCH_F, A.SCRATCH_I)


#: the step's outputs that getters report ("the last step's"), kept in Scratch and copied by checkpoints:
#: (arena, block, column or None for the whole block)
OUTPUTS = (("scratch_f", "tree_dof", "applied"), ("scratch_f", "link_dyn", "transmitted"),
           ("scratch_f", "plate_out", None), ("scratch_f", "plate_load", None))


def _output_key(arena: str, block: str, col: str | None) -> str:
    return f"{arena}.{block}" + (f".{col}" if col else "")


def snapshot(state: State, control: Control, scratch: Scratch) -> dict[str, np.ndarray]:
    """Copies of the checkpointed arrays by name, and of the step's outputs (``OUTPUTS``) by
    ``arena.block[.column]``."""
    groups = {**state.arrays(), **control.arrays()}
    out = {name: np.array(state.read(name) if name in state.arrays() else control.read(name))
           for name in A.CHECKPOINTED if name in groups}
    for arena, block, col in OUTPUTS:
        out[_output_key(arena, block, col)] = scratch.block(arena, block, col)
    return out


def load(state: State, control: Control, scratch: Scratch, arrays: dict[str, np.ndarray]) -> None:
    """Write the checkpointed arrays and the step's outputs back."""
    for name in A.CHECKPOINTED:
        (state if name in state.arrays() else control).write(name, arrays[name])
    for arena, block, col in OUTPUTS:
        scratch.set_block(arena, block, col, arrays[_output_key(arena, block, col)])
