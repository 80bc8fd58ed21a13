"""GGUI viewer for a :class:`taichi_terra.World`: an interactive window, or offscreen frames.

    viewer = tt.viewer.Viewer(world, headless=True, window=tt.viewer.Window(640, 480))
    world.step(100)
    image = viewer.capture()          # uint8, shape (480, 640, 3)

It draws the ground plane, height maps and soil beds (per-vertex colour; a bed can be coloured by its
sinkage or plastic sinkage, heights true to scale unless ``Style.sinkage_scale`` exaggerates the ruts), every
body's shape, every articulated link posed by its link frame (``links.py``) as its URDF visuals, its
collision shapes or both (``Style.show``; a link without visuals, or whose visual mesh file was not found, as its
collision shapes), each track's belt with tread marks that move with the belt's travel, optionally the link
frames as small axes, the contact points and force arrows, and an overlay with the simulation time, steps per
second and real-time factor. A batched world shows one env or a tiled grid of envs.

Terrain vertices are rewritten only for the sample rows whose height revision moved on since they were
last drawn (``HeightMap.get_height_row_revisions``), or all of them after the map was moved. The physics
never imports this module.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..validation import as_vector, check_env
from . import window as _window
from .base import WindowViewer
from .camera import OrbitCamera
from .links import SYSTEM_COLORS, LinkShapes, axis_lines
from .options import SHOW_MODES, Annotations, Style, Window, option
from .overlay import OverlayLayer
from .sand_layer import SandLayer
from .terrain_layer import TerrainLayer, _field, _index_field
from .tessellate import tessellate, tessellate_visual

#: body colours, cycled by body index
PALETTE = ((0.85, 0.33, 0.2), (0.2, 0.5, 0.8), (0.95, 0.7, 0.15), (0.35, 0.7, 0.35), (0.6, 0.4, 0.75),
           (0.85, 0.45, 0.6), (0.25, 0.7, 0.7), (0.55, 0.4, 0.25))  # none grey: bodies stand out from the ground
GROUND_SHADES = (0.68, 0.78)  # the ground plane's checkers: RGB (s, s, 1.02 s)
CONTACT_COLOR = (0.95, 0.15, 0.1)
BELT_COLOR = (0.16, 0.16, 0.17)  # a belt without its own colour
TREAD_COLOR = (0.92, 0.85, 0.55)  # the tread marks that show a belt's motion
TRACTION_COLORS = ((0.2, 0.8, 0.3), (0.95, 0.45, 0.05))  # a belt contact without, and at full, traction
FORCE_COLOR = (0.1, 0.2, 0.9)
AXIS_COLORS = ((0.9, 0.1, 0.1), (0.1, 0.75, 0.1), (0.1, 0.2, 0.9))  # a link frame's x, y, z axes
BACKGROUND = (0.88, 0.91, 0.95)  # the default of Window(background=None)


def _identity_transform():
    """A one-element 4 x 4 float32 matrix field holding the identity: the instance transform of every mesh
    (see :meth:`Viewer._mesh`)."""
    import taichi as ti

    f = ti.Matrix.field(4, 4, ti.f32, 1)
    f.from_numpy(np.eye(4, dtype=np.float32)[None])
    return f


class Viewer(TerrainLayer, SandLayer, OverlayLayer, WindowViewer):
    """Draws a world in a GGUI window (``headless=False``) or offscreen (``headless=True``).

    Args:
        world: the :class:`taichi_terra.World` to draw (built here if it was not yet).
        headless: render offscreen (no display needed); read frames with :meth:`capture`.
        window: a :class:`Window`: image size [pixels], title and background (``None``: 960 x 540 pixels).
        env: the env shown (and followed) [index].
        envs: ``None`` (show ``env`` alone), ``"all"``, or a sequence of env indices drawn side by side
            in a grid of tiles.
        tile_spacing: distance between tile centres [m], (x, y); ``None`` fits the scene.
        camera: an :class:`OrbitCamera`; ``None`` frames the whole scene.
        follow: a body or an articulated system (its root link) the camera target follows (in the shown
            env), or ``None``.
        style: a :class:`Style`: how links look (``show``) and how soil beds are coloured and scaled
            (``None``: the defaults).
        annotations: an :class:`Annotations`: contact points, force arrows, link frames and the text overlay
            (``None``: the overlay alone).

    What the options set becomes attributes that may be changed between frames: ``color_by``, ``color_range``
    [m], ``rut_color``, ``sinkage_scale``, ``show_contacts``, ``show_forces``, ``force_scale`` [m/N],
    ``show_frames``, ``frame_size`` [m], ``overlay``, ``background``, and ``showing`` (the link look).
    """

    def __init__(self, world, *, headless: bool = False, window: Window | None = None, env: int = 0, envs=None,
                 tile_spacing=None, camera=None, follow=None, style: Style | None = None,
                 annotations: Annotations | None = None):
        from ..world import World

        if not isinstance(world, World):
            raise TypeError(f"world must be a taichi_terra.World, got {type(world).__name__}")
        window = option("window", window, Window)
        style = option("style", style, Style)
        annotations = option("annotations", annotations, Annotations)
        check_env(env, world.n_envs)
        if env is None:
            raise TypeError("env must be an int")
        self._envs = self._parse_envs(world, env, envs)
        if tile_spacing is not None:
            tile_spacing = as_vector("tile_spacing", tile_spacing, 2)
            if tile_spacing.min() <= 0.0:
                raise ValueError("tile_spacing must be two positive distances [m]")
        if follow is not None and not any(follow is x for x in world.bodies + world.articulated_systems):
            raise ValueError("follow must be a body or an articulated system of this world (or None)")
        if camera is not None and not isinstance(camera, OrbitCamera):
            raise TypeError(f"camera must be an OrbitCamera or None, got {type(camera).__name__}")
        self.color_range, self.force_scale = style.color_range, annotations.force_scale
        frame_size = annotations.frame_size
        self.rut_color = style.rut_color
        self.background = window.background if window.background is not None else BACKGROUND
        self.world, self.width, self.height, self.headless = world, window.width, window.height, bool(headless)
        self.env = int(env)
        self.color_by, self.sinkage_scale = style.color_by, style.sinkage_scale
        self.show_contacts, self.show_forces = annotations.show_contacts, annotations.show_forces
        self.overlay, self.show_frames = annotations.overlay, annotations.show_frames
        self._show = style.show
        #: distance between a belt's tread marks [m]
        self.belt_spacing = 0.06
        self.follow = follow
        self.paused = False
        #: counters: frames drawn, terrain rows written (a full map counts all its rows in every tile)
        self.stats = {"frames": 0, "terrain_rows_written": 0}
        world.build()
        self._links = LinkShapes(world)
        #: the tessellation of each of ``self._links.visuals`` (None: a mesh that was not found), made once
        self._visual_meshes = [None if v.kind == "mesh" and v.path is None else tessellate_visual(v)
                               for *_x, v in self._links.visuals]
        self._tile_spacing = tile_spacing
        self._build_buffers()
        self.frame_size = frame_size if frame_size is not None else \
            0.04 * max(float(np.max(self._bounds[1] - self._bounds[0])), 0.5)
        self.camera = camera if camera is not None else self._default_camera()
        self._drawn_settings = None
        self._clock = (time.perf_counter(), world.time, world.step_count)
        self._rates = (0.0, 0.0)
        self._diverged_at, self._diverged_cache = -1, {}
        self._window = _window.acquire(self, window.title, self.width, self.height, self.headless)
        self._mouse = None

    # ------------------------------------------------------------------ setup
    @staticmethod
    def _parse_envs(world, env, envs) -> list:
        if envs is None:
            return [int(env)]
        if isinstance(envs, str):
            if envs != "all":
                raise ValueError(f"envs must be None, 'all' or a sequence of env indices, got {envs!r}")
            return list(range(world.n_envs))
        try:
            out = [int(e) for e in envs]
        except (TypeError, ValueError) as exc:
            raise TypeError("envs must be None, 'all' or a sequence of env indices") from exc
        if not out or len(set(out)) != len(out) or min(out) < 0 or max(out) >= world.n_envs:
            raise ValueError(f"envs must be distinct env indices in [0, {world.n_envs}), got {envs!r}")
        return out

    @property
    def envs(self) -> list:
        """The envs drawn, one per tile."""
        return list(self._envs)

    @property
    def tile_offsets(self) -> np.ndarray:
        """Where each tile is drawn: the translation [m] added to env ``envs[t]``'s geometry, shape (n_tiles, 3)."""
        return self._offsets.copy()

    @property
    def body_colors(self) -> np.ndarray:
        """Each body's RGB colour in [0, 1] (before lighting), shape (n_bodies, 3), in the model's body index
        order: the free bodies (``world.bodies``, cycling through the palette), then the shapes on articulated
        links (``world._model.body_links``; a system's links alternate between two palette colours by their
        depth in the tree)."""
        return self._body_rgb.copy()

    def _scene_bounds(self):
        """(lo, hi) corners [m] of one env's content: map grids and bodies (env 0's poses)."""
        pts = []
        for hm in self.world.heightmaps:
            h = hm.get_surface_heights(self._envs[0])
            finite = h[np.isfinite(h)]
            hz = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
            cx, cy, sx, sy = hm.center_x, hm.center_y, 0.5 * hm.x_size, 0.5 * hm.y_size
            corners = np.array([[cx + a * sx, cy + b * sy, z] for a in (-1, 1) for b in (-1, 1) for z in hz])
            pts.append(corners @ hm.get_rotation_matrix().T + hm.get_position())
        for body in self.world.bodies:
            p = body.get_position(self._envs[0])
            r = body.shape.bounding_radius
            pts.append(np.array([p - r, p + r]))
        if len(self._links.rows):
            origins, rotations = self._links.frames([self._envs[0]])
            for (_b, _t, _link, shape, pos, _rot), slot in zip(self._links.bodies, self._links.slots):
                p = origins[0, slot] + rotations[0, slot] @ pos
                pts.append(np.array([p - shape.bounding_radius, p + shape.bounding_radius]))
            for (_t, _k, slot, _depth, visual), mesh in zip(self._links.visuals, self._visual_meshes):
                if mesh is not None:  # (a visual's tessellation: its extent)
                    v = mesh[0] @ visual.rotation.T + visual.position
                    pts.append(origins[0, slot] + v @ rotations[0, slot].T)
        if not pts:
            return np.array([-1.0, -1.0, 0.0]), np.array([1.0, 1.0, 0.5])
        allp = np.concatenate(pts)
        return allp.min(axis=0), allp.max(axis=0)

    def _build_buffers(self) -> None:
        lo, hi = self._scene_bounds()
        n = len(self._envs)
        cols = math.ceil(math.sqrt(n))
        extent = np.maximum(hi - lo, 0.5)
        spacing = self._tile_spacing if self._tile_spacing is not None else 1.15 * extent[:2] + 0.2
        self._offsets = np.array([[(i % cols) * spacing[0], -(i // cols) * spacing[1], 0.0] for i in range(n)])
        self._bounds = (lo + self._offsets.min(axis=0), hi + self._offsets.max(axis=0))
        self._build_terrain()
        self._build_bodies()
        self._build_ground()
        self._contact_cap = 0
        self._identity = _identity_transform()

    @property
    def showing(self) -> str:
        """What articulated links look like: ``"visual"``, ``"collision"`` or ``"both"`` (the ``show`` argument;
        settable)."""
        return self._show

    @showing.setter
    def showing(self, value: str) -> None:
        if value not in SHOW_MODES:
            raise ValueError(f"showing must be one of {SHOW_MODES}, got {value!r}")
        self._show = value

    @staticmethod
    def _link_rgb(t: int, depth: int) -> tuple:
        """Palette colour of a link of system ``t`` at ``depth`` in its tree (two colours a system)."""
        return PALETTE[(SYSTEM_COLORS * t + depth % SYSTEM_COLORS) % len(PALETTE)]

    def _drawn_bodies(self):
        """``(shape, vertex placement (position [m], rotation), pose column, RGB, group)`` of every body in body
        index order. A free body's pose is in ``q`` (column ``7 * index``); a link shape's tessellation is placed
        on its link, and its pose is its link's, at column ``7 * (n_free + slot)`` of the viewer's pose array.
        ``group`` says when it is drawn: ``"always"`` (free bodies, belts), ``"collision"`` (a link's shape:
        where collision shapes are shown) or ``"fallback"`` (the same, and where visuals are shown: a link
        without usable visuals)."""
        out = [(body.shape, None, 7 * body.index, PALETTE[body.index % len(PALETTE)], "always")
               for body in self.world.bodies]
        n_free = len(out)
        fallback = self._links.fallback
        for (_b, t, link, shape, pos, rot), slot, depth, belt in zip(self._links.bodies, self._links.slots,
                                                                     self._links.depths, self._links.belt_of):
            rgb = self._link_rgb(t, depth)
            group = "fallback" if (t, link) in fallback else "collision"
            if belt is not None:  # a belt: its track's colour, else rubber; none where the track says visual="false"
                track = self.world.articulated_systems[belt[0]].model.tracks[belt[1]]
                rgb = BELT_COLOR if track.color is None else tuple(float(c) for c in track.color[:3])
                group = "always"
                if not track.visual:
                    shape = None
            out.append((shape, (pos, rot), 7 * (n_free + slot), rgb, group))
        return out

    @property
    def hidden_bodies(self) -> list:
        """Body indices the viewer does not draw: the shapes of the belts whose track has ``visual="false"``
        (robots whose own meshes show the belt)."""
        n_free = len(self.world.bodies)
        return [n_free + k for k, (shape, *_x) in enumerate(self._drawn_bodies()[n_free:]) if shape is None]

    @property
    def visual_colors(self) -> np.ndarray:
        """The RGB colour in [0, 1] (before lighting) of each URDF visual drawn, shape (n, 3), in the order of
        the systems, their links and each link's visuals (a visual mesh that was not found is not drawn): its
        URDF colour, else the mean of the colours its mesh file gives its vertices, else the palette's."""
        return np.array(self._visual_rgb, float).reshape(-1, 3)

    def _build_bodies(self) -> None:
        import taichi as ti

        from ..backend import ti_real

        verts, normals, vq, cols = [], [], [], []
        tris = {"collision": [], "always": [], "visual": []}  # triangles by when they are drawn
        nv = 0

        def add(v, nrm, tri, placement, column, rgb, groups):  # (rgb: one colour, or one per vertex)
            nonlocal nv
            if placement is not None:  # into the link frame
                v, nrm = placement[0] + v @ placement[1].T, nrm @ placement[1].T
            verts.append(v)
            normals.append(nrm)
            for g in groups:
                tris[g].append(tri + nv)
            vq.append(np.full(len(v), column, np.int32))
            cols.append(np.broadcast_to(np.asarray(rgb, float), (len(v), 3)))
            nv += len(v)

        drawn = self._drawn_bodies()
        groups = {"always": ("always",), "collision": ("collision",), "fallback": ("collision", "visual")}
        for shape, placement, column, rgb, group in drawn:
            if shape is not None:  # (None: not drawn, no vertices)
                add(*tessellate(shape), placement, column, rgb, groups[group])
        n_free = len(self.world.bodies)
        self._visual_rgb = []
        for (t, _k, slot, depth, visual), mesh in zip(self._links.visuals, self._visual_meshes):
            if mesh is None:
                continue  # (not found: the link's collision shapes stand in)
            v, nrm, tri, own = mesh
            if visual.rgba is not None:  # the URDF's colour, else the mesh file's own, else the palette's
                rgb = tuple(float(c) for c in visual.rgba[:3])
            else:
                rgb = self._link_rgb(t, depth) if own is None else own
            self._visual_rgb.append(tuple(np.mean(np.reshape(rgb, (-1, 3)), axis=0)))
            add(v, nrm, tri, (visual.position, visual.rotation), 7 * (n_free + slot), rgb, ("visual",))
        self._body_rgb = np.array([rgb for *_x, rgb, _g in drawn], float).reshape(-1, 3)
        self._nv_body = nv
        nt = len(self._envs)
        self._b_poses = None
        if not nv:
            self._b_verts = self._b_normals = self._b_colors = self._b_idx = None
            return
        vec3 = ti.types.vector(3, ti.f32)
        # with articulated links, poses come from a viewer array of the shown envs (free bodies' copied from q,
        # the links' from their frames); without, the kernel reads q in place
        if len(self._links.rows):  # (links drawn by their shapes or by visuals alone)
            self._b_poses = ti.ndarray(ti_real(), (nt, 7 * (len(self.world.bodies) + len(self._links.rows))))
        self._b_local = ti.ndarray(vec3, (nv,))
        self._b_local.from_numpy(np.concatenate(verts).astype(np.float32))
        self._b_local_n = ti.ndarray(vec3, (nv,))
        self._b_local_n.from_numpy(np.concatenate(normals).astype(np.float32))
        self._b_vq = ti.ndarray(ti.i32, (nv,))
        self._b_vq.from_numpy(np.concatenate(vq))
        self._b_envs = ti.ndarray(ti.i32, (nt,))
        self._b_envs.from_numpy(np.array(self._envs if self._b_poses is None else range(nt), np.int32))
        self._b_offsets = ti.ndarray(vec3, (nt,))
        self._b_offsets.from_numpy(self._offsets.astype(np.float32))
        # the index buffer: [collision | always | visual], each for every tile, so that every mode is one range
        # (collision: the first two parts; visual: the last two; both: the last two, the first as wireframes)
        parts = []
        self._n_idx = {}
        for g in ("collision", "always", "visual"):
            tri = np.concatenate(tris[g]).ravel() if tris[g] else np.zeros(0, np.int32)
            parts += [tri + t * nv for t in range(nt)]
            self._n_idx[g] = tri.size * nt
        self._b_idx = _index_field(np.concatenate(parts))
        self._b_verts, self._b_normals = _field(nv * nt), _field(nv * nt)
        self._b_colors = _field(nv * nt, np.tile(np.concatenate(cols), (nt, 1)))

    def _build_ground(self) -> None:
        ground = self.world.ground
        self._g_verts = None
        if ground is None:
            return
        lo, hi = self._bounds
        centre = 0.5 * (lo + hi)[:2]
        half = 0.5 * max(hi[0] - lo[0], hi[1] - lo[1]) + 2.0
        cells = 24
        cell = 2.0 * half / cells
        verts, cols, idx = [], [], []
        for i in range(cells):
            for j in range(cells):
                x, y = centre[0] - half + i * cell, centre[1] - half + j * cell
                k = len(verts)
                verts += [[x, y, ground.height], [x + cell, y, ground.height], [x + cell, y + cell, ground.height],
                          [x, y + cell, ground.height]]
                shade = GROUND_SHADES[(i + j) % 2]
                cols += [[shade, shade, shade * 1.02]] * 4
                idx += [k, k + 1, k + 2, k, k + 2, k + 3]
        self._g_verts = _field(len(verts), np.array(verts))
        self._g_normals = _field(len(verts), np.tile([0.0, 0.0, 1.0], (len(verts), 1)))
        self._g_colors = _field(len(verts), np.array(cols))
        self._g_idx = _index_field(np.array(idx))

    def _default_camera(self) -> OrbitCamera:
        lo, hi = self._bounds
        target = 0.5 * (lo + hi)
        radius = 0.5 * float(np.linalg.norm(hi - lo))
        dist = max(radius / math.tan(math.radians(22.5)) * 1.05, 0.5)
        return OrbitCamera(target, dist, -math.pi / 2, math.radians(35.0))

    # ------------------------------------------------------------------ per frame
    def _update_bodies(self) -> None:
        self._frames = None
        if self._b_verts is None:
            return
        from ..backend import np_real
        from ..kernels.render.meshes import body_vertices

        q = self.world._state.q
        if self._b_poses is not None:  # tile t's poses in row t: the free bodies' from q, then every link's
            state = self.world._state
            n_free = len(self.world.bodies)
            link_poses, origins, rotations = self._links.poses(self._envs)
            poses = np.empty((len(self._envs), n_free + len(self._links.rows), 7))
            poses[:, :n_free] = state._layouts["q"].view(state.read("q"), "free_body")[self._envs]
            poses[:, n_free:] = link_poses
            self._b_poses.from_numpy(poses.reshape(len(self._envs), -1).astype(np_real()))
            self._frames = (origins, rotations)
            q = self._b_poses
        body_vertices(q, self._b_local, self._b_local_n, self._b_vq, self._b_envs, self._b_offsets,
                      self._b_verts, self._b_normals)
        gone = [t for t, e in enumerate(self._envs) if e in self._diverged()]
        if gone:  # a diverged env's state is not drawn: its bodies shrink to its tile's origin
            nv = self._b_local.shape[0]
            verts = self._b_verts.to_numpy()
            for t in gone:
                verts[t * nv:(t + 1) * nv] = self._offsets[t]
            self._b_verts.from_numpy(verts)

    def _follow_position(self, env: int) -> np.ndarray:
        """World position [m] of what the camera follows in ``env``: a body's centre or a system's root link."""
        if hasattr(self.follow, "get_position"):
            return self.follow.get_position(env)
        return self.follow.get_frame_position(self.follow.get_body_names()[0], env)

    def _draw_frames(self, scene) -> None:
        """Every link frame of the shown envs as three axes of ``frame_size`` (x red, y green, z blue)."""
        if not self.show_frames or not len(self._links.rows):
            return
        if self._frames is None:
            self._frames = self._links.frames(self._envs)
        lines, colors = axis_lines(self._frames[0] + self._offsets[:, None, :], self._frames[1], self.frame_size,
                                   AXIS_COLORS)
        if getattr(self, "_f_lines", None) is None or self._f_lines.shape[0] != len(lines):
            self._f_lines, self._f_colors = _field(len(lines)), _field(len(lines))
        self._f_lines.from_numpy(lines.astype(np.float32))
        self._f_colors.from_numpy(colors.astype(np.float32))
        scene.lines(self._f_lines, 2.0, per_vertex_color=self._f_colors, vertex_count=len(lines))

    def _draw_belts(self, scene) -> None:
        """Each belt's tread marks: segments across the belt, ``belt_spacing`` apart, moving with its travel."""
        if not self._links.belts:
            return
        if self._frames is None:
            self._frames = self._links.frames(self._envs)
        marks = self._links.belt_marks(self._envs, self._frames, self.belt_spacing) + self._offsets[:, None, None, :]
        lines = marks.reshape(-1, 3)
        if getattr(self, "_belt_lines", None) is None or self._belt_lines.shape[0] != len(lines):
            self._belt_lines = _field(len(lines))
        self._belt_lines.from_numpy(lines.astype(np.float32))
        scene.lines(self._belt_lines, 3.0, color=TREAD_COLOR, vertex_count=len(lines))

    def _contact_arrays(self):
        """World points [m], force vectors [N] and RGB colours of the shown envs' contacts (tile offsets
        applied): ``CONTACT_COLOR``, and for a contact on a belt its traction, from ``TRACTION_COLORS[0]``
        where its force is all normal to ``TRACTION_COLORS[1]`` where the tangential part is as large as the
        normal one (``|F_t| / F_n``, clipped to 1)."""
        pts, forces, colors = [], [], []
        belts = self._links.belt_bodies
        for t, e in enumerate(self._envs):
            c = self.world.get_contacts(e)
            if len(c):
                pts.append(c.positions + self._offsets[t])
                forces.append(c.impulses / self.world.dt)
                rgb = np.tile(np.asarray(CONTACT_COLOR, float), (len(c), 1))
                on_belt = np.isin(c.body_b, belts) | np.isin(c.body_a, belts)
                if on_belt.any():
                    normal = np.einsum("ij,ij->i", c.impulses, c.normals)
                    tangential = np.linalg.norm(c.impulses - normal[:, None] * c.normals, axis=1)
                    ratio = np.clip(tangential / np.maximum(normal, 1e-30), 0.0, 1.0)[on_belt, None]
                    low, high = (np.asarray(x, float) for x in TRACTION_COLORS)
                    rgb[on_belt] = (1.0 - ratio) * low + ratio * high
                colors.append(rgb)
        if not pts:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3))
        return np.concatenate(pts), np.concatenate(forces), np.concatenate(colors)

    def _draw_contacts(self, scene) -> None:
        if not (self.show_contacts or self.show_forces):
            return
        pts, forces, colors = self._contact_arrays()
        k = len(pts)
        if not k:
            return
        if k > self._contact_cap:
            self._contact_cap = max(256, 1 << math.ceil(math.log2(k)))
            self._c_pts = _field(self._contact_cap)
            self._c_rgb = _field(self._contact_cap)
            self._c_lines = _field(2 * self._contact_cap)
        buf = np.zeros((self._contact_cap, 3), np.float32)
        buf[:k] = pts
        self._c_pts.from_numpy(buf)
        radius = 0.004 * max(float(np.max(self._bounds[1] - self._bounds[0])), 0.5)
        if self.show_contacts:
            if self._links.belt_bodies.size:  # (belt contacts coloured by their traction)
                buf[:k] = colors
                self._c_rgb.from_numpy(buf)
                scene.particles(self._c_pts, radius, per_vertex_color=self._c_rgb, index_count=k)
            else:
                scene.particles(self._c_pts, radius, color=CONTACT_COLOR, index_count=k)
        if self.show_forces:
            lines = np.zeros((2 * self._contact_cap, 3), np.float32)
            lines[0:2 * k:2] = pts
            lines[1:2 * k:2] = pts + self.force_scale * forces
            self._c_lines.from_numpy(lines)
            scene.lines(self._c_lines, 2.0, color=FORCE_COLOR, vertex_count=2 * k)

    def _render(self) -> None:
        import taichi as ti

        if not _window.owns(self):
            raise RuntimeError("this viewer's window was closed or taken over by a newer Viewer "
                               "(GGUI allows one window per process)")
        self._update_terrain()
        self._update_bodies()
        if self.follow is not None:
            t = self._envs.index(self.env) if self.env in self._envs else 0
            self.camera.target = self._follow_position(self._envs[t]) + self._offsets[t]
        win = self._window
        scene = win.get_scene()
        cam = ti.ui.Camera()
        self.camera.apply(cam)
        scene.set_camera(cam)
        scene.ambient_light((0.45, 0.45, 0.45))
        right, up, _fwd = self.camera.basis()  # a light above and to the right of the eye, moving with it
        light = self.camera.eye + self.camera.distance * (0.4 * right + 0.8 * up)
        scene.point_light(tuple(map(float, light)), (0.75, 0.75, 0.75))
        if self._g_verts is not None:
            self._mesh(scene, self._g_verts, self._g_idx, self._g_normals, self._g_colors, self._g_idx.shape[0])
        if self._n_terrain_idx:
            self._mesh(scene, self._t_verts, self._t_idx, self._t_normals, self._t_colors, self._n_terrain_idx,
                       two_sided=True)
        if self._b_verts is not None:
            n = self._n_idx
            if self._show == "collision":
                ranges = [(0, n["collision"] + n["always"], False)]
            else:
                ranges = [(n["collision"], n["always"] + n["visual"], False)]
                if self._show == "both":
                    ranges.append((0, n["collision"], True))
            for offset, count, wireframe in ranges:
                if count:
                    self._mesh(scene, self._b_verts, self._b_idx, self._b_normals, self._b_colors, count,
                               index_offset=offset, wireframe=wireframe)
        self._draw_contacts(scene)
        self._draw_frames(scene)
        self._draw_belts(scene)
        self._draw_sand(scene)
        canvas = win.get_canvas()
        canvas.set_background_color(self.background)
        canvas.scene(scene)
        self._overlay()
        self.stats["frames"] += 1

    def _mesh(self, scene, vertices, indices, normals, colors, index_count: int, two_sided: bool = False,
              index_offset: int = 0, wireframe: bool = False) -> None:
        """Submit one mesh to GGUI, as a single instance placed by an identity transform.

        GGUI's mesh vertex shader (Taichi 1.7) always reads a per-instance model matrix from a storage buffer
        and blends it in as ``I * (1 - a) + M * a``, with ``a = 0`` for a plain ``scene.mesh``. That buffer is
        then never written: it holds whatever the driver's memory held before. Where that happens to be a NaN
        or an infinity, ``M * 0`` is NaN, every vertex of the mesh is NaN and the whole mesh vanishes from the
        frame (intermittently, since it depends on memory reuse; on lavapipe, about half the frames of
        ``scenes/cradle_and_pile.py`` lost a mesh). ``mesh_instance`` with our own identity transform fills the buffer, so
        ``M = I`` and ``a = 1``.
        """
        scene.mesh_instance(vertices, indices=indices, normals=normals, per_vertex_color=colors,
                            two_sided=two_sided, transforms=self._identity, instance_count=1,
                            index_offset=int(index_offset), index_count=int(index_count), show_wireframe=wireframe)

    # ------------------------------------------------------------------ interaction
    def select_env(self, env: int) -> None:
        """Show (and follow the body in) ``env``; with one tile this switches the tile to it."""
        check_env(env, self.world.n_envs)
        if env is None:
            raise TypeError("env must be an int")
        self.env = int(env)
        if len(self._envs) == 1 and self._envs[0] != self.env:
            self._envs = [self.env]
            if self._b_verts is not None and self._b_poses is None:  # (a pose array holds the shown envs)
                self._b_envs.from_numpy(np.array(self._envs, np.int32))
            for entry in self._maps:
                entry["drawn"][:] = -1

    def apply_key(self, key: str, on_reset=None) -> bool:
        """Act on one key press (GGUI key names: ``" "`` space, letters, ``"["``, ``"]"``, ``"Escape"``).

        Space pauses/resumes, ``n`` asks for one frame while paused (returns True), ``r`` calls ``on_reset``,
        ``f`` follows the first body (or system) or stops following, ``[`` / ``]`` show the previous/next env, ``c``
        toggles contact points, ``v`` shows the links' visuals, collision shapes or both in turn (:attr:`showing`),
        Escape closes the window.
        """
        import taichi as ti

        if key == ti.ui.ESCAPE:
            if _window.owns(self) and not self.headless:
                self._window.running = False
        elif key == ti.ui.SPACE:
            self.paused = not self.paused
        elif key == "n":
            return True
        elif key == "r" and on_reset is not None:
            on_reset()
        elif key == "f":
            candidates = self.world.bodies + self.world.articulated_systems
            self.follow = None if self.follow is not None or not candidates else candidates[0]
        elif key in ("[", "]"):
            self.select_env((self.env + (1 if key == "]" else -1)) % self.world.n_envs)
        elif key == "c":
            self.show_contacts = not self.show_contacts
        elif key == "v":
            self.showing = SHOW_MODES[(SHOW_MODES.index(self._show) + 1) % len(SHOW_MODES)]
        return False

    def apply_drag(self, button: str, dx: float, dy: float) -> None:
        """Move the camera for a mouse drag of (dx, dy) window fractions (x right, y up): ``"left"`` orbits,
        ``"right"`` pans, ``"middle"`` zooms (dragging up moves closer)."""
        if button == "left":
            self.camera.orbit(-3.0 * dx, -2.0 * dy)
        elif button == "right":
            self.camera.pan(-dx, -dy)
        elif button == "middle":
            self.camera.zoom(math.exp(-2.0 * dy))
        else:
            raise ValueError(f"button must be 'left', 'right' or 'middle', got {button!r}")

    def handle_input(self, on_reset=None) -> dict:
        """Poll the window's key presses and mouse drags and apply them (:meth:`apply_key`,
        :meth:`apply_drag`; z / x held zoom in / out). Returns ``{"step_once": bool}``. A headless viewer
        has no input: it returns at once."""
        import taichi as ti

        out = {"step_once": False}
        if self.headless or not _window.owns(self):
            return out
        win = self._window
        for event in win.get_events(ti.ui.PRESS):
            out["step_once"] |= self.apply_key(event.key, on_reset)
        pos = np.array(win.get_cursor_pos(), float)
        if self._mouse is not None:
            dx, dy = pos - self._mouse
            for button, name in ((ti.ui.LMB, "left"), (ti.ui.RMB, "right"), (ti.ui.MMB, "middle")):
                if win.is_pressed(button):
                    self.apply_drag(name, dx, dy)
                    break
        if win.is_pressed("z"):
            self.camera.zoom(0.97)
        if win.is_pressed("x"):
            self.camera.zoom(1.03)
        self._mouse = pos
        return out
