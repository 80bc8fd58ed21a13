"""Property-based tests (hypothesis) of the setters and builders of the planar world, meshes, system options,
pins, world state and height-map edits: each value is taken or refused whole, naming the argument, and a
refused call leaves the world as it was. The loaders and the other builders are in ``test_fuzz.py``, whose
budget and count of examples tried these share."""
import math

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import taichi_terra as tt  # noqa: E402
from taichi_terra.bodies.urdf import URDFError, make_chain_urdf  # noqa: E402

from test_fuzz import ROBOTS, fuzz_settings, tried  # noqa: E402


@fuzz_settings(200)
@given(setter=st.sampled_from(["set_pose", "set_velocity", "set_command"]),
       value=st.sampled_from([None, "x", [0.1, 0.2, 0.3], [0.1, 0.2], [[0.1, 0.2, 0.3]] * 2, np.full(3, np.nan),
                              [1e308, 0.0, 0.0], [0.0, float("inf"), 0.0], np.zeros(3, np.int8), np.zeros((3, 3))]),
       env=st.sampled_from([None, 0, 1, 2, -1]))
def test_planar_setters_take_or_reject_values_and_keep_the_state_of_rejected_ones(setter, value, env):
    tried("planar setters")
    from taichi_terra import planar

    world = planar.World(dt=0.1, n_envs=2)
    robot = world.add_rectangle(0.6, 0.4, kinematics="diff", mass=20.0)
    world.add_circle(0.1, mass=1.0, position=(2.0, 0.0))
    before = world.checkpoint()
    try:
        getattr(robot, setter)(value, env=env)
    except (ValueError, TypeError) as exc:
        assert str(exc), exc
        after = world.checkpoint()
        assert all(np.array_equal(np.asarray(before[k]), np.asarray(after[k]), equal_nan=True) for k in before)


def _mesh(points):
    import trimesh

    return trimesh.Trimesh(vertices=np.asarray(points, float).reshape(-1, 3), faces=np.zeros((0, 3), int),
                           process=False)


@fuzz_settings(150)
@given(kind=st.sampled_from(["points", "file", "other"]), data=st.data(),
       mass=st.sampled_from([1.0, 0.0, -1.0, 1e308, 1e-320, float("nan"), "1", None]))
def test_meshes_are_added_with_a_finite_positive_inertia_or_refused(tmp_path_factory, kind, data, mass):
    """Random point clouds (flat, tiny, huge, NaN), unreadable files and wrong types for ``add_mesh``."""
    tried("mesh bodies")
    world = tt.World()
    if kind == "points":
        n = data.draw(st.integers(0, 9))
        scale = data.draw(st.sampled_from([1.0, 1e-200, 1e200, 1e-12, float("nan")]))
        flat = data.draw(st.booleans())
        rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
        points = rng.standard_normal((n, 3)) * scale
        if flat:
            points[:, 2] = 0.0
        source = _mesh(points)
    elif kind == "file":
        suffix = data.draw(st.sampled_from([".stl", ".obj", ".ply", ".xyz", ""]))
        path = tmp_path_factory.mktemp("mesh") / f"m{suffix}"
        if data.draw(st.booleans()):
            path.write_bytes(data.draw(st.binary(max_size=200)))
        source = str(path)
    else:
        source = data.draw(st.sampled_from([None, 3, [[0.0, 0.0, 0.0]] * 4, b"abc", np.zeros((4, 3))]))
    try:
        body = world.add_mesh(source, mass)
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in ("mesh_or_path", "mass", "mesh(")), exc
        assert world.bodies == []
    else:
        inertia = body.shape.inertia
        assert np.isfinite(inertia).all() and np.linalg.eigvalsh(inertia).min() > 0.0
        assert np.isfinite(body.shape.points).all() and len(body.shape.points) >= 4


SYSTEM_OPTIONS = {
    "base": ["floating", "fixed", "Fixed", None, 1],
    "position": [(0.0, 0.0, 1.0), (0.0, 0.0), (float("nan"), 0.0, 0.0), (1e308, 0.0, 0.0), "abc", None],
    "orientation": [(1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0), (float("nan"), 0.0, 0.0, 1.0), (2.0, 0.0, 0.0, 0.0),
                    np.eye(3), np.ones((3, 3)), np.diag([1.0, 1.0, -1.0]), (1.0, 0.0, 0.0), None],
    "package_dirs": [(), ["/nonexistent"], "abc", [1], None],
    "self_collision": [False, True, 1, "yes", None],
}


@fuzz_settings(150)
@given(options=st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in SYSTEM_OPTIONS.items()}),
       robot=st.sampled_from(["chain", "quadruped"]))
def test_articulated_system_options_are_taken_or_refused_whole(options, robot):
    tried("articulated system options")
    world = tt.World(n_envs=2)
    urdf = make_chain_urdf(2) if robot == "chain" else ROBOTS[1]
    try:
        system = world.add_articulated_system(urdf, **options)
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in list(SYSTEM_OPTIONS) + ["<string>", "quaternion", "rotation"]), exc
        assert world.articulated_systems == []
    else:
        assert world.articulated_systems == [system]
        assert np.isfinite(system.get_generalized_coordinate()).all()


PIN_POINTS = [(0.0, 0.0, -0.1), (0.0, 0.0), (float("nan"), 0.0, 0.0), (0.0, float("inf"), 0.0), "abc", None,
              np.zeros((2, 3)), [1e308, 0.0, 0.0]]


@fuzz_settings(150)
@given(a=st.sampled_from(["chain", "other", "foreign", None, "x"]), b=st.sampled_from(["chain", "other", None, 3]),
       link_a=st.sampled_from(["link1", "link2", "base", "nope", None, 3, ["link1"]]),
       link_b=st.sampled_from(["link1", "link2", None, "", ("link1",)]),
       point_a=st.sampled_from(PIN_POINTS), point_b=st.sampled_from(PIN_POINTS))
def test_pins_are_added_or_refused_whole(a, b, link_a, link_b, point_a, point_b):
    tried("pins")
    world = tt.World()
    systems = {"chain": world.add_articulated_system(make_chain_urdf(2), base="fixed"),
               "other": world.add_articulated_system(make_chain_urdf(2), base="fixed", position=(0.5, 0.0, 0.0)),
               "foreign": FOREIGN_SYSTEM}
    try:
        pin = world.add_pin(systems.get(a, a), link_a, point_a, systems.get(b, b), link_b, point_b)
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in ("system_a", "system_b", "link_a", "link_b", "point_a", "point_b")), exc
        assert world.pins == []
    else:
        assert world.pins == [pin]
        assert np.isfinite(pin.point_a).all() and np.isfinite(pin.point_b).all()


FOREIGN_SYSTEM = tt.World().add_articulated_system(make_chain_urdf(2), base="fixed")
PLANAR_NUMBERS = [0.5, 0.0, -1.0, 2, 1e-320, 1e308, float("nan"), float("inf"), "1", None, True, [1.0]]
PLANAR_OPTIONS = {
    "kind": ["static", "passive", "driven", "Static", None, 1],
    "position": [(1.0, 2.0), (1.0,), (float("nan"), 0.0), (1e308, 0.0), "ab", None],
    "angle": PLANAR_NUMBERS, "mass": PLANAR_NUMBERS, "inertia": PLANAR_NUMBERS, "friction": PLANAR_NUMBERS,
    "restitution": PLANAR_NUMBERS, "wheelbase": PLANAR_NUMBERS,
    "kinematics": ["diff", "omni", "acker", "tank", None], "name": ["a", None, 3],
}


@fuzz_settings(200)
@given(call=st.sampled_from(["add_circle", "add_rectangle", "add_linestring", "add_compound"]),
       sizes=st.lists(st.sampled_from(PLANAR_NUMBERS), min_size=2, max_size=2), data=st.data(),
       options=st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in PLANAR_OPTIONS.items()}))
def test_planar_builders_add_or_refuse_whole(call, sizes, data, options):
    """Circles, rectangles, walls and compounds with sizes, points, parts and options of every wrong kind."""
    tried("planar builders")
    import shapely

    from taichi_terra import planar

    world = planar.World(dt=0.1)
    world.add_circle(0.1, mass=1.0)
    points = data.draw(st.sampled_from([[(0.0, 0.0), (1.0, 0.0)], [(0.0, 0.0)], [(0.0, 0.0), (0.0, 0.0)],
                                        [(0.0, float("nan")), (1.0, 0.0)], [(0.0, 0.0, 0.0)] * 3, "ab", None,
                                        [(0.0, 0.0), (1e308, 0.0), (-1e308, 0.0)]]))
    parts = data.draw(st.sampled_from([[shapely.box(0, 0, 1, 1)], [], None, "box", [("circle", (0.0, 0.0), 0.2)],
                                       [("circle", (0.0, 0.0), -1.0)], [("square", 1.0)], [shapely.Point(0, 0)],
                                       [shapely.box(0, 0, 1, 1), ("circle", (float("nan"), 0.0), 0.2)],
                                       [shapely.LineString([(0, 0), (1, 0)])], [3]]))
    calls = {"add_circle": lambda: world.add_circle(sizes[0], **options),
             "add_rectangle": lambda: world.add_rectangle(*sizes, **options),
             "add_linestring": lambda: world.add_linestring(points, **options),
             "add_compound": lambda: world.add_compound(parts, **options)}
    before = len(world.objects)
    try:
        obj = calls[call]()
    except (ValueError, TypeError) as exc:
        assert str(exc), exc
        assert len(world.objects) == before
    else:
        assert len(world.objects) == before + 1 and world.objects[-1] is obj
        spec = obj._spec
        assert obj.kind == "static" or (0.0 < spec.mass < math.inf and 0.0 < spec.inertia < math.inf)


def test_masses_finite_in_f64_but_not_in_f32_are_refused_under_f32(monkeypatch):
    """A 1e308 kg body is a number in f64 and inf in f32 (largest 3.4e38): under f32 every builder refuses it
    (rigid bodies, URDF links, planar objects) and adds nothing; f64 takes the same sphere. The precision is
    read from the backend's configuration, which this test switches for the builders only."""
    from taichi_terra import backend, planar

    world = tt.World()
    assert world.add_sphere(0.1, 1e308).shape.mass == 1e308
    monkeypatch.setitem(backend._config, "precision", "f32")
    world = tt.World()
    for call in (lambda: world.add_sphere(0.1, 1e308), lambda: world.add_box(0.1, 0.1, 0.1, 1e-40),
                 lambda: world.add_capsule(0.1, 1e20, 1.0)):
        with pytest.raises(ValueError, match="f32"):
            call()
    assert world.bodies == []
    with pytest.raises(URDFError, match="link 'link1'.*f32"):
        world.add_articulated_system(make_chain_urdf(2, mass=1e300), base="fixed")
    assert world.articulated_systems == []
    plane = planar.World(dt=0.1)
    with pytest.raises(ValueError, match="f32"):
        plane.add_circle(0.1, mass=1e300)
    assert plane.objects == []
    assert world.add_sphere(0.1, 1e30).shape.mass == 1e30  # (inertia 4e27 kg m^2: fits)


STATE_VALUES = [None, "x", True, 0.5, [0.0, 0.0, -9.81], [0.0, 0.0], np.full(3, np.nan), [0.0, float("inf"), 0.0],
                np.zeros((2, 1, 3)), np.zeros((1, 3)), np.ones((1, 4)), np.zeros((1, 4)), np.full((2, 1, 4), np.nan),
                np.zeros(4), np.full(4, 0.01), np.array([0.02, 0.01, 0.0, 0.0]), np.array([0.01, 0.02, 0.0, 0.0]),
                np.full(4, -1.0), np.zeros(4, np.int8), [[1e308, 0.0, 0.0]], "name", "steel", ""]


@fuzz_settings(200)
@given(call=st.sampled_from(["set_gravity", "add_material", "set_state", "set_soil_state", "set_commands",
                             "add_heightmap_from_matrix", "set_compute_inverse_dynamics"]),
       values=st.lists(st.sampled_from(STATE_VALUES), min_size=3, max_size=3),
       env=st.sampled_from([None, 0, 1, 2, -1, 1.0]))
def test_world_state_setters_take_or_refuse_whole(call, values, env):
    """Gravity, materials, the bodies' state, a soil bed's history, planar commands, a height map from a
    matrix and the inverse-dynamics switch with values of every wrong shape, type and size."""
    tried("world state setters")
    from taichi_terra import planar

    world = tt.World(n_envs=2)
    world.add_box(0.2, 0.2, 0.2, 1.0)
    bed = world.add_deformable_terrain(2, 2, 1.0, 1.0, 0.0, 0.0, np.zeros(4), tt.SoilMaterial())
    system = world.add_articulated_system(make_chain_urdf(1), base="fixed", position=(3.0, 0.0, 1.0))
    plane = planar.World(dt=0.1, n_envs=2)
    plane.add_rectangle(0.6, 0.4, kinematics="diff", mass=20.0)
    a, b, c = values
    calls = {
        "set_gravity": lambda: world.set_gravity(a),
        "add_material": lambda: world.add_material(a),
        "set_state": lambda: world.set_state(position=a, orientation=b, linear_velocity=c, env=env),
        "set_soil_state": lambda: bed.set_soil_state(a, b, c, env=env),
        "set_commands": lambda: plane.set_commands(a if np.ndim(a) else [[a, a]]),
        "add_heightmap_from_matrix": lambda: world.add_heightmap_from_matrix(a if np.ndim(a) == 0 else 1.0, 1.0,
                                                                            0.0, 0.0, b),
        "set_compute_inverse_dynamics": lambda: system.set_compute_inverse_dynamics(a),
    }

    def snapshot():
        return (world._gravity.copy(), list(world.materials.names), world.get_state(), bed._init_state.copy(),
                [o._spec.command.copy() for o in plane.driven], len(world.heightmaps),
                system.computes_inverse_dynamics)

    def same(x, y):
        if isinstance(x, dict):
            return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
        if isinstance(x, (list, tuple)):
            return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
        if isinstance(x, np.ndarray):
            return np.array_equal(x, y, equal_nan=True)
        return x == y

    before = snapshot()
    try:
        calls[call]()
    except (ValueError, TypeError) as exc:
        assert str(exc), exc
        assert same(before, snapshot()), call
    else:
        assert np.isfinite(world._gravity).all() and np.isfinite(bed._init_state).all()
        assert all(np.isfinite(v).all() for v in world.get_state().values())


MAP_VALUES = [0.0, 1.0, -1.0, 2, 1e308, float("nan"), float("inf"), None, "1", True, np.zeros(9), np.zeros(8),
              np.full(9, np.nan), np.full(9, 1e308), np.zeros((9, 3)), np.full((9, 3), 0.5), np.full((9, 3), 2.0),
              np.full((4, 3), 0.5), np.zeros((3, 3)), np.eye(3), [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0],
              np.full(9, 0.1), 8, -3]


@fuzz_settings(200)
@given(call=st.sampled_from(["update", "update_visual_height", "update_visual_height_patch", "set_color",
                             "set_color_patch", "set_position", "set_orientation"]),
       values=st.lists(st.sampled_from(MAP_VALUES), min_size=6, max_size=6))
def test_height_map_edits_are_taken_refused_or_ignored_whole(call, values):
    """A height map's edits (heights, drawn heights, patches, colours, pose) with values of every wrong kind:
    applied, refused with ValueError/TypeError naming the argument, or ignored as documented (False, with
    a RuntimeWarning for ``update``); refused and ignored ones change nothing. Heights may be NaN or inf
    (``spec/heightmap.md``: copied unchanged); the grid's centre, size, colours and pose stay finite."""
    import warnings

    tried("height map edits")
    world = tt.World()
    hm = world.add_heightmap(3, 3, 1.0, 1.0, 0.0, 0.0, np.zeros(9))
    a, b, c, d, e, f = values
    calls = {"update": lambda: hm.update(0.0, 0.0, a, b, c),
             "update_visual_height": lambda: hm.update_visual_height(0.0, 0.0, 1.0, 1.0, a),
             "update_visual_height_patch": lambda: hm.update_visual_height_patch(0.0, 0.0, 1.0, 1.0, a, b, c, d, e,
                                                                                 f),
             "set_color": lambda: hm.set_color(a),
             "set_color_patch": lambda: hm.set_color_patch(a, b, c, d, e),
             "set_position": lambda: hm.set_position(a),
             "set_orientation": lambda: hm.set_orientation(a)}

    def snapshot():
        return [np.array(x, dtype=float).copy() for x in (hm._heights, hm._contact, hm._center, hm._x_size,
                                                          hm._y_size, hm._colors, hm._position, hm._quat)]

    before = snapshot()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = calls[call]()
        except (ValueError, TypeError) as exc:
            assert str(exc), exc
            result = False
    after = snapshot()
    if result is False:
        assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(before, after)), call
    assert all(np.isfinite(x).all() for x in after[2:])  # (heights may hold NaN and inf: the spec's holes)
    assert all(issubclass(w.category, RuntimeWarning) for w in caught), [str(w.message) for w in caught]
