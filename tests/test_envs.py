"""The RL tasks and their adapters (``taichi_terra.envs``): Gymnasium's checks, reproducible episodes from a seed,
autoreset that touches only the envs that ended, and a few PPO iterations of rsl_rl on the task."""
import numpy as np
import pytest

import taichi_terra.envs as envs

gym = pytest.importorskip("gymnasium")
N = 4


def _actions(rng, n, steps):
    return rng.uniform(-1.0, 1.0, (steps, n, 2))


@pytest.mark.parametrize("name", sorted(envs.TASKS))
def test_a_one_env_task_passes_gymnasiums_env_checker(name):
    """Reference: ``gymnasium.utils.env_checker.check_env`` (spaces, reset and step signatures and dtypes, seeded
    reset and step determinism, data not reused between calls)."""
    from gymnasium.utils.env_checker import check_env

    from taichi_terra.envs.vector import TerrainEnv

    check_env(TerrainEnv(envs.make_task(name, 1, seed=3)), skip_render_check=True)


def test_the_vector_env_declares_its_spaces_and_reproduces_episodes_from_a_seed():
    """The vector API's attributes; every observation inside the declared space; two vector envs reset with
    the same seed and given the same actions return the same observations, rewards and ends bit for bit over
    40 actions (4 s, episodes ending and restarting among them), and another seed does not."""
    runs = []
    for seed in (11, 11, 12):
        vec = envs.make_vector_env("TrackedToGoal", N, seed=0)
        assert vec.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
        assert vec.single_observation_space.shape == (31,) and vec.single_action_space.shape == (2,)
        assert vec.observation_space.shape == (N, 31) and vec.action_space.shape == (N, 2)
        obs, _info = vec.reset(seed=seed)
        out = [obs]
        for a in _actions(np.random.default_rng(5), N, 40):
            obs, reward, terminated, truncated, info = vec.step(a)
            assert vec.observation_space.contains(obs) and obs.dtype == np.float32
            out += [obs, reward, terminated, truncated]
        runs.append(out)
    for a, b in zip(runs[0], runs[1]):
        np.testing.assert_array_equal(a, b)
    assert not all(np.array_equal(a, b) for a, b in zip(runs[0], runs[2]))


def test_autoreset_restarts_the_ended_envs_and_leaves_the_others_bit_for_bit():
    """Reference: the same task stepped without resets. After an action that ends some envs (driving off
    the tile's edge), the vector env returns their new episodes' first observations (the robot back at
    the tile's centre, its last observation in ``final_obs``), and every other env's state and observations
    equal, bit for bit, those of the run without resets, then and 10 actions later."""
    vec = envs.make_vector_env("TrackedToGoal", N, seed=0)
    ref = envs.make_task("TrackedToGoal", N, seed=0)
    obs, _ = vec.reset(seed=2)
    ref.seed(2)
    np.testing.assert_array_equal(ref.reset(), obs)
    push = np.tile([1.0, 1.0], (N, 1))
    push[1:] = [[0.3, 0.3], [-0.2, 0.2], [0.0, 0.0]]  # env 0 drives straight on: it leaves the tile first
    for _k in range(200):
        obs, _r, terminated, truncated, info = vec.step(push)
        ref_obs, *_ = ref.step(push)
        ended = terminated | truncated
        if ended.any():
            break
    assert ended[0] and not ended[1:].any(), ended
    np.testing.assert_array_equal(info["final_obs"][0], ref_obs[0])
    assert np.all(info["_final_obs"] == ended)
    q = vec.task.robot.get_generalized_coordinate()
    assert np.linalg.norm(q[0, :2]) == 0.0  # (back at the start)
    np.testing.assert_array_equal(obs[1:], ref_obs[1:])
    for _k in range(10):
        obs, *_ = vec.step(push * [[0.0], [1.0], [1.0], [1.0]])
        ref_obs, *_ = ref.step(push * [[0.0], [1.0], [1.0], [1.0]])
    np.testing.assert_array_equal(obs[1:], ref_obs[1:])
    np.testing.assert_array_equal(vec.task.robot.get_generalized_coordinate()[1:],
                                  ref.robot.get_generalized_coordinate()[1:])


def test_bad_actions_and_names_are_refused():
    vec = envs.make_vector_env("TrackedToGoal", N, seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        vec.step(np.zeros((N, 2)))
    vec.reset()
    with pytest.raises(ValueError, match="shape"):
        vec.step(np.zeros((N, 3)))
    with pytest.raises(ValueError, match="finite"):
        vec.step(np.full((N, 2), np.nan))
    with pytest.raises(ValueError, match="name"):
        envs.make_task("Quadrotor", 2)
    with pytest.raises(ValueError, match="envs"):
        vec.task.reset([N])


@pytest.mark.parametrize("name", sorted(envs.TASKS))
def test_a_few_ppo_iterations_of_rsl_rl_run_on_the_task(name, tmp_path):
    """rsl_rl's ``OnPolicyRunner`` with PPO trains 3 iterations of 8 actions on 4 envs: the tensors have the
    shapes the runner expects, the losses are finite, and a saved policy loads back."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("rsl_rl")
    from rsl_rl.runners import OnPolicyRunner

    from taichi_terra.envs.training import ppo_config

    env = envs.make_rsl_env(name, N, seed=0)
    obs = env.get_observations()
    task = env.task
    assert obs["policy"].shape == (N, task.obs_dim) and obs["policy"].dtype == torch.float32
    assert env.num_actions == task.act_dim
    runner = OnPolicyRunner(env, ppo_config(steps_per_env=8, hidden=(32, 32)), log_dir=None, device="cpu")
    losses, update = [], runner.alg.update
    runner.alg.update = lambda: losses.append(update()) or losses[-1]
    runner.learn(3)
    assert len(losses) == 3
    for loss in losses:
        assert loss and all(np.isfinite(float(v)) for v in loss.values()), loss
    path = tmp_path / "policy.pt"
    runner.save(str(path))
    policy = runner.get_inference_policy()
    again = OnPolicyRunner(env, ppo_config(steps_per_env=8, hidden=(32, 32)), log_dir=None, device="cpu")
    again.load(str(path))
    o = env.get_observations()
    torch.testing.assert_close(again.get_inference_policy()(o), policy(o))


def test_the_training_helpers_write_a_curve_and_a_policy_that_evaluates(tmp_path):
    """``training.train`` for 2 iterations on 4 envs writes the policy, the curve (JSON and PNG) and the
    TensorBoard logs; the saved policy loads and runs whole episodes beside random actions, each episode
    counted once (arrival rates in [0, 1], per level where the task reports levels)."""
    pytest.importorskip("torch")
    pytest.importorskip("rsl_rl")
    import json

    from taichi_terra.envs.training import evaluate, load_policy, ppo_config, train

    out = train("TrackedToGoal", tmp_path, num_envs=N, iterations=2, config=ppo_config(steps_per_env=8,
                                                                                       hidden=(16,)))
    curve = json.loads((tmp_path / "curve.json").read_text())["curve"]
    assert [c["iteration"] for c in curve] == [1, 2] and curve[-1]["env_steps"] == 2 * 8 * N
    assert (tmp_path / "curve.png").stat().st_size > 0 and any((tmp_path / "tensorboard").iterdir())
    policy, env = load_policy("TrackedToGoal", out["policy"], num_envs=N, curriculum=False)
    for who in (policy, None):
        result = evaluate(env, who, episodes=N)
        assert result["episodes"] == N and 0.0 <= result["arrival_rate"] <= 1.0  # (one per env)
        assert all(0.0 <= v <= 1.0 for v in result["arrival_rate_by_level"].values())


def test_the_hexapods_sand_is_drawn_per_env_and_zero_actions_walk_the_gait():
    """``HexapodSandWalk`` draws each episode's zeta in [0.5, 5.8] N/cm^3 from its seed (the same draws
    again from the same seed); with zero actions the servos follow the tripod gait (the targets of
    ``bodies/hexapod.gait`` at the env's clock), and the robot moves forward in the firmest sand drawn
    (RFT: the stance feet push backwards against the sand)."""
    task = envs.make_task("HexapodSandWalk", N, seed=4)
    task.reset()
    zeta = task.zeta.copy()
    assert np.all((zeta >= 0.5) & (zeta <= 5.8)) and len(set(zeta)) == N
    task.seed(4)
    task.reset()
    np.testing.assert_array_equal(task.zeta, zeta)
    for e in range(N):
        assert task.world.get_medium_params(task.sand, e)["zeta"] == zeta[e]
    for _k in range(50):  # 1 s: one gait cycle
        _obs, _r, _term, _trunc, facts = task.step(np.zeros((N, 12)))
    assert facts["speed"][np.argmax(zeta)] > 0.02


@pytest.mark.filterwarnings("ignore")  # (Ray's own start-up and shutdown warnings)
def test_ray_actors_step_their_envs_as_local_tasks_and_feed_one_learner(tmp_path):
    """Reference: the same task run in this process. Two actors of 2 envs (local Ray): actor k's envs step bit
    for bit as a local task seeded ``seed + k`` given the same actions, through ends and resets; rsl_rl's
    runner trains 2 iterations on the actors' 4 envs as one VecEnv."""
    ray = pytest.importorskip("ray")
    pytest.importorskip("rsl_rl")
    torch = pytest.importorskip("torch")
    from rsl_rl.runners import OnPolicyRunner

    from taichi_terra.envs.ray import RayVecEnv
    from taichi_terra.envs.training import ppo_config

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        env = RayVecEnv("TrackedToGoal", num_actors=2, envs_per_actor=2, seed=7)
        local = [envs.make_task("TrackedToGoal", 2, seed=7 + k) for k in range(2)]
        first = [t.reset() for t in local]
        np.testing.assert_array_equal(env.get_observations()["policy"].numpy(), np.concatenate(first))
        actions = np.tile([[1.0, 1.0], [0.5, 0.6]], (2, 1))
        for _k in range(40):
            obs, _rew, dones, _extras = env.step(torch.from_numpy(actions))
            expected = []
            for k, t in enumerate(local):
                o, _r, term, trunc, _f = t.step(actions[2 * k:2 * k + 2])
                if (term | trunc).any():
                    o = t.reset(term | trunc)
                expected.append(o)
            np.testing.assert_array_equal(obs["policy"].numpy(), np.concatenate(expected))
        runner = OnPolicyRunner(env, ppo_config(steps_per_env=4, hidden=(16,)), log_dir=None, device="cpu")
        runner.learn(2)
        env.close()
    finally:
        ray.shutdown()


@pytest.mark.needs("vulkan")  # (GGUI draws through Vulkan)
def test_play_draws_a_trained_policy_driving_its_task(tmp_path):
    """``examples/play.py`` loads a policy saved by the training helper and runs it in the headless viewer for
    0.5 s over 2 envs: it writes a still in which the robots' tiles are drawn (more than the background)."""
    pytest.importorskip("rsl_rl")
    import importlib.util
    from pathlib import Path

    from PIL import Image

    from taichi_terra.envs.training import ppo_config, train

    out = train("TrackedToGoal", tmp_path, num_envs=2, iterations=1, config=ppo_config(steps_per_env=4,
                                                                                       hidden=(16,)))
    spec = importlib.util.spec_from_file_location("play", Path(__file__).resolve().parents[1] / "examples" /
                                                  "play.py")
    play = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(play)
    still = tmp_path / "play.png"
    result = play.main(["TrackedToGoal", str(out["policy"]), "--envs", "2", "--headless", "--quiet",
                        "--seconds", "0.5", "--fps", "4", "--width", "320", "--height", "180", "--still", str(still)])
    assert result["steps"] == 250  # (dt = 2 ms)
    image = np.asarray(Image.open(still).convert("RGB"), float)
    assert image.shape == (180, 320, 3) and np.ptp(image.reshape(-1, 3), axis=0).max() > 60


def test_the_tracked_robots_curriculum_moves_a_level_up_after_arrival_and_down_after_failure():
    """``TrackedToGoal``'s curriculum: an env whose robot is put at its goal arrives (reward +10, the episode
    ends) and its next tile is a level higher; one whose robot is put past the tile's edge fails and
    its next tile is a level lower (never below 0); an env that goes on keeps its tile."""
    task = envs.make_task("TrackedToGoal", 3, seed=1)
    task.reset()
    for e in range(3):
        task.tiles.place(e, "flat", 1)
    q = task.robot.get_generalized_coordinate()
    q[0, :2] = task.goal[0]  # env 0 at its goal
    q[1, :2] = (2.8, 0.0)  # env 1 past the edge
    task.robot.set_generalized_coordinate(q)
    _obs, reward, terminated, _trunc, facts = task.step(np.zeros((3, 2)))
    assert list(terminated) == [True, True, False]
    assert facts["arrived"][0] and facts["failed"][1] and not facts["arrived"][2] and not facts["failed"][2]
    assert reward[0] > 10.0  # (the +10 of arrival, and the distance gained)
    task.reset(terminated)
    assert [task.tiles.level_of(e) for e in range(3)] == [2, 0, 1]


def test_the_buggys_soil_and_commands_are_drawn_per_env_and_its_throttle_is_the_rear_wheels_torque():
    """``BuggySlipControl`` draws each episode's soil (``bekker_kphi``, ``friction_coefficient``,
    ``shear_displacement`` in their ranges, the same again from the same seed), its start and its two speed
    commands (the second from 3 s on). The throttle is the rear wheels' torque: the generalized force the
    drives applied in the last step is 800 N m x the throttle on each rear wheel, less its joint damping (their
    velocity drives off);
    ``drive="servo"`` puts those drives at the command instead. Reference for the slip: its definition,
    |r w - v| / max(|r w|, |v|, 0.1 m/s)."""
    from taichi_terra.envs import buggy_slip_control as bsc

    task = envs.make_task("BuggySlipControl", N, seed=6)
    task.reset()
    soil = [task.bed.get_material(e) for e in range(N)]
    for field, (lo, hi) in bsc.SOIL_RANGES.items():
        values = [getattr(m, field) for m in soil]
        assert all(lo <= v <= hi for v in values) and len(set(values)) == N, field
    commands = task.commands.copy()
    assert np.all((commands >= 0.4) & (commands <= 1.2))
    np.testing.assert_array_equal(task.command(), commands[:, 0])
    q = task.robot.get_generalized_coordinate()
    assert np.all(np.abs(q[:, 1]) <= 0.2) and np.all(q[:, 0] == bsc.START_X)
    task.seed(6)
    task.reset()
    np.testing.assert_array_equal(task.commands, commands)
    assert [task.bed.get_material(e) for e in range(N)] == soil
    throttle = np.array([0.5, -0.25, 0.0, 1.0])
    task.step(np.column_stack([throttle, np.zeros(N)]))
    applied = task.robot.get_generalized_force()
    assert np.all(task.robot.get_pd_gains()[1][:, list(task.buggy.rear_wheels)] == 0.0)
    rate = task.robot.get_generalized_velocity()
    for i in task.buggy.rear_wheels:  # (less the wheel joint's damping, 0.5 N m s/rad, implicit: at the new rate)
        np.testing.assert_allclose(applied[:, i], 800.0 * throttle - 0.5 * rate[:, i], rtol=0, atol=1e-9)
    task.episode_steps[:] = 60  # (3 s in)
    np.testing.assert_array_equal(task.command(), commands[:, 1])
    servo = envs.make_task("BuggySlipControl", 1, seed=6, drive="servo")
    servo.reset()
    servo.step(np.ones((1, 2)) * [1.0, 0.0])  # (a full throttle, which the servo ignores)
    rear = list(servo.buggy.rear_wheels)
    assert np.all(servo.robot.get_pd_gains(0)[1][rear] > 0.0)
    np.testing.assert_array_equal(servo.robot.get_pd_target(0)[1][rear], servo.command()[0] / 0.3611)
    assert np.all(servo.robot.get_generalized_force(0)[rear] < 800.0)
    np.testing.assert_allclose(bsc.slip(np.array([1.0, 0.0, 0.05, -0.5]), np.array([0.8, 0.5, 0.0, 0.5])),
                               [0.2, 1.0, 0.5, 2.0])
    with pytest.raises(ValueError, match="drive"):
        envs.make_task("BuggySlipControl", 1, drive="throttle")


def test_a_hard_steer_at_standstill_on_soil_keeps_the_buggy_bounded():
    """16 buggies standing on soil take a steering step of up to 0.35 rad (random, either way) at a throttle
    of 0.3: the rack's servo swings the knuckles fast, and the suspension and steering loops (pins solved as
    one block per car) must hold. Every velocity stays below 20 (m/s, rad/s) and every step within the
    sweep cap. (Reference: the same step with the pins swept one by one. Before the pin block's
    cancellation floor, env 6 reached 1e16 in the first action: a redundant pin direction's pivot, 5e-9 of
    the block's largest, was kept.)"""
    n = 16
    task = envs.make_task("BuggySlipControl", n, seed=0)
    task.reset()
    a = np.random.default_rng(0).uniform(-1.0, 1.0, (n, 2))
    a[:, 0] = 0.3
    for _k in range(3):
        task.step(a)
        u = task.robot.get_generalized_velocity()
        assert np.all(np.isfinite(u)) and np.abs(u).max() < 20.0, np.abs(u).max(axis=1)
        assert max(task.world.get_solver_sweeps(e) for e in range(n)) < task.world.solver.max_sweeps


def test_more_give_in_the_soils_shear_lets_the_buggys_wheels_slip_more():
    """Janosi-Hanamoto: the soil's shear stress builds up over a shear displacement of scale ``K``, so the
    same thrust needs about K-fold more wheel travel, and slip. Two buggies on the same soil but K = 1 cm and
    4 cm, the same throttle (0.35) for 3 s: the second's mean slip is the larger, by more than 1.5."""
    import dataclasses

    task = envs.make_task("BuggySlipControl", 2, seed=0)
    task.reset()
    soil = task.bed.get_material(0)
    for e, k in enumerate((0.01, 0.04)):
        task.bed.set_material(dataclasses.replace(soil, shear_displacement=k), env=e)
    for _k in range(60):
        _obs, _r, _term, _trunc, facts = task.step(np.array([[0.35, 0.0], [0.35, 0.0]]))
    assert facts["slip"][1] > 1.5 * facts["slip"][0], facts["slip"]
