"""Show a trained policy (``examples/train.py``) driving its task in the GGUI viewer, or record it.

    python examples/play.py TrackedToGoal runs/tracked/policy.pt                      # a window
    python examples/play.py TrackedToGoal runs/tracked/policy.pt --envs 4 --headless --record play.gif

Every viewer option of the demo scenes applies (``--seconds``, ``--fps``, ``--envs``, ``--record`` ...). The
policy acts every ``control_dt`` of simulated time; an env whose episode ends starts its next one at once.
"""
from __future__ import annotations

import math
import sys

import numpy as np


def main(argv=None) -> dict:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2 or argv[0].startswith("-") or argv[1].startswith("-"):
        raise SystemExit("usage: play.py TASK CHECKPOINT [viewer options]  (see --help of a scene)")
    task_name, checkpoint, rest = argv[0], argv[1], argv[2:]
    from taichi_terra.viewer import OrbitCamera, app

    def build(args) -> app.Scene:
        import torch

        from taichi_terra.envs import task_class
        from taichi_terra.envs.training import load_policy

        policy, env = load_policy(task_name, checkpoint, num_envs=args.envs, **task_class(task_name).play_options)
        task = env.task
        state = {"acted": False, "arrived": 0, "episodes": 0, "next": 0.0}

        def controller(world):
            if world.time < state["next"] - 1e-9:  # (the runner also calls at each frame: act every control_dt)
                return
            state["next"] = world.time + task.control_dt
            if state["acted"]:  # the last action's outcome; the envs that ended start again
                reward, ended, facts = task.evaluate(task.last_action)
                task.episode_steps += 1
                ended |= task.episode_steps >= task.max_episode_steps
                state["episodes"] += int(ended.sum())
                state["arrived"] += int(np.sum(facts["arrived"] & ended)) if "arrived" in facts else 0
                if ended.any():
                    task.reset(ended)
            with torch.inference_mode():
                obs = env._group(task.observation())
                actions = np.clip(policy(obs).cpu().numpy().astype(np.float64), task.action_low, task.action_high)
            task.apply(actions)
            task.last_action[:] = actions
            state["acted"] = True

        def report(world):
            x = task.world.get_articulated_states()[task.robot.index]["base_position"][:, 0]
            goal = f", {state['arrived']} at the goal" if task_name == "TrackedToGoal" else ""
            return (f"{task_name}: {state['episodes']} episodes ended{goal} in {world.time:.1f} s; the robots' x "
                    f"now from {x.min():.2f} to {x.max():.2f} m")

        n = min(args.envs, 16)
        cols = math.ceil(math.sqrt(n))  # (the viewer's tiles: a square grid)
        view = task.play_view
        sx, sy = view["spacing"]
        centre = np.array([(cols - 1) * sx / 2, -(math.ceil(n / cols) - 1) * sy / 2, 0.0])
        distance = view["distance"] or max(7.0, 1.2 * cols * max(sx, sy))
        camera = OrbitCamera(target=centre, distance=distance, yaw=math.radians(-70.0 if view["follow"] else -90.0),
                             pitch=math.radians(30.0 if view["follow"] else 45.0))
        return app.Scene(task.world, camera=camera, envs=list(range(n)), controller=controller,
                         follow=task.robot if view["follow"] else None, control_period=task.control_dt,
                         viewer_options={"tile_spacing": (sx, sy)}, report=report)

    return app.main(build, "play", __doc__.splitlines()[0], rest, seconds=15.0, fps=15.0)


if __name__ == "__main__":
    main()
