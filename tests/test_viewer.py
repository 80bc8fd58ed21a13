"""The GGUI viewer, rendered offscreen on the CPU (lavapipe): pixels land where the camera projection puts
the geometry, ruts change vertex colours, partial row updates equal a full upload; recording and bad input.

GGUI allows one window per process: the viewers made here share it (``taichi_terra/viewer/window.py``).
"""
import math

import numpy as np
import pytest
from PIL import Image

import taichi_terra as tt
from taichi_terra.terrain.heightmap import DEFAULT_COLOR
from taichi_terra.viewer import Annotations, OrbitCamera, Recorder, Style, Viewer, Window
from taichi_terra.viewer.viewer import PALETTE

pytestmark = pytest.mark.needs("vulkan")  # (GGUI renders through Vulkan)

W, H = 160, 120
BG = (1.0, 1.0, 1.0)
MAP_COLOR = (0.75, 0.75, 0.75)


def chroma(rgb):
    """Colour with brightness divided out: shading by the lights scales all channels alike."""
    c = np.asarray(rgb, float)
    return c / max(c.sum(), 1e-9)


def pixel(img, uv):
    col, row = round(uv[0]), round(uv[1])
    return img[row, col].astype(float) / 255.0


def test_terrain_and_bodies_appear_where_the_projection_puts_them():
    """Reference: the camera's own view and projection matrices. Two envs tiled side by side, each with
    all five shape types at different places; each body's top projects onto a pixel of that body's colour,
    a bare map point onto the map's colour, and a point between the tiles onto the background."""
    import trimesh

    world = tt.World(n_envs=2)
    world.add_heightmap(5, 5, 1.6, 1.0, 0.0, 0.0, np.zeros(25), colors=MAP_COLOR)
    bodies = [world.add_sphere(0.1, 1.0), world.add_box(0.2, 0.2, 0.2, 1.0), world.add_capsule(0.08, 0.1, 1.0),
              world.add_cylinder(0.1, 0.16, 1.0), world.add_mesh(trimesh.creation.icosphere(1, 0.1), 1.0)]
    heights = [0.1, 0.1, 0.13, 0.08, 0.1]  # resting heights of the centres (capsule and cylinder upright)
    for k, (body, z) in enumerate(zip(bodies, heights)):
        x = -0.6 + 0.3 * k
        body.set_position(np.array([[x, 0.2, z], [-x, -0.2, z]]))
    cam = OrbitCamera(target=(0.9, 0.0, 0.0), distance=3.6, yaw=-math.pi / 2, pitch=math.radians(70.0))
    viewer = Viewer(world, headless=True, window=Window(W, H, background=BG), envs="all", tile_spacing=(1.8, 1.8),
                    camera=cam, annotations=Annotations(overlay=False))
    img = viewer.capture()
    assert img.shape == (H, W, 3) and img.dtype == np.uint8
    offsets = [np.zeros(3), np.array([1.8, 0.0, 0.0])]
    for env, off in enumerate(offsets):
        for body, z in zip(bodies, heights):
            top = body.get_position(env) + off + [0.0, 0.0, 0.7 * z]  # a point on the visible upper part
            got = pixel(img, cam.project(top, W, H)[0])
            assert np.abs(chroma(got) - chroma(PALETTE[body.index])).max() < 0.05, (env, body, got)
        bare = np.array([0.0, 0.0 if env else -0.05, 0.0]) + [0.15, 0.0, 0.0]
        got = pixel(img, cam.project(bare + off, W, H)[0])
        assert np.abs(chroma(got) - chroma(MAP_COLOR)).max() < 0.05
    outside = cam.project([0.9, 0.0, 0.0], W, H)[0]  # between the tiles
    assert np.array_equal(pixel(img, outside), np.array(BG))
    # the map's corner, projected, sits at the edge between map and background pixels
    corner = cam.project([-0.8, -0.5, 0.0], W, H)[0]
    assert np.abs(chroma(pixel(img, corner + [3.0, -3.0])) - chroma(MAP_COLOR)).max() < 0.05
    assert np.array_equal(pixel(img, corner + [-3.0, 3.0]), np.array(BG))
    # one env alone: the env's own poses, untiled
    single = Viewer(world, headless=True, window=Window(W, H, background=BG), env=1, camera=cam,
                    annotations=Annotations(overlay=False))
    img1 = single.capture()
    ball = bodies[0].get_position(1) + [0.0, 0.0, 0.07]
    assert np.abs(chroma(pixel(img1, cam.project(ball, W, H)[0])) - chroma(PALETTE[0])).max() < 0.05
    assert np.array_equal(pixel(img1, cam.project(ball + offsets[1], W, H)[0]), np.array(BG))
    # keys: ] shows the next env (wrapping), space pauses, f follows the first body, n asks for a frame
    single.apply_key("]")
    assert single.env == 0 and single.envs == [0]
    single.apply_key(" ")
    assert single.paused
    assert single.apply_key("n") is True
    single.apply_key("f")
    assert single.follow is bodies[0]
    single.capture()
    assert np.allclose(single.camera.target, bodies[0].get_position(0))
    single.close()


def test_contacts_forces_and_overlay_are_drawn():
    """A 2 kg box resting on the ground: its contact forces total m g, and their arrows (force_scale m/N)
    rise through the box and show blue above it; the overlay covers the top-left corner."""
    world = tt.World(dt=1e-3)
    world.add_ground()
    box = world.add_box(0.2, 0.2, 0.2, 2.0)
    box.set_position([0.0, 0.0, 0.1])
    world.step(200)
    c = world.get_contacts(0)
    assert c.impulses[:, 2].sum() / world.dt == pytest.approx(2.0 * 9.81, rel=1e-3)
    cam = OrbitCamera(target=(0.0, 0.0, 0.2), distance=1.5, yaw=-math.pi / 2, pitch=math.radians(10.0))
    opts = {"headless": True, "window": Window(W, H, background=BG), "camera": cam}
    plain = Viewer(world, annotations=Annotations(overlay=False), **opts).capture()
    scale = 0.35 / (2.0 * 9.81 / len(c))  # each arrow 0.35 m long, rising 0.15 m above the box's top
    arrows = Viewer(world, annotations=Annotations(overlay=False, show_forces=True, force_scale=scale),
                    **opts).capture()
    force = c.impulses[0] / world.dt
    tip = c.positions[0] + scale * force * (0.33 / (scale * force[2]))  # the arrow's point 0.33 m up
    col, row = np.round(cam.project(tip, W, H)[0]).astype(int)

    def near(img):  # the pixels within 2 px (a line is 2 px wide)
        return img[row - 2:row + 3, col - 2:col + 3].reshape(-1, 3).astype(float) / 255.0

    assert np.all(near(plain) == 1.0)  # background only
    blue = [np.abs(chroma(px) - chroma((0.1, 0.2, 0.9))).max() < 0.05 for px in near(arrows)]
    assert sum(blue) >= 3
    overlay = Viewer(world, annotations=Annotations(overlay=True), **opts)
    with_text = overlay.capture()
    assert np.any(with_text[:20, :40] != plain[:20, :40])
    assert np.array_equal(with_text[-20:, -40:], plain[-20:, -40:])
    overlay.close()


@pytest.fixture(scope="module")
def rut_world():
    world = tt.World(dt=1e-3)
    mat = tt.SoilMaterial(bekker_kphi=5e4, sinkage_exponent=1.0, elastic_stiffness=1e6, damping=3e4)
    n = 21
    bed = world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n), mat)
    plate = world.add_box(0.3, 0.3, 0.02, 20.0)
    plate.set_position([0.0, 0.0, 0.009])
    return world, bed, plate


def test_partial_row_updates_equal_a_full_upload_and_ruts_change_colour(rut_world):
    """A viewer that follows the bed through its row revisions (rewriting only the rows that changed) draws
    the same image, bit for bit, as a new viewer that uploads every row; the vertices of a rut take the rut
    colour (reference: the colour map, base -> rut colour as plastic sinkage goes 0 -> color_range)."""
    world, bed, plate = rut_world
    cam = OrbitCamera(target=(0.0, 0.0, 0.0), distance=1.6, yaw=-math.pi / 2, pitch=math.radians(70.0))
    opts = {"headless": True, "window": Window(W, H, background=BG), "camera": cam,
            "annotations": Annotations(overlay=False), "style": Style(color_by="plastic_sinkage", color_range=0.004)}
    follower = Viewer(world, **opts)
    before = follower.capture()
    full_rows = bed.y_samples
    assert follower.stats["terrain_rows_written"] == full_rows
    world.step(300)
    plate.set_position([0.0, 0.0, 3.0])  # lifted out of view: the rut stays
    world.step(2)
    after = follower.capture()
    written = follower.stats["terrain_rows_written"] - full_rows
    assert 0 < written < full_rows  # only the rows under the plate
    fresh = Viewer(world, **opts)  # takes the window over and uploads all rows
    assert np.array_equal(fresh.capture(), after)
    with pytest.raises(RuntimeError, match="window"):
        follower.capture()
    # the rut: plastic sinkage > color_range under the plate's centre, none at the bed's edge
    sp = bed.get_soil_state(0)["plastic_sinkage"]
    assert sp.max() > 0.004
    centre = cam.project([0.0, 0.0, -sp.max()], W, H)[0]
    edge = cam.project([0.0, -0.4, 0.0], W, H)[0]
    base = chroma(DEFAULT_COLOR)
    rut = chroma(fresh.rut_color)
    assert np.abs(chroma(pixel(before, centre)) - chroma(PALETTE[plate.index])).max() < 0.05  # the plate
    assert np.abs(chroma(pixel(after, centre)) - rut).max() < 0.05
    assert np.abs(chroma(pixel(after, edge)) - base).max() < 0.05
    # with the base colouring the rut is sand-coloured again (only its depth shows)
    fresh.color_by = "base"
    assert np.abs(chroma(pixel(fresh.capture(), centre)) - base).max() < 0.05
    fresh.close()


def test_recorder_writes_gif_and_png_frames(tmp_path, rut_world):
    world, _bed, _plate = rut_world
    viewer = Viewer(world, headless=True, window=Window(64, 48), annotations=Annotations(overlay=False))
    gif = Recorder(tmp_path / "a.gif", fps=12.5)
    frames = Recorder(tmp_path / "frames", fps=12.5)
    for _ in range(3):
        viewer.camera.orbit(0.2, 0.0)  # distinct frames (a GIF merges identical neighbours)
        img = viewer.capture()
        gif.add(img)
        frames.add(img)
    gif.close()
    frames.close()
    viewer.close()
    with Image.open(tmp_path / "a.gif") as im:
        assert im.n_frames == 3 and im.size == (64, 48)
        assert im.info["duration"] == 80  # 1000 / 12.5 ms
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == [f"frame_0000{i}.png" for i in range(3)]
    with pytest.raises(ValueError, match="shape"):
        gif.add(np.zeros((10, 10, 3), np.uint8))


def test_bad_viewer_and_recorder_input(tmp_path, monkeypatch, rut_world):
    world, _bed, _plate = rut_world
    other = tt.World()
    stranger = other.add_sphere(0.1, 1.0)
    good = Viewer(world, headless=True, window=Window(64, 48), annotations=Annotations(overlay=False))
    before = good.capture()
    cases = [(lambda: {"window": Window(width=0)}, "width"), (lambda: {"window": Window(height=10 ** 5)}, "height"),
             (lambda: {"window": Window(64, True)}, "height"), (lambda: {"window": Window(title=None)}, "title"),
             (lambda: {"window": Window(background=(0, 0, 2))}, "background"),
             (lambda: {"window": {"width": 64}}, "window"), (lambda: {"env": 1}, "env"),
             (lambda: {"envs": [0, 0]}, "envs"), (lambda: {"envs": "some"}, "envs"),
             (lambda: {"style": Style(color_by="depth")}, "color_by"),
             (lambda: {"style": Style(color_range=0.0)}, "color_range"),
             (lambda: {"style": Style(sinkage_scale=-1.0)}, "sinkage_scale"),
             (lambda: {"style": Style(rut_color=(2, 0, 0))}, "rut_color"),
             (lambda: {"style": Style(show="mesh")}, "show"), (lambda: {"style": "visual"}, "style"),
             (lambda: {"annotations": Annotations(force_scale=-1.0)}, "force_scale"),
             (lambda: {"annotations": Annotations(frame_size=0.0)}, "frame_size"),
             (lambda: {"annotations": Style()}, "annotations"),
             (lambda: {"follow": stranger}, "follow"), (lambda: {"camera": "top"}, "camera"),
             (lambda: {"tile_spacing": (1.0, -1.0)}, "tile_spacing")]
    for make, word in cases:
        with pytest.raises((ValueError, TypeError), match=word):
            Viewer(world, headless=True, **make())
    with pytest.raises(TypeError, match="world"):
        Viewer("world", headless=True)
    assert np.array_equal(good.capture(), before)  # a rejected viewer did not take the window over
    good.close()
    (tmp_path / "dir.gif").mkdir()
    for path, word in ((tmp_path / "a.avi", "unsupported"), (tmp_path / "missing" / "a.gif", "does not exist"),
                       ("/proc/a.gif", "not writable"), (tmp_path / "dir.gif", "is a folder")):
        with pytest.raises(ValueError, match=word):
            Recorder(path, 10.0)
    with pytest.raises(ValueError, match="fps"):
        Recorder(tmp_path / "a.gif", 0.0)
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(ValueError, match="ffmpeg"):
        Recorder(tmp_path / "a.mp4", 10.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.gif"]  # nothing written


def test_orbit_camera_controls():
    """The eye stays at the distance from the target; panning moves both; pitch is clamped; looking_at
    reproduces the eye."""
    cam = OrbitCamera.looking_at(eye=(1.0, -2.0, 1.5), target=(0.0, 0.0, 0.2))
    assert np.allclose(cam.eye, [1.0, -2.0, 1.5])
    cam.orbit(0.3, 10.0)
    assert math.degrees(cam.pitch) == pytest.approx(89.0)
    assert np.linalg.norm(cam.eye - cam.target) == pytest.approx(cam.distance)
    eye, target = cam.eye, cam.target
    cam.pan(0.1, 0.0)
    assert np.allclose(cam.eye - eye, cam.target - target)
    cam.zoom(0.5)
    assert np.linalg.norm(cam.eye - cam.target) == pytest.approx(0.5 * np.linalg.norm(eye - target))
    for kwargs, word in (({"distance": 0.0}, "distance"), ({"fov": 180.0}, "fov"), ({"target": (0, 0)}, "target")):
        with pytest.raises(ValueError, match=word):
            OrbitCamera(**kwargs)


def test_view_rays_invert_the_projection_and_find_what_a_pixel_shows():
    """Reference: ``project`` (the renderer's matrices). Points along each pixel's ray project back onto that
    pixel; the ray through a box's projected centre, cast with ray_test, hits that box from the eye's side."""
    cam = OrbitCamera(target=(0.2, -0.1, 0.3), distance=2.5, yaw=0.7, pitch=math.radians(25.0), fov=50.0)
    px = np.array([[0.5, 0.5], [80.0, 60.0], [159.5, 119.5], [10.25, 100.75]])
    eye, d = cam.rays(px, W, H)
    assert np.allclose(eye, cam.eye) and np.allclose(np.linalg.norm(d, axis=1), 1.0)
    for t in (0.5, 2.0, 7.0):  # GGUI's matrices are float32: 1e-7 relative, a few 1e-5 px here
        assert np.abs(cam.project(eye + t * d, W, H) - px).max() < 1e-3
    world = tt.World()
    box = world.add_box(0.2, 0.2, 0.2, 1.0)
    box.set_position([0.1, 0.0, 0.25])
    _, ray = cam.rays(cam.project(box.get_position(0), W, H), W, H)
    hit = world.ray_test(eye, ray[0], 10.0)
    assert hit.object is box and np.dot(hit.normal, ray[0]) < 0.0
    assert np.linalg.norm(hit.point - box.get_position(0)) <= 0.1 * math.sqrt(3) + 1e-9
    for bad in ([1.0, 2.0, 3.0], [[np.nan, 1.0]]):
        with pytest.raises(ValueError, match="pixels"):
            cam.rays(bad, W, H)


def test_viewer_reports_its_colours_tiles_and_overlay(rut_world):
    """What the drawing tests compare against: body colours from the palette by index, the tile offsets,
    and the overlay's rectangle, which holds the text and nothing outside it changes when it is turned on."""
    world, bed, plate = rut_world
    cam = OrbitCamera(target=(0.0, 0.0, 0.0), distance=2.0, yaw=-math.pi / 2, pitch=math.radians(50.0))
    plain = Viewer(world, headless=True, window=Window(W, H), camera=cam, annotations=Annotations(overlay=False))
    assert np.allclose(plain.body_colors, [PALETTE[plate.index]])
    assert plain.tile_offsets.shape == (1, 3) and not plain.tile_offsets.any()
    assert plain.overlay_box is None
    base = plain.capture()
    text = Viewer(world, headless=True, window=Window(W, H), camera=cam, annotations=Annotations(overlay=True))
    x0, y0, x1, y1 = text.overlay_box
    assert (x0, y0) == (0, 0) and 0 < x1 <= W and 0 < y1 <= H
    img = text.capture()
    changed = np.any(img != base, axis=2)
    assert changed[y0:y1, x0:x1].any()
    changed[y0:y1, x0:x1] = False
    assert not changed.any()
    text.close()


@pytest.mark.needs("ffmpeg")
def test_recorder_writes_mp4_with_ffmpeg(tmp_path, rut_world):
    """MP4 recording pipes the frames to ffmpeg (the test run installs it): the file holds every frame at the
    rate."""
    import shutil
    import subprocess

    world, _bed, _plate = rut_world
    viewer = Viewer(world, headless=True, window=Window(64, 48), annotations=Annotations(overlay=False))
    rec = Recorder(tmp_path / "a.mp4", fps=12.0)
    for _ in range(5):
        viewer.camera.orbit(0.1, 0.0)
        rec.add(viewer.capture())
    rec.close()
    viewer.close()
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-show_entries",
                          "stream=nb_read_frames,r_frame_rate,width,height", "-of", "csv=p=0", str(tmp_path / "a.mp4")],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().split(",") == ["64", "48", "12/1", "5"]


def test_belts_are_drawn_with_tread_marks_that_move_with_the_belt():
    """Reference: a belt's travel ``g^T q``. A conveyor's belt (a track on a fixed base), seen from above, is
    drawn in rubber grey with tread marks; turning its roller by 0.3 rad moves the belt 0.03 m, half the
    marks' 0.06 m spacing, so the marks move off their pixels while as many stay in view."""
    from test_track_dynamics import CONVEYOR

    from taichi_terra.viewer.viewer import TREAD_COLOR

    world = tt.World()
    conveyor = world.add_articulated_system(CONVEYOR, base="fixed")
    cam = OrbitCamera(target=(0.0, 0.0, 0.5), distance=2.2, yaw=0.0, pitch=math.radians(89.0))
    viewer = Viewer(world, headless=True, window=Window(480, 360, background=BG), camera=cam,
                    annotations=Annotations(overlay=False))

    def marked(image):
        return (np.abs(image.astype(float) - 255.0 * np.asarray(TREAD_COLOR)).max(axis=2) <= 2.0)

    before = marked(viewer.capture())
    conveyor.set_generalized_coordinate([0.3])
    after = marked(viewer.capture())
    assert before.sum() > 500
    assert abs(int(after.sum()) - int(before.sum())) < 0.2 * before.sum()
    assert (before & after).sum() < 0.5 * before.sum()


def test_belt_contacts_are_coloured_by_their_traction():
    """Reference: Coulomb's law on a sliding belt. Drive torques of 40 N m push the 32 kg tracked robot beyond
    ``mu W`` (friction 0.8): every belt contact that carries load slides, its tangential force 0.8 of its
    normal force, and is drawn 80 % of the way from the no-traction colour to the full-traction one; the
    contacts that carry nothing (those merged into coincident ones among them, and those the load does not
    need: a rigid robot on the four ends of its footprints is carried by any three of them) keep the
    no-traction colour."""
    from taichi_terra.bodies.tracked_robot import tracked_robot_urdf
    from taichi_terra.viewer.viewer import TRACTION_COLORS

    world = tt.World(dt=0.002)
    world.add_ground(0.0)
    robot = world.add_articulated_system(tracked_robot_urdf(), position=(0.0, 0.0, 0.1931))
    world.step(20)
    tau = np.zeros(robot.get_dof())
    tau[[robot.get_generalized_velocity_index(j) for j in ("left_sprocket", "right_sprocket")]] = 40.0
    robot.set_generalized_force(tau)
    world.step(10)
    viewer = Viewer(world, headless=True, window=Window(W, H),
                    annotations=Annotations(show_contacts=True, overlay=False))
    _pts, forces, colors = viewer._contact_arrays()
    c = world.get_contacts(0)
    low, high = np.asarray(TRACTION_COLORS[0]), np.asarray(TRACTION_COLORS[1])
    loaded = forces[:, 2] > 1e-9
    assert loaded.sum() >= 3 and c.merged.any() and not np.any(c.merged & loaded)
    np.testing.assert_allclose(colors[loaded], np.tile(0.2 * low + 0.8 * high, (loaded.sum(), 1)), atol=1e-6)
    np.testing.assert_allclose(colors[~loaded], np.tile(low, ((~loaded).sum(), 1)), atol=1e-12)
    assert viewer.capture().shape == (H, W, 3)


def test_a_track_with_visual_false_draws_no_belt():
    """Reference: the spec's ``visual="false"`` (a robot whose own meshes show the belt): the picture of the
    tracked robot with its tracks' visuals off equals, pixel for pixel, that of the same robot without
    tracks (its body alone), and the belts' shapes are reported hidden."""
    import xml.etree.ElementTree as ET

    from taichi_terra.bodies.tracked_robot import tracked_robot_urdf

    urdf = tracked_robot_urdf().replace("<track ", '<track visual="false" ')
    bare = ET.fromstring(tracked_robot_urdf())
    for elem in bare.findall("track"):
        bare.remove(elem)
    cam = OrbitCamera(target=(0.0, 0.0, 0.0), distance=2.5, yaw=math.radians(30.0), pitch=math.radians(35.0))
    images = []
    for text in (urdf, ET.tostring(bare, encoding="unicode")):
        world = tt.World()
        robot = world.add_articulated_system(text, position=(0.0, 0.0, 0.2))
        viewer = Viewer(world, headless=True, window=Window(W, H, background=BG), camera=cam,
                        annotations=Annotations(overlay=False))
        images.append(viewer.capture())
        if text is urdf:
            belts = [b for t in robot.get_tracks() for b in t["collision_bodies"]]
            assert sorted(viewer.hidden_bodies) == sorted(belts) and len(belts) == 8
    assert (images[0] != 255).any()  # (the body is drawn)
    np.testing.assert_array_equal(images[0], images[1])


def test_a_diverged_env_is_drawn_empty_and_named_in_the_overlay():
    """Env 1 of 2 passes a 5 m/s speed limit in its first step (1e4 N up on 1 kg: 10 m/s); the divergence watch
    stops it with its box still in view. The viewer leaves its box out, draws env 0's, and says why."""
    world = tt.World(n_envs=2)
    box = world.add_box(0.2, 0.2, 0.2, 1.0)
    box.set_position([0.0, 0.0, 0.1])
    box.set_external_force([0.0, 0.0, 1e4], env=1)
    world.speed_limit = 5.0
    world.step(3)
    assert list(world.get_diverged()) == [1]
    cam = OrbitCamera(target=(0.9, 0.0, 0.0), distance=3.6, yaw=-math.pi / 2, pitch=math.radians(70.0))
    viewer = Viewer(world, headless=True, window=Window(W, H, background=BG), envs="all", tile_spacing=(1.8, 1.8),
                    camera=cam, annotations=Annotations(overlay=False))
    img = viewer.capture()
    top = [0.0, 0.0, 0.2]
    assert np.abs(chroma(pixel(img, cam.project(top, W, H)[0])) - chroma(PALETTE[0])).max() < 0.05
    assert np.array_equal(pixel(img, cam.project(np.add(top, [1.8, 0.0, 0.0]), W, H)[0]), np.array(BG))
    assert "env 1 diverged after step 1: a speed over the limit, body 0" in viewer.overlay_lines()
    viewer.close()
