"""The soil beds' per-env state in a built world: one place that reads and writes it.

Each bed's samples hold (sinkage, plastic sinkage, loaded slip, spare) [m] in ``state_f``'s ``soil`` block; its
sample rows have a revision each (``soil_rev``), advanced whenever a height of the row changes in that env, and a
span of samples the next step's history pass visits (``state_i``'s ``soil_span``). :class:`SoilStore` is made by
the world's build from the model's layout and the state arrays, and is all the beds, the checkpoints and the
env resets use of them. Before the build a bed keeps its state itself (``DeformableTerrain._init_state``).
"""
from __future__ import annotations

import numpy as np


def changed_rows(bed, before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per env and sample row of ``bed``: 1 where a sinkage (so a surface height) differs between ``before``
    and ``after`` (each shape (n_envs, n_samples)), else 0."""
    diff = before.reshape(before.shape[0], bed.y_samples, bed.x_samples) != \
        after.reshape(after.shape[0], bed.y_samples, bed.x_samples)
    return diff.any(axis=2).astype(np.int64)


class SoilStore:
    """The soil state of every bed of a built world.

    Args:
        soil_offsets: per height map, its first sample in the soil block (-1: not a soil bed), as the model
            lays them out (``Model.soil_offsets``).
        soil_row_offsets: per height map, its first sample row in the revision and span blocks (-1: not a bed).
        state: the world's :class:`~taichi_terra.state.State` (the arrays; read and written by block).
    """

    def __init__(self, soil_offsets, soil_row_offsets, state):
        self._offsets, self._row_offsets, self._state = list(soil_offsets), list(soil_row_offsets), state

    def _samples(self, bed) -> slice:
        off = self._offsets[bed.index]
        return slice(off, off + bed.n_samples)

    def _rows(self, bed) -> slice:
        off = self._row_offsets[bed.index]
        return slice(off, off + bed.y_samples)

    def read(self, bed, env: int) -> np.ndarray:
        """The state of ``bed``'s samples in env ``env``, shape (n_samples, 4), a copy in float64."""
        return self._state.block("state_f", "soil")[int(env), self._samples(bed)].astype(np.float64)

    def write(self, bed, rows: np.ndarray, envs) -> None:
        """Set the state of ``bed``'s samples in ``envs`` (an index or a slice) to ``rows`` (shape (n_samples,
        4), or one per env); the rows whose heights changed take a new revision, and the next step's history
        pass visits every sample of the bed in those envs."""
        target = (envs, self._samples(bed))  # (only these rows are copied on cpu)
        before = self._state.block_rows("state_f", "soil", target)[..., 0].reshape(-1, bed.n_samples)
        self._state.set_block("state_f", "soil", None, rows, envs=target)
        after = self._state.block_rows("state_f", "soil", target)[..., 0].reshape(-1, bed.n_samples)
        bump = np.zeros((self._state.n_envs, bed.y_samples), np.int64)
        bump[envs] = changed_rows(bed, before, after).reshape(bump[envs].shape)
        self.bump(bed, bump)
        self.open_spans(bed, envs)

    def open_spans(self, bed, envs) -> None:
        """Make the next step visit every sample of ``bed`` in ``envs`` once (the step's history pass otherwise
        visits only the samples loaded in the step before; ``SOIL_SPAN``)."""
        span = self._state.block("state_i", "soil_span")
        span[envs, self._rows(bed)] = (0, bed.x_samples - 1, bed.x_samples, -1)
        self._state.set_block("state_i", "soil_span", None, span)

    def bump(self, bed, bump: np.ndarray) -> None:
        """Advance the row revisions of ``bed`` by ``bump``, shape (n_envs, y_samples)."""
        if np.any(bump):
            rev = self._state.block("soil_rev", "row_revision", "revision")[..., 0]
            rev[:, self._rows(bed)] += bump
            self._state.set_block("soil_rev", "row_revision", "revision", rev[..., None])

    def revisions(self, bed) -> np.ndarray:
        """The row revisions of ``bed``, shape (n_envs, y_samples)."""
        return self._state.block("soil_rev", "row_revision", "revision")[:, self._rows(bed), 0]

    def start(self, beds) -> None:
        """At the build: each bed's revisions as its edits before the build left them, and every sample of every
        bed visited by the first step."""
        rev = np.zeros_like(self._state.block("soil_rev", "row_revision", "revision"), np.int64)
        for bed in beds:
            rev[:, self._rows(bed), 0] = bed._rev_before_build
        self._state.set_block("soil_rev", "row_revision", "revision", rev)
        for bed in beds:
            self.open_spans(bed, slice(None))
