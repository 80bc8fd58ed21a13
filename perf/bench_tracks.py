"""Tracked robots: the templated robot of ``spec/tracks.md`` (two side tracks, two flipper tracks) on a
height map, for several env counts, and what its belt rows cost against plain rigid rows.

    python -m perf.bench_tracks [--envs 1 64 1024] [--steps 300] [--repeats 3]

Cases (each timed by ``perf.bench_articulated.measure``: the first step, then ``--repeats`` rounds of the
same ``--steps`` steps from one state after ``--warmup``, medians, sweeps per step):

* ``tracked_driving``: sprockets velocity-controlled at 4 rad/s over gentle ridges (0.02 m, 3 m long);
* ``tracked_standing``: the same robot holding its sprockets still (velocity target 0);
* ``plain_standing``: the same robot with its belts' shapes as ordinary collision shapes of their links
  (no ``<track>``: contacts are plain rigid rows on the links, none merged, none pushing a drive), holding
  its sprockets still. Against ``tracked_standing`` this is the cost of belt rows on the same geometry.

JSON goes to perf/results/tracks.json.
"""
import argparse
import json
import math
import os

import numpy as np

from .bench_articulated import _tree_only_kernel, measure

SPROCKET_SPEED = 4.0  # [rad/s]


def _rpy(r: np.ndarray) -> tuple:
    """URDF roll, pitch, yaw of rotation ``r`` (``r = Rz(yaw) Ry(pitch) Rx(roll)``)."""
    pitch = math.asin(-max(-1.0, min(1.0, r[2, 0])))
    return math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])


def plain_urdf(urdf: str) -> str:
    """``urdf`` with every ``<track>`` removed and its belt's shapes added to its link as ``<collision>``."""
    import xml.etree.ElementTree as ET

    from taichi_terra.bodies.urdf import parse_urdf

    tracks = parse_urdf(urdf).tracks
    root = ET.fromstring(urdf)
    for elem in root.findall("track"):
        root.remove(elem)
    links = {link.get("name"): link for link in root.findall("link")}
    for track in tracks:
        for shape in track.shapes:
            col = ET.SubElement(links[track.link], "collision")
            r, p, y = _rpy(shape.rotation)
            ET.SubElement(col, "origin", xyz=" ".join(map(repr, map(float, shape.position))), rpy=f"{r!r} {p!r} {y!r}")
            geom = ET.SubElement(col, "geometry")
            if shape.kind == "box":
                ET.SubElement(geom, "box", size=" ".join(map(repr, map(float, shape.params))))
            else:
                ET.SubElement(geom, "cylinder", radius=repr(float(shape.params[0])),
                              length=repr(float(shape.params[1])))
    return ET.tostring(root, encoding="unicode")


def tracked_world(n_envs: int, *, speed: float = SPROCKET_SPEED, plain: bool = False):
    import taichi_terra as tt
    from taichi_terra.bodies.tracked_robot import drive_tracked_robot, tracked_robot_urdf

    world = tt.World(dt=2e-3, n_envs=n_envs)
    n = 129
    x = np.linspace(-4.0, 4.0, n)
    world.add_heightmap(n, n, 8.0, 8.0, 0.0, 0.0, (0.02 * np.sin(2.0 * math.pi * x / 3.0)[None, :]
                                                    * np.ones((n, 1))).ravel())
    urdf = tracked_robot_urdf(flippers=True)
    system = world.add_articulated_system(plain_urdf(urdf) if plain else urdf, position=(-2.0, 0.0, 0.22))
    drive_tracked_robot(system, speed, flipper_angle=-0.5)
    return world, system


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--steps", type=int, default=300, help="timed steps per round")
    p.add_argument("--repeats", type=int, default=3, help="rounds")
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import taichi_terra as tt

    tt.init("cpu", "f64")
    tree_only = _tree_only_kernel()
    cases = (("tracked_driving", tracked_world), ("tracked_standing", lambda n: tracked_world(n, speed=0.0)),
             ("plain_standing", lambda n: tracked_world(n, speed=0.0, plain=True)))
    results, rates = [], {}
    for n in args.envs:
        for name, build in cases:
            row = {"model": name, "engine": "taichi_terra",
                   **measure(build, n, args.steps, args.repeats, args.warmup, tree_only)}
            rates[(name, n)] = row["env_steps_per_s"]
            results.append(row)
            print(f"{name:18s} {n:5d} envs ({row['dof']} dof): {row['env_steps_per_s']:10,.0f} env-steps/s, "
                  f"{row['sweeps']:.1f} sweeps ({row['sweep_cap_share']:.0%} of steps at the cap), "
                  f"first step {row['first_step_s']:.1f} s", flush=True)
        ratio = rates[("tracked_standing", n)] / rates[("plain_standing", n)]
        results.append({"n_envs": n, "belt_rows_over_plain_rows_rate": ratio})
        print(f"{'':18s} {n:5d} envs: belt rows run at {ratio:.2f}x the rate of plain rigid rows", flush=True)
    out = args.out or os.path.join(os.path.dirname(__file__), "results", "tracks.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=2)
    return {"results": results}


if __name__ == "__main__":
    main()
