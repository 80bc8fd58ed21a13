"""The loop limit of lavapipe, Mesa's software Vulkan driver (``kernels/common/lanes.LAVAPIPE_LOOP_LIMIT``): a
thread runs at most 65,535 loop iterations in one launch, all its loops counted together; past that, every loop
ends at its next back-edge and the thread goes on with wrong values, silently. Reference: counting (each
iteration adds one), against a driver with no limit, where the count is exact. In their own process (Taichi's
backend is fixed per process)."""
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from taichi_terra.kernels.common.lanes import LAVAPIPE_LOOP_LIMIT

SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import numpy as np
    import taichi as ti
    import taichi_terra as tt
    tt.init(arch="vulkan", precision="f32")
    nd = ti.types.ndarray()

    @ti.kernel
    def count(start: ti.i32, stop: ti.i32, outer: ti.i32, ones: nd, out: nd):
        for _ in range(1):  # one thread
            c = out[0]
            for a in range(outer):
                for b in range(start, stop):
                    c += ones[(a + b) % 7]  # (read from memory: the compiler cannot fold the loop)
            out[0] = c

    ones = ti.ndarray(ti.i32, 7)
    ones.from_numpy(np.ones(7, np.int32))
    out = ti.ndarray(ti.i32, 1)

    def run(chunks, outer=1):
        out.from_numpy(np.zeros(1, np.int32))
        for start, stop in chunks:
            count(start, stop, outer, ones, out)
        return int(out.to_numpy()[0])

    print(run([(0, 70000)]), run([(0, 35000), (35000, 70000)]), run([(0, 300)], outer=300))
""")


@pytest.mark.needs("vulkan")
def test_a_threads_loops_share_one_limit_per_launch_and_launches_split_the_work(tmp_path):
    script = tmp_path / "loops.py"  # (a file: Taichi reads a kernel's source)
    script.write_text(SCRIPT.format(root=str(Path(__file__).resolve().parents[1])))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    one_launch, two_launches, nested = (int(v) for v in out.stdout.split()[-3:])
    # the remedy the kernels use: the same work over launches that each stay below the limit is exact
    assert two_launches == 70000
    if one_launch == 70000:  # a driver without the limit (a GPU's own): every loop is exact
        assert nested == 90000
    else:  # lavapipe: one launch stops at the limit, and a loop nest spends it on its inner and outer loops: a
        # pass of the inner loop costs its 300 iterations and a few more for the loops around them (302 measured)
        assert one_launch == LAVAPIPE_LOOP_LIMIT
        assert LAVAPIPE_LOOP_LIMIT * 300 / 305 < nested < LAVAPIPE_LOOP_LIMIT * 300 / 301


STACKS = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    from taichi_terra.kernels.common.lanes import driver_loop_limit
    for n_boxes, steps in ((5, 40), (20, 40), (200, 1)):
        world = tt.World(dt=1e-3, n_envs=2)
        world.add_ground()
        for k in range(n_boxes):  # stacks of 0.2 m boxes, or (200) two layers of a 10 x 10 grid
            x, y, z = (0.01 * (k % 3), 0.0, 0.1 + 0.2 * k) if n_boxes < 100 else \
                (0.25 * (k % 10), 0.25 * (k // 10 % 10), 0.1 + 0.2 * (k // 100))
            world.add_box(0.2, 0.2, 0.2, 1.0).set_position([x, y, z])
        world.step(steps)
        found = world.get_diverged()
        print(n_boxes, sorted(found), found.get(0, {{}}).get("what"), found.get(0, {{}}).get("body"),
              found.get(0, {{}}).get("stage"),
              repr(float(world.bodies[n_boxes // 2].get_position(0)[2])), driver_loop_limit())
""")


def _stacks(arch: str) -> list[str]:
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", STACKS.format(root=root, arch=arch)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if line[:1].isdigit()]


@pytest.mark.needs("vulkan")
def test_each_stage_has_the_loop_budget():
    """Reference: cpu f32, the same worlds of 0.2 m boxes, steps of 1 ms. On lavapipe a step is a launch per
    stage and the sweeps a launch per 8 sweeps, so that stacks of five and of 20 boxes (100 sweeps a step
    over up to 80 rows) stay within the limit: the middle box of five and of 20 ends within 64 float32
    roundings of the stack's 1 m and 4 m per step of where cpu puts it (the backends differ by fused
    multiply-adds, and in f32 the sweeps stop where they make no progress within ten tolerances, which
    rounding decides). 200 boxes on the ground, whose broadphase and box-box pairs an env's thread once ran
    alone past the limit in the contact search, run their first step with each shape pair on a thread of its
    own (``kernels/step.py`` ``stage_shape_pair``): nothing reported, the middle box where cpu puts it."""
    cpu, vk = _stacks("cpu"), _stacks("vulkan")
    assert [line.split()[1] for line in cpu] == ["[]"] * 3  # (cpu has no limit)
    assert [line.split()[1] for line in vk] == ["[]"] * 3
    assert abs(float(vk[0].split()[-2]) - float(cpu[0].split()[-2])) < 41 * 64 * float(np.finfo(np.float32).eps)
    tolerance = 41 * 64 * float(np.finfo(np.float32).eps) * 4.0
    assert abs(float(vk[1].split()[-2]) - float(cpu[1].split()[-2])) < tolerance
    # (one step; the grid of 200 boxes is 2.5 m wide)
    assert abs(float(vk[2].split()[-2]) - float(cpu[2].split()[-2])) < 64 * 2.5 * float(np.finfo(np.float32).eps)
    assert vk[0].split()[-1] in ("None", str(LAVAPIPE_LOOP_LIMIT))


PLATE_10K = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import numpy as np
    import taichi_terra as tt
    tt.init(arch={arch!r}, precision="f32")
    from taichi_terra.kernels.common.lanes import driver_loop_limit
    mat = tt.SoilMaterial(bekker_kphi=2e5, sinkage_exponent=1.0, elastic_stiffness=4e5, damping=2e3)
    world = tt.World(dt=1e-3)
    bed = world.add_deformable_terrain(121, 121, 1.2, 1.2, 0.0, 0.0, np.zeros(121 * 121), mat)
    plate = world.add_box(1.0, 1.0, 0.05, 200.0)
    plate.set_position([0.005, 0.005, 0.025])  # (its edges midway between samples: 100 x 100 under it)
    world.step(6)
    stats = bed.get_soil_step_stats(0)
    print("plate", sorted(world.get_diverged()), stats["contacts"], stats["contact_area"],
          repr(0.025 - float(plate.get_position(0)[2])))
    world.step(54)
    found = world.get_diverged()
    print("later", sorted(found), found.get(0, {{}}).get("what"), found.get(0, {{}}).get("stage"), driver_loop_limit())
    world = tt.World(dt=1e-3, on_divergence="raise")
    world.add_deformable_terrain(121, 121, 1.2, 1.2, 0.0, 0.0, np.zeros(121 * 121), mat)
    world.add_box(1.0, 1.0, 0.05, 200.0).set_position([0.005, 0.005, 0.025])
    try:
        world.step(60)
    except tt.DivergenceError as exc:
        print("raised", exc)
""")


@pytest.mark.needs("vulkan")
def test_a_soil_pairs_quadrature_runs_over_its_footprint_rows_and_a_stage_past_the_limit_is_reported():
    """Reference: cpu f32, the same world: a 200 kg, 1 m square plate on a bed of 1 cm samples, 10,000 of them
    under it, 6 steps of 1 ms. One thread visiting the 10,000 samples runs past lavapipe's loop limit (it did,
    in the contact search, before the GPU layout split a soil pair's quadrature over the rows of its footprint:
    ``collision/pairs.py`` ``soil_quadrature_row``). Split, nothing is reported, every sample is loaded with
    the plate's whole area, and the plate sinks as on cpu within 64 float32 roundings of the bed's 1.2 m per
    step. Later (in its step 51 on lavapipe), as the plate sinks, the sweeps' soil block of 10,000 rows (one thread's work, its Newton
    passes over every row) runs past the limit: on lavapipe every env reports it (``get_diverged``, no body in
    particular, the stage named), and ``on_divergence="raise"`` raises naming it, where the same launch used
    to leave wrong values silently. On a driver without the limit, nothing is reported."""
    root = str(Path(__file__).resolve().parents[1])
    runs, lines = {}, {}
    for arch in ("cpu", "vulkan"):
        out = subprocess.run([sys.executable, "-c", PLATE_10K.format(root=root, arch=arch)], capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        runs[arch] = [line for line in out.stdout.splitlines() if line.startswith("plate")][0].split(" ", 3)
        lines[arch] = out.stdout.splitlines()
    assert not [line for line in lines["cpu"] if line.startswith("raised")]
    later = [line for line in lines["vulkan"] if line.startswith("later")][0]
    if later.endswith("None"):  # a GPU's own driver: no limit, no report
        assert later.startswith("later [] ")
    else:
        assert later == f"later [0] a launch past the Vulkan driver's loop limit sweeps {LAVAPIPE_LOOP_LIMIT}"
        raised = [line for line in lines["vulkan"] if line.startswith("raised")]
        assert len(raised) == 1 and raised[0].startswith("raised env 0 diverged after its step ")
        assert "loop limit (stage sweeps) (world.get_diverged(): 1 env(s))" in raised[0]
    for arch, (_tag, diverged, contacts, rest) in runs.items():
        assert diverged == "[]", arch
        assert int(contacts) == 10_000, arch
        # (the area is a float32 sum of 10,000 cells: within 10,000 roundings of 1 m^2)
        assert float(rest.split()[0]) == pytest.approx(1.0, rel=10_000 * float(np.finfo(np.float32).eps)), arch
    cpu, vk = float(runs["cpu"][3].split()[1]), float(runs["vulkan"][3].split()[1])
    assert cpu > 1e-5  # (it sinks)
    assert abs(vk - cpu) < 6 * 64 * 1.2 * float(np.finfo(np.float32).eps)
