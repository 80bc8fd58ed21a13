"""A world's articulated systems and pins: :class:`Articulation`, the part that holds them and gives their handles
what they read once built (the arrays, the evaluated frames and dynamics), and :class:`ArticulatedBuilder`, the
World's calls that add them."""
from __future__ import annotations

import numpy as np

from ..validation import check_env, require_unbuilt


class Articulation:
    """The articulated systems and pins of a world, and what their handles need from it.

    Args:
        n_envs: the world's env count.
        dt: its time step [s] (a pin's force is its impulse over the step).
        clock: its :class:`~taichi_terra.clock.Clock` (reports of the last step are refused before the first).
        build: builds the world (queries of the evaluated state build it first).
        sync: brings the settings to the device (:meth:`World._sync_settings`; the bias forces read gravity).
    """

    def __init__(self, n_envs: int, dt: float, clock, build, sync):
        self.n_envs, self.dt, self.clock = int(n_envs), dt, clock
        self._build, self._sync = build, sync
        self.systems: list = []
        self.pins: list = []
        self.model = self.state = self.control = self.scratch = None  # the built world's (attach)

    @property
    def built(self) -> bool:
        return self.model is not None

    def check_env(self, env) -> None:
        check_env(env, self.n_envs)

    def require_unbuilt(self, what: str) -> None:
        require_unbuilt(self.built, what)

    def build(self) -> None:
        self._build()

    def model_rows(self, materials, n_free: int) -> tuple[list, list]:
        """The systems' collision bodies and tracks as the model takes them (``model.py``): one entry per link
        shape, ``(system, link, shape, position, rotation, material index, track or -1)``, and one per track,
        ``(system, link, drive dofs, gains, width)``. Their shapes are world bodies from ``n_free`` on, in this
        order; each system learns its first one."""
        from ..materials import DEFAULT_MATERIAL

        default = materials.index(DEFAULT_MATERIAL)
        link_bodies, tracks = [], []
        for t, system in enumerate(self.systems):
            system._body0 = n_free + len(link_bodies)
            mats = [default if tr.material is None else materials.add(tr.material) for tr in system.model.tracks]
            for (link, shape, pos, rot), k in zip(system.collision_bodies(), system.collision_body_tracks()):
                link_bodies.append((t, link, shape, pos, rot, default if k < 0 else mats[k],
                                    -1 if k < 0 else len(tracks) + k))
            tracks += [(t, link, dofs, gains, width) for link, dofs, gains, width in system.track_rows()]
        return link_bodies, tracks

    def initial(self) -> tuple:
        """The systems' coordinates and velocities as set before the build, (n_envs, total nq) and (n_envs,
        total nv); two ``None`` without systems."""
        if not self.systems:
            return None, None
        return (np.concatenate([s._init["q"] for s in self.systems], axis=1),
                np.concatenate([s._init["u"] for s in self.systems], axis=1))

    def attach(self, model, state, control, scratch) -> None:
        """Take the built world's arrays, write the drives and held joints set before the build into them, and
        tell each system its rows."""
        self.model, self.state, self.control, self.scratch = model, state, control, scratch
        model.body_links = {b: (t, self.systems[t].get_body_names()[k])
                            for b, (t, k) in model.body_link_index.items()}
        if not self.systems:
            return
        control.set_block("control", "drive", None, np.concatenate([s._init["drive"] for s in self.systems], axis=1))
        held = state.block("state_f", "joint_state", "held")[..., 0]
        for t, system in enumerate(self.systems):
            j0 = model.tree_joint0[t] + 1  # (a tree's first joint row is its base)
            held[:, j0:j0 + system._init["held"].shape[1]] = system._init["held"]
            system._rows = (model.tree_q0[t], model.tree_u0[t], model.tree_joint0[t])
            system._init = None
        state.set_block("state_f", "joint_state", "held", held[..., None])

    def evaluate_trees(self) -> None:
        """Fill the trees' frames, mass matrices and bias forces (scratch) for the current state."""
        from ..kernels.dynamics.tree import evaluate_trees

        self._sync()  # (builds; the bias forces read gravity, as a step would)
        m, s = self.model, self.state
        evaluate_trees(m.model_i, m.model_f, s.q, s.u, self.control.control, self.scratch.scratch_f)

    def update_tree_frames(self) -> None:
        """Bring the trees' link frames (scratch) to the current state (kinematics only)."""
        from ..kernels.dynamics.tree import tree_frames

        m, s = self.model, self.state
        tree_frames(m.model_i, m.model_f, s.q, s.u, self.scratch.scratch_f)


class ArticulatedBuilder:
    """The articulated-system calls of :class:`taichi_terra.World`; what they add is held by its
    :class:`Articulation`."""

    _PARTS = ("_articulation",)

    @property
    def articulated_systems(self) -> list:
        """The articulated systems, in the order they were added."""
        return list(self._articulation.systems)

    def get_articulated_states(self) -> list[dict]:
        """Every articulated system's state in every env, in :attr:`articulated_systems` order, one dict each
        with the env axis first:

        - ``q`` (n_envs, nq) and ``u`` (n_envs, nv): its generalized coordinates and velocities
          (``get_generalized_coordinate``, ``get_generalized_velocity``);
        - ``base_position`` [m] (n_envs, 3) and ``base_orientation`` (w, x, y, z) (n_envs, 4): the root link's
          frame in the world;
        - ``base_linear_velocity`` [m/s] and ``base_angular_velocity`` [rad/s] (n_envs, 3): the root link
          origin's velocity and the root's angular velocity, both in the root link's frame (what a policy
          observes of its base; zero for a fixed base).
        """
        from ..validation import quats_to_matrices, rotation_to_quat

        out = []
        for system in self._articulation.systems:
            q, u = system.get_generalized_coordinate(), system.get_generalized_velocity()
            ne = q.shape[0]
            if system.floating:
                pos, quat = q[:, 0:3].copy(), q[:, 3:7].copy()
                rot = quats_to_matrices(quat)
                v = np.einsum("eji,ej->ei", rot, u[:, 0:3])
                w = np.einsum("eji,ej->ei", rot, u[:, 3:6])
            else:
                root = system.get_body_names()[0]
                pos = system.get_frame_position(root)
                rot = system.get_frame_orientation(root)
                quat = np.stack([rotation_to_quat("orientation", r) for r in rot])
                v, w = np.zeros((ne, 3)), np.zeros((ne, 3))
            out.append({"q": q, "u": u, "base_position": pos, "base_orientation": quat,
                        "base_linear_velocity": v, "base_angular_velocity": w})
        return out

    @property
    def pins(self) -> list:
        """The pins, in the order they were added."""
        return list(self._articulation.pins)

    def add_articulated_system(self, urdf, *, base: str = "floating", position=(0.0, 0.0, 0.0),
                               orientation=(1.0, 0.0, 0.0, 0.0), package_dirs=(), self_collision: bool = False):
        """An articulated system from a URDF (a file path or the XML text); see :mod:`taichi_terra.bodies.urdf`
        for what is read and :class:`~taichi_terra.bodies.articulated.ArticulatedSystem` for its coordinates.

        Args:
            urdf: path of a ``.urdf`` file, or the XML itself.
            base: ``"floating"`` (the root link moves freely) or ``"fixed"`` (welded to the world).
            position: the root link's origin [m] (a floating base's initial position).
            orientation: the root link's orientation, quaternion (w, x, y, z) or 3x3 rotation matrix.
            package_dirs: directories that ``package://`` mesh paths resolve in.
            self_collision: whether the system's links collide with each other (never a link with its parent
                link); off by default.

        A URDF that breaks a rule raises :class:`~taichi_terra.bodies.urdf.URDFError` naming the file, the
        element and the rule, and adds nothing. Every collision shape of a link collides with the ground, the
        height maps, the soil beds and the other bodies, and with the links of its own system only when
        ``self_collision`` is on.
        """
        from .articulated import ArticulatedSystem, base_pose
        from .urdf import _directories, parse_urdf

        self._articulation.require_unbuilt("adding an articulated system")
        if base not in ("floating", "fixed"):
            raise ValueError(f"base must be 'floating' or 'fixed', got {base!r}")
        if not isinstance(self_collision, (bool, np.bool_)):
            raise ValueError(f"self_collision must be True or False, got {self_collision!r}")
        pos, quat = base_pose(position, orientation)
        package_dirs = _directories("package_dirs", package_dirs)
        model = parse_urdf(urdf, package_dirs=package_dirs, base=base)
        part = self._articulation
        system = ArticulatedSystem(part, len(part.systems), model, pos, quat)
        system.urdf_source, system.package_dirs = urdf, package_dirs
        system.self_collision = bool(self_collision)
        part.systems.append(system)
        return system

    def add_pin(self, system_a, link_a: str, point_a, system_b=None, link_b: str | None = None,
                point_b=(0.0, 0.0, 0.0)):
        """Hold ``point_a`` [m, in ``link_a``'s frame] of ``system_a`` to ``point_b``: a point [m] in ``link_b``'s
        frame of ``system_b`` (the same system closes a loop), or a fixed world point [m] when ``system_b`` is
        None. A bilateral row keeps the points' velocities together with a position bias, and the position
        update's gap is closed every step; the points are not moved to meet at the start, so place them
        together. Returns the :class:`~taichi_terra.bodies.pin.Pin` (its force and gap). Before the first
        step only."""
        from .pin import Pin

        self._articulation.require_unbuilt("adding a pin")
        part = self._articulation
        pin = Pin.checked(part, len(part.pins), system_a, link_a, point_a, system_b, link_b, point_b)
        part.pins.append(pin)
        return pin
