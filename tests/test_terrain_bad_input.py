"""Bad input to the terrain's entry points (height maps and their files, poses, queries and edits, the terrain
generator, soil-bed edits) raises a clear error naming the argument or file, and changes nothing."""
import functools
import math

import numpy as np
import pytest
from PIL import Image

import taichi_terra as tt
from helpers import bad_input_scene as _scene, rejects as _rejects, unchanged as _unchanged

NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("args, exc, match", [
    ((3, 2, 2.0, 1.0, 0.0, 0.0, np.zeros(5)), ValueError, "heights"),
    ((3, 2, 2.0, 1.0, 0.0, 0.0, np.zeros((2, 3))), ValueError, "heights"),
    ((2, 2, 1.0, 1.0, 0.0, 0.0, [[1.0, 2.0], [3.0]]), TypeError, "heights"),
    ((1, 2, 2.0, 1.0, 0.0, 0.0, np.zeros(2)), ValueError, "x_samples"),
    ((2, 1, 2.0, 1.0, 0.0, 0.0, np.zeros(2)), ValueError, "y_samples"),
    ((2.0, 2, 2.0, 1.0, 0.0, 0.0, np.zeros(4)), TypeError, "x_samples"),
    ((2, 2, 0.0, 1.0, 0.0, 0.0, np.zeros(4)), ValueError, "x_size"),
    ((2, 2, 2.0, -1.0, 0.0, 0.0, np.zeros(4)), ValueError, "y_size"),
    ((2, 2, INF, 1.0, 0.0, 0.0, np.zeros(4)), ValueError, "x_size"),
    ((2, 2, 2.0, NAN, 0.0, 0.0, np.zeros(4)), ValueError, "y_size"),
    ((2, 2, 2.0, 1.0, NAN, 0.0, np.zeros(4)), ValueError, "center_x"),
    ((2, 2, 2.0, 1.0, 0.0, -INF, np.zeros(4)), ValueError, "center_y"),
])
def test_add_heightmap_rejects(args, exc, match):
    w = _scene()
    _rejects(w, (lambda: w.add_heightmap(*args), exc, match))


def test_add_heightmap_rejects_colors_material_and_1d_matrix():
    w = _scene()
    hm = functools.partial(w.add_heightmap, 2, 2, 1.0, 1.0, 0.0, 0.0, np.zeros(4))
    _rejects(w, (lambda: hm(colors=np.zeros((3, 3))), ValueError, "colors"),
             (lambda: hm(colors=(2.0, 0.0, 0.0)), ValueError, "colors"),
             (lambda: hm(material="nope"), ValueError, "unknown material 'nope'"),
             (lambda: w.add_heightmap_from_matrix(1.0, 1.0, 0.0, 0.0, np.zeros(4)), ValueError,
              "heights must be a 2-D array"),
             (lambda: w.add_heightmap_from_matrix(1.0, 1.0, 0.0, 0.0, np.zeros((1, 3))), ValueError, "heights"))


@pytest.mark.parametrize("bad", [[["a", "b"], ["c", "d"]], object(), [[1.0, 2.0], [3.0]]],
                         ids=["strings", "object", "ragged"])
def test_add_heightmap_from_matrix_rejects_non_numeric(bad):
    """Like add_heightmap, a matrix that is not numbers is rejected with a message naming ``heights``."""
    w = _scene()
    with _unchanged(w), pytest.raises((TypeError, ValueError), match="heights"):
        w.add_heightmap_from_matrix(1.0, 1.0, 0.0, 0.0, bad)


@pytest.mark.parametrize("build", [False, True])
def test_heightmap_pose_and_queries_reject(build):
    w = _scene(build=build)
    hm = w.heightmaps[0]
    hm.set_position(1.0, -2.0, 0.5)
    hm.set_orientation([0.9, 0.1, 0.2, 0.3])
    pos, ori = hm.set_position, hm.set_orientation
    _rejects(w, (lambda: pos(NAN, 0.0, 0.0), ValueError, "position must be finite"),
             (lambda: pos([0.0, INF, 0.0]), ValueError, "position must be finite"),
             (lambda: pos([1.0, 2.0]), ValueError, "position must have shape"),
             (lambda: pos("abc"), TypeError, "position"),
             (lambda: ori([0.0, 0.0, 0.0, 0.0]), ValueError, "non-zero norm"),
             (lambda: ori(0.0, 0.0, 0.0, 0.0), ValueError, "non-zero norm"),
             (lambda: ori([1.0, NAN, 0.0, 0.0]), ValueError, "orientation must be finite"),
             (lambda: ori(2.0 * np.eye(3)), ValueError, "rotation"),
             (lambda: ori(np.diag([-1.0, 1.0, 1.0])), ValueError, "rotation"),
             (lambda: ori(1.0, 0.0, 0.0), ValueError, "orientation must have shape"),
             (lambda: ori(np.zeros(5)), ValueError, "orientation must have shape"),
             *((lambda q=q, bad=bad: q(*bad), ValueError, f"{name} must be finite")
               for bad, name in (((NAN, 0.0), "x"), ((0.0, INF), "y"))
               for q in (hm.get_height, hm.get_contact_height, hm.get_normal, hm.get_color)))


def test_png_bad_files(tmp_path):
    Image.fromarray(np.zeros((3, 3, 3), np.uint8), mode="RGB").save(tmp_path / "rgb.png")
    (tmp_path / "junk.png").write_bytes(b"not a png")
    Image.fromarray(np.zeros((3, 3), np.uint8), mode="L").save(tmp_path / "ok.bmp")
    world = tt.World()
    for name, word in (("rgb.png", "grayscale"), ("junk.png", "cannot read"), ("ok.bmp", ".png extension"),
                       ("missing.png", "cannot read")):
        with pytest.raises(ValueError, match=word) as err:
            world.add_heightmap_from_png(0.0, 0.0, tmp_path / name, 1.0, 1.0, 1.0, 0.0)
        assert name in str(err.value)
    with pytest.raises((TypeError, ValueError), match="height_scale"):
        world.add_heightmap_from_png(0.0, 0.0, tmp_path / "ok.bmp", 1.0, 1.0, float("nan"), 0.0)
    assert world.heightmaps == []


@pytest.mark.parametrize("field,value,word", [("fractal_octaves", 0, "fractal_octaves"),
                                              ("fractal_octaves", 65, r"\[1, 64\]"),
                                              ("frequency", 0.0, "frequency"), ("x_samples", 1, "x_samples"),
                                              ("step_size", -0.1, "step_size"), ("seed", 2 ** 32, "seed"),
                                              ("fractal_gain", float("inf"), "fractal_gain"),
                                              ("y_samples", 3.5, "y_samples")])
def test_terrain_properties_validation(field, value, word):
    with pytest.raises((TypeError, ValueError), match=word):
        tt.TerrainProperties(**{field: value})


def test_soil_bed_rejects_edits():
    world = tt.World()
    bed = world.add_deformable_terrain(3, 3, 1.0, 1.0, 0.0, 0.0, np.zeros(9), tt.SoilMaterial())
    for call in (lambda: bed.update(0.0, 0.0, 1.0, 1.0, np.zeros(9)),
                 lambda: bed.update_visual_height(0.0, 0.0, 1.0, 1.0, np.zeros(9)),
                 lambda: bed.update_visual_height_patch(0.0, 0.0, 1.0, 1.0, np.zeros(9), 0.0, 0, 1, 0, 1)):
        with pytest.raises(TypeError, match="soil bed"):
            call()
