"""URDF parser: the test assets, fixed-joint merging, inertia rotation, Pinocchio as a peer, extras, meshes,
errors, a long chain and the numeric types of joint properties. Pure Python: no Taichi."""
import math
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from taichi_terra.bodies.urdf import URDFError, make_chain_urdf, parse_urdf, rpy_matrix

DATA = Path(__file__).parent / "data" / "urdf"
ARM = DATA / "arm6.urdf"
QUADRUPED = DATA / "quadruped.urdf"
CUBE = DATA / "meshes" / "cube.obj"


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def box_inertia(m, sx, sy, sz):
    """Solid box about its centre, principal axes along its edges."""
    return np.diag([m * (sy**2 + sz**2) / 12, m * (sx**2 + sz**2) / 12, m * (sx**2 + sy**2) / 12])


def inertial(mass=1.0, ixx=0.1, iyy=0.1, izz=0.1, xyz="0 0 0", rpy="0 0 0", ixy=0.0):
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def robot(*parts, name="r"):
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


def link(name, body=None):
    return f'<link name="{name}">{inertial() if body is None else body}</link>'


def joint(name, parent, child, jtype="revolute", extra=""):
    return f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


def file_masses(path):
    """Every ``<mass value>`` written in the file."""
    return [float(m.get("value")) for m in ET.parse(path).getroot().iter("mass")]


def without_collisions(path_or_xml):
    """The URDF text with every <collision> removed (urdfdom, under Pinocchio, rejects <capsule>)."""
    if isinstance(path_or_xml, Path):
        root = ET.parse(path_or_xml).getroot()
    else:
        root = ET.fromstring(path_or_xml)
    for lk in root.iter("link"):
        for c in lk.findall("collision"):
            lk.remove(c)
    return ET.tostring(root, encoding="unicode")


# ---------------------------------------------------------------- assets


def test_arm_parses():
    """Reference: arm6.urdf: 8 links, 6 movable joints and a fixed tool mount; masses as written in the file."""
    model = parse_urdf(ARM, base="fixed")
    assert model.name == "arm6" and model.root == "base_link" and model.base == "fixed"
    assert [lk.name for lk in model.links] == ["base_link"] + [f"link{i}" for i in range(1, 7)]
    assert [j.name for j in model.joints] == [f"joint{i}" for i in range(1, 7)]
    assert [j.child for j in model.joints] == [lk.name for lk in model.links[1:]]
    assert [j.type for j in model.joints] == ["revolute"] * 5 + ["continuous"]
    assert (model.n_dof, model.n_q) == (6, 6)
    assert list(model.merged) == ["tool0"] and model.merged["tool0"][0] == "link6"
    assert model.total_mass == pytest.approx(sum(file_masses(ARM)), rel=1e-12)
    assert model.link_index("link3") == 3
    with pytest.raises(KeyError, match="merged into link 'link6'"):
        model.link_index("tool0")
    with pytest.raises(KeyError, match="no link 'nope'"):
        model.link_index("nope")
    kinds = [s.kind for lk in model.links for s in lk.collisions]
    assert kinds == ["box", "cylinder", "capsule", "capsule", "cylinder", "sphere", "cylinder", "box"]


def test_quadruped_parses():
    """Reference: quadruped.urdf: trunk + IMU, 4 legs of hip abduction, hip flexion and knee with a foot on a
    fixed joint; 30 kg in the file; floating base: 6 + 12 dofs, 7 + 12 coordinates."""
    model = parse_urdf(QUADRUPED)
    assert len(model.links) == 13 and len(model.joints) == 12
    assert all(j.type == "revolute" for j in model.joints)
    assert (model.n_dof, model.n_q) == (18, 19)
    assert sorted(model.merged) == sorted(["imu"] + [f"{leg}_foot" for leg in ("FL", "FR", "RL", "RR")])
    assert model.total_mass == pytest.approx(sum(file_masses(QUADRUPED)), rel=1e-12)
    assert model.total_mass == pytest.approx(30.0, rel=1e-12)
    for k, j in enumerate(model.joints):
        assert model.link_index(j.parent) < k + 1 == model.link_index(j.child)
    shank = model.links[model.link_index("FL_shank")]
    assert shank.mass == pytest.approx(0.45)
    assert [s.kind for s in shank.collisions] == ["capsule", "sphere"]
    np.testing.assert_allclose(shank.collisions[1].position, [0, 0, -0.25])
    fixed = parse_urdf(QUADRUPED, base="fixed")
    assert (fixed.n_dof, fixed.n_q) == (12, 12)


def test_string_path_and_file_agree():
    """Reference: the same file read as a str path, a Path and its XML text gives the same model."""
    a = parse_urdf(str(ARM), base="fixed")
    b = parse_urdf(ARM, base="fixed")
    c = parse_urdf("\n  " + ARM.read_text(), base="fixed")
    assert a.source == str(ARM) and c.source == "<string>"
    for m in (b, c):
        for la, lb in zip(a.links, m.links):
            assert la.name == lb.name and la.mass == lb.mass
            np.testing.assert_array_equal(la.inertia, lb.inertia)


# ---------------------------------------------------------------- frames and mass properties


def test_rpy_convention():
    """Reference: URDF rpy is fixed-axis roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    np.testing.assert_allclose(rpy_matrix((0.1, 0.2, 0.3)), rot_z(0.3) @ rot_y(0.2) @ rot_x(0.1), atol=1e-15)
    xml = robot(link("a"), link("b"), joint("j", "a", "b", extra='<origin xyz="1 2 3" rpy="0.1 0.2 0.3"/>'))
    j = parse_urdf(xml).joints[0]
    np.testing.assert_allclose(j.rotation, rot_z(0.3) @ rot_y(0.2) @ rot_x(0.1), atol=1e-15)
    np.testing.assert_array_equal(j.position, [1, 2, 3])
    np.testing.assert_array_equal(j.axis, [1, 0, 0])  # URDF default axis


def test_fixed_joint_merge_closed_form():
    """Reference: parallel-axis theorem by hand. Parent box 2 kg (0.4 x 0.2 x 0.1 m) with its com at
    (0.05, 0, 0); child box 1 kg (0.2 x 0.1 x 0.1 m), com (0.05, 0, 0) in its frame, on a fixed joint at
    (0.3, 0.1, 0) turned 90 deg about z, so its com is at (0.3, 0.15, 0) and its x and y moments swap."""
    m1, m2 = 2.0, 1.0
    i1, i2 = box_inertia(m1, 0.4, 0.2, 0.1), box_inertia(m2, 0.2, 0.1, 0.1)
    xml = robot(
        link("parent", inertial(m1, *np.diag(i1), xyz="0.05 0 0") + '<collision><geometry><sphere radius="0.1"/>'
             "</geometry></collision>"),
        link("child", inertial(m2, *np.diag(i2), xyz="0.05 0 0") + '<collision><origin xyz="0.1 0 0"/>'
             '<geometry><box size="0.2 0.1 0.1"/></geometry></collision>'),
        link("grandchild"),
        joint("weld", "parent", "child", "fixed", '<origin xyz="0.3 0.1 0" rpy="0 0 1.5707963267948966"/>'),
        joint("hinge", "child", "grandchild", extra='<origin xyz="0.2 0 0"/><axis xyz="0 0 1"/>'),
    )
    model = parse_urdf(xml)
    assert [lk.name for lk in model.links] == ["parent", "grandchild"]
    merged = model.links[0]
    c1, c2 = np.array([0.05, 0.0, 0.0]), np.array([0.3, 0.15, 0.0])
    com = (m1 * c1 + m2 * c2) / (m1 + m2)
    i2_rot = np.diag([i2[1, 1], i2[0, 0], i2[2, 2]])  # 90 deg about z swaps the x and y moments
    expected = np.zeros((3, 3))
    for m, c, i in ((m1, c1, i1), (m2, c2, i2_rot)):
        dx, dy, dz = c - com
        expected += i + m * np.array([[dy * dy + dz * dz, -dx * dy, -dx * dz],
                                      [-dx * dy, dx * dx + dz * dz, -dy * dz],
                                      [-dx * dz, -dy * dz, dx * dx + dy * dy]])
    assert merged.mass == pytest.approx(3.0)
    np.testing.assert_allclose(merged.com, com, atol=1e-15)
    np.testing.assert_allclose(merged.inertia, expected, atol=1e-15)
    sphere, box = merged.collisions
    assert sphere.kind == "sphere" and box.kind == "box"
    np.testing.assert_allclose(box.position, [0.3, 0.2, 0.0], atol=1e-15)  # (0.3, 0.1) + Rz(90) (0.1, 0)
    np.testing.assert_allclose(box.rotation, rot_z(math.pi / 2), atol=1e-15)
    hinge = model.joints[0]
    assert hinge.parent == "parent"
    np.testing.assert_allclose(hinge.position, [0.3, 0.3, 0.0], atol=1e-15)  # (0.3, 0.1) + Rz(90) (0.2, 0)
    np.testing.assert_allclose(hinge.rotation, rot_z(math.pi / 2), atol=1e-15)
    owner, p, r = model.merged["child"]
    assert owner == "parent"
    np.testing.assert_allclose(p, [0.3, 0.1, 0.0])
    np.testing.assert_allclose(r, rot_z(math.pi / 2), atol=1e-15)


def test_chained_fixed_joints_compose():
    """Reference: two fixed joints in a row, each a translation along x and 90 deg about z: the second link
    sits at (1, 0, 0) + Rz(90) (1, 0, 0) = (1, 1, 0) turned 180 deg, and is recorded against the kept link."""
    xml = robot(link("a"), link("b", ""), link("c", ""),
                joint("ab", "a", "b", "fixed", '<origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/>'),
                joint("bc", "b", "c", "fixed", '<origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/>'))
    model = parse_urdf(xml)
    assert len(model.links) == 1 and not model.joints and (model.n_dof, model.n_q) == (6, 7)
    owner, p, r = model.merged["c"]
    assert owner == "a"
    np.testing.assert_allclose(p, [1, 1, 0], atol=1e-15)
    np.testing.assert_allclose(r, rot_z(math.pi), atol=1e-15)


@pytest.mark.parametrize("rpy,rot", [((0.0, 0.0, 0.3), rot_z(0.3)), ((0.4, 0.0, 0.0), rot_x(0.4)),
                                     ((0.4, -0.2, 0.3), rot_z(0.3) @ rot_y(-0.2) @ rot_x(0.4))])
def test_inertial_rpy_rotates_inertia(rpy, rot):
    """Reference: the <inertial><origin rpy> gives the principal axes in the link frame, I_link = R I R^T;
    for a yaw t the closed form is Ixx = a c^2 + b s^2, Iyy = a s^2 + b c^2, Ixy = (a - b) s c, Izz = c."""
    a, b, c = 0.3, 0.2, 0.4
    xml = robot(link("a", inertial(2.0, a, b, c, xyz="0.1 0.2 0.3", rpy=" ".join(map(str, rpy)))))
    lk = parse_urdf(xml).links[0]
    np.testing.assert_allclose(lk.com, [0.1, 0.2, 0.3])
    np.testing.assert_allclose(lk.inertia, rot @ np.diag([a, b, c]) @ rot.T, atol=1e-15)
    if rpy[:2] == (0.0, 0.0):
        co, si = math.cos(rpy[2]), math.sin(rpy[2])
        np.testing.assert_allclose(lk.inertia, [[a * co**2 + b * si**2, (a - b) * si * co, 0],
                                                [(a - b) * si * co, a * si**2 + b * co**2, 0], [0, 0, c]], atol=1e-15)


# ---------------------------------------------------------------- Pinocchio


@pytest.mark.parametrize("source,base", [(ARM, "fixed"), (QUADRUPED, "floating"), ("chain", "fixed")])
def test_matches_pinocchio(source, base):
    """Reference: Pinocchio's URDF reader (urdfdom), which also merges fixed joints: joint placements, the
    combined inertia of each body (mass, com, inertia about the com, in the joint frame), the frames of
    merged links, limits, damping and friction. Pinocchio orders children by joint name, so joints are
    matched by name; it gives a continuous joint two position coordinates (cos, sin)."""
    pin = pytest.importorskip("pinocchio")
    xml = without_collisions(make_chain_urdf(60) if source == "chain" else source)
    model = parse_urdf(xml, base=base)
    pm = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()) if base == "floating" else pin.buildModelFromXML(xml)
    n_continuous = sum(j.type == "continuous" for j in model.joints)
    assert (pm.nv, pm.nq) == (model.n_dof, model.n_q + n_continuous)
    first = 2 if base == "floating" else 1  # pinocchio joint of links[1]; the root's inertia is on joint first-1
    assert pm.njoints == len(model.joints) + first
    pin_index = {pm.names[i]: i for i in range(first, pm.njoints)}
    body_joint = {model.root: first - 1}
    for j in model.joints:
        body_joint[j.child] = pin_index[j.name]
    for lk in model.links:
        inertia = pm.inertias[body_joint[lk.name]]
        assert inertia.mass == pytest.approx(lk.mass, rel=1e-12)
        np.testing.assert_allclose(inertia.lever, lk.com, atol=1e-12)
        np.testing.assert_allclose(inertia.inertia, lk.inertia, atol=1e-12)
    for j in model.joints:
        i = pin_index[j.name]
        assert pm.parents[i] == body_joint[j.parent]
        np.testing.assert_allclose(pm.jointPlacements[i].translation, j.position, atol=1e-12)
        np.testing.assert_allclose(pm.jointPlacements[i].rotation, j.rotation, atol=1e-12)
        q, v = pm.idx_qs[i], pm.idx_vs[i]
        if j.type != "continuous":
            assert (pm.lowerPositionLimit[q], pm.upperPositionLimit[q]) == (j.lower, j.upper)
        assert (pm.effortLimit[v], pm.velocityLimit[v]) == (j.effort, j.velocity)
        assert (pm.damping[v], pm.friction[v]) == (j.damping, j.friction)
    for name, (owner, p, r) in model.merged.items():
        frame = pm.frames[pm.getFrameId(name, pin.FrameType.BODY)]
        assert frame.parentJoint == body_joint[owner]
        np.testing.assert_allclose(frame.placement.translation, p, atol=1e-12)
        np.testing.assert_allclose(frame.placement.rotation, r, atol=1e-12)


# ---------------------------------------------------------------- extras


def test_unknown_elements_are_kept():
    """Reference: the XML written here: unknown children of <robot> come back untouched, in file order
    (``<track>``, which ``tracks.py`` reads, is kept as well: see ``test_tracks.py``)."""
    xml = robot(
        link("a"),
        '<belt name="left" type="rubber" pitch="0.05"><segment n="40" width="0.2"/>'
        '<wheel link="a" role="drive">sprocket</wheel></belt>',
        '<gazebo reference="a"><mu1>0.8</mu1></gazebo>',
        '<transmission name="t"><type>SimpleTransmission</type></transmission>',
    )
    model = parse_urdf(xml)
    track, gazebo, transmission = model.extras
    assert isinstance(track, ET.Element)
    assert track.tag == "belt" and track.attrib == {"name": "left", "type": "rubber", "pitch": "0.05"}
    segment, wheel = list(track)
    assert segment.tag == "segment" and segment.attrib == {"n": "40", "width": "0.2"}
    assert wheel.attrib == {"link": "a", "role": "drive"} and wheel.text == "sprocket"
    assert gazebo.get("reference") == "a" and gazebo.find("mu1").text == "0.8"
    assert transmission.find("type").text == "SimpleTransmission"


# ---------------------------------------------------------------- meshes


def mesh_robot(filename, scale="0.1 0.2 0.3"):
    scale = "" if scale is None else f' scale="{scale}"'
    return robot(link("a", inertial() + f'<collision><origin xyz="1 0 0"/><geometry><mesh filename="{filename}"'
                                        f"{scale}/></geometry></collision>"))


def check_cube_hull(shape, half):
    """Reference: a unit cube centred on the origin scaled by ``2 * half``: its 8 corners."""
    assert shape.kind == "mesh"
    np.testing.assert_allclose(shape.params, 2 * np.asarray(half))
    np.testing.assert_allclose(shape.position, [1, 0, 0])
    assert shape.vertices.shape == (8, 3)
    assert np.all(np.abs(shape.vertices) <= np.asarray(half) + 1e-12)
    np.testing.assert_allclose(np.sort(np.abs(shape.vertices), axis=0), np.tile(half, (8, 1)))


def test_mesh_relative_to_the_file(tmp_path):
    """Reference: the cube mesh asset, referenced relative to the URDF file's directory."""
    (tmp_path / "meshes").mkdir()
    shutil.copy(CUBE, tmp_path / "meshes" / "cube.obj")
    (tmp_path / "r.urdf").write_text(mesh_robot("meshes/cube.obj"))
    (shape,) = parse_urdf(tmp_path / "r.urdf").links[0].collisions
    assert Path(shape.path) == tmp_path / "meshes" / "cube.obj"
    check_cube_hull(shape, [0.05, 0.1, 0.15])


@pytest.mark.parametrize("scale,half", [("0.5", 0.25), (None, 0.5)], ids=["one-number", "default"])
def test_mesh_relative_to_the_cwd(monkeypatch, scale, half):
    """Reference: the cube mesh asset; an XML string resolves relative names against the cwd; a scale of
    one number applies to the three axes, and the default scale is 1."""
    monkeypatch.chdir(DATA)
    (shape,) = parse_urdf(mesh_robot("meshes/cube.obj", scale=scale)).links[0].collisions
    check_cube_hull(shape, [half] * 3)


@pytest.mark.parametrize("package_dir", [DATA.parent, DATA], ids=["contains-pkg", "is-pkg"])
def test_mesh_through_package_dirs(package_dir):
    """Reference: the cube mesh asset as package://urdf/meshes/cube.obj, from a directory that contains
    the package and from the package directory itself."""
    model = parse_urdf(mesh_robot("package://urdf/meshes/cube.obj"), package_dirs=[Path("/nonexistent"), package_dir])
    (shape,) = model.links[0].collisions
    assert Path(shape.path).resolve() == CUBE.resolve()
    check_cube_hull(shape, [0.05, 0.1, 0.15])


def test_missing_and_unreadable_meshes(tmp_path):
    """Reference: the rules: a mesh that cannot be found or read, or that is flat, is an error naming the
    path tried."""
    with pytest.raises(URDFError, match=r"<string>: link 'a': mesh file '.*nope\.obj' not found"):
        parse_urdf(mesh_robot("nope.obj"))
    with pytest.raises(URDFError, match=r"link 'a': mesh 'package://urdf/nope\.obj' not found; tried .*nope\.obj"):
        parse_urdf(mesh_robot("package://urdf/nope.obj"), package_dirs=[DATA])
    with pytest.raises(URDFError, match=r"no package_dirs"):
        parse_urdf(mesh_robot("package://urdf/meshes/cube.obj"))
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"solid nonsense\n")
    with pytest.raises(URDFError, match=f"link 'a': cannot read mesh file '{bad}'"):
        parse_urdf(mesh_robot(str(bad)))
    flat = tmp_path / "flat.obj"
    flat.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n")
    with pytest.raises(URDFError, match=f"link 'a': mesh file '{flat}' has no volume"):
        parse_urdf(mesh_robot(str(flat)))


def test_trimesh_is_imported_only_for_meshes():
    """Reference: the module's contract: trimesh is imported lazily, only when a collision mesh is read."""
    code = ("import sys; from taichi_terra.bodies.urdf import parse_urdf; "
            f"parse_urdf({str(ARM)!r}, base='fixed'); print('trimesh' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- errors

L_AB = link("a") + link("b")
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'

ERRORS = [
    ("malformed", "<robot><link name='a'></robot>", r"XML: malformed XML"),
    ("not-robot", "<model name='m'/>", r"<model>: the root element must be <robot>"),
    ("no-links", robot(), r"robot 'r': the robot has no <link>"),
    ("unnamed-link", robot("<link/>"), r"link \(unnamed\): <link> lacks the 'name' attribute"),
    ("duplicate-link", robot(link("a"), link("a")), r"link 'a': duplicate link name"),
    ("duplicate-joint", robot(L_AB, link("c"), joint("j", "a", "b"), joint("j", "a", "c")),
     r"joint 'j': duplicate joint name"),
    ("missing-parent", robot(L_AB, joint("j", "nope", "b")), r"joint 'j': link 'nope' does not exist"),
    ("missing-child", robot(L_AB, joint("j", "a", "nope")), r"joint 'j': link 'nope' does not exist"),
    ("no-child-element", robot(L_AB, '<joint name="j" type="revolute"><parent link="a"/></joint>'),
     r"joint 'j': <child link=...> is missing"),
    ("two-parents", robot(L_AB, link("c"), joint("j1", "a", "c"), joint("j2", "b", "c"), joint("j3", "a", "b")),
     r"link 'c': is the child of two joints, 'j1' and 'j2'"),
    ("cycle", robot(link("r"), L_AB, joint("j1", "a", "b"), joint("j2", "b", "a")),
     r"joints \['j2', 'j1'\]: form a cycle through links \['a', 'b'\]"),
    ("cycle-no-root", robot(L_AB, joint("j1", "a", "b"), joint("j2", "b", "a")), r"form a cycle through links"),
    ("self-loop", robot(L_AB, joint("j1", "a", "b"), joint("j2", "a", "a")), r"joints \['j2'\]: form a cycle"),
    ("two-roots", robot(L_AB, link("c"), joint("j", "a", "b")), r"links \['a', 'c'\]: more than one root"),
    ("unknown-type", robot(L_AB, joint("j", "a", "b", "ball")), r"joint 'j': unknown joint type 'ball'"),
    ("planar", robot(L_AB, joint("j", "a", "b", "planar")), r"joint 'j': planar joints are not supported"),
    ("no-inertial", robot(link("a"), link("b", ""), joint("j", "a", "b")), r"link 'b': a moving link needs a mass > 0"),
    ("zero-mass", robot(link("a"), link("b", inertial(0.0)), joint("j", "a", "b")), r"link 'b': .*mass > 0"),
    ("floating-massless-root", robot(link("a", ""), link("b"), joint("j", "a", "b")), r"link 'a': .*mass > 0"),
    ("merged-massless", robot(link("a"), link("b", ""), link("c", ""), joint("j", "a", "b"),
                              joint("f", "b", "c", "fixed")), r"link 'b' \(with merged links \['c'\]\): .*mass > 0"),
    ("negative-mass", robot(link("a", inertial(-1.0))), r"link 'a': mass -1.0 must be >= 0"),
    ("mass-no-value", robot(link("a", "<inertial><mass/></inertial>")), r"link 'a': <mass> lacks the required 'value'"),
    ("inertia-negative", robot(link("a", inertial(1.0, -0.1))), r"link 'a': inertia must be positive semi-definite"),
    ("inertia-zero", robot(link("a", inertial(1.0, 0, 0, 0))), r"link 'a': inertia must be symmetric positive def"),
    ("inertia-triangle", robot(link("a", inertial(1.0, 0.1, 0.1, 0.3))), r"link 'a': .*break the triangle inequality"),
    ("limit-order", robot(L_AB, joint("j", "a", "b", extra='<limit lower="1" upper="-1"/>')),
     r"joint 'j': limit lower 1.0 > upper -1.0"),
    ("zero-axis", robot(L_AB, joint("j", "a", "b", extra='<axis xyz="0 0 0"/>')), r"joint 'j': the joint axis is zero"),
    ("no-shape", robot(link("a", '<collision><geometry><cone radius="1"/></geometry></collision>')),
     r"link 'a': collision <geometry> has no known shape child .*found <cone>"),
    ("no-geometry", robot(link("a", "<collision/>")), r"link 'a': collision <geometry> has no known shape .*none"),
    ("bad-box", robot(link("a", '<collision><geometry><box size="1 -1 1"/></geometry></collision>')),
     r"link 'a': <box> dimensions must be > 0"),
    ("sphere-no-radius", robot(link("a", "<collision><geometry><sphere/></geometry></collision>")),
     r"link 'a': <sphere> lacks the required 'radius'"),
    ("non-numeric-xyz", robot(L_AB, joint("j", "a", "b", extra='<origin xyz="a b c"/>')),
     r"joint 'j': xyz=\"a b c\" of <origin> must be 3 finite number"),
    ("short-xyz", robot(L_AB, joint("j", "a", "b", extra='<origin xyz="1 2"/>')),
     r"joint 'j': xyz=\"1 2\" of <origin>"),
    ("nan-rpy", robot(L_AB, joint("j", "a", "b", extra='<origin rpy="0 nan 0"/>')), r"joint 'j': rpy=\"0 nan 0\""),
    ("non-numeric-mass", robot(link("a", '<inertial><mass value="heavy"/></inertial>')),
     r"link 'a': value=\"heavy\" of <mass> must be 1 finite number"),
    ("non-numeric-limit", robot(L_AB, joint("j", "a", "b", extra='<limit lower="x" upper="1"/>')),
     r"joint 'j': lower=\"x\" of <limit>"),
    ("non-numeric-damping", robot(L_AB, joint("j", "a", "b", extra='<dynamics damping="lots"/>')),
     r"joint 'j': damping=\"lots\" of <dynamics>"),
]


@pytest.mark.parametrize("xml,pattern", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_name_file_element_and_rule(xml, pattern):
    """Reference: the rules listed in the parser's specification; every message starts with the source."""
    with pytest.raises(URDFError, match=pattern) as info:
        parse_urdf(xml)
    assert str(info.value).startswith("<string>: ")


def test_errors_name_the_file(tmp_path):
    """Reference: a file source is named by its path; an unreadable file is an error too."""
    path = tmp_path / "bad.urdf"
    path.write_text(robot(link("a"), link("a")))
    with pytest.raises(URDFError, match=f"^{path}: link 'a': duplicate link name"):
        parse_urdf(path)
    with pytest.raises(URDFError, match="missing.urdf: cannot read the URDF file"):
        parse_urdf(tmp_path / "missing.urdf")
    with pytest.raises(ValueError, match="base must be"):
        parse_urdf(ARM, base="welded")


def test_fixed_base_root_may_be_massless():
    """Reference: the rules: a root welded to the world never moves, so it needs no mass."""
    xml = robot(link("world", ""), link("b"), joint("j", "world", "b", extra=LIMIT))
    model = parse_urdf(xml, base="fixed")
    assert model.links[0].mass == 0.0 and model.total_mass == 1.0


# ---------------------------------------------------------------- chain


def test_chain_of_60_links():
    """Reference: make_chain_urdf(60): a massless base and 60 rods on revolute joints with axes alternating
    x, y; 60 dofs on a fixed base; the order is topological however the elements are shuffled in the file."""
    xml = make_chain_urdf(60)
    model = parse_urdf(xml, base="fixed")
    assert (model.n_dof, model.n_q) == (60, 60)
    assert [lk.name for lk in model.links] == ["base"] + [f"link{i}" for i in range(1, 61)]
    for k, j in enumerate(model.joints):
        assert j.child == f"link{k + 1}" and model.link_index(j.parent) == k
        np.testing.assert_array_equal(j.axis, [1, 0, 0] if k % 2 == 0 else [0, 1, 0])
    assert model.total_mass == pytest.approx(6.0)
    root = ET.fromstring(xml)
    children = list(root)
    for c in children:
        root.remove(c)
    for i in np.random.default_rng(0).permutation(len(children)):
        root.append(children[i])
    shuffled = parse_urdf(ET.tostring(root, encoding="unicode"), base="fixed")
    assert [lk.name for lk in shuffled.links] == [lk.name for lk in model.links]
    with pytest.raises(URDFError, match="link 'base': a moving link needs a mass > 0"):
        parse_urdf(xml)


# ---------------------------------------------------------------- joint properties


def test_dynamics_and_limits_are_floats():
    """Reference: the XML written here: <dynamics> and <limit> values come back as Python floats."""
    xml = robot(L_AB, link("c"), link("d"), link("e"),
                joint("j", "a", "b", extra='<limit lower="-1.5" upper="2" effort="30" velocity="4"/>'
                                           '<dynamics damping="0.1" friction="0.2" rotor_inertia="0.01"/>'),
                joint("free", "a", "c", "continuous", '<limit lower="-1" upper="1" effort="5" velocity="6"/>'),
                joint("slide", "a", "d", "prismatic", '<axis xyz="0 0 2"/>'),
                joint("loose", "a", "e", "floating"))
    model = parse_urdf(xml)
    j, free, slide, loose = model.joints
    values = (j.lower, j.upper, j.effort, j.velocity, j.damping, j.friction, j.rotor_inertia)
    assert values == (-1.5, 2.0, 30.0, 4.0, 0.1, 0.2, 0.01)
    assert all(type(v) is float for v in values)
    assert (free.lower, free.upper, free.effort, free.velocity) == (None, None, 5.0, 6.0)
    assert (slide.lower, slide.upper, slide.effort, slide.velocity) == (None, None, None, None)  # no <limit>
    assert (slide.damping, slide.friction, slide.rotor_inertia) == (0.0, 0.0, 0.0)
    assert type(slide.damping) is float
    np.testing.assert_array_equal(slide.axis, [0, 0, 1])
    assert loose.type == "floating" and (model.n_dof, model.n_q) == (6 + 1 + 1 + 1 + 6, 7 + 1 + 1 + 1 + 7)
