"""Articulated systems: a hanging 60-link chain (no contacts) and the 30 kg quadruped standing under PD on a
height map (with its URDF's Coulomb joint friction, and without), for several env counts, with MuJoCo on the
same models in the same run.

    python -m perf articulated [--envs 1 64 1024 4096] [--steps 300] [--repeats 3] [--no-peer]

Scenes ``chain``, ``quadruped`` and ``quadruped_no_joint_friction`` (perf/scenes/articulated.py). Each case
builds the world, times the first step (it compiles the step kernel with the tree stages, or loads it from
Taichi's cache) and runs ``--warmup`` steps. Then ``--repeats`` rounds each restore that state and time the same
``--steps`` steps (so every round does the same work), and the same window stepped by a kernel that runs only
the tree stages (kinematics, mass matrix, bias forces, factor, free velocities and integration: their share of
a step). It reports the medians, and the mean sweeps per step of that window with the share of its steps at the
sweep cap. With ``mujoco`` installed (the ``[peers]`` extra), the same models run in MuJoCo
(``perf/peers/mujoco_articulated.py``) at the start of each round, over the same simulated window (``--warmup``
steps untimed, then ``--steps`` timed): its single-world ``mj_step`` on one thread (the median of ten runs of
the window), and its batched ``rollout`` of the same env count on as many threads as Taichi uses. The ratios of
our env-steps/s to both are taken round by round, each against MuJoCo's figures of the same round, and printed
as the median and range.
"""
import numpy as np

from .. import scenes
from ..timing import Window, measure, median, ratios
from . import init_backend

SMOKE = ["--envs", "1", "--steps", "5", "--repeats", "1", "--warmup", "2", "--cases", "chain", "quadruped"]
OUT = "articulated.json"
#: case -> (scene, the MuJoCo model, its joint friction)
CASES = {"chain": ("chain", "chain60", True), "quadruped": ("quadruped", "quadruped_heightmap", True),
         "quadruped_no_joint_friction": ("quadruped_no_joint_friction", "quadruped_heightmap", False)}
#: the cases' names in the results (as they were first published)
LABELS = {"chain": "chain60", "quadruped": "quadruped_heightmap",
          "quadruped_no_joint_friction": "quadruped_heightmap_no_joint_friction"}


def add_arguments(p) -> None:
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024, 4096])
    p.add_argument("--steps", type=int, default=300, help="timed steps per round")
    p.add_argument("--repeats", type=int, default=3, help="rounds")
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--no-peer", action="store_true", help="do not run MuJoCo beside it")


def tree_only_kernel():
    """A kernel that runs the tree stages of ``n`` steps (no contacts), on a world's own arrays."""
    import taichi as ti

    from taichi_terra.kernels.common.arrays import FRAME, SETTINGS_F, SETTINGS_I, TREE, TREE_STEP, StepData, gravity_of
    from taichi_terra.kernels.common.schema import get, get3, row
    from taichi_terra.kernels.dynamics.tree import tree_dynamics, tree_free_velocity, tree_integrate, tree_kinematics
    from taichi_terra.kernels.dynamics.tree_solve import tree_factor

    nd = ti.types.ndarray()

    @ti.func
    def trees(D: ti.template(), e, n):
        sf = row(D.settings_f, e, 0)
        gravity = gravity_of(D, e)
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


class TreeStages:
    """The tree stages alone (:func:`tree_only_kernel`) on one world's arrays: ``rate(snap, steps)``."""

    def __init__(self, world, kernel):
        import taichi as ti

        from taichi_terra.kernels.step import env_spread

        m, s, c, x = world._model, world._state, world._control, world._scratch
        spread = env_spread(world.n_envs, "cpu", ti.lang.impl.current_cfg().cpu_max_num_threads, False)
        self.world = world
        self.call = lambda n: kernel(n, spread, m.model_i, m.model_f, s.q, s.u, c.control, x.scratch_f, x.scratch_i)

    def rate(self, snap, steps: int) -> float:
        import time

        import taichi as ti

        self.world.restore(snap)  # (the tree stages of the last step's factored trees, on the same window)
        ti.sync()
        t = time.perf_counter()
        self.call(steps)
        ti.sync()
        return self.world.n_envs * steps / (time.perf_counter() - t)


def measure_case(scene: str, n_envs: int, window: Window, kernel, peer_round=None) -> dict:
    """Time ``window`` of scene ``scene`` (``timing.measure``) and, after each round, the tree stages alone on the
    same window; then the mean sweeps of the same steps, one per call. ``peer_round()`` (MuJoCo's rates, measured
    when called) runs at the start of each round, so each round's ratios compare runs made seconds apart."""
    built = scenes.build(scene, n_envs)
    world, system = built.world, built.parts["system"]
    trees = []

    def tree_round(_k, snap):
        if not trees:
            trees.append(TreeStages(world, kernel))
            trees[0].rate(snap, 1)  # (compiles the kernel)
        return trees[0].rate(snap, window.steps)

    run = measure(world, window, before_round=peer_round, after_round=tree_round)
    snap, tree_rates = run["checkpoint"], run["after_round"]
    world.restore(snap)
    sweeps = []
    for _ in range(window.steps):
        world.step(1)
        sweeps.append(np.mean(world.get_solver_sweeps()))
    world.restore(snap)
    rate, tree_rate = run["env_steps_per_s"], median(tree_rates)
    out = {"n_envs": n_envs, "dof": system.get_dof(), "first_step_s": run["first_step_s"], "env_steps_per_s": rate,
           "env_steps_per_s_all": run["env_steps_per_s_all"], "tree_stages_env_steps_per_s": tree_rate,
           "tree_share": rate / tree_rate, "sweeps": float(np.mean(sweeps)),
           "sweep_cap_share": float(np.mean(np.asarray(sweeps) >= world.solver.max_sweeps))}
    if peer_round is not None:
        peers = run["before_round"]
        for key in ("single", "rollout"):
            r = ratios(run["env_steps_per_s_all"], [p[key] for p in peers])
            out[f"mujoco_{key}_all"] = [p[key] for p in peers]
            out[f"mujoco_{key}"] = median(out[f"mujoco_{key}_all"])
            out[f"ratio_to_mujoco_{key}_all"] = r["all"]
            out[f"ratio_to_mujoco_{key}"] = r["median"]
    return out


def run(args) -> dict:
    from ..peers import mujoco_articulated as peer

    cfg = init_backend("cpu", "f64")
    import taichi as ti

    threads = ti.lang.impl.current_cfg().cpu_max_num_threads
    use_peer = not args.no_peer and peer.mujoco_available()
    if not args.no_peer and not use_peer:
        print("mujoco is not installed (pip install -e '.[peers]'): no peer figures", flush=True)
    kernel = tree_only_kernel()
    window = Window(args.steps, args.repeats, args.warmup)
    results = []
    for case in args.cases:
        scene, model, friction = CASES[case]
        name = LABELS[case]
        for n in args.envs:
            single, batch = [], []

            def peer_round(model=model, friction=friction, n=n):
                # the same simulated window as ours (--warmup, then --steps steps), ten times over for mj_step (a
                # window takes it a few ms)
                single.append(peer.measure_single(model, friction, steps=args.steps, repeats=10, warmup=args.warmup))
                batch.append(peer.measure_rollout(model, n, friction, steps=args.steps, repeats=1, n_threads=threads,
                                                  warmup=args.warmup))
                return {"single": single[-1]["steps_per_s"], "rollout": batch[-1]["env_steps_per_s"]}
            row = {"model": name, "engine": "taichi_terra",
                   **measure_case(scene, n, window, kernel, peer_round if use_peer else None)}
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
                rs, rr = row["ratio_to_mujoco_single_all"], row["ratio_to_mujoco_rollout_all"]
                line += (f"; MuJoCo {single[-1]['version']} mj_step (one thread) {row['mujoco_single']:10,.0f}, "
                         f"rollout ({threads} threads) {row['mujoco_rollout']:10,.0f}; ratio to mj_step "
                         f"{row['ratio_to_mujoco_single']:.2f} ({min(rs):.2f} to {max(rs):.2f}), to rollout "
                         f"{row['ratio_to_mujoco_rollout']:.2f} ({min(rr):.2f} to {max(rr):.2f})")
            results.append(row)
            print(line, flush=True)
    return {"threads": threads, "precision": cfg["precision"], "results": results}
