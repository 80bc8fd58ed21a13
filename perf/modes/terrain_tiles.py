"""Terrain per env: stepping on a map whose envs share their heights against one with heights per env, and what
moving envs between tiles costs (``taichi_terra/terrain/tiles.py``).

    python -m perf terrain_tiles [--envs 1024] [--samples 41] [--steps 20] [--calls 20] [--repeats 5]

Two worlds of ``--envs`` envs on cpu f64, each env a wheel (a cylinder) resting on a rough 4 m tile of
``--samples`` x ``--samples`` samples: one with a map shared by every env, one with the same heights held per env.
Median times:

- ``step_shared_ms`` and ``step_per_env_ms``: one step of each world (``--steps`` steps a call);
- ``set_heights_one_us``: ``set_heights`` of one env of a built map with heights per env (its samples written
  in place), alternating between two tiles;
- ``place_one_us``: ``TerrainTiles.place`` of one env on a world with the rigid map and the soil bed (which
  restarts that env's soil history);
- ``place_all_ms``: ``TerrainTiles.place_all`` of every env (two thirds of them onto another tile).

Both stepped worlds hold the same heights and bodies: they differ only in where the heights live.

Calls are interleaved (``perf/timing.py``) so that the machine's drift hits all alike.
"""
from ..timing import interleaved
from . import init_backend

SMOKE = ["--envs", "4", "--samples", "9", "--steps", "2", "--calls", "2", "--repeats", "1"]
OUT = "terrain_tiles.json"


def add_arguments(p) -> None:
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--samples", type=int, default=41)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)


def run(args) -> dict:
    init_backend("cpu", "f64")
    import taichi_terra as tt

    n = args.samples
    tiles = tt.TerrainTiles(n, n, 4.0, 4.0, levels=3, kinds=("rough", "slope", "soft_soil"), seed=0)
    rough = tiles.tile("rough", 2).heights

    def wheel_world(per_env: bool):
        world = tt.World(dt=1e-3, n_envs=args.envs)
        world.add_heightmap(n, n, 4.0, 4.0, 0.0, 0.0, rough, per_env=per_env)
        wheel = world.add_cylinder(0.15, 0.1, 5.0)
        wheel.set_position([0.0, 0.0, 0.2])
        world.step(1)
        return world

    shared, per_env = wheel_world(False), wheel_world(True)
    other = tiles.tile("slope", 2).heights
    tiled = tt.World(dt=1e-3, n_envs=args.envs)  # (the tiles' world: the stepped ones keep their heights)
    hm = tiles.add_to(tiled)["map"]
    tiled.add_cylinder(0.15, 0.1, 5.0).set_position([0.0, 0.0, 0.2])
    tiled.step(1)
    kinds = [tiles.kinds[e % 3] for e in range(args.envs)]
    levels = [e % 3 for e in range(args.envs)]
    turn = [0]

    def place_one():
        turn[0] += 1
        tiles.place(turn[0] % args.envs, tiles.kinds[turn[0] % 3], turn[0] % 3)

    def set_one():
        turn[0] += 1
        hm.set_heights(other if turn[0] % 2 else rough, env=turn[0] % args.envs)

    t = interleaved({
        "step_shared": lambda: shared.step(args.steps),
        "step_per_env": lambda: per_env.step(args.steps),
        "set_heights_one": set_one,
        "place_one": place_one,
        "place_all": lambda: tiles.place_all(kinds[turn[0] % 2:] + kinds[:turn[0] % 2], levels),
    }, args.calls, args.repeats)
    row = {"n_envs": args.envs, "samples": n * n,
           "step_shared_ms": 1e3 * t["step_shared"] / args.steps,
           "step_per_env_ms": 1e3 * t["step_per_env"] / args.steps,
           "set_heights_one_us": 1e6 * t["set_heights_one"], "place_one_us": 1e6 * t["place_one"],
           "place_all_ms": 1e3 * t["place_all"]}
    row["per_env_over_shared"] = row["step_per_env_ms"] / row["step_shared_ms"]
    print(f"{args.envs} envs, {n} x {n} samples, cpu f64, median per call: step shared {row['step_shared_ms']:.3f} ms, "
          f"per env {row['step_per_env_ms']:.3f} ms (x{row['per_env_over_shared']:.2f}); set_heights one env "
          f"{row['set_heights_one_us']:.0f} us; place one env {row['place_one_us']:.0f} us; place_all "
          f"{row['place_all_ms']:.1f} ms")
    return row
