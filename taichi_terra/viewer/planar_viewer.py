"""2D GGUI viewer for a planar world (one with ``world.is_planar``): an interactive window, or offscreen frames.

    viewer = PlanarViewer(world, headless=True, window=Window(640, 480))
    world.step(100)
    image = viewer.capture()          # uint8, shape (480, 640, 3)

Each frame reads ``world.draw_data(env)`` for every shown env: numpy arrays in the world frame [m] with keys
``triangles`` (T, 3, 2), ``triangle_object`` (T,), ``circles`` (C, 2), ``circle_radius`` (C,), ``circle_object``
(C,), ``segments`` (S, 2, 2), ``segment_object`` (S,), ``object_kind`` (n_obj,) (0 static, 1 passive,
2 driven), ``poses`` (n_obj, 3) (x, y, heading [rad]), ``contact_points`` (K, 2), ``contact_normals``
(K, 2), ``contact_forces`` (K,) [N] and ``bounds`` (4,) (xmin, ymin, xmax, ymax); any array may have zero rows.

Polygons and circles (24-sided fans) are filled in their kind's colour, static first and driven last;
walls, a spin line on passive circles, heading arrows on driven objects and contact normals are lines;
contact points are small discs. The view is (cx, cy, half_height) in metres with square metres on screen.
"""
from __future__ import annotations

import math
import types

import numpy as np

from ..validation import as_vector, check_env, check_positive
from . import window as _window
from .base import WindowViewer
from .options import PlanarStyle, Window, option
from .viewer import Viewer

BACKGROUND = (0.96, 0.96, 0.94)  # the default of Window(background=None)
CIRCLE_SIDES = 24  # polygon sides of a drawn circle
LINE_PX = 2.0  # line width [pixels]
CONTACT_PX = 3.0  # contact point radius [pixels]
NORMAL_FRACTION = 0.08  # automatic force scale: the largest force's normal line spans this much of the view height
_OFF = -10.0  # canvas coordinate of unused buffer slots (off screen: canvas draws cannot take a count)


def _rows(data: dict, key: str, *shape) -> np.ndarray:
    """``data[key]`` as float64 with trailing ``shape``; an empty array of any shape gives zero rows."""
    return np.asarray(data[key], dtype=np.float64).reshape((-1, *shape))


class PlanarViewer(WindowViewer):
    """Draws a planar world in a GGUI window (``headless=False``) or offscreen (``headless=True``).

    Args:
        world: a planar world (``is_planar`` true, ``n_envs``, ``draw_data(env)``; see the module docstring).
        headless: render offscreen (no display needed); read frames with :meth:`capture`.
        window: a :class:`Window`: image size [pixels], title and background (``None``: 960 x 540 pixels on an
            off-white background).
        env: the env shown (and followed) [index].
        envs: ``None`` (show ``env`` alone), ``"all"``, or a sequence of env indices drawn side by side in a grid
            of tiles (``ceil(sqrt(n))`` columns, filled left to right, then downwards).
        tile_spacing: distance between tile centres [m], (x, y); ``None``: 1.1 times the scene's extent.
        camera: ``(cx, cy, half_height)`` [m]: the view centre and half the visible height; ``None`` frames the
            scene's ``bounds`` (all tiles) with a 5 % margin.
        follow: an object with an ``index`` attribute (an object of the world): the view centres on its pose in
            the shown env; ``None`` does not follow.
        style: a :class:`PlanarStyle`: colours by role, whether contacts are drawn and the force scale of their
            normal lines (``None``: the defaults).

    Attributes ``camera`` (the view, a (3,) array (cx, cy, half_height) [m], recentred every frame while
    following), ``follow``, ``show_contacts``, ``force_scale`` [m/N] and ``paused`` may be changed between
    frames; :meth:`select_env` changes the shown env.
    """

    def __init__(self, world, *, headless: bool = False, window: Window | None = None, env: int = 0, envs=None,
                 tile_spacing=None, camera=None, follow=None, style: PlanarStyle | None = None):
        if not getattr(world, "is_planar", False) or not callable(getattr(world, "draw_data", None)):
            raise TypeError(f"world must be a planar world (is_planar, draw_data), got {type(world).__name__}")
        window = option("window", window, Window)
        style = option("style", style, PlanarStyle)
        self.world, self.width, self.height, self.headless = world, window.width, window.height, bool(headless)
        self._check_env(env)
        self._envs = Viewer._parse_envs(world, env, envs)
        self.env = int(env)
        self.colors = dict(style.colors)
        self.background = window.background if window.background is not None else BACKGROUND
        if tile_spacing is not None:
            tile_spacing = as_vector("tile_spacing", tile_spacing, 2)
            if tile_spacing.min() <= 0.0:
                raise ValueError("tile_spacing must be two positive distances [m]")
        self.force_scale = style.force_scale
        self.show_contacts = style.show_contacts
        self.paused = False
        self.stats = {"frames": 0}  # frames drawn
        self._layout(tile_spacing)
        self.camera = self._default_camera() if camera is None else self._parse_camera(camera)
        self.follow = None
        if follow is not None:
            n_obj = len(_rows(world.draw_data(self.env), "object_kind"))
            index = getattr(follow, "index", None)
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < n_obj:
                raise ValueError(f"follow must be None or an object with an int index in [0, {n_obj}), got {follow!r}")
            self.follow = follow
        self._buffers = {}  # name -> (capacity, vertex field, colour field or None)
        self._window = _window.acquire(self, window.title, self.width, self.height, self.headless)
        self._mouse = None

    # ------------------------------------------------------------------ setup
    def _check_env(self, env) -> None:
        if env is None:
            raise TypeError("env must be an int, got None")
        check_env(env, self.world.n_envs)

    @staticmethod
    def _parse_camera(camera) -> np.ndarray:
        try:
            cam = as_vector("camera", camera, 3)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"camera must be None or (cx, cy, half_height) in metres, got {camera!r}") from exc
        if cam[2] <= 0.0:
            raise ValueError(f"camera half_height must be > 0 [m], got {cam[2]}")
        return cam

    @property
    def envs(self) -> list:
        """The envs drawn, one per tile."""
        return list(self._envs)

    def _layout(self, tile_spacing) -> None:
        """Tile offsets [m] (n_tiles, 2) from the union of the shown envs' ``bounds``; the bounds of all tiles."""
        boxes = []
        for e in self._envs:
            b = _rows(self.world.draw_data(e), "bounds")
            if b.shape != (4,) or not np.all(np.isfinite(b)) or b[2] < b[0] or b[3] < b[1]:
                raise ValueError(f"draw_data({e})['bounds'] must be finite (xmin, ymin, xmax, ymax), got {b}")
            boxes.append(b)
        boxes = np.array(boxes)
        lo, hi = boxes[:, :2].min(axis=0), boxes[:, 2:].max(axis=0)
        extent = np.maximum(hi - lo, 1e-3)
        spacing = tile_spacing if tile_spacing is not None else 1.1 * extent
        cols = math.ceil(math.sqrt(len(self._envs)))
        self._offsets = np.array([[(i % cols) * spacing[0], -(i // cols) * spacing[1]] for i in range(len(self._envs))])
        self._bounds = (lo + self._offsets.min(axis=0), hi + self._offsets.max(axis=0))

    def _default_camera(self) -> np.ndarray:
        lo, hi = self._bounds
        half = 0.5 * np.maximum(hi - lo, 1e-3)
        return np.array([*(0.5 * (lo + hi)), 1.05 * max(half[1], half[0] * self.height / self.width)])

    # ------------------------------------------------------------------ geometry
    def _tile(self, env: int) -> int:
        return self._envs.index(env) if env in self._envs else 0

    def project(self, points, env: int | None = None) -> np.ndarray:
        """Pixel coordinates (column, row), row 0 at the top and integers at pixel centres, of world points
        [m] of shape (N, 2) drawn in ``env``'s tile (default: the shown env). Returns (N, 2) floats."""
        p = np.asarray(points, float).reshape(-1, 2) + self._offsets[self._tile(self.env if env is None else env)]
        cx, cy, half = self.camera
        s = 0.5 * self.height / half  # pixels per metre
        return np.stack([0.5 * self.width + (p[:, 0] - cx) * s - 0.5, 0.5 * self.height - (p[:, 1] - cy) * s - 0.5], 1)

    def unproject(self, pixels, env: int | None = None) -> np.ndarray:
        """World points [m], shape (N, 2), drawn at pixel positions (column, row) of shape (N, 2) in ``env``'s
        tile (default: the shown env): the inverse of :meth:`project`."""
        px = np.asarray(pixels, float).reshape(-1, 2)
        cx, cy, half = self.camera
        s = 0.5 * self.height / half  # pixels per metre
        p = np.stack([cx + (px[:, 0] + 0.5 - 0.5 * self.width) / s, cy - (px[:, 1] + 0.5 - 0.5 * self.height) / s], 1)
        return p - self._offsets[self._tile(self.env if env is None else env)]

    @property
    def tile_offsets(self) -> np.ndarray:
        """Where each tile is drawn: the translation [m] added to env ``envs[t]``'s geometry, shape (n_tiles, 2)."""
        return self._offsets.copy()

    def _frame_geometry(self):
        """This frame's triangles, lines and contact points in world metres (tile offsets applied):
        triangle vertices (3T, 2) and colours (3T, 3), line endpoints (2L, 2) and colours (2L, 3), points (K, 2)."""
        c = self.colors
        kind_rgb = np.array([c["static"], c["passive"], c["driven"]])
        tris, tri_kind, lines, line_rgb, points, normals, forces = [], [], [], [], [], [], []
        ang = 2.0 * math.pi * np.arange(CIRCLE_SIDES + 1) / CIRCLE_SIDES
        rim = np.stack([np.cos(ang), np.sin(ang)], 1)  # (sides + 1, 2)

        def add_lines(a, b, rgb):
            lines.append(np.stack([a, b], 1).reshape(-1, 2))
            line_rgb.append(np.tile(rgb, (2 * len(a), 1)))

        for t, env in enumerate(self._envs):
            d, off = self.world.draw_data(env), self._offsets[t]
            kind = np.asarray(d["object_kind"], int).reshape(-1)
            if kind.size and (kind.min() < 0 or kind.max() > 2):
                raise ValueError(f"draw_data({env})['object_kind'] must hold 0, 1 or 2, got {np.unique(kind)}")
            poses = _rows(d, "poses", 3)
            tri = _rows(d, "triangles", 3, 2) + off
            centre, radius = _rows(d, "circles", 2) + off, _rows(d, "circle_radius")
            tri_obj = np.asarray(d["triangle_object"], int).reshape(-1)
            circ_obj = np.asarray(d["circle_object"], int).reshape(-1)
            fan = np.stack([np.repeat(centre[:, None], CIRCLE_SIDES, 1),
                            centre[:, None] + radius[:, None, None] * rim[None, :-1],
                            centre[:, None] + radius[:, None, None] * rim[None, 1:]], 2)  # (C, sides, 3, 2)
            tris += [tri, fan.reshape(-1, 3, 2)]
            tri_kind += [kind[tri_obj], np.repeat(kind[circ_obj], CIRCLE_SIDES)]
            seg = _rows(d, "segments", 2, 2) + off
            add_lines(seg[:, 0], seg[:, 1], c["segment"])
            spin = kind[circ_obj] == 1  # passive circles: centre to rim along the heading
            h = poses[circ_obj[spin], 2]
            add_lines(centre[spin], centre[spin] + radius[spin, None] * np.stack([np.cos(h), np.sin(h)], 1), c["spin"])
            for obj in np.nonzero(kind == 2)[0]:  # driven: an arrow along the heading, 0.8 of the reach
                p, own = poses[obj, :2] + off, circ_obj == obj
                reach = max(np.linalg.norm(tri[tri_obj == obj].reshape(-1, 2) - p, axis=1).max(initial=0.0),
                            (np.linalg.norm(centre[own] - p, axis=1) + radius[own]).max(initial=0.0))
                if reach <= 0.0:
                    continue
                length, a = 0.8 * reach, poses[obj, 2]
                tip = p + length * np.array([math.cos(a), math.sin(a)])
                barbs = [tip + 0.3 * length * np.array([math.cos(a + s), math.sin(a + s)]) for s in (2.6, -2.6)]
                add_lines(np.array([p, tip, tip]), np.array([tip, *barbs]), c["heading"])
            if self.show_contacts:
                points.append(_rows(d, "contact_points", 2) + off)
                normals.append(_rows(d, "contact_normals", 2))
                forces.append(_rows(d, "contact_forces"))
        tri, tri_kind = np.concatenate(tris), np.concatenate(tri_kind)
        order = np.argsort(tri_kind, kind="stable")  # static under passive under driven
        tri_rgb = np.repeat(kind_rgb[tri_kind[order]], 3, axis=0)
        points = np.concatenate(points) if points else np.zeros((0, 2))
        if len(points):
            f, n = np.concatenate(forces), np.concatenate(normals)
            scale = self.force_scale
            if scale is None:
                fmax = float(np.abs(f).max())
                scale = NORMAL_FRACTION * 2.0 * self.camera[2] / fmax if fmax > 0.0 else 0.0
            add_lines(points, points + scale * f[:, None] * n, c["contact"])
        return tri[order].reshape(-1, 2), tri_rgb, np.concatenate(lines), np.concatenate(line_rgb), points

    def _upload(self, name: str, verts: np.ndarray, rgb: np.ndarray | None):
        """Canvas vertices (N, 2) and colours (N, 3) into the named buffer, grown to twice N when too small
        (fields cannot be freed: the same ones are reused); unused slots are put off screen."""
        import taichi as ti

        cap, vf, cf = self._buffers.get(name, (0, None, None))
        n = len(verts)
        if n > cap:
            cap = max(64, 2 * n)
            vf = ti.Vector.field(2, ti.f32, cap)
            cf = ti.Vector.field(3, ti.f32, cap) if rgb is not None else None
            self._buffers[name] = (cap, vf, cf)
        buf = np.full((cap, 2), _OFF, np.float32)
        buf[:n] = verts
        vf.from_numpy(buf)
        if cf is not None:
            cbuf = np.zeros((cap, 3), np.float32)
            cbuf[:n] = rgb
            cf.from_numpy(cbuf)
        return vf, cf

    # ------------------------------------------------------------------ drawing
    def _render(self) -> None:
        if not _window.owns(self):
            raise RuntimeError("this viewer's window was closed or taken over by a newer viewer "
                               "(GGUI allows one window per process)")
        if self.follow is not None:
            t = self._tile(self.env)
            pose = _rows(self.world.draw_data(self._envs[t]), "poses", 3)[self.follow.index]
            self.camera[:2] = pose[:2] + self._offsets[t]
        tri, tri_rgb, lines, line_rgb, points = self._frame_geometry()
        cx, cy, half = self.camera

        def canvas_uv(p):  # metres -> canvas [0, 1]^2, y up, square metres
            return np.stack([0.5 + (p[:, 0] - cx) * 0.5 * self.height / (half * self.width),
                             0.5 + (p[:, 1] - cy) * 0.5 / half], 1)

        canvas = self._window.get_canvas()
        canvas.set_background_color(self.background)
        if len(tri):
            vf, cf = self._upload("triangles", canvas_uv(tri), tri_rgb)
            canvas.triangles(vf, per_vertex_color=cf)
        if len(lines):
            vf, cf = self._upload("lines", canvas_uv(lines), line_rgb)
            canvas.lines(vf, LINE_PX / self.height, per_vertex_color=cf)
        if len(points):
            vf, _ = self._upload("points", canvas_uv(points), None)
            canvas.circles(vf, CONTACT_PX / self.height, color=self.colors["contact"])  # radius: height fraction
        self.stats["frames"] += 1

    # ------------------------------------------------------------------ interaction
    def select_env(self, env: int) -> None:
        """Show (and follow the object in) ``env``; with one tile this switches the tile to it."""
        self._check_env(env)
        self.env = int(env)
        if len(self._envs) == 1:
            self._envs = [self.env]

    def zoom(self, factor: float) -> None:
        """Scale the visible height by ``factor`` (< 1 zooms in) about the view centre."""
        self.camera[2] *= check_positive("factor", factor)

    def pan(self, dx: float, dy: float) -> None:
        """Move the view centre by (dx, dy) [m] (the drawing moves the other way on screen)."""
        self.camera[:2] += (float(dx), float(dy))

    def apply_key(self, key: str, on_reset=None) -> bool:
        """Act on one key press (GGUI key names). Space pauses/resumes, ``.`` (or ``n``) asks for one frame
        (returns True), ``r`` calls ``on_reset``, ``+`` / ``=`` and ``-`` zoom in / out by 1.25, the arrow keys
        move the view a tenth of its height, ``c`` toggles contacts, ``f`` follows the first driven object or
        stops following, ``[`` / ``]`` show the previous / next env, Escape closes the window."""
        import taichi as ti

        step = 0.2 * self.camera[2]
        if key == ti.ui.ESCAPE:
            if _window.owns(self) and not self.headless:
                self._window.running = False
        elif key == ti.ui.SPACE:
            self.paused = not self.paused
        elif key in (".", "n"):
            return True
        elif key == "r" and on_reset is not None:
            on_reset()
        elif key in ("+", "=", "-", "_"):
            self.zoom(0.8 if key in ("+", "=") else 1.25)
        elif key in (ti.ui.LEFT, ti.ui.RIGHT, ti.ui.UP, ti.ui.DOWN):
            self.pan(step * ((key == ti.ui.RIGHT) - (key == ti.ui.LEFT)),
                     step * ((key == ti.ui.UP) - (key == ti.ui.DOWN)))
        elif key == "c":
            self.show_contacts = not self.show_contacts
        elif key == "f":
            driven = np.nonzero(np.asarray(self.world.draw_data(self.env)["object_kind"]).reshape(-1) == 2)[0]
            self.follow = None if self.follow is not None or not driven.size else types.SimpleNamespace(
                index=int(driven[0]))
        elif key in ("[", "]"):
            self.select_env((self.env + (1 if key == "]" else -1)) % self.world.n_envs)
        return False

    def apply_drag(self, dx: float, dy: float) -> None:
        """Pan for a mouse drag of (dx, dy) window fractions (x right, y up): the drawing follows the cursor."""
        metres_per_px = 2.0 * self.camera[2] / self.height
        self.pan(-dx * self.width * metres_per_px, -dy * self.height * metres_per_px)

    def handle_input(self, on_reset=None) -> dict:
        """Poll the window's key presses and mouse drags (any button pans) and apply them (:meth:`apply_key`,
        :meth:`apply_drag`; z / x held zoom in / out). Returns ``{"step_once": bool}``. A headless viewer has
        no input: it returns at once."""
        import taichi as ti

        out = {"step_once": False}
        if self.headless or not _window.owns(self):
            return out
        win = self._window
        for event in win.get_events(ti.ui.PRESS):
            out["step_once"] |= self.apply_key(event.key, on_reset)
        pos = np.array(win.get_cursor_pos(), float)
        if self._mouse is not None and win.is_pressed(ti.ui.LMB, ti.ui.RMB, ti.ui.MMB):
            self.apply_drag(*(pos - self._mouse))
        if win.is_pressed("z"):
            self.zoom(0.97)
        if win.is_pressed("x"):
            self.zoom(1.03)
        self._mouse = pos
        return out
