"""Argument checks shared by the builder and setter calls; each error names the argument and the rule."""
from __future__ import annotations

import math
import numbers

import numpy as np


def check_positive(name: str, value) -> float:
    """A finite number > 0, returned as float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def check_finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def real_limits() -> tuple[str, float, float]:
    """(name, largest, smallest normal) of the floating-point type the kernels run in: the chosen precision,
    or f64 before :func:`taichi_terra.init`. A mass or inertia must lie between the two to reach the kernels
    as a finite, invertible number."""
    from .backend import config, is_initialized

    name = config()["precision"] if is_initialized() else "f64"
    info = np.finfo(np.float32 if name == "f32" else np.float64)
    return name, float(info.max), float(info.tiny)


def require_unbuilt(built: bool, what: str) -> None:
    """Raise when a builder call (``what``, e.g. "adding a body") comes after the world's build."""
    if built:
        raise RuntimeError(f"{what}: the world is already built (after the first step the topology is fixed)")


def check_env(env, n_envs: int) -> int | None:
    """``None`` (every env) or an env index in [0, n_envs), returned as int."""
    if env is None:
        return None
    if isinstance(env, bool) or not isinstance(env, (int, np.integer)):
        raise TypeError(f"env must be None or an int, got {type(env).__name__}")
    if not 0 <= int(env) < n_envs:
        raise ValueError(f"env must be in [0, {n_envs}), got {env}")
    return int(env)


def as_float_array(name: str, value, what: str = "numbers") -> np.ndarray:
    """``value`` as a float64 array; booleans, strings and objects are rejected with a TypeError."""
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of {what}, got dtype {raw.dtype}")
    return raw.astype(np.float64)


def as_vector(name: str, value, length: int) -> np.ndarray:
    """A finite float vector of the given length."""
    try:
        arr = as_float_array(name, value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of {length} numbers") from exc
    if arr.shape != (length,):
        raise ValueError(f"{name} must have shape ({length},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def rotation_to_quat(name: str, value) -> np.ndarray:
    """A unit quaternion (w, x, y, z) from a quaternion (normalised) or a proper 3x3 rotation matrix."""
    try:
        arr = as_float_array(name, value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a quaternion (w, x, y, z) or a 3x3 rotation matrix") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    if arr.shape == (4,):
        if np.max(np.abs(arr)) > 1e150:  # (scaled first, where the norm of the components would overflow)
            arr = arr / np.max(np.abs(arr))
        n = np.linalg.norm(arr)
        if n < 1e-12:
            raise ValueError(f"{name}: a quaternion must have a non-zero norm")
        return arr / n
    if arr.shape == (3, 3):
        if np.max(np.abs(arr @ arr.T - np.eye(3))) > 1e-6 or np.linalg.det(arr) < 0.0:
            raise ValueError(f"{name}: a 3x3 matrix must be a rotation (orthonormal, det +1)")
        return matrix_to_quat(arr)
    raise ValueError(f"{name} must have shape (4,) (quaternion w, x, y, z) or (3, 3), got {arr.shape}")


def matrix_to_quat(r: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    t = np.trace(r)
    if t > 0.0:
        s = math.sqrt(t + 1.0) * 2.0
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2]) * 2.0
        q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
    elif r[1, 1] > r[2, 2]:
        s = math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2]) * 2.0
        q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
    else:
        s = math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1]) * 2.0
        q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def quats_to_matrices(q) -> np.ndarray:
    """The 3x3 rotation matrices of unit quaternions (w, x, y, z), shape (..., 4) to (..., 3, 3), in the same
    arithmetic as :func:`quat_to_matrix`."""
    q = np.asarray(q, dtype=np.float64)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),
    ], axis=-2)


def quat_to_matrix(q) -> np.ndarray:
    """3x3 rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = (float(c) for c in q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])
