"""Deformable terrain: a 20 kg, 0.4 x 0.6 m body settling on a soil bed, and the per-point contact law on its own.

    python -m perf soil [--body rigid|articulated|pinned|multilink] [--start warm|cold]
                        [--material linear|nonlinear] [--steps 500] [--repeats 3]
    python -m perf soil --contact-law [--start warm|cold] [--material ...] [--steps 10000]

Plate mode (scene ``soil_bed``): a 1.2 m bed of 103 x 103 samples (1.18 cm spacing, 1,734 samples under the
plate), the body released touching the surface and loaded quasistatically (damping above critical). ``--body``
picks the body (``perf/scenes/soil_bodies.py``): the free plate, the plate as the root of a 60-DOF system, the
plate with eight pinned weights, or a 64-DOF body on four pads; each is 20 kg on 0.24 m^2, so each has the same
analytic sinkage. Reports the step rate and ms per step, the soil quadrature points solved per second (loaded
points x sweeps x steps / s), Gauss-Seidel sweeps per step, and the error of the final sinkage against
s = (m g / (A kphi))^(1/n). The rounds continue from one another (the plate keeps settling), each sampling the
sweeps every 10 steps. Contact-law mode: 32 point contacts with changing loads and slip speeds (fresh, partly
and fully mobilized shear) solved by the row function alone; after each timed run it checks normal pressure,
shear feasibility, tangential alignment and dissipation. Timing uses one CPU thread (``--threads``).
"""
from __future__ import annotations

import time

import numpy as np

from .. import scenes
from ..scenes import soil_bodies
from ..scenes.soil import MATERIALS
from ..scenes.soil_bodies import MASS, SX, SY
from ..timing import first_step, median
from . import init_backend

G = 9.81
SMOKE = ["--steps", "10", "--repeats", "1", "--warmup", "2"]


def OUT(args):
    """soil_<mode>_<body>_<start>_<material>.json"""
    mode = "contact_law" if args.contact_law else "plate"
    return f"soil_{mode}_{args.body}_{args.start}_{args.material}.json"


def add_arguments(p) -> None:
    p.add_argument("--start", default="warm", choices=["warm", "cold"])
    p.add_argument("--body", default="rigid", choices=list(soil_bodies.KINDS),
                   help="plate mode: what settles on the bed (perf/scenes/soil_bodies.py)")
    p.add_argument("--material", default="nonlinear", choices=list(MATERIALS))
    p.add_argument("--contact-law", action="store_true")
    p.add_argument("--steps", type=int, default=None, help="default 500 (contact law: 10000)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1500, help="plate mode: steps before timing (settling)")
    p.add_argument("--threads", type=int, default=1)


def run_plate(args) -> dict:
    import taichi as ti

    built = scenes.build("soil_bed", 1, body=args.body, kind=args.material, start=args.start)
    world, bed, sinkage, mat = (built.world, built.parts["bed"], built.parts["sinkage"], built.parts["material"])
    first = first_step(world)
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
        points.append(bed.get_soil_step_stats(0)["contacts"])
    expected = (MASS * G / (SX * SY * mat.bekker_kphi)) ** (1.0 / mat.sinkage_exponent)
    sink = sinkage(0)
    rate, sw = median(rates), median(sweeps)
    return {"mode": "plate", "body": args.body, "dof": soil_bodies.dof(world), "start": args.start,
            "material": args.material, "first_step_s": first, "steps_per_s_median": rate, "ms_per_step": 1e3 / rate,
            "sweeps_per_step": sw, "quadrature_points": int(np.median(points)),
            "loaded_area_m2": bed.get_soil_step_stats(0)["contact_area"],
            "points_solved_per_s": rate * sw * np.median(points), "sinkage_m": sink, "expected_sinkage_m": expected,
            "sinkage_rel_error": sink / expected - 1.0}


def run_contact_law(args) -> dict:
    import taichi as ti

    from ..scenes.soil import material
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
            "point_solves_per_s_median": median(rates), "checks": checks, "checks_passed": ok}


def run(args) -> dict:
    import json

    if args.steps is None:
        args.steps = 10000 if args.contact_law else 500
    if args.steps < 10 or args.repeats < 1 or args.warmup < 0:
        raise SystemExit("--steps must be >= 10, --repeats >= 1, --warmup >= 0")
    init_backend("cpu", "f64", args.threads)
    result = run_contact_law(args) if args.contact_law else run_plate(args)
    print(json.dumps(result, indent=2, default=float), flush=True)
    return result
