"""Handles to rigid bodies: per-env pose, velocity and external load setters and getters."""
from __future__ import annotations

import numpy as np

#: (state array, first column, width) of each per-body quantity in the generalized vectors
_SLOTS = {
    "position": ("q", 0, 3),
    "orientation": ("q", 3, 4),
    "linear_velocity": ("u", 0, 3),
    "angular_velocity": ("u", 3, 3),
    "external_force": ("f", 0, 3),
    "external_torque": ("t", 0, 3),
}


class Body:
    """A rigid body (one link on a floating joint). Create it with ``world.add_sphere`` and friends.

    Getters return numpy arrays: with ``env=None`` stacked over envs (env axis first), with ``env=i``
    for that env only. Setters take one value for the given env (or for every env when ``env=None``),
    or, with ``env=None``, one value per env stacked along a first axis of length ``n_envs``.
    """

    def __init__(self, part, index: int, shape, material: str):
        self._part = part  # the world's FreeBodies (body_state.py), which holds the state
        self.index = index
        self.shape = shape
        self.material = material

    @property
    def mass(self) -> float:
        """[kg]"""
        return self.shape.mass

    @property
    def inertia(self) -> np.ndarray:
        """Inertia about the centre of mass in the body frame [kg m^2], shape (3, 3)."""
        return self.shape.inertia.copy()

    def __repr__(self) -> str:
        return f"Body(index={self.index}, shape={self.shape.type.name.lower()}, mass={self.mass})"

    # ---- pose
    def set_position(self, position, env: int | None = None) -> None:
        """Centre-of-mass position [m], shape (3,) or (n_envs, 3)."""
        self._part.set(self.index, "position", position, env)

    def get_position(self, env: int | None = None) -> np.ndarray:
        """Centre-of-mass position [m], shape (3,) or (n_envs, 3)."""
        return self._part.get(self.index, "position", env)

    def set_orientation(self, orientation, env: int | None = None) -> None:
        """Orientation as a quaternion (w, x, y, z) (normalised here) or a 3x3 rotation matrix; shape
        (4,), (3, 3), or stacked per env (n_envs, 4) / (n_envs, 3, 3)."""
        self._part.set(self.index, "orientation", orientation, env)

    def get_orientation(self, env: int | None = None) -> np.ndarray:
        """Unit quaternion (w, x, y, z), shape (4,) or (n_envs, 4)."""
        return self._part.get(self.index, "orientation", env)

    def get_rotation_matrix(self, env: int | None = None) -> np.ndarray:
        """Body-to-world rotation, shape (3, 3) or (n_envs, 3, 3)."""
        from ..validation import quat_to_matrix

        q = self.get_orientation(env)
        return quat_to_matrix(q) if q.ndim == 1 else np.stack([quat_to_matrix(x) for x in q])

    # ---- velocity
    def set_linear_velocity(self, velocity, env: int | None = None) -> None:
        """Centre-of-mass velocity [m/s], shape (3,) or (n_envs, 3)."""
        self._part.set(self.index, "linear_velocity", velocity, env)

    def get_linear_velocity(self, env: int | None = None) -> np.ndarray:
        """Centre-of-mass velocity [m/s], shape (3,) or (n_envs, 3)."""
        return self._part.get(self.index, "linear_velocity", env)

    def set_angular_velocity(self, velocity, env: int | None = None) -> None:
        """Angular velocity in the world frame [rad/s], shape (3,) or (n_envs, 3)."""
        self._part.set(self.index, "angular_velocity", velocity, env)

    def get_angular_velocity(self, env: int | None = None) -> np.ndarray:
        """Angular velocity in the world frame [rad/s], shape (3,) or (n_envs, 3)."""
        return self._part.get(self.index, "angular_velocity", env)

    # ---- applied loads (persist until changed)
    def set_external_force(self, force, env: int | None = None) -> None:
        """World-frame force at the centre of mass [N], applied every step until changed."""
        self._part.set(self.index, "external_force", force, env)

    def get_external_force(self, env: int | None = None) -> np.ndarray:
        """World-frame force at the centre of mass [N], shape (3,) or (n_envs, 3)."""
        return self._part.get(self.index, "external_force", env)

    def set_external_torque(self, torque, env: int | None = None) -> None:
        """World-frame torque [N m], applied every step until changed."""
        self._part.set(self.index, "external_torque", torque, env)

    def get_external_torque(self, env: int | None = None) -> np.ndarray:
        """World-frame torque [N m], shape (3,) or (n_envs, 3)."""
        return self._part.get(self.index, "external_torque", env)
