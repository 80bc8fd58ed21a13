"""``BuggySlipControl``: the buggy keeps a commanded speed on soil of randomised stiffness with the least slip.

The car is :mod:`taichi_terra.bodies.buggy`'s (896 kg, rear-wheel drive, double wishbones, rack steering) on a
12 m x 4 m soil bed at 5 cm. Each episode draws the soil (``bekker_kphi`` 0.5 to 4 MPa/m^1.1, from a soft
loam to a firm one; ``friction_coefficient`` 0.35 to 0.7; ``shear_displacement`` 1 to 4 cm: how far the soil
shears before it carries its full strength, so how much the wheels slip for a given thrust), the car's mass
(x0.9 to x1.1), its start (0.2 m either side of the lane's centre line y = 0, heading within 0.1 rad) and two
speed commands, 0.4 to 1.2 m/s, the second from :data:`SWITCH` s on. The car starts at rest, wheels on the
undeformed surface.

Actions (2, in [-1, 1]), held for ``control_dt`` = 0.05 s:

- throttle: the torque on each rear wheel, times :data:`MAX_TORQUE` [N m] (negative brakes, then reverses);
  the wheels' own velocity drives are off;
- steering: the mean front wheel angle, times :data:`MAX_STEER` [rad] (positive: to the left), set by the
  rack's position servo.

Observation (17, float32): the speed command [m/s]; the chassis' linear and angular velocity in its own frame
[m/s, rad/s] (6); gravity's direction in the chassis frame (3); the rear and the front wheels' mean rim speed
(wheel rate x :data:`~taichi_terra.bodies.buggy.WHEEL_RADIUS`) [m/s] (2: the undriven front wheels roll at
about the ground speed); the lateral offset from the lane's centre line [m] and the heading [rad] (2); the
front wheels' mean steering angle [rad] (1); the last action (2). The soil is not observed.

Slip: ``s = |r w - v| / max(|r w|, |v|, 0.1 m/s)`` of the rear wheels' rim speed ``r w`` and the chassis'
forward speed ``v``: 0 for rolling, 1 for a wheel spinning in place or locked while the car slides.

Reward per action: ``exp(-((v - v_cmd) / 0.25 m/s)^2)`` (1 when on the command), less ``s``, 0.5 (offset^2 +
heading^2) and 0.02 |a - a_last|^2; -10 and the episode ends if the car leaves the lane (1.1 m off the centre
line) or the bed's end (its chassis 8.7 m from the start), or tilts past 45 degrees. Episodes are truncated
after 6 s (120 actions).

Facts at an episode's end: ``speed_error``, the mean |v - v_cmd| [m/s] over the episode, each command's first
:data:`SETTLE` s left out; ``slip``, the mean slip over the episode (where the rims or the car move at 0.1 m/s
or more); ``failed``.

With ``drive="servo"`` the throttle is ignored and the rear wheels' velocity drives hold their rims at the
command instead: the cruise control that knows nothing of slip, the baseline a policy is compared with.
"""
from __future__ import annotations

import math

import numpy as np

from .task import Task

BED = (12.0, 4.0, 0.05)  # [m] length, width, sample spacing
START_X = -4.5  # [m] the chassis origin at the start (the bed spans x in [-6, 6])
END_X = 4.2  # [m] the chassis past this: the front wheels near the bed's end
LANE = 1.1  # [m] the chassis this far off y = 0: it has left the lane
SPEEDS = (0.4, 1.2)  # [m/s] the commands' range
SWITCH = 3.0  # [s] the second command from here on
SETTLE = 1.0  # [s] left out of the speed error after each command starts
MAX_TORQUE = 800.0  # [N m] each rear wheel's at throttle 1 (the drive's effort limit)
MAX_STEER = 0.35  # [rad] mean front wheel angle at steering 1
TILT_COS = math.cos(math.radians(45.0))
#: the soil's fixed fields (``scenes/buggy_soil.py``'s); :data:`SOIL_RANGES` draws the others per episode
SOIL = dict(elastic_stiffness=2.0e7, damping=4.0e4, sinkage_exponent=1.1, cohesion=100.0)
SOIL_RANGES = {"bekker_kphi": (0.5e6, 4.0e6), "friction_coefficient": (0.35, 0.7),
               "shear_displacement": (0.01, 0.04)}


def slip(rim: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The slip of a wheel whose rim moves at ``rim`` [m/s] on a car moving at ``v`` [m/s] (see the module
    docstring), in [0, 2] (above 1 only when rim and car move opposite ways)."""
    return np.abs(rim - v) / np.maximum(np.maximum(np.abs(rim), np.abs(v)), 0.1)


class BuggySlipControl(Task):
    """See the module docstring.

    Args:
        num_envs, seed: as :class:`~taichi_terra.envs.task.Task`.
        drive: ``"torque"`` (the throttle sets the rear wheels' torque) or ``"servo"`` (their velocity drives
            hold the rims at the command; the throttle is ignored).
    """

    name = "BuggySlipControl"
    obs_dim = 17
    action_low = -np.ones(2)
    action_high = np.ones(2)
    control_dt = 0.05
    max_episode_steps = 120
    #: the baseline ``examples/evaluate.py`` adds: the velocity servo at the command, wheels straight
    baseline = {"name": "servo", "options": {"drive": "servo"}}
    play_view = {"spacing": (13.0, 4.5), "follow": True, "distance": 11.0}  # (beds end to end, lanes side by side)

    def __init__(self, num_envs: int, seed: int = 0, *, drive: str = "torque"):
        if drive not in ("torque", "servo"):
            raise ValueError(f"drive must be 'torque' or 'servo', got {drive!r}")
        self.drive = drive
        super().__init__(num_envs, seed)
        self.commands = np.full((num_envs, 2), 0.8)  # [m/s] each env's two speed commands
        self._error_sum = np.zeros(num_envs)
        self._error_n = np.zeros(num_envs)
        self._slip_sum = np.zeros(num_envs)
        self._slip_n = np.zeros(num_envs)

    def build(self, num_envs: int):
        import taichi_terra as tt
        from taichi_terra.bodies import buggy as mb

        world = tt.World(dt=1e-3, n_envs=num_envs)
        world.solver.tolerance = mb.SOLVER_TOLERANCE  # (its error bound: taichi_terra/bodies/buggy.py)
        length, width, spacing = BED
        nx, ny = round(length / spacing) + 1, round(width / spacing) + 1
        self.bed = world.add_deformable_terrain(nx, ny, length, width, 0.0, 0.0, np.zeros(nx * ny),
                                                tt.SoilMaterial(**SOIL))
        self.buggy = mb.add_buggy(world, position=(START_X, 0.0, mb.RIDE_HEIGHT))
        self.robot = self.buggy.system
        self._rear, self._front = list(self.buggy.rear_wheels), list(self.buggy.front_wheels)
        self._steer = [1 + i for i in self.buggy.steer]  # (in q: one more entry than u, the base quaternion)
        if self.drive == "torque":
            self.buggy.drive_off()
        return world

    # ------------------------------------------------------------------ episodes
    def randomize(self, envs: np.ndarray) -> None:
        import taichi_terra as tt

        n = len(envs)
        tt.randomize(self.world, self.rng, soil=SOIL_RANGES, mass_scale=(0.9, 1.1), envs=envs)
        offset = self.rng.uniform(-0.2, 0.2, n)
        heading = self.rng.uniform(-0.1, 0.1, n)
        self.commands[envs] = self.rng.uniform(*SPEEDS, (n, 2))
        for k, e in enumerate(envs):
            q = self.robot.get_generalized_coordinate(int(e))
            q[1] = offset[k]
            q[3:7] = (math.cos(0.5 * heading[k]), 0.0, 0.0, math.sin(0.5 * heading[k]))
            self.robot.set_generalized_coordinate(q, env=int(e))
        for a in (self._error_sum, self._error_n, self._slip_sum, self._slip_n):
            a[envs] = 0.0

    def command(self) -> np.ndarray:
        """Each env's speed command now [m/s]."""
        return self._command_after(self.episode_steps)

    def _command_after(self, steps: np.ndarray) -> np.ndarray:
        """Each env's speed command [m/s] for the action after ``steps`` actions of its episode."""
        return np.where(steps * self.control_dt >= SWITCH - 1e-9, self.commands[:, 1], self.commands[:, 0])

    # ------------------------------------------------------------------ a step
    def apply(self, actions: np.ndarray) -> None:
        from taichi_terra.bodies import buggy as mb

        q_target = np.tile(self.buggy.q_target, (self.num_envs, 1))
        u_target = np.tile(self.buggy.u_target, (self.num_envs, 1))
        q_target[:, 1 + self.buggy.rack] = mb.steer_to_rack(MAX_STEER * actions[:, 1])
        force = np.zeros((self.num_envs, self.robot.get_dof()))
        if self.drive == "servo":
            u_target[:, self._rear] = (self.command() / mb.WHEEL_RADIUS)[:, None]
        else:
            force[:, self._rear] = (MAX_TORQUE * actions[:, 0])[:, None]
        self.robot.set_pd_target(q_target, u_target)
        self.robot.set_generalized_force(force)

    def _state(self):
        """The articulated state, the chassis' rotation matrices, its forward speed [m/s] and the rear and
        front rims' mean speeds [m/s]."""
        from ..validation import quats_to_matrices
        from taichi_terra.bodies import buggy as mb

        s = self.world.get_articulated_states()[self.robot.index]
        rot = quats_to_matrices(s["base_orientation"])
        u = s["u"]
        return (s, rot, s["base_linear_velocity"][:, 0], u[:, self._rear].mean(axis=1) * mb.WHEEL_RADIUS,
                u[:, self._front].mean(axis=1) * mb.WHEEL_RADIUS)

    def observe(self) -> np.ndarray:
        s, rot, _v, rear, front = self._state()
        yaw = np.arctan2(rot[:, 1, 0], rot[:, 0, 0])
        steer = s["q"][:, self._steer].mean(axis=1)
        obs = np.concatenate([self.command()[:, None], s["base_linear_velocity"], s["base_angular_velocity"],
                              -rot[:, 2, :], rear[:, None], front[:, None], s["base_position"][:, 1:2],
                              yaw[:, None], steer[:, None], self.last_action], axis=1)
        return obs.astype(np.float32)

    def evaluate(self, actions: np.ndarray):
        s, rot, v, rear, _front = self._state()
        # (the command held during the step just taken: episode_steps already counts it)
        t = (self.episode_steps - 1) * self.control_dt
        cmd = self._command_after(self.episode_steps - 1)
        s_rear = slip(rear, v)
        y = s["base_position"][:, 1]
        yaw = np.arctan2(rot[:, 1, 0], rot[:, 0, 0])
        failed = ((np.abs(y) > LANE) | (s["base_position"][:, 0] > END_X) | (rot[:, 2, 2] < TILT_COS))
        reward = (np.exp(-((v - cmd) / 0.25) ** 2) - s_rear - 0.5 * (y ** 2 + yaw ** 2)
                  - 0.02 * np.sum((actions - self.last_action) ** 2, axis=1) - 10.0 * failed)
        settled = (t + self.control_dt > SETTLE) & ((t < SWITCH - 1e-9) | (t + self.control_dt > SWITCH + SETTLE))
        self._error_sum += np.where(settled, np.abs(v - cmd), 0.0)
        self._error_n += settled
        moving = np.maximum(np.abs(rear), np.abs(v)) >= 0.1
        self._slip_sum += np.where(moving, s_rear, 0.0)
        self._slip_n += moving
        facts = {"speed_error": self._error_sum / np.maximum(self._error_n, 1.0),
                 "slip": self._slip_sum / np.maximum(self._slip_n, 1.0), "failed": failed}
        return reward, failed, facts
