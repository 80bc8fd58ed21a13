"""Articulated systems: a hanging 60-link chain (no contacts) and the 30 kg quadruped standing under PD on a
height map (with its URDF's Coulomb joint friction, and without), for several env counts, with MuJoCo on
the same models in the same run.

    python -m perf.bench_articulated [--envs 1 64 1024 4096] [--steps 300] [--repeats 3] [--no-peer]

Each case builds the world, times the first step (it compiles the step kernel with the tree stages, or
loads it from Taichi's cache) and runs ``--warmup`` steps. Then ``--repeats`` rounds each restore that
state and time the same ``--steps`` steps (so every round does the same work), and the same window
stepped by a kernel that runs only the tree stages (kinematics, mass matrix, bias forces, factor, free
velocities and integration: their share of a step). It reports the medians, and the mean sweeps per step
of that window with the share of its steps at the sweep cap. With ``mujoco`` installed (the ``[peers]``
extra), the same models run in MuJoCo (``perf/peers/mujoco_articulated.py``) at the start of each round,
over the same simulated window (``--warmup`` steps untimed, then ``--steps`` timed): its single-world
``mj_step`` on one thread (the median of ten runs of the window), and its batched ``rollout`` of the same
env count on as many threads as Taichi uses. The ratios of our env-steps/s to both are taken round
by round, each against MuJoCo's figures of the same round (on a shared machine the rates of both drift
together from minute to minute), and printed as the median and range. JSON goes to
perf/results/articulated.json.
"""
import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "urdf"
STAND = [0.0, 0.6, -1.2] * 4


def chain_world(n_envs: int):
    import taichi_terra as tt
    from taichi_terra.bodies.urdf import make_chain_urdf

    world = tt.World(dt=1e-3, n_envs=n_envs)
    system = world.add_articulated_system(make_chain_urdf(60), base="fixed", position=(0.0, 0.0, 10.0))
    q = np.full(60, 0.05)
    system.set_generalized_coordinate(q)
    return world, system


def quadruped_world(n_envs: int, joint_friction: bool = True):
    import re

    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=n_envs)
    n = 65
    x = np.linspace(-2.0, 2.0, n)
    world.add_heightmap(n, n, 4.0, 4.0, 0.0, 0.0, (0.02 * np.sin(2.0 * x)[None, :] * np.ones((n, 1))).ravel())
    xml = (DATA / "quadruped.urdf").read_text()
    if not joint_friction:  # (Coulomb joint friction rows make the sweep take its 100 sweeps at most: see docs/limitations.md)
        xml = re.sub(r'friction="[^"]*"', 'friction="0"', xml)
    system = world.add_articulated_system(xml, position=(0.0, 0.0, 0.46))
    q = system.get_generalized_coordinate(0)
    q[7:] = STAND
    system.set_generalized_coordinate(q)
    system.set_pd_gains(np.r_[np.zeros(6), np.full(12, 300.0)], np.r_[np.zeros(6), np.full(12, 20.0)])
    system.set_pd_target(q, np.zeros(18))
    return world, system


def _tree_only_kernel():
    """A kernel that runs the tree stages of ``n`` steps (no contacts), on a world's own arrays."""
    import taichi as ti

    from taichi_terra.kernels.common.arrays import FRAME, SETTINGS_F, SETTINGS_I, TREE, TREE_STEP, StepData
    from taichi_terra.kernels.common.math import vec3
    from taichi_terra.kernels.common.schema import get, get3, row
    from taichi_terra.kernels.dynamics.tree import tree_dynamics, tree_free_velocity, tree_integrate, tree_kinematics
    from taichi_terra.kernels.dynamics.tree_solve import tree_factor

    nd = ti.types.ndarray()

    @ti.func
    def trees(D: ti.template(), e, n):
        sf = row(D.settings_f, e, 0)
        gravity = vec3(sf[SETTINGS_F.gravity], sf[SETTINGS_F.gravity + 1], sf[SETTINGS_F.gravity + 2])
        dt = sf[SETTINGS_F.dt]
        for _ in range(n):
            for t in range(get(D.settings_i, e, 0, SETTINGS_I.n_trees)):
                tree_kinematics(D, e, t)
                # (as in the world's last step: the mass matrix and its factor where rows acted on the tree)
                factored = get(D.tree_step, e, t, TREE_STEP.factored) != 0
                tree_dynamics(D, e, t, get3(D.frame, e, get(D.tree, e, t, TREE.joint0), FRAME.position), gravity,
                              factored, False)  # (no RFT plates here)
                if factored:
                    tree_factor(D, e, t, dt)
                tree_free_velocity(D, e, t, dt)
                tree_integrate(D, e, t, dt)

    @ti.kernel
    def run(n: ti.i32, spread: ti.i32, model_i: nd, model_f: nd, q: nd, u: nd, control: nd, scratch_f: nd,
            scratch_i: nd):
        for i in range(q.shape[0] * spread):  # (as the step kernel's env loop: step.env_spread)
            if i % spread == 0:
                trees(StepData(model_i, model_i=model_i, model_f=model_f, q=q, u=u, control=control,
                               scratch_f=scratch_f, scratch_i=scratch_i), i // spread, n)

    return run


def measure(build, n_envs: int, steps: int, repeats: int, warmup: int, tree_only, peer_round=None) -> dict:
    """Time ``steps`` steps of a world of ``n_envs`` envs in ``repeats`` rounds, each from the same state after
    ``warmup`` steps (the same work every round), and the tree stages alone on that state; then the mean
    sweeps of the same ``steps`` steps, one per call. ``peer_round`` (a function returning MuJoCo's rates
    measured when called) runs at the start of each round, so each round's ratios compare runs made
    seconds apart."""
    import taichi as ti

    world, system = build(n_envs)
    t = time.perf_counter()
    world.step(1)
    ti.sync()
    first = time.perf_counter() - t
    world.step(warmup)
    ti.sync()
    snap = world.checkpoint()
    m, s, c, x = world._model, world._state, world._control, world._scratch
    from taichi_terra.kernels.step import env_spread

    spread = env_spread(n_envs, "cpu", ti.lang.impl.current_cfg().cpu_max_num_threads, False)
    tree_only(1, spread, m.model_i, m.model_f, s.q, s.u, c.control, x.scratch_f, x.scratch_i)
    world.restore(snap)
    rates, tree_rates, peers = [], [], []
    for _ in range(repeats):
        if peer_round is not None:
            peers.append(peer_round())
        world.restore(snap)
        ti.sync()
        t = time.perf_counter()
        world.step(steps)
        ti.sync()
        rates.append(n_envs * steps / (time.perf_counter() - t))
        world.restore(snap)  # (the tree stages of the last step's factored trees, on the same window)
        ti.sync()
        t = time.perf_counter()
        tree_only(steps, spread, m.model_i, m.model_f, s.q, s.u, c.control, x.scratch_f, x.scratch_i)
        ti.sync()
        tree_rates.append(n_envs * steps / (time.perf_counter() - t))
    world.restore(snap)
    sweeps = []  # the sweeps of each step of the timed window (one step per call)
    for _ in range(steps):
        world.step(1)
        sweeps.append(np.mean(world.get_solver_sweeps()))
    world.restore(snap)
    rate, tree_rate = statistics.median(rates), statistics.median(tree_rates)
    out = {"n_envs": n_envs, "dof": system.get_dof(), "first_step_s": first, "env_steps_per_s": rate,
           "env_steps_per_s_all": rates, "tree_stages_env_steps_per_s": tree_rate, "tree_share": rate / tree_rate,
           "sweeps": float(np.mean(sweeps)),
           "sweep_cap_share": float(np.mean(np.asarray(sweeps) >= world.solver.max_sweeps))}
    if peers:
        for key in ("single", "rollout"):
            ratios = [ours / peer[key] for ours, peer in zip(rates, peers)]
            out[f"mujoco_{key}_all"] = [peer[key] for peer in peers]
            out[f"mujoco_{key}"] = statistics.median(out[f"mujoco_{key}_all"])
            out[f"ratio_to_mujoco_{key}_all"] = ratios
            out[f"ratio_to_mujoco_{key}"] = statistics.median(ratios)
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024, 4096])
    p.add_argument("--steps", type=int, default=300, help="timed steps per round")
    p.add_argument("--repeats", type=int, default=3, help="rounds")
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--out", default=None)
    p.add_argument("--no-peer", action="store_true", help="do not run MuJoCo beside it")
    args = p.parse_args(argv)
    import taichi as ti

    import taichi_terra as tt

    from .peers import mujoco_articulated as peer

    tt.init("cpu", "f64")
    threads = ti.lang.impl.current_cfg().cpu_max_num_threads
    use_peer = not args.no_peer and peer.mujoco_available()
    if not args.no_peer and not use_peer:
        print("mujoco is not installed (pip install -e '.[peers]'): no peer figures", flush=True)
    tree_only = _tree_only_kernel()
    results = []
    cases = (("chain60", chain_world, "chain60", True), ("quadruped_heightmap", quadruped_world, "quadruped_heightmap", True),
             ("quadruped_heightmap_no_joint_friction", lambda n: quadruped_world(n, joint_friction=False),
              "quadruped_heightmap", False))
    for name, build, peer_model, friction in cases:
        for n in args.envs:
            peer_round, single, batch = None, [], []
            if use_peer:
                def peer_round(model=peer_model, friction=friction, n=n):
                    # the same simulated window as ours (--warmup, then --steps steps), ten times over for
                    # mj_step (a window takes it a few ms)
                    single.append(peer.measure_single(model, friction, steps=args.steps, repeats=10,
                                                      warmup=args.warmup))
                    batch.append(peer.measure_rollout(model, n, friction, steps=args.steps, repeats=1,
                                                      n_threads=threads, warmup=args.warmup))
                    return {"single": single[-1]["steps_per_s"], "rollout": batch[-1]["env_steps_per_s"]}
            row = {"model": name, "engine": "taichi_terra",
                   **measure(build, n, args.steps, args.repeats, args.warmup, tree_only, peer_round)}
            line = (f"{name:38s} {n:5d} envs ({row['dof']} dof): {row['env_steps_per_s']:10,.0f} env-steps/s, "
                    f"tree stages alone {row['tree_stages_env_steps_per_s']:10,.0f} (share {row['tree_share']:.0%}), "
                    f"{row['sweeps']:.1f} sweeps ({row['sweep_cap_share']:.0%} of steps at the cap), "
                    f"first step {row['first_step_s']:.1f} s")
            if use_peer:
                results.append({"model": name, "engine": "mujoco", "mode": "mj_step", "n_envs": n, **single[-1],
                                "steps_per_s": row["mujoco_single"], "steps_per_s_all": row["mujoco_single_all"]})
                results.append({"model": name, "engine": "mujoco", "mode": "rollout", **batch[-1],
                                "env_steps_per_s": row["mujoco_rollout"],
                                "env_steps_per_s_all": row["mujoco_rollout_all"]})
                low_s, high_s = min(row["ratio_to_mujoco_single_all"]), max(row["ratio_to_mujoco_single_all"])
                low_r, high_r = min(row["ratio_to_mujoco_rollout_all"]), max(row["ratio_to_mujoco_rollout_all"])
                line += (f"; MuJoCo {single[-1]['version']} mj_step (one thread) {row['mujoco_single']:10,.0f}, "
                         f"rollout ({threads} threads) {row['mujoco_rollout']:10,.0f}; ratio to mj_step "
                         f"{row['ratio_to_mujoco_single']:.2f} ({low_s:.2f} to {high_s:.2f}), to rollout "
                         f"{row['ratio_to_mujoco_rollout']:.2f} ({low_r:.2f} to {high_r:.2f})")
            results.append(row)
            print(line, flush=True)
    out = args.out or os.path.join(os.path.dirname(__file__), "results", "articulated.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=2)
    return {"results": results}


if __name__ == "__main__":
    main()
