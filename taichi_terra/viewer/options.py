"""The viewers' options, grouped by what they set: the window (:class:`Window`, both viewers), how the 3D viewer
draws the scene (:class:`Style`) and what it draws over it (:class:`Annotations`), and how the 2D viewer draws a
planar world (:class:`PlanarStyle`).

    from taichi_terra.viewer import Viewer, Window, Style, Annotations

    viewer = Viewer(world, headless=True, window=Window(640, 480),
                    style=Style(color_by="plastic_sinkage", color_range=0.02),
                    annotations=Annotations(show_contacts=True, overlay=False))

Each is a frozen dataclass checked when it is made: a bad value raises ``ValueError`` or ``TypeError`` naming the
class, the field and the rule, before any viewer sees it. What a viewer copies from them into its attributes
(``viewer.color_by``, ``viewer.show_contacts``, ...) may still be changed between frames.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import as_vector, check_finite, check_positive
from .terrain_layer import COLOR_MODES

#: what the 3D viewer draws of articulated links (``Style(show=...)``; the ``v`` key cycles through them)
SHOW_MODES = ("visual", "collision", "both")
#: the 2D viewer's colours by role, RGB in [0, 1]; ``PlanarStyle(colors=...)`` overrides any of them
DEFAULT_COLORS = {"static": (0.35, 0.35, 0.37), "passive": (0.88, 0.62, 0.32), "driven": (0.2, 0.45, 0.85),
                  "segment": (0.15, 0.15, 0.15), "spin": (0.45, 0.27, 0.1), "heading": (0.05, 0.08, 0.25),
                  "contact": (0.9, 0.1, 0.1)}
MIN_PIXELS, MAX_PIXELS = 16, 8192  # image width and height [pixels]


def _rgb(name, value) -> tuple:
    c = as_vector(name, value, 3)
    if c.min() < 0.0 or c.max() > 1.0:
        raise ValueError(f"{name} must be an RGB triple with values in [0, 1], got {tuple(c)}")
    return tuple(float(v) for v in c)


def _set(obj, name: str, value) -> None:
    """Store a checked, normalised field of a frozen dataclass."""
    object.__setattr__(obj, name, value)


def _parse_colors(colors) -> dict:
    """:data:`DEFAULT_COLORS` with the entries of ``colors`` (None, or a dict of RGB triples) over them."""
    if colors is None:
        return dict(DEFAULT_COLORS)
    if not isinstance(colors, dict) or not set(colors) <= set(DEFAULT_COLORS):
        raise ValueError(f"PlanarStyle: colors must be None or a dict with keys from {sorted(DEFAULT_COLORS)}, "
                         f"got {colors!r}")
    out = dict(DEFAULT_COLORS)
    for key, value in colors.items():
        try:
            out[key] = _rgb(f"PlanarStyle: colors[{key!r}]", value)
        except TypeError as exc:
            raise ValueError(f"PlanarStyle: colors[{key!r}] must be an RGB triple in [0, 1], got {value!r}") from exc
    return out


@dataclass(frozen=True)
class Window:
    """The image a viewer draws: its size, its window's title and its background.

    Whether it goes to a window on screen or offscreen is the viewer's own ``headless`` argument.

    Args:
        width, height: image size [pixels], each an int in [16, 8192].
        title: the window's title (shown only with ``headless=False``).
        background: RGB in [0, 1]; ``None``: the viewer's own (3D: a light blue grey, 2D: an off-white).
    """

    width: int = 960
    height: int = 540
    title: str = "taichi_terra"
    background: tuple | None = None

    def __post_init__(self):
        for name in ("width", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
                    not MIN_PIXELS <= value <= MAX_PIXELS:
                raise ValueError(f"Window: {name} must be an int in [{MIN_PIXELS}, {MAX_PIXELS}] pixels, "
                                 f"got {value!r}")
            _set(self, name, int(value))
        if not isinstance(self.title, str):
            raise TypeError(f"Window: title must be a str, got {type(self.title).__name__}")
        if self.background is not None:
            _set(self, "background", _rgb("Window: background", self.background))


@dataclass(frozen=True)
class Style:
    """How the 3D viewer draws the scene: articulated links, and the colour and scale of soil beds.

    Args:
        show: what articulated links look like: ``"visual"`` (their URDF ``<visual>`` shapes and meshes in
            their URDF colours, else a mesh file's own colours (vertex or face colours, its texture sampled at
            its vertices), else the palette's; a link without visuals, or with a visual mesh file that was not
            found, as its collision shapes), ``"collision"`` (the shapes the physics collides) or ``"both"``
            (the visuals, with the collision shapes as wireframes over them).
        color_by: how soil beds are coloured: ``"base"``, ``"sinkage"`` or ``"plastic_sinkage"`` (the base
            colour blends into ``rut_color`` as the value goes from 0 to ``color_range``).
        color_range: sinkage that gets the full ``rut_color`` [m], > 0.
        rut_color: RGB in [0, 1].
        sinkage_scale: vertical exaggeration of soil sinkage (1: true to scale), >= 0.
    """

    show: str = "visual"
    color_by: str = "sinkage"
    color_range: float = 0.05
    rut_color: tuple = (0.22, 0.16, 0.45)
    sinkage_scale: float = 1.0

    def __post_init__(self):
        if self.show not in SHOW_MODES:
            raise ValueError(f"Style: show must be one of {SHOW_MODES}, got {self.show!r}")
        if self.color_by not in COLOR_MODES:
            raise ValueError(f"Style: color_by must be one of {COLOR_MODES}, got {self.color_by!r}")
        _set(self, "color_range", check_positive("Style: color_range [m]", self.color_range))
        _set(self, "rut_color", _rgb("Style: rut_color", self.rut_color))
        scale = check_finite("Style: sinkage_scale", self.sinkage_scale)
        if scale < 0.0:
            raise ValueError(f"Style: sinkage_scale must be >= 0, got {scale}")
        _set(self, "sinkage_scale", scale)


@dataclass(frozen=True)
class Annotations:
    """What the 3D viewer draws over the scene: contacts, force arrows, link frames and the text overlay.

    Args:
        show_contacts: draw contact points (a belt contact coloured by its traction).
        show_forces: draw contact-force arrows.
        force_scale: arrow length per newton [m/N], > 0.
        show_frames: draw every articulated link's frame as three small axes (x red, y green, z blue).
        frame_size: length of those axes [m], > 0 (``None``: 4 % of the scene's size).
        overlay: draw the text overlay (time, steps per second, real-time factor).
    """

    show_contacts: bool = False
    show_forces: bool = False
    force_scale: float = 1e-3
    show_frames: bool = False
    frame_size: float | None = None
    overlay: bool = True

    def __post_init__(self):
        _set(self, "force_scale", check_positive("Annotations: force_scale [m/N]", self.force_scale))
        if self.frame_size is not None:
            _set(self, "frame_size", check_positive("Annotations: frame_size [m]", self.frame_size))
        for name in ("show_contacts", "show_forces", "show_frames", "overlay"):
            _set(self, name, bool(getattr(self, name)))


@dataclass(frozen=True)
class PlanarStyle:
    """How the 2D viewer draws a planar world: its colours and its contacts.

    Args:
        colors: ``None`` or a dict overriding entries of :data:`DEFAULT_COLORS` (RGB in [0, 1] by role:
            ``static``, ``passive``, ``driven``, ``segment``, ``spin``, ``heading``, ``contact``); once checked,
            the field holds every role's colour.
        show_contacts: draw contact points and normals (line length proportional to the force).
        force_scale: normal line length per newton [m/N], > 0; ``None``: the frame's largest force spans
            ``NORMAL_FRACTION`` (8 %) of the view height.
    """

    colors: dict | None = None
    show_contacts: bool = True
    force_scale: float | None = None

    def __post_init__(self):
        _set(self, "colors", _parse_colors(self.colors))
        _set(self, "show_contacts", bool(self.show_contacts))
        if self.force_scale is not None:
            _set(self, "force_scale", check_positive("PlanarStyle: force_scale [m/N]", self.force_scale))


def option(name: str, value, cls):
    """``value`` (an instance of ``cls``, or ``None`` for its defaults) for a viewer's argument ``name``."""
    if value is None:
        return cls()
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be a taichi_terra.viewer.{cls.__name__} or None, got {type(value).__name__}")
    return value
