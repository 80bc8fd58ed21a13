"""Deformable terrain benchmark: a 20 kg, 0.4 x 0.6 m plate settling on a soil bed, and the per-point
contact law on its own.

    python -m perf.bench_soil [--body rigid|articulated|pinned|multilink] [--start warm|cold]
                              [--material linear|nonlinear] [--steps 500] [--repeats 5]
    python -m perf.bench_soil --contact-law [--start warm|cold] [--material ...] [--steps 10000]

Plate mode: a 1.2 m bed of 103 x 103 samples (1.18 cm spacing, 1,734 samples under the plate), the
plate released touching the surface and loaded quasistatically (damping above critical). ``--body`` picks
the body (``perf/soil_bodies.py``): the free plate, the plate as the root of a 60-DOF system, the plate
with eight pinned weights, or a 64-DOF body on four pads; each is 20 kg on 0.24 m^2, so each has the same
analytic sinkage. Reports the step
rate and ms per step, the soil quadrature points solved per second (loaded points x sweeps x steps / s),
Gauss-Seidel sweeps per step, and the error of the final sinkage against s = (m g / (A kphi))^(1/n).
Contact-law mode: 32 point contacts with changing loads and slip speeds (fresh, partly and fully
mobilized shear) solved by the row function alone; after each timed run it checks normal pressure,
shear feasibility, tangential alignment and dissipation. Timing uses one CPU thread. JSON goes to
perf/results/soil_<mode>.json.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

from . import soil_bodies
from .soil_bodies import MASS, SX, SY

G = 9.81


def material(kind: str):
    import taichi_terra as tt

    if kind == "linear":
        return tt.SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, damping=3e4)
    return tt.SoilMaterial(bekker_kphi=2e5, sinkage_exponent=1.1, damping=3e4)


def run_plate(args) -> dict:
    import taichi as ti

    import taichi_terra as tt

    mat = material(args.material)
    n = 103  # spacing 1.2 / 102 m: the plate spans 34 x 51 spacings
    dx = 1.2 / (n - 1)
    world = tt.World(dt=1e-3)
    world.solver.terrain_warm_start = args.start == "warm"
    bed = world.add_deformable_terrain(n, n, 1.2, 1.2, 0.0, 0.0, np.zeros(n * n), mat)
    sinkage = soil_bodies.build(args.body, world, (0.5 * dx, 0.5 * dx))  # (plate x edges midway between samples)
    t0 = time.perf_counter()
    world.step()
    ti.sync()
    first = time.perf_counter() - t0
    world.step(args.warmup)
    rates, sweeps, points = [], [], []
    for _ in range(args.repeats):
        used = []
        t = time.perf_counter()
        for _ in range(args.steps // 10):  # sample the sweep count every 10 steps (outside the timed kernel)
            world.step(10)
            used.append(world.get_solver_sweeps(0))
        ti.sync()
        rates.append(10 * (args.steps // 10) / (time.perf_counter() - t))
        sweeps.append(float(np.mean(used)))
        stats = bed.get_soil_step_stats(0)
        points.append(stats["contacts"])
    expected = (MASS * G / (SX * SY * mat.bekker_kphi)) ** (1.0 / mat.sinkage_exponent)
    sink = sinkage(0)
    rate = statistics.median(rates)
    sw = statistics.median(sweeps)
    loaded = bed.get_soil_step_stats(0)
    return {"mode": "plate", "body": args.body, "dof": soil_bodies.dof(world),
            "start": args.start, "material": args.material, "first_step_s": first,
            "steps_per_s_median": rate, "ms_per_step": 1e3 / rate, "sweeps_per_step": sw,
            "quadrature_points": int(np.median(points)), "loaded_area_m2": loaded["contact_area"],
            "points_solved_per_s": rate * sw * np.median(points),
            "sinkage_m": sink, "expected_sinkage_m": expected, "sinkage_rel_error": sink / expected - 1.0}


def run_contact_law(args) -> dict:
    import taichi as ti

    from .soil_law_kernel import contact_law_run

    mat = material(args.material)
    mat_arr = ti.ndarray(ti.types.vector(8, ti.f64), (1,))
    mat_arr.from_numpy(mat.as_array()[None, :])
    out = ti.ndarray(ti.f64, (32, 8))
    contact_law_run(8, 1, mat_arr, out)  # compile
    rates = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        contact_law_run(args.steps, int(args.start == "warm"), mat_arr, out)
        ti.sync()
        rates.append(3 * 32 * args.steps / (time.perf_counter() - t))  # 3 row solves per point per step
    res = out.to_numpy()
    # columns: pressure residual, max strength excess, alignment error, dissipation (<= 0 is correct), ...
    checks = {"max_normal_residual": float(res[:, 0].max()), "max_shear_excess": float(res[:, 1].max()),
              "max_alignment_error": float(res[:, 2].max()), "max_power_into_body": float(res[:, 3].max()),
              "fresh": int(res[:, 4].sum()), "partial": int(res[:, 5].sum()), "full": int(res[:, 6].sum())}
    ok = (checks["max_normal_residual"] < 1e-9 and checks["max_shear_excess"] < 1e-9
          and checks["max_alignment_error"] < 1e-9 and checks["max_power_into_body"] <= 1e-12)
    return {"mode": "contact_law", "start": args.start, "material": args.material,
            "point_solves_per_s_median": statistics.median(rates), "checks": checks, "checks_passed": ok}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", default="warm", choices=["warm", "cold"])
    parser.add_argument("--body", default="rigid", choices=list(soil_bodies.KINDS),
                        help="plate mode: what settles on the bed (perf/soil_bodies.py)")
    parser.add_argument("--material", default="nonlinear", choices=["linear", "nonlinear"])
    parser.add_argument("--contact-law", action="store_true")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1500, help="plate mode: steps before timing (settling)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.steps is None:
        args.steps = 10000 if args.contact_law else 500
    if args.steps < 10 or args.repeats < 1 or args.warmup < 0:
        parser.error("--steps must be >= 10, --repeats >= 1, --warmup >= 0")

    import taichi_terra as tt

    tt.init(arch="cpu", precision="f64", threads=1)
    result = run_contact_law(args) if args.contact_law else run_plate(args)
    print(json.dumps(result, indent=2, default=float))
    out = args.out or os.path.join(os.path.dirname(__file__), "results",
                                   f"soil_{result['mode']}_{args.body}_{args.start}_{args.material}.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=2, default=float)
    return result


if __name__ == "__main__":
    main()
