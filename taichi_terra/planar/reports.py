"""What a planar contact step reports: each contact once per pair, and each contact as seen by each object."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Contact:
    """One contact between objects ``a`` and ``b`` in the last step.

    Attributes:
        a, b: the two objects (:class:`~taichi_terra.planar.PlanarObject`).
        normal: unit normal (2,) pointing from ``b`` toward ``a``.
        depth: overlap that was pushed apart [m] (slop included); zero or negative for a resting contact, which
            moved nothing.
        point: world-frame contact point (2,) [m], midway through the overlap.
        force: contact force along ``normal`` [N]: the accumulated position multiplier over dt^2 (the XPBD
            estimate), capped at the traction of a driven object pushing into the contact; 0 for a resting one.
    """

    a: Any
    b: Any
    normal: np.ndarray
    depth: float
    point: np.ndarray
    force: float

    def report(self, obj) -> ContactReport:
        """This contact as seen from ``obj``, one of its two objects."""
        if obj is not self.a and obj is not self.b:
            raise ValueError(f"obj must be one of the contact's objects ({self.a.name}, {self.b.name}), got {obj}")
        mine = obj is self.a
        return ContactReport(self.b if mine else self.a, self.point.copy(), self.normal if mine else -self.normal,
                             self.depth, self.force)


@dataclass
class ContactReport:
    """One contact of an object, from its own side: what a contact sensor on it reads.

    Attributes:
        other: the object it touched.
        point: world-frame contact point (2,) [m].
        normal: unit normal (2,) pointing from ``other`` toward the object: the direction it is pushed in.
        depth: overlap pushed apart [m]; zero or negative for a resting contact.
        force: contact force along ``normal`` [N].
    """

    other: Any
    point: np.ndarray
    normal: np.ndarray
    depth: float
    force: float


@dataclass
class ContactArrays:
    """The last step's contacts of every env, one row per touching pair, padded to a common width.

    ``count`` (n_envs,) contacts per env; the first ``count[e]`` rows of env ``e`` are valid, in the order the
    sweeps handle the pairs (outward from immovable objects). ``a``, ``b`` (n_envs, n) object indices (-1:
    padding); ``normal`` (n_envs, n, 2) from b toward a; ``depth`` [m]; ``point`` (n_envs, n, 2) [m];
    ``force`` [N].
    """

    count: np.ndarray
    a: np.ndarray
    b: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    point: np.ndarray
    force: np.ndarray


@dataclass
class ObjectContactArrays:
    """Every contact of the last step as seen by each of its two objects, for every env.

    Rows are grouped by ``owner`` (ascending object index), in contact order within a group, each contact
    appearing once for each of its two objects; the first ``count[e]`` rows of env ``e`` are valid (``owner`` -1 pads). ``other`` is the object
    touched, ``normal`` points from ``other`` toward ``owner``, ``point`` [m], ``depth`` [m], ``force`` [N].
    ``per_object`` (n_envs, n_objects) counts the reports of each object.
    """

    count: np.ndarray
    per_object: np.ndarray
    owner: np.ndarray
    other: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    point: np.ndarray
    force: np.ndarray


def object_view(c: ContactArrays, n_objects: int) -> ObjectContactArrays:
    """Each contact of ``c`` twice, once from each object's side, grouped by object."""
    ne, width = c.a.shape

    def both(x, y):  # contact i's rows from a's and from b's side, next to each other
        return np.stack([x, y], axis=2).reshape((ne, 2 * width) + x.shape[2:])

    owner, other, normal = both(c.a, c.b), both(c.b, c.a), both(c.normal, -c.normal)
    point, depth, force = both(c.point, c.point), both(c.depth, c.depth), both(c.force, c.force)
    key = np.where(owner >= 0, owner, n_objects)  # padding last
    order = np.argsort(key, axis=1, kind="stable")
    take = lambda x: np.take_along_axis(x, order.reshape(order.shape + (1,) * (x.ndim - 2)), axis=1)
    per_object = np.stack([np.bincount(row[row >= 0], minlength=n_objects) for row in owner]) if ne else \
        np.zeros((0, n_objects), np.int64)
    return ObjectContactArrays(2 * c.count, per_object, take(owner), take(other), take(normal), take(depth),
                               take(point), take(force))
