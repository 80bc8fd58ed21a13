"""World XML: a soil bed authored in XML, and export/load round trips."""
import numpy as np
import pytest

import taichi_terra as tt

SPEC_EXAMPLE = """
<world dt="0.001">
  <heightmap name="soil" x_size="2" y_size="2" x_sample="3" y_sample="3"
             height="0 0 0 0 0 0 0 0 0">
    <soil bekker_kc="0" bekker_kphi="40000" sinkage_exponent="1.1"
          elastic_stiffness="2000000" damping="2000" cohesion="100"
          friction_coefficient="0.6" shear_displacement="0.01"/>
  </heightmap>
</world>
"""


def test_spec_soil_example_loads():
    """Reference: the deformable-terrain specification's XML example."""
    world = tt.load_world_xml(SPEC_EXAMPLE)
    (bed,) = world.heightmaps
    assert isinstance(bed, tt.DeformableTerrain)
    assert bed.material == tt.SoilMaterial(bekker_kphi=4e4, damping=2000.0, cohesion=100.0)
    assert (bed.x_samples, bed.y_samples, bed.x_size) == (3, 3, 2.0)


def test_round_trip_restores_the_soil_state(tmp_path):
    """Export after a plate has made a rut, load the file: same bed, material, soil history, body pose."""
    mat = tt.SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, damping=3e4)
    world = tt.World(dt=1e-3)
    world.set_material_pair_prop("steel", "default", 0.5, 0.1)
    world.add_ground(-1.0)
    n = 21
    bed = world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n), mat)
    bed.set_position(0.0, 0.0, 0.01)
    plate = world.add_box(0.4, 0.4, 0.02, 20.0, material="steel")
    plate.set_position([0.025, 0.025, 0.02])
    world.step(300)
    path = tmp_path / "world.xml"
    tt.export_world_xml(world, path)
    loaded = tt.load_world_xml(str(path))
    (bed2,) = loaded.heightmaps
    assert bed2.material == mat
    np.testing.assert_array_equal(bed2.get_position(), bed.get_position())
    for key in ("sinkage", "plastic_sinkage", "shear"):
        np.testing.assert_array_equal(bed2.get_soil_state(0)[key], bed.get_soil_state(0)[key])
    (plate2,) = loaded.bodies
    np.testing.assert_array_equal(plate2.get_position(0), plate.get_position(0))
    np.testing.assert_array_equal(plate2.get_orientation(0), plate.get_orientation(0))
    assert loaded.ground.height == -1.0
    assert loaded.materials.lookup(loaded.materials.index("steel"), 0) == (0.5, 0.1)
    assert tt.export_world_xml(loaded) == tt.export_world_xml(world)


@pytest.mark.parametrize("text,msg", [
    ("<world><box size_x='1' mass='1'/></world>", "size_y"),
    ("<world><teapot/></world>", "unknown element <teapot>"),
    ("<world><heightmap x_size='1' y_size='1' x_sample='2' y_sample='2' height='0 0 0'/></world>", "heights"),
    ("<world><heightmap x_size='1' y_size='1' x_sample='2' y_sample='2' height='0 0 0 0'>"
     "<soil bekker_kc='0' bekker_kphi='0'/></heightmap></world>", "bekker"),
    ("<scene/>", "root element"),
    ("<world", "well-formed"),
    ("<world max_shape_pairs='2.5'/>", "max_shape_pairs must be an integer"),
    ("<world max_shape_pairs='inf'/>", "max_shape_pairs must be an integer, got 'inf'"),
    ("<world n_envs='inf'/>", "n_envs must be an integer, got 'inf'"),
    ("<world n_envs='2.5'/>", "n_envs must be an integer"),
    ("<world><heightmap x_size='1' y_size='1' x_sample='1e400' y_sample='2' height='0 0'/></world>",
     "<heightmap>: x_sample must be an integer"),
    ("<world max_shape_contacts='-1'/>", "max_shape_contacts must be >= 0"),
])
def test_bad_world_files_name_the_element(text, msg):
    with pytest.raises(ValueError, match=msg):
        tt.load_world_xml(text)


def test_broadphase_limits_round_trip():
    """Limits the user set are written and read back; unset ones stay unset (their defaults follow the
    bodies)."""
    world = tt.World(max_shape_pairs=7)
    world.add_sphere(0.1, 1.0)
    world.add_sphere(0.1, 1.0)
    text = tt.export_world_xml(world)
    assert "max_shape_pairs=\"7\"" in text and "max_shape_contacts" not in text
    loaded = tt.load_world_xml(text)
    assert loaded.max_shape_pairs == 7
    assert loaded.max_shape_contacts == world.max_shape_contacts


def test_height_maps_from_files_and_meshes_round_trip(tmp_path):
    """A world XML with a PNG map, a text-file map and a generated terrain (paths relative to the file), a
    rotated map with its material, a convex mesh and primitive bodies. Loading gives the maps the loaders
    give; exporting that world and loading it again gives the same world: geometry, heights, poses,
    materials, shapes, and (reference: determinism) the same trajectory for 300 steps, bit for bit (the mesh,
    whose hull is re-centred on loading, to 1e-9 m)."""
    from PIL import Image

    px = (np.arange(20, dtype=np.uint16).reshape(4, 5) * 3000)
    Image.fromarray(px).save(tmp_path / "t.png")
    (tmp_path / "t.txt").write_text("3 3 1.0 1.0 0 0.1 0 0.1 0.2 0.1 0 0.1 0")
    xml = f"""
    <world dt="0.001">
      <material_pair a="rock" b="dirt" friction="0.7" restitution="0.1"/>
      <heightmap png="t.png" x_size="2" y_size="1.5" height_scale="1e-5" height_offset="-0.1" center_x="1"
                 material="dirt" pos="0 0 0.05" quat="0.9950041652780258 0.09983341664682815 0 0"/>
      <heightmap file="t.txt" center_x="4" center_y="0"/>
      <heightmap center_x="-4" center_y="0"><terrain frequency="0.5" x_size="3" y_size="2" z_scale="0.3"
                 x_samples="13" y_samples="9" fractal_octaves="3" seed="11"/></heightmap>
      <mesh mass="2" material="rock" pos="1 0 0.6" vertices="0 0 0 0.3 0 0 0 0.3 0 0 0 0.3 0.3 0.3 0.3"
            faces="0 2 1 0 1 3 0 3 2 1 2 4 1 4 3 2 3 4"/>
      <sphere radius="0.1" mass="1" pos="4 0 0.5"/>
      <capsule radius="0.05" height="0.3" mass="1" pos="-4 0 0.8" quat="0.7071067811865476 0 0.7071067811865476 0"/>
    </world>"""
    (tmp_path / "w.xml").write_text(xml)
    world = tt.load_world_xml(tmp_path / "w.xml")
    png, txt, gen = world.heightmaps
    assert np.array_equal(png.get_heights(), np.flipud(px).reshape(-1) * 1e-5 - 0.1)
    assert png.material_name == "dirt" and np.allclose(png.get_position(), [0, 0, 0.05])
    assert np.array_equal(txt.get_heights(), [0, 0.1, 0, 0.1, 0.2, 0.1, 0, 0.1, 0])
    props = tt.TerrainProperties(frequency=0.5, x_size=3.0, y_size=2.0, z_scale=0.3, x_samples=13, y_samples=9,
                                 fractal_octaves=3, seed=11)
    assert np.array_equal(gen.get_heights(), props.generate())
    again = tt.load_world_xml(tt.export_world_xml(world))
    for a, b in zip(world.heightmaps, again.heightmaps):
        assert (a.x_samples, a.y_samples, a.x_size, a.y_size, a.center_x, a.center_y, a.material_name) == \
            (b.x_samples, b.y_samples, b.x_size, b.y_size, b.center_x, b.center_y, b.material_name)
        assert np.array_equal(a.get_contact_heights(), b.get_contact_heights())
        assert np.array_equal(a.get_position(), b.get_position())
        assert np.array_equal(a.get_orientation(), b.get_orientation())
    for a, b in zip(world.bodies, again.bodies):
        assert a.shape.type == b.shape.type and a.mass == b.mass and a.material == b.material
        assert np.allclose(a.inertia, b.inertia, rtol=1e-12, atol=0)
    assert world.materials.lookup(world.materials.index("rock"), world.materials.index("dirt")) == \
        again.materials.lookup(again.materials.index("rock"), again.materials.index("dirt"))
    verts = world.bodies[0].shape.vertices
    assert np.abs(again.bodies[0].shape.vertices - verts).max() <= 1e-15  # the hull, re-centred: rounding only
    world.step(300)
    again.step(300)
    for a, b in zip(world.bodies, again.bodies):
        if a.shape.type == tt.ShapeType.MESH:  # rounding-level hull differences, not amplified by 300 steps
            assert np.abs(a.get_position(0) - b.get_position(0)).max() < 1e-9
        else:
            assert np.array_equal(a.get_position(0), b.get_position(0))


def test_bad_source_elements_name_the_file(tmp_path):
    (tmp_path / "w.xml").write_text('<world><heightmap png="missing.png" x_size="1" y_size="1"/></world>')
    with pytest.raises(ValueError, match="w.xml.*missing.png"):
        tt.load_world_xml(tmp_path / "w.xml")
    (tmp_path / "m.xml").write_text('<world><mesh mass="1" vertices="0 0 0 1 0" faces="0 1 2"/></world>')
    with pytest.raises(ValueError, match="m.xml.*mesh"):
        tt.load_world_xml(tmp_path / "m.xml")
    (tmp_path / "t.xml").write_text('<world><heightmap><terrain fractal_octaves="70"/></heightmap></world>')
    with pytest.raises(ValueError, match="t.xml.*fractal_octaves"):
        tt.load_world_xml(tmp_path / "t.xml")


def test_articulated_systems_and_pins_round_trip(tmp_path):
    """An inline four-bar closed by a pin and a quadruped from its file, with their coordinates, velocities,
    drives and inverse-dynamics flag, come back from the exported XML as they were; both worlds then step
    alike (the pin's warm start is not exported: the results agree to the sweep's tolerance, not bit for
    bit)."""
    from pathlib import Path

    from test_pins import FOUR_BAR, GROUND, ROCKER, _closed_angles

    quadruped = Path(__file__).parent / "data" / "urdf" / "quadruped.urdf"
    world = tt.World(dt=1e-3, n_envs=2)
    world.add_ground()
    linkage = world.add_articulated_system(FOUR_BAR, base="fixed", position=(0.0, 0.0, 1.0))
    world.add_pin(linkage, "rocker", (ROCKER, 0.0, 0.0), None, None, (GROUND, 0.0, 1.0))
    dog = world.add_articulated_system(quadruped, position=(1.0, 0.0, 0.45))
    linkage.set_generalized_coordinate(_closed_angles(1.0))
    linkage.set_generalized_velocity([0.3, -0.2, 0.1])
    q = dog.get_generalized_coordinate(0)
    q[7:] = [0.0, 0.6, -1.2] * 4
    dog.set_generalized_coordinate(q)
    dog.set_pd_gains(np.r_[np.zeros(6), np.full(12, 300.0)], np.r_[np.zeros(6), np.full(12, 20.0)])
    dog.set_pd_target(q, np.zeros(18))
    dog.set_compute_inverse_dynamics(True)
    world.step(20)
    path = tmp_path / "robots.xml"
    text = tt.export_world_xml(world, str(path), env=1)
    assert "<articulated" in text and "<pin" in text and "<robot" in text
    loaded = tt.load_world_xml(str(path))
    a, b = loaded.articulated_systems
    assert [p.rows() for p in loaded.pins] == [p.rows() for p in world.pins]
    for old, new in ((linkage, a), (dog, b)):
        assert new.get_body_names() == old.get_body_names() and new.model.base == old.model.base
        for env in range(2):
            np.testing.assert_array_equal(new.get_generalized_coordinate(env), old.get_generalized_coordinate(1))
            np.testing.assert_array_equal(new.get_generalized_velocity(env), old.get_generalized_velocity(1))
            for k in range(2):
                np.testing.assert_array_equal(new.get_pd_gains(env)[k], old.get_pd_gains(1)[k])
    assert b.computes_inverse_dynamics and not a.computes_inverse_dynamics
    world.step(50)
    loaded.step(50)
    np.testing.assert_allclose(a.get_generalized_coordinate(0), linkage.get_generalized_coordinate(1), atol=1e-6)
    np.testing.assert_allclose(b.get_generalized_coordinate(0), dog.get_generalized_coordinate(1), atol=1e-5)


@pytest.mark.parametrize("text,msg", [
    ('<world><articulated name="x"/></world>', "needs a urdf attribute or an inline <robot>"),
    ('<world><pin system_a="nope" link_a="a" point_a="0 0 0" point_b="0 0 0"/></world>',
     "no <articulated> of that name"),
])
def test_bad_articulated_elements_name_the_element(text, msg):
    with pytest.raises(ValueError, match=msg):  # (WorldXMLError)
        tt.load_world_xml(text)
