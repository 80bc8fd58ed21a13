"""Property-based tests of the loaders and builders (hypothesis): valid inputs load (and round-trip where there is
an export); mutated ones (truncated, wrong values, NaN and inf, huge and tiny numbers, duplicated, missing and
renamed elements, random bytes) are either loaded or rejected with the package's own error (``URDFError``,
``WorldXMLError``; ``ValueError`` or ``TypeError`` naming the argument elsewhere), and a rejected call leaves the
world as it was. A fixed seed and a small budget run by default; ``pytest --fuzz-long`` runs many more examples.
The number of examples each target tried is printed in the test summary."""
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import taichi_terra as tt  # noqa: E402
from taichi_terra.bodies.urdf import URDFError, make_chain_urdf, parse_urdf  # noqa: E402
from taichi_terra.io.xml import WorldXMLError  # noqa: E402

from conftest import FUZZ_TRIED  # noqa: E402

DATA = Path(__file__).parent / "data" / "urdf"
ROBOTS = [(DATA / name).read_text() for name in ("arm6.urdf", "quadruped.urdf")]


def _tracked_robot() -> str:
    from taichi_terra.bodies.tracked_robot import tracked_robot_urdf

    return tracked_robot_urdf(flippers=True)


ROBOTS.append(_tracked_robot())  # (with <track> elements)
#: attribute values a hostile or careless file holds
BAD_VALUES = ["nan", "inf", "-inf", "1e308", "-1e308", "1e-320", "0", "-0", "-1", "abc", "", " ", "1 2", "1 2 3 4",
              "nan nan nan", "1,2,3", "0x10", "True", "1e400", "\x00", "é", "9" * 400]


def fuzz_settings(default: int):
    """``default`` examples (a fixed seed), or 25 times as many under ``--fuzz-long``."""
    from conftest import FUZZ_LONG

    return settings(max_examples=default * (25 if FUZZ_LONG else 1), derandomize=not FUZZ_LONG, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def tried(target: str) -> None:
    FUZZ_TRIED[target] = FUZZ_TRIED.get(target, 0) + 1


@st.composite
def mutated_xml(draw, text: str):
    """``text`` (an XML document) after one to three mutations."""
    for _ in range(draw(st.integers(1, 3))):
        try:
            root = ET.fromstring(text)
        except ET.ParseError:
            break
        elements = list(root.iter())
        el = elements[draw(st.integers(0, len(elements) - 1))]
        kind = draw(st.sampled_from(["value", "drop_attr", "duplicate", "remove", "rename", "truncate", "bytes",
                                     "nest"]))
        if kind == "value" and el.attrib:
            el.set(draw(st.sampled_from(sorted(el.attrib))), draw(st.sampled_from(BAD_VALUES) | st.text(max_size=8)))
        elif kind == "drop_attr" and el.attrib:
            del el.attrib[draw(st.sampled_from(sorted(el.attrib)))]
        elif kind in ("duplicate", "remove") and len(el):
            child = list(el)[draw(st.integers(0, len(el) - 1))]
            el.append(child) if kind == "duplicate" else el.remove(child)
        elif kind == "rename":
            el.tag = draw(st.sampled_from(["link", "joint", "box", "sphere", "world", "inertial", "origin", "x"]))
        elif kind == "nest":  # an element inside itself, several levels deep
            for _ in range(draw(st.integers(1, 20))):
                el = ET.SubElement(el, el.tag, dict(el.attrib))
        text = ET.tostring(root, encoding="unicode")
        if kind == "truncate":
            text = text[:draw(st.integers(0, len(text)))]
        elif kind == "bytes":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.binary(max_size=16)).decode("latin-1") + text[at:]
    return text


@fuzz_settings(300)
@given(text=st.sampled_from(ROBOTS).flatmap(mutated_xml))
def test_urdf_parser_loads_or_raises_urdf_error(text):
    tried("URDF, mutated")
    try:
        parse_urdf(text)
    except URDFError as exc:
        assert str(exc).startswith("<string>: ")  # (names the file: a text holding "<" is the URDF itself)


@fuzz_settings(100)
@given(n=st.integers(1, 12), length=st.floats(1e-3, 10.0), radius=st.floats(1e-4, 1.0), mass=st.floats(1e-3, 1e3))
def test_generated_chains_parse_and_keep_their_links(n, length, radius, mass):
    tried("URDF, valid chains")
    model = parse_urdf(make_chain_urdf(n, length=length, radius=radius, mass=mass), base="fixed")
    assert len(model.joints) == n and len(model.links) == n + 1


def _exported_world() -> str:
    world = tt.World(dt=1e-3)
    world.set_material_pair_prop("steel", "default", 0.5, 0.1)
    world.add_ground()
    world.add_box(0.2, 0.3, 0.1, 1.0, material="steel").set_position([0.0, 0.0, 0.5])
    world.add_sphere(0.1, 2.0).set_position([1.0, 0.0, 0.5])
    world.add_capsule(0.05, 0.2, 1.0).set_position([0.0, 1.0, 0.5])
    world.add_heightmap(3, 3, 2.0, 2.0, 0.0, 0.0, np.zeros(9))
    world.add_deformable_terrain(3, 3, 1.0, 1.0, 5.0, 0.0, np.zeros(9), tt.SoilMaterial(bekker_kphi=1e5))
    return tt.export_world_xml(world)


WORLD_XML = _exported_world()


@fuzz_settings(300)
@given(text=mutated_xml(WORLD_XML))
def test_world_xml_loads_or_raises_world_xml_error(text):
    tried("world XML, mutated")
    try:
        tt.load_world_xml(text)
    except WorldXMLError as exc:
        assert str(exc).startswith("<string>")


@fuzz_settings(50)
@given(boxes=st.lists(st.tuples(st.floats(0.01, 5.0), st.floats(0.01, 5.0), st.floats(0.01, 5.0),
                                st.floats(1e-3, 1e3), st.floats(-100.0, 100.0, allow_subnormal=False)),
                      min_size=1, max_size=5))
def test_valid_worlds_round_trip_through_their_xml(boxes):
    """(Subnormal positions, below 2.2e-308 m, are left out: 5e-324 m came back as 0 from a load and export.)"""
    tried("world XML, valid round trips")
    world = tt.World(dt=1e-3)
    for sx, sy, sz, mass, x in boxes:
        world.add_box(sx, sy, sz, mass).set_position([x, 0.0, 1.0])
    text = tt.export_world_xml(world)
    assert tt.export_world_xml(tt.load_world_xml(text)) == text


def _png_bytes(rng_values, mode: str) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rng_values, mode=mode).save(buf, format="PNG")
    return buf.getvalue()


@fuzz_settings(200)
@given(data=st.data())
def test_height_files_load_or_raise_value_error_and_add_nothing(tmp_path_factory, data):
    tried("height maps, PNG and text")
    folder = tmp_path_factory.mktemp("maps")
    kind = data.draw(st.sampled_from(["png", "png_bytes", "text"]))
    world = tt.World()
    if kind == "text":
        nx, ny = data.draw(st.integers(-1, 4)), data.draw(st.integers(-1, 4))
        heights = data.draw(st.lists(st.sampled_from(["0", "1.5", "-2", "nan", "inf", "x", "1e400"]), max_size=20))
        header = data.draw(st.sampled_from([f"{nx} {ny} 1.0 1.0", f"{nx} {ny} 0 1", f"{nx} {ny}", "", "a b c d"]))
        path = folder / "map.txt"
        path.write_text(header + "\n" + " ".join(heights))
        call = lambda: world.add_heightmap_from_file(0.0, 0.0, path)  # noqa: E731
    else:
        path = folder / "map.png"
        if kind == "png":
            w, h = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
            values = np.array(data.draw(st.lists(st.integers(0, 255), min_size=w * h, max_size=w * h)), np.uint8)
            blob = _png_bytes(values.reshape(h, w), "L")
        else:
            blob = data.draw(st.binary(max_size=64))
            good = _png_bytes(np.zeros((3, 3), np.uint8), "L")
            blob = data.draw(st.sampled_from([blob, good[:data.draw(st.integers(0, len(good)))]]))
        path.write_bytes(blob)
        scale = data.draw(st.sampled_from([0.01, 0.0, float("nan"), float("inf"), 1e300]))
        call = lambda: world.add_heightmap_from_png(0.0, 0.0, path, 1.0, 1.0, height_scale=scale)  # noqa: E731
    try:
        call()
    except (ValueError, TypeError) as exc:
        assert "map" in str(exc) or "height" in str(exc) or "png" in str(exc), exc
        assert world.heightmaps == []
    else:
        assert len(world.heightmaps) == 1 and np.isfinite(world.heightmaps[0].get_heights()).all()


@fuzz_settings(150)
@given(field=st.sampled_from(["frequency", "x_size", "y_size", "z_scale", "x_samples", "y_samples",
                              "fractal_octaves", "fractal_lacunarity", "fractal_gain", "step_size",
                              "height_offset", "seed"]),
       value=st.sampled_from([float("nan"), float("inf"), -1.0, 0.0, 1e308, 1e-320, 2.5, 100, "3", None, True]))
def test_terrain_properties_take_good_values_and_name_the_field_of_bad_ones(field, value):
    tried("TerrainProperties")
    kwargs = dict(frequency=1.0, x_size=2.0, y_size=2.0, z_scale=0.1, x_samples=5, y_samples=5)
    kwargs[field] = value
    try:
        props = tt.TerrainProperties(**kwargs)
    except (ValueError, TypeError) as exc:
        assert field in str(exc), exc
        return
    heights = props.generate()
    assert heights.shape == (props.x_samples * props.y_samples,) and np.isfinite(heights).all()


@fuzz_settings(200)
@given(vertices=st.lists(st.tuples(st.sampled_from([0.0, 1.0, -1.0, 0.5, 1e-12, 1e12, float("nan"), float("inf")]),
                                   st.sampled_from([0.0, 1.0, -1.0, 2.0, 1e-12, float("-inf")])),
                         min_size=0, max_size=7),
       mass=st.sampled_from([1.0, 0.0, -1.0, float("nan"), 1e300]))
def test_planar_polygons_are_added_or_rejected_whole(vertices, mass):
    tried("planar polygons")
    from taichi_terra import planar

    world = planar.World(dt=0.1)
    world.add_circle(0.1, mass=1.0)
    before = len(world.objects)
    try:
        world.add_polygon(vertices, mass=mass)
    except (ValueError, TypeError) as exc:
        assert "vertices" in str(exc) or "mass" in str(exc) or "polygon" in str(exc), exc
        assert len(world.objects) == before
    else:
        assert len(world.objects) == before + 1


@fuzz_settings(150)
@given(occupancy=st.sampled_from([np.zeros((0, 3)), np.ones(4), np.ones((3, 3), bool), np.array([["a"]]),
                                  np.eye(4), np.full((2, 2), np.nan)]),
       resolution=st.sampled_from([0.1, 0.0, -1.0, float("nan"), float("inf"), 1e-300]),
       origin=st.sampled_from([(0.0, 0.0), (float("nan"), 0.0), (1.0,), "ab"]))
def test_grid_maps_are_added_or_rejected_whole(occupancy, resolution, origin):
    tried("planar grid maps")
    from taichi_terra import planar

    world = planar.World(dt=0.1)
    before = len(world.objects)
    try:
        world.add_grid_map(occupancy, resolution, origin)
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in ("occupancy", "resolution", "origin")), exc
        assert len(world.objects) == before
    else:
        assert len(world.objects) == before + 1


@fuzz_settings(200)
@given(value=st.one_of(st.sampled_from([None, "x", True, [1.0, 2.0], [[1.0, 2.0, 3.0]] * 3, np.full(3, np.nan),
                                        np.array([1.0, np.inf, 0.0]), np.zeros((2, 3)), np.zeros(3, np.int8),
                                        np.array([1e300, 0.0, 0.0]), [1, 2, 3]]),
                       st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0, max_size=5)),
       setter=st.sampled_from(["set_position", "set_linear_velocity", "set_angular_velocity", "set_orientation"]))
def test_body_setters_take_or_reject_values_and_keep_the_state_of_rejected_ones(value, setter):
    tried("body setters")
    world = SETTER_WORLD
    body = world.bodies[0]
    before = world.get_state()
    try:
        getattr(body, setter)(value)
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in ("position", "velocity", "orientation", "quaternion", "env", "value")), exc
        after = world.get_state()
        assert all(np.array_equal(before[k], after[k], equal_nan=True) for k in before)
    finally:
        world.set_state(**before)


SETTER_WORLD = tt.World(n_envs=2)
SETTER_WORLD.add_box(0.2, 0.2, 0.2, 1.0)


@fuzz_settings(200)
@given(kind=st.sampled_from(["sphere", "box", "capsule", "cylinder"]),
       sizes=st.lists(st.sampled_from([0.1, 1.0, 0.0, -1.0, 1e-200, 1e-320, 1e200, 1e308, float("nan"), float("inf"),
                                       "0.1", None]), min_size=4, max_size=4))
def test_primitive_bodies_are_added_with_a_finite_positive_inertia_or_refused(kind, sizes):
    tried("body builders")
    world = tt.World()
    n_args = {"sphere": 2, "box": 4, "capsule": 3, "cylinder": 3}[kind]
    try:
        body = getattr(world, f"add_{kind}")(*sizes[:n_args])
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in ("radius", "size", "height", "mass")), exc
        assert world.bodies == []
    else:
        assert np.isfinite(body.shape.inertia).all() and np.linalg.eigvalsh(body.shape.inertia).min() > 0.0


def _system_world():
    world = tt.World(n_envs=2)
    system = world.add_articulated_system(make_chain_urdf(3), base="fixed", position=(0.0, 0.0, 1.0))
    world.build()
    return world, system


SYSTEM_WORLD, SYSTEM = _system_world()
SYSTEM_VALUES = [None, "x", True, 1.0, np.zeros(2), np.zeros(3), np.zeros((2, 3)), np.zeros((3, 3)), np.zeros(4),
                 np.full(3, np.nan), np.array([0.0, np.inf, 0.0]), np.array([1e300, 0.0, 0.0]), np.zeros(3, np.int8),
                 [0.1, 0.2, 0.3], [[0.1, 0.2, 0.3]] * 2, np.full(3, -1.0), np.array([1.0, 0.0, -1.0]),
                 np.array([0.5, 0.0, 0.0]), np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 2.0]])]


@fuzz_settings(200)
@given(setter=st.sampled_from(["set_generalized_coordinate", "set_generalized_velocity", "set_generalized_force",
                               "set_pd_gains", "set_pd_target", "set_held_drives"]),
       first=st.sampled_from(SYSTEM_VALUES), second=st.sampled_from(SYSTEM_VALUES),
       env=st.sampled_from([None, 0, 1, 2, -1, 1.0]))
def test_articulated_setters_take_or_reject_values_and_keep_the_state_of_rejected_ones(setter, first, second, env):
    tried("articulated setters")
    world = SYSTEM_WORLD
    start = world.checkpoint()
    before = start.arrays
    args = (first, second) if setter in ("set_pd_gains", "set_pd_target") else (first,)
    try:
        getattr(SYSTEM, setter)(*args, env=env)
    except (ValueError, TypeError) as exc:
        assert str(exc), exc
        after = world.checkpoint().arrays
        assert all(np.array_equal(before[k], after[k], equal_nan=True) for k in before)
    finally:
        world.restore(start)


@fuzz_settings(150)
@given(field=st.sampled_from(["bekker_kc", "bekker_kphi", "sinkage_exponent", "cohesion", "friction_coefficient",
                              "shear_displacement", "elastic_stiffness", "damping"]),
       value=st.sampled_from([float("nan"), float("inf"), -1.0, 0.0, 1e308, 1e-320, "1", None, True, 2.0]))
def test_soil_materials_take_good_values_and_name_the_field_of_bad_ones(field, value):
    tried("soil materials")
    try:
        tt.SoilMaterial(**{field: value})
    except (ValueError, TypeError) as exc:
        assert field in str(exc), exc


@fuzz_settings(150)
@given(surface=st.sampled_from([0.0, float("nan"), float("inf"), "sand", None, 1e308]),
       zeta=st.sampled_from([3.75, 0.0, -1.0, float("nan"), float("inf"), 1e308]),
       smoothing=st.sampled_from([1.0, 0.1, 0.0, -0.5, 1.5, float("nan")]),
       mode=st.sampled_from(["force", "row", "rows", None]),
       coefficients=st.sampled_from(["li2013", "treers", "nope", None, np.zeros(9), np.full(9, np.nan)]))
def test_granular_media_are_added_or_rejected_whole(surface, zeta, smoothing, mode, coefficients):
    tried("granular media")
    world = tt.World()
    try:
        world.add_granular_medium(surface, coefficients=coefficients, zeta=zeta, smoothing=smoothing, mode=mode)
    except (ValueError, TypeError) as exc:
        assert str(exc), exc
        assert world.granular_media == []
    else:
        assert len(world.granular_media) == 1


NUMBERS = [0.5, 0.0, -1.0, 3, 1e-320, 1e308, float("nan"), float("inf"), "1", None, True, [1.0], np.float32(2.0)]


@fuzz_settings(300)
@given(call=st.sampled_from(["add_ground", "add_heightmap", "add_deformable_terrain", "set_material_pair_prop",
                             "set_default_material", "set_external_force", "set_external_torque", "add_plates"]),
       values=st.lists(st.sampled_from(NUMBERS), min_size=6, max_size=6), data=st.data())
def test_world_builders_and_loads_are_taken_or_refused_whole(call, values, data):
    """Ground, maps, soil beds, materials, external loads and RFT plates with numbers of every wrong kind."""
    tried("world builders and loads")
    world = tt.World(n_envs=2)
    box = world.add_box(0.2, 0.2, 0.2, 1.0)
    a, b, c, d, e, f = values
    heights = data.draw(st.sampled_from([np.zeros(4), np.zeros(3), np.full(4, np.nan), np.zeros((2, 2)), "h"]))
    calls = {
        "add_ground": lambda: world.add_ground(a),
        "add_heightmap": lambda: world.add_heightmap(2, 2, a, b, c, d, heights),
        "add_deformable_terrain": lambda: world.add_deformable_terrain(2, 2, a, b, 0.0, 0.0, heights,
                                                                       tt.SoilMaterial()),
        "set_material_pair_prop": lambda: world.set_material_pair_prop("steel", "default", a, b),
        "set_default_material": lambda: world.set_default_material(a, b),
        "set_external_force": lambda: box.set_external_force([a, b, c], env=data.draw(st.sampled_from([None, 0, 2]))),
        "set_external_torque": lambda: box.set_external_torque([d, e, f]),
        "add_plates": lambda: world.add_plates(box, count=a) if data.draw(st.booleans())
        else world.add_plates(box, area=b),
    }
    before = (len(world.heightmaps), len(world.plate_sets), world.ground)
    try:
        calls[call]()
    except (ValueError, TypeError) as exc:
        assert str(exc), exc
        assert (len(world.heightmaps), len(world.plate_sets), world.ground) == before
