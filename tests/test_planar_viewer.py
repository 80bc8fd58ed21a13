"""The 2D viewer of planar worlds, rendered offscreen on the CPU (lavapipe) from a stub world with fixed
drawing data (no physics): colours by kind, the metres-to-pixels mapping, circle areas, tiling, view keys,
buffer growth, the scene runner's choice of viewer and bad input.

GGUI allows one window per process: the viewers made here share it (``taichi_terra/viewer/window.py``).
Unless a test says otherwise the view is camera = (0, 0.5, 1) on a 160x120 image: 60 pixels per metre, the
world point (x, y) at pixel column 79.5 + 60 x and row 59.5 - 60 (y - 0.5).
"""
import math
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from taichi_terra.viewer import PlanarStyle, PlanarViewer, Window, app

pytestmark = pytest.mark.needs("vulkan")  # (GGUI renders through Vulkan)
from taichi_terra.viewer.options import DEFAULT_COLORS
from taichi_terra.viewer.planar_viewer import CIRCLE_SIDES

W, H = 160, 120
CAM = (0.0, 0.5, 1.0)
BG = (1.0, 1.0, 1.0)


def box(x0, y0, x1, y1):
    return [[(x0, y0), (x1, y0), (x1, y1)], [(x0, y0), (x1, y1), (x0, y1)]]


def scene(kinds, poses, boxes=(), circles=(), segments=(), contacts=(), bounds=(-1.0, -0.2, 1.0, 1.2)):
    """Drawing data: ``boxes`` [(object, x0, y0, x1, y1)], ``circles`` [(object, x, y, r)], ``segments``
    [(object, (x0, y0), (x1, y1))], ``contacts`` [((x, y), (nx, ny), force)]."""
    tris = [t for b in boxes for t in box(*b[1:])]
    return {"triangles": np.array(tris, float).reshape(-1, 3, 2),
            "triangle_object": np.array([b[0] for b in boxes for _ in range(2)], int),
            "circles": np.array([c[1:3] for c in circles], float).reshape(-1, 2),
            "circle_radius": np.array([c[3] for c in circles], float),
            "circle_object": np.array([c[0] for c in circles], int),
            "segments": np.array([s[1:] for s in segments], float).reshape(-1, 2, 2),
            "segment_object": np.array([s[0] for s in segments], int),
            "object_kind": np.array(kinds, int), "poses": np.array(poses, float).reshape(-1, 3),
            "contact_points": np.array([c[0] for c in contacts], float).reshape(-1, 2),
            "contact_normals": np.array([c[1] for c in contacts], float).reshape(-1, 2),
            "contact_forces": np.array([c[2] for c in contacts], float), "bounds": np.array(bounds, float)}


def demo_scene():
    """Static ground, a passive box and circle, a driven box heading +x, a wall and one contact."""
    return scene(kinds=[0, 1, 1, 2], poses=[(0, 0, 0), (-0.5, 0.2, 0), (0.4, 0.25, 0), (0, 0.8, 0)],
                 boxes=[(0, -1, -0.2, 1, 0), (1, -0.7, 0, -0.3, 0.4), (3, -0.15, 0.7, 0.15, 0.9)],
                 circles=[(2, 0.4, 0.25, 0.25)], segments=[(0, (1, -0.2), (1, 1.2))],
                 contacts=[((0.4, 0.0), (0.0, 1.0), 9.81)])


class StubWorld:
    """The planar world interface with fixed drawing data per env (``data``, editable between frames)."""

    is_planar = True

    def __init__(self, *data):
        self.data, self.n_envs, self.dt, self.time = list(data), len(data), 0.01, 0.0

    def step(self, n=1):
        self.time += n * self.dt

    def checkpoint(self):
        return self.time

    def restore(self, checkpoint):
        self.time = checkpoint

    def draw_data(self, env):
        return {k: v.copy() for k, v in self.data[env].items()}


def u8(rgb):
    return np.round(np.asarray(rgb) * 255.0).astype(int)


def at(img, viewer, xy, env=None):
    col, row = np.round(viewer.project([xy], env)[0]).astype(int)
    return img[row, col].astype(int)


def mask(img, rgb):
    return np.all(np.abs(img.astype(int) - u8(rgb)) <= 1, axis=2)


def centroid(m):
    rows, cols = np.nonzero(m)
    return np.array([cols.mean(), rows.mean()])


def view(world, **kwargs):
    opts = {"headless": True, "window": Window(W, H, background=BG), "camera": CAM, **kwargs}
    return PlanarViewer(world, **opts)


def test_kinds_lines_and_contacts_take_their_colours_on_a_clean_background():
    """Reference: the hand-computed mapping (60 px/m about (0, 0.5)). Probe points well inside each filled
    shape show its kind's colour (flat colours: no lighting in 2D); empty places show the background
    exactly; the contact colour appears only at the contact point and along its normal line."""
    world = StubWorld(demo_scene())
    viewer = view(world)
    assert np.allclose(viewer.project([(0.5, 0.25), (-1.0, 1.5)]), [(109.5, 74.5), (19.5, -0.5)])
    img = viewer.capture()
    assert img.shape == (H, W, 3) and img.dtype == np.uint8
    c = DEFAULT_COLORS
    probes = [((0.0, -0.1), c["static"]), ((-0.5, 0.2), c["passive"]), ((0.4, 0.38), c["passive"]),
              ((-0.1, 0.75), c["driven"]), ((0.07, 0.8), c["heading"]), ((0.55, 0.25), c["spin"]),
              ((0.4, 0.1), c["contact"]), ((-1.2, 1.3), BG), ((0.7, 1.2), BG), ((-0.5, 0.6), BG)]
    for xy, rgb in probes:
        assert np.abs(at(img, viewer, xy) - u8(rgb)).max() <= 1, (xy, rgb, at(img, viewer, xy))
    col = round(viewer.project([(1.0, 0.5)])[0, 0])  # the wall: a 2 px line at x = 1 m, rows 17.5 to 101.5
    assert mask(img[:, col - 1:col + 2], c["segment"]).any(axis=1)[19:101].all()
    # red only at the contact: the point (radius 3 px) and its normal (the largest force: 0.16 m up)
    red = mask(img, c["contact"])
    rows, cols = np.nonzero(red)
    (c0, r0), (_, r1) = viewer.project([(0.4, 0.0), (0.4, 0.16)])
    assert red.sum() > 10 and cols.min() >= c0 - 4 and cols.max() <= c0 + 4
    assert r1 - 2 <= rows.min() <= r1 + 2 and rows.max() <= r0 + 4
    viewer.apply_key("c")  # contacts off: the ball's colour where the normal was, no red anywhere
    img = viewer.capture()
    assert not mask(img, c["contact"]).any()
    assert np.abs(at(img, viewer, (0.4, 0.1)) - u8(c["passive"])).max() <= 1
    # headings turn the lines: the driven arrow points up, the passive circle's spin line too
    world.data[0]["poses"][2:, 2] = math.pi / 2
    img = viewer.capture()
    for xy, rgb in (((0.0, 0.86), c["heading"]), ((0.07, 0.8), c["driven"]), ((0.4, 0.4), c["spin"]),
                    ((0.55, 0.25), c["passive"])):
        assert np.abs(at(img, viewer, xy) - u8(rgb)).max() <= 1, (xy, rgb)
    # nothing to draw (every array with zero rows): background only
    viewer.world = StubWorld(scene(kinds=[], poses=[]))
    assert np.all(viewer.capture() == u8(BG))
    viewer.close()


def test_circle_area_matches_pi_r_squared():
    """A circle of radius r = 50 px (0.5 m at 100 px/m) covers the pixels whose centres lie in the drawn
    24-gon, of area A = 12 sin(15 deg) r^2 = 0.9886 pi r^2. For a convex polygon of widths wx, wy the count
    of pixel centres inside differs from its area by at most wx + wy + 1 (Steiner: the pixels' squares lie
    in the polygon grown by half a pixel, of area A + wx + wy + 1, and cover it shrunk by half a pixel, of
    area >= A - wx - wy), here 4 r + 1 = 201 px. (Measured: 7772 px against A = 7764.6; a 12-gon gave 7520
    and a 2 % larger radius 8072, both outside the bound.)"""
    world = StubWorld(scene(kinds=[0], poses=[(0, 0, 0)], circles=[(0, 0.0, 0.0, 0.5)], bounds=(-0.5, -0.5, 0.5, 0.5)))
    viewer = view(world, camera=(0.0, 0.0, 0.6))
    r = 50.0
    polygon = 0.5 * CIRCLE_SIDES * math.sin(2.0 * math.pi / CIRCLE_SIDES) * r * r
    count = int(mask(viewer.capture(), DEFAULT_COLORS["static"]).sum())
    assert abs(count - polygon) <= 4 * r + 1, (count, polygon, math.pi * r * r)
    assert abs(count - math.pi * r * r) <= (math.pi * r * r - polygon) + 4 * r + 1
    viewer.close()


def test_tiled_envs_fill_their_own_halves():
    """Two envs with the same bounds, a passive box in env 0 and a driven one in env 1 (no heading arrow
    shown: it is inside), tiled in two columns by the default view: each colour stays in its half."""
    bounds = (-0.5, -0.5, 0.5, 0.5)
    world = StubWorld(scene(kinds=[1], poses=[(0, 0, 0)], boxes=[(0, -0.3, -0.3, 0.3, 0.3)], bounds=bounds),
                      scene(kinds=[2], poses=[(0, 0, 0)], boxes=[(0, -0.3, -0.3, 0.3, 0.3)], bounds=bounds))
    viewer = view(world, envs="all", camera=None)
    assert viewer.envs == [0, 1]
    img = viewer.capture()
    passive, driven = mask(img, DEFAULT_COLORS["passive"]), mask(img, DEFAULT_COLORS["driven"])
    assert passive[:, :W // 2].sum() > 500 and not passive[:, W // 2:].any()
    assert driven[:, W // 2:].sum() > 300 and not driven[:, :W // 2].any()
    assert np.abs(centroid(passive) - viewer.project([(0.0, 0.0)], 0)[0]).max() < 0.5
    # the default view frames both tiles: the bounds' corners lie inside the image
    corners = np.concatenate([viewer.project([(-0.5, -0.5), (0.5, 0.5)], e) for e in (0, 1)])
    assert corners.min() > 0 and corners[:, 0].max() < W - 1 and corners[:, 1].max() < H - 1
    # one env alone, and ] to switch it
    single = view(world, env=1, camera=None)
    img = single.capture()
    assert mask(img, DEFAULT_COLORS["driven"]).sum() > 300 and not mask(img, DEFAULT_COLORS["passive"]).any()
    single.apply_key("]")
    assert single.env == 0 and single.envs == [0]
    assert not mask(single.capture(), DEFAULT_COLORS["driven"]).any()
    single.close()


def test_zoom_pan_drag_and_follow_move_the_drawing():
    """A passive box centred at (0.3, 0.2) m: at pixel (97.5, 77.5). Right pans the view 0.2 half-heights
    (12 px) so the box moves 12 px left; Up moves it 12 px down; + scales its offset from the image centre
    by 1.25 and - undoes it; a drag of 0.1 window widths carries it 16 px with the cursor; following it
    centres it."""
    world = StubWorld(scene(kinds=[1], poses=[(0.3, 0.2, 0)], boxes=[(0, 0.25, 0.15, 0.35, 0.25)]))
    viewer = view(world)
    colour = DEFAULT_COLORS["passive"]

    def where():
        return centroid(mask(viewer.capture(), colour))

    p0 = where()
    assert np.abs(p0 - (97.5, 77.5)).max() < 0.5
    assert np.allclose(viewer.unproject(viewer.project([(0.3, 0.2), (-1.0, 2.5)])), [(0.3, 0.2), (-1.0, 2.5)])
    viewer.apply_key("Right")
    assert np.abs(where() - p0 - (-12.0, 0.0)).max() < 0.5
    viewer.apply_key("Up")
    assert np.abs(where() - p0 - (-12.0, 12.0)).max() < 0.5
    viewer.apply_key("Left")
    viewer.apply_key("Down")
    centre = np.array([79.5, 59.5])
    viewer.apply_key("+")
    assert np.abs(where() - (centre + 1.25 * (p0 - centre))).max() < 0.5
    viewer.apply_key("-")
    assert np.abs(where() - p0).max() < 0.5
    viewer.apply_drag(0.1, 0.0)
    assert np.abs(where() - p0 - (16.0, 0.0)).max() < 0.5
    viewer.close()
    follower = view(world, follow=types.SimpleNamespace(index=0))
    assert np.abs(centroid(mask(follower.capture(), colour)) - centre).max() < 0.5
    world.data[0]["poses"][0, :2] += 5.0  # the view follows the pose
    assert np.allclose(follower.camera[:2], (0.3, 0.2))
    follower.capture()
    assert np.allclose(follower.camera[:2], (5.3, 5.2))
    follower.close()


def test_keys_and_buffer_growth():
    """Keys change the state the scene runner reads; the buffers grow from one circle to 40 (all drawn) and
    a later smaller frame leaves no stale shapes; a newer viewer takes the window over."""
    world = StubWorld(demo_scene(), demo_scene())
    viewer = view(world)
    resets = []
    assert viewer.handle_input() == {"step_once": False}  # headless: no input
    viewer.apply_key(" ")
    assert viewer.paused
    assert viewer.apply_key(".") is True and viewer.apply_key("n") is True
    assert viewer.apply_key("r", on_reset=lambda: resets.append(1)) is False and resets == [1]
    viewer.apply_key("f")
    assert viewer.follow.index == 3  # the first driven object
    viewer.apply_key("f")
    assert viewer.follow is None
    viewer.apply_key("[")
    assert viewer.env == 1 and viewer.envs == [1]
    viewer.apply_key("Escape")
    assert viewer.running
    with pytest.raises(RuntimeError, match="headless"):
        viewer.show()
    one = scene(kinds=[0], poses=[(0, 0, 0)], circles=[(0, -0.9, 1.3, 0.04)])
    world.data[1] = one
    assert mask(viewer.capture(), DEFAULT_COLORS["static"]).sum() > 5
    xy = [(-0.9 + 0.2 * (k % 10), 1.3 - 0.35 * (k // 10)) for k in range(40)]
    world.data[1] = scene(kinds=[0] * 40, poses=[(x, y, 0) for x, y in xy],
                          circles=[(k, *p, 0.04) for k, p in enumerate(xy)])
    img = viewer.capture()
    assert all(np.abs(at(img, viewer, p) - u8(DEFAULT_COLORS["static"])).max() <= 1 for p in xy)
    world.data[1] = one
    img = viewer.capture()
    assert all(np.all(at(img, viewer, p) == u8(BG)) for p in xy[1:])
    newer = view(world)
    with pytest.raises(RuntimeError, match="window"):
        viewer.capture()
    newer.close()


def test_scene_runner_draws_a_planar_world_with_the_planar_viewer(tmp_path):
    """app.run picks the 2D viewer for a world with is_planar (the 3D viewer rejects anything but a World):
    1 s at 10 frames per second and dt = 0.01 s is 100 steps, and the still shows the driven robot."""
    world = StubWorld(demo_scene())
    args = app.parse(app.parser("stub"), ["--headless", "--quiet", "--seconds", "1", "--fps", "10", "--width", "96",
                                          "--height", "64", "--still", str(tmp_path / "a.png")])
    scene = app.Scene(world=world, viewer_options={"style": PlanarStyle(show_contacts=False)})
    out = app.run(lambda a: scene, args, "stub")
    assert out["frames"] == 10 and out["steps"] == 100
    with Image.open(tmp_path / "a.png") as im:
        assert im.size == (96, 64) and mask(np.asarray(im.convert("RGB")), DEFAULT_COLORS["driven"]).sum() > 10


def test_bad_arguments_name_themselves():
    """Each bad option raises naming itself, before the viewer takes the window: the viewer made first still
    draws the same image afterwards."""
    world = StubWorld(demo_scene())
    good = view(world)
    before = good.capture()
    cases = [(lambda: {"window": Window(width=0)}, "width"), (lambda: {"window": Window(height=10 ** 5)}, "height"),
             (lambda: {"window": Window(width=100.0)}, "width"), (lambda: {"window": Window(title=3)}, "title"),
             (lambda: {"window": Window(background=(0.0, 0.0))}, "background"),
             (lambda: {"window": (200, 150)}, "window"), (lambda: {"env": 1}, "env"),
             (lambda: {"envs": [0, 0]}, "envs"), (lambda: {"envs": "some"}, "envs"),
             (lambda: {"camera": (0.0, 0.0)}, "camera"), (lambda: {"camera": (0.0, 0.0, -1.0)}, "camera"),
             (lambda: {"camera": "top"}, "camera"),
             (lambda: {"style": PlanarStyle(colors={"driven": (2.0, 0.0, 0.0)})}, "colors"),
             (lambda: {"style": PlanarStyle(colors={"robot": (1.0, 0.0, 0.0)})}, "colors"),
             (lambda: {"style": PlanarStyle(colors={"static": "grey"})}, "colors"),
             (lambda: {"style": PlanarStyle(force_scale=0.0)}, "force_scale"),
             (lambda: {"style": {"show_contacts": False}}, "style"),
             (lambda: {"follow": types.SimpleNamespace(index=9)}, "follow"), (lambda: {"follow": "robot"}, "follow"),
             (lambda: {"tile_spacing": (1.0, -1.0)}, "tile_spacing")]
    for make, word in cases:
        with pytest.raises((ValueError, TypeError), match=word):
            PlanarViewer(world, headless=True, **make())
    with pytest.raises(TypeError, match="world"):
        PlanarViewer(object(), headless=True)
    with pytest.raises(TypeError, match="env"):
        PlanarViewer(world, headless=True, env="0")
    assert np.array_equal(good.capture(), before)
    good.close()


WINDOW_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    import taichi_terra as tt
    from test_planar_viewer import StubWorld, demo_scene
    from taichi_terra.viewer import PlanarViewer, Window
    tt.init()
    viewer = PlanarViewer(StubWorld(demo_scene()), window=Window(200, 150))
    for _ in range(5):
        assert viewer.handle_input() == {{"step_once": False}}  # no input arrives on the virtual display
        viewer.show()
    assert viewer.running
    image = viewer.capture()
    assert image.shape == (150, 200, 3) and image.std() > 0
    viewer.apply_key("Escape")
    assert not viewer.running
    viewer.close()
    print("window ok", viewer.stats["frames"])
""")


@pytest.mark.needs("xvfb")
def test_window_shows_frames_and_closes():
    """A real window on a virtual X display (Xvfb), in its own process."""
    script = WINDOW_SCRIPT.format(tests=str(Path(__file__).resolve().parent))
    out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 640x480x24", sys.executable, "-c", script],
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "window ok 6" in out.stdout
