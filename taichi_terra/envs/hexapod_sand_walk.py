"""``HexapodSandWalk``: the hexapod walks forward (+x) through sand whose ``zeta`` each episode draws from the
RFT-SiM paper's range, 0.5 to 5.8 N/cm^3.

The robot is :mod:`taichi_terra.bodies.hexapod`'s (4.04 kg, 12 servos; :data:`PLATES` RFT plates per foot) in
row-mode sand (its resistance solved in the sweeps, so a standing foot holds). The action sets the servos'
position targets: the tripod gait's targets at the env's gait clock (one cycle per second from the episode's
start) plus the action times :data:`RESIDUAL` [rad]; the velocity targets are the gait's rates. Actions (12,
in [-1, 1]) are held for ``control_dt`` = 0.02 s. With zero actions the robot walks the scripted gait, which
slips backwards in the loosest sand: the policy learns how to place its feet there.

Observation (47, float32): the base's linear and angular velocity in its own frame (6), gravity's direction in
the base frame (3), the joint angles [rad] (12) and rates / 10 [rad/s] (12), the last action (12), and the gait
clock as (sin, cos) of its phase (2). The sand's ``zeta`` is not observed.

Reward per action: 10 x the base's forward speed along x [m/s], up to :data:`V_CMD` (0.5 for 5 cm/s, at most
1.5), less 2 x its sideways speed, 0.002 x the sum of the squared joint rates [(rad/s)^2] and 0.02 |a|^2; -10 and
the episode ends when the base tilts past 60 degrees. (Resistive force theory is rate-independent: without
the cap and the rate cost, a policy learns to paddle its feet ever faster, a thrust real sand would not give.) Episodes are truncated after 5 s
(250 actions). The robot starts facing +x, standing on the sand.
"""
from __future__ import annotations

import math

import numpy as np

from .task import Task

ZETA = (0.5, 5.8)  # [N/cm^3] the drawn sand's range
RESIDUAL = 0.3  # [rad] an action of 1 moves a servo's target this far from the gait's
PLATES = 100  # RFT plates per foot
TILT_COS = math.cos(math.radians(60.0))
V_CMD = 0.15  # [m/s] forward speed beyond which the reward grows no more


class HexapodSandWalk(Task):
    """See the module docstring.

    Args:
        num_envs, seed: as :class:`~taichi_terra.envs.task.Task`.
        plates: RFT plates per foot (>= 32).
    """

    name = "HexapodSandWalk"
    obs_dim = 47
    action_low = -np.ones(12)
    action_high = np.ones(12)
    control_dt = 0.02
    max_episode_steps = 250
    play_view = {"spacing": (1.6, 0.7), "follow": True, "distance": 2.4}

    def __init__(self, num_envs: int, seed: int = 0, *, plates: int = PLATES):
        self._plates = plates
        super().__init__(num_envs, seed)
        self.zeta = np.full(num_envs, 3.75)  # [N/cm^3] each env's sand as its episode drew it

    def build(self, num_envs: int):
        import taichi_terra as tt
        from taichi_terra.bodies.hexapod import add_hexapod

        world = tt.World(dt=1e-3, n_envs=num_envs)
        self.sand = world.add_granular_medium(0.0, zeta=3.75, smoothing=1.0, mode="row")
        self.robot = add_hexapod(world, plates=self._plates)
        return world

    def randomize(self, envs: np.ndarray) -> None:
        import taichi_terra as tt

        tt.randomize(self.world, self.rng, sand={"zeta": ZETA}, envs=envs)
        self.zeta[envs] = [self.world.get_medium_params(self.sand, int(e))["zeta"] for e in envs]

    def _clock(self) -> np.ndarray:
        """Each env's gait time [s]: its episode's time so far."""
        return self.episode_steps * self.control_dt

    def apply(self, actions: np.ndarray) -> None:
        from taichi_terra.bodies.hexapod import gait

        t = self._clock()
        target = np.zeros((self.num_envs, self.robot.get_generalized_coordinate_dim()))
        target[:, 7:] = gait(t + 0.5 * self.control_dt) + RESIDUAL * actions  # (the gait mid-action)
        rate = np.zeros((self.num_envs, self.robot.get_dof()))
        rate[:, 6:] = (gait(t + self.control_dt) - gait(t)) / self.control_dt
        self.robot.set_pd_target(target, rate)

    def _base(self):
        from ..validation import quats_to_matrices

        s = self.world.get_articulated_states()[self.robot.index]
        return s, quats_to_matrices(s["base_orientation"])

    def observe(self) -> np.ndarray:
        s, rot = self._base()
        phase = 2.0 * math.pi * (self._clock() % 1.0)
        obs = np.concatenate([s["base_linear_velocity"], s["base_angular_velocity"], -rot[:, 2, :],
                              s["q"][:, 7:], s["u"][:, 6:] / 10.0, self.last_action,
                              np.sin(phase)[:, None], np.cos(phase)[:, None]], axis=1)
        return obs.astype(np.float32)

    def evaluate(self, actions: np.ndarray):
        s, rot = self._base()
        v = s["u"][:, 0:3]  # (world frame)
        tilted = rot[:, 2, 2] < TILT_COS
        rates = s["u"][:, 6:]
        reward = (10.0 * np.minimum(v[:, 0], V_CMD) - 2.0 * np.abs(v[:, 1]) - 0.002 * np.sum(rates ** 2, axis=1)
                  - 0.02 * np.sum(actions ** 2, axis=1) - 10.0 * tilted)
        speed = s["base_position"][:, 0] / np.maximum(self._clock(), 1e-9)  # (it starts at x = 0)
        return reward, tilted, {"speed": speed, "zeta": self.zeta.copy()}
