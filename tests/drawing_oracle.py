"""What a viewer's picture should show, pixel by pixel, worked out from the world's own geometry.

3D viewer: each sampled pixel's view ray (``OrbitCamera.rays``, the inverse of the renderer's projection) is
cast in the env of every tile with ``World.ray_test_batch`` (passing through the link shapes the viewer does
not draw), and against what the viewer draws of articulated links, posed from the link frames the systems
report (``get_frame_position/orientation``): their collision shapes, or where the viewer shows URDF visuals,
each link's visuals (shapes cast in closed form, mesh files as trimesh reads them, triangle by triangle), a
link without usable visuals by its collision shapes, belts always. The nearest hit names the body, visual,
height map or ground that the pixel must show. Lighting (an ambient and a point light, both grey) scales an
object's colour by one factor k in [0.45, 1.2] in all three channels, so a pixel shows object X when it equals k
times X's colour (a soil bed coloured by sinkage: a non-negative mix of its base and rut colours) to within 8-bit
rounding, plus, on a height map, the colour change across the cell (the rasterizer interpolates vertex colours
over a triangle, the oracle bilinearly over the cell).

Planar viewer: flat colours, no lighting. A pixel inside an object (``get_geometry``: its shape at its pose) shows
the colour of its kind, the topmost kind where objects overlap; elsewhere the background. Walls (the objects'
lines) must be drawn along their length.

Samples near an edge (the five rays at the pixel and 1.5 px to each side do not agree on the object) are left
out, and so are pixels covered by the drawing's marks (contact dots, lines, the text overlay).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

QUANT = 1.5  # [8-bit levels] rounding of the stored colour and of the lighting factor
K_RANGE = (0.40, 1.25)  # lighting factor: ambient 0.45 to ambient + point light 1.2, with rounding margin
STENCIL = 1.5  # [px] side offsets of the edge test


@dataclass
class Verdict:
    """Samples per object: ``expected[key]`` interior samples the geometry says show object ``key``, and
    ``matched[key]`` of them that do; ``wrong`` lists (pixel, key, rgb) of those that do not."""

    expected: dict = field(default_factory=dict)
    matched: dict = field(default_factory=dict)
    wrong: list = field(default_factory=list)

    def add(self, key, ok: bool, px, rgb) -> None:
        self.expected[key] = self.expected.get(key, 0) + 1
        self.matched[key] = self.matched.get(key, 0) + int(ok)
        if not ok:
            self.wrong.append((tuple(float(c) for c in px), key, tuple(int(c) for c in rgb)))

    def fraction(self, key) -> float:
        return self.matched.get(key, 0) / max(self.expected.get(key, 0), 1)

    def failing(self, min_fraction: float) -> list:
        """(key, matched, expected) of the objects shown in fewer than ``min_fraction`` of their samples."""
        return [(k, self.matched[k], self.expected[k]) for k in sorted(self.expected, key=str)
                if self.fraction(k) < min_fraction]

    def objects(self) -> list:
        """Keys of the objects sampled (bodies, maps, planar objects and walls), without ground and background."""
        return [k for k in self.expected if k[0] not in ("ground", "background")]


@dataclass
class Expectation:
    """What the sampled pixels must show: for sample i, object ``keys[i]``, as a lit mix of ``bases[i]``
    (m, 3) within ``tol[i]`` levels (``lit`` False: exactly one of ``bases[i]``, unlit), unless the pixel
    shows one of the ``marks`` colours (drawn over everything)."""

    px: np.ndarray
    keys: list
    bases: list
    tol: np.ndarray
    lit: bool
    marks: object  # colours (k, 3); for a lit expectation a list of (3,) colours or (2, 3) colour-map ends
    near: list = field(default_factory=list)  # (key, colour, pixels (k, 2)): that colour within 1 px of each

    def judge(self, image: np.ndarray) -> Verdict:
        v = Verdict()
        rgb = pixel_rgb(image, self.px)
        n = len(rgb)
        pairs = np.stack([np.concatenate([b, b])[:2] for b in self.bases]) if n else np.zeros((0, 2, 3))
        if self.lit:
            marked = np.zeros(n, bool)
            for m in self.marks:  # (a mark: one colour (3,), or a mix of two (2, 3): a colour map's ends)
                m = np.asarray(m, float).reshape(-1, 3)
                marked |= shows(rgb, np.broadcast_to(m, (n, len(m), 3)), 3 * QUANT)
            ok = shows(rgb, pairs, self.tol)
        else:
            marked = (np.abs(255.0 * self.marks[None] - rgb[:, None]).max(axis=2) <= QUANT).any(axis=1)
            ok = (np.abs(255.0 * pairs - rgb[:, None]).max(axis=2) <= self.tol[:, None]).any(axis=1)
        for i in np.nonzero(~marked)[0]:
            v.add(self.keys[i], bool(ok[i]), self.px[i], rgb[i])
        for key, colour, pts in self.near:  # lines: some pixel of the 3 x 3 block around each point
            for q in pts:
                c, r = int(np.floor(q[0])), int(np.floor(q[1]))
                block = image[max(r - 1, 0):r + 2, max(c - 1, 0):c + 2].reshape(-1, 3).astype(float)
                ok = bool(len(block)) and bool((np.abs(block - 255.0 * colour).max(axis=1) <= QUANT).any())
                v.add(key, ok, q, block[len(block) // 2] if len(block) else (0, 0, 0))
        return v


# ---------------------------------------------------------------------------------------------- colour fits
def fit_residual(rgb: np.ndarray, bases: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least squares of pixels ``rgb`` (n, 3) [8-bit] as a non-negative mix ``sum_i w_i b_i`` of one or two
    colours ``bases`` (n, m, 3) in [0, 1], m = 1 or 2, scaled to 8 bits. Channels at 255 (clipped by the
    lighting) only require the mix to reach 254. Returns the RMS residual per pixel [8-bit levels] and the
    brightness of the fit relative to the brightest basis (the lighting factor for m = 1)."""
    p = np.asarray(rgb, float)
    b = 255.0 * np.asarray(bases, float)
    free = p < 254.5  # unclipped channels carry the fit
    best_r = np.full(len(p), np.inf)
    best_k = np.zeros(len(p))
    m = b.shape[1]
    for pick in ([0], [1], [0, 1]) if m == 2 else ([0],):
        a = b[:, pick, :]  # (n, j, 3)
        aw = a * free[:, None, :]
        g = np.einsum("njc,nkc->njk", aw, a) + 1e-9 * np.eye(len(pick))
        w = np.linalg.solve(g, np.einsum("njc,nc->nj", aw, p)[..., None])[..., 0]
        ok = np.all(w >= 0.0, axis=1)
        fit = np.einsum("nj,njc->nc", w, a)
        err = np.where(free, p - fit, np.maximum(254.0 - fit, 0.0))
        r = np.sqrt(np.mean(err ** 2, axis=1))
        r[~ok] = np.inf
        k = np.linalg.norm(fit, axis=1) / np.maximum(np.linalg.norm(b, axis=2).max(axis=1), 1e-9)
        better = r < best_r
        best_r[better], best_k[better] = r[better], k[better]
    return best_r, best_k


def shows(rgb, bases, tol) -> np.ndarray:
    """Pixels that show a lit object of colour ``bases`` (see :func:`fit_residual`) within ``tol`` levels."""
    r, k = fit_residual(rgb, bases)
    return (r <= tol) & (k >= K_RANGE[0]) & (k <= K_RANGE[1])


def sample_grid(width: int, height: int, step: int) -> np.ndarray:
    """Pixel centres (column + 0.5, row + 0.5) every ``step`` pixels, shape (k, 2)."""
    cols, rows = np.meshgrid(np.arange(step // 2, width, step), np.arange(step // 2, height, step))
    return np.stack([cols.ravel(), rows.ravel()], 1) + 0.5


def in_box(px, box) -> np.ndarray:
    if box is None:
        return np.zeros(len(px), bool)
    x0, y0, x1, y1 = box
    return (px[:, 0] >= x0) & (px[:, 0] < x1) & (px[:, 1] >= y0) & (px[:, 1] < y1)


def pixel_rgb(image: np.ndarray, px: np.ndarray) -> np.ndarray:
    col = np.clip(np.floor(px[:, 0]).astype(int), 0, image.shape[1] - 1)
    row = np.clip(np.floor(px[:, 1]).astype(int), 0, image.shape[0] - 1)
    return image[row, col].astype(float)


# ---------------------------------------------------------------------------------------------- 3D viewer
def _draws_visuals(link) -> bool:
    """Whether a viewer showing visuals draws ``link`` (a URDF :class:`Link`) by them: it has some, and every
    visual mesh of it was found."""
    return bool(link.visuals) and all(v.kind != "mesh" or v.path is not None for v in link.visuals)


def link_bodies(world, env: int, show: str = "collision") -> list:
    """``(body index, Shape, world position [m], rotation)`` of every shape on an articulated link in ``env``
    that a viewer showing ``show`` draws as a shape: its link frame from the system's frame queries, then its
    placement on the link (the model numbers these bodies after the free ones, system by system, in
    ``collision_bodies`` order). Showing visuals, only belts and the shapes of links drawn without visuals."""
    out = []
    b = world._model.n_free
    for t, system in enumerate(world.articulated_systems):
        names = system.get_body_names()
        belts = system.collision_body_tracks()
        for k, (link, shape, pos, rot) in enumerate(system.collision_bodies()):
            assert world._model.body_link_index[b] == (t, link)
            if show == "collision" or belts[k] >= 0 or not _draws_visuals(system.model.links[link]):
                frame_p = system.get_frame_position(names[link], env)
                frame_r = system.get_frame_orientation(names[link], env)
                out.append((b, shape, frame_p + frame_r @ pos, frame_r @ rot))
            b += 1
    return out


def link_visuals(world, env: int) -> list:
    """``(Shape or None, triangles (t, 3, 3) or None, world position [m], rotation)`` of every URDF visual a
    viewer showing visuals draws, in ``env``, in the order of ``Viewer.visual_colors`` (systems, links, each
    link's visuals; a mesh that was not found is not drawn): a shape visual as the :mod:`taichi_terra.bodies.shapes`
    shape of its dimensions (a cylinder's and a capsule's axis z), a mesh visual as the file's triangles, scaled,
    in the visual's frame."""
    import trimesh

    from taichi_terra.bodies import shapes as S

    out = []
    for system in world.articulated_systems:
        names = system.get_body_names()
        for k, link in enumerate(system.model.links):
            frame_p = system.get_frame_position(names[k], env)
            frame_r = system.get_frame_orientation(names[k], env)
            for v in link.visuals:
                p = np.asarray(v.params, float)
                shape = tris = None
                if v.kind == "mesh":
                    if v.path is None:
                        continue
                    mesh = trimesh.load(v.path, force="mesh")
                    if mesh.units is not None:  # (a file that states its unit is in that unit, not metres)
                        mesh.convert_units("meters")
                    tris = np.asarray(mesh.vertices, float)[np.asarray(mesh.faces)] * p
                elif v.kind == "box":
                    shape = S.box(p[0], p[1], p[2], 1.0)
                elif v.kind == "sphere":
                    shape = S.sphere(p[0], 1.0)
                elif v.kind == "cylinder":
                    shape = S.cylinder(p[0], p[1], 1.0)
                else:
                    shape = S.capsule(p[0], p[1], 1.0)
                out.append((shape, tris, frame_p + frame_r @ v.position, frame_r @ v.rotation))
    return out


def visual_links(world) -> list:
    """The name of the link of each visual of :func:`link_visuals`, in its order."""
    return [system.get_body_names()[k] for system in world.articulated_systems for k, link in enumerate(system.model.links)
            for v in link.visuals if v.kind != "mesh" or v.path is not None]


def ray_triangles_entry(o: np.ndarray, d: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Distance [m] along unit rays ``o + t d`` ((k, 3) each) to the first of ``tris`` (t, 3, 3) they cross
    (Moller-Trumbore; inf for a miss). Rays that miss the triangles' bounding sphere are not tested."""
    out = np.full(len(o), np.inf)
    centre = 0.5 * (tris.reshape(-1, 3).min(axis=0) + tris.reshape(-1, 3).max(axis=0))
    radius = np.linalg.norm(tris.reshape(-1, 3) - centre, axis=1).max()
    oc = o - centre
    b = np.einsum("ij,ij->i", oc, d)
    near = np.nonzero(b * b - (np.einsum("ij,ij->i", oc, oc) - radius * radius) >= 0.0)[0]
    e1, e2 = tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
    for chunk in np.array_split(near, max(1, len(near) * len(tris) // 2_000_000 + 1)):
        oo, dd = o[chunk], d[chunk]
        pv = np.cross(dd[:, None, :], e2[None])
        det = np.einsum("ptk,tk->pt", pv, e1)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = np.where(np.abs(det) > 1e-15, 1.0 / det, np.nan)
            sv = oo[:, None, :] - tris[None, :, 0]
            u = np.einsum("ptk,ptk->pt", pv, sv) * inv
            qv = np.cross(sv, e1[None])
            v = np.einsum("pk,ptk->pt", dd, qv) * inv
            t = np.einsum("tk,ptk->pt", e2, qv) * inv
        t = np.where((u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (t > 0.0), t, np.inf)
        out[chunk] = t.min(axis=1)
    return out


def _quadratic_entry(a, b, c):
    """Smallest root t >= 0 of a t^2 + 2 b t + c = 0 (inf where none), elementwise."""
    disc = b * b - a * c
    ok = (disc >= 0.0) & (a > 1e-300)
    t = np.where(ok, (-b - np.sqrt(np.maximum(disc, 0.0))) / np.where(a > 1e-300, a, 1.0), np.inf)
    return np.where(t >= 0.0, t, np.inf)


def _sphere_entry(o, d, centre, r):
    oc = o - centre
    return _quadratic_entry(np.einsum("ij,ij->i", d, d), np.einsum("ij,ij->i", oc, d),
                            np.einsum("ij,ij->i", oc, oc) - r * r)


def _side_entry(o, d, r, h):
    """Entry into the side of the z-axis cylinder of radius r, |z| <= h."""
    t = _quadratic_entry(d[:, 0] ** 2 + d[:, 1] ** 2, o[:, 0] * d[:, 0] + o[:, 1] * d[:, 1],
                         o[:, 0] ** 2 + o[:, 1] ** 2 - r * r)
    z = o[:, 2] + np.where(np.isfinite(t), t, 0.0) * d[:, 2]
    return np.where(np.abs(z) <= h, t, np.inf)


def _planes_entry(o, d, planes):
    """Entry into the convex set n . p <= off of all ``planes`` (f, 4): the last of the entering crossings,
    if it comes before the first leaving one."""
    t_in, t_out = np.zeros(len(o)), np.full(len(o), np.inf)
    for n, off in zip(planes[:, :3], planes[:, 3]):
        dn, on = d @ n, o @ n
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (off - on) / dn
        t_in = np.where(dn < 0.0, np.maximum(t_in, t), t_in)
        t_out = np.where(dn > 0.0, np.minimum(t_out, t), t_out)
        t_out = np.where((dn == 0.0) & (on > off), -np.inf, t_out)
    return np.where(t_in <= t_out, t_in, np.inf)


def ray_shape_entry(shape, o: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Distance [m] along unit rays ``o + t d`` (shape frame, (k, 3) each) to where they enter ``shape``; inf
    for a miss (and for rays that start inside)."""
    from taichi_terra.bodies.shapes import ShapeType

    r, h = shape.params[0], shape.params[1]
    if shape.type == ShapeType.SPHERE:
        return _sphere_entry(o, d, np.zeros(3), r)
    if shape.type == ShapeType.CAPSULE:
        return np.minimum.reduce([_side_entry(o, d, r, h), _sphere_entry(o, d, np.array([0.0, 0.0, h]), r),
                                  _sphere_entry(o, d, np.array([0.0, 0.0, -h]), r)])
    if shape.type == ShapeType.CYLINDER:
        with np.errstate(divide="ignore", invalid="ignore"):
            caps = [(np.sign(z) * h - o[:, 2]) / d[:, 2] for z in (1.0, -1.0)]
        caps = [np.where((t >= 0.0) & (np.hypot(o[:, 0] + t * d[:, 0], o[:, 1] + t * d[:, 1]) <= r)
                         & (np.abs(o[:, 2]) > h), t, np.inf) for t in caps]
        return np.minimum.reduce([_side_entry(o, d, r, h)] + caps)
    t = _planes_entry(o, d, np.asarray(shape.planes, float))  # a box or a convex mesh
    inside = np.all(o @ shape.planes[:, :3].T <= shape.planes[:, 3], axis=1)
    return np.where(inside, np.inf, t)


def cast_pixels(viewer, world, px: np.ndarray) -> dict:
    """The first thing each pixel's view ray meets across the viewer's tiles: ``kind`` (0 none, 1 ground,
    2 height map, 3 body, 5 URDF visual), ``index``, ``tile``, ``point`` (in the env's own frame) [m]."""
    show = getattr(viewer, "showing", "collision")
    assert show in ("visual", "collision"), "the oracle has no wireframes (show='both')"
    eye, d = viewer.camera.rays(px, viewer.width, viewer.height)
    offsets = viewer.tile_offsets
    origins = np.tile(eye, (world.n_envs, len(px), 1))
    for t, e in enumerate(viewer.envs):
        origins[e] = eye - offsets[t]  # the tile's env, seen from the eye moved by the tile's offset
    dirs = np.broadcast_to(d, origins.shape)
    hits = world.ray_test_batch(origins, dirs, 1e4)
    dist, what, index = (np.array(hits[k]) for k in ("distance", "kind", "index"))
    if show != "collision":  # the world's rays meet every link shape: pass through the ones not drawn
        drawn = {b for e in viewer.envs for b, *_x in link_bodies(world, e, show)}
        shapes = {e: {b: rest for b, *rest in link_bodies(world, e, "collision")} for e in viewer.envs}
        start = np.zeros(dist.shape)  # how far along its ray each cast now starts
        for _ in range(8):
            through = (what == 4) & ~np.isin(index, list(drawn))
            through[[e for e in range(world.n_envs) if e not in viewer.envs]] = False
            if not through.any():
                break
            for e, k in zip(*np.nonzero(through)):  # past the shape: the entry of the reversed ray beyond it
                shape, pos, rot = shapes[e][int(index[e, k])]
                far = start[e, k] + dist[e, k] + 2.0 * shape.bounding_radius + 1e-3
                back = ray_shape_entry(shape, ((origins[e, k] + far * d[k] - pos) @ rot)[None], (-d[k] @ rot)[None])
                start[e, k] = far - back[0] + 1e-6
            moved = world.ray_test_batch(origins + start[..., None] * dirs, dirs, 1e4)
            for key, arr in (("distance", dist), ("kind", what), ("index", index)):
                arr[through] = moved[key][through]
        dist = dist + start
    envs = np.array(viewer.envs)
    dist, what, index = dist[envs], what[envs], index[envs]  # (n_tiles, k)
    what[what == 4] = 3  # a link shape is a body here (body_colors covers both, by body index)
    for t, e in enumerate(viewer.envs):  # what articulated links show, cast again in numpy
        for b, shape, pos, rot in link_bodies(world, e, show):
            t_hit = ray_shape_entry(shape, (origins[e] - pos) @ rot, d @ rot)
            nearer = t_hit < dist[t]
            dist[t][nearer], what[t][nearer], index[t][nearer] = t_hit[nearer], 3, b
        for i, (shape, tris, pos, rot) in enumerate(link_visuals(world, e) if show == "visual" else ()):
            o_local, d_local = (origins[e] - pos) @ rot, d @ rot
            t_hit = ray_shape_entry(shape, o_local, d_local) if tris is None else \
                ray_triangles_entry(o_local, d_local, tris)
            nearer = t_hit < dist[t]
            dist[t][nearer], what[t][nearer], index[t][nearer] = t_hit[nearer], 5, i
    tile = np.argmin(dist, axis=0)
    k = np.arange(len(px))
    kind = np.where(np.isfinite(dist[tile, k]), what[tile, k], 0)
    point = origins[envs][tile, k] + np.where(np.isfinite(dist[tile, k]), dist[tile, k], 0.0)[:, None] * d
    return {"kind": kind, "index": index[tile, k], "tile": tile, "point": point}


def _map_colour(viewer, hm, env, points):
    """(colour bases (n, m, 3), tolerance (n,)) of a height map at world ``points`` of ``env``: its vertex
    colours interpolated over the cell, mixed towards the rut colour on a soil bed coloured by sinkage."""
    local = (np.asarray(points) - hm.get_position()) @ hm.get_rotation_matrix()
    nx, ny = hm.x_samples, hm.y_samples
    gx = (local[:, 0] - (hm.center_x - 0.5 * hm.x_size)) / (hm.x_size / (nx - 1))
    gy = (local[:, 1] - (hm.center_y - 0.5 * hm.y_size)) / (hm.y_size / (ny - 1))
    x0 = np.clip(np.floor(gx).astype(int), 0, nx - 2)
    y0 = np.clip(np.floor(gy).astype(int), 0, ny - 2)
    fx, fy = np.clip(gx - x0, 0, 1)[:, None], np.clip(gy - y0, 0, 1)[:, None]
    c = hm.get_colors().reshape(ny, nx, 3)
    corners = np.stack([c[y0, x0], c[y0, x0 + 1], c[y0 + 1, x0], c[y0 + 1, x0 + 1]], 1)
    base = ((1 - fx) * (1 - fy)) * corners[:, 0] + (fx * (1 - fy)) * corners[:, 1] + \
        ((1 - fx) * fy) * corners[:, 2] + (fx * fy) * corners[:, 3]
    spread = np.ptp(corners, axis=1).max(axis=1)  # the colour change across the cell
    tol = QUANT + 255.0 * K_RANGE[1] * spread
    if hm.is_soil and viewer.color_by != "base":
        rut = np.broadcast_to(np.asarray(viewer.rut_color, float), base.shape)
        return np.stack([base, rut], 1), tol
    return base[:, None, :], tol


def _interior(casts: list, keys=("kind", "index", "tile")) -> np.ndarray:
    """Samples whose stencil rays all meet the same object in the same tile."""
    c0 = casts[0]
    ok = np.ones(len(c0[keys[0]]), bool)
    for c in casts[1:]:
        for k in keys:
            ok &= c[k] == c0[k]
    return ok


STENCIL_OFFSETS = np.array([[0.0, 0.0], [STENCIL, 0.0], [-STENCIL, 0.0], [0.0, STENCIL], [0.0, -STENCIL]])


def expect_3d(viewer, world, px: np.ndarray) -> Expectation:
    """What a 3D viewer's pixels at positions ``px`` (k, 2) must show, from ray casts in the current state."""
    from taichi_terra.viewer.sand_layer import PLATE_IDLE, SAND_COLOR, STRESS_COLORS
    from taichi_terra.viewer.viewer import CONTACT_COLOR, FORCE_COLOR, GROUND_SHADES, TREAD_COLOR

    px = px[~in_box(px, viewer.overlay_box)]
    casts = [cast_pixels(viewer, world, px + o) for o in STENCIL_OFFSETS]
    c0 = casts[0]
    keep = np.nonzero(_interior(casts))[0]
    keys, bases, tol = [], [], []
    colours = viewer.body_colors
    background = np.asarray(viewer.background, float)
    ground = np.array([1.0, 1.0, 1.02]) * GROUND_SHADES[1]
    for i in keep:
        kind, index, tile = int(c0["kind"][i]), int(c0["index"][i]), int(c0["tile"][i])
        if kind == 0:  # unlit: the background colour itself (k = 1)
            keys.append(("background",)), bases.append(background[None]), tol.append(QUANT)
        elif kind == 1:  # the ground is drawn as a finite checkered square; beyond it the background shows
            keys.append(("ground",)), bases.append(np.stack([ground, background])), tol.append(2 * QUANT)
        elif kind == 3:
            keys.append(("body", index, tile)), bases.append(colours[index][None]), tol.append(QUANT)
        elif kind == 5:
            keys.append(("visual", index, tile)), bases.append(viewer.visual_colors[index][None]), tol.append(QUANT)
        else:
            b, t = _map_colour(viewer, world.heightmaps[index], viewer.envs[tile], c0["point"][i:i + 1])
            keys.append(("map", index, tile)), bases.append(b[0]), tol.append(t[0])
    marks = [np.asarray(c, float) for c in (CONTACT_COLOR, FORCE_COLOR, TREAD_COLOR)]
    if world.plate_sets or world.granular_media:  # RFT plates (dots on their bodies) and sand grid lines
        marks += [np.asarray(PLATE_IDLE, float), np.asarray(STRESS_COLORS, float), np.asarray(SAND_COLOR, float)]
    return Expectation(px[keep], keys, bases, np.array(tol), True, marks)


def centre_pixels(viewer, world) -> np.ndarray:
    """Where each body's centre and each height map's grid centre project, in every tile, shape (k, 2)."""
    pts = []
    for t, e in enumerate(viewer.envs):
        off = viewer.tile_offsets[t]
        for body in world.bodies:
            pts.append(body.get_position(e) + off)
        for _b, _shape, pos, _rot in link_bodies(world, e, getattr(viewer, "showing", "collision")):
            pts.append(pos + off)
        if getattr(viewer, "showing", "collision") == "visual":
            for _shape, _tris, pos, _rot in link_visuals(world, e):
                pts.append(pos + off)
        for hm in world.heightmaps:  # the grid sample nearest its centre, on the surface
            nx, ny = hm.x_samples, hm.y_samples
            h = hm.get_surface_heights(e)[(ny // 2) * nx + nx // 2]
            local = np.array([hm.center_x + (nx // 2 - 0.5 * (nx - 1)) * hm.x_size / (nx - 1),
                              hm.center_y + (ny // 2 - 0.5 * (ny - 1)) * hm.y_size / (ny - 1), h])
            pts.append(hm.get_rotation_matrix() @ local + hm.get_position() + off)
    uv = viewer.camera.project(np.array(pts).reshape(-1, 3), viewer.width, viewer.height)
    uv = uv[np.all(np.isfinite(uv), axis=1)]
    inside = (uv[:, 0] >= 0) & (uv[:, 0] < viewer.width) & (uv[:, 1] >= 0) & (uv[:, 1] < viewer.height)
    return np.floor(uv[inside]) + 0.5  # the pixel the centre falls in


# ---------------------------------------------------------------------------------------------- planar viewer
def _areas_and_lines(world, env: int):
    """Each object's area ((index, kind code, polygonal geometry), objects with area only) and its lines
    ((index, LineString), walls and grid-map boundaries), posed in env ``env`` [m]."""
    import shapely

    areas, lines = [], []
    for obj in world.objects:
        parts = shapely.get_parts(obj.get_geometry(env))
        polys = [g for g in parts if g.geom_type == "Polygon"]
        if polys:
            areas.append((obj.index, {"static": 0, "passive": 1, "driven": 2}[obj.kind], shapely.union_all(polys)))
        lines += [(obj.index, g) for g in parts if g.geom_type == "LineString"]
    return areas, lines


def expect_planar(viewer, world, px: np.ndarray) -> Expectation:
    """What a planar viewer's pixels at positions ``px`` (k, 2) must show: the kind colour of the topmost object
    containing the pixel centre, or the background; and every wall (segment piece) drawn along its length."""
    import shapely

    kind_rgb = np.array([viewer.colors[k] for k in ("static", "passive", "driven")])
    marks = np.array([viewer.colors[k] for k in ("segment", "spin", "heading", "contact")])
    posed = {e: _areas_and_lines(world, e) for e in viewer.envs}
    tops = []
    for o in STENCIL_OFFSETS:  # planar ``project`` puts pixel centres at integers
        top = np.full(len(px), -1)
        top_kind = np.full(len(px), -1)
        tile = np.full(len(px), -1)
        clash = np.zeros(len(px), bool)
        for t, e in enumerate(viewer.envs):
            pts = viewer.unproject(px + o - 0.5, env=e)
            for index, kind, geom in posed[e][0]:
                inside = shapely.contains_xy(geom, pts[:, 0], pts[:, 1])
                clash |= inside & (top_kind == kind)
                higher = inside & (kind > top_kind)
                top[higher], top_kind[higher], tile[higher] = index, kind, t
                clash[higher] = False
        top[clash] = -2  # two objects of one kind overlap here: the drawing order decides, skip
        tops.append({"top": top, "tile": tile})
    keep = np.nonzero(_interior(tops, ("top", "tile")) & (tops[0]["top"] != -2))[0]
    kinds = {o.index: {"static": 0, "passive": 1, "driven": 2}[o.kind] for o in world.objects}
    keys, bases = [], []
    for i in keep:
        obj, t = int(tops[0]["top"][i]), int(tops[0]["tile"][i])
        if obj < 0:
            keys.append(("background",)), bases.append(np.asarray(viewer.background, float)[None])
        else:
            keys.append(("object", obj, t)), bases.append(kind_rgb[kinds[obj]][None])
    near = []
    for t, e in enumerate(viewer.envs):  # walls: points along each segment, away from its ends
        for index, line in posed[e][1]:
            xy = np.asarray(line.coords)
            f = np.linspace(0.2, 0.8, 4)[:, None, None]
            pts = viewer.project((xy[:-1] + f * (xy[1:] - xy[:-1])).reshape(-1, 2), env=e) + 0.5
            pts = pts[(pts[:, 0] >= 1) & (pts[:, 0] < viewer.width - 1) & (pts[:, 1] >= 1)
                      & (pts[:, 1] < viewer.height - 1)]
            if len(pts):
                near.append((("wall", index, t), np.asarray(viewer.colors["segment"], float), pts))
    return Expectation(px[keep], keys, bases, np.full(len(keep), QUANT), False, marks, near)
