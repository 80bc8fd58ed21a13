"""What a world reports about its contacts after a step: the contact set of an env, dropped contacts and
pairs, solver sweeps and the shape-shape pairs the broadphase found. :class:`Contacts` reads them from the state
arrays it is given at the world's build; :class:`ContactQueries` is the world's public face of it."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .kernels.common import layout as L
from .kernels.common.arrays import CONTACT, SHAPE_PAIR
from .validation import check_env


@dataclass
class ContactSet:
    """Contacts of one env after the last step. Normals point from side a to side b; impulses act on
    side b (the opposite on side a) [N s]; depth > 0 is overlap, < 0 a speculative gap [m]."""

    positions: np.ndarray  # (k, 3) [m]
    normals: np.ndarray  # (k, 3)
    depths: np.ndarray  # (k,) [m]
    impulses: np.ndarray  # (k, 3) [N s], world frame
    body_a: np.ndarray  # (k,) body index, -1 for static geometry
    body_b: np.ndarray  # (k,) body index
    static: list = field(default_factory=list)  # (k,) "ground", "heightmap:<i>", "soil:<i>" or "" (body-body)
    #: (k,) for each side, the articulated link carrying the body as (system index, link name), None for a free
    #: body or static geometry (bodies on links are numbered after the free bodies)
    link_a: list = field(default_factory=list)
    link_b: list = field(default_factory=list)
    #: (k,) True where the contact coincided with a deeper one of the same belt on the same static geometry
    #: and was solved as that one: it reports a zero impulse (``spec/tracks.md``, "Contacts that coincide")
    merged: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def __len__(self) -> int:
        return len(self.depths)


class Contacts:
    """What the last step left about contacts, read from the state arrays: the contact set of an env, dropped
    contacts and pairs, the solver's sweeps, the broadphase's shape-shape pairs and a soil bed's load.

    Args:
        model: the world's :class:`~taichi_terra.model.Model` (its static pairs and the links of its bodies).
        state: the world's :class:`~taichi_terra.state.State`.
        dt: the time step [s] (a contact's impulse over it is its force).
    """

    def __init__(self, model, state, dt: float):
        self._model, self._state, self._dt = model, state, float(dt)

    def _pair_slots(self, env: int) -> list[tuple[int, int, int, int, str]]:
        """(first slot, count, body a, body b, label) of every pair of ``env`` with contacts in the last
        step: the static pairs, then the shape-shape pairs of the broadphase table."""
        m, s = self._model, self._state
        counts = s.block("state_i", "pair_count", "count")[env, :, 0]
        out = []
        for p, (kind, b, other, _cap) in enumerate(m.pairs):
            if counts[p]:
                label = {L.PAIR_GROUND: "ground", L.PAIR_HEIGHTMAP: f"heightmap:{other}",
                         L.PAIR_SOIL: f"soil:{other}"}[kind]
                out.append((m.pair_slot(p), int(counts[p]), -1, b, label))
        for body, other, base, count in self._shape_pair_table(env):
            if count:
                out.append((base, count, other, body, ""))
        return out

    def _shape_pair_table(self, env: int) -> np.ndarray:
        n = int(self._state.block("state_i", "env", "shape_pairs")[env, 0, 0])
        return self._state.block("state_i", "shape_pair")[env, :n]

    def contact_set(self, env: int) -> ContactSet:
        """The contacts of env ``env`` found and solved in the last step."""
        contact = self._state.block("state_f", "contact")[env]
        arrays = {name: contact[:, CONTACT.columns[name][0]:sum(CONTACT.columns[name])]
                  for name in ("position", "normal", "depth", "impulse", "merged")}
        idx, a_list, b_list, labels = [], [], [], []
        for base, count, a, b, label in self._pair_slots(env):
            idx.extend(range(base, base + count))
            a_list += [a] * count
            b_list += [b] * count
            labels += [label] * count  # (soil contacts: depth is the gap to the rut floor)
        idx = np.array(idx, dtype=np.int64)
        links = self._model.body_links
        return ContactSet(arrays["position"][idx].reshape(-1, 3), arrays["normal"][idx].reshape(-1, 3),
                          arrays["depth"][idx, 0], arrays["impulse"][idx].reshape(-1, 3),
                          np.array(a_list, dtype=np.int64), np.array(b_list, dtype=np.int64), labels,
                          [links.get(a) for a in a_list], [links.get(b) for b in b_list],
                          arrays["merged"][idx, 0] != 0.0)

    def link_loads(self, system_index: int, links: list) -> tuple[np.ndarray, np.ndarray]:
        """For each link of articulated system ``system_index`` (``links``: its link names, in order), every env:
        the summed force of its contacts in the last step [N] (impulse over dt, world frame), shape
        (n_envs, n_links, 3), and the deepest total soil sinkage [m] (elastic and plastic) of the bed samples its
        loaded soil points stand on, shape (n_envs, n_links) (0 where none)."""
        m, s = self._model, self._state
        row_of = {name: i for i, name in enumerate(links)}
        body_row = {b: row_of[link] for b, (si, link) in m.body_links.items() if si == system_index}
        contact = s.block("state_f", "contact")
        imp = contact[..., CONTACT.columns["impulse"][0]:sum(CONTACT.columns["impulse"])]
        area = contact[..., CONTACT.columns["area"][0]]
        counts = s.block("state_i", "pair_count", "count")[:, :, 0]
        ne = imp.shape[0]
        force = np.zeros((ne, len(links), 3))
        sinkage = np.zeros((ne, len(links)))
        soil = feature = None
        for p, (kind, b, other, cap) in enumerate(m.pairs):
            if b not in body_row:
                continue
            r, s0 = body_row[b], m.pair_slot(p)
            found = np.arange(cap)[None, :] < counts[:, p][:, None]  # (ne, cap)
            force[:, r] += (imp[:, s0:s0 + cap] * found[..., None]).sum(axis=1)
            if kind == L.PAIR_SOIL:
                if soil is None:
                    soil = s.block("state_f", "soil", "sinkage")[..., 0]
                    feature = s.block("state_i", "feature", "now")[..., 0]
                n0 = CONTACT.columns["normal"][0]
                pressed = np.einsum("ekc,ekc->ek", imp[:, s0:s0 + cap], contact[:, s0:s0 + cap, n0:n0 + 3]) > 0.0
                loaded = found & (area[:, s0:s0 + cap] > 0.0) & pressed
                sample = np.where(loaded, feature[:, s0:s0 + cap] - L.FEAT_SOIL, 0) + m.soil_offsets[other]
                depth = np.where(loaded, np.take_along_axis(soil, sample, axis=1), 0.0)
                sinkage[:, r] = np.maximum(sinkage[:, r], depth.max(axis=1))
        table = s.block("state_i", "shape_pair")  # (ne, max pairs, (body, other, slot0, count))
        if table.shape[1] and body_row:
            n_dyn = s.block("state_i", "env", "shape_pairs")[:, 0, 0]
            listed = np.arange(table.shape[1])[None, :] < n_dyn[:, None]
            # each entry's impulse: a difference of running sums over the slots (all envs at once)
            running = np.concatenate([np.zeros((ne, 1, 3)), np.cumsum(imp, axis=1)], axis=1)
            first = np.where(listed, table[..., SHAPE_PAIR.slot0], 0).astype(np.int64)
            last = first + np.where(listed, table[..., SHAPE_PAIR.count], 0).astype(np.int64)
            total = (np.take_along_axis(running, last[..., None], axis=1)
                     - np.take_along_axis(running, first[..., None], axis=1))
            row_of_body = np.full(m.n_bodies, -1, np.int64)
            for b, r in body_row.items():
                row_of_body[b] = r
            envs = np.broadcast_to(np.arange(ne)[:, None], listed.shape)
            for column, sign in ((SHAPE_PAIR.body, 1.0), (SHAPE_PAIR.other, -1.0)):  # (+ on body, - on other)
                rows = np.where(listed, row_of_body[table[..., column]], -1)
                hit = rows >= 0
                np.add.at(force, (envs[hit], rows[hit]), sign * total[hit])
        return force / self._dt, sinkage

    def shape_pairs(self, env: int) -> np.ndarray:
        """The broadphase's shape-shape pairs of env ``env`` in the last step, (k, 2) body indices."""
        table = self._shape_pair_table(env)
        return np.ascontiguousarray(table[:, [SHAPE_PAIR.body, SHAPE_PAIR.other]].astype(np.int64))

    def contact_overflow(self) -> np.ndarray:
        """Contacts dropped in the last step, per env."""
        counts = self._state.block("state_i", "pair_count", "dropped")[:, :, 0]
        n_dyn = self._state.block("state_i", "env", "shape_pairs")[:, 0, 0]
        n_static = self._model.n_pairs
        return np.array([counts[e, :n_static + n_dyn[e]].sum() for e in range(counts.shape[0])], dtype=np.int64)

    def pair_overflow(self) -> np.ndarray:
        """Shape-shape pairs dropped in the last step, per env."""
        return self._state.block("state_i", "env", "pairs_dropped")[:, 0, 0].astype(np.int64)

    def sweeps(self) -> np.ndarray:
        """Gauss-Seidel sweeps used in the last step, per env."""
        return self._state.block("state_i", "env", "sweeps")[:, 0, 0]

    def soil_step_stats(self, bed, env: int) -> dict:
        """The last step's soil contacts on ``bed`` in env ``env``: their count, and the area [m^2] and normal
        force [N] of the loaded ones."""
        imps = self._state.block("state_f", "contact", "impulse")[env]
        nrms = self._state.block("state_f", "contact", "normal")[env]
        areas = self._state.block("state_f", "contact", "area")[env, :, 0]
        n_contacts, area, force = 0, 0.0, 0.0
        for base, count, _a, _b, label in self._pair_slots(env):
            if label != f"soil:{bed.index}":
                continue
            for s in range(base, base + count):
                n_contacts += 1
                fn = float(np.dot(imps[s], nrms[s])) / self._dt
                if fn > 0.0:
                    area += areas[s]
                    force += fn
        return {"contacts": n_contacts, "contact_area": area, "normal_force": force}


class ContactQueries:
    """The contact queries of :class:`taichi_terra.World` (they read the state the last step left, through the
    world's :class:`Contacts`, made at its build)."""

    _PARTS = ("_contacts",)

    def get_contacts(self, env: int = 0) -> "ContactSet":
        """The contacts of ``env`` found and solved in the last step."""
        check_env(env, self.n_envs)
        if env is None:
            raise TypeError("get_contacts needs one env index")
        self.build()
        return self._contacts.contact_set(int(env))

    def get_link_contact_forces(self, system, env: int | None = None) -> np.ndarray:
        """Each link's summed contact force of the last step [N], world frame (its contacts' impulses over the
        step, with the ground, maps, soil and other bodies), for every link of ``system`` in
        ``system.get_body_names()`` order: shape (n_envs, n_links, 3), or (n_links, 3) for one env."""
        return self._link_loads(system, env)[0]

    def get_link_sinkage(self, system, env: int | None = None) -> np.ndarray:
        """Each link's soil sinkage after the last step [m]: the deepest total sinkage (elastic and plastic) of
        the bed samples under its loaded soil points (0 where it loads none), for every link of ``system`` in
        ``system.get_body_names()`` order: shape (n_envs, n_links), or (n_links,) for one env."""
        return self._link_loads(system, env)[1]

    def _link_loads(self, system, env):
        check_env(env, self.n_envs)
        if system not in self.articulated_systems:
            raise ValueError("system: not one of this world's articulated systems")
        self.build()
        force, sinkage = self._contacts.link_loads(self.articulated_systems.index(system), system.get_body_names())
        return (force, sinkage) if env is None else (force[int(env)], sinkage[int(env)])

    def get_shape_pairs(self, env: int = 0) -> np.ndarray:
        """The shape-shape pairs the broadphase kept in the last step for ``env``: body index pairs
        (lower, higher), shape (k, 2), sorted; pairs whose bounding spheres, grown by the contact margin
        and one step of motion, overlap."""
        check_env(env, self.n_envs)
        if env is None:
            raise TypeError("get_shape_pairs needs one env index")
        self.build()
        return self._contacts.shape_pairs(int(env))

    def get_contact_overflow(self, env: int | None = None) -> np.ndarray | int:
        """Contacts dropped in the last step because a pair's slots, or the pool shared by shape-shape
        pairs (``max_shape_contacts``), were full; per env (or one env)."""
        check_env(env, self.n_envs)
        self.build()
        total = self._contacts.contact_overflow()
        return total if env is None else int(total[int(env)])

    def get_pair_overflow(self, env: int | None = None) -> np.ndarray | int:
        """Shape-shape pairs dropped in the last step because the pair table (``max_shape_pairs``) was
        full; per env (or one env). The pairs of the lowest body indices are kept (of the one body whose
        pairs cross the limit, those the sweep met first)."""
        check_env(env, self.n_envs)
        self.build()
        dropped = self._contacts.pair_overflow()
        return dropped if env is None else int(dropped[int(env)])

    def get_solver_sweeps(self, env: int | None = None) -> np.ndarray | int:
        """Gauss-Seidel sweeps used in the last step, per env (or one env)."""
        check_env(env, self.n_envs)
        self.build()
        used = self._contacts.sweeps()
        return used if env is None else int(used[int(env)])
