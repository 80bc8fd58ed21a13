"""Terrain per env: height maps and soil beds whose heights differ from env to env (``set_heights``, heights of
shape (n_envs, n), ``per_env=True``), read by the kernels env by env, and the tile generator of curricula
(``TerrainTiles``) that puts each env on a tile of its own."""
import numpy as np
import pytest

import taichi_terra as tt
from helpers import G

N = 11  # samples per side of the 2 m maps: 0.2 m apart
LEVELS = np.array([0.0, 0.1, -0.2, 0.35])  # each env's flat ground [m]
R = 0.1  # the sphere's radius [m]


def _flat(levels):
    return np.tile(np.asarray(levels, float)[:, None], (1, N * N))


def _spheres(heights, per_env=False):
    world = tt.World(dt=1e-3, n_envs=len(heights) if np.ndim(heights) == 2 else 4)
    hm = world.add_heightmap(N, N, 2.0, 2.0, 0.0, 0.0, heights, per_env=per_env)
    ball = world.add_sphere(R, 1.0)
    ball.set_position([0.03, 0.05, 0.6])
    return world, hm, ball


def test_a_sphere_rests_on_its_own_envs_ground_as_in_a_world_of_its_own():
    """Reference: static equilibrium on flat ground: the centre rests one radius above each env's own level
    (to 1e-9 m: the contact's position error is solved out). And the run equals, env by env, a one-env world
    holding that env's heights, bit for bit (nothing of one env's terrain reaches another)."""
    world, hm, ball = _spheres(_flat(LEVELS))
    assert hm.per_env and hm.get_heights().shape == (4, N * N)
    world.step(600)
    for env, level in enumerate(LEVELS):
        assert ball.get_position(env)[2] == pytest.approx(level + R, abs=1e-9)
    for env in (1, 2):
        single = tt.World(dt=1e-3, n_envs=1)
        single.add_heightmap(N, N, 2.0, 2.0, 0.0, 0.0, np.full(N * N, LEVELS[env]))
        b = single.add_sphere(R, 1.0)
        b.set_position([0.03, 0.05, 0.6])
        single.step(600)
        np.testing.assert_array_equal(b.get_position(0), ball.get_position(env))


def test_one_envs_heights_change_between_steps_and_no_other_env_notices():
    """Reference: a run without the change. After 300 steps env 1's ground rises to 0.5 m and the sphere is
    lifted above it: it comes to rest one radius above the new ground (static equilibrium, 1e-9 m), and
    envs 0, 2 and 3 end bit for bit where the run without the change leaves them."""
    runs = []
    for change in (False, True):
        world, hm, ball = _spheres(_flat(LEVELS))
        world.step(300)
        if change:
            hm.set_heights(np.full(N * N, 0.5), env=1)
            ball.set_position([0.03, 0.05, 0.8], env=1)
            assert hm.get_heights(1)[0] == 0.5 and hm.get_heights(0)[0] == 0.0
            assert hm.get_height(0.0, 0.0, env=1) == 0.5
        world.step(600)
        runs.append(ball.get_position())
    assert runs[1][1, 2] == pytest.approx(0.5 + R, abs=1e-9)
    np.testing.assert_array_equal(runs[0][[0, 2, 3]], runs[1][[0, 2, 3]])


def test_a_shared_map_takes_heights_per_env_before_the_build_only():
    """A map added with one set of heights stores it once; one env's heights set before the build make it a
    map with heights per env (the others keep the shared ones). After the build its layout is fixed: one
    env's heights are refused with nothing changed, while new heights for every env are taken (the
    sphere follows them: static equilibrium one radius above)."""
    world, hm, ball = _spheres(np.zeros(N * N))
    assert not hm.per_env and hm.get_heights().shape == (N * N,)
    hm.set_heights(np.full(N * N, 0.2), env=3)
    assert hm.per_env
    np.testing.assert_array_equal(hm.get_heights()[:, 0], [0.0, 0.0, 0.0, 0.2])
    world.step(500)
    assert ball.get_position(3)[2] == pytest.approx(0.2 + R, abs=1e-9)

    world, hm, ball = _spheres(np.zeros(N * N))
    world.step(1)
    with pytest.raises(ValueError, match="per_env=True"):
        hm.set_heights(np.full(N * N, 0.2), env=3)
    assert not hm.per_env and np.all(hm.get_heights() == 0.0)
    hm.set_heights(np.full(N * N, -0.15))
    world.step(600)
    np.testing.assert_allclose(ball.get_position()[:, 2], -0.15 + R, atol=1e-9)


def test_bad_heights_are_refused_with_a_clear_error_and_nothing_changed():
    world, hm, _ball = _spheres(_flat(LEVELS))
    before = hm.get_heights()
    for bad, env, err, match in [(np.zeros(N * N + 1), 0, ValueError, "shape"),
                                 (np.zeros((4, N * N)), 0, ValueError, "for one env"),
                                 (np.zeros((3, N * N)), None, ValueError, "n_envs"),
                                 (np.zeros(N * N), 4, ValueError, "env"),
                                 (np.zeros(N * N), -1, ValueError, "env"),
                                 (["a"] * (N * N), None, TypeError, "numbers")]:
        with pytest.raises(err, match=match):
            hm.set_heights(bad, env=env)
    np.testing.assert_array_equal(hm.get_heights(), before)
    with pytest.raises(ValueError, match="name the env"):
        hm.get_height(0.0, 0.0)
    with pytest.raises(ValueError, match="n_envs"):
        tt.World(n_envs=4).add_heightmap(N, N, 2.0, 2.0, 0.0, 0.0, np.zeros((3, N * N)))
    with pytest.raises(TypeError, match="per_env"):
        tt.World(n_envs=4).add_heightmap(N, N, 2.0, 2.0, 0.0, 0.0, np.zeros(N * N), per_env=1)
    w = tt.World(n_envs=2)
    bed = w.add_deformable_terrain(N, N, 2.0, 2.0, 0.0, 0.0, np.zeros(N * N), tt.SoilMaterial(), per_env=True)
    with pytest.raises(ValueError, match="finite"):
        bed.set_heights(np.full(N * N, np.nan), env=1)
    assert np.all(bed.get_undeformed_heights() == 0.0)
    with pytest.warns(RuntimeWarning, match="per env"):
        assert hm.update_visual_height(0.0, 0.0, 2.0, 2.0, np.zeros(N * N)) is False
    revs = hm.get_height_row_revisions()
    assert hm.update(0.0, 0.0, 2.0, 2.0, np.full(N * N, 0.25))  # (a full update: every env takes it)
    np.testing.assert_array_equal(hm.get_heights(), np.full((4, N * N), 0.25))
    assert np.all(hm.get_height_row_revisions() > revs)


def test_scans_read_each_envs_own_map():
    """Reference: each env's own samples (a vertical ray at a sample meets the surface at its height, to
    rounding): three envs of sine maps of three phases, scanned at the samples around the probe."""
    n = 21
    xs = np.linspace(-1.0, 1.0, n)
    gx, gy = np.meshgrid(xs, xs, indexing="xy")
    heights = np.stack([(0.2 * np.sin(2.0 * gx + ph) * np.cos(gy)).reshape(-1) for ph in (0.0, 1.0, 2.5)])
    world = tt.World(dt=1e-3, n_envs=3)
    world.add_heightmap(n, n, 2.0, 2.0, 0.0, 0.0, heights)
    probe = world.add_sphere(0.05, 1.0)
    probe.set_position([0.0, 0.0, 2.0])
    pts = np.array([[x, y] for x in (-0.3, 0.0, 0.5) for y in (-0.4, 0.1, 0.6)])
    scan = world.scan_heights(pts, probe)
    for env in range(3):
        idx = [int(round((y + 1.0) / 0.1)) * n + int(round((x + 1.0) / 0.1)) for x, y in pts]
        np.testing.assert_allclose(scan[env], heights[env, idx], atol=1e-12)


SOIL = tt.SoilMaterial(bekker_kphi=2.0e5, sinkage_exponent=1.0, damping=3e4)
PLATE_MASS, PLATE_X, PLATE_Y = 20.0, 0.4, 0.6


def test_a_soil_bed_with_a_surface_per_env_and_its_history_restarting_where_the_surface_changes():
    """Reference: Bekker's plate sinkage s = m g / (A kphi) (n = 1) below each env's own undeformed surface
    (0 and 0.1 m), within 1 % after 1.5 s. A new surface in env 1 starts that env's soil history again
    (no sinkage) and leaves env 0's as it was, bit for bit."""
    n = 26
    world = tt.World(dt=1e-3, n_envs=2)
    world.solver.tolerance = 1e-10
    bed = world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n), SOIL, per_env=True)
    bed.set_heights(np.full(n * n, 0.1), env=1)
    plate = world.add_box(PLATE_X, PLATE_Y, 0.02, PLATE_MASS)
    plate.set_position([0.02, 0.02, 0.01])
    plate.set_position([0.02, 0.02, 0.11], env=1)
    world.step(1500)
    expected = PLATE_MASS * G / (PLATE_X * PLATE_Y * SOIL.bekker_kphi)
    for env, surface in enumerate((0.0, 0.1)):
        assert surface + 0.01 - plate.get_position(env)[2] == pytest.approx(expected, rel=0.01)
    kept = bed.get_soil_state(0)
    assert bed.get_soil_state(1)["sinkage"].max() > 0.5 * expected
    revs = bed.get_height_row_revisions()
    bed.set_heights(np.full(n * n, 0.3), env=1)
    assert np.all(bed.get_soil_state(1)["sinkage"] == 0.0)
    for key, value in bed.get_soil_state(0).items():
        np.testing.assert_array_equal(value, kept[key])
    after = bed.get_height_row_revisions()
    assert np.all(after[1] > revs[1]) and np.array_equal(after[0], revs[0])
    np.testing.assert_array_equal(bed.get_heights(1), np.full(n * n, 0.3))


# ---------------------------------------------------------------------------------------------- tiles
TILES = dict(x_samples=41, y_samples=41, x_size=2.0, y_size=2.0, levels=4, seed=3,
             shapes=tt.TileShapes(platform=0.6))


def test_tiles_grow_harder_with_their_level_to_the_stated_shapes():
    """Reference: the shapes as stated. Slope: grade d * max_grade off the platform (finite differences),
    flat on it. Steps: heights in whole steps of d * max_step, rising outwards. Rough: within
    +-d * max_roughness / 2, flat on the platform, the same from one seed and not from another. Soft soil:
    holes in the rigid map inside its discs, and the bed at the ground under every rigid cell a hole removes,
    buried under the rigid ground elsewhere. Sand: the rigid floor sand_depth down, the sand's surface at the
    ground (elsewhere below the lowest ground), zeta from 5.8 down to 0.5."""
    tiles = tt.TerrainTiles(**TILES)
    x, y = tiles.grid()
    off = np.maximum(np.abs(x), np.abs(y)) > 0.3 + 1e-9
    for level in range(4):
        d = level / 3
        h = tiles.tile("slope", level).heights.reshape(41, 41)
        np.testing.assert_allclose(h[~off], 0.0, atol=1e-12)
        run = np.maximum(np.abs(x), np.abs(y)) - 0.3
        np.testing.assert_allclose(h[off], d * tiles.shapes.max_grade * run[off], atol=1e-12)
        steps = tiles.tile("steps", level).heights.reshape(41, 41)
        if d:
            k = steps / (d * tiles.shapes.max_step)
            np.testing.assert_allclose(k, np.round(k), atol=1e-9)
            assert np.all(np.diff(steps[20, 20:]) >= 0.0) and steps[20, -1] > steps[20, 25]
        rough = tiles.tile("rough", level).heights.reshape(41, 41)
        assert np.all(np.abs(rough) <= 0.5 * d * tiles.shapes.max_roughness + 1e-12) and np.all(rough[~off] == 0.0)
        sand = tiles.tile("sand", level)
        assert sand.sand_surface == 0.0 and np.all(sand.heights == -tiles.shapes.sand_depth)
        assert tiles.tile("steps", level).sand_surface == -tiles.bury  # (below the lowest ground)
        assert tiles.tile("rough", level).sand_surface == np.min(rough) - tiles.bury
        assert sand.zeta == pytest.approx(5.8 + (0.5 - 5.8) * d)
    again = tt.TerrainTiles(**TILES).tile("rough", 3).heights
    other = tt.TerrainTiles(**{**TILES, "seed": 4}).tile("rough", 3).heights
    assert np.array_equal(again, tiles.tile("rough", 3).heights) and not np.array_equal(again, other)
    for level in range(4):
        t = tiles.tile("soft_soil", level)
        hole = np.isnan(t.heights).reshape(41, 41)
        inside = np.zeros_like(hole)
        for px, py, r in t.patches:
            assert max(abs(px), abs(py)) - r >= 0.3  # off the platform
            inside |= (x - px) ** 2 + (y - py) ** 2 <= r * r
        assert np.array_equal(hole, inside) and len(t.patches) == 1 + round(3 * level / 3)
        bed = t.bed_heights.reshape(41, 41)
        removed = hole[:-1, :-1] | hole[1:, :-1] | hole[:-1, 1:] | hole[1:, 1:]  # cells touching a hole
        corners = np.stack([bed[:-1, :-1], bed[1:, :-1], bed[:-1, 1:], bed[1:, 1:]])
        assert np.all(corners[:, removed] == 0.0)
        assert np.all(bed[~hole & (bed != 0.0)] == -tiles.bury)  # (buried under the flat rigid ground)
    assert tiles.tile("soft_soil", 0).soil == tiles.shapes.firm_soil
    assert tiles.tile("soft_soil", 3).soil == tiles.shapes.soft_soil
    assert tiles.tile("soft_soil", 1).soil.bekker_kphi == pytest.approx(
        tiles.shapes.firm_soil.bekker_kphi ** (2 / 3) * tiles.shapes.soft_soil.bekker_kphi ** (1 / 3))


def test_tiles_refuse_bad_arguments():
    for kwargs, match in [({"kinds": ("slope", "ice")}, "kinds"), ({"levels": 0}, "levels"),
                          ({"x_samples": 2}, "x_samples"), ({"shapes": {"max_grade": 1}}, "shapes")]:
        with pytest.raises((ValueError, TypeError), match=match):
            tt.TerrainTiles(**kwargs)
    for kwargs, match in [({"max_grade": -1.0}, "max_grade"), ({"zeta_range": (1.0,)}, "zeta_range"),
                          ({"firm_soil": 3}, "firm_soil"), ({"step_width": 0.0}, "step_width")]:
        with pytest.raises((ValueError, TypeError), match=match):
            tt.TileShapes(**kwargs)
    tiles = tt.TerrainTiles(**TILES)
    with pytest.raises(ValueError, match="level"):
        tiles.tile("slope", 4)
    with pytest.raises(ValueError, match="kind"):
        tiles.tile("ice", 0)
    with pytest.raises(RuntimeError, match="add_to"):
        tiles.place(0, "slope", 1)


def test_envs_move_between_tiles_and_a_plate_sinks_into_its_tiles_soft_soil():
    """Each env stands on its own tile and moves at its reset (``place``, ``advance``: a level up where it
    passed, down where it did not, clamped), touching no other env's layers. Reference for the soil: Bekker's
    plate sinkage m g / (A kphi) (n = 1) of the tile's own soil (the last level's, the softest), within 1 %,
    for a plate inside a soft patch (its edges midway between samples: exact quadrature area); a plate on the
    rigid part of the same tile rests on it (static equilibrium, 1e-9 m). Both start at rest on the surface
    and the soil is overdamped (a quasi-static load)."""
    soft_soil = tt.SoilMaterial(bekker_kphi=1.5e5, sinkage_exponent=1.0, damping=3e4)  # (overdamped: no
    # overshoot, whose plastic sinkage would leave the plate on the elastic branch)
    tiles = tt.TerrainTiles(**{**TILES, "shapes": tt.TileShapes(platform=0.6, soft_soil=soft_soil)},
                            kinds=("flat", "slope", "soft_soil", "sand"))
    world = tt.World(dt=1e-3, n_envs=3)
    world.solver.tolerance = 1e-10
    parts = tiles.add_to(world)
    rigid, bed, medium = parts["map"], parts["bed"], parts["medium"]
    assert rigid.per_env and bed.per_env and medium is not None
    assert [tiles.kind_of(e) for e in range(3)] == ["flat"] * 3
    tiles.place(1, "soft_soil", 3)
    tiles.place(2, "sand", 2)
    soft = tiles.tile("soft_soil", 3)
    np.testing.assert_array_equal(rigid.get_heights(1), soft.heights)
    np.testing.assert_array_equal(bed.get_undeformed_heights(1), soft.bed_heights)
    assert bed.get_material(1) == soft.soil and bed.get_material(0) == tiles.shapes.firm_soil
    assert world.get_medium_params(medium, 2)["zeta"] == pytest.approx(tiles.tile("sand", 2).zeta)
    assert world.get_medium_params(medium, 2)["surface_height"] == 0.0
    assert world.get_medium_params(medium, 0)["surface_height"] == -tiles.bury
    np.testing.assert_array_equal(bed.get_undeformed_heights(0), np.full(41 * 41, -tiles.bury))
    np.testing.assert_array_equal(rigid.get_heights(0), np.zeros(41 * 41))
    px, py, _r = soft.patches[0]
    dx = 0.05
    cx, cy = np.round(px / dx) * dx + 0.5 * dx, np.round(py / dx) * dx + 0.5 * dx
    plate = world.add_box(0.2, 0.2, 0.02, 5.0)
    plate.set_position([cx, cy, 0.01])  # (touching the surface: loaded from rest)
    other = world.add_box(0.2, 0.2, 0.02, 5.0)
    other.set_position([0.0, 0.0, 0.01])  # (the platform: rigid ground in every tile)
    world.step(1500)
    expected = 5.0 * G / (0.04 * tiles.shapes.soft_soil.bekker_kphi)
    assert 0.01 - plate.get_position(1)[2] == pytest.approx(expected, rel=0.01)
    assert other.get_position(1)[2] == pytest.approx(0.01, abs=1e-9)
    assert tiles.advance(1, passed=True).level == 3  # (clamped at the last)
    assert tiles.advance(1, passed=False).level == 2 and tiles.level_of(1) == 2
    assert tiles.advance(0, passed=False).level == 0
    assert tiles.advance(0, passed=True, kind="slope").kind == "slope" and tiles.level_of(0) == 1
    np.testing.assert_array_equal(rigid.get_heights(0), tiles.tile("slope", 1).heights)
    np.testing.assert_array_equal(tiles.levels_of_envs(), [1, 2, 2])
    np.testing.assert_array_equal(rigid.get_heights(2), tiles.tile("sand", 2).heights)
