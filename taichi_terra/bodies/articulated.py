"""Articulated systems: a tree of links joined by revolute and prismatic joints, on a floating or fixed base.

Create one with ``world.add_articulated_system(urdf)``. Its generalized coordinates are, for a floating base,
the root link's origin [m] and unit quaternion (w, x, y, z), then one coordinate per joint [rad or m]; its
generalized velocities are the root origin's linear velocity [m/s] and the angular velocity [rad/s], both in
the world frame (as a free body's), then one per joint [rad/s or m/s]. A fixed base has no root coordinates.
Continuous joints are revolute joints without limits and take one coordinate (the angle), unlike
Pinocchio's (cos, sin) pair.

Getters and setters follow the bodies' convention: ``env=None`` means every env (getters return arrays with
the env axis first; setters take one value for all envs or one per env stacked on a first axis of length
``n_envs``), ``env=i`` that env only. Every argument is checked before anything is written.
"""
from __future__ import annotations

import numpy as np

from ..kernels.common.layout import JOINT_FIXED_ROOT, JOINT_FLOATING, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..validation import as_float_array, quat_to_matrix, rotation_to_quat
from .urdf import ArticulatedModel, URDFError

_JOINT_TYPES = {"revolute": JOINT_REVOLUTE, "continuous": JOINT_REVOLUTE, "prismatic": JOINT_PRISMATIC}


def _trim_capsule(pos, axis, r, height, centre, radius):
    """A capsule (radius ``r``, segment of length ``height`` along the unit ``axis`` about ``pos``) without the
    part of its segment at either end whose caps lie inside the sphere (``centre``, ``radius``): the points
    within ``radius - r`` of the centre. Returns the new segment's centre and length; the capsule as it was
    when neither end is inside, or when the whole segment is (its cut would leave nothing)."""
    reach = radius - r
    if reach <= 0.0:
        return pos, height
    a = pos - 0.5 * height * axis  # segment a + s (b - a), s in [0, 1]; inside where |a + s d - c| <= reach
    d = height * axis
    f = a - centre
    qa, qb, qc = d @ d, 2.0 * (f @ d), f @ f - reach * reach
    disc = qb * qb - 4.0 * qa * qc
    if disc <= 0.0:
        return pos, height
    s0, s1 = (-qb - np.sqrt(disc)) / (2.0 * qa), (-qb + np.sqrt(disc)) / (2.0 * qa)
    lo, hi = 0.0, 1.0
    if s0 <= 0.0 < s1 < 1.0:  # the end at a is inside
        lo = s1
    elif 0.0 < s0 < 1.0 <= s1:  # the end at b
        hi = s0
    else:
        return pos, height
    return a + 0.5 * (lo + hi) * d, (hi - lo) * height


class ArticulatedSystem:
    """A tree of links in a world; see the module docstring for its coordinates."""

    def __init__(self, part, index: int, model: ArticulatedModel, position, orientation):
        self._part = part  # the world's Articulation (bodies/articulated_world.py)
        self.index = index
        self.model = model
        for j in model.joints:
            if j.type not in _JOINT_TYPES:
                raise URDFError(f"{model.source}: joint '{j.name}': a {j.type} joint between links is not "
                                "supported (only the base may float)")
        self.floating = model.base == "floating"
        n_joints = len(model.joints)
        self._nq = (7 if self.floating else 0) + n_joints
        self._nv = (6 if self.floating else 0) + n_joints
        self._base_position = np.asarray(position, np.float64)
        self._base_rotation = quat_to_matrix(orientation)
        ne = part.n_envs
        q = np.zeros((ne, self._nq))
        if self.floating:
            q[:, 0:3] = self._base_position
            q[:, 3:7] = orientation
        self._init = {"q": q, "u": np.zeros((ne, self._nv)), "drive": np.zeros((ne, self._nv, 5)),
                      "held": np.zeros((ne, n_joints))}
        self._link_names = [link.name for link in model.links]
        self._joint_names = [j.name for j in model.joints]
        self._rows = None  # (first q row, first u row, first joint row) once built
        self._body0 = None  # world index of its first collision body once built
        #: whether every step computes the wrenches the joints transmit (``set_compute_inverse_dynamics``)
        self.computes_inverse_dynamics = False
        #: whether its links collide with each other (``add_articulated_system(self_collision=...)``)
        self.self_collision = False

    # ------------------------------------------------------------------ description
    def __repr__(self) -> str:
        return (f"ArticulatedSystem(index={self.index}, name={self.model.name!r}, links={len(self._link_names)}, "
                f"dof={self._nv}, base={self.model.base!r})")

    def get_dof(self) -> int:
        """Number of generalized velocities."""
        return self._nv

    def get_generalized_coordinate_dim(self) -> int:
        """Number of generalized coordinates (a floating base has 7: position and quaternion)."""
        return self._nq

    def get_body_names(self) -> list[str]:
        """Link names, root first, parents before children (links merged by fixed joints are not listed)."""
        return list(self._link_names)

    def get_joint_names(self) -> list[str]:
        """Names of the movable joints, in the order of their coordinates."""
        return list(self._joint_names)

    def get_generalized_velocity_index(self, joint: str) -> int:
        """Index of ``joint``'s velocity in the generalized velocity vector."""
        if joint not in self._joint_names:
            raise ValueError(f"joint must be one of {self._joint_names}, got {joint!r}")
        return (6 if self.floating else 0) + self._joint_names.index(joint)

    @property
    def total_mass(self) -> float:
        """[kg]"""
        return self.model.total_mass

    # ------------------------------------------------------------------ what the model arrays hold
    def joint_rows(self) -> list[dict]:
        """One row per link for the model's joint blocks (root first): type, parent row within the tree,
        coordinate and velocity rows within the system, first dof, placement, axis, inertia, limits."""
        rows = []
        m = self.model
        root = m.links[0]
        rows.append({"type": JOINT_FLOATING if self.floating else JOINT_FIXED_ROOT, "parent": -1, "q": 0, "u": 0,
                     "dof": 0, "origin": self._base_position, "origin_rotation": self._base_rotation,
                     "axis": np.zeros(3), "link": root, "joint": None})
        q = 7 if self.floating else 0
        u = 6 if self.floating else 0
        for k, j in enumerate(m.joints):
            rows.append({"type": _JOINT_TYPES[j.type], "parent": m.link_index(j.parent), "q": q + k, "u": u + k,
                         "dof": u + k, "origin": j.position, "origin_rotation": j.rotation, "axis": j.axis,
                         "link": m.links[k + 1], "joint": j})
        return rows

    def collision_bodies(self) -> list[tuple[int, object, np.ndarray, np.ndarray]]:
        """Every collision shape of every link as ``(link index, Shape, position, rotation)``: the shape (its
        frame centred as :mod:`~taichi_terra.bodies.shapes` builds it) and the placement of that frame in the
        link frame. The shape's mass only sizes its inertia, which nothing reads: the tree carries the
        link's mass.

        A capsule whose end lies inside a sphere of the same link (a shank ending in a foot) is shortened
        there to where its cap stops being inside the sphere (:func:`_trim_capsule`): the union of the link's
        shapes is the same, and the cut-off part could only add contacts the sphere's already cover (with a
        5 mm larger foot they sat one contact margin away as rows that never carried load)."""
        from . import shapes as S

        out = []
        for k, link in enumerate(self.model.links):
            mass = link.mass if link.mass > 0.0 else 1.0
            spheres = [(np.asarray(c.position, np.float64), float(c.params[0])) for c in link.collisions
                       if c.kind == "sphere"]
            for c in link.collisions:
                pos, rot = np.asarray(c.position, np.float64), np.asarray(c.rotation, np.float64)
                p = np.asarray(c.params, np.float64)
                if c.kind == "box":
                    shape = S.box(p[0], p[1], p[2], mass)
                elif c.kind == "sphere":
                    shape = S.sphere(p[0], mass)
                elif c.kind == "cylinder":
                    shape = S.cylinder(p[0], p[1], mass)
                elif c.kind == "capsule":
                    height = float(p[1])
                    for centre, radius in spheres:
                        pos, height = _trim_capsule(pos, rot[:, 2], float(p[0]), height, centre, radius)
                    shape = S.capsule(p[0], height, mass)
                else:  # a convex mesh: the shape frame sits at the hull's centre of mass
                    import trimesh

                    hull = trimesh.Trimesh(vertices=c.vertices).convex_hull
                    shape = S.mesh(hull, mass)
                    pos = pos + rot @ np.asarray(hull.center_mass, np.float64)
                out.append((k, shape, pos, rot))
        for track in self.model.tracks:  # the belts, track by track (a track's bodies are consecutive)
            k = self.model.link_index(track.link)
            for c in track.shapes:
                p = np.asarray(c.params, np.float64)
                shape = S.box(p[0], p[1], p[2], 1.0) if c.kind == "box" else S.cylinder(p[0], p[1], 1.0)
                out.append((k, shape, np.asarray(c.position, np.float64), np.asarray(c.rotation, np.float64)))
        return out

    def collision_body_tracks(self) -> list[int]:
        """For each of :meth:`collision_bodies`, the index of the track (in :meth:`get_tracks`) whose belt it
        is part of, or -1."""
        out = [-1] * sum(len(link.collisions) for link in self.model.links)
        for i, track in enumerate(self.model.tracks):
            out += [i] * len(track.shapes)
        return out

    # ------------------------------------------------------------------ tracks
    def get_tracks(self) -> list[dict]:
        """The tracks (``<track>`` elements, ``spec/tracks.md``), in the file's order, each a dict:
        ``name``, ``link`` (the link carrying the belt, after fixed joints are merged) and ``link_index`` (its
        index in :meth:`get_body_names`), ``axis`` (unit, link frame, shape (3,)), ``width`` [m], ``thickness`` [m], ``material`` (name or None), ``drives`` (a list
        of ``{"joint", "gain", "velocity_index"}``: the joint, its gain [m/rad or m/m] and the index of its
        velocity in the generalized velocities) and ``collision_bodies`` (the world body indices of the
        belt's shapes, once the world is built; before that, their indices in :meth:`collision_bodies`)."""
        tracks = []
        bodies = self.collision_body_tracks()
        first = self._body0 if self._body0 is not None else 0
        for i, t in enumerate(self.model.tracks):
            tracks.append({
                "name": t.name, "link": t.link, "link_index": self._link_names.index(t.link),
                "axis": np.array(t.axis), "width": t.width,
                "thickness": t.thickness, "material": t.material,
                "drives": [{"joint": d.joint, "gain": d.gain,
                            "velocity_index": self.get_generalized_velocity_index(d.joint)} for d in t.drives],
                "collision_bodies": [first + b for b, k in enumerate(bodies) if k == i]})
        return tracks

    def get_track_index(self, name: str) -> int:
        """The index of the track called ``name`` in :meth:`get_tracks`, or -1."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        for i, t in enumerate(self.model.tracks):
            if t.name == name:
                return i
        return -1

    def get_track_speed(self, index: int, env: int | None = None):
        """The belt speed ``s = g^T u`` [m/s] of track ``index``: a float (``env=i``) or shape (n_envs,)."""
        n = len(self.model.tracks)
        if type(index) is not int and not isinstance(index, np.integer):
            raise TypeError(f"index must be an int, got {type(index).__name__}")
        if not 0 <= int(index) < n:
            raise ValueError(f"index must be in [0, {n}) (the system has {n} tracks), got {index}")
        u = self.get_generalized_velocity(env)
        s = sum(d.gain * u[..., self.get_generalized_velocity_index(d.joint)] for d in self.model.tracks[index].drives)
        return float(s) if env is not None else np.asarray(s, np.float64)

    def track_rows(self) -> list[tuple]:
        """One entry per track for the model: (link index, drive dofs within the system, gains, width)."""
        return [(self.model.link_index(t.link), [self.get_generalized_velocity_index(d.joint) for d in t.drives],
                 [d.gain for d in t.drives], t.width) for t in self.model.tracks]

    # ------------------------------------------------------------------ state
    def _check_env(self, env):
        self._part.check_env(env)

    def _get(self, what: str, env):
        self._check_env(env)
        width = self._nq if what == "q" else self._nv
        w = self._part
        if not w.built:
            data = self._init[what]
        else:
            first = self._rows[0] if what == "q" else self._rows[1]
            data = w.state.block(what, "tree", "coordinate" if what == "q" else "velocity")[:, first:first + width,
                                                                                               0]
        out = np.array(data, np.float64)
        return out if env is None else out[int(env)]

    def _parse(self, name: str, value, width: int, env):
        arr = as_float_array(name, value)
        shapes = [(width,)] + ([(self._part.n_envs, width)] if env is None else [])
        if arr.shape not in shapes:
            raise ValueError(f"{name} must have shape {' or '.join(map(str, shapes))}, got {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite")
        return arr

    def _set(self, what: str, arr, env):
        width = self._nq if what == "q" else self._nv
        rows = slice(None) if env is None else int(env)
        w = self._part
        if not w.built:
            self._init[what][rows] = arr
            return
        first = self._rows[0] if what == "q" else self._rows[1]
        col = "coordinate" if what == "q" else "velocity"
        block = w.state.block(what, "tree", col)[..., 0]
        block[rows, first:first + width] = arr
        w.state.set_block(what, "tree", col, block[..., None])

    def get_generalized_coordinate(self, env: int | None = None) -> np.ndarray:
        """Generalized coordinates, shape (nq,) or (n_envs, nq)."""
        return self._get("q", env)

    def set_generalized_coordinate(self, q, env: int | None = None) -> None:
        """Generalized coordinates, shape (nq,) or (n_envs, nq); a floating base's quaternion is normalised."""
        self._check_env(env)
        arr = self._parse("q", q, self._nq, env).copy()
        if self.floating:
            norms = np.linalg.norm(arr[..., 3:7], axis=-1, keepdims=True)
            if (norms < 1e-12).any():
                raise ValueError("q: the base quaternion q[3:7] must have a nonzero norm")
            arr[..., 3:7] /= norms
        self._set("q", arr, env)

    def get_generalized_velocity(self, env: int | None = None) -> np.ndarray:
        """Generalized velocities, shape (nv,) or (n_envs, nv)."""
        return self._get("u", env)

    def set_generalized_velocity(self, u, env: int | None = None) -> None:
        """Generalized velocities, shape (nv,) or (n_envs, nv)."""
        self._check_env(env)
        self._set("u", self._parse("u", u, self._nv, env), env)

    # ------------------------------------------------------------------ drives
    _DRIVE_COLUMNS = {"force": 0, "kp": 1, "kd": 2, "position_target": 3, "velocity_target": 4}

    def _set_drive(self, values: dict, env) -> None:
        rows = slice(None) if env is None else int(env)
        w = self._part
        if not w.built:
            for col, arr in values.items():
                self._init["drive"][rows, :, self._DRIVE_COLUMNS[col]] = arr
            return
        first = self._rows[1]
        for col, arr in values.items():
            data = w.control.block("control", "drive", col)[..., 0]
            data[rows, first:first + self._nv] = arr
            w.control.set_block("control", "drive", col, data[..., None])

    def _get_drive(self, col: str, env) -> np.ndarray:
        self._check_env(env)
        w = self._part
        if not w.built:
            data = self._init["drive"][..., self._DRIVE_COLUMNS[col]]
        else:
            first = self._rows[1]
            data = w.control.block("control", "drive", col)[:, first:first + self._nv, 0]
        out = np.array(data, np.float64)
        return out if env is None else out[int(env)]

    def get_held_drives(self, env: int | None = None) -> np.ndarray:
        """Per joint (:meth:`get_joint_names` order), shape (n_joints,) or (n_envs, n_joints): +1 or -1 where
        the joint's drive asked for more than its effort limit at the end of the last step, and so is held at
        the limit with that sign in the next one; 0 elsewhere (and for joints without an effort limit)."""
        self._check_env(env)
        w = self._part
        if not w.built:
            data = self._init["held"]
        else:
            j0 = self._rows[2] + 1  # (the root's row is the base, not a joint)
            data = w.state.block("state_f", "joint_state", "held")[:, j0:j0 + len(self._joint_names), 0]
        out = np.array(data, np.float64)
        return out if env is None else out[int(env)]

    def set_held_drives(self, held, env: int | None = None) -> None:
        """Set which drives the next step holds at their effort limit (see :meth:`get_held_drives`): shape
        (n_joints,) or (n_envs, n_joints), each entry -1, 0 or +1; a nonzero entry needs a joint with an
        effort limit. Restores that part of a step's state (the world XML carries it); the step after
        records it again from what the drives ask for."""
        self._check_env(env)
        arr = self._parse("held", held, len(self._joint_names), env)
        if not np.isin(arr, (-1.0, 0.0, 1.0)).all():
            raise ValueError("held: every entry must be -1, 0 or +1")
        limited = np.array([j.effort is not None for j in self.model.joints], bool)
        if np.any(arr[..., ~limited] != 0.0):
            names = [n for n, ok in zip(self._joint_names, limited) if not ok]
            raise ValueError(f"held: joints without an effort limit ({', '.join(names)}) cannot be held at one")
        rows = slice(None) if env is None else int(env)
        w = self._part
        if not w.built:
            self._init["held"][rows] = arr
            return
        j0 = self._rows[2] + 1
        data = w.state.block("state_f", "joint_state", "held")[..., 0]
        data[rows, j0:j0 + len(self._joint_names)] = arr
        w.state.set_block("state_f", "joint_state", "held", data[..., None])

    def _check_base_free(self, name: str, arr) -> None:
        if self.floating and np.any(np.asarray(arr)[..., :6] != 0.0):
            raise ValueError(f"{name}: a floating base has no drive; its six entries must be 0")

    def set_generalized_force(self, tau, env: int | None = None) -> None:
        """Feed-forward generalized force [N m or N; on a floating base: world force at the root origin [N],
        then world torque [N m]], shape (nv,) or (n_envs, nv), applied every step until changed."""
        self._check_env(env)
        self._set_drive({"force": self._parse("tau", tau, self._nv, env)}, env)

    def get_generalized_force(self, env: int | None = None) -> np.ndarray:
        """The generalized force the drives (feed-forward, PD and joint damping) applied in the last step,
        shape (nv,) or (n_envs, nv); before the first step, the feed-forward force."""
        self._check_env(env)
        w = self._part
        if not w.built or w.clock.steps == 0:
            return self._get_drive("force", env)
        first = self._rows[1]
        out = np.array(w.scratch.block("scratch_f", "tree_dof", "applied")[:, first:first + self._nv, 0],
                       np.float64)
        return out if env is None else out[int(env)]

    def set_pd_gains(self, kp, kd, env: int | None = None) -> None:
        """Proportional [N m/rad or N/m] and derivative [N m s/rad or N s/m] gains per dof, each shape (nv,)
        or (n_envs, nv), >= 0; a floating base's six entries must be 0. The drive is implicit in the
        velocity update (stable for stiff gains)."""
        self._check_env(env)
        kp_a = self._parse("kp", kp, self._nv, env)
        kd_a = self._parse("kd", kd, self._nv, env)
        for name, arr in (("kp", kp_a), ("kd", kd_a)):
            if (arr < 0).any():
                raise ValueError(f"{name} must be >= 0")
            self._check_base_free(name, arr)
        self._set_drive({"kp": kp_a, "kd": kd_a}, env)

    def set_pd_target(self, position_target, velocity_target, env: int | None = None) -> None:
        """PD targets: ``position_target`` in generalized coordinates, shape (nq,) or (n_envs, nq) (a floating
        base's seven entries are ignored), ``velocity_target`` per dof, shape (nv,) or (n_envs, nv)."""
        self._check_env(env)
        pos = self._parse("position_target", position_target, self._nq, env)
        vel = self._parse("velocity_target", velocity_target, self._nv, env)
        self._check_base_free("velocity_target", vel)
        base = 7 if self.floating else 0
        per_dof = np.zeros(pos.shape[:-1] + (self._nv,))
        per_dof[..., (6 if self.floating else 0):] = pos[..., base:]
        self._set_drive({"position_target": per_dof, "velocity_target": vel}, env)

    def get_pd_gains(self, env: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(kp, kd) per dof."""
        return self._get_drive("kp", env), self._get_drive("kd", env)

    def get_pd_target(self, env: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The PD targets as :meth:`set_pd_target` takes them: the position target in generalized coordinates,
        shape (nq,) or (n_envs, nq) (a floating base's seven entries 0: they are not targets), and the
        velocity target per dof, shape (nv,) or (n_envs, nv)."""
        per_dof, vel = self._get_drive("position_target", env), self._get_drive("velocity_target", env)
        base = 7 if self.floating else 0
        pos = np.zeros(per_dof.shape[:-1] + (self._nq,))
        pos[..., base:] = per_dof[..., (6 if self.floating else 0):]
        return pos, vel

    # ------------------------------------------------------------------ dynamics and frames (evaluated now)
    def _evaluated(self, block: str, col: str):
        w = self._part
        w.evaluate_trees()
        return w.scratch.block("scratch_f", block, col)

    def get_mass_matrix(self, env: int = 0) -> np.ndarray:
        """The mass matrix M(q) at the current state (rotor inertias on the joints' diagonal), (nv, nv)."""
        self._check_env(env)
        w = self._part
        w.evaluate_trees()
        m0 = w.model.tree_matrix0[self.index]
        data = w.scratch.block("scratch_f", "tree_mass", "mass")[int(env), m0:m0 + self._nv ** 2, 0]
        lower = np.tril(np.array(data, np.float64).reshape(self._nv, self._nv))  # (the kernel fills this half)
        return lower + np.tril(lower, -1).T

    def get_nonlinearities(self, env: int = 0) -> np.ndarray:
        """The bias forces h(q, u) = C(q, u) u + g(q) at the current state [N m or N], (nv,): with the mass
        matrix, ``M du/dt + h = tau`` without contacts."""
        self._check_env(env)
        first = self._rows_built()[1]
        data = self._evaluated("tree_dof", "bias")[int(env), first:first + self._nv, 0]
        return np.array(data, np.float64)

    def _rows_built(self):
        self._part.build()
        return self._rows

    def _link_row(self, link: str) -> int:
        if link not in self._link_names:
            raise ValueError(f"link must be one of {self._link_names}, got {link!r}")
        return self._rows_built()[2] + self._link_names.index(link)

    def get_frame_position(self, link: str, env: int | None = None) -> np.ndarray:
        """World position of ``link``'s frame origin [m], shape (3,) or (n_envs, 3)."""
        self._check_env(env)
        r = self._link_row(link)
        out = np.array(self._evaluated("frame", "position")[:, r], np.float64)
        return out if env is None else out[int(env)]

    def get_frame_orientation(self, link: str, env: int | None = None) -> np.ndarray:
        """``link``'s frame-to-world rotation, shape (3, 3) or (n_envs, 3, 3)."""
        self._check_env(env)
        r = self._link_row(link)
        out = np.array(self._evaluated("frame", "rotation")[:, r], np.float64).reshape(-1, 3, 3)
        return out if env is None else out[int(env)]

    def get_frame_velocity(self, link: str, env: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """World linear velocity of ``link``'s frame origin [m/s] and its angular velocity [rad/s], each shape
        (3,) or (n_envs, 3)."""
        self._check_env(env)
        r = self._link_row(link)
        root = self._rows_built()[2]
        vel = np.array(self._evaluated("frame", "velocity")[:, r], np.float64)
        pos = np.array(self._part.scratch.block("scratch_f", "frame", "position")[:, [r, root]], np.float64)
        w, v_ref = vel[:, :3], vel[:, 3:]
        v = v_ref + np.cross(w, pos[:, 0] - pos[:, 1])  # from the reference point (the root origin) to the link
        return (v, w) if env is None else (v[int(env)], w[int(env)])


    # ------------------------------------------------------------------ inverse dynamics (of the last step)
    def set_compute_inverse_dynamics(self, on: bool = True) -> None:
        """Compute, in every step from now on, the wrench each joint transmits from its parent link to its
        child's subtree (for :meth:`get_torque_at_joint_in_world_frame` and
        :meth:`get_force_at_joint_in_world_frame`). It costs a Newton-Euler pass over the links and a pass over
        the step's contact rows per step; off by default. Applies to every env."""
        if not isinstance(on, (bool, np.bool_)):
            raise ValueError(f"on must be True or False, got {on!r}")
        self.computes_inverse_dynamics = bool(on)
        w = self._part
        if w.built:
            w.model.set_inverse_dynamics(self.index, bool(on))

    def _transmitted(self, env) -> np.ndarray:
        self._check_env(env)
        if not self.computes_inverse_dynamics:
            raise RuntimeError("inverse dynamics is off for this system: call set_compute_inverse_dynamics(True) "
                               "and step")
        w = self._part
        if not w.built or w.clock.steps == 0:
            raise RuntimeError("no step has been taken yet: the transmitted wrenches are those of the last step")
        j0 = self._rows[2] + 1  # (the root's row is the floating or fixed base, not a joint)
        data = w.scratch.block("scratch_f", "link_dyn", "transmitted")[:, j0:j0 + len(self._joint_names)]
        out = np.array(data, np.float64)
        return out if env is None else out[int(env)]

    def get_torque_at_joint_in_world_frame(self, env: int | None = None) -> np.ndarray:
        """The moment [N m, world axes] each joint transmitted from its parent link to its child link's subtree
        in the last step, about the joint's anchor (its origin at the start of that step), constraint
        forces included: shape (n_joints, 3) or (n_envs, n_joints, 3), joints in :meth:`get_joint_names`
        order. Its component along a revolute joint's axis is what the drive, the damping and the joint's
        limit and friction applied, less what the rotor inertia (``rotor_inertia``) took to accelerate; the
        rest is carried by the joint's structure. Needs
        :meth:`set_compute_inverse_dynamics` before the step."""
        return self._transmitted(env)[..., :3]

    def get_force_at_joint_in_world_frame(self, env: int | None = None) -> np.ndarray:
        """The force [N, world axes] each joint transmitted from its parent link to its child link's subtree
        in the last step, shape (n_joints, 3) or (n_envs, n_joints, 3); see
        :meth:`get_torque_at_joint_in_world_frame`."""
        return self._transmitted(env)[..., 3:]


def base_pose(position, orientation) -> tuple[np.ndarray, np.ndarray]:
    """Check and convert an ``add_articulated_system`` placement: position (3,) [m], unit quaternion."""
    pos = as_float_array("position", position)
    if pos.shape != (3,) or not np.isfinite(pos).all():
        raise ValueError(f"position must be 3 finite numbers, got shape {pos.shape}")
    quat = rotation_to_quat("orientation", orientation)
    return pos, quat
