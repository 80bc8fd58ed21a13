"""Height-map data and runtime edits (the height-map spec): PNG and text loaders, the Perlin generator,
update / update_visual_height / update_visual_height_patch / colours, flags, dirty region and row revisions."""
import numpy as np
import pytest
from PIL import Image

import taichi_terra as tt


# ---------------------------------------------------------------------------------------------- loaders
def test_png_8_and_16_bit_load_to_pixel_times_scale_plus_offset(tmp_path):
    """Reference: the spec's height = pixel * scale + offset; image column = x index, row from the bottom = y."""
    px8 = np.array([[0, 10, 20], [30, 40, 255]], dtype=np.uint8)  # 2 rows (y), 3 columns (x)
    Image.fromarray(px8, mode="L").save(tmp_path / "a.png")
    px16 = np.array([[0, 1000], [40000, 65535]], dtype=np.uint16)
    Image.fromarray(px16).save(tmp_path / "b.png")
    with Image.open(tmp_path / "b.png") as im:
        assert im.mode.startswith("I")  # stored as a 16-bit grayscale PNG
    world = tt.World()
    a = world.add_heightmap_from_png(0.0, 0.0, tmp_path / "a.png", 2.0, 1.0, 0.01, -0.5)
    b = world.add_heightmap_from_png(5.0, 0.0, str(tmp_path / "b.png"), 1.0, 1.0, 1e-4, 0.0)
    assert (a.x_samples, a.y_samples) == (3, 2)
    assert np.array_equal(a.get_heights(), np.flipud(px8).reshape(-1) * 0.01 - 0.5)
    assert np.array_equal(b.get_heights(), np.flipud(px16).reshape(-1).astype(float) * 1e-4)
    # queries at the grid nodes return the samples exactly: node (x=2, y=0) is image pixel (row 1, column 2)
    assert a.get_height(1.0, -0.5) == 255 * 0.01 - 0.5
    assert a.get_height(-1.0, 0.5) == 0.0 * 0.01 - 0.5


def test_text_file_loads_and_bad_ones_name_the_file(tmp_path):
    (tmp_path / "m.txt").write_text("3 2 2.0 1.0\n0.0 0.1 0.2\n0.3 0.4 0.5\n")
    world = tt.World()
    hm = world.add_heightmap_from_file(1.0, 0.0, tmp_path / "m.txt")
    assert (hm.x_samples, hm.y_samples, hm.x_size, hm.y_size) == (3, 2, 2.0, 1.0)
    assert np.array_equal(hm.get_heights(), [0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert hm.get_height(2.0, 0.5) == 0.5  # node (x=2, y=1) of the grid centred at (1, 0)
    for text, word in (("3 2 2.0 1.0 0 0 0", "expected 3 x 2 = 6"), ("3 2 2.0", "expected"),
                       ("3 x 2.0 1.0", "not a number"), ("1 2 1 1 0 0", ">= 2"), ("2 2 -1 1 0 0 0 0", "positive")):
        (tmp_path / "bad.txt").write_text(text)
        with pytest.raises(ValueError, match=word) as err:
            world.add_heightmap_from_file(0.0, 0.0, tmp_path / "bad.txt")
        assert "bad.txt" in str(err.value)
    assert len(world.heightmaps) == 1


# ---------------------------------------------------------------------------------------------- generator
def test_terrain_generator_is_seeded_bounded_and_quantized():
    props = tt.TerrainProperties(frequency=0.3, x_size=8.0, y_size=6.0, z_scale=2.0, x_samples=33, y_samples=25,
                                 fractal_octaves=5, fractal_lacunarity=2.0, fractal_gain=0.5, step_size=0.0,
                                 height_offset=-1.0, seed=7)
    h = props.generate()
    assert h.shape == (33 * 25,)
    assert np.array_equal(h, tt.TerrainProperties(**{**props.__dict__}).generate())  # same seed, same terrain
    other = tt.TerrainProperties(**{**props.__dict__, "seed": 8}).generate()
    assert not np.allclose(h, other)
    # normalized noise in [0, 1] times z_scale, plus the offset; and it is not flat
    assert h.min() >= -1.0 and h.max() <= 1.0 and h.std() > 0.05
    stairs = tt.TerrainProperties(**{**props.__dict__, "step_size": 0.25}).generate()
    levels = (stairs + 1.0) / 0.25
    assert np.allclose(levels, np.round(levels), atol=1e-9)  # floored to multiples of the step, then offset
    assert np.all(stairs <= h + 1e-12) and np.all(stairs > h - 0.25)
    world = tt.World()
    hm = world.add_heightmap_from_terrain(0.0, 0.0, props)
    assert np.array_equal(hm.get_heights(), h) and (hm.x_size, hm.y_size) == (8.0, 6.0)


def test_normal_of_a_plane_map_is_exact():
    """Reference: the plane z = a x + b y + c has the unit normal (-a, -b, 1) / sqrt(a^2 + b^2 + 1)."""
    a, b, c = 0.3, -0.2, 0.1
    xs, ys = np.linspace(-1, 1, 5), np.linspace(-1, 1, 4)
    X, Y = np.meshgrid(xs, ys)
    world = tt.World()
    hm = world.add_heightmap(5, 4, 2.0, 2.0, 0.0, 0.0, (a * X + b * Y + c).reshape(-1))
    want = np.array([-a, -b, 1.0]) / np.sqrt(a * a + b * b + 1.0)
    for x, y in ((0.13, -0.71), (-0.9, 0.9), (0.5, 0.0)):
        assert np.allclose(hm.get_normal(x, y), want, atol=1e-14, rtol=0)
        assert hm.get_height(x, y) == pytest.approx(a * x + b * y + c, abs=1e-14)


# ---------------------------------------------------------------------------------------------- updates
def small_map(world=None):
    world = world or tt.World()
    hm = world.add_heightmap(4, 3, 3.0, 2.0, 0.0, 0.0, np.zeros(12))
    return world, hm


def test_update_rebuilds_collision_and_rejects_bad_input():
    """A sphere resting on a flat map rises with the surface after update() (collision follows at once);
    invalid updates warn and change nothing."""
    world, hm = small_map()
    ball = world.add_sphere(0.1, 1.0)
    ball.set_position([0.2, 0.1, 0.1])
    world.step(200)
    assert ball.get_position(0)[2] == pytest.approx(0.1, abs=1e-3)
    rev = hm.get_height_row_revisions(0)
    before = hm.get_heights()
    for args, word in (((0.0, 0.0, 3.0, 2.0, np.zeros(11)), "exactly 12"), ((0.0, 0.0, -3.0, 2.0, np.zeros(12)), "> 0"),
                       ((np.nan, 0.0, 3.0, 2.0, np.zeros(12)), "finite"), ((0.0, 0.0, 3.0, 2.0, "abc"), "numbers"),
                       ((0.0, 0.0, tt.TerrainProperties(x_samples=5, y_samples=3)), "sample count is fixed")):
        with pytest.warns(RuntimeWarning, match=word):
            assert hm.update(*args) is False
    assert np.array_equal(hm.get_heights(), before) and np.array_equal(hm.get_height_row_revisions(0), rev)
    assert not hm.is_updated()
    new = np.zeros(12)
    new[4:8] = 0.05  # row 1 only
    assert hm.update(0.0, 0.0, 3.0, 2.0, new) is True
    assert list(hm.get_height_row_revisions(0) - rev) == [0, 1, 0]
    assert hm.get_contact_height(0.2, 0.1) == hm.get_height(0.2, 0.1) > 0.0
    assert hm.is_updated() and hm.get_visual_dirty_region() is None  # the whole map
    world.step(300)
    assert ball.get_position(0)[2] == pytest.approx(0.1 + hm.get_height(*ball.get_position(0)[:2]), abs=2e-3)


def test_nan_samples_are_holes():
    """The chosen rule: non-finite samples are stored unchanged and every triangle touching one is a hole.
    A 3 x 3 map whose centre sample is NaN has no solid triangle: a ball falls through it."""
    world = tt.World()
    hm = world.add_heightmap(3, 3, 1.0, 1.0, 0.0, 0.0, np.zeros(9))
    ball = world.add_sphere(0.05, 1.0)
    ball.set_position([0.1, 0.1, 0.2])
    world.step(300)
    assert ball.get_position(0)[2] == pytest.approx(0.05, abs=1e-3)
    h = np.zeros(9)
    h[4] = np.nan
    assert hm.update(0.0, 0.0, 1.0, 1.0, h)
    assert np.isnan(hm.get_heights()[4])
    world.step(300)
    assert ball.get_position(0)[2] < -0.3


def test_visual_updates_leave_collision_alone():
    world, hm = small_map()
    rev = hm.get_height_row_revisions(0)
    with pytest.warns(RuntimeWarning, match="center and size"):
        assert hm.update_visual_height(0.1, 0.0, 3.0, 2.0, np.ones(12)) is False  # mismatched center
    with pytest.warns(RuntimeWarning, match="exactly 12"):
        assert hm.update_visual_height(0.0, 0.0, 3.0, 2.0, np.ones(13)) is False  # wrong length
    assert not hm.is_updated() and np.array_equal(hm.get_height_row_revisions(0), rev)
    vis = np.zeros(12)
    vis[8:] = 0.3  # row 2
    assert hm.update_visual_height(0.0, 0.0, 3.0, 2.0, vis)
    assert hm.get_height(1.5, 1.0) == 0.3 and hm.get_contact_height(1.5, 1.0) == 0.0
    assert np.array_equal(hm.get_contact_heights(), np.zeros(12))
    assert list(hm.get_height_row_revisions(0) - rev) == [0, 0, 1]
    assert hm.has_visual_height_update() and hm.get_visual_dirty_region() is None
    hm.set_updated_false()
    assert not hm.is_updated() and not hm.has_visual_height_update()
    assert list(hm.get_height_row_revisions(0) - rev) == [0, 0, 1]  # revisions are never cleared


def test_visual_patch_edge_cases():
    world, hm = small_map()
    geo = (0.0, 0.0, 3.0, 2.0)
    full = np.arange(12, dtype=float)
    rev = hm.get_height_row_revisions(0)
    assert hm.update_visual_height_patch(0.0, 0.0, 3.0, 2.5, full, 0.0, 0, 3, 0, 2) is False  # mismatched size
    assert hm.update_visual_height_patch(*geo, full[:11], 0.0, 0, 3, 0, 2) is False  # too short
    assert hm.update_visual_height_patch(*geo, full, 0.0, 2, 1, 0, 2) is False  # empty (min > max)
    assert hm.update_visual_height_patch(*geo, full, 0.0, 5, 9, 0, 2) is False  # empty after clamping
    assert hm.update_visual_height_patch(*geo, full, 0.0, -1, 2, 0, 2) is False  # not an index
    assert hm.update_visual_height_patch(*geo, np.zeros(12), 0.0, 0, 3, 0, 2) is True  # unchanged: not reported
    assert not hm.is_updated() and np.array_equal(hm.get_height_row_revisions(0), rev)
    assert hm.update_visual_height_patch(*geo, full, 0.5, 1, 99, 1, 1) is True  # x clamped to 3, row 1
    expect = np.zeros(12)
    expect[5:8] = full[5:8] + 0.5
    assert np.array_equal(hm.get_heights(), expect)
    assert np.array_equal(hm.get_contact_heights(), np.zeros(12))
    assert list(hm.get_height_row_revisions(0) - rev) == [0, 1, 0]
    assert hm.get_visual_dirty_region() == (1, 3, 1, 1)
    assert hm.update_visual_height_patch(*geo, full, 0.0, 0, 0, 2, 2) is True  # another patch: the union
    assert hm.get_visual_dirty_region() == (0, 3, 1, 2)
    hm.set_updated_false()
    assert hm.get_visual_dirty_region() is None
    assert hm.update_visual_height_patch(*geo, np.full(12, np.nan), 0.0, 0, 0, 0, 0)  # NaN stored as is
    assert np.isnan(hm.get_heights()[0]) and list(hm.get_height_row_revisions(0) - rev) == [1, 1, 1]


def test_colours_and_colour_patches():
    world, hm = small_map()
    assert not hm.has_color_map()
    assert hm.set_color_patch(np.zeros((4, 3)), 0, 1, 0, 1) is False  # no full colour map yet
    cols = np.full((12, 3), 0.5)
    hm.set_color(cols)
    assert hm.is_updated() and hm.has_color_map()
    assert hm.set_color_patch(np.zeros((3, 3)), 0, 1, 0, 1) is False  # 2 x 2 range needs 4 colours
    assert hm.set_color_patch(np.ones((2, 3)), 2, 7, 2, 2) is True  # clamped to x 2..3 of row 2
    got = hm.get_colors().reshape(3, 4, 3)
    assert np.all(got[2, 2:] == 1.0) and np.all(got[:2] == 0.5) and np.all(got[2, :2] == 0.5)
    assert np.array_equal(hm.get_color(1.5, 1.0), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="colors"):
        hm.set_color(np.full((12, 3), 2.0))
    hm.set_color(None)
    assert not hm.has_color_map()


