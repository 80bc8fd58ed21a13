"""Planar contact world: one contact step of crowded pens and a robot pushing ten boxes, against IR-SIM.

    python -m perf planar [--quick] [--repeats 5] [--peer-repeats 5] [--steps 50] [--cold]

Every scene is a description of ``taichi_terra.reference_scenes`` (scenes ``planar_pen`` and ``planar_push``
build it); IR-SIM (perf/peers/irsim_peer.py) runs the same description in the same process.

1. Pen scenes: N passive circles or squares (N = 10, 50, 200 by default) dropped into a closed pen at 50 % fill
   with random overlaps. Timed: ONE ``world.step()`` (kinematic + contact step, then ``ti.sync()``) from the
   initial poses, for each n_envs (every env the same scene); a checkpoint taken before the step is restored
   between repeats, untimed. Reported: median ms per step, env-steps/s, the same step with ``iterations=1``
   (the cost of everything but the extra sweeps), the sweeps and contacts env 0 used, the largest displacement
   of a body, and the deepest overlap
   left after the step, measured here independently of the engine (circles exactly, polygons and wall segments
   by a separating-axis test, from the poses). IR-SIM: ``time_contact_step`` on the same scene (its contact
   resolution alone), its contacts and remaining overlap, and the ratio IR-SIM ms / our ms at n_envs = 1.
2. Push scene: a diff-drive robot pushes ten boxes into a wall. Timed: ``--steps`` steps from the start
   (restored between repeats), median env-steps/s for each n_envs; final x of the robot and the boxes in env 0
   next to IR-SIM's after as many ``env.step`` calls (``time_env_steps``), IR-SIM's ms per step and the ratio.
3. Compile time: the build and first step of the first world, printed separately (with ``--cold`` Taichi's
   offline cache starts empty, so this is real compilation rather than a cache load).

Targets: one step of 200 squares at least 100x faster than IR-SIM's contact step measured in the same run;
256 envs of the push scene at least 10,000 env-steps/s. JSON goes to perf/results/planar.json
(perf/results/planar_quick.json with ``--quick``).
"""
from __future__ import annotations

import itertools
import math
import os
import shutil
import tempfile
import time

import numpy as np

from taichi_terra.reference_scenes import pen_scene, push_scene

from .. import scenes
from ..timing import machine, median
from . import add_backend_arguments, init_backend

SMOKE = ["--quick", "--sizes", "10", "--shapes", "circle", "--envs", "1", "--repeats", "1", "--steps", "2",
         "--no-peers"]
OVERLAP_TOL = 1e-6  # m, a pair deeper than this counts as still overlapping (as in perf/peers/irsim_peer.py)
TARGET_SPEEDUP = 100.0  # 200 squares, one step, IR-SIM ms / ours ms
TARGET_PUSH_RATE = 10_000.0  # env-steps/s, push scene with 256 envs
TARGET_ENVS = 256
TARGET_SQUARES = 200


# -- overlaps, measured from the poses alone ---------------------------------------------------------------------

def _shapes(scene: dict, poses) -> list[tuple]:
    """World-frame shapes of the scene's bodies at ``poses`` ((n_bodies, 3): x, y, heading) and of its wall
    segments: ("circle", centre, r), ("poly", (k, 2) counter-clockwise vertices) or ("segment", (2, 2))."""
    out = []
    for body, (x, y, th) in zip(scene["bodies"], np.asarray(poses, dtype=np.float64)):
        if body["shape"] == "circle":
            out.append(("circle", np.array([x, y]), float(body["radius"])))
        else:
            w, h = 0.5 * body["width"], 0.5 * body["height"]
            local = np.array([(-w, -h), (w, -h), (w, h), (-w, h)])
            c, s = math.cos(th), math.sin(th)
            out.append(("poly", local @ np.array([[c, s], [-s, c]]) + np.array([x, y])))
    for wall in scene["walls"]:
        for p, q in itertools.pairwise(wall):
            if p != q:
                out.append(("segment", np.array([p, q], dtype=np.float64)))
    return out


def _axes(v: np.ndarray) -> np.ndarray:
    """Unit edge normals of a convex polygon (a segment: its one normal)."""
    edges = (np.roll(v, -1, axis=0) - v)[: 1 if len(v) == 2 else len(v)]
    n = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
    return n / np.linalg.norm(n, axis=1, keepdims=True)


def _sat(va: np.ndarray, vb: np.ndarray) -> float:
    """Penetration depth of two convex polygons or segments: the smallest overlap of their projections over
    every edge normal (negative: separated)."""
    axes = np.concatenate([_axes(va), _axes(vb)])
    pa, pb = va @ axes.T, vb @ axes.T
    return float(np.min(np.minimum(pa.max(0) - pb.min(0), pb.max(0) - pa.min(0))))


def _sat_circle(centre: np.ndarray, r: float, v: np.ndarray) -> float:
    """Penetration depth of a circle and a convex polygon or segment (axes: the edge normals and the direction
    to the nearest vertex)."""
    near = v[np.argmin(np.linalg.norm(v - centre, axis=1))] - centre
    axes = _axes(v)
    if np.linalg.norm(near) > 0.0:
        axes = np.concatenate([axes, (near / np.linalg.norm(near))[None]])
    pc, pv = centre @ axes.T, v @ axes.T
    return float(np.min(np.minimum(pc + r - pv.min(0), pv.max(0) - (pc - r))))


def _depth(a: tuple, b: tuple) -> float:
    if a[0] == "circle" and b[0] == "circle":
        return a[2] + b[2] - float(np.linalg.norm(a[1] - b[1]))
    if a[0] == "circle" or b[0] == "circle":
        c, v = (a, b) if a[0] == "circle" else (b, a)
        if v[0] == "segment":  # a segment's depth is the radius less the distance to the segment
            p, q = v[1]
            t = np.clip(np.dot(c[1] - p, q - p) / np.dot(q - p, q - p), 0.0, 1.0)
            return c[2] - float(np.linalg.norm(c[1] - (p + t * (q - p))))
        return _sat_circle(c[1], c[2], v[1])
    return _sat(a[1], b[1])


def overlap_report(scene: dict, poses) -> dict:
    """Overlaps left between the scene's bodies and walls at ``poses`` ((n_bodies, 3)), from the geometry alone.

    Candidate pairs are those within 1 cm by a shapely tree query (circles as shapely polygons); each candidate's
    depth is exact for circles and by the separating-axis test for polygons and wall segments. Wall-wall pairs
    are skipped. Also counts the bodies whose centre left a closed wall (a pen).

    Returns {"max_overlap_m": deepest overlap (0 if none), "n_overlapping": pairs deeper than 1e-6 m,
    "outside_pen": bodies outside a closed wall}."""
    import shapely

    shapes = _shapes(scene, poses)
    geoms = [shapely.Point(s[1]).buffer(s[2]) if s[0] == "circle" else
             shapely.Polygon(s[1]) if s[0] == "poly" else shapely.LineString(s[1]) for s in shapes]
    left, right = shapely.STRtree(geoms).query(geoms, predicate="dwithin", distance=0.01)
    depths = [_depth(shapes[i], shapes[j]) for i, j in zip(left.tolist(), right.tolist())
              if i < j and not (shapes[i][0] == "segment" and shapes[j][0] == "segment")]
    centres = [shapely.Point(float(x), float(y)) for x, y, _ in np.asarray(poses)]
    pens = [shapely.Polygon(w) for w in scene["walls"] if len(w) >= 4 and tuple(w[0]) == tuple(w[-1])]
    outside = sum(1 for c in centres if pens and not any(p.contains(c) for p in pens))
    return {"max_overlap_m": max([0.0, *depths]), "n_overlapping": sum(d > OVERLAP_TOL for d in depths),
            "outside_pen": outside}


# -- timing ------------------------------------------------------------------------------------------------------

def measure_world(scene: dict, name: str, n_envs: int, steps: int, repeats: int, **options) -> dict:
    """Build scene ``name`` (its description: ``scene``) in ``n_envs`` envs, time the build and the first step,
    then ``repeats`` runs of ``steps`` steps from the start. The world is left after its last timed run."""
    import taichi as ti

    from ..timing import first_step, round_rate

    t0 = time.perf_counter()
    world = scenes.build(name, n_envs, **options).world
    checkpoint = world.checkpoint()  # builds the world
    ti.sync()
    t1 = time.perf_counter()
    t2 = t1 + first_step(world)
    runs = [n_envs * steps / round_rate(world, checkpoint, steps) for _ in range(repeats)]
    med = median(runs)
    poses = world.get_poses()[:, len(scene["walls"]):]  # the bodies (the walls were added first)
    return {"world": world, "n_envs": n_envs, "build_s": t1 - t0, "first_step_s": t2 - t1,
            "ms_per_step": 1e3 * med / steps, "ms_per_step_all": [1e3 * r / steps for r in runs],
            "env_steps_per_s": n_envs * steps / med, "sweeps": int(world.get_sweeps(0)),
            "max_sweeps_any_env": int(np.max(world.get_sweeps())), "contacts": int(world.get_contacts(0).count[0]),
            "pairs": int(world.get_pair_count(0)), "pair_overflow": int(np.sum(world.get_pair_overflow())),
            "envs_differ_m": float(np.max(np.abs(poses - poses[:1]))), "poses_env0": poses[0]}  # bodies only


def _public(run: dict) -> dict:
    return {k: v for k, v in run.items() if k not in ("world", "poses_env0")}


def bench_pen(shapes, sizes, envs, fill, seed, repeats, peer_repeats, peers: bool, first: dict) -> list[dict]:
    from ..peers import irsim_peer

    rows = []
    for shape in shapes:
        for n in sizes:
            scene = pen_scene(n, shape, fill, seed)
            opts = {"n": n, "shape": shape, "fill": fill, "seed": seed}
            peer = None
            if peers:
                r = irsim_peer.time_contact_step(scene, peer_repeats)
                peer = {"ms": 1e3 * r["median_s"], "ms_all": [1e3 * s for s in r["all_s"]],
                        "contacts": r["n_contacts"], "max_overlap_m": r["max_overlap_after"],
                        "n_overlapping": r["n_overlapping"]}
            for n_envs in envs:
                run = measure_world(scene, "planar_pen", n_envs, 1, repeats, **opts)
                first.setdefault("run", run)
                one = measure_world(scene, "planar_pen", n_envs, 1, repeats, iterations=1, **opts)
                start = np.array([b["position"] for b in scene["bodies"]])
                row = {"shape": shape, "n": n, **_public(run), "ms_per_step_1_sweep": one["ms_per_step"],
                       "max_move_m": float(np.max(np.linalg.norm(run["poses_env0"][:, :2] - start, axis=1))),
                       **overlap_report(scene, run["poses_env0"])}
                if peer is not None:
                    # env-steps/s over IR-SIM's steps/s; at n_envs = 1 this is IR-SIM ms / our ms
                    row["vs_irsim_env_steps_per_s"] = run["env_steps_per_s"] * peer["ms"] / 1e3
                    if n_envs == 1:
                        row["irsim"] = peer
                        row["irsim_over_ours"] = peer["ms"] / run["ms_per_step"]
                rows.append(row)
    return rows


def bench_push(envs, steps, repeats, peer_repeats, peers: bool, first: dict) -> dict:
    from ..peers import irsim_peer

    scene = push_scene()
    out = {"steps": steps, "runs": []}
    for n_envs in envs:
        run = measure_world(scene, "planar_push", n_envs, steps, repeats)
        first.setdefault("run", run)
        row = _public(run)
        row["final_x_env0"] = run["poses_env0"][:, 0].tolist()
        row["final_pose_env0"] = run["poses_env0"].tolist()
        row.update(overlap_report(scene, run["poses_env0"]))
        out["runs"].append(row)
    if peers:
        r = irsim_peer.time_env_steps(scene, steps, peer_repeats)
        out["irsim"] = {"ms_per_step": 1e3 * r["median_s"], "ms_per_step_all": [1e3 * s for s in r["all_s"]],
                        "final_x": r["final_x"], "final_pose": r["final_pose"],
                        **overlap_report(scene, np.array(r["final_pose"]))}
        for row in out["runs"]:
            # env-steps/s over IR-SIM's steps/s; at n_envs = 1 this is IR-SIM ms / our ms per step
            row["vs_irsim_env_steps_per_s"] = row["env_steps_per_s"] * out["irsim"]["ms_per_step"] / 1e3
            row["final_x_minus_irsim_max_m"] = float(np.max(np.abs(np.array(row["final_x_env0"])
                                                                  - np.array(r["final_x"]))))
    return out


# -- printing ----------------------------------------------------------------------------------------------------

def _print_pen(rows: list[dict], fill: float, seed: int, repeats: int, peer_repeats: int) -> None:
    print(f"\nPen scenes (fill {fill}, seed {seed}): ONE step from the initial overlaps, median of {repeats} "
          f"(IR-SIM: its contact resolution, median of {peer_repeats})")
    print("                    --------------------------------- taichi_terra (env 0) ---------------------------------"
          "  ---------------- IR-SIM ----------------  ours/IR-SIM")
    print(" shape     N  envs    ms/step  1-sweep ms  env-steps/s  sweeps  contacts  max move m  max overlap m  >1e-6"
          "    ms/step  contacts  max overlap m  >1e-6  env-steps/s")
    for r in rows:
        line = (f"{r['shape']:>6s} {r['n']:>5d} {r['n_envs']:>5d} {r['ms_per_step']:>10.3f} "
                f"{r['ms_per_step_1_sweep']:>11.3f} {r['env_steps_per_s']:>12,.0f} {r['sweeps']:>7d} "
                f"{r['contacts']:>9d} {r['max_move_m']:>11.3f} {r['max_overlap_m']:>14.3e} {r['n_overlapping']:>6d}")
        p = r.get("irsim")
        line += (f" {p['ms']:>10.3f} {p['contacts']:>9d} {p['max_overlap_m']:>14.3e} {p['n_overlapping']:>6d}"
                 if p else " " * 42)
        if "vs_irsim_env_steps_per_s" in r:
            line += f" {r['vs_irsim_env_steps_per_s']:>11.1f}x"
        print(line)
    print("  ms/step: one step of all envs; 1-sweep ms: the same world with iterations=1 (everything but the extra"
          " sweeps);\n  max move: largest displacement of a body; max overlap, >1e-6: deepest pair left and pairs"
          " deeper than 1e-6 m (ours: from the\n  poses by this module; IR-SIM's: its own minimum translation,"
          " which gives the same depths on the same poses);\n  ours/IR-SIM at 1 env = IR-SIM ms / our ms.")
    odd = [r for r in rows if r["pair_overflow"] or r["outside_pen"] or r["envs_differ_m"] > 0.0]
    for r in odd:
        print(f"  note: {r['shape']} N={r['n']} envs={r['n_envs']}: pair overflow {r['pair_overflow']}, bodies "
              f"outside the pen {r['outside_pen']}, envs differ from env 0 by {r['envs_differ_m']:.3e} m")


def _print_push(push: dict, repeats: int, peer_repeats: int) -> None:
    steps = push["steps"]
    print(f"\nPush scene (robot pushes ten boxes into a wall): {steps} steps from the start, median of {repeats} "
          f"(IR-SIM: median of {peer_repeats})")
    print(" engine         envs    ms/step   env-steps/s  sweeps(last)  max overlap m  >1e-6  ours/IR-SIM env-steps/s")
    for r in push["runs"]:
        ratio = f"{r['vs_irsim_env_steps_per_s']:>23.1f}x" if "vs_irsim_env_steps_per_s" in r else ""
        print(f" taichi_terra {r['n_envs']:>6d} {r['ms_per_step']:>10.3f} {r['env_steps_per_s']:>13,.0f} "
              f"{r['sweeps']:>13d} {r['max_overlap_m']:>14.3e} {r['n_overlapping']:>6d} {ratio}")
    p = push.get("irsim")
    if p is not None:
        print(f" IR-SIM       {1:>6d} {p['ms_per_step']:>10.3f} {1e3 / p['ms_per_step']:>13,.0f} {'':>13s} "
              f"{p['max_overlap_m']:>14.3e} {p['n_overlapping']:>6d}")
    print(f" final x of env 0 after {steps} steps [m]: robot, box 0 .. box 9")
    ours = push["runs"][0]
    print(" taichi_terra  " + " ".join(f"{x:7.4f}" for x in ours["final_x_env0"]))
    if p is not None:
        print(" IR-SIM        " + " ".join(f"{x:7.4f}" for x in p["final_x"]))
        diff = np.array(ours["final_x_env0"]) - np.array(p["final_x"])
        print(" difference    " + " ".join(f"{x:7.4f}" for x in diff))
    for r in push["runs"]:
        if r["pair_overflow"] or r["outside_pen"] or r["envs_differ_m"] > 0.0:
            print(f"  note: envs={r['n_envs']}: pair overflow {r['pair_overflow']}, bodies outside the pen "
                  f"{r['outside_pen']}, envs differ from env 0 by {r['envs_differ_m']:.3e} m")


def _targets(pen_rows: list[dict], push: dict) -> dict:
    out = {}
    sq = [r for r in pen_rows if r["shape"] == "square" and r["n"] == TARGET_SQUARES and r["n_envs"] == 1
          and "irsim" in r]
    if sq:
        r = sq[0]
        out["speedup_200_squares"] = {"target": TARGET_SPEEDUP, "measured": r["irsim_over_ours"],
                                      "ours_ms": r["ms_per_step"], "irsim_ms": r["irsim"]["ms"],
                                      "met": r["irsim_over_ours"] >= TARGET_SPEEDUP}
    runs = [r for r in push["runs"] if r["n_envs"] == TARGET_ENVS]
    if runs:
        r = runs[0]
        out["push_256_envs"] = {"target": TARGET_PUSH_RATE, "measured": r["env_steps_per_s"],
                                "met": r["env_steps_per_s"] >= TARGET_PUSH_RATE}
    return out


def _print_targets(targets: dict) -> None:
    print("\nTargets")
    t = targets.get("speedup_200_squares")
    if t:
        print(f"  one step of {TARGET_SQUARES} squares >= {t['target']:.0f}x faster than IR-SIM: "
              f"{t['measured']:.1f}x ({t['ours_ms']:.3f} ms vs IR-SIM {t['irsim_ms']:.3f} ms) -> "
              f"{'MET' if t['met'] else 'MISSED'}")
    else:
        print(f"  one step of {TARGET_SQUARES} squares vs IR-SIM: not measured (needs square, N={TARGET_SQUARES}, "
              f"envs 1 and IR-SIM)")
    t = targets.get("push_256_envs")
    if t:
        print(f"  push scene, {TARGET_ENVS} envs >= {t['target']:,.0f} env-steps/s: {t['measured']:,.0f} env-steps/s"
              f" -> {'MET' if t['met'] else 'MISSED'}")
    else:
        print(f"  push scene, {TARGET_ENVS} envs: not measured")


# -- the mode ----------------------------------------------------------------------------------------------------

def OUT(args):
    """planar.json, planar_quick.json with --quick"""
    return "planar_quick.json" if args.quick else "planar.json"


def add_arguments(parser) -> None:
    add_backend_arguments(parser)
    parser.add_argument("--quick", action="store_true",
                        help="short run: N = 10 and 200, 2 repeats, 1 IR-SIM repeat, 20 push steps")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats of ours (default 5, quick 2)")
    parser.add_argument("--peer-repeats", type=int, default=None,
                        help="timed repeats of IR-SIM (default: --repeats, quick 1)")
    parser.add_argument("--steps", type=int, default=None, help="push scene steps per run (default 50, quick 20)")
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 256])
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="pen N (default 10 50 200)")
    parser.add_argument("--shapes", nargs="+", default=["circle", "square"], choices=["circle", "square"])
    parser.add_argument("--fill", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-peers", action="store_true", help="skip IR-SIM even when installed")
    parser.add_argument("--cold", action="store_true",
                        help="use an emptied offline cache (<tmp>/ticache_bench_planar), so the compile time is "
                             "real compilation")


def run(args) -> dict:
    repeats = args.repeats or (2 if args.quick else 5)
    peer_repeats = args.peer_repeats or (1 if args.quick else repeats)
    steps = args.steps or (20 if args.quick else 50)
    sizes = args.sizes or ([10, 200] if args.quick else [10, 50, 200])
    if min(args.envs) < 1 or min(sizes) < 1 or min(repeats, peer_repeats, steps) < 1:
        raise SystemExit("--envs, --sizes, --repeats, --peer-repeats and --steps must be >= 1")
    if args.cold:
        # a cache of this benchmark's own, emptied now (Taichi writes it when the process ends, so it stays)
        cache_dir = os.path.join(tempfile.gettempdir(), "ticache_bench_planar")
        shutil.rmtree(cache_dir, ignore_errors=True)
        os.environ["TI_OFFLINE_CACHE_FILE_PATH"] = cache_dir
    import taichi as ti

    t0 = time.perf_counter()
    cfg = init_backend(args.arch, args.precision, args.threads)
    init_s = time.perf_counter() - t0
    precision = cfg["precision"]

    from ..peers import irsim_peer

    peers = not args.no_peers and irsim_peer.irsim_available()
    irsim_version = None
    if peers:
        from importlib.metadata import version

        irsim_version = version("ir-sim")
    print(f"taichi {'.'.join(map(str, ti.__version__))}, arch {args.arch}, {precision}, threads "
          f"{args.threads or os.cpu_count()}; IR-SIM {irsim_version or 'not run'}")

    first: dict = {}
    pen = bench_pen(args.shapes, sizes, args.envs, args.fill, args.seed, repeats, peer_repeats, peers, first)
    push = bench_push(args.envs, steps, repeats, peer_repeats, peers, first)
    targets = _targets(pen, push)
    compile_s = first["run"]["build_s"] + first["run"]["first_step_s"]

    _print_pen(pen, args.fill, args.seed, repeats, peer_repeats)
    _print_push(push, repeats, peer_repeats)
    cache = "empty offline cache (--cold)" if args.cold else "offline cache as found"
    print(f"\nCompile (build and first step of the first world, {cache}): {compile_s:.2f} s "
          f"(build {first['run']['build_s']:.2f} s, first step {first['run']['first_step_s']:.2f} s); "
          f"tt.init {init_s:.2f} s")
    _print_targets(targets)
    return {"arch": args.arch, "precision": precision, "threads": args.threads, "init_s": init_s,
            "machine": machine(), "taichi": ".".join(map(str, ti.__version__)), "irsim": irsim_version,
            "quick": args.quick, "cold_cache": args.cold, "repeats": repeats, "peer_repeats": peer_repeats,
            "fill": args.fill, "seed": args.seed, "compile_s": compile_s, "compile_build_s": first["run"]["build_s"],
            "compile_first_step_s": first["run"]["first_step_s"], "pen": pen, "push": push, "targets": targets}
