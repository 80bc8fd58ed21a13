"""Resistive force theory (RFT) on plates: the per-plate law in numpy against the project's RFT stage, and whole
steps of a world whose bodies carry plates.

    python -m perf rft [--envs 1 64 1024] [--steps 1000] [--env-steps 20000] [--repeats 5]
                       [--stage-calls 50] [--warmup 50] [--out PATH]

1. Plate forces, two scenes: 4 buried 10 cm cubes of 3,072 plates (12,288 plates) and 6 boxes of 500 plates,
   partly or fully buried in flat sand at z = 0, each moving (linear and angular velocity), zero gravity, one env.
   * ``numpy``: :func:`rft_forces` below, an independent vectorized implementation of one plate's force from
     ``reference/rft_formulas.md`` (Li 2013 generic coefficients, Treers 2021 f1/f23, "unit" normalization,
     zeta 3.75 N/cm^3), with law.py's rule for a horizontal plate's e2. Its inputs are world-frame normals,
     velocities, depths and areas (the law alone, as RFT-SiM's function is timed).
   * ``taichi``: one launch of the world's RFT stage (``world._granular.stage()``): plate poses and velocities from
     the bodies' state, medium lookup, depth, the law, smoothing and the per-body sums.
   Both run in alternating rounds of ``--stage-calls`` calls; medians of ``--repeats`` rounds. Before timing, the
   forces of one ``world.step()`` (smoothing 1) are checked against numpy on the same plates: the max abs
   difference over the max force must stay below 1e-9 (else this raises). RFT-SiM's published numpy timings
   (7.6 ms / 12,288 plates, 3.1 ms / 6 x 500 plates, on its authors' CPU) are printed beside ours for reference.
2. Whole steps: ``world.step()`` (the RFT stage, then the step kernel) of the 6 x 500 boxes sliding on the sand
   under gravity (scenes ``rft_boxes_force`` and ``rft_boxes``, dt 1 ms), ``mode="force"`` and ``mode="row"``, per
   env count: the first step, ``--warmup`` steps, then ``--repeats`` rounds (force and row alternating) each
   restoring the same checkpoint and timing ``min(--steps, --env-steps / n_envs)`` steps (at least 3). Reports
   env-steps/s, the real-time factor (env-steps/s x dt) and plates per second (all plates, loaded or not).

3. The hexapod of ``scenes/hexapod_sand.py`` (scene ``hexapod``) walking (row mode, 500 plates per foot, servo
   targets set every 10 steps from Python) at 1 env and the largest ``--envs``: env-steps/s and the real-time factor.
"""
import time

import numpy as np

from .. import scenes
from ..scenes.rft import ZETA
from ..timing import Window, measure, median, round_rate
from . import init_backend

SMOKE = ["--envs", "1", "--steps", "5", "--env-steps", "5", "--repeats", "1", "--stage-calls", "1", "--warmup", "2",
         "--plates", "6x500"]
OUT = "rft.json"

# Li 2013 generic coefficients (A00, A10, B11, B01, B-11, C11, C01, C-11, D10), from the formula sheet
LI_GENERIC = (0.206, 0.169, 0.212, 0.358, 0.055, -0.124, 0.253, 0.007, 0.088)
F1_FIT = (0.440850096954369, 3.62263982880971, 1.60910808139526)  # Treers: a1 (tanh(a2 vt - a3) + tanh(a3))
F23_FIT = (1.99392673405210, 1.61146827229181, 0.973746396532650)  # b1 (atanh(b2 vn - b3) + atanh(b3))
NORMS = {"unit": (0.832324700111401, 5.81083560370960), "rftsim": (0.41, 4.31)}  # (N1, N23)
DT = 1e-3  # s
PUBLISHED_MS = {"12288": 7.6, "6x500": 3.1}  # RFT-SiM's numpy path on its authors' CPU (not measured here)


def _li(beta, gamma, c):
    """Li's generic (ax, az) per unit depth (dimensionless) at angles beta, gamma [rad], arrays (n,)."""
    az = (c[0] + c[1] * np.cos(2 * beta) + c[2] * np.sin(2 * beta + gamma) + c[3] * np.sin(gamma)
          + c[4] * np.sin(-2 * beta + gamma))
    ax = (c[5] * np.cos(2 * beta + gamma) + c[6] * np.cos(gamma) + c[7] * np.cos(-2 * beta + gamma)
          + c[8] * np.sin(2 * beta))
    return ax, az


def rft_forces(normals, velocities, depths, areas, zeta=ZETA, coefficients=LI_GENERIC, normalization="unit"):
    """World forces [N], shape (n, 3), of the sand on n plates: outward unit ``normals`` (n, 3), centroid
    ``velocities`` (n, 3) [m/s], centroid ``depths`` (n,) [m] below the surface (> 0 buried), ``areas`` (n,)
    [m^2]; ``zeta`` [N/cm^3]. Zero unless buried and leading (n . v > 0)."""
    n, v = np.asarray(normals, np.float64), np.asarray(velocities, np.float64)
    speed = np.sqrt(np.einsum("ij,ij->i", v, v))
    vh = v / np.where(speed > 0.0, speed, 1.0)[:, None]
    active = (depths > 0.0) & (speed > 0.0) & (np.einsum("ij,ij->i", n, vh) > 0.0)
    horizontal = np.abs(n[:, 2]) >= 1.0 - 1e-3  # e2: the normal's horizontal direction, the velocity's if none
    e2x = np.where(horizontal, vh[:, 0], n[:, 0])
    e2y = np.where(horizontal, vh[:, 1], n[:, 1])
    e2n = np.sqrt(e2x * e2x + e2y * e2y)
    ok = e2n > 1e-12
    safe = np.where(ok, e2n, 1.0)
    e2x, e2y = np.where(ok, e2x / safe, 1.0), np.where(ok, e2y / safe, 0.0)  # x when there is none
    along = vh[:, 0] * e2y - vh[:, 1] * e2x  # v^ . e1, e1 = e2 x z = (e2y, -e2x, 0)
    v23x, v23y, v23z = vh[:, 0] - along * e2y, vh[:, 1] + along * e2x, vh[:, 2]
    beta = np.arctan2(n[:, 2], n[:, 0] * e2x + n[:, 1] * e2y) + 0.5 * np.pi
    gamma = -np.arctan2(v23z, v23x * e2x + v23y * e2y)
    ax, az = _li(beta, gamma, coefficients)
    ay = coefficients[6] + coefficients[5] + coefficients[7]  # ax(0, 0) = C11 + C01 + C-11
    vt = np.abs(along)
    vn = np.sqrt(np.maximum(1.0 - vt * vt, 0.0))
    n1, n23 = NORMS[normalization]
    (a1, a2, a3), (b1, b2, b3) = F1_FIT, F23_FIT
    f1 = a1 * (np.tanh(a2 * vt - a3) + np.tanh(a3)) / n1
    f23 = b1 * (np.arctanh(b2 * vn - b3) + np.arctanh(b3)) / n23
    scale = np.where(active, zeta * 1e6 * depths * areas, 0.0)
    lateral = -f1 * ay * np.sign(along)
    radial = -f23 * ax
    return np.stack([scale * (lateral * e2y + radial * e2x), scale * (-lateral * e2x + radial * e2y),
                     scale * f23 * az], axis=1)


def world_inputs(bodies, sets, env=0):
    """The plates' world normals (n, 3), centroid velocities (n, 3) [m/s], depths (n,) [m] and areas (n,) [m^2]
    from the bodies' state in ``env`` (flat surface at z = 0)."""
    normals, velocities, depths, areas = [], [], [], []
    for body, ps in zip(bodies, sets):
        rot, pos = body.get_rotation_matrix(env), body.get_position(env)
        centroids = pos + ps.centroids @ rot.T
        normals.append(ps.normals @ rot.T)
        velocities.append(body.get_linear_velocity(env) + np.cross(body.get_angular_velocity(env), centroids - pos))
        depths.append(-centroids[:, 2])
        areas.append(ps.areas)
    return tuple(np.concatenate(x) for x in (normals, velocities, depths, areas))


def bench_forces(scene: str, repeats: int, calls: int) -> dict:
    """Check the stage against numpy on one step, then time both (module docstring, part 1)."""
    import taichi as ti

    built = scenes.build("rft_plates", 1, scene=scene)
    world, bodies, sets = built.world, built.parts["bodies"], built.parts["sets"]
    inputs = world_inputs(bodies, sets)
    t = time.perf_counter()
    world.step()
    ti.sync()
    first = time.perf_counter() - t
    got, ref = world.get_plate_forces(0)["force"], rft_forces(*inputs)
    n = len(ref)
    rel = float(np.abs(got - ref).max() / np.abs(ref).max())
    if not rel <= 1e-9:
        raise AssertionError(f"{scene}: the RFT stage and numpy differ by {rel:.3g} of the max force (> 1e-9)")
    run, args = world._granular.stage()
    np_ms, ti_ms = [], []
    for _ in range(repeats):  # alternating rounds
        t = time.perf_counter()
        for _ in range(calls):
            rft_forces(*inputs)
        np_ms.append(1e3 * (time.perf_counter() - t) / calls)
        ti.sync()
        t = time.perf_counter()
        for _ in range(calls):
            run(args)
        ti.sync()
        ti_ms.append(1e3 * (time.perf_counter() - t) / calls)
    out = {"scene": scene, "n_plates": n, "n_bodies": len(bodies), "plates_per_body": [s.n_plates for s in sets],
           "active_plates": int(np.count_nonzero(np.abs(ref).sum(axis=1))), "first_step_s": first,
           "max_force_N": float(np.abs(ref).max()), "max_abs_diff_over_max_force": rel,
           "numpy_ms": median(np_ms), "numpy_ms_all": np_ms,
           "taichi_stage_ms": median(ti_ms), "taichi_stage_ms_all": ti_ms,
           "published_rftsim_numpy_ms": PUBLISHED_MS[scene]}
    out["numpy_plates_per_s"] = n / (1e-3 * out["numpy_ms"])
    out["taichi_plates_per_s"] = n / (1e-3 * out["taichi_stage_ms"])
    out["numpy_over_taichi"] = out["numpy_ms"] / out["taichi_stage_ms"]
    return out


def bench_steps(n_envs: int, args) -> list:
    """Env-steps/s of whole steps of the 6 x 500 scene, force and row mode (module docstring, part 2), their
    rounds alternating."""
    steps = max(3, min(args.steps, args.env_steps // n_envs))
    cases = {}
    for mode, scene in (("force", "rft_boxes_force"), ("row", "rft_boxes")):
        world = scenes.build(scene, n_envs).world
        cases[mode] = (world, measure(world, Window(steps, 0, args.warmup)), [])
    for _ in range(args.repeats):
        for mode, (world, run, rates) in cases.items():
            rates.append(round_rate(world, run["checkpoint"], steps))
    rows = []
    for mode, (world, run, rates) in cases.items():
        rate = median(rates)
        rows.append({"scene": "6x500", "mode": mode, "n_envs": n_envs, "n_plates": world._model.n_plates, "dt": DT,
                     "timed_steps": steps, "first_step_s": run["first_step_s"], "env_steps_per_s": rate,
                     "env_steps_per_s_all": rates, "real_time_factor": rate * DT,
                     "plates_per_s": rate * world._model.n_plates})  # (all plates)
    return rows


def bench_hexapod(n_envs: int, args) -> dict:
    """Env-steps/s of the hexapod walking in sand (scene ``hexapod``: row mode, 500 plates per foot, dt 1 ms),
    its gait's servo targets set every 10 steps from Python as in the scene; after ``--warmup`` steps,
    ``--repeats`` rounds from one checkpoint."""
    scene = scenes.get("hexapod")
    built = scene.build(n_envs)
    steps = 10 * max(1, min(args.steps, args.env_steps // n_envs) // 10)
    run = measure(built.world, Window(steps, args.repeats, 10 * max(1, args.warmup // 10)), built.control,
                  scene.chunk)
    rate = run["env_steps_per_s"]
    return {"scene": "hexapod", "mode": "row", "n_envs": n_envs, "n_plates": built.world._model.n_plates, "dt": DT,
            "timed_steps": steps, "first_step_s": run["first_step_s"], "env_steps_per_s": rate,
            "env_steps_per_s_all": run["env_steps_per_s_all"], "real_time_factor": rate * DT}


def add_arguments(p) -> None:
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--steps", type=int, default=1000, help="most timed steps per round (whole steps)")
    p.add_argument("--env-steps", type=int, default=20000, help="timed env-steps per round (whole steps)")
    p.add_argument("--repeats", type=int, default=5, help="rounds")
    p.add_argument("--stage-calls", type=int, default=50, help="calls per round (plate forces)")
    p.add_argument("--warmup", type=int, default=50, help="untimed steps before the rounds (whole steps)")
    p.add_argument("--plates", nargs="+", default=["12288", "6x500"], choices=["12288", "6x500"],
                   help="the plate-force scenes")


def run(args) -> dict:
    from taichi_terra.backend import cpu_threads

    init_backend("cpu", "f64")
    threads = cpu_threads()
    print(f"cpu, f64, {threads} Taichi threads, numpy {np.__version__}", flush=True)
    forces = []
    for scene in args.plates:
        r = bench_forces(scene, args.repeats, args.stage_calls)
        forces.append(r)
        print(f"plates {scene:>5s} ({r['n_plates']} plates, {r['active_plates']} loaded): "
              f"numpy {r['numpy_ms']:.3f} ms ({r['numpy_plates_per_s']:.3g} plates/s), "
              f"taichi stage {r['taichi_stage_ms']:.3f} ms ({r['taichi_plates_per_s']:.3g} plates/s), "
              f"numpy/taichi {r['numpy_over_taichi']:.1f}x; max |diff| / max |F| {r['max_abs_diff_over_max_force']:.1e}"
              f"; published RFT-SiM numpy (their CPU, not measured here) {r['published_rftsim_numpy_ms']} ms",
              flush=True)
    steps = []
    for n in args.envs:
        for r in bench_steps(n, args):
            steps.append(r)
            print(f"steps 6x500 {r['mode']:5s} {n:5d} envs: {r['env_steps_per_s']:10,.0f} env-steps/s "
                  f"(real time x{r['real_time_factor']:,.1f}, {r['plates_per_s']:.3g} plates/s, all "
                  f"{r['n_plates']}), {r['timed_steps']} steps/round, first step {r['first_step_s']:.1f} s", flush=True)
    hexapods = []
    for n in sorted({1, max(args.envs)}):
        r = bench_hexapod(n, args)
        hexapods.append(r)
        print(f"hexapod (row, {r['n_plates']} plates per env) {n:5d} envs: {r['env_steps_per_s']:10,.0f} "
              f"env-steps/s (real time x{r['real_time_factor']:,.1f}), {r['timed_steps']} steps/round, "
              f"first step {r['first_step_s']:.1f} s", flush=True)
    return {"threads": threads, "precision": "f64", "forces": forces, "steps": steps, "hexapod": hexapods}
