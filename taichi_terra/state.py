"""Per-env state: generalized coordinates and velocities, applied loads, contact lists and caches.

Every array has the env index first. A checkpoint is a copy of all of them.
"""
from __future__ import annotations

import numpy as np
import taichi as ti

from .backend import np_real, ti_real


class State:
    #: arrays copied by checkpoints (scratch arrays rebuilt every step are not)
    PERSISTENT = ("q", "u", "f_ext", "t_ext", "c_count", "c_pos", "c_nrm", "c_depth", "c_feat",
                  "c_imp", "broad", "env_info", "soil_state")

    def __init__(self, model, n_envs: int, q0: np.ndarray, u0: np.ndarray, f0: np.ndarray, t0: np.ndarray,
                 soil0: np.ndarray | None = None):
        real = ti_real()
        vec3, mat3 = ti.types.vector(3, real), ti.types.matrix(3, 3, real)
        ne, nb = n_envs, max(model.n_bodies, 1)
        ns, npair = max(model.n_slots, 1), max(model.n_pairs + model.max_shape_pairs, 1)
        self.q = ti.ndarray(real, (ne, max(model.nq, 1)))
        self.u = ti.ndarray(real, (ne, max(model.nv, 1)))
        self.f_ext = ti.ndarray(vec3, (ne, nb))
        self.t_ext = ti.ndarray(vec3, (ne, nb))
        if model.n_bodies:
            for arr, data in ((self.q, q0), (self.u, u0), (self.f_ext, f0), (self.t_ext, t0)):
                arr.from_numpy(np.ascontiguousarray(data, dtype=np_real()))
        self.body_iw = ti.ndarray(mat3, (ne, nb))
        # per pair (the static pairs, then this step's shape-shape pairs): contacts found this step, contacts
        # dropped because the pair's slots (or the shared pool) were full
        self.c_count = ti.ndarray(ti.types.vector(2, ti.i32), (ne, npair))
        self.c_pos = ti.ndarray(vec3, (ne, ns))
        self.c_nrm = ti.ndarray(vec3, (ne, ns))
        self.c_depth = ti.ndarray(real, (ne, ns))
        # feature id of each slot's contact this step and in the last step (-1: none), for warm starts
        self.c_feat = ti.ndarray(ti.types.vector(2, ti.i32), (ne, ns))
        self.c_feat.fill(-1)
        # impulse of each slot's contact in the last step [N s] (world frame): what get_contacts reports and
        # what the next step's warm start looks up
        self.c_imp = ti.ndarray(vec3, (ne, ns))
        self.c_w = ti.ndarray(mat3, (ne, ns))
        self.c_lam = ti.ndarray(vec3, (ne, ns))
        # row parameters: [0] target normal velocity (rigid rows) or effective width b (soil rows) [m/s or m],
        # [1] the quadrature area of a soil row [m^2]
        self.c_target = ti.ndarray(ti.types.vector(2, real), (ne, ns))
        self.c_list = ti.ndarray(ti.types.vector(4, ti.i32), (ne, ns))  # (slot, pair, body a, body b) of each row
        # sweeps, shape pairs now and last step, pairs dropped (kernels/layout.py EI_*)
        self.env_info = ti.ndarray(ti.types.vector(4, ti.i32), (ne,))
        # broadphase order and the shape-pair tables of this and the last step (kernels/layout.py)
        mp = model.max_shape_pairs
        broad = np.zeros((ne, nb + 2 * mp, 4), np.int32)
        broad[:, :nb, 0] = np.arange(nb)
        self.broad = ti.ndarray(ti.types.vector(4, ti.i32), (ne, nb + 2 * mp))
        self.broad.from_numpy(broad)
        # per soil sample: total sinkage, plastic sinkage, loaded slip, loaded-last-step flag (terrain/deformable.py)
        self.soil_state = ti.ndarray(ti.types.vector(4, real), (ne, max(model.n_soil_samples, 1)))
        if soil0 is not None and model.n_soil_samples:
            self.soil_state.from_numpy(np.ascontiguousarray(soil0, dtype=np_real()))
        from .kernels.common.layout import N_PARAMS

        self.params = ti.ndarray(real, (N_PARAMS,))
        # per soil-bed sample row: a revision that advances whenever a height in the row changes (never
        # cleared, not part of checkpoints: renderers compare it with the revision they last drew)
        self.soil_rev = ti.ndarray(ti.i64, (ne, max(model.n_soil_rows, 1)))

    def snapshot(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name).to_numpy() for name in self.PERSISTENT}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        for name in self.PERSISTENT:
            getattr(self, name).from_numpy(np.ascontiguousarray(arrays[name]))
