"""IR-SIM peer: the planar scenes (taichi_terra/reference_scenes.py) in IR-SIM's contact solver.

The reference is ``irsim.lib.algorithm.contact.contact_step`` (ir-sim 2.12.0), the
position-based contact resolution of ``collision_mode: contact``. SI units: m, kg, s, rad.

Scene -> IR-SIM YAML (written to a temporary folder and read by ``irsim.make``):
  * world: ``step_time`` = dt, ``gravity``, ``collision_mode: contact``, ``drive_tau: 0``,
    ``friction: 0.5`` (the default; only walls use it, the description gives them none);
  * driven body -> ``robot``, ``kinematics: {name: diff, tau: 0}``, ``mass``,
    ``friction``, ``vel_max`` / ``vel_min`` wide enough for its command;
  * passive body -> ``obstacle`` without ``kinematics`` and with a finite ``mass``,
    which IR-SIM makes a pushable passive body;
  * wall -> one ``obstacle`` per wall segment (``split_walls``), ``shape: {name:
    linestring, vertices}`` and no mass, hence infinite mass and static;
  * shapes ``{name: circle, radius}`` and ``{name: rectangle, length: width, width:
    height}`` (IR-SIM's ``length`` is along the body x axis); ``state: [x, y, angle]``;
    objects are named ``body_i`` (description order) and ``wall_k``.
The environment is headless (no figure, window, animation or log file). A robot's
speed change per step is capped at ``friction * gravity * dt`` (``_drive_response``):
0.98 m/s with friction 1.0 and dt 0.1 s, so the push robot reaches its 0.5 m/s
command in the first step; ``tau = 0`` and the default unbounded ``acce`` add no lag.

Two properties of IR-SIM's contact step shape the results:
  * Pairs are swept outward from immovable objects, ranked by graph distance over
    the candidate pairs (from bounding boxes). A closed pen kept as one line string
    bounds everything, so every body ranks next to an immovable object and the
    order is lost: in the push scene the row is then blocked from both ends and
    boxes pass through one another at the wall. Split walls (same geometry) keep it.
  * Candidates are fixed before the sweeps: bounding boxes grown by
    ``_contact_margin`` (2 * fastest speed * dt + 1e-6 m). A body that a deep
    initial overlap pushes into one it was not near stays overlapping that step.

``irsim`` is imported lazily: this module imports fine without it.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import statistics
import tempfile
import time

OVERLAP_TOL = 1e-6   # m, depth above which a pair counts as still overlapping


def irsim_available() -> bool:
    """True when the ``irsim`` package can be imported."""
    try:
        _irsim()
    except ImportError:
        return False
    return True


def _irsim():
    """Import irsim, hiding the matplotlib backend probing it prints on import."""
    with contextlib.redirect_stdout(io.StringIO()):
        import irsim
    return irsim


def _shape(body: dict) -> dict:
    if body["shape"] == "circle":
        return {"name": "circle", "radius": float(body["radius"])}
    if body["shape"] == "rectangle":
        return {"name": "rectangle", "length": float(body["width"]),
                "width": float(body["height"])}
    raise ValueError(f"unknown shape {body['shape']!r}")


def _walls(scene: dict, split_walls: bool) -> list[list[tuple[float, float]]]:
    """The scene's wall line strings (m), each segment on its own when ``split_walls``."""
    if not split_walls:
        return [list(wall) for wall in scene["walls"]]
    return [[wall[i], wall[i + 1]] for wall in scene["walls"] for i in range(len(wall) - 1)]


def _config(scene: dict, split_walls: bool) -> dict:
    """The IR-SIM YAML configuration of ``scene`` as a plain dict."""
    robots, obstacles = [], []
    for i, body in enumerate(scene["bodies"]):
        x, y = body["position"]
        entry = {"name": f"body_{i}", "shape": _shape(body),
                 "state": [float(x), float(y), float(body["angle"])],
                 "mass": float(body["mass"]), "friction": float(body["friction"])}
        if body["kind"] == "driven":
            if body.get("kinematics", "diff") != "diff":
                raise ValueError("only diff-drive robots are supported")
            v, w = (abs(float(c)) for c in body["command"])
            entry.update(kinematics={"name": "diff", "tau": 0.0},
                         vel_max=[max(1.0, v), max(1.0, w)],
                         vel_min=[-max(1.0, v), -max(1.0, w)])
            robots.append(entry)
        else:
            obstacles.append(entry)
    for k, wall in enumerate(_walls(scene, split_walls)):
        obstacles.append({"name": f"wall_{k}", "state": [0.0, 0.0, 0.0],
                          "shape": {"name": "linestring",
                                    "vertices": [[float(x), float(y)] for x, y in wall]}})
    world = {"step_time": float(scene["dt"]), "gravity": float(scene["gravity"]),
             "collision_mode": "contact", "friction": 0.5, "drive_tau": 0.0}
    return {"world": world, "robot": robots, "obstacle": obstacles}


def _objects(env, scene: dict) -> list:
    """IR-SIM objects of the scene's bodies, in description order."""
    return [env.get_object_by_name(f"body_{i}") for i in range(len(scene["bodies"]))]


def _check(env, scene: dict, split_walls: bool) -> None:
    """Raise unless IR-SIM holds the world and bodies exactly as described."""
    wp = env._world_param
    ok = (wp.collision_mode == "contact" and wp.step_time == scene["dt"]
          and wp.gravity == scene["gravity"])
    for body, obj in zip(scene["bodies"], _objects(env, scene)):
        ok &= obj.mass == body["mass"] and obj.friction == body["friction"]
        ok &= obj.pushable and obj.passive == (body["kind"] == "passive")
        if not obj.passive:
            ok &= obj.drive_tau == 0.0 and all(math.isinf(a) for a in obj.info.acce.flat)
    for k in range(len(_walls(scene, split_walls))):
        ok &= env.get_object_by_name(f"wall_{k}").inv_mass == 0.0
    if not ok:
        raise RuntimeError("IR-SIM scene does not match its description")


def build_env(scene: dict, *, split_walls: bool = True):
    """A headless IR-SIM environment (``collision_mode: contact``) of ``scene``.

    The scene's YAML is written to a temporary folder, read, and removed; see the
    module docstring for the mapping. Masses, frictions and drive settings are
    checked against the description after the build. ``split_walls`` makes each
    wall segment its own line string obstacle (same geometry; see the module
    docstring for why that is the default).
    """
    import yaml

    irsim = _irsim()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "planar_scene.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(_config(scene, split_walls), f, sort_keys=False)
        env = irsim.make(path, display=False, headless=True, save_ani=False,
                         log_file=None, log_level="ERROR")
    _check(env, scene, split_walls)
    return env


def overlaps(env) -> list[float]:
    """Depths (m) of every overlapping object pair, deepest first.

    Pairs within 1 cm by shapely (which draws circles as polygons) are candidates;
    the depth is IR-SIM's own exact minimum translation (``object_mtv``, circles
    exact, walls as segments). Pairs of two immovable objects are skipped.
    """
    import shapely
    from irsim.lib.algorithm.contact import object_mtv

    objs = env.objects
    geoms = [obj.geometry for obj in objs]
    left, right = shapely.STRtree(geoms).query(geoms, predicate="dwithin", distance=0.01)
    depths = []
    for i, j in zip(left.tolist(), right.tolist()):
        if i >= j or (objs[i].inv_mass <= 0 and objs[j].inv_mass <= 0):
            continue
        mtv = object_mtv(objs[i], objs[j])
        if mtv is not None and mtv[1] > 0.0:
            depths.append(float(mtv[1]))
    return sorted(depths, reverse=True)


def time_contact_step(scene: dict, repeats: int = 5, *, split_walls: bool = True) -> dict:
    """Seconds of one IR-SIM contact resolution from the scene's initial poses.

    Times what ``EnvBase._contact_step`` spends on the contacts: the margin
    (``_contact_margin``), the candidate pairs (``_contact_candidates``, a
    bounding-box query of the geometry tree) and ``contact_step(pairs,
    margin=margin, step_time=dt)`` (at most 32 Gauss-Seidel sweeps). Not timed:
    restoring the initial states before each repeat, and the geometry-tree
    rebuild and contact-sensor bookkeeping that ``_contact_step`` does around it.
    Pairs that only meet after the correction are not candidates (module docstring).

    Returns:
        {"median_s": s, "all_s": [s, ...], "n_contacts": contacts the last step
        reported, "max_overlap_after": deepest remaining overlap (m, 0 if none),
        "n_overlapping": pairs still deeper than 1e-6 m}.
    """
    from irsim.lib.algorithm.contact import contact_step

    env = build_env(scene, split_walls=split_walls)
    times, contacts = [], []
    for _ in range(repeats):
        for obj in env.objects:  # initial state and velocity, contact sensor cleared
            obj.reset()
            obj.refresh(sensor_step=False)
        env.build_tree()
        start = time.perf_counter()
        margin = env._contact_margin()
        pairs = env._contact_candidates(margin)
        contacts = contact_step(pairs, margin=margin, step_time=env.step_time)
        times.append(time.perf_counter() - start)
    depths = overlaps(env)
    env.end(ending_time=0.0)
    return {"median_s": statistics.median(times), "all_s": times,
            "n_contacts": len(contacts),
            "max_overlap_after": depths[0] if depths else 0.0,
            "n_overlapping": sum(d > OVERLAP_TOL for d in depths)}


def time_env_steps(scene: dict, steps: int = 50, repeats: int = 3, *,
                   split_walls: bool = True) -> dict:
    """Seconds per ``env.step`` with every driven body following its command.

    Each repeat resets the environment (not timed) and runs ``steps`` steps,
    passing ``{name: [v, omega]}`` for the driven bodies; passive bodies coast.

    Returns:
        {"median_s": median over repeats of the mean seconds per step,
        "all_s": those means, "steps": steps, "final_x": x (m) of every body in
        description order after the last repeat, "final_pose": [(x, y, angle)],
        "driven_x": x of the driven bodies, "passive_x": x of the passive ones}.
    """
    env = build_env(scene, split_walls=split_walls)
    objs = _objects(env, scene)
    action = {obj.name: [float(c) for c in body["command"]]
              for body, obj in zip(scene["bodies"], objs) if body["kind"] == "driven"}
    means = []
    for _ in range(repeats):
        env.reset()
        start = time.perf_counter()
        for _ in range(steps):
            env.step(action)
        means.append((time.perf_counter() - start) / steps)
    poses = [tuple(float(v) for v in obj.state[:3, 0]) for obj in objs]
    env.end(ending_time=0.0)
    x = {kind: [p[0] for p, body in zip(poses, scene["bodies"]) if body["kind"] == kind]
         for kind in ("driven", "passive")}
    return {"median_s": statistics.median(means), "all_s": means, "steps": steps,
            "final_x": [p[0] for p in poses], "final_pose": poses,
            "driven_x": x["driven"], "passive_x": x["passive"]}


if __name__ == "__main__":
    from taichi_terra.reference_scenes import pen_scene, push_scene

    if not irsim_available():
        raise SystemExit("irsim is not installed: pip install ir-sim==2.12.0")
    print("IR-SIM contact step, pen scenes (fill 0.5, seed 0)\n"
          "  shape    n  median ms  contacts  max overlap m  pairs > 1e-6 m")
    for shape, n in [(shape, n) for shape in ("circle", "square") for n in (10, 50, 200)]:
        r = time_contact_step(pen_scene(n, shape))
        print(f"{shape:>7} {n:>4} {1e3 * r['median_s']:>10.3f} {r['n_contacts']:>9} "
              f"{r['max_overlap_after']:>14.3e} {r['n_overlapping']:>15}")
    for split in (True, False):
        r = time_env_steps(push_scene(), split_walls=split)
        walls = "walls split into segments" if split else "pen kept as one line string"
        print(f"IR-SIM push scene, {walls}: {1e3 * r['median_s']:.3f} ms per env.step "
              f"({r['steps']} steps, median of {len(r['all_s'])})\n"
              f"  robot x: {' '.join(f'{x:.4f}' for x in r['driven_x'])}\n"
              f"  box x:   {' '.join(f'{x:.4f}' for x in r['passive_x'])}")
