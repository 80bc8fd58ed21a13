"""``TrackedToGoal``: a tracked robot drives to a goal across terrain tiles of steps, rough ground and soft soil.

The robot is :func:`taichi_terra.bodies.tracked_robot.tracked_robot_urdf`'s, scaled down (0.6 m tracks 0.4 m
apart, 0.1 m sprockets, 15 kg body). Each episode puts the env on a tile (:class:`taichi_terra.TerrainTiles`: a
kind drawn uniformly, the level its curriculum holds), the robot at the tile's centre with a random heading,
and a goal 1.8 to 2.6 m away in a random direction; its mass (x0.9 to x1.1) and the tracks' friction on the
rigid ground (0.6 to 1.1) are drawn too.

Actions (2, in [-1, 1]): the left and right sprockets' speed targets, times :data:`MAX_SPROCKET` [rad/s] (a
velocity drive of gain :data:`SPROCKET_KD`), held for ``control_dt`` = 0.1 s.

Observation (31, float32):

- the goal in the robot's yaw frame, (x, y) / 3 m, and its distance / 3 m (3);
- the base's linear and angular velocity in its own frame [m/s, rad/s] (6);
- gravity's direction in the base frame (3);
- the sprockets' speeds / :data:`MAX_SPROCKET` (2) and the last action (2);
- a height scan: the base's height above the ground at 5 x 3 points ahead (0.2 to 1.0 m forward, -0.3, 0 and
  0.3 m left, yaw-aligned), less its height on flat ground, clipped to [-1, 1] m (15).

Reward per action: the speed towards the goal [m/s] (distance gained / control_dt), +10 on arrival (within
0.3 m of the goal: the episode ends), -5 on failing (the base tilted past 70 degrees, or 2.7 m from the
tile's centre along x or y: it ends), and -0.01 |a - a_last|^2. Episodes are truncated after 15 s (150
actions). With ``curriculum=True`` an env's level rises by one after it arrived and falls by one after it did
not; with ``curriculum=False`` each episode draws its level uniformly.
"""
from __future__ import annotations

import math

import numpy as np

from .task import Task

KINDS = ("flat", "steps", "rough", "soft_soil")
MAX_SPROCKET = 8.0  # [rad/s] (0.8 m/s of belt)
SPROCKET_KD = 20.0  # [N m s/rad]
GOAL_RADIUS = 0.3  # [m]
EDGE = 2.7  # [m] the robot's base past this from the tile's centre along x or y: it has left the tile
MARKER_HEIGHT = 1.2  # [m] the goal marker above the tile's centre plane
FLIP_COS = math.cos(math.radians(70.0))
SCAN = np.array([[x, y] for x in (0.2, 0.4, 0.6, 0.8, 1.0) for y in (-0.3, 0.0, 0.3)])


class TrackedToGoal(Task):
    """See the module docstring.

    Args:
        num_envs, seed: as :class:`~taichi_terra.envs.task.Task`.
        levels: tile levels (>= 1); ``curriculum`` moves each env between them, else each episode draws one.
        kinds: the tile kinds drawn from (a subset of :data:`KINDS`).
        goal_marker: a ball held :data:`MARKER_HEIGHT` above each env's goal, for the viewer (out of the
            robot's reach: it changes nothing the robot meets).
    """

    name = "TrackedToGoal"
    obs_dim = 31
    action_low = -np.ones(2)
    action_high = np.ones(2)
    control_dt = 0.1
    max_episode_steps = 150
    eval_options = {"curriculum": False}  # (every level drawn uniformly)
    play_options = {"curriculum": False, "goal_marker": True}

    def __init__(self, num_envs: int, seed: int = 0, *, levels: int = 4, kinds=KINDS, curriculum: bool = True,
                 goal_marker: bool = False):
        self._levels, self._kinds, self.curriculum = levels, tuple(kinds), bool(curriculum)
        self._goal_marker = bool(goal_marker)
        super().__init__(num_envs, seed)
        self.goal = np.zeros((num_envs, 2))
        self._distance = np.zeros(num_envs)
        self.arrived = np.zeros(num_envs, bool)

    def build(self, num_envs: int):
        import taichi_terra as tt
        from taichi_terra.bodies.tracked_robot import TrackedRobotDesign, tracked_robot_urdf

        world = tt.World(dt=2e-3, n_envs=num_envs)
        world.add_material("track")
        self.tiles = tt.TerrainTiles(61, 61, 6.0, 6.0, levels=self._levels, kinds=self._kinds, seed=0,
                                     shapes=tt.TileShapes(platform=1.4, max_grade=0.3, max_step=0.08,
                                                          step_width=0.4, max_roughness=0.08))
        self.tiles.add_to(world)
        design = TrackedRobotDesign(length=0.6, spacing=0.4, wheel_radius=0.1, body_mass=15.0, width=0.08)
        self.stand = design.wheel_radius + design.thickness  # [m] the base's height on flat ground
        self.robot = world.add_articulated_system(tracked_robot_urdf(design, material="track"),
                                                  position=(0.0, 0.0, self.stand + 0.005))
        nv = self.robot.get_dof()
        self._sprockets = [self.robot.get_generalized_velocity_index(f"{s}_sprocket") for s in ("left", "right")]
        kd = np.zeros(nv)
        kd[self._sprockets] = SPROCKET_KD
        self.robot.set_pd_gains(np.zeros(nv), kd)
        self.marker = world.add_sphere(0.1, 0.1) if self._goal_marker else None
        return world

    # ------------------------------------------------------------------ episodes
    def randomize(self, envs: np.ndarray) -> None:
        import taichi_terra as tt

        n = len(envs)
        kinds = self.rng.integers(0, len(self._kinds), n)
        heading = self.rng.uniform(-math.pi, math.pi, n)
        bearing = self.rng.uniform(-math.pi, math.pi, n)
        reach = self.rng.uniform(1.8, 2.6, n)
        tt.randomize(self.world, self.rng, friction={("track", "default"): (0.6, 1.1)}, mass_scale=(0.9, 1.1),
                     envs=envs)
        for k, e in enumerate(envs):
            e = int(e)
            if self.curriculum and self.episode_steps[e] > 0:
                level = min(max(self.tiles.level_of(e) + (1 if self.arrived[e] else -1), 0), self._levels - 1)
            else:
                level = self.tiles.level_of(e) if self.curriculum else int(self.rng.integers(0, self._levels))
            self.tiles.place(e, self._kinds[kinds[k]], level)
            q = self.robot.get_generalized_coordinate(e)
            q[3:7] = (math.cos(0.5 * heading[k]), 0.0, 0.0, math.sin(0.5 * heading[k]))
            self.robot.set_generalized_coordinate(q, env=e)
        self.goal[envs] = np.stack([reach * np.cos(bearing), reach * np.sin(bearing)], axis=1)
        self._hold_marker()
        self.arrived[envs] = False
        self._distance[envs] = reach  # (the robot starts at the tile's centre)

    # ------------------------------------------------------------------ a step
    def _hold_marker(self) -> None:
        """The goal marker above each goal, at rest, its weight carried (it floats for the action's time)."""
        if self.marker is not None:
            self.marker.set_position(np.column_stack([self.goal, np.full(self.num_envs, MARKER_HEIGHT)]))
            self.marker.set_linear_velocity(np.zeros((self.num_envs, 3)))
            weight = [self.world.get_body_mass(self.marker, e) * self.world.get_gravity(e)
                      for e in range(self.num_envs)]
            self.marker.set_external_force(-np.array(weight))

    def apply(self, actions: np.ndarray) -> None:
        self._hold_marker()
        u = np.zeros((self.num_envs, self.robot.get_dof()))
        u[:, self._sprockets] = MAX_SPROCKET * actions
        self.robot.set_pd_target(np.zeros(self.robot.get_generalized_coordinate_dim()), u)

    def _base(self):
        """The base's position (num_envs, 3), its rotation matrices (num_envs, 3, 3) and the robot's states."""
        from ..validation import quats_to_matrices

        s = self.world.get_articulated_states()[self.robot.index]
        return s["base_position"], quats_to_matrices(s["base_orientation"]), s

    def observe(self) -> np.ndarray:
        pos, rot, s = self._base()
        yaw = np.arctan2(rot[:, 1, 0], rot[:, 0, 0])
        c, si = np.cos(yaw), np.sin(yaw)
        d = self.goal - pos[:, :2]
        local = np.stack([c * d[:, 0] + si * d[:, 1], -si * d[:, 0] + c * d[:, 1]], axis=1)
        gravity = -rot[:, 2, :]  # (world -z in the base frame: the rotation's last row, negated)
        ground = self.world.scan_heights(SCAN, (self.robot, "base"), fill=-1.0)
        scan = np.clip(pos[:, 2:3] - ground - self.stand, -1.0, 1.0)
        spr = s["u"][:, self._sprockets] / MAX_SPROCKET
        obs = np.concatenate([local / 3.0, np.linalg.norm(d, axis=1, keepdims=True) / 3.0,
                              s["base_linear_velocity"], s["base_angular_velocity"], gravity, spr, self.last_action,
                              scan], axis=1)
        return obs.astype(np.float32)

    def evaluate(self, actions: np.ndarray):
        pos, rot, _s = self._base()
        dist = np.linalg.norm(self.goal - pos[:, :2], axis=1)
        reward = (self._distance - dist) / self.control_dt
        self._distance = dist
        arrived = dist < GOAL_RADIUS
        failed = ((rot[:, 2, 2] < FLIP_COS) | (np.abs(pos[:, :2]).max(axis=1) > EDGE)) & ~arrived
        reward = reward + 10.0 * arrived - 5.0 * failed
        reward -= 0.01 * np.sum((actions - self.last_action) ** 2, axis=1)
        self.arrived |= arrived
        return reward, arrived | failed, {"arrived": arrived, "failed": failed, "level": self.tiles.levels_of_envs()}
