"""Checkpoints of a built world: copies of its per-env state and of what the last step reported, restored
whole (:meth:`World.restore`) or env by env (:meth:`World.reset_envs`).

:class:`Checkpoints` is made by the world's build and receives what it uses: the state, control and scratch
arrays (``state.py``'s ``snapshot`` and ``load`` say which arrays a checkpoint holds) and the soil beds' store,
whose row revisions move on wherever a restore may change a surface. Whether a checkpoint fits the world (its
``signature``) is the world's to say; the world passes it in.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .state import load, snapshot


@dataclass
class Checkpoint:
    """A copy of a world's per-env state; restore it into the same world (or one built identically)."""

    arrays: dict
    time: float
    step_count: int
    signature: tuple


def check_fits(checkpoint, signature: tuple) -> None:
    """Raise unless ``checkpoint`` is a :class:`Checkpoint` of a world whose layout is ``signature``."""
    if not isinstance(checkpoint, Checkpoint):
        raise TypeError(f"checkpoint must be a Checkpoint, got {type(checkpoint).__name__}")
    if checkpoint.signature != signature:
        raise ValueError("checkpoint: it was taken from a world with a different layout "
                         f"({checkpoint.signature} != {signature})")


class Checkpoints:
    """Taking and restoring checkpoints of a built world.

    Args:
        state, control, scratch: the world's arrays (``state.py``).
        soil: the soil beds' :class:`~taichi_terra.terrain.soil_state.SoilStore`.
        beds: the world's soil beds.
        n_envs: the world's env count.
    """

    def __init__(self, state, control, scratch, soil, beds, n_envs: int):
        self._state, self._control, self._scratch = state, control, scratch
        self._soil, self._beds, self._n_envs = soil, list(beds), int(n_envs)

    def take(self, time: float, steps: int, signature: tuple) -> Checkpoint:
        """A checkpoint of the arrays now, at simulated ``time`` [s] after ``steps`` steps."""
        return Checkpoint(snapshot(self._state, self._control, self._scratch), time, steps, signature)

    def _arrays(self, checkpoint) -> tuple[dict, dict]:
        """The checkpointed arrays now and ``checkpoint``'s, after checking that every one of the latter is
        there with the shape and dtype of the former (raises and changes nothing otherwise)."""
        current = snapshot(self._state, self._control, self._scratch)
        arrays = checkpoint.arrays if isinstance(checkpoint.arrays, dict) else {}
        for name, ref in current.items():
            got = arrays.get(name)
            if not isinstance(got, np.ndarray) or got.shape != ref.shape or got.dtype != ref.dtype:
                raise ValueError(f"checkpoint.arrays[{name!r}] is missing or has the wrong shape or dtype "
                                 f"(expected {ref.shape} {ref.dtype})")
        return current, arrays

    def restore(self, checkpoint: Checkpoint) -> tuple[float, int]:
        """Load every array of ``checkpoint`` (of this world: :func:`check_fits` first) and return its time [s]
        and step count; a bad time, step count or array raises before anything is loaded. Every sample row of
        every bed takes a new revision: the surface brought back may differ from the one drawn last."""
        if not isinstance(checkpoint.time, float) or not np.isfinite(checkpoint.time):
            raise ValueError(f"checkpoint.time must be a finite float, got {checkpoint.time!r}")
        if isinstance(checkpoint.step_count, bool) or not isinstance(checkpoint.step_count, int) \
                or checkpoint.step_count < 0:
            raise ValueError(f"checkpoint.step_count must be an int >= 0, got {checkpoint.step_count!r}")
        _current, arrays = self._arrays(checkpoint)
        load(self._state, self._control, self._scratch, arrays)
        for bed in self._beds:
            self._soil.bump(bed, np.ones((self._n_envs, bed.y_samples), np.int64))
        return checkpoint.time, checkpoint.step_count

    def reset_envs(self, idx: np.ndarray, checkpoint: Checkpoint) -> None:
        """Load ``checkpoint``'s arrays (of this world: :func:`check_fits` first) into the envs ``idx`` (checked
        indices) only; their beds' rows take new revisions."""
        current, arrays = self._arrays(checkpoint)
        for name in current:
            current[name][idx] = arrays[name][idx]
        load(self._state, self._control, self._scratch, current)
        for bed in self._beds:
            rows = np.zeros((self._n_envs, bed.y_samples), np.int64)
            rows[idx] = 1
            self._soil.bump(bed, rows)
