"""Per-body state of a world: the body handles' setters and getters, and ``get_state`` / ``set_state``
for every body of every env at once.

Before the build the values live in the builder's per-body arrays; after it, in the State and Control
arrays (``state.py``), which on cpu are read and written in place: :class:`BodyStates`, made at the build,
reads and writes them there. :class:`FreeBodies`, the world's part for its free bodies, checks the values
and sends them to one or the other; :class:`BodyStateAccess` is the world's public face over it.
"""
from __future__ import annotations

import numpy as np

from .bodies.body import _SLOTS
from .validation import as_float_array, check_env, rotation_to_quat


class BodyStates:
    """The free bodies' state (``q``, ``u``) and applied loads (``control``) in a built world.

    Args:
        state, control: the world's arrays (``state.py``).
        n_envs: the world's env count.
        n_bodies: its free bodies (they come first in ``q`` and ``u``: 7 coordinates and 6 velocities each).
    """

    def __init__(self, state, control, n_envs: int, n_bodies: int):
        self._state, self._control, self._n_envs, self._nb = state, control, int(n_envs), int(n_bodies)

    def write(self, index: int, quantity: str, vals: np.ndarray, rows) -> None:
        """Set ``quantity`` (``bodies/body.py``'s ``_SLOTS``) of body ``index`` in the envs ``rows`` to
        ``vals`` (checked)."""
        arena, block, column = _BODY_COLUMNS[quantity]
        group = self._control if arena == "control" else self._state
        data = group.read(arena)
        view = group._layouts[arena].view(data, block, column)[:, index]
        view[rows] = vals
        if group._views[arena] is None:
            group.write(arena, data)

    def read(self, index: int, quantity: str) -> np.ndarray:
        """``quantity`` of body ``index`` in every env: a view of the arrays, or of their copy on a GPU."""
        arena, block, column = _BODY_COLUMNS[quantity]
        group = self._control if arena == "control" else self._state
        return group._layouts[arena].view(group.read(arena), block, column)[:, index]

    def coordinates(self) -> tuple[np.ndarray, np.ndarray]:
        """One contiguous float64 copy of every body's coordinates, (n_envs, n_bodies, 7), and of its
        velocities, (n_envs, n_bodies, 6)."""
        nb, ne = self._nb, self._n_envs
        q = np.array(self._state.read("q")[:, :7 * nb], dtype=np.float64).reshape(ne, nb, 7)
        u = np.array(self._state.read("u")[:, :6 * nb], dtype=np.float64).reshape(ne, nb, 6)
        return q, u

    def write_all(self, parsed: dict, rows, cols: dict) -> None:
        """Write checked quantities of every body (:meth:`BodyStateAccess.set_state`): ``parsed`` name ->
        (array, row norms or None), ``cols`` name -> (array name, first column), in the envs ``rows``."""
        for key in ("q", "u"):
            names = [n for n in parsed if cols[n][0] == key]
            if not names:
                continue
            data = self._state.read(key)
            width = 7 if key == "q" else 6
            # each body's coordinates are the row's first n_bodies * width columns: a strided view of them
            bodies = data[:, :self._nb * width].reshape(self._n_envs, self._nb, width)[rows]
            for name in names:
                arr, norms = parsed[name]
                c0 = cols[name][1]
                dst = bodies[..., c0:c0 + arr.shape[-1]]
                if norms is not None:
                    arr = arr / norms
                _copy_items(dst, arr)
            if self._state._views[key] is None:
                self._state.write(key, data)


class FreeBodies:
    """The world's free bodies: their handles and materials, and their state, held in the builder's per-body
    arrays before the build and in the world's :class:`BodyStates` after it (:meth:`attach`).

    Args:
        n_envs: the world's env count.
    """

    def __init__(self, n_envs: int):
        self._n_envs = int(n_envs)
        self.bodies: list = []  # the Body handles, in index order
        self.materials: list[int] = []  # each body's material index (materials.py)
        self._init: list[dict] = []  # each body's state before the build: q (n_envs, 7), u, f and t (n_envs, 3)
        self._states: BodyStates | None = None

    def add(self, body, material: int) -> None:
        """Add ``body`` (its index is the next one) of material index ``material``, at rest at the origin."""
        ne = self._n_envs
        q = np.zeros((ne, 7))
        q[:, 3] = 1.0
        self._init.append({"q": q, "u": np.zeros((ne, 6)), "f": np.zeros((ne, 3)), "t": np.zeros((ne, 3))})
        self.bodies.append(body)
        self.materials.append(material)

    def initial(self) -> tuple:
        """The bodies' state as set before the build, as the state arrays take it: coordinates (n_envs,
        7 n_bodies), velocities (n_envs, 6 n_bodies), forces and torques (n_envs, n_bodies, 3); four ``None``
        without bodies."""
        if not self.bodies:
            return None, None, None, None
        return (np.concatenate([d["q"] for d in self._init], axis=1),
                np.concatenate([d["u"] for d in self._init], axis=1),
                np.stack([d["f"] for d in self._init], axis=1), np.stack([d["t"] for d in self._init], axis=1))

    def attach(self, states: BodyStates) -> None:
        """From now on the state lives in ``states`` (the built world's); the builder's arrays are dropped."""
        self._states = states
        self._init = []

    def _parse_value(self, quantity: str, value, env) -> np.ndarray:
        """Validate a setter value; returns shape (n_target_envs or 1, width)."""
        per_env = env is None
        if quantity == "orientation":
            try:
                arr = as_float_array("orientation", value)
            except (TypeError, ValueError) as exc:
                raise TypeError("orientation must be a quaternion (w, x, y, z) or a 3x3 rotation matrix") from exc
            if arr.shape in ((4,), (3, 3)):
                return rotation_to_quat("orientation", arr)[None, :]
            if per_env and arr.ndim >= 2 and arr.shape[0] == self._n_envs and arr.shape[1:] in ((4,), (3, 3)):
                return np.stack([rotation_to_quat(f"orientation[{i}]", x) for i, x in enumerate(arr)])
            stacked = f", or stacked ({self._n_envs}, 4) / ({self._n_envs}, 3, 3)" if per_env else ""
            allowed = "(4,) or (3, 3)" + stacked
            raise ValueError(f"orientation must have shape {allowed}, got {arr.shape}")
        try:
            arr = as_float_array(quantity, value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{quantity} must be an array of numbers") from exc
        if arr.shape == (3,):
            out = arr[None, :]
        elif per_env and arr.shape == (self._n_envs, 3):
            out = arr
        else:
            allowed = "(3,)" + (f" or ({self._n_envs}, 3)" if per_env else "")
            raise ValueError(f"{quantity} must have shape {allowed}, got {arr.shape}")
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{quantity} must be finite")
        return out

    def set(self, index: int, quantity: str, value, env) -> None:
        """Set ``quantity`` (``bodies/body.py``'s ``_SLOTS``) of body ``index`` in ``env`` (``None``: every
        env), checked first."""
        check_env(env, self._n_envs)
        vals = self._parse_value(quantity, value, env)
        name, col, width = _SLOTS[quantity]
        rows = slice(None) if env is None else int(env)
        if self._states is None:
            self._init[index][name][rows, col:col + width] = vals if env is None else vals[0]
            return
        self._states.write(index, quantity, vals if env is None else vals[0], rows)

    def get(self, index: int, quantity: str, env) -> np.ndarray:
        """``quantity`` of body ``index``, a float64 copy: (n_envs, width) with ``env=None``, else (width,)."""
        check_env(env, self._n_envs)
        name, col, width = _SLOTS[quantity]
        if self._states is None:
            data = self._init[index][name][:, col:col + width]
        else:
            data = self._states.read(index, quantity)
        data = np.array(data, dtype=np.float64)
        return data if env is None else data[int(env)]

    def get_state(self) -> dict:
        """:meth:`BodyStateAccess.get_state`."""
        nb = len(self.bodies)
        if self._states is None:
            q = np.stack([d["q"] for d in self._init], axis=1) if nb else np.zeros((self._n_envs, 0, 7))
            u = np.stack([d["u"] for d in self._init], axis=1) if nb else np.zeros((self._n_envs, 0, 6))
        else:  # one contiguous copy of each array; the quantities are views into these copies
            q, u = self._states.coordinates()
        return {"position": q[..., 0:3], "orientation": q[..., 3:7], "linear_velocity": u[..., 0:3],
                "angular_velocity": u[..., 3:6]}

    def set_state(self, given: dict, env) -> None:
        """:meth:`BodyStateAccess.set_state`: ``given`` maps each quantity to its value or ``None``."""
        check_env(env, self._n_envs)
        nb = len(self.bodies)
        parsed = {}
        with np.errstate(over="ignore", invalid="ignore"):
            for name, value in given.items():
                if value is not None:
                    k = 4 if name == "orientation" else 3
                    shapes = [(nb, k)] + ([(self._n_envs, nb, k)] if env is None else [])
                    parsed[name] = _checked_state_array(name, value, shapes)
        if not parsed:
            return
        rows = slice(None) if env is None else int(env)
        cols = {"position": ("q", 0), "orientation": ("q", 3), "linear_velocity": ("u", 0),
                "angular_velocity": ("u", 3)}
        if self._states is None:
            for name, (arr, norms) in parsed.items():
                key, c0 = cols[name]
                arr = arr / norms if norms is not None else arr
                for b in range(nb):
                    self._init[b][key][rows, c0:c0 + arr.shape[-1]] = arr[..., b, :]
            return
        self._states.write_all(parsed, rows, cols)


class BodyStateAccess:
    """Every free body's state at once, on :class:`taichi_terra.World`; the work is its :class:`FreeBodies`'."""

    _PARTS = ("_free",)

    def get_state(self) -> dict:
        """Every body's state in every env, one array per quantity, env axis first:

        - ``position``: centre of mass [m], shape (n_envs, n_bodies, 3)
        - ``orientation``: unit quaternion (w, x, y, z), shape (n_envs, n_bodies, 4)
        - ``linear_velocity``: of the centre of mass [m/s], shape (n_envs, n_bodies, 3)
        - ``angular_velocity``: world frame [rad/s], shape (n_envs, n_bodies, 3)

        The arrays are float64 copies of the state (views into one fresh copy of the coordinates and one of
        the velocities), in body order (``body.index``). On cpu this reads the state in place: one call
        costs two numpy copies. :meth:`set_state` takes these views as they are (about 0.18 ms for 1024
        envs x 10 bodies on a 2-core cpu, against 0.12 ms for C-contiguous arrays, whose checks are cheaper).
        """
        return self._free.get_state()

    def set_state(self, *, position=None, orientation=None, linear_velocity=None, angular_velocity=None,
                  env: int | None = None) -> None:
        """Set any of the quantities :meth:`get_state` returns, for every body at once.

        With ``env=None`` each array has shape (n_envs, n_bodies, k) (every env) or (n_bodies, k) (the same
        for every env); with ``env=i``, shape (n_bodies, k) for that env. ``k`` is 3, or 4 for the
        orientation quaternion (w, x, y, z), which is normalised here. Every argument is checked before
        anything is written: a bad one raises and leaves the state as it was.
        """
        self._free.set_state({"position": position, "orientation": orientation, "linear_velocity": linear_velocity,
                              "angular_velocity": angular_velocity}, env)


def _checked_state_array(name: str, value, shapes: list) -> tuple:
    """One checked argument of :meth:`BodyStateAccess.set_state`, of one of ``shapes``: (a float64 array
    whose rows are contiguous, the argument itself where it already is one, and the row norms to divide it
    by, or ``None``). Call under ``np.errstate(over="ignore", invalid="ignore")``; raises naming ``name`` and
    the rule it breaks."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers") from exc
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of numbers, got dtype {arr.dtype}")
    if arr.shape not in shapes:
        raise ValueError(f"{name} must have shape {' or '.join(map(str, shapes))}, got {arr.shape}")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.strides[-1] != arr.itemsize:  # rows must be contiguous; other axes may be strided (views)
        arr = _copy_rows(arr)
    if name != "orientation":
        # x.x is finite only if every number is (NaN and inf propagate); the exact test runs when it is not
        xx = np.dot(arr.reshape(-1), arr.reshape(-1)) if arr.flags.c_contiguous else _squared_norms(arr).sum()
        if not (np.isfinite(xx) or np.isfinite(arr).all()):
            raise ValueError(f"{name} must be finite")
        return arr, None
    n2 = _squared_norms(arr)
    lo, hi = n2.min(), n2.max()  # NaN in any quaternion makes both NaN; inf makes hi inf
    if not (np.isfinite(hi) and np.isfinite(lo)):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite")
        # finite, but |q|^2 overflowed: bring each row's largest number to <= 1
        arr = arr / np.maximum(np.abs(arr).max(axis=-1, keepdims=True), 1.0)
        n2 = _squared_norms(arr)
        lo, hi = n2.min(), n2.max()
    if lo < 1e-24:
        raise ValueError("orientation: every quaternion must have a nonzero norm")
    # sqrt(n2) is exactly 1 for n2 in {1, 1 + 2^-52} only: such rows divide to themselves
    unit = lo >= 1.0 and hi <= 1.0 + 2.0 ** -52
    return arr, None if unit else np.sqrt(n2)[..., None]


def _squared_norms(a: np.ndarray) -> np.ndarray:
    """|row|^2 of each row of a float64 array (..., k) with contiguous rows, summed left to right
    (((a0^2 + a1^2) + a2^2) + ...), the same whatever the strides of the other axes."""
    k = a.shape[-1]
    if a.flags.c_contiguous:
        sq = np.square(a.reshape(-1))
        out = sq[0::k] + sq[1::k]
        for c in range(2, k):
            out += sq[c::k]
        return out.reshape(a.shape[:-1])
    out = np.square(a[..., 0])
    for c in range(1, k):
        out += np.square(a[..., c])
    return out


def _copy_rows(arr: np.ndarray) -> np.ndarray:
    """A new C-contiguous float64 copy of ``arr`` (..., k)."""
    out = np.empty(arr.shape, np.float64)
    _copy_items(out, arr)
    return out


def _copy_items(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` for arrays (..., k) whose last axis is contiguous (``src`` may broadcast).

    Numpy copies arrays with a short last axis one number at a time (about 2 ns each on a 2-core cpu);
    seen as one ``k``-number item per row, the copy moves whole rows, two to three times faster.
    """
    src = np.asarray(src, dtype=dst.dtype)
    item = dst.dtype.itemsize
    if src.strides[-1] != item:
        src = np.ascontiguousarray(src)
    if dst.strides[-1] != item:
        dst[...] = src
        return
    kind = np.dtype((np.void, item * dst.shape[-1]))
    dst.view(kind)[...] = src.view(kind)


#: where each per-body quantity lives once built: (array, block, column)
_BODY_COLUMNS = {
    "position": ("q", "free_body", "position"),
    "orientation": ("q", "free_body", "orientation"),
    "linear_velocity": ("u", "free_body", "linear"),
    "angular_velocity": ("u", "free_body", "angular"),
    "external_force": ("control", "body_load", "force"),
    "external_torque": ("control", "body_load", "torque"),
}
