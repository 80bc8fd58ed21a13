"""Bad input to the World's own entry points (its constructor and ``init``, settings, materials, free bodies and
their state, checkpoints, and the contact, pair and ray queries) raises a clear error naming the argument, and
changes nothing. The other subsystems' bad-input tests: ``docs/testing.md``."""
import math

import numpy as np
import pytest

import taichi_terra as tt
from helpers import SETTERS, bad_input_scene as _scene, rejects as _rejects, unchanged as _unchanged

NAN, INF = math.nan, math.inf


# ------------------------------------------------------------------ World and init
@pytest.mark.parametrize("kw, exc, name", [
    ({"dt": 0.0}, ValueError, "dt"), ({"dt": -1.0}, ValueError, "dt"), ({"dt": NAN}, ValueError, "dt"),
    ({"dt": "0.1"}, TypeError, "dt"), ({"n_envs": 0}, ValueError, "n_envs"), ({"n_envs": 2.0}, TypeError, "n_envs"),
    ({"gravity": (0.0, -9.81)}, ValueError, "gravity"), ({"gravity": "down"}, TypeError, "gravity"),
    ({"gravity": (0.0, 0.0, NAN)}, ValueError, "gravity"), ({"solver": tt.SolverConfig(erp=2.0)}, ValueError, "erp"),
    ({"solver": tt.SolverConfig(max_sweeps=0)}, ValueError, "max_sweeps"),
    ({"solver": tt.SolverConfig(soil_block=1)}, TypeError, "soil_block"),
    ({"solver": tt.SolverConfig(pin_block=1)}, TypeError, "pin_block"),
    ({"solver": tt.SolverConfig(tree_soil_block=1)}, TypeError, "tree_soil_block"),
    ({"solver": tt.SolverConfig(sweeps_per_launch=0)}, ValueError, "sweeps_per_launch"),
    ({"solver": tt.SolverConfig(sweeps_per_launch=2.0)}, TypeError, "sweeps_per_launch"),
])
def test_world_constructor_rejects(kw, exc, name):
    with pytest.raises(exc, match=f"^{name} must"):
        tt.World(**kw)


@pytest.mark.parametrize("args, kw, exc, match", [
    (("tpu", "f64"), {}, ValueError, "arch must be one of"), (("cpu", "f16"), {}, ValueError, "precision must be"),
    (("vulkan", "f64"), {}, ValueError, "'f64' is not supported on arch 'vulkan'"),
    (("cpu", "f64"), {"threads": 0}, ValueError, "threads must be"),
    (("cpu", "f32"), {}, RuntimeError, "already initialised"),
    (("cuda", "f64"), {}, RuntimeError, "already initialised"),
    (("cpu", "f64"), {"threads": 2}, RuntimeError, "already initialised"),
])
def test_init_rejects_and_same_config_is_a_noop(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        tt.init(*args, **kw)
    assert tt.is_initialized()
    assert tt.init("cpu", "f64") == {"arch": "cpu", "precision": "f64", "threads": None}
    assert tt.init() == {"arch": "cpu", "precision": "f64", "threads": None}


def test_world_setters_reject():
    w = _scene()
    _rejects(w, (lambda: w.set_gravity([0.0, 0.0, INF]), ValueError, "gravity"),
             (lambda: w.step(0), ValueError, "n_steps"), (lambda: w.step(1.5), TypeError, "n_steps"),
             (lambda: w.add_material(""), ValueError, "material"),
             (lambda: w.add_material(3), TypeError, "material"),
             (lambda: w.set_material_pair_prop("", "ice", 0.5, 0.0), ValueError, "material names"),
             (lambda: w.set_material_pair_prop(None, "ice", 0.5, 0.0), TypeError, "material names"),
             (lambda: w.get_contacts(2), ValueError, "env must be in"),
             (lambda: w.get_contacts(None), TypeError, "get_contacts needs one env"),
             (lambda: w.get_contact_overflow(1.0), TypeError, "env must be None or an int"),
             (lambda: w.get_solver_sweeps(-1), ValueError, "env must be in"))


# ------------------------------------------------------------------ builders


@pytest.mark.parametrize("add, args, match", [
    ("add_sphere", (0.0, 1.0), "radius"), ("add_sphere", (NAN, 1.0), "radius"), ("add_sphere", (0.1, -1.0), "mass"),
    ("add_sphere", (0.1, INF), "mass"), ("add_box", (0.1, 0.0, 0.1, 1.0), "size_y"),
    ("add_box", (0.1, 0.1, INF, 1.0), "size_z"), ("add_box", (-0.1, 0.1, 0.1, 1.0), "size_x"),
    ("add_box", (0.1, 0.1, 0.1, 0.0), "mass"), ("add_capsule", (-0.1, 0.2, 1.0), "radius"),
    ("add_capsule", (0.1, NAN, 1.0), "height"), ("add_capsule", (0.1, 0.2, 0.0), "mass"),
    ("add_cylinder", (0.1, 0.0, 1.0), "height"), ("add_cylinder", (INF, 0.2, 1.0), "radius"),
    ("add_cylinder", (0.1, 0.2, NAN), "mass"),
])
def test_add_shape_rejects_sizes_and_masses(add, args, match):
    w = _scene()
    with _unchanged(w), pytest.raises(ValueError, match=match):
        getattr(w, add)(*args)


def test_add_shape_rejects_non_numbers_and_unknown_material():
    w = _scene()
    _rejects(w, (lambda: w.add_sphere("0.1", 1.0), TypeError, "radius"),
             (lambda: w.add_box(0.1, 0.1, 0.1, True), TypeError, "mass"),
             *((lambda add=add, args=args: getattr(w, add)(*args, material="nope"), ValueError,
                "unknown material 'nope'")
               for add, args in (("add_sphere", (0.1, 1.0)), ("add_box", (0.1, 0.1, 0.1, 1.0)),
                                 ("add_capsule", (0.1, 0.2, 1.0)), ("add_cylinder", (0.1, 0.2, 1.0)))))


def test_add_mesh_rejects(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    w = _scene()
    flat = trimesh.Trimesh(vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], faces=[[0, 1, 2], [1, 3, 2]])
    with np.errstate(all="ignore"):  # trimesh divides by the zero volume of the flat hull
        _rejects(w, (lambda: w.add_mesh([[0, 0, 0], [1, 0, 0]], 1.0), TypeError, "mesh_or_path"),
                 (lambda: w.add_mesh(flat, 1.0), ValueError, "mesh_or_path.*(flat|degenerate|hull)"),
                 (lambda: w.add_mesh(str(tmp_path / "missing.obj"), 1.0), ValueError, "mesh_or_path: cannot load"),
                 (lambda: w.add_mesh(tmp_path / "missing.stl", 1.0), ValueError, "mesh_or_path: cannot load"),
                 (lambda: w.add_mesh(trimesh.creation.box(), 0.0), ValueError, "mass"),
                 (lambda: w.add_mesh(trimesh.creation.box(), 1.0, material="nope"), ValueError, "unknown material"))


def test_add_ground_rejects():
    w = tt.World()
    _rejects(w, (lambda: w.add_ground(material="nope"), ValueError, "unknown material 'nope'"),
             (lambda: w.add_ground(NAN), ValueError, "height must be finite"),
             (lambda: w.add_ground(material=3), TypeError, "material must be a str"))
    w = _scene()
    _rejects(w, (lambda: w.add_ground(1.0), RuntimeError, "already has a ground"))


@pytest.mark.parametrize("friction, restitution, match", [
    (-0.1, 0.0, "friction"), (NAN, 0.0, "friction"), (INF, 0.0, "friction"), (0.5, 1.5, "restitution"),
    (0.5, -0.1, "restitution"), (0.5, NAN, "restitution"), ("0.5", 0.0, "friction"),
])
@pytest.mark.parametrize("build", [False, True])
def test_material_props_reject(friction, restitution, match, build):
    w = _scene(build=build)
    exc = TypeError if isinstance(friction, str) else ValueError
    _rejects(w, (lambda: w.set_material_pair_prop("rubber", "ice", friction, restitution), exc, match),
             (lambda: w.set_default_material(friction, restitution), exc, match))
    assert w.materials.lookup(0, 0) == (0.8, 0.0)


# ------------------------------------------------------------------ per-body setters
SHAPE, FIN = "must have shape", "must be finite"
BAD_VALUES = [
    ("position", [1.0, 2.0], ValueError, SHAPE), ("position", np.zeros((3, 3)), ValueError, SHAPE),
    ("position", [0.0, NAN, 0.0], ValueError, FIN), ("position", "abc", TypeError, "must be an array"),
    ("linear_velocity", [[0.0, 0.0, 0.0]], ValueError, SHAPE), ("linear_velocity", [INF, 0.0, 0.0], ValueError, FIN),
    ("angular_velocity", np.zeros(4), ValueError, SHAPE),
    ("angular_velocity", [[0.0, 0.0, 0.0], [NAN, 0.0, 0.0]], ValueError, FIN),
    ("external_force", np.zeros(6), ValueError, SHAPE), ("external_force", [0.0, 0.0, -INF], ValueError, FIN),
    ("external_torque", np.zeros((2, 4)), ValueError, SHAPE), ("external_torque", [NAN, 0.0, 0.0], ValueError, FIN),
    ("orientation", [0.0, 0.0, 0.0, 0.0], ValueError, "non-zero norm"),
    ("orientation", [1, NAN, 0, 0], ValueError, FIN),
    ("orientation", 2.0 * np.eye(3), ValueError, "rotation"),
    ("orientation", np.diag([1, 1, -1]), ValueError, "rotation"),
    ("orientation", [[1, 0, 0], [1, 1, 0], [0, 0, 1]], ValueError, "rotation"),
    ("orientation", [1.0, 0.0, 0.0], ValueError, SHAPE), ("orientation", "abc", TypeError, "quaternion"),
    ("orientation", [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], ValueError, r"\[1\].*non-zero"),
]


@pytest.mark.parametrize("build", [False, True], ids=["before_build", "after_build"])
@pytest.mark.parametrize("quantity, value, exc, match", BAD_VALUES)
def test_body_setters_reject_values(quantity, value, exc, match, build):
    w = _scene(n_envs=2, build=build)
    setter = getattr(w.bodies[1], f"set_{quantity}")
    cases = [(lambda: setter(value), exc, f"{quantity}.*{match}")]
    if np.shape(value)[:1] != (2,):  # a single value is also rejected for one env
        cases.append((lambda: setter(value, env=1), exc, f"{quantity}.*{match}"))
    _rejects(w, *cases)


@pytest.mark.parametrize("build", [False, True], ids=["before_build", "after_build"])
@pytest.mark.parametrize("quantity", SETTERS)
def test_body_setters_reject_env(quantity, build):
    w = _scene(n_envs=2, build=build)
    body = w.bodies[0]
    good = [1.0, 0.0, 0.0, 0.0] if quantity == "orientation" else [0.0, 0.0, 0.0]
    setter = getattr(body, f"set_{quantity}")
    _rejects(w, *((lambda env=env: setter(good, env=env), ValueError, r"env must be in \[0, 2\)")
                  for env in (2, -1, np.int64(5))),
             *((lambda env=env: setter(good, env=env), TypeError, "env must be None or an int")
               for env in (0.0, "0", True, [0])),
             (lambda: setter(np.array([good, good]), env=0), ValueError, f"{quantity} must have shape"),
             (lambda: getattr(body, f"get_{quantity}")(env=2), ValueError, "env must be in"))


# ------------------------------------------------------------------ height-map pose and queries


# ------------------------------------------------------------------ topology after the first step
def test_builders_after_first_step_raise_runtime_error():
    w = _scene()
    w.step()
    _rejects(w, *((call, RuntimeError, "already built") for call in (
        lambda: w.add_sphere(0.1, 1.0), lambda: w.add_box(0.1, 0.1, 0.1, 1.0), lambda: w.add_capsule(0.1, 0.2, 1.0),
        lambda: w.add_cylinder(0.1, 0.2, 1.0), lambda: w.add_heightmap(2, 2, 1.0, 1.0, 0.0, 0.0, np.zeros(4)))))
    w2 = tt.World()
    w2.step()
    _rejects(w2, (lambda: w2.add_ground(), RuntimeError, "already built"))


# ------------------------------------------------------------------ checkpoints
def test_restore_rejects_non_checkpoint():
    w = _scene(build=True)
    _rejects(w, *((lambda bad=bad: w.restore(bad), TypeError, "checkpoint must be a Checkpoint")
                  for bad in (None, {"arrays": {}}, w.bodies[0])))


@pytest.mark.parametrize("n_envs, extra", [(2, None), (2, "sphere"), (3, "box")])
def test_restore_rejects_other_layout(n_envs, extra):
    src = tt.World(n_envs=n_envs)  # like _scene, but a body fewer, a sphere for the box, or more envs
    src.add_ground()
    src.add_heightmap(3, 2, 2.0, 1.0, 0.0, 0.0, np.arange(6.0))
    src.add_sphere(0.1, 1.0)
    if extra:
        src.add_sphere(0.2, 2.0) if extra == "sphere" else src.add_box(0.2, 0.3, 0.4, 2.0)
    ck = src.checkpoint()
    w = _scene(build=True)
    _rejects(w, (lambda: w.restore(ck), ValueError, "checkpoint.*different layout"))


def test_failed_restore_leaves_unbuilt_world_editable():
    """A rejected checkpoint must not freeze the topology of a world that was not built yet."""
    src = tt.World()
    src.add_sphere(0.1, 1.0)
    ck = src.checkpoint()
    w = _scene()
    with _unchanged(w), pytest.raises(ValueError, match="different layout"):
        w.restore(ck)
    w.add_sphere(0.1, 1.0)  # still a builder


def test_step_with_invalid_solver_leaves_unbuilt_world_editable():
    """step() validates the solver settings before it builds (freezes) the world."""
    w = _scene()
    w.solver.erp = 2.0
    with _unchanged(w), pytest.raises(ValueError, match="erp"):
        w.step()
    w.add_sphere(0.1, 1.0)  # still a builder


def test_a_tree_query_validates_the_solver_settings_as_a_step_does():
    """The queries that run a kernel on the trees (mass matrix, bias forces, frames) bring the settings to the
    device as a step does, through the same check: an invalid setting raises there too, and nothing of it
    reaches the kernels; set right again, the query runs."""
    w = tt.World()
    arm = w.add_articulated_system('<robot name="r"><link name="a"><inertial><mass value="1"/>'
                                   '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                                   '</robot>', base="floating")
    w.solver.tolerance = -1.0
    with pytest.raises(ValueError, match="tolerance must be >= 0"):
        arm.get_mass_matrix()
    w.solver.tolerance = 1e-6
    np.testing.assert_allclose(arm.get_mass_matrix(), np.eye(6))


def test_restore_rejects_damaged_checkpoints_before_loading_anything():
    """A checkpoint with a missing or reshaped array, a bad time, or from a world with another time step
    raises and leaves the state as it was."""
    import dataclasses

    w = tt.World()
    w.add_ground()
    ball = w.add_sphere(0.1, 1.0)
    ball.set_position([0.0, 0.0, 0.5])
    w.step(5)
    cp = w.checkpoint()
    w.step(5)
    before = ball.get_position(0)
    partial = dict(cp.arrays)
    partial.pop("state_i")
    reshaped = dict(cp.arrays, q=cp.arrays["q"][:, :3])
    other = tt.World(dt=2e-3)
    other.add_ground()
    other.add_sphere(0.1, 1.0)
    for bad, kind, msg in ((dataclasses.replace(cp, arrays=partial), ValueError, "state_i"),
                           (dataclasses.replace(cp, arrays=reshaped), ValueError, "'q'"),
                           (dataclasses.replace(cp, time="abc"), ValueError, "time"),
                           (other.checkpoint(), ValueError, "different layout")):
        with pytest.raises(kind, match=msg):
            w.restore(bad)
        np.testing.assert_array_equal(ball.get_position(0), before)
        assert w.time == pytest.approx(0.01)


def test_setters_reject_booleans_and_huge_sweep_counts():
    w = tt.World()
    ball = w.add_sphere(0.1, 1.0)
    with pytest.raises(TypeError, match="position"):
        ball.set_position([True, False, True])
    w.solver.max_sweeps = 2 ** 31
    with pytest.raises(ValueError, match="max_sweeps"):
        w.step()
    assert not w.built
    with pytest.raises(TypeError, match="solver"):
        tt.World(solver={})


@pytest.mark.parametrize("arg, value, kind", [("max_shape_pairs", -1, ValueError), ("max_shape_pairs", 2.5, TypeError),
                                              ("max_shape_contacts", -3, ValueError),
                                              ("max_shape_contacts", "8", TypeError)])
def test_bad_limits_are_rejected(arg, value, kind):
    with pytest.raises(kind, match=arg):
        tt.World(dt=1e-3, **{arg: value})


def test_bad_step_layouts_are_refused_and_leave_the_layout():
    """``World.step_layout`` takes "fused", "staged" or None (the backend's default: fused on cpu)."""
    world = tt.World()
    world.add_sphere(0.1, 1.0)
    assert world.step_layout == "fused"
    world.step_layout = "staged"
    for value in ("gpu", 1, ""):
        with pytest.raises(ValueError, match="^step_layout must be 'fused', 'staged' or None"):
            world.step_layout = value
    assert world.step_layout == "staged"
    world.step_layout = None
    assert world.step_layout == "fused"
    world.solver.sweeps_per_launch = -1
    with pytest.raises(ValueError, match="^sweeps_per_launch must be >= 1"):
        world.step()
    assert not world.built and world.time == 0.0


def test_bad_watch_settings_are_refused():
    world = tt.World()
    for name, value in (("bounds", 0.0), ("speed_limit", float("nan")), ("bounds", -1.0)):
        with pytest.raises(ValueError, match=name):
            setattr(world, name, value)
    assert world.bounds == 1e5 and world.speed_limit == 1e5
    with pytest.raises(ValueError, match="on_divergence"):
        tt.World(on_divergence="ignore")
    with pytest.raises(TypeError, match="envs"):
        world.reset_envs("3", world.checkpoint())
    with pytest.raises(ValueError, match="env"):
        world.reset_envs([1], world.checkpoint())


def test_ray_bad_input():
    world = tt.World(n_envs=2)
    world.add_ground()
    for args, kwargs, word in ((([0, 0, 1], [0, 0, 0], 1.0), {}, "non-zero"),
                               (([0, 0], [0, 0, -1], 1.0), {}, "origin"),
                               (([0, 0, 1], [0, 0, -1], -1.0), {}, "max_length"),
                               (([0, 0, 1], [0, 0, -1], 1.0), {"env": 2}, "env"),
                               (([0, 0, np.nan], [0, 0, -1], 1.0), {}, "finite"),
                               (("abc", [0, 0, -1], 1.0), {}, "origin")):
        with pytest.raises((TypeError, ValueError), match=word):
            world.ray_test(*args, **kwargs)
    with pytest.raises(ValueError, match="shape"):
        world.ray_test_batch(np.zeros((3, 4, 3)), np.ones((3, 4, 3)), 1.0)  # 3 envs given, the world has 2
    with pytest.raises(ValueError, match="max_length"):
        world.ray_test_batch(np.zeros((4, 3)), np.ones((4, 3)), np.ones((2, 5)))


def test_pair_queries_reject_env():
    w = _scene(build=True)
    _rejects(w, (lambda: w.get_shape_pairs(2), ValueError, "env must be in"),
             (lambda: w.get_shape_pairs(None), TypeError, "one env index"),
             (lambda: w.get_pair_overflow(5), ValueError, "env must be in"))


@pytest.mark.parametrize("kwargs, kind, match", [
    ({"position": np.zeros((3, 2))}, ValueError, "position must have shape"),
    ({"position": np.zeros((2, 3, 3))}, ValueError, "position must have shape"),
    ({"orientation": np.zeros((2, 4))}, ValueError, "nonzero norm"),
    ({"linear_velocity": np.full((2, 3), np.nan)}, ValueError, "finite"),
    ({"angular_velocity": np.full((3, 2, 7), np.inf)[..., 2:5]}, ValueError, "finite"),  # strided rows
    ({"orientation": np.full((3, 2, 7), np.nan)[..., 1:5]}, ValueError, "finite"),
    ({"angular_velocity": "fast"}, TypeError, "angular_velocity"),
    ({"position": np.zeros((2, 3)), "env": 3}, ValueError, "env"),
])
def test_set_state_rejects_bad_input_and_changes_nothing(kwargs, kind, match):
    """A bad argument to ``World.set_state`` raises, naming it, and leaves every body as it was (also the
    arguments given beside it); 3 envs, 2 bodies."""
    w = _scene(n_envs=3, build=True)
    w.step(2)
    before = w.get_state()
    with pytest.raises(kind, match=match):
        w.set_state(linear_velocity=np.ones((2, 3)), **kwargs) if "linear_velocity" not in kwargs \
            else w.set_state(**kwargs)
    for name, value in w.get_state().items():
        np.testing.assert_array_equal(value, before[name])
