"""f32 and the vulkan backend against closed forms, each in its own process (Taichi's backend and
precision are fixed per process)."""
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

SCRIPT = textwrap.dedent("""
    import math, sys
    sys.path.insert(0, {tests!r})
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    from helpers import slope_world
    world, ball, R = slope_world(math.radians(20.0), 0.8, "sphere")
    world.step({steps})
    contacts = world.get_contacts(0)
    print(float(contacts.impulses.sum(axis=0) @ contacts.normals[0]) / world.dt)
    print((R.T @ ball.get_position(0))[0] + 5.5)
""")


def _roll(arch: str, steps: int):
    code = SCRIPT.format(tests=str(Path(__file__).parent), arch=arch, steps=steps)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)


def _on_cpu_and_vulkan(script: str) -> dict:
    """``script`` (formatted with ``root``, the repository, and ``arch``) run in a process of its own on cpu
    and on vulkan, f32: each one's stdout lines."""
    root = str(Path(__file__).resolve().parents[1])
    lines = {}
    for arch in ("cpu", "vulkan"):
        out = subprocess.run([sys.executable, "-c", script.format(root=root, arch=arch)], capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        lines[arch] = out.stdout.strip().splitlines()
    return lines


def _expected(t: float, dt: float = 1e-3) -> float:
    """(5/14) g sin(20 deg) t^2 for rolling without slip, with the semi-implicit Euler factor (1 + dt / t)."""
    import math

    return 5.0 / 14.0 * 9.81 * math.sin(math.radians(20.0)) * t * t * (1.0 + dt / t)


def test_f32_sphere_on_slope_matches_closed_form():
    """Reference: (5/14) g sin(20 deg) t^2 = 4.793 m in 2 s, the same 1 % as the f64 test: rolling is
    insensitive to float32 rounding (relative 6e-8 per operation) over 2000 steps."""
    out = _roll("cpu", 2000)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.split()[-1]) == pytest.approx(_expected(2.0), rel=0.01)


@pytest.mark.needs("vulkan")
def test_vulkan_sphere_on_slope_matches_closed_form():
    """Reference: the same rolling closed form, on the vulkan backend (lavapipe on CPU machines), 0.2 s."""
    out = _roll("vulkan", 200)
    assert out.returncode == 0, out.stderr[-2000:]
    normal, travel = map(float, out.stdout.split()[-2:])
    assert travel == pytest.approx(_expected(0.2), rel=0.01)
    # the reported contact impulses come back too (every array of the step kernel is bound): rolling
    # without slip, the normal force is m g cos(20 deg)
    assert normal == pytest.approx(9.81 * math.cos(math.radians(20.0)), rel=0.01)


PLATE = textwrap.dedent("""
    import numpy as np
    import taichi_terra as tt
    tt.init(arch="cpu", precision="f32")
    mat = tt.SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, damping=3e4)
    world = tt.World(dt=1e-3)
    bed = world.add_deformable_terrain(51, 51, 1.0, 1.0, 0.0, 0.0, np.zeros(51 * 51), mat)
    plate = world.add_box(0.4, 0.6, 0.02, 20.0)
    plate.set_position([0.01, 0.01, 0.01])
    world.step(2000)
    print(0.01 - plate.get_position(0)[2], bed.get_soil_state(0)["sinkage"].max())
""")


def test_f32_soil_plate_matches_bekker_sinkage():
    """Reference: the soil spec's plate check, s = m g / (A kphi) = 8.175 mm, within the same 1 % as the f64
    test. Float32 rounding leaves tangential slip velocities of about 1e-15 m/s whose shear impulses underflow;
    they must give no impulse rather than 0/0."""
    out = subprocess.run([sys.executable, "-c", PLATE], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    plate, bed = map(float, out.stdout.split()[-2:])
    expected = 20.0 * 9.81 / (0.24 * 1e5)
    assert plate == pytest.approx(expected, rel=0.01)
    assert bed == pytest.approx(expected, rel=0.01)


BOX_ON_SOIL = textwrap.dedent("""
    import numpy as np
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    mat = tt.SoilMaterial(bekker_kphi=1.2e5, sinkage_exponent=1.0, elastic_stiffness=4e5, damping=2e3)
    world = tt.World(dt=1e-3)
    bed = world.add_deformable_terrain(41, 41, 1.0, 1.0, 0.0, 0.0, np.zeros(41 * 41), mat)
    box = world.add_box(0.4, 0.3, 0.1, 30.0)
    box.set_position([0.0, 0.0, 0.0499])
    world.step(40)
    stats = bed.get_soil_step_stats(0)
    print(0.05 - box.get_position(0)[2], stats["contacts"], stats["contact_area"], stats["normal_force"])
""")


@pytest.mark.needs("vulkan")
def test_vulkan_box_on_soil_matches_cpu():
    """Reference: the same world on cpu in f32. A 30 kg box on 221 bed samples, 40 steps: the same sinkage
    to 1e-6 m, every sample loaded with the box's exact footprint area 0.12 m^2, and the same soil force.
    (On Vulkan a long warm-start search once cut the following sweep short after the first soil row.)"""
    runs = {}
    for arch in ("cpu", "vulkan"):
        out = subprocess.run([sys.executable, "-c", BOX_ON_SOIL.format(arch=arch)], capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        runs[arch] = [float(v) for v in out.stdout.split()[-4:]]
    cpu, vk = runs["cpu"], runs["vulkan"]
    assert cpu[1] == vk[1] == 221
    assert vk[0] == pytest.approx(cpu[0], abs=1e-6)
    assert vk[2] == pytest.approx(0.12, rel=1e-5)
    assert vk[3] == pytest.approx(cpu[3], rel=1e-3)


PLANAR_PUSH = textwrap.dedent("""
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    from taichi_terra import planar
    world = planar.World(dt=0.1, n_envs=4)
    robot = world.add_rectangle(0.6, 0.4, kinematics="diff", mass=20.0, friction=1.0)
    boxes = [world.add_rectangle(0.3, 0.3, mass=1.0, position=(0.5 + 0.31 * i, 0.0)) for i in range(10)]
    world.add_linestring([(3.94, -1.0), (3.94, 1.0)])
    robot.set_command([0.5, 0.0])
    world.step(25)
    print(*world.get_poses(3)[:11].ravel(), world.get_sweeps(3))
""")


@pytest.mark.parametrize("arch", ["cpu", pytest.param("vulkan", marks=pytest.mark.needs("vulkan"))])
def test_f32_planar_push_packs_boxes_against_wall(arch):
    """Reference: the packed row's closed form (and IR-SIM's result on the same scene): ten 0.3 m boxes flush
    against the wall at x = 3.94 m, one slop (1e-6 m) apart, are centred at 3.79 - slop - (0.3 + slop) i m and
    the robot stops at 0.64 m less eleven slops, headings 0. In f32 coordinates of a few metres round to
    2.4e-7 m per operation, so positions are checked to 2e-6 m; the cpu f64 test checks them to the slop."""
    out = subprocess.run([sys.executable, "-c", PLANAR_PUSH.format(arch=arch)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    values = [float(v) for v in out.stdout.split()[-34:]]
    poses = np.array(values[:33]).reshape(11, 3)
    slop = 1e-6  # each pair rests one slop apart
    boxes = 3.94 - 0.15 - slop - (0.3 + slop) * np.arange(10)[::-1]
    assert poses[0, 0] == pytest.approx(boxes[0] - 0.45 - slop, abs=2e-6)
    assert poses[1:, 0] == pytest.approx(boxes, abs=2e-6)
    assert np.abs(poses[:, 1:]).max() < 1e-6
    assert values[-1] <= 2


PUSH_SCENE = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    from taichi_terra.reference_scenes import build_planar_world, push_scene
    world = build_planar_world(push_scene(), 1)
    world.step(60)
    print(*world.get_poses(0).ravel())
""")


@pytest.mark.needs("vulkan")
def test_vulkan_planar_push_scene_ends_where_cpu_does():
    """Reference: cpu f32, the same scene and steps (the harness's push scene: a robot packs ten boxes against
    a wall inside a pen, 60 steps of 0.1 s). Packed, every body rests where the contacts put it, so the two
    backends must agree to f32's rounding of metre-sized coordinates (2e-6 m, as above). When a launch spent
    lavapipe's loop limit (``test_vulkan_loops.py``), it left the last box 2.9 m away."""
    poses = {arch: np.array([float(v) for v in lines[-1].split()]).reshape(-1, 3)
             for arch, lines in _on_cpu_and_vulkan(PUSH_SCENE).items()}
    assert poses["cpu"].shape == poses["vulkan"].shape
    assert np.abs(poses["vulkan"] - poses["cpu"]).max() < 2e-6


PEN_SCENE = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    from taichi_terra.reference_scenes import build_planar_world, pen_scene
    for shape in ("circle", "square"):
        world = build_planar_world(pen_scene(64, shape), 1)
        counts = []
        for _ in range(3):
            world.step(1)
            counts += [world.get_sweeps(0), world.get_pair_count(0)]
        print(shape, *counts, *world.get_poses(0)[:, :2].ravel())
""")


@pytest.mark.needs("vulkan")
def test_vulkan_planar_pen_separates_as_cpu_does():
    """Reference: cpu f32, the same scene and steps (the harness's pen: 64 circles dropped overlapping into a
    pen of about 4 m, three steps of 0.1 s, each up to 32 sweeps). The backends round alike but for fused
    multiply-adds, so the circles must agree within the harness's f32 tolerance: 64 float32 roundings of the
    scene's length (4 m) per step, 3e-5 m, times three steps. Before the contact step ran its passes over
    launches, lavapipe's loop limit (``test_vulkan_loops.py``) cut the first sweep after 10 of 69 pairs and left
    circles 0.29 m from where cpu put them. 64 squares have no such tolerance: one sweep's outcome turns on
    whether a pair overlaps by more than the rest tolerance, which rounding flips (cpu f32 against cpu f64:
    1.1 m after one step of one sweep), so for them the test asks that no pass is cut short: the first two
    steps run as many sweeps as on cpu and keep as many pairs within 10 % (a cut pass kept none; by the third
    the scenes have parted: 439 pairs in cpu f32 against 531 in cpu f64)."""
    runs = {arch: {line.split()[0]: np.array([float(v) for v in line.split()[1:]]) for line in lines[-2:]}
            for arch, lines in _on_cpu_and_vulkan(PEN_SCENE).items()}
    tolerance = 3 * 64 * float(np.finfo(np.float32).eps) * 4.0
    cpu, vk = runs["cpu"]["circle"], runs["vulkan"]["circle"]
    assert (cpu[0:6:2] > 10).all()  # the pen takes many sweeps (cut short, the comparison below would show it)
    assert np.abs(vk - cpu).max() < tolerance
    cpu, vk = runs["cpu"]["square"][:4], runs["vulkan"]["square"][:4]  # (two steps: after that, see above)
    assert (vk[0::2] == cpu[0::2]).all() and (cpu[0::2] > 10).all()
    assert np.abs(vk[1::2] - cpu[1::2]).max() <= 0.1 * cpu[1::2].min()


def test_the_floor_of_divisors_and_square_roots_is_positive_in_either_precision():
    """``kernels/common/math.tiny`` is what kernels floor a divisor or a square root's argument at: a positive
    number in the real type in use. 1e-300, its f64 value, is 0 in float32 (so ``max(s, 1e-300)`` was no
    floor there); the f32 value stays a positive normal float32 and far below any physical value."""
    import taichi as ti

    from taichi_terra.kernels.common.math import tiny

    assert tiny(ti.f64) == 1e-300 and np.float32(1e-300) == 0.0
    small = np.float32(tiny(ti.f32))
    assert small > 0.0 and small >= np.finfo(np.float32).tiny and small < 1e-30


CHAIN = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import numpy as np
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    from taichi_terra.bodies.urdf import make_chain_urdf
    world = tt.World(dt=1e-3, n_envs=2)
    chain = world.add_articulated_system(make_chain_urdf(10), base="fixed", position=(0.0, 0.0, 2.0))
    chain.set_generalized_coordinate(np.full(10, 0.3))
    world.step(50)
    print(world.get_diverged(), *chain.get_frame_position("link10", 0))
""")


@pytest.mark.needs("vulkan")
def test_vulkan_articulated_chain_swings_as_cpu_does():
    """Reference: cpu f32, the same chain (ten 0.1 m links on a fixed base, every joint at 0.3 rad, let go)
    after 50 steps of 1 ms. On lavapipe the step runs in the GPU layout, a launch per stage (one kernel of the
    articulated step did not compile in useful time there); the tip must agree within 64 float32 roundings of
    the chain's 1 m per step, and no launch may run past the driver's loop limit."""
    tips = {}
    for arch, lines in _on_cpu_and_vulkan(CHAIN).items():
        assert lines[-1].startswith("{} "), lines[-1]  # (no env reported)
        tips[arch] = np.array([float(v) for v in lines[-1].split()[1:]])
    assert np.abs(tips["cpu"] - np.array([0.0, 0.0, 2.0])).max() > 0.1  # (the chain hangs away from its base)
    assert np.abs(tips["vulkan"] - tips["cpu"]).max() < 51 * 64 * float(np.finfo(np.float32).eps) * 1.0


SAND_BOX = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    world = tt.World(dt=1e-3, n_envs=2)
    world.add_granular_medium(0.0)
    box = world.add_box(0.2, 0.2, 0.1, 2.0)
    box.set_position([0.0, 0.0, 0.052])  # (2 mm above the sand)
    box.set_linear_velocity([0.3, 0.0, -0.2])
    world.add_plates(box, count=60)
    world.step(60)
    print(world.get_diverged(), *box.get_position(0), *box.get_linear_velocity(0))
""")


@pytest.mark.needs("vulkan")
def test_vulkan_box_in_sand_moves_as_cpu_does():
    """Reference: cpu f32, the same box (0.2 x 0.2 x 0.1 m, 2 kg, about 60 RFT plates) thrown at the generic
    sand from 2 mm above it, at 0.3 m/s across and 0.2 m/s down, 60 steps of 1 ms (the sand turns the fall
    back). On the GPU backends the RFT stage is a launch of
    its own before each step and the step runs in launches per stage; the box must end within 64 float32
    roundings of its 0.2 m size per step of where cpu puts it, with no launch past the loop limit."""
    ends = {}
    for arch, lines in _on_cpu_and_vulkan(SAND_BOX).items():
        assert lines[-1].startswith("{} "), lines[-1]  # (no env reported)
        ends[arch] = np.array([float(v) for v in lines[-1].split()[1:]])
    assert ends["cpu"][5] > 0.0 and ends["cpu"][0] > 0.005  # (the sand turned its fall back; it moved on)
    assert np.abs(ends["vulkan"][:3] - ends["cpu"][:3]).max() < 61 * 64 * float(np.finfo(np.float32).eps) * 0.2


TRACKED = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import numpy as np
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    from taichi_terra.bodies.tracked_robot import tracked_robot_urdf
    world = tt.World(dt=2e-3, n_envs=2)
    world.add_ground(0.0)
    robot = world.add_articulated_system(tracked_robot_urdf(), position=(0.0, 0.0, 0.178 + 0.015 + 1e-4))
    nv, nq = robot.get_dof(), robot.get_generalized_coordinate_dim()
    dofs = [robot.get_generalized_velocity_index(n) for n in ("left_sprocket", "right_sprocket")]
    kd, target = np.zeros(nv), np.zeros((2, nv))
    kd[dofs] = 50.0
    target[:, dofs] = [[5.0], [3.0]]
    robot.set_pd_gains(np.zeros(nv), kd)
    robot.set_pd_target(np.zeros((2, nq)), target)
    world.step(40)
    print(world.get_diverged(), *robot.get_frame_position("base", 0), *robot.get_frame_position("base", 1),
          *robot.get_frame_position("left_sprocket_link", 1))
""")


@pytest.mark.needs("vulkan")
def test_vulkan_tracked_robot_drives_as_cpu_does():
    """Reference: cpu f32, the same tracked robot (``bodies/tracked_robot.py``: belts of 1 m footprints on
    0.178 m sprockets) on flat ground, its sprockets' velocity drives at 5 rad/s in env 0 and 3 rad/s in env 1,
    40 steps of 2 ms from rest. On lavapipe the step runs in the GPU layout with one sweep per launch (a sweep
    of the belts' contact block spends about a third of the driver's loop limit); the hull and a sprocket of
    both envs must end within 64 float32 roundings of the robot's 1 m per step of where cpu puts them, with no
    launch past the loop limit. (Both envs drive straight: with the sprockets at different speeds the four
    belt contacts share the turning moment in more than one way that Coulomb friction allows, and when the
    turn starts depends on rounding: after 0.5 s cpu f64 and lavapipe put a turning robot 1 cm apart.)"""
    ends = {}
    for arch, lines in _on_cpu_and_vulkan(TRACKED).items():
        assert lines[-1].startswith("{} "), lines[-1]  # (no env reported)
        ends[arch] = np.array([float(v) for v in lines[-1].split()[1:]])
    assert ends["cpu"][0] > 0.02 and ends["cpu"][3] > 0.01 and ends["cpu"][0] > ends["cpu"][3]  # (both drove)
    assert np.abs(ends["vulkan"] - ends["cpu"]).max() < 41 * 64 * float(np.finfo(np.float32).eps) * 1.0


BUGGY = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import taichi_terra as tt
    tt.init(arch="cpu", precision={precision!r})
    from perf.scenes import get
    scene = get("buggy")
    world, sweeps = scene.build(1).world, []
    for _ in range(130):
        world.step()
        sweeps.append(int(world.get_solver_sweeps()[0]))
    where = world.articulated_systems[0].get_generalized_coordinate()[0, :3]
    for _ in range(470):
        world.step()
        sweeps.append(int(world.get_solver_sweeps()[0]))
    print(max(sweeps[:130]), sum(s >= world.solver.max_sweeps for s in sweeps), *where)
""")


def test_f32_buggy_suspension_loops_converge_as_in_f64():
    """Reference: cpu f64, the buggy (scenes/buggy_soil.py: its suspension is planar four-bar loops closed by
    pins) driving off on its soil bed, 130 steps of 1 ms. Each loop's pin has a direction its hinges already
    hold; its response is zero in exact arithmetic and some float32 roundings of the largest in f32, and a
    pseudo-inverse that took it for a response (the floor of 1e-9 used in both precisions) let the pin's
    impulse grow by about 1e6 N s per sweep: the sweeps ran to their cap of 100 from step 6 and the buggy ended
    0.19 m from f64 (with a floor of 1e-5, from step 91). With the f32 floor
    (``kernels/common/math.redundancy_floor``) no step may take more than three times the sweeps f64 takes at
    most, and the chassis must end within 1 cm of f64, the bound the backend harness sets for a scene whose
    soil samples enter contact a step apart in f32 and f64. Later, from step 162, the pins settle in many steps
    into a cycle of two sweeps trading 3.6e-6 m/s, finer than float32 resolves there against the 1e-6 m/s
    tolerance: 181 of the first 600 steps ran to the sweep cap of 100, none in f64. The sweeps now stop where a
    sweep makes no progress within ten tolerances in f32 (``solver/sweep.py`` ``ROUNDING_STALL``): at most 1 %
    of the 600 steps may reach the cap (1 measured)."""
    root = str(Path(__file__).resolve().parents[1])
    runs = {}
    for precision in ("f64", "f32"):
        out = subprocess.run([sys.executable, "-c", BUGGY.format(root=root, precision=precision)],
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        values = out.stdout.strip().splitlines()[-1].split()
        runs[precision] = (int(values[0]), int(values[1]), np.array([float(v) for v in values[2:]]))
    assert runs["f32"][0] <= 3 * runs["f64"][0]
    assert np.abs(runs["f32"][2] - runs["f64"][2]).max() < 0.01
    assert runs["f64"][1] == 0 and runs["f32"][1] <= 6  # (steps at the sweep cap in 600: 1 % at most in f32)
