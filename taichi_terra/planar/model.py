"""The planar world's Taichi arrays: the static model (objects, pieces, grid-map indices) shared by all envs, the
per-env state (poses, velocities, commands, world-frame pieces) and the contact step's per-env tables."""
from __future__ import annotations

import numpy as np
import taichi as ti

from .. import backend
from ..kernels.planar import arrays as L
from .objects import KINDS, KINEMATICS
from .reports import ContactArrays
from .shapes import CIRCLE, POLYGON, SEGMENT

_KIND_CODE = {CIRCLE: 0, POLYGON: 1, SEGMENT: 2}
#: contact-stage launches per round on vulkan, between reads of whether every env is done (a read waits for the
#: launches before it; a launch for an env that is done costs only its start)
_ROUND = 8


class PlanarArrays:
    """Every array of a built planar world (see ``kernels/planar/arrays.py`` for the packed columns)."""

    #: what a checkpoint holds: the state and control tables (scratch is rebuilt every step)
    STATE = tuple(t.name for t in L.TABLES if t.role != "scratch")

    def __init__(self, world):
        real, i32 = backend.ti_real(), ti.i32
        specs, ne = world._specs, world.n_envs
        nk = len(specs)
        obj_i = np.zeros((nk, L.OBJECT_I.stride), np.int64)
        obj_f = np.zeros((nk, L.OBJECT_F.stride))
        piece_i, lv = [], []
        map_i, map_f, offsets, items = [], [], [], []
        for k, s in enumerate(specs):
            p0 = len(piece_i)
            for piece in s.pieces:
                piece_i.append((_KIND_CODE[piece.kind], len(lv), len(piece.vertices), k))
                if piece.kind == CIRCLE:
                    lv.append((*piece.vertices[0], piece.radius, 0.0))
                else:
                    lv.extend((*v, *nrm) for v, nrm in zip(piece.vertices, piece.normals))
            grid = -1
            if s.grid is not None:
                grid = len(map_i)
                map_i.append((s.grid.shape[0], s.grid.shape[1], len(offsets), 0))
                map_f.append((*s.grid.origin, s.grid.cell))
                offsets.extend(s.grid.offsets + len(items))
                items.extend(s.grid.items + p0)
            obj_i[k] = (KINDS[s.kind], KINEMATICS.get(s.kinematics, L.KIN_NONE), p0, len(piece_i), grid)
            movable = s.kind != "static"
            obj_f[k] = (1.0 / s.mass if movable else 0.0, 1.0 / s.inertia if movable else 0.0, s.friction,
                        s.restitution, s.friction * s.mass * world.gravity if movable else 0.0, s.bound,
                        *s.props.center, s.wheelbase, np.sqrt(s.inertia / s.mass) if movable else 0.0)
        cap = world.max_pairs
        np_real = backend.np_real()
        # the model arenas (kernels/planar/arrays.py): every block packed by column name
        lay_i = L.MODEL_I.layout({"offsets": 1, "object": nk, "piece": len(piece_i), "map": len(map_i),
                                  "bucket": len(offsets), "bucket_item": len(items)})
        lay_f = L.MODEL_F.layout({"settings": 1, "object": nk, "vertex": len(lv), "map": len(map_f)})
        model_i = lay_i.empty(np_real)
        offs = lay_i.view(model_i, "offsets")[0]
        for arena, block, col, _name in L.MODEL_REFS:
            offs[getattr(L.OFFSETS, col)] = (lay_i if arena is L.MODEL_I else lay_f).offsets[block.name]
        lay_i.view(model_i, "object")[...] = obj_i
        if piece_i:
            lay_i.view(model_i, "piece")[...] = np.array(piece_i)
        if map_i:
            lay_i.view(model_i, "map")[...] = np.array(map_i)[:, :3]
            lay_i.view(model_i, "bucket")[:, 0] = offsets
            lay_i.view(model_i, "bucket_item")[:, 0] = items
        model_f = lay_f.empty(np_real)
        settings = lay_f.view(model_f, "settings")[0]
        settings[[L.P_DT, L.P_G, L.P_SLOP, L.P_REST, L.P_ITERS]] = (world.dt, world.gravity, world.slop,
                                                                  world.rest_tolerance, world.iterations)
        self.iterations = world.iterations
        # rounding noise of coordinates of order 10 m: about 1e-15 m in f64, 1e-6 m in f32
        settings[L.P_MOVE_TOL] = 1e-12 if np_real == np.float64 else 1e-7
        lay_f.view(model_f, "object")[...] = obj_f
        if lv:
            lay_f.view(model_f, "vertex")[...] = np.array(lv)
        if map_f:
            lay_f.view(model_f, "map")[...] = np.array(map_f)
        self.model_i = ti.ndarray(i32, model_i.shape)
        self.model_i.from_numpy(model_i)
        self.model_f = ti.ndarray(real, model_f.shape)
        self.model_f.from_numpy(model_f)
        self._lay_i, self._lay_f = lay_i, lay_f
        self._model_i_np, self._model_f_np = model_i, model_f

        rows = {"objects": nk, "vertices": len(lv), "pairs": cap, "blockers": 2 * cap, "objects+2": nk + 2}
        initial = {"pose": np.stack([s.pose for s in specs], axis=1),
                   "vel": np.stack([s.velocity for s in specs], axis=1),
                   "cmd": np.stack([s.command for s in specs], axis=1)}
        for table in L.TABLES:
            setattr(self, table.name, table.allocate(real, ne, rows, initial.get(table.name)))
        self.n_objects = nk
        self._launch = None
        self.refresh()

    def model_block(self, block: str) -> np.ndarray:
        """A copy of one block of the planar model (``object``, ``piece``, ``map``... of ``model_i``, or
        ``object_f``, ``vertex``, ``map_f``, ``settings`` of ``model_f``), shape (rows, stride)."""
        if block in ("object_f", "vertex", "map_f", "settings"):
            return np.array(self._lay_f.view(self._model_f_np, block.removesuffix("_f")))
        return np.array(self._lay_i.view(self._model_i_np, block))

    def step(self, n: int) -> None:
        """Advance every env by ``n`` steps (``kernels/planar/step.py``) through compiled graphs bound to these
        arrays once: on cpu one launch of the step kernel. On vulkan, step by step, one launch per stage, and
        the contact passes in launches of at most ``VULKAN_TASKS_PER_LAUNCH`` tasks each (lavapipe ends a
        thread's loops after 65,535 iterations in one launch), in rounds of :data:`_ROUND` launches until every
        env is done (one read of the envs' rows per round). The env loop runs over as many threads as envs
        there (``kernels/common/lanes.py``)."""
        if self._launch is None:
            self._launch = self._compile()
        if len(self._launch) == 1:
            (run, args), = self._launch
            args["n_steps"] = n
            run(args)
            return
        (begin, b_args), (passes, p_args), (end, e_args) = self._launch
        from ..kernels.planar.step import VULKAN_TASKS_PER_LAUNCH

        p_args["n_steps"] = VULKAN_TASKS_PER_LAUNCH
        # every pass has at most twice as many tasks as pair slots: the most rounds a step can need
        rounds = (self.iterations + 1) * (-(-2 * self.pair_i.shape[1] // VULKAN_TASKS_PER_LAUNCH)) // _ROUND + 1
        for _ in range(n):
            begin(b_args)
            for _ in range(rounds):
                passes(p_args)
                if self.env_i.to_numpy()[:, L.EI_DONE].all():
                    break
            end(e_args)

    def _compile(self) -> tuple:
        """The compiled graphs of a step: ``((run, args),)`` on cpu; the begin, contact-pass and end stages
        (the middle one :data:`_ROUND` launches of the contact stage) on vulkan."""
        from ..kernels.common.lanes import gpu_lanes
        from ..kernels.planar.step import planar_step_kernel

        arch = backend.config()["arch"]
        names = ("model_i", "model_f", "pose", "pose0", "vel", "cmd", "wv", "pair_i", "pair_f", "order_tmp",
                 "blk", "blk_next", "obj_s", "env_i")
        arrays = {k: getattr(self, k) for k in names}
        if arch == "cpu":
            return (backend.compiled_launch(planar_step_kernel(self.pose.shape[0] == 1), ("n_steps",), arrays),)
        lanes = gpu_lanes(self.pose.shape[0])
        stages = (planar_step_kernel(False, lanes, "begin"), [planar_step_kernel(False, lanes, "contact")] * _ROUND,
                  planar_step_kernel(False, lanes, "end"))
        return tuple(backend.compiled_launch(kernel, ("n_steps",), arrays) for kernel in stages)

    def refresh(self) -> None:
        """Recompute every world-frame piece from the poses (after poses were set from outside)."""
        from ..kernels.planar.motion import refresh_all

        refresh_all(self.model_i, self.model_f, self.pose, self.wv)

    def snapshot(self) -> dict:
        return {name: getattr(self, name).to_numpy() for name in self.STATE}

    def load(self, arrays: dict) -> None:
        for name in self.STATE:
            getattr(self, name).from_numpy(np.ascontiguousarray(arrays[name]))
        self.refresh()

    def contacts(self) -> ContactArrays:
        """The recorded pairs of the last step, in sweep order, compacted to the front of each env's rows."""
        pi, pf = self.pair_i.to_numpy(), self.pair_f.to_numpy().astype(np.float64)
        n = self.env_i.to_numpy()[:, L.EI_PAIRS]
        ne, cap = pi.shape[:2]
        rank = np.arange(cap)[None, :]
        order = np.where(rank < n[:, None], pi[:, :, L.PI_ORDER], 0)
        pi = np.take_along_axis(pi, order[:, :, None], axis=1)
        pf = np.take_along_axis(pf, order[:, :, None], axis=1)
        valid = (rank < n[:, None]) & ((pi[:, :, L.PI_FLAGS] & L.F_RECORDED) != 0)
        pack = np.argsort(~valid, axis=1, kind="stable")
        pi = np.take_along_axis(pi, pack[:, :, None], axis=1)
        pf = np.take_along_axis(pf, pack[:, :, None], axis=1)
        count = valid.sum(axis=1)
        width = int(count.max()) if ne else 0
        pi, pf = pi[:, :width], pf[:, :width]
        keep = np.arange(width)[None, :] < count[:, None]
        a = np.where(keep, pi[:, :, L.PI_A], -1).astype(np.int64)
        b = np.where(keep, pi[:, :, L.PI_B], -1).astype(np.int64)
        pf = np.where(keep[:, :, None], pf, 0.0)
        return ContactArrays(count.astype(np.int64), a, b, pf[:, :, [L.PF_NX, L.PF_NY]], pf[:, :, L.PF_DEPTH],
                             pf[:, :, [L.PF_PX, L.PF_PY]], pf[:, :, L.PF_FORCE])
