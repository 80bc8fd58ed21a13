"""What :class:`taichi_terra.World` does with articulated systems and pins: adding them, and bringing their link
frames to the current state for the queries that read them."""
from __future__ import annotations

import numpy as np


class ArticulatedBuilder:
    """Mixed into :class:`taichi_terra.World`."""

    @property
    def articulated_systems(self) -> list:
        """The articulated systems, in the order they were added."""
        return list(self._systems)

    @property
    def pins(self) -> list:
        """The pins, in the order they were added."""
        return list(self._pins)

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

        self._require_builder("adding an articulated system")
        if base not in ("floating", "fixed"):
            raise ValueError(f"base must be 'floating' or 'fixed', got {base!r}")
        if not isinstance(self_collision, (bool, np.bool_)):
            raise ValueError(f"self_collision must be True or False, got {self_collision!r}")
        pos, quat = base_pose(position, orientation)
        package_dirs = _directories("package_dirs", package_dirs)
        model = parse_urdf(urdf, package_dirs=package_dirs, base=base)
        system = ArticulatedSystem(self, len(self._systems), model, pos, quat)
        system.urdf_source, system.package_dirs = urdf, package_dirs
        system.self_collision = bool(self_collision)
        self._systems.append(system)
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

        self._require_builder("adding a pin")
        pin = Pin.checked(self, len(self._pins), system_a, link_a, point_a, system_b, link_b, point_b)
        self._pins.append(pin)
        return pin

    def _evaluate_trees(self) -> None:
        """Fill the trees' frames, mass matrices and bias forces (scratch) for the current state."""
        from ..kernels.dynamics.tree import evaluate_trees

        self._sync_settings()  # (the bias forces read gravity; the settings are those a step would use)
        m, s = self._model, self._state
        evaluate_trees(m.model_i, m.model_f, s.q, s.u, self._control.control, self._scratch.scratch_f)

    # ------------------------------------------------------------------ checkpoints
    def _update_tree_frames(self) -> None:
        """Bring the trees' link frames (scratch) to the current state (kinematics only)."""
        from ..kernels.dynamics.tree import tree_frames

        m, s = self._model, self._state
        tree_frames(m.model_i, m.model_f, s.q, s.u, self._scratch.scratch_f)
