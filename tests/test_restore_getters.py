"""Every getter after ``World.restore(cp)`` returns what it returned when ``cp`` was taken (reference: the values
read at the checkpoint itself), however many steps were taken in between: one test per public getter of the
world, its bodies, an articulated system and a soil bed.

One world holds what the getters report on: a box pressing a soil bed with a second box on it (soil contacts,
a shape pair), a ball on a rigid height map, a paddle with RFT plates in a granular medium, and a two-link arm with
inverse dynamics on whose shoulder drive is held at its effort limit. It is stepped 60 steps, checkpointed, every getter
read, stepped 40 more, restored and read again. A getter of what the steps change must also have read
something else before the restore (else the test could not fail)."""
import dataclasses

import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra.bodies.articulated import ArticulatedSystem
from taichi_terra.bodies.body import Body
from taichi_terra.terrain.deformable import DeformableTerrain

ARM = ('<robot name="arm"><link name="base"/><link name="arm"><inertial><origin xyz="0.2 0 0"/>'
       '<mass value="2"/><inertia ixx="1e-3" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>'
       '<link name="hand"><inertial><origin xyz="0.05 0 0"/><mass value="0.5"/>'
       '<inertia ixx="1e-4" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>'
       '<joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.5"/>'
       '<axis xyz="0 1 0"/><limit effort="5" velocity="20"/></joint>'
       '<joint name="wrist" type="continuous"><parent link="arm"/><child link="hand"/><origin xyz="0.4 0 0"/>'
       '<axis xyz="0 1 0"/></joint></robot>')


def _scene():
    world = tt.World(dt=1e-3, n_envs=2)
    n = 21
    bed = world.add_deformable_terrain(n, n, 1.0, 1.0, 0.0, 0.0, np.zeros(n * n),
                                       tt.SoilMaterial(bekker_kphi=2e6, sinkage_exponent=1.0, damping=2e4))
    xs = np.linspace(-0.5, 0.5, 11)
    world.add_heightmap(11, 11, 1.0, 1.0, 3.0, 0.0, 0.05 * np.add.outer(xs, xs).reshape(-1) ** 2)
    box = world.add_box(0.2, 0.2, 0.1, 5.0)
    box.set_position((0.0, 0.0, 0.05))
    box.set_linear_velocity((0.3, 0.0, 0.0))
    top = world.add_box(0.1, 0.1, 0.1, 1.0)
    top.set_position((0.0, 0.0, 0.151))
    ball = world.add_sphere(0.1, 1.0)
    ball.set_position((3.0, 0.0, 0.2))
    ball.set_linear_velocity((0.5, 0.2, 0.0))
    box.set_external_force((1.0, 0.0, 0.0))
    world.add_granular_medium(0.0, zeta=3.75, smoothing=1.0)  # (RFT-SiM's play sand [N/cm^3])
    paddle = world.add_box(0.1, 0.06, 0.04, 2.0)
    paddle.set_position((-3.0, 0.0, -0.05))
    paddle.set_linear_velocity((0.02, 0.0, -0.05))
    world.add_plates(paddle, count=50)
    arm = world.add_articulated_system(ARM, base="fixed", position=(0.0, 3.0, 0.0))
    arm.set_pd_gains([1e4, 1e3], [1e2, 10.0])
    arm.set_pd_target([0.6, 0.0], [0.0, 0.0])
    arm.set_compute_inverse_dynamics(True)
    return world, bed, box, arm


#: getter -> how to call it on (world, bed, box, arm); True: what the 40 steps change, so it must read
#: something else before the restore
GETTERS = {
    "World.get_contacts": (lambda w, bed, box, arm: w.get_contacts(0), True),
    "World.get_contact_overflow": (lambda w, bed, box, arm: w.get_contact_overflow(), False),
    "World.get_pair_overflow": (lambda w, bed, box, arm: w.get_pair_overflow(), False),
    "World.get_shape_pairs": (lambda w, bed, box, arm: w.get_shape_pairs(0), False),
    "World.get_solver_sweeps": (lambda w, bed, box, arm: w.get_solver_sweeps(), False),
    "World.get_diverged": (lambda w, bed, box, arm: w.get_diverged(), False),
    "World.get_plate_forces": (lambda w, bed, box, arm: w.get_plate_forces(0), True),
    "World.get_plate_loads": (lambda w, bed, box, arm: w.get_plate_loads(), True),
    "World.get_state": (lambda w, bed, box, arm: w.get_state(), True),
    "World.get_gravity": (lambda w, bed, box, arm: w.get_gravity(1), False),
    "World.get_body_mass": (lambda w, bed, box, arm: w.get_body_mass(box, 1), False),
    "World.get_link_mass": (lambda w, bed, box, arm: w.get_link_mass(arm, arm.get_body_names()[-1], 1), False),
    "World.get_articulated_states": (lambda w, bed, box, arm: w.get_articulated_states(), True),
    "World.get_link_contact_forces": (lambda w, bed, box, arm: w.get_link_contact_forces(arm), False),
    "World.get_link_sinkage": (lambda w, bed, box, arm: w.get_link_sinkage(arm), False),
    "World.get_medium_params": (lambda w, bed, box, arm: w.get_medium_params(w.granular_media[0], 1), False),
    "World.get_material_pair_prop": (lambda w, bed, box, arm: w.get_material_pair_prop("default", "default", 1), False),
    "Body.get_position": (lambda w, bed, box, arm: box.get_position(), True),
    "Body.get_orientation": (lambda w, bed, box, arm: box.get_orientation(), True),
    "Body.get_rotation_matrix": (lambda w, bed, box, arm: box.get_rotation_matrix(), True),
    "Body.get_linear_velocity": (lambda w, bed, box, arm: box.get_linear_velocity(), True),
    "Body.get_angular_velocity": (lambda w, bed, box, arm: box.get_angular_velocity(), True),
    "Body.get_external_force": (lambda w, bed, box, arm: box.get_external_force(), False),
    "Body.get_external_torque": (lambda w, bed, box, arm: box.get_external_torque(), False),
    "ArticulatedSystem.get_generalized_coordinate": (lambda w, bed, box, arm: arm.get_generalized_coordinate(), True),
    "ArticulatedSystem.get_generalized_velocity": (lambda w, bed, box, arm: arm.get_generalized_velocity(), True),
    "ArticulatedSystem.get_generalized_force": (lambda w, bed, box, arm: arm.get_generalized_force(), False),
    "ArticulatedSystem.get_held_drives": (lambda w, bed, box, arm: arm.get_held_drives(), False),
    "ArticulatedSystem.get_force_at_joint_in_world_frame":
        (lambda w, bed, box, arm: arm.get_force_at_joint_in_world_frame(), True),
    "ArticulatedSystem.get_torque_at_joint_in_world_frame":
        (lambda w, bed, box, arm: arm.get_torque_at_joint_in_world_frame(), True),
    "ArticulatedSystem.get_frame_position": (lambda w, bed, box, arm: arm.get_frame_position("hand"), True),
    "ArticulatedSystem.get_frame_orientation": (lambda w, bed, box, arm: arm.get_frame_orientation("hand"), True),
    "ArticulatedSystem.get_frame_velocity": (lambda w, bed, box, arm: arm.get_frame_velocity("hand"), True),
    "ArticulatedSystem.get_mass_matrix": (lambda w, bed, box, arm: arm.get_mass_matrix(0), True),
    "ArticulatedSystem.get_nonlinearities": (lambda w, bed, box, arm: arm.get_nonlinearities(0), True),
    "ArticulatedSystem.get_pd_gains": (lambda w, bed, box, arm: arm.get_pd_gains(), False),
    "ArticulatedSystem.get_pd_target": (lambda w, bed, box, arm: arm.get_pd_target(), False),
    "DeformableTerrain.get_soil_state": (lambda w, bed, box, arm: bed.get_soil_state(0), True),
    "DeformableTerrain.get_material": (lambda w, bed, box, arm: bed.get_material(1), False),
    "DeformableTerrain.get_soil_step_stats": (lambda w, bed, box, arm: bed.get_soil_step_stats(0), True),
    "DeformableTerrain.get_heights": (lambda w, bed, box, arm: bed.get_heights(0), True),
    "DeformableTerrain.get_surface_heights": (lambda w, bed, box, arm: bed.get_surface_heights(), True),
    "DeformableTerrain.get_contact_heights": (lambda w, bed, box, arm: bed.get_contact_heights(), False),
    "DeformableTerrain.get_contact_height": (lambda w, bed, box, arm: bed.get_contact_height(0.05, 0.0), False),
    "DeformableTerrain.get_height": (lambda w, bed, box, arm: bed.get_height(0.05, 0.0), False),
    "DeformableTerrain.get_normal": (lambda w, bed, box, arm: bed.get_normal(0.05, 0.0), False),
    "DeformableTerrain.get_color": (lambda w, bed, box, arm: bed.get_color(0.05, 0.0), False),
    "DeformableTerrain.get_colors": (lambda w, bed, box, arm: bed.get_colors(), False),
    "DeformableTerrain.get_undeformed_heights": (lambda w, bed, box, arm: bed.get_undeformed_heights(), False),
    "DeformableTerrain.get_visual_dirty_region": (lambda w, bed, box, arm: bed.get_visual_dirty_region(), False),
    "DeformableTerrain.get_com_position": (lambda w, bed, box, arm: bed.get_com_position(), False),
    "DeformableTerrain.get_position": (lambda w, bed, box, arm: bed.get_position(), False),
    "DeformableTerrain.get_orientation": (lambda w, bed, box, arm: bed.get_orientation(), False),
    "DeformableTerrain.get_rotation_matrix": (lambda w, bed, box, arm: bed.get_rotation_matrix(), False),
}
#: getters of what no step changes (names, sizes, indices of the model), with what they read
STATIC = {
    "ArticulatedSystem.get_body_names": "the URDF's links",
    "ArticulatedSystem.get_joint_names": "the URDF's joints",
    "ArticulatedSystem.get_dof": "the joints' types",
    "ArticulatedSystem.get_generalized_coordinate_dim": "the joints' types",
    "ArticulatedSystem.get_generalized_velocity_index": "the joints' order",
    "ArticulatedSystem.get_track_index": "the URDF's tracks",
    "ArticulatedSystem.get_tracks": "the URDF's tracks and their drives",
    "ArticulatedSystem.get_track_speed": "get_generalized_velocity (the drives' gains times the joint speeds)",
}
#: getters that advance on a restore instead of going back, by design: a renderer that drew the rows at one
#: revision must see that they changed again (checked by their own test below)
ADVANCING = {"DeformableTerrain.get_height_row_revisions"}
CLASSES = {"World": tt.World, "Body": Body, "ArticulatedSystem": ArticulatedSystem,
           "DeformableTerrain": DeformableTerrain}


def _plain(value):
    """``value`` as nested lists, dicts and numpy arrays (a ContactSet by its fields), copied."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _equal(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=True)
    return a == b


@pytest.fixture(scope="module")
def readings():
    world, bed, box, arm = _scene()
    world.step(60)
    cp = world.checkpoint()
    def read():
        out = {name: _plain(get(world, bed, box, arm)) for name, (get, _moves) in GETTERS.items()}
        out["revisions"] = bed.get_height_row_revisions()
        return out

    then = read()
    world.step(40)
    later = read()
    world.restore(cp)
    return then, later, read()


@pytest.mark.parametrize("name", sorted(GETTERS))
def test_a_getter_after_restore_returns_what_it_returned_at_the_checkpoint(readings, name):
    then, later, restored = readings
    if GETTERS[name][1]:
        assert not _equal(later[name], then[name]), f"{name}: the 40 steps changed nothing to compare"
    assert _equal(restored[name], then[name])


def test_a_restore_advances_the_revision_of_every_soil_row(readings):
    """``get_height_row_revisions`` never goes back (renderers keep the revision they drew): the restore moves
    on the revision of every row of every env, since the surface it brings back may differ from the one drawn
    last (here it does, in some rows)."""
    then, later, restored = readings
    moved = later["DeformableTerrain.get_surface_heights"] != then["DeformableTerrain.get_surface_heights"]
    assert moved.any()
    assert np.all(restored["revisions"] > later["revisions"])


def test_every_public_getter_is_checked_or_reads_the_model_alone():
    names = {f"{label}.{attr}" for label, cls in CLASSES.items() for attr in dir(cls)
             if attr.startswith("get_") and callable(getattr(cls, attr))}
    assert names == set(GETTERS) | set(STATIC) | ADVANCING
