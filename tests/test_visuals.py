"""URDF visuals: what the reader keeps of ``<visual>`` and ``<material>``, and what the viewer draws of them.

The robot is written here: a body (an .stl box), a head on a fixed joint (an .obj sphere, merged into the body),
a wheel (a .dae cylinder) and a tail whose visual mesh file does not exist, its meshes exported by trimesh into a
``package://`` tree in a temporary folder. Reference for the pictures: each sampled pixel's view ray
(``OrbitCamera.rays``) cast against the mesh files as trimesh reads them, placed by the URDF's numbers on the
link frames the system reports, against the tail's collision sphere and the ground plane; the nearest hit names
what the pixel must show (as ``tests/drawing_oracle.py`` does for collision shapes).
"""
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.bodies.urdf import URDFError, parse_urdf, rpy_matrix

W, H = 160, 120
BG = (1.0, 1.0, 1.0)
BLUE, YELLOW, GREEN = (0.1, 0.2, 0.9), (0.9, 0.8, 0.1), (0.1, 0.7, 0.2)
#: (link, mesh file, its placement on the link frame (xyz, rpy) [m, rad], scale, colour)
VISUALS = (("base", "body.stl", ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), 1.0, BLUE),
           ("base", "ball.obj", ((0.15, 0.0, 0.1), (0.0, 0.0, 0.0)), 2.0, YELLOW),  # the head, merged
           ("wheel", "wheel.dae", ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), 1.0, GREEN))
TAIL_RADIUS = 0.04

ROBOT = """<robot name="robo">
  <material name="blue"><color rgba="0.1 0.2 0.9 1"/></material>
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.02" iyy="0.03" izz="0.04"/></inertial>
    <collision><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
    <visual><geometry><mesh filename="package://robo/meshes/body.stl"/></geometry><material name="blue"/></visual>
  </link>
  <link name="head">
    <visual><geometry><mesh filename="package://robo/meshes/ball.obj" scale="2"/></geometry>
      <material name="yellow"><color rgba="0.9 0.8 0.1 1"/></material></visual>
  </link>
  <joint name="neck" type="fixed"><parent link="base"/><child link="head"/><origin xyz="0.15 0 0.1"/></joint>
  <link name="wheel"><inertial><mass value="0.2"/><inertia ixx="0.001" iyy="0.001" izz="0.001"/></inertial>
    <collision><geometry><cylinder radius="0.05" length="0.03"/></geometry></collision>
    <visual><geometry><mesh filename="package://robo/meshes/wheel.dae"/></geometry>
      <material name="green"><color rgba="0.1 0.7 0.2 1"/></material></visual>
  </link>
  <joint name="axle" type="continuous"><parent link="base"/><child link="wheel"/>
    <origin xyz="-0.1 0.13 0" rpy="1.5707963267948966 0 0"/><axis xyz="0 0 1"/></joint>
  <link name="tail"><inertial><mass value="0.2"/><inertia ixx="0.001" iyy="0.001" izz="0.001"/></inertial>
    <collision><geometry><sphere radius="0.04"/></geometry></collision>
    <visual><geometry><mesh filename="package://robo/meshes/missing.stl"/></geometry></visual>
  </link>
  <joint name="tail_joint" type="continuous"><parent link="base"/><child link="tail"/>
    <origin xyz="-0.22 0 0.05"/><axis xyz="0 1 0"/></joint>
</robot>"""


def write_meshes(root):
    """The robot's mesh files under ``root/robo/meshes``: a box, a sphere (radius 0.03, drawn at scale 2) and a
    cylinder, exported by trimesh."""
    import trimesh

    d = root / "robo" / "meshes"
    d.mkdir(parents=True, exist_ok=True)
    trimesh.creation.box(extents=(0.4, 0.2, 0.1)).export(d / "body.stl")
    trimesh.creation.icosphere(2, 0.03).export(d / "ball.obj")
    trimesh.creation.cylinder(radius=0.05, height=0.03, sections=24).export(d / "wheel.dae")
    return root


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    pytest.importorskip("collada", reason="writing and reading .dae files needs pycollada (the test extra)")
    return write_meshes(tmp_path_factory.mktemp("visuals"))


def parse(package, text=ROBOT):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = parse_urdf(text, package_dirs=[package])
    return model, [str(w.message) for w in caught]


# ---------------------------------------------------------------- the reader

def test_visuals_materials_and_merged_links_are_read(package):
    """Reference: the URDF text above. Colours from a material defined under <robot> and from inline ones;
    the head's visual moves onto the body with its fixed joint's placement; mesh scale read as one number."""
    model, said = parse(package)
    base, wheel, tail = model.links
    assert [len(link.visuals) for link in model.links] == [2, 1, 1]
    body, head = base.visuals
    assert body.kind == "mesh" and body.material == "blue" and body.path.endswith("robo/meshes/body.stl")
    np.testing.assert_array_equal(body.rgba, [0.1, 0.2, 0.9, 1.0])
    np.testing.assert_array_equal(head.rgba, [0.9, 0.8, 0.1, 1.0])
    np.testing.assert_array_equal(head.position, [0.15, 0.0, 0.1])
    np.testing.assert_array_equal(head.params, [2.0, 2.0, 2.0])
    assert head.filename == "package://robo/meshes/ball.obj"
    np.testing.assert_array_equal(wheel.visuals[0].rgba, [0.1, 0.7, 0.2, 1.0])
    assert tail.visuals[0].path is None and tail.visuals[0].rgba is None
    assert len(said) == 1


def test_a_missing_visual_mesh_is_a_warning_naming_file_and_link(package):
    """Reference: the reader's rule for visuals (a drawing matter never stops a simulation): the warning names
    the file, the link and what is drawn instead; the collision shapes are untouched."""
    model, said = parse(package)
    assert len(said) == 1
    assert "link 'tail'" in said[0] and "package://robo/meshes/missing.stl" in said[0]
    assert "collision shapes instead" in said[0]
    assert model.links[2].collisions[0].kind == "sphere"


def test_a_texture_stands_in_by_its_mean_colour(tmp_path):
    """Reference: the mean of a 2 x 1 image, one red and one blue pixel: (0.5, 0, 0.5, 1)."""
    from PIL import Image

    Image.fromarray(np.array([[[255, 0, 0], [0, 0, 255]]], np.uint8)).save(tmp_path / "t.png")
    text = (f'<robot name="r"><link name="a"><visual><geometry><sphere radius="0.1"/></geometry>'
            f'<material name="m"><texture filename="{tmp_path / "t.png"}"/></material></visual></link></robot>')
    model = parse_urdf(text, base="fixed")
    np.testing.assert_allclose(model.links[0].visuals[0].rgba, [0.5, 0.0, 0.5, 1.0])
    with pytest.warns(UserWarning, match="cannot read texture 'nope.png'"):
        model = parse_urdf(text.replace(str(tmp_path / "t.png"), "nope.png"), base="fixed")
    assert model.links[0].visuals[0].rgba is None


@pytest.mark.parametrize("visual, pattern", [
    ('<geometry><box size="0.1 0 0.1"/></geometry>', r"link 'a': <box> dimensions must be > 0"),
    ('<geometry><cone radius="1"/></geometry>', r"link 'a': visual <geometry> has no known shape child.*<cone>"),
    ('<geometry><mesh filename="x.stl" scale="1 0 1"/></geometry>', r"<mesh> scale must not be zero"),
    ('<geometry><sphere radius="0.1"/></geometry><material name="m"><color rgba="1 0 0 2"/></material>',
     r"link 'a': <color rgba=\"1 0 0 2\"> must be four numbers in \[0, 1\]"),
    ('<geometry><sphere radius="0.1"/></geometry><material name="m"><color rgba="1 0 0"/></material>',
     r"rgba=\"1 0 0\" of <color> must be 4 finite number"),
])
def test_bad_visuals_are_errors_naming_the_rule(visual, pattern):
    with pytest.raises(URDFError, match=pattern):
        parse_urdf(f'<robot name="r"><link name="a"><visual>{visual}</visual></link></robot>')


def test_a_material_defined_nowhere_leaves_the_colour_to_the_viewer():
    """Exporters name materials they never define (``tests/data/urdf/quadruped.urdf``): read quietly, no colour."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = parse_urdf('<robot name="r"><link name="a"><visual><geometry><sphere radius="0.1"/></geometry>'
                           '<material name="steel"/></visual></link></robot>', base="fixed")
    assert model.links[0].visuals[0].rgba is None and model.links[0].visuals[0].material == "steel"


# ---------------------------------------------------------------- the viewer

@pytest.fixture(scope="module")
def robot_world(package):
    world = tt.World()
    world.add_ground()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the missing tail mesh: checked above)
        system = world.add_articulated_system(ROBOT, position=(0.0, 0.0, 0.2), package_dirs=[package])
    world.build()
    return world, system


def _placed_triangles(package, system):
    """World triangles (T, 3, 3) of every visual mesh and the key (its index in VISUALS) of each."""
    import trimesh

    tris, keys = [], []
    for k, (link, name, (xyz, rpy), scale, _rgb) in enumerate(VISUALS):
        mesh = trimesh.load(package / "robo" / "meshes" / name, force="mesh")
        local = np.asarray(mesh.vertices, float)[np.asarray(mesh.faces)] * scale  # (t, 3, 3)
        on_link = np.asarray(xyz) + local @ rpy_matrix(rpy).T
        world = system.get_frame_position(link, 0) + on_link @ system.get_frame_orientation(link, 0).T
        tris.append(world)
        keys += [k] * len(world)
    return np.concatenate(tris), np.array(keys)


def _nearest(origin, dirs, tris, keys, tail_centre):
    """What each ray meets first: a VISUALS index, "tail", "ground" or "background" (Moller-Trumbore for the
    triangles, closed forms for the tail's sphere and the ground plane z = 0)."""
    e1, e2 = tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
    p = np.cross(dirs[:, None, :], e2[None])
    det = np.einsum("ptk,tk->pt", p, e1)
    inv = 1.0 / np.where(np.abs(det) > 1e-14, det, np.inf)
    s = origin - tris[:, 0]
    u = np.einsum("ptk,tk->pt", p, s) * inv
    q = np.cross(s, e1)
    v = np.einsum("pk,tk->pt", dirs, q) * inv
    t = np.einsum("tk,tk->t", e2, q)[None] * inv
    t = np.where((u >= 0) & (v >= 0) & (u + v <= 1) & (t > 1e-9), t, np.inf)
    best, which = t.min(axis=1), keys[t.argmin(axis=1)].astype(object)
    oc = origin - tail_centre
    b = dirs @ oc
    disc = b * b - (oc @ oc - TAIL_RADIUS ** 2)
    t_tail = np.where(disc >= 0, -b - np.sqrt(np.maximum(disc, 0.0)), np.inf)
    t_ground = np.where(dirs[:, 2] < 0, -origin[2] / np.minimum(dirs[:, 2], -1e-30), np.inf)
    out = np.where(best < np.minimum(t_tail, t_ground), which, np.where(t_tail < t_ground, "tail", "ground"))
    out[np.isinf(np.minimum(best, np.minimum(t_tail, t_ground)))] = "background"
    return out


def chroma(rgb):
    c = np.asarray(rgb, float)
    return c / max(c.sum(), 1e-9)


def _check_picture(package, world, system, viewer, cam):
    """Every sampled pixel away from an edge shows what its ray meets first; returns the samples per key."""
    from taichi_terra.viewer.viewer import PALETTE

    img = viewer.capture().astype(float) / 255.0
    tris, keys = _placed_triangles(package, system)
    cols, rows = np.meshgrid(np.arange(2, W - 2, 3) + 0.5, np.arange(2, H - 2, 3) + 0.5)
    px = np.stack([cols.ravel(), rows.ravel()], axis=1)
    stencil = [np.zeros(2), [1.5, 0.0], [-1.5, 0.0], [0.0, 1.5], [0.0, -1.5]]
    tail = system.get_frame_position("tail", 0)
    seen = [_nearest(*cam.rays(px + np.asarray(o), W, H), tris, keys, tail) for o in stencil]
    colour = {k: v[4] for k, v in enumerate(VISUALS)}
    colour["tail"] = PALETTE[1]  # (the tail's link is at depth 1 of system 0: the palette's second colour)
    counts, wrong = {}, []
    for i, key in enumerate(seen[0]):
        if any(s[i] != key for s in seen[1:]):
            continue  # near an edge
        got = img[int(px[i, 1]), int(px[i, 0])]
        if key == "background":
            ok = np.array_equal(got, np.array(BG))
        elif key == "ground":
            ok = np.abs(chroma(got) - chroma((1.0, 1.0, 1.02))).max() < 0.02
        else:
            ok = np.abs(chroma(got) - chroma(colour[key])).max() < 0.05
        counts[key] = counts.get(key, 0) + 1
        if not ok:
            wrong.append((tuple(px[i]), key, tuple(got)))
    assert not wrong, wrong[:10]
    return counts


@pytest.mark.needs("vulkan")
def test_each_visual_shows_its_colour_where_its_ray_lands(package, robot_world):
    """Reference: the rays of the module docstring. The body, the merged head and the wheel in their URDF
    colours, the tail (mesh not found) as its collision sphere in the palette's colour; then the body turned a
    quarter about z and moved: the head, on its fixed joint, goes with it."""
    from taichi_terra.viewer import Annotations, OrbitCamera, Viewer, Window

    world, system = robot_world
    cam = OrbitCamera(target=(0.0, 0.0, 0.2), distance=0.9, yaw=math.pi / 2 - 0.6, pitch=math.radians(40.0))
    viewer = Viewer(world, headless=True, window=Window(W, H, background=BG), camera=cam,
                    annotations=Annotations(overlay=False))
    counts = _check_picture(package, world, system, viewer, cam)
    assert all(counts.get(k, 0) >= 4 for k in (0, 1, 2, "tail", "ground")), counts
    np.testing.assert_allclose(viewer.visual_colors, [BLUE, YELLOW, GREEN])
    q = system.get_generalized_coordinate(0)
    q[:7] = [0.05, -0.03, 0.2, math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4)]
    system.set_generalized_coordinate(q)
    counts = _check_picture(package, world, system, viewer, cam)
    assert counts.get(1, 0) >= 4, counts
    viewer.close()


@pytest.mark.needs("vulkan")
def test_show_toggles_between_visuals_collision_shapes_and_both(package, robot_world):
    """The body's top shows the URDF's blue with visuals, the palette's first colour with collision shapes; the
    v key cycles the modes; "both" draws the collision shapes' edges over the visuals."""
    from taichi_terra.viewer import Annotations, OrbitCamera, Style, Viewer, Window
    from taichi_terra.viewer.viewer import PALETTE

    world, system = robot_world
    q = system.get_generalized_coordinate(0)
    q[:7] = [0.0, 0.0, 0.2, 1.0, 0.0, 0.0, 0.0]
    system.set_generalized_coordinate(q)
    cam = OrbitCamera(target=(0.0, 0.0, 0.2), distance=0.9, yaw=-math.pi / 2, pitch=math.radians(60.0))
    viewer = Viewer(world, headless=True, window=Window(W, H, background=BG), camera=cam,
                    style=Style(show="collision"), annotations=Annotations(overlay=False))
    top = cam.project([-0.05, -0.03, 0.25], W, H)[0]
    images = {}
    for mode in ("collision", "both", "visual"):
        assert viewer.showing == mode
        images[mode] = viewer.capture()
        viewer.apply_key("v")
    assert viewer.showing == "collision"
    rgb = {m: images[m][round(top[1]), round(top[0])].astype(float) / 255.0 for m in images}
    assert np.abs(chroma(rgb["collision"]) - chroma(PALETTE[0])).max() < 0.05
    assert np.abs(chroma(rgb["visual"]) - chroma(BLUE)).max() < 0.05
    differ = np.any(images["both"] != images["visual"], axis=2)
    assert 0 < differ.sum() < 0.2 * differ.size  # the wireframes' lines, not whole faces
    with pytest.raises(ValueError, match="showing must be one of"):
        viewer.showing = "mesh"
    assert viewer.showing == "collision"
    viewer.close()
    with pytest.raises(ValueError, match="show must be one of"):
        Viewer(world, headless=True, window=Window(W, H), style=Style(show="visuals"))


@pytest.mark.needs("vulkan")
def test_an_unreadable_visual_mesh_is_an_error_naming_the_file(tmp_path):
    """A visual mesh that exists but is not a mesh stops the viewer with the file's name (the world was built
    without reading it)."""
    from taichi_terra.viewer import Viewer, Window

    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"solid nonsense\n")
    world = tt.World()
    world.add_ground()
    world.add_articulated_system(ROBOT.replace("package://robo/meshes/body.stl", str(bad))
                                 .replace("package://robo/meshes/ball.obj", str(bad))
                                 .replace("package://robo/meshes/wheel.dae", str(bad))
                                 .replace("package://robo/meshes/missing.stl", str(bad)))
    with pytest.raises(ValueError, match=f"cannot read visual mesh file '{bad}'"):
        Viewer(world, headless=True, window=Window(W, H))


# ---------------------------------------------------------------- the scenes' robots

ASSETS = Path(__file__).resolve().parents[1] / "scenes" / "assets"


def _scene_robots():
    sys.path.insert(0, str(ASSETS.parent))
    import hexapod_sand

    from taichi_terra.bodies.tracked_robot import tracked_robot_urdf

    from taichi_terra.bodies import buggy

    return {"quadruped": ASSETS / "quadruped.urdf", "buggy": buggy.URDF_PATH,
            "hexapod": hexapod_sand.hexapod_urdf(), "tracked": tracked_robot_urdf(flippers=True)}


#: the links each robot draws by visuals of its own (the rest may show their collision shapes)
DRAWN_BY_VISUALS = {"quadruped": ["trunk", "FL_thigh", "FL_shank", "RR_hip"],
                    "buggy": ["chassis", "fl_wheel", "rr_wheel"], "hexapod": ["body", "hip0", "leg5"],
                    "tracked": ["base", "left_sprocket_link", "right_flipper"]}


@pytest.mark.parametrize("robot", sorted(DRAWN_BY_VISUALS))
def test_the_scenes_robots_have_visuals_of_their_own(robot):
    """Every visual mesh of the scenes' robots is found (no warning), every visual has a colour, and the main
    links are drawn by their visuals."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = parse_urdf(_scene_robots()[robot])
    links = {link.name: link for link in model.links}
    for name in DRAWN_BY_VISUALS[robot]:
        assert links[name].visuals, name
    for link in model.links:
        for v in link.visuals:
            assert v.rgba is not None, (link.name, v.kind)
            assert v.kind != "mesh" or Path(v.path).is_file()


def test_the_visual_meshes_are_what_make_meshes_writes(tmp_path):
    """Reference: ``scenes/assets/make_meshes.py`` (trimesh primitives, 5 decimals): written again, every file
    is byte for byte the committed one (the buggy's in the package, the quadruped's with the scenes)."""
    sys.path.insert(0, str(ASSETS))
    import make_meshes

    from taichi_terra.bodies import buggy

    written = make_meshes.write(tmp_path)
    committed = [*(ASSETS / "meshes").glob("*.obj"), *(buggy.ASSETS / "meshes").glob("*.obj")]
    assert sorted(p.name for p in written) == sorted(p.name for p in committed)
    for path in written:
        assert path.read_bytes() == (make_meshes.home(path.stem) / path.name).read_bytes(), path.name


def test_the_tracked_robot_without_visuals():
    from taichi_terra.bodies.tracked_robot import tracked_robot_urdf

    model = parse_urdf(tracked_robot_urdf(flippers=True, visuals=False))
    assert not any(link.visuals for link in model.links)
    assert "<material" not in tracked_robot_urdf(visuals=False)


@pytest.mark.needs("vulkan")
def test_a_mesh_without_a_urdf_colour_is_drawn_in_its_own(tmp_path, package):
    """Reference: the colours written into the files. A box with face colours as .ply, with vertex colours as
    .obj, with a material colour as .dae (trimesh writes face colours so), no <material> in the URDF: each is
    drawn in its file's colour; an .stl, which has none, in the palette's."""
    import trimesh

    from taichi_terra.viewer import Annotations, OrbitCamera, Viewer, Window
    from taichi_terra.viewer.viewer import PALETTE

    colours = {"ply": (0.8, 0.1, 0.6), "obj": (0.1, 0.6, 0.8), "dae": (0.9, 0.6, 0.1), "stl": None}
    links = []
    for k, (ext, rgb) in enumerate(colours.items()):
        box = trimesh.creation.box(extents=(0.1, 0.1, 0.1))
        if rgb is not None:
            box.visual.face_colors = [round(255 * c) for c in rgb] + [255]
        box.export(tmp_path / f"box.{ext}")
        links.append(f'<link name="l{k}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/>'
                     f'</inertial><visual><geometry><mesh filename="box.{ext}"/></geometry></visual></link>')
        if k:
            links.append(f'<joint name="j{k}" type="fixed"><parent link="l0"/><child link="l{k}"/>'
                         f'<origin xyz="{0.2 * k} 0 0"/></joint>')
    (tmp_path / "boxes.urdf").write_text(f'<robot name="boxes">{"".join(links)}</robot>')
    world = tt.World()
    system = world.add_articulated_system(tmp_path / "boxes.urdf", base="fixed", position=(0.0, 0.0, 0.05))
    cam = OrbitCamera(target=(0.3, 0.0, 0.0), distance=1.0, yaw=-math.pi / 2, pitch=math.radians(60.0))
    viewer = Viewer(world, headless=True, window=Window(W, H, background=BG), camera=cam,
                    annotations=Annotations(overlay=False))
    img = viewer.capture().astype(float) / 255.0
    for k, rgb in enumerate(colours.values()):
        expected = PALETTE[0] if rgb is None else rgb  # (every box is on the root link: depth 0)
        np.testing.assert_allclose(viewer.visual_colors[k], expected, atol=1 / 255)
        top = cam.project(system.get_frame_position("l0") + [0.2 * k, 0.0, 0.05], W, H)[0]
        got = img[round(top[1]), round(top[0])]
        assert np.abs(chroma(got) - chroma(expected)).max() < 0.05, (k, got)
    viewer.close()


def test_a_collada_mesh_in_inches_is_drawn_in_metres(tmp_path):
    """Reference: COLLADA's ``<unit meter>`` (the length of the file's unit in metres; RViz honours it, some
    public robot descriptions ship legs in inches). A 4-unit cube in a file whose unit is the inch is drawn
    0.1016 m wide; the same file without the unit, 4 m."""
    pytest.importorskip("collada", reason="reading .dae files needs pycollada (the test extra)")
    import trimesh

    from taichi_terra.viewer.tessellate import tessellate_visual

    trimesh.creation.box(extents=(4.0, 4.0, 4.0)).export(tmp_path / "metres.dae")
    text = (tmp_path / "metres.dae").read_text()
    assert "<up_axis>" in text and "<unit" not in text
    (tmp_path / "inches.dae").write_text(text.replace("<up_axis>", '<unit meter="0.0254" name="inch"/><up_axis>'))
    for name, width in (("inches", 4 * 0.0254), ("metres", 4.0)):
        model = parse_urdf(f'<robot name="r"><link name="a"><visual><geometry><mesh filename="{tmp_path / name}.dae"/>'
                           '</geometry></visual></link></robot>', base="fixed")
        vertices = tessellate_visual(model.links[0].visuals[0])[0]
        np.testing.assert_allclose(np.ptp(vertices, axis=0), width, rtol=1e-12)
