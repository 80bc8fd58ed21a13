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
])
def test_bad_world_files_name_the_element(text, msg):
    with pytest.raises(ValueError, match=msg):
        tt.load_world_xml(text)
