"""Resistive force theory (RFT) on plates: the per-plate law in numpy against the project's RFT stage, and whole
steps of a world whose bodies carry plates.

    python -m perf.bench_rft [--envs 1 64 1024] [--steps 1000] [--env-steps 20000] [--repeats 5]
                             [--stage-calls 50] [--warmup 50] [--out PATH]

1. Plate forces, two scenes: 4 buried 10 cm cubes of 3,072 plates (12,288 plates) and 6 boxes of 500 plates,
   partly or fully buried in flat sand at z = 0, each moving (linear and angular velocity), zero gravity, one env.
   * ``numpy``: :func:`rft_forces` below, an independent vectorized implementation of one plate's force from
     ``reference/rft_formulas.md`` (Li 2013 generic coefficients, Treers 2021 f1/f23, "unit" normalization,
     zeta 3.75 N/cm^3), with law.py's rule for a horizontal plate's e2. Its inputs are world-frame normals,
     velocities, depths and areas (the law alone, as RFT-SiM's function is timed).
   * ``taichi``: one launch of the world's RFT stage (``World._plate_stage()``): plate poses and velocities from
     the bodies' state, medium lookup, depth, the law, smoothing and the per-body sums.
   Both run in alternating rounds of ``--stage-calls`` calls; medians of ``--repeats`` rounds. Before timing, the
   forces of one ``world.step()`` (smoothing 1) are checked against numpy on the same plates: the max abs
   difference over the max force must stay below 1e-9 (else this raises). RFT-SiM's published numpy timings
   (7.6 ms / 12,288 plates, 3.1 ms / 6 x 500 plates, on its authors' CPU) are printed beside ours for reference.
2. Whole steps: ``world.step()`` (the RFT stage, then the step kernel) of the 6 x 500 boxes sliding on the sand
   under gravity (:func:`walking_world`, dt 1 ms), ``mode="force"`` and ``mode="row"``, per env count: the
   first step, ``--warmup`` steps, then ``--repeats`` rounds (force and row alternating) each restoring the same
   checkpoint and timing ``min(--steps, --env-steps / n_envs)`` steps (at least 3). Reports env-steps/s, the
   real-time factor (env-steps/s x dt) and plates per second (all plates, loaded or not).

3. The hexapod of ``scenes/hexapod_sand.py`` walking (row mode, 500 plates per foot, servo targets set every 10
   steps from Python) at 1 env and the largest ``--envs``: env-steps/s and the real-time factor.

JSON goes to perf/results/rft.json.
"""
import argparse
import json
import os
import statistics
import time

import numpy as np

from .timing import first_step, round_rate

# Li 2013 generic coefficients (A00, A10, B11, B01, B-11, C11, C01, C-11, D10), from the formula sheet
LI_GENERIC = (0.206, 0.169, 0.212, 0.358, 0.055, -0.124, 0.253, 0.007, 0.088)
F1_FIT = (0.440850096954369, 3.62263982880971, 1.60910808139526)  # Treers: a1 (tanh(a2 vt - a3) + tanh(a3))
F23_FIT = (1.99392673405210, 1.61146827229181, 0.973746396532650)  # b1 (atanh(b2 vn - b3) + atanh(b3))
NORMS = {"unit": (0.832324700111401, 5.81083560370960), "rftsim": (0.41, 4.31)}  # (N1, N23)
ZETA = 3.75  # N/cm^3, RFT-SiM's play sand
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


def plate_world(scene: str, n_envs=1, mode="force", gravity=(0.0, 0.0, 0.0), smoothing=1.0, mass=1.0, seed=3):
    """A world with flat sand at z = 0 and bodies carrying plates, set moving: ``scene`` "12288" (four 10 cm
    cubes, plate area 2e-5 m^2: 3,072 plates each) or "6x500" (six 10 x 8 x 5 cm boxes, 8e-5 m^2: 500 each), of
    ``mass`` [kg] each.
    Body 0 is upright and moves straight down (horizontal plates with no horizontal velocity); the others are
    turned (body 1 about z only) and move and spin. Returns (world, bodies, plate sets)."""
    import taichi_terra as tt

    rng = np.random.default_rng(seed)
    world = tt.World(dt=DT, gravity=gravity, n_envs=n_envs)
    world.add_granular_medium(0.0, zeta=ZETA, smoothing=smoothing, mode=mode)
    size, area, count = ((0.1, 0.1, 0.1), 2e-5, 4) if scene == "12288" else ((0.1, 0.08, 0.05), 8e-5, 6)
    bodies, sets = [], []
    for i in range(count):
        body = world.add_box(*size, mass)
        body.set_position((0.3 * i, 0.0, (-0.09, -0.03, -0.12, -0.06, -0.02, -0.15)[i]))
        if i == 0:
            body.set_linear_velocity((0.0, 0.0, -0.05))
        else:
            quat = (np.r_[np.cos(0.35), 0.0, 0.0, np.sin(0.35)] if i == 1 else rng.normal(size=4))
            body.set_orientation(quat)
            body.set_linear_velocity(rng.uniform(-0.1, 0.1, 3) - [0.0, 0.0, 0.03])
            body.set_angular_velocity(rng.uniform(-1.0, 1.0, 3))
        bodies.append(body)
        sets.append(world.add_plates(body, area=area))
    return world, bodies, sets


def walking_world(n_envs: int, mode: str):
    """The "6x500" boxes at 2 kg, upright (turned about z), their bottoms 2 mm deep, each sliding at 0.1 m/s in
    its own direction and sinking at 0.05 m/s, under gravity with smoothing 0.1 (RFT-SiM's). (Buried deep, a
    light box takes far more than its weight from the sand: explicit forces then throw it out.)"""
    world, bodies, sets = plate_world("6x500", n_envs, mode, gravity=(0.0, 0.0, -9.81), smoothing=0.1,
                                     mass=2.0)
    for i, body in enumerate(bodies):
        yaw = 0.5 * i
        body.set_orientation((np.cos(0.5 * yaw), 0.0, 0.0, np.sin(0.5 * yaw)))
        body.set_position((0.3 * i, 0.0, 0.025 - 0.002))
        body.set_linear_velocity((0.1 * np.cos(1.1 * i), 0.1 * np.sin(1.1 * i), -0.05))
        body.set_angular_velocity((0.0, 0.0, 0.0))
    return world, bodies, sets


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

    world, bodies, sets = plate_world(scene)
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
    run, args = world._plate_stage()
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
           "numpy_ms": statistics.median(np_ms), "numpy_ms_all": np_ms,
           "taichi_stage_ms": statistics.median(ti_ms), "taichi_stage_ms_all": ti_ms,
           "published_rftsim_numpy_ms": PUBLISHED_MS[scene]}
    out["numpy_plates_per_s"] = n / (1e-3 * out["numpy_ms"])
    out["taichi_plates_per_s"] = n / (1e-3 * out["taichi_stage_ms"])
    out["numpy_over_taichi"] = out["numpy_ms"] / out["taichi_stage_ms"]
    return out


def bench_steps(n_envs: int, args) -> list:
    """Env-steps/s of whole steps of the 6 x 500 scene, force and row mode (module docstring, part 2)."""
    import taichi as ti

    steps = max(3, min(args.steps, args.env_steps // n_envs))
    cases = {}
    for mode in ("force", "row"):
        world, _bodies, _sets = walking_world(n_envs, mode)
        first = first_step(world)
        world.step(args.warmup)
        ti.sync()
        cases[mode] = (world, world.checkpoint(), first, [])
    for _ in range(args.repeats):
        for mode, (world, snap, _first, rates) in cases.items():
            rates.append(round_rate(world, snap, steps))
    rows = []
    for mode, (world, _snap, first, rates) in cases.items():
        rate = statistics.median(rates)
        rows.append({"scene": "6x500", "mode": mode, "n_envs": n_envs, "n_plates": world._model.n_plates, "dt": DT,
                     "timed_steps": steps, "first_step_s": first, "env_steps_per_s": rate,
                     "env_steps_per_s_all": rates, "real_time_factor": rate * DT,
                     "plates_per_s": rate * world._model.n_plates})  # (all plates)
    return rows


def _hexapod_module():
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenes", "hexapod_sand.py")
    spec = importlib.util.spec_from_file_location("hexapod_sand", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_hexapod(n_envs: int, args) -> dict:
    """Env-steps/s of the hexapod of ``scenes/hexapod_sand.py`` walking in sand (row mode, 500 plates per foot,
    dt 1 ms), its gait's servo targets set every 10 steps from Python as in the scene; after ``--warmup`` steps,
    ``--repeats`` rounds from one checkpoint."""
    import taichi as ti
    import taichi_terra as tt

    hexapod = _hexapod_module()
    world = tt.World(dt=DT, n_envs=n_envs)
    world.add_granular_medium(0.0, zeta=ZETA, smoothing=1.0, mode="row")
    robot = hexapod.add_hexapod(world, 0.0, plates=500)
    t = time.perf_counter()
    world.step()
    ti.sync()
    first = time.perf_counter() - t
    for k in range(max(1, args.warmup // 10)):
        hexapod.set_gait(robot, world.time)
        world.step(10)
    snap = world.checkpoint()
    chunks = max(1, min(args.steps, args.env_steps // n_envs) // 10)
    rates = []
    for _ in range(args.repeats):
        world.restore(snap)
        ti.sync()
        t = time.perf_counter()
        for _k in range(chunks):
            hexapod.set_gait(robot, world.time)
            world.step(10)
        ti.sync()
        rates.append(n_envs * 10 * chunks / (time.perf_counter() - t))
    rate = statistics.median(rates)
    return {"scene": "hexapod", "mode": "row", "n_envs": n_envs, "n_plates": world._model.n_plates, "dt": DT,
            "timed_steps": 10 * chunks, "first_step_s": first, "env_steps_per_s": rate, "env_steps_per_s_all": rates,
            "real_time_factor": rate * DT}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--steps", type=int, default=1000, help="most timed steps per round (whole steps)")
    p.add_argument("--env-steps", type=int, default=20000, help="timed env-steps per round (whole steps)")
    p.add_argument("--repeats", type=int, default=5, help="rounds")
    p.add_argument("--stage-calls", type=int, default=50, help="calls per round (plate forces)")
    p.add_argument("--warmup", type=int, default=50, help="untimed steps before the rounds (whole steps)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import taichi_terra as tt
    from taichi_terra.backend import cpu_threads

    tt.init("cpu", "f64")
    threads = cpu_threads()
    print(f"cpu, f64, {threads} Taichi threads, numpy {np.__version__}", flush=True)
    forces = []
    for scene in ("12288", "6x500"):
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
                  f"{r['n_plates']}), "
                  f"{r['timed_steps']} steps/round, first step {r['first_step_s']:.1f} s", flush=True)
    hexapods = []
    for n in sorted({1, max(args.envs)}):
        r = bench_hexapod(n, args)
        hexapods.append(r)
        print(f"hexapod (row, {r['n_plates']} plates per env) {n:5d} envs: {r['env_steps_per_s']:10,.0f} "
              f"env-steps/s (real time x{r['real_time_factor']:,.1f}), {r['timed_steps']} steps/round, "
              f"first step {r['first_step_s']:.1f} s", flush=True)
    result = {"threads": threads, "precision": "f64", "forces": forces, "steps": steps, "hexapod": hexapods}
    out = args.out or os.path.join(os.path.dirname(__file__), "results", "rft.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    main()
