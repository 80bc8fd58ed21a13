"""Granular media in whole scenes: the two modes of the RFT stage (forces, or a sand row of the sweep) on a
standing foot and a hinged paddle, sand under a height map's surface, the scenes' rotating intruder and
hexapod, and media and plates through world XML. The law and the plates alone are in ``test_rft.py``."""
import math

import numpy as np
import pytest

import taichi_terra as tt
from test_rft import ZETA


def _foot(mode):
    """A flat 4 x 4 cm foot (1 kg, 1 cm thick) standing on sand at z = 0, gravity off until the ramp."""
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    world.add_granular_medium(0.0, zeta=ZETA, smoothing=1.0, mode=mode)
    foot = world.add_box(0.04, 0.04, 0.01, 1.0)
    foot.set_position((0.0, 0.0, 0.005))
    world.add_plates(foot, area=2e-5)
    return world, foot


@pytest.mark.parametrize("mode", ["row", "force"])
def test_quasi_static_sinkage_of_a_flat_foot_and_what_each_mode_does_at_rest(mode):
    """Reference: the force balance of a horizontal plate pushed down, ``m g = zeta z A`` (Li's az(0, pi/2) = 1,
    f23(1) = 1): with gravity raised from 0 to 9.81 m/s^2 over 2 s the foot sinks to ``z = m g / (zeta A)`` =
    1.635 mm, within the ramp's transient, ``(g / (k T)) / sqrt(k / m)`` for the sand's stiffness ``k = zeta A``
    (twice that allowed: the velocity changes sign within that transient, and the leading-edge rule then drops
    the force for a step).

    Then the load stays: with the resistance as a row the foot stands exactly still; as an applied force
    (RFT-SiM without smoothing) a foot at rest feels no force, so it chatters and creeps down by more than a
    tenth of a millimetre in a second."""
    world, foot = _foot(mode)
    k, g, ramp = ZETA * 1e6 * 16e-4, 9.81, 2.0
    steps = int(round(ramp / world.dt))
    for i in range(steps):
        world.set_gravity((0.0, 0.0, -g * (i + 1) / steps))
        world.step()
    sunk = 0.005 - foot.get_position(0)[2]
    assert sunk == pytest.approx(g / k, abs=2 * (g / (k * ramp)) / math.sqrt(k))
    world.step(500)  # (the ramp's motion dies out)
    start = foot.get_position(0)
    speeds = []
    for _ in range(500):
        world.step()
        speeds.append(np.abs(np.r_[foot.get_linear_velocity(0), foot.get_angular_velocity(0)]).max())
    drift = start[2] - foot.get_position(0)[2]
    if mode == "row":  # (round-off: the stopping impulse cancels the step's velocity to the last bits)
        assert max(speeds) < 1e-15 and drift == 0.0
    else:
        assert min(speeds) > 0.0 and drift > 1e-4


PADDLE = ('<robot name="paddle"><link name="base"/><link name="blade"><inertial><origin xyz="0.15 0 0"/>'
          '<mass value="0.5"/><inertia ixx="0.0002" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial>'
          '<collision><origin xyz="0.15 0 0"/><geometry><box size="0.2 0.06 0.02"/></geometry></collision></link>'
          '<joint name="hinge" type="continuous"><parent link="base"/><child link="blade"/><axis xyz="0 1 0"/>'
          '</joint></robot>')


@pytest.mark.parametrize("mode", ["row", "force"])
def test_a_hinged_paddle_lying_in_sand(mode):
    """Reference: statics about the hinge. A 0.5 kg paddle, its centre of mass 0.15 m from a free hinge, lies
    half buried (sand at z = -5 mm, paddle 2 cm thick about z = 0). With the sand's resistance as a row it
    holds still, its velocity within 1e-9 of gravity's change per step (the link's response is singular off
    the hinge's axis and is solved regularized at 1e-9), and the sand's moment about the hinge balances
    gravity's, ``m g l``, to round-off. As an applied force the paddle sags and keeps chattering."""
    world = tt.World(dt=1e-3)
    world.add_granular_medium(-0.005, zeta=ZETA, smoothing=1.0, mode=mode)
    paddle = world.add_articulated_system(PADDLE, base="fixed")
    world.add_plates(paddle, "blade", count=300)
    speeds = []
    for _ in range(1500):
        world.step()
        speeds.append(abs(paddle.get_generalized_velocity(0)[0]))
    angle = paddle.get_generalized_coordinate(0)[0]
    if mode == "row":  # gravity changes the hinge's rate by m g l dt / (I + m l^2) per step; 1e-9 of it is left
        per_step = 0.5 * 9.81 * 0.15 * world.dt / (0.004 + 0.5 * 0.15 ** 2)
        assert max(speeds) < 2e-9 * per_step and abs(angle) < 1e-9
        assert world.get_plate_loads(0)[1][0, 1] == pytest.approx(-0.5 * 9.81 * 0.15, rel=1e-9)
    else:
        assert angle < -0.01 and max(speeds[-500:]) > 1e-3


def test_depth_below_a_height_map_surface_and_the_map_is_no_longer_rigid():
    """Reference: geometry. Over a height map sloping as z = 0.1 x, a plate's depth is 0.1 x_c - z_c at its
    centroid (the map's triangles are exact on a plane); the map is the sand's surface only, so the box that
    starts inside it makes no rigid contact with it."""
    world = tt.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    xs = np.linspace(-1.0, 1.0, 11)
    heights = np.repeat(0.1 * xs[:, None], 11, axis=1)  # [x index, y index]
    hm = world.add_heightmap_from_matrix(2.0, 2.0, 0.0, 0.0, heights)
    world.add_granular_medium(hm, zeta=ZETA, smoothing=1.0)
    box = world.add_box(0.1, 0.06, 0.04, 2.0)
    box.set_position((0.3, 0.2, 0.0))
    box.set_linear_velocity((0.0, 0.0, -0.05))
    plates = world.add_plates(box, count=100)
    world.step()
    depth = world.get_plate_forces(0)["depth"]
    centroids = plates.centroids + [0.3, 0.2, 0.0]
    np.testing.assert_allclose(depth, 0.1 * centroids[:, 0] - centroids[:, 2], rtol=0, atol=1e-12)
    assert len(world.get_contacts(0)) == 0
    assert np.abs(world.get_plate_loads(0)[0][0]).max() > 1.0


def _scene(name):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scenes" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"scene_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rotating_intruder_needs_the_same_torque_at_every_speed():
    """Reference: RFT's rate independence (``spec/rft_granular.md``: the same peak torque at 0.5, 1 and 2 rad/s)
    and the geometry of the sweep. The spec's intruder (``scenes/rotating_intruder.py``: a 20 mm plate turning
    about an axis 9 cm above the sand, 5.5 cm deep at the bottom) on a fixed mount, three envs at the three
    speeds: the sand's moment about the axis is zero while the plate's tip corners are above the sand,
    rises to its peak near the vertical and falls again; as a function of the angle it is the same at every speed,
    to within what linear interpolation between the slow run's samples can tell (their largest step)."""
    rig_scene = _scene("rotating_intruder")
    world = tt.World(dt=1e-3, n_envs=3)
    world.add_granular_medium(0.0, zeta=ZETA, smoothing=1.0, mode="row")
    rig = world.add_articulated_system(rig_scene.intruder_urdf(carriage=False), base="fixed")
    world.add_plates(rig, "plate", area=1e-5)
    speeds = np.array([0.5, 1.0, 2.0])
    rig_scene.drive(rig, speeds)
    motor = rig.get_generalized_velocity_index("motor")
    angles, moments = [[] for _ in speeds], [[] for _ in speeds]
    while min(a[-1] if a else -np.inf for a in angles) < 0.5 * math.pi:
        q = rig.get_generalized_coordinate()[:, motor]  # (the angle the step's plate forces are taken at)
        world.step()
        moment = world.get_plate_loads()[1][:, 0, 1]  # about the axis (the plate link's origin), along y
        for e in range(3):
            angles[e].append(q[e])
            moments[e].append(moment[e])
    corner = math.hypot(rig_scene.LENGTH, 0.5 * rig_scene.THICKNESS)  # (the plate's tip corners enter first)
    entry = math.acos(rig_scene.AXIS_HEIGHT / corner) + math.atan(0.5 * rig_scene.THICKNESS / rig_scene.LENGTH)
    slow_a, slow_m = np.array(angles[0]), np.array(moments[0])
    peak = np.abs(slow_m).max()
    assert peak > 1.0
    assert not slow_m[np.abs(slow_a) > entry + 1e-3].any()
    assert abs(slow_a[np.argmax(np.abs(slow_m))]) < 0.3
    resolution = np.abs(np.diff(slow_m)).max()
    for e in (1, 2):
        a, m = np.array(angles[e]), np.array(moments[e])
        inside = (a > slow_a[0]) & (a < slow_a[-1])
        np.testing.assert_allclose(m[inside], np.interp(a[inside], slow_a, slow_m), rtol=0, atol=resolution)
    assert resolution < 0.02 * peak


def test_the_hexapod_walks_in_sand_and_sinks_deeper_with_a_payload():
    """Reference: the spec's hexapod experiment (``spec/rft_granular.md``): the 4.04 kg, 12-joint hexapod of
    ``scenes/hexapod_sand.py`` walks forward through sand (zeta = 3.75) on a tripod gait of one cycle per second,
    and its feet sink deeper with a 2.277 kg payload than without. Two envs, one per payload (the payload is
    the body's mass, so two worlds); 2 s each, 128 plates per foot; the body stays level (within 0.1 rad)."""
    hexapod = _scene("hexapod_sand")
    walked, deepest = [], []
    for payload in (0.0, 2.277):
        world = tt.World(dt=1e-3)
        world.add_granular_medium(0.0, zeta=ZETA, smoothing=1.0, mode="row")
        robot = hexapod.add_hexapod(world, payload, plates=100)
        x0 = robot.get_generalized_coordinate(0)[0]
        depth = 0.0
        for i in range(2000):
            if i % 10 == 0:
                hexapod.set_gait(robot, world.time)
            world.step()
            if i >= 500 and i % 50 == 0:
                depth = max(depth, hexapod.foot_depths(world).max())
        q = robot.get_generalized_coordinate(0)
        tilt = 2.0 * math.asin(min(1.0, np.linalg.norm(q[4:6])))  # (roll and pitch of the body's quaternion)
        assert tilt < 0.1
        walked.append(q[0] - x0)
        deepest.append(depth)
    assert walked[0] > 0.1 and walked[1] > 0.05
    assert deepest[1] > deepest[0] > 0.005


def test_media_and_plates_round_trip_through_world_xml(tmp_path):
    """Reference: determinism. A world with a flat medium in a region, a height-map medium, a box and a hinged
    paddle with plates, written to XML and loaded again, has the same media and plates and steps to the same
    plate forces and the same state, bit for bit (no smoothing: the plates' last forces are not in the XML);
    bad plates in a file raise naming the element."""
    world = tt.World(dt=1e-3)
    hm = world.add_heightmap_from_matrix(2.0, 2.0, 3.0, 0.0, np.full((5, 5), -0.01))
    world.add_granular_medium(0.0, zeta=ZETA, smoothing=1.0, region=(-1.0, 1.0, -1.0, 1.0), mode="row")
    world.add_granular_medium(hm, coefficients="poppy_close", zeta=1.0, normalization="rftsim", smoothing=1.0)
    box = world.add_box(0.1, 0.06, 0.04, 2.0)
    box.set_position((0.3, 0.0, 0.0))
    box.set_linear_velocity((0.05, 0.0, -0.05))
    world.add_plates(box, count=60)
    paddle = world.add_articulated_system(PADDLE, base="fixed")
    world.add_plates(paddle, "blade", count=80)
    path = tmp_path / "sand.xml"
    tt.export_world_xml(world, str(path))
    loaded = tt.load_world_xml(str(path))
    assert [(m.height, m.heightmap is not None, m.coefficients, m.zeta, m.normalization, m.region, m.mode)
            for m in loaded.granular_media] == [
        (m.height, m.heightmap is not None, m.coefficients, m.zeta, m.normalization, m.region, m.mode)
        for m in world.granular_media]
    for a, b in zip(world.plate_sets, loaded.plate_sets):
        assert (a.link, a.carrier) == (b.link, b.carrier)
        for name in ("centroids", "normals", "areas"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    world.step(20)
    loaded.step(20)
    np.testing.assert_array_equal(world.get_plate_forces(0)["force"], loaded.get_plate_forces(0)["force"])
    np.testing.assert_array_equal(box.get_position(0), loaded.bodies[0].get_position(0))
    from taichi_terra.io.xml import WorldXMLError

    with pytest.raises(WorldXMLError, match="<plates>: body must index one of the 0 bodies"):
        tt.load_world_xml('<world><plates body="3" centroids="0 0 0" normals="0 0 1" areas="1"/></world>')
    with pytest.raises(WorldXMLError, match="<plates>: plates: normals must be unit vectors"):
        tt.load_world_xml('<world><sphere radius="0.1" mass="1"/><plates body="0" centroids="0 0 0" '
                          'normals="0 0 2" areas="1"/></world>')
