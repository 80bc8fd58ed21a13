"""An orbit camera: a target point, a distance from it and two angles, driven by mouse drags."""
from __future__ import annotations

import math

import numpy as np

from ..validation import as_vector, check_finite, check_positive

_MAX_PITCH = math.radians(89.0)


class OrbitCamera:
    """Looks at ``target`` from ``distance`` away, along the direction given by ``yaw`` (about world z,
    from +x) and ``pitch`` (elevation above the xy plane), with world z up.

    Args:
        target: point looked at [m], shape (3,).
        distance: from the eye to the target [m], > 0.
        yaw, pitch: [rad]; pitch is kept within +-89 degrees.
        fov: vertical field of view [deg], in (1, 170).
    """

    def __init__(self, target=(0.0, 0.0, 0.0), distance: float = 4.0, yaw: float = -math.pi / 2,
                 pitch: float = math.radians(30.0), fov: float = 45.0):
        self.target = as_vector("target", target, 3)
        self.distance = check_positive("distance", distance)
        self.yaw = check_finite("yaw", yaw)
        self.pitch = float(np.clip(check_finite("pitch", pitch), -_MAX_PITCH, _MAX_PITCH))
        fov = check_finite("fov", fov)
        if not 1.0 < fov < 170.0:
            raise ValueError(f"fov must be in (1, 170) degrees, got {fov}")
        self.fov = fov

    @classmethod
    def looking_at(cls, eye, target, fov: float = 45.0) -> OrbitCamera:
        """The camera whose eye is at ``eye`` [m] looking at ``target`` [m] (they must differ)."""
        eye = as_vector("eye", eye, 3)
        target = as_vector("target", target, 3)
        d = eye - target
        dist = float(np.linalg.norm(d))
        if dist <= 0.0:
            raise ValueError("eye and target must be different points")
        return cls(target, dist, math.atan2(d[1], d[0]), math.asin(d[2] / dist), fov)

    @property
    def eye(self) -> np.ndarray:
        """Eye position [m], shape (3,)."""
        cp = math.cos(self.pitch)
        return self.target + self.distance * np.array([cp * math.cos(self.yaw), cp * math.sin(self.yaw),
                                                       math.sin(self.pitch)])

    def basis(self):
        """Unit vectors (right, up, forward) of the view, forward pointing from the eye to the target."""
        fwd = self.target - self.eye
        fwd /= np.linalg.norm(fwd)
        right = np.cross(fwd, [0.0, 0.0, 1.0])
        right /= np.linalg.norm(right)
        return right, np.cross(right, fwd), fwd

    def orbit(self, d_yaw: float, d_pitch: float) -> None:
        """Turn about the target [rad]."""
        self.yaw += d_yaw
        self.pitch = float(np.clip(self.pitch + d_pitch, -_MAX_PITCH, _MAX_PITCH))

    def pan(self, dx: float, dy: float) -> None:
        """Move the target (and eye) across the view by ``dx``, ``dy`` times the distance."""
        right, up, _fwd = self.basis()
        self.target = self.target + self.distance * (dx * right + dy * up)

    def zoom(self, factor: float) -> None:
        """Scale the distance by ``factor`` (> 0; below 1 moves closer)."""
        self.distance = max(self.distance * check_positive("factor", factor), 1e-3)

    def apply(self, camera) -> None:
        """Write this view into a ``taichi.ui.Camera``."""
        camera.position(*map(float, self.eye))
        camera.lookat(*map(float, self.target))
        camera.up(0.0, 0.0, 1.0)
        camera.fov(float(self.fov))

    def _view_projection(self, width: int, height: int) -> np.ndarray:
        """GGUI's view times projection matrix (row vectors: ``[x, y, z, 1] @ m`` gives clip coordinates)."""
        import taichi as ti

        cam = ti.ui.Camera()
        self.apply(cam)
        return np.asarray(cam.get_view_matrix(), float) @ np.asarray(cam.get_projection_matrix(width / height), float)

    def project(self, points, width: int, height: int) -> np.ndarray:
        """Pixel coordinates (column, row from the top-left) where GGUI draws world ``points`` [m], shape
        (k, 2); points behind the eye give NaN. Uses the same view and projection matrices as the renderer.
        Pixel ``(i, j)`` covers columns ``[i, i + 1)`` and rows ``[j, j + 1)``: its centre is ``(i + 0.5, j + 0.5)``."""
        m = self._view_projection(width, height)
        pts = np.atleast_2d(np.asarray(points, float))
        h = np.concatenate([pts, np.ones((len(pts), 1))], axis=1) @ m
        with np.errstate(divide="ignore", invalid="ignore"):
            ndc = h[:, :2] / h[:, 3:4]
        ndc[h[:, 3] <= 0.0] = np.nan
        return np.stack([(ndc[:, 0] + 1.0) * 0.5 * width, (1.0 - ndc[:, 1]) * 0.5 * height], axis=1)

    def rays(self, pixels, width: int, height: int):
        """The view rays through image positions: the inverse of :meth:`project`.

        ``pixels``: (column, row) positions from the top-left, shape (k, 2) (a pixel's centre is at
        ``(i + 0.5, j + 0.5)``). Returns ``(origin, directions)``: the eye [m], shape (3,), and unit world
        directions, shape (k, 3). Cast them with ``World.ray_test_batch`` to find what a pixel shows.
        """
        px = np.atleast_2d(np.asarray(pixels, float))
        if px.ndim != 2 or px.shape[1] != 2 or not np.all(np.isfinite(px)):
            raise ValueError(f"pixels must be finite (column, row) pairs of shape (k, 2), got shape {px.shape}")
        inv = np.linalg.inv(self._view_projection(width, height))
        ndc = np.stack([2.0 * px[:, 0] / width - 1.0, 1.0 - 2.0 * px[:, 1] / height], axis=1)
        h = np.concatenate([ndc, np.full((len(px), 1), 0.5), np.ones((len(px), 1))], axis=1) @ inv
        eye = self.eye
        d = h[:, :3] / h[:, 3:4] - eye
        return eye, d / np.linalg.norm(d, axis=1, keepdims=True)
