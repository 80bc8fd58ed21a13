"""Pins: a point on a link held to a point on another link, or to a fixed point in the world.

A pin closes a kinematic loop (a four-bar linkage, a suspension link) or hangs a system from the world.
Create one with ``world.add_pin(system_a, link_a, point_a, system_b, link_b, point_b)`` before the first
step. The solver holds the two points together with a three-dimensional bilateral row in every step and
closes whatever gap the position update leaves (``kernels/solver/pins.py``).
"""
from __future__ import annotations

import numpy as np

from ..validation import as_float_array


def _point(name: str, value) -> np.ndarray:
    arr = as_float_array(name, value)
    if arr.shape != (3,) or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be 3 finite numbers [m], got {np.asarray(value).tolist()!r}")
    return arr.astype(np.float64)


class Pin:
    """Two points held together: ``point_a`` [m] in ``link_a``'s frame and ``point_b`` [m] in ``link_b``'s
    frame, or a world point when ``system_b`` is None."""

    def __init__(self, part, index: int, system_a, link_a: str, point_a, system_b, link_b, point_b):
        self._part = part  # the world's Articulation (bodies/articulated_world.py)
        self.index = index
        self.system_a, self.link_a, self.point_a = system_a, link_a, point_a
        self.system_b, self.link_b, self.point_b = system_b, link_b, point_b

    @classmethod
    def checked(cls, part, index: int, system_a, link_a, point_a, system_b, link_b, point_b) -> "Pin":
        """A pin from ``World.add_pin``'s arguments, every one checked (nothing is kept on error)."""
        from .articulated import ArticulatedSystem

        for name, system in (("system_a", system_a), ("system_b", system_b)):
            if system is None and name == "system_b":
                continue
            if not isinstance(system, ArticulatedSystem) or system._part is not part:
                raise ValueError(f"{name} must be an articulated system of this world, got {system!r}")
        if link_a not in system_a.get_body_names():
            raise ValueError(f"link_a must be one of {system_a.get_body_names()}, got {link_a!r}")
        pa = _point("point_a", point_a)
        pb = _point("point_b", point_b)
        if system_b is None:
            if link_b is not None:
                raise ValueError(f"link_b must be None when system_b is None (point_b is a world point), got "
                                 f"{link_b!r}")
        else:
            if link_b not in system_b.get_body_names():
                raise ValueError(f"link_b must be one of {system_b.get_body_names()}, got {link_b!r}")
            if system_b is system_a and link_b == link_a:
                raise ValueError(f"a pin joins two different links; link_a and link_b are both {link_a!r}")
        return cls(part, index, system_a, link_a, pa, system_b, link_b, pb)

    def __repr__(self) -> str:
        b = "world" if self.system_b is None else f"{self.system_b.model.name}/{self.link_b}"
        return f"Pin(index={self.index}, a={self.system_a.model.name}/{self.link_a}, b={b})"

    def rows(self) -> tuple[int, int, int, int]:
        """(system a, link a, system b or -1, link b or -1) as indices, for the model arrays."""
        a = (self.system_a.index, self.system_a.get_body_names().index(self.link_a))
        if self.system_b is None:
            return a + (-1, -1)
        return a + (self.system_b.index, self.system_b.get_body_names().index(self.link_b))

    def _ends(self, env):
        """World positions [m] of the two points at the current state, each (n_envs, 3) or (3,)."""
        def end(system, link, point):
            pos = system.get_frame_position(link, env)
            rot = system.get_frame_orientation(link, env)
            return pos + rot @ point

        pa = end(self.system_a, self.link_a, self.point_a)
        if self.system_b is None:
            pb = np.broadcast_to(self.point_b, pa.shape).copy()
        else:
            pb = end(self.system_b, self.link_b, self.point_b)
        return pa, pb

    def get_gap(self, env: int | None = None) -> np.ndarray:
        """Distance [m] between the two points at the current state, scalar or (n_envs,)."""
        pa, pb = self._ends(env)
        return np.linalg.norm(pb - pa, axis=-1)

    def get_impulse(self, env: int | None = None) -> np.ndarray:
        """The impulse [N s, world] the pin applied on side b's point in the last step (side a took its
        opposite), shape (3,) or (n_envs, 3); zero before the first step."""
        w = self._part
        w.check_env(env)
        if not w.built:
            out = np.zeros((w.n_envs, 3))
        else:
            out = np.array(w.state.block("state_f", "pin", "impulse")[:, self.index], np.float64)
        return out if env is None else out[int(env)]

    def get_force(self, env: int | None = None) -> np.ndarray:
        """The mean force [N, world] on side b's point over the last step: impulse / dt."""
        return self.get_impulse(env) / self._part.dt
