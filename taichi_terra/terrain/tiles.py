"""Terrain tiles for curricula: slopes, steps, rough ground, soft soil patches and sand, at levels of difficulty,
each env standing on a tile of its own and moved to another one at its reset.

A tile is square-gridded ground around the env's start, in three layers that live in one world as maps with
heights per env (:meth:`taichi_terra.HeightMap.set_heights`):

- a rigid height map: the ground of slopes, steps and rough tiles; holes (NaN samples) where soft soil lies;
  a floor :attr:`TileShapes.sand_depth` below the surface under sand;
- a soil bed (:class:`taichi_terra.DeformableTerrain`) whose undeformed surface is the ground inside the soft
  patches and lies :attr:`TerrainTiles.bury` below the rigid ground elsewhere (out of reach, and hidden under
  it), with each env's soil material;
- a granular medium (resistive force theory) whose flat surface is the ground in a sand tile and lies
  :attr:`TerrainTiles.bury` below the tile's lowest ground elsewhere, with each env's ``zeta``.

Difficulty ``d = level / (levels - 1)`` runs from 0 (level 0: flat, firm) to 1 (the last level). Every tile
is drawn from the generator's seed, its kind and its level alone: the same tile in every run, env and backend.
The layout follows the tiles legged-locomotion curricula use (a flat platform at the centre where the robot
starts, the difficulty growing outwards); the shapes and constants here are the project's own.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from ..validation import check_finite, check_int, check_positive
from .soil import SOIL_FIELDS, SoilMaterial

#: the kinds of tile, in the order of their columns
KINDS = ("flat", "slope", "steps", "rough", "soft_soil", "sand")

#: firm ground's soil (a dense loam: a robot sinks a few millimetres)
FIRM_SOIL = SoilMaterial(bekker_kc=0.0, bekker_kphi=5.0e6, sinkage_exponent=1.0, elastic_stiffness=2.0e7,
                         damping=2.0e4, cohesion=5.0e3, friction_coefficient=0.8, shear_displacement=0.01)
#: the softest soil of the last level (a loose, weak soil: centimetres of sinkage under a wheel)
SOFT_SOIL = SoilMaterial(bekker_kc=0.0, bekker_kphi=1.5e5, sinkage_exponent=1.0, elastic_stiffness=2.0e6,
                         damping=3.0e3, cohesion=200.0, friction_coefficient=0.45, shear_displacement=0.03)
#: ``zeta`` [N/cm^3] of the sand at difficulty 0 and 1 (the RFT-SiM range, firm to loose)
ZETA_RANGE = (5.8, 0.5)
#: how far below the ground a layer not in use lies [m] (deeper than a body presses into the rigid map)
BURY = 0.05
#: depth of the sand over the rigid floor of a sand tile [m]
SAND_DEPTH = 0.5


@dataclass(frozen=True)
class Tile:
    """One tile, in the map frame of its grid (``x_samples`` x ``y_samples`` samples, index y * x_samples + x).

    Attributes:
        kind: one of :data:`KINDS`.
        level: its level of difficulty (0 the easiest).
        difficulty: ``level / (levels - 1)``, in [0, 1].
        heights: the rigid map's samples [m]; NaN in the soft-soil patches (holes).
        bed_heights: the soil bed's undeformed surface [m]: the ground in the patches (and one sample around
            them, under the rigid map's holes' edges), :data:`BURY` below the rigid ground elsewhere.
        soil: the soil bed's material in this tile.
        sand_surface: the granular medium's surface height [m] (the ground in a sand tile, else :data:`BURY`
            below the tile's lowest ground).
        zeta: the granular medium's ``zeta`` [N/cm^3].
        patches: the soft-soil patches as discs (x, y, radius) [m] in the map frame; empty for other kinds.
    """

    kind: str
    level: int
    difficulty: float
    heights: np.ndarray
    bed_heights: np.ndarray
    soil: SoilMaterial
    sand_surface: float
    zeta: float
    patches: tuple


def blend_soil(firm: SoilMaterial, soft: SoilMaterial, t: float) -> SoilMaterial:
    """The soil a fraction ``t`` in [0, 1] of the way from ``firm`` to ``soft``: the Bekker moduli and the
    elastic stiffness geometrically (they span decades), every other field linearly."""
    a, b = firm.as_array(), soft.as_array()
    out = (1.0 - t) * a + t * b
    for name in ("bekker_kc", "bekker_kphi", "elastic_stiffness"):
        k = SOIL_FIELDS.index(name)
        if a[k] > 0.0 and b[k] > 0.0:
            out[k] = a[k] ** (1.0 - t) * b[k] ** t
    return SoilMaterial(**{name: float(v) for name, v in zip(SOIL_FIELDS, out)})


@dataclass(frozen=True)
class TileShapes:
    """The shapes of the tiles at difficulty 1 (each scales with the difficulty ``d``), checked when made.

    Attributes:
        platform: side of the flat square at the centre where an env starts [m] (>= 0).
        max_grade: rise over run of a slope tile (>= 0).
        max_step: step height of a steps tile [m] (>= 0); steps are ``step_width`` [m] deep (> 0).
        max_roughness: peak-to-peak height of rough ground [m] (>= 0), drawn uniformly on a lattice of
            ``roughness_scale`` [m] (> 0) and interpolated between.
        firm_soil, soft_soil: the soil at difficulty 0 and 1 (:func:`blend_soil` between).
        zeta_range: the sand's ``zeta`` at difficulty 0 and 1 [N/cm^3] (> 0).
        sand_depth: depth of the sand over a sand tile's rigid floor [m] (> 0).
    """

    platform: float = 1.0
    max_grade: float = 0.4
    max_step: float = 0.12
    step_width: float = 0.3
    max_roughness: float = 0.08
    roughness_scale: float = 0.2
    firm_soil: SoilMaterial = FIRM_SOIL
    soft_soil: SoilMaterial = SOFT_SOIL
    zeta_range: tuple = ZETA_RANGE
    sand_depth: float = SAND_DEPTH

    def __post_init__(self):
        for name in ("platform", "max_grade", "max_step", "max_roughness"):
            value = getattr(self, name)
            if check_finite(name, value) < 0.0:
                raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
        for name in ("step_width", "roughness_scale", "sand_depth"):
            check_positive(name, getattr(self, name))
        for name in ("firm_soil", "soft_soil"):
            soil = getattr(self, name)
            if not isinstance(soil, SoilMaterial):
                raise TypeError(f"{name} must be a taichi_terra.SoilMaterial, got {type(soil).__name__}")
        z = tuple(self.zeta_range) if np.ndim(self.zeta_range) == 1 else ()
        if len(z) != 2:
            raise ValueError(f"zeta_range must be two numbers (difficulty 0, difficulty 1), got "
                             f"{self.zeta_range!r}")
        object.__setattr__(self, "zeta_range", (check_positive("zeta_range[0]", z[0]),
                                                check_positive("zeta_range[1]", z[1])))


class TerrainTiles:
    """A generator of terrain tiles (:class:`Tile`) by kind and level, and the curriculum of a world's envs
    over them.

    Args:
        x_samples, y_samples: samples of a tile's grid (>= 3).
        x_size, y_size: a tile's extent [m] (> 0).
        levels: levels of difficulty (>= 1).
        kinds: the kinds in use, a subset of :data:`KINDS`.
        seed: the seed every tile is drawn from.
        shapes: the tiles' shapes and soils (:class:`TileShapes`).
    """

    def __init__(self, x_samples: int = 41, y_samples: int = 41, x_size: float = 4.0, y_size: float = 4.0, *,
                 levels: int = 5, kinds=KINDS, seed: int = 0, shapes: TileShapes | None = None):
        self.x_samples = check_int("x_samples", x_samples, 3)
        self.y_samples = check_int("y_samples", y_samples, 3)
        self.x_size = check_positive("x_size", x_size)
        self.y_size = check_positive("y_size", y_size)
        self.levels = check_int("levels", levels, 1)
        kinds = tuple(kinds) if not isinstance(kinds, str) else (kinds,)
        unknown = [k for k in kinds if k not in KINDS]
        if unknown or not kinds or len(set(kinds)) != len(kinds):
            raise ValueError(f"kinds must be distinct names from {KINDS}, got {kinds!r}")
        self.kinds = kinds
        self.seed = check_int("seed", seed, 0)
        shapes = TileShapes() if shapes is None else shapes
        if not isinstance(shapes, TileShapes):
            raise TypeError(f"shapes must be a taichi_terra.TileShapes, got {type(shapes).__name__}")
        self.shapes = shapes
        #: how far below the ground a layer not in use lies [m]
        self.bury = BURY
        self._cache = {}
        self._world_parts = None
        self._env_kind = self._env_level = None

    # ------------------------------------------------------------------ tiles
    def difficulty(self, level: int) -> float:
        """``level / (levels - 1)`` (1 where there is one level)."""
        level = self._check_level(level)
        return 1.0 if self.levels == 1 else level / (self.levels - 1)

    def _check_level(self, level) -> int:
        level = check_int("level", level, 0)
        if level >= self.levels:
            raise ValueError(f"level must be in [0, {self.levels - 1}], got {level}")
        return level

    def _check_kind(self, kind) -> str:
        if kind not in self.kinds:
            raise ValueError(f"kind must be one of {self.kinds}, got {kind!r}")
        return kind

    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """Map-frame x and y [m] of every sample, each shape (y_samples, x_samples), centred on the tile."""
        xs = np.linspace(-0.5 * self.x_size, 0.5 * self.x_size, self.x_samples)
        ys = np.linspace(-0.5 * self.y_size, 0.5 * self.y_size, self.y_samples)
        return np.meshgrid(xs, ys)

    def tile(self, kind: str, level: int) -> Tile:
        """The tile of ``kind`` at ``level`` (the same every call)."""
        key = (self._check_kind(kind), self._check_level(level))
        if key not in self._cache:
            self._cache[key] = self._make(*key)
        return self._cache[key]

    def _rng(self, kind: str, level: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, zlib.crc32(kind.encode()), level])

    def _make(self, kind: str, level: int) -> Tile:
        d = self.difficulty(level)
        x, y = self.grid()
        out = self._out_of_platform(x, y)
        h = np.zeros_like(x)
        patches = ()
        if kind == "slope":  # a square hill rising from the platform's edge
            h = d * self.shapes.max_grade * out
        elif kind == "steps":  # rings of steps up from the platform
            h = d * self.shapes.max_step * np.ceil(out / self.shapes.step_width)
        elif kind == "rough":
            h = self._rough(self._rng(kind, level), x, y, d * self.shapes.max_roughness)
        elif kind == "soft_soil":
            patches = self._patches(self._rng(kind, level), d)
        bed = h - self.bury
        if patches:
            inside = np.zeros(h.shape, bool)
            for px, py, r in patches:
                inside |= (x - px) ** 2 + (y - py) ** 2 <= r * r
            h = np.where(inside, np.nan, h)
            near = inside.copy()  # the bed lies at the ground under every rigid cell a hole removes
            for sy in (-1, 0, 1):
                for sx in (-1, 0, 1):
                    near |= np.roll(np.roll(inside, sy, 0), sx, 1) & _inside_shift(inside.shape, sy, sx)
            bed = np.where(near, 0.0, bed)
        sand = kind == "sand"
        if sand:
            h = np.full_like(h, -self.shapes.sand_depth)  # (the floor under the sand)
            bed = h - self.bury
        z0, z1 = self.shapes.zeta_range
        return Tile(kind=kind, level=level, difficulty=d, heights=h.reshape(-1), bed_heights=bed.reshape(-1),
                    soil=blend_soil(self.shapes.firm_soil, self.shapes.soft_soil,
                                    d if kind == "soft_soil" else 0.0),
                    sand_surface=0.0 if sand else float(np.nanmin(h)) - self.bury, zeta=z0 + (z1 - z0) * d,
                    patches=patches)

    def _out_of_platform(self, x, y) -> np.ndarray:
        """Distance [m] out of the central square platform (0 on it; samples on its edge, to the grid's
        rounding, are on it)."""
        out = np.maximum(np.abs(x), np.abs(y)) - 0.5 * self.shapes.platform
        return np.where(out > 1e-9 * max(self.x_size, self.y_size), out, 0.0)

    def _rough(self, rng, x, y, amplitude: float) -> np.ndarray:
        """Uniform heights in [-amplitude/2, amplitude/2] on a lattice of ``roughness_scale``, bilinear between;
        flat on the platform."""
        nx = max(int(round(self.x_size / self.shapes.roughness_scale)), 1) + 1
        ny = max(int(round(self.y_size / self.shapes.roughness_scale)), 1) + 1
        lattice = rng.uniform(-0.5, 0.5, (ny, nx)) * amplitude
        fx = (x + 0.5 * self.x_size) / self.x_size * (nx - 1)
        fy = (y + 0.5 * self.y_size) / self.y_size * (ny - 1)
        ix, iy = np.clip(np.floor(fx).astype(int), 0, nx - 2), np.clip(np.floor(fy).astype(int), 0, ny - 2)
        u, v = fx - ix, fy - iy
        h = ((1 - u) * (1 - v) * lattice[iy, ix] + u * (1 - v) * lattice[iy, ix + 1]
             + (1 - u) * v * lattice[iy + 1, ix] + u * v * lattice[iy + 1, ix + 1])
        return np.where(self._out_of_platform(x, y) > 0.0, h, 0.0)

    def _patches(self, rng, d: float) -> tuple:
        """Soft-soil discs (x, y, radius) [m] outside the platform: more and larger with difficulty."""
        half = 0.5 * min(self.x_size, self.y_size)
        count = 1 + int(round(3 * d))
        out = []
        for _k in range(count):
            r = (0.15 + 0.15 * d) * half
            for _try in range(64):  # a centre whose disc stays off the platform and inside the tile
                px = rng.uniform(-0.5 * self.x_size + r, 0.5 * self.x_size - r)
                py = rng.uniform(-0.5 * self.y_size + r, 0.5 * self.y_size - r)
                if max(abs(px), abs(py)) - r >= 0.5 * self.shapes.platform:
                    out.append((float(px), float(py), float(r)))
                    break
        return tuple(out)

    # ------------------------------------------------------------------ a world's envs on tiles
    def add_to(self, world, center_x: float = 0.0, center_y: float = 0.0, *, material: str = "default") -> dict:
        """Add the tile layers to ``world`` (before its build), every env on the flat tile of level 0 (the first
        kind's where ``flat`` is not in use) until :meth:`place` moves it: a rigid map with heights per env
        (contact ``material``), a soil bed with heights per env where ``soft_soil`` is a kind in use, and a
        granular medium with a flat surface per env where ``sand`` is (RFT plates feel it: add plates to the
        feet that should sink in it). Returns the parts as ``{"map": ..., "bed": ... or None, "medium": ...
        or None}``."""
        if self._world_parts is not None:
            raise RuntimeError("add_to: these tiles are already in a world (make a TerrainTiles per world)")
        cx, cy = check_finite("center_x", center_x), check_finite("center_y", center_y)
        base = self._make("flat", 0)
        ne = world.n_envs
        rigid = world.add_heightmap(self.x_samples, self.y_samples, self.x_size, self.y_size, cx, cy,
                                    np.tile(base.heights, (ne, 1)), material=material)
        bed = medium = None
        if "soft_soil" in self.kinds:
            bed = world.add_deformable_terrain(self.x_samples, self.y_samples, self.x_size, self.y_size, cx, cy,
                                               np.tile(base.bed_heights, (ne, 1)), base.soil)
        if "sand" in self.kinds:
            medium = world.add_granular_medium(base.sand_surface, zeta=base.zeta)
        self._world_parts = {"map": rigid, "bed": bed, "medium": medium, "world": world}
        self._env_kind = np.full(ne, "flat", dtype=object)
        self._env_level = np.zeros(ne, np.int64)
        if "flat" not in self.kinds:
            self.place_all([self.kinds[0]] * ne, np.zeros(ne, np.int64))
        return {"map": rigid, "bed": bed, "medium": medium}

    def place_all(self, kinds, levels) -> None:
        """Move every env at once: env ``e`` onto the tile of ``kinds[e]`` at ``levels[e]`` (sequences of
        n_envs), as :meth:`place` does env by env, with one write of each layer's heights."""
        parts = self._parts()
        ne = parts["world"].n_envs
        kinds, levels = list(kinds), list(np.asarray(levels).reshape(-1))
        if len(kinds) != ne or len(levels) != ne:
            raise ValueError(f"kinds and levels must have one entry per env ({ne}), got {len(kinds)} and "
                             f"{len(levels)}")
        tiles = [self.tile(k, int(lv)) for k, lv in zip(kinds, levels)]  # (all checked before any change)
        parts["map"].set_heights(np.stack([t.heights for t in tiles]))
        if parts["bed"] is not None:
            parts["bed"].set_heights(np.stack([t.bed_heights for t in tiles]))
            for e, t in enumerate(tiles):
                parts["bed"].set_material(t.soil, env=e)
        if parts["medium"] is not None:
            for e, t in enumerate(tiles):
                parts["world"].set_medium_params(parts["medium"], zeta=t.zeta, surface_height=t.sand_surface,
                                                 env=e)
        for e, t in enumerate(tiles):
            self._env_kind[e], self._env_level[e] = t.kind, t.level

    def _parts(self) -> dict:
        if self._world_parts is None:
            raise RuntimeError("these tiles are in no world yet: call add_to(world) first")
        return self._world_parts

    def place(self, env: int, kind: str, level: int) -> Tile:
        """Move env ``env`` onto the tile of ``kind`` at ``level``: its rigid heights, its soil bed's surface
        (whose soil history starts again) and material, and its sand's surface and ``zeta``. Between steps;
        the bodies are not moved (reset them too, e.g. with ``World.reset_envs``)."""
        parts = self._parts()
        world = parts["world"]
        from ..validation import check_env

        env = check_env(env, world.n_envs)
        if env is None:
            raise TypeError("env must be an int")
        tile = self.tile(kind, level)
        parts["map"].set_heights(tile.heights, env=env)
        if parts["bed"] is not None:
            bed = parts["bed"]
            if not np.array_equal(bed.get_undeformed_heights(env), tile.bed_heights):
                bed.set_heights(tile.bed_heights, env=env)
            bed.set_material(tile.soil, env=env)
        if parts["medium"] is not None:
            world.set_medium_params(parts["medium"], zeta=tile.zeta, surface_height=tile.sand_surface, env=env)
        self._env_kind[env], self._env_level[env] = kind, tile.level
        return tile

    def kind_of(self, env: int) -> str:
        """The kind of the tile env ``env`` stands on."""
        self._parts()
        return str(self._env_kind[int(env)])

    def level_of(self, env: int) -> int:
        """The level of the tile env ``env`` stands on."""
        self._parts()
        return int(self._env_level[int(env)])

    def levels_of_envs(self) -> np.ndarray:
        """Every env's level, shape (n_envs,)."""
        self._parts()
        return self._env_level.copy()

    def advance(self, env: int, passed: bool, kind: str | None = None) -> Tile:
        """The curriculum's move at env ``env``'s reset: one level up where it ``passed`` (at most the last),
        one down where it did not (at least 0), on its kind or on ``kind``; :meth:`place` it there."""
        self._parts()
        level = self.level_of(env) + (1 if passed else -1)
        return self.place(env, self.kind_of(env) if kind is None else kind, min(max(level, 0), self.levels - 1))


def _inside_shift(shape, sy: int, sx: int) -> np.ndarray:
    """Where ``np.roll`` by (sy, sx) brought in a sample from inside the grid (not wrapped around)."""
    ok = np.ones(shape, bool)
    if sy > 0:
        ok[:sy] = False
    elif sy < 0:
        ok[sy:] = False
    if sx > 0:
        ok[:, :sx] = False
    elif sx < 0:
        ok[:, sx:] = False
    return ok
