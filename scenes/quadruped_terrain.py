"""Quadruped on terrain: a 30 kg, 12-joint quadruped trots open-loop over Perlin-noise ground and onto a soil
bed, where its feet leave footprints.

    python scenes/quadruped_terrain.py                       # a window (f follows the robot, c shows contacts)
    python scenes/quadruped_terrain.py --headless --record quadruped_terrain.gif --still quadruped_terrain.png

The robot (``scenes/assets/quadruped.urdf``: a box trunk and four legs of hip abduction, hip flexion and knee,
each foot a sphere on its shank) is an articulated system with a floating base. Its drives are PD (kp 300
N m/rad, kd 20 N m s/rad, implicit in the step, each held to an effort limit of 80 N m: the trot asks up
to about 60 N m of a knee when its foot lands) towards a trot, set every 10 ms: the diagonal leg pairs swing
in antiphase at 1.6 Hz, each hip about its standing angle by +-0.22 rad, each knee bending by up to 0.5 rad
while its leg swings forward; after 5.6 s it stops and stands. Nothing closes the loop: the same targets on
flat ground walk it straight at about 0.7 m/s.

The course runs along +x: 2.4 m of fractal Perlin noise (up to 7 cm high, flattened towards both ends), then
a 2 m soil bed (Bekker kphi 2e7 Pa/m, unloading stiffness 2e8 Pa/m, damping 2e4 Pa s/m) coloured by plastic
sinkage, so the footprints show dark where the soil stays pressed down. The timeline is fixed (it does not
scale with --seconds; past 7 s the robot just stands).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from taichi_terra.viewer import OrbitCamera, Style, app

URDF = Path(__file__).resolve().parent / "assets" / "quadruped.urdf"
STAND = np.array([0.0, 0.6, -1.2])  # hip abduction, hip flexion, knee of every leg [rad]
KP, KD = 300.0, 20.0  # [N m/rad], [N m s/rad]
GAIT_HZ, HIP_AMP, KNEE_AMP = 1.6, 0.22, 0.5  # [Hz], [rad], [rad]
PHASES = np.array([0.0, math.pi, math.pi, 0.0])  # FL, FR, RL, RR: diagonal pairs in antiphase
RAMP = 0.5  # [s] the gait's amplitude grows from 0 over this time at the start, and falls to 0 after WALK
WALK = 5.6  # [s] the robot trots until then (it is on the soil bed from about 4 s), then stands
CONTROL_PERIOD = 0.01  # [s]
NOISE_X, NOISE_Y, NOISE_SPACING = 2.4, 1.4, 0.05  # [m] the noise map, centred on x = -1.2
BED_X, BED_Y, BED_SPACING = 2.0, 1.4, 0.02  # [m] the soil bed, centred on x = 1.0
START_X = -1.95  # [m] the trunk's start
BASE_Z = 0.44  # [m] the trunk's start height above flat ground (it stands at about 0.42 m)
FOOTPRINT = 0.005  # [m] plastic sinkage that counts as a footprint


def gait(t: float) -> tuple[np.ndarray, np.ndarray]:
    """Joint position targets [rad], shape (12,), and velocity targets [rad/s], shape (12,), of the trot at
    time ``t`` [s]: hip = stand + A sin(phase), knee = stand - B max(0, -cos(phase)) (bent while the leg
    swings forward, i.e. while the hip angle decreases), the amplitudes ramped in over ``RAMP`` from 0 s and
    out over ``RAMP`` from ``WALK``."""
    ramp = float(np.clip(min(t, WALK + RAMP - t) / RAMP, 0.0, 1.0))
    w = 2.0 * math.pi * GAIT_HZ
    th = w * t + PHASES
    hip = STAND[1] + ramp * HIP_AMP * np.sin(th)
    knee = STAND[2] - ramp * KNEE_AMP * np.maximum(0.0, -np.cos(th))
    hip_v = ramp * HIP_AMP * w * np.cos(th)
    knee_v = -ramp * KNEE_AMP * w * np.where(np.cos(th) < 0.0, np.sin(th), 0.0)
    zeros = np.zeros(4)
    return (np.stack([zeros + STAND[0], hip, knee], 1).ravel(), np.stack([zeros, hip_v, knee_v], 1).ravel())


def noise_heights(tt) -> np.ndarray:
    """The noise map's heights [m], shape (ny * nx,): fractal Perlin noise, flattened to 0 over 0.5 m at both
    ends (a level start and a level step onto the bed)."""
    nx, ny = round(NOISE_X / NOISE_SPACING) + 1, round(NOISE_Y / NOISE_SPACING) + 1
    props = tt.TerrainProperties(frequency=1.3, x_size=NOISE_X, y_size=NOISE_Y, z_scale=0.14, x_samples=nx,
                                 y_samples=ny, fractal_octaves=3, seed=11)
    h = props.generate().reshape(ny, nx)
    h -= h.mean()
    x = np.linspace(0.0, NOISE_X, nx)
    edge = np.clip(np.minimum(x, NOISE_X - x) / 0.5, 0.0, 1.0)
    taper = edge * edge * (3.0 - 2.0 * edge)  # smoothstep
    return (np.maximum(h, -0.02) * taper[None, :]).ravel()


def noise_colors(heights: np.ndarray) -> np.ndarray:
    """Per-vertex colours of the noise map: greener low, browner high."""
    t = np.clip((heights + 0.03) / 0.09, 0.0, 1.0)[:, None]
    return (1.0 - t) * np.array([0.46, 0.62, 0.38]) + t * np.array([0.66, 0.6, 0.42])


def build(args) -> app.Scene:
    import taichi_terra as tt

    world = tt.World(dt=1e-3, n_envs=args.envs)
    heights = noise_heights(tt)
    nx, ny = round(NOISE_X / NOISE_SPACING) + 1, round(NOISE_Y / NOISE_SPACING) + 1
    world.add_heightmap(nx, ny, NOISE_X, NOISE_Y, -0.5 * NOISE_X, 0.0, heights, colors=noise_colors(heights))
    bx, by = round(BED_X / BED_SPACING) + 1, round(BED_Y / BED_SPACING) + 1
    soil = tt.SoilMaterial(bekker_kphi=2e7, sinkage_exponent=1.0, elastic_stiffness=2e8, damping=2e4)
    bed = world.add_deformable_terrain(bx, by, BED_X, BED_Y, 0.5 * BED_X, 0.0, np.zeros(bx * by), soil)
    robot = world.add_articulated_system(URDF, position=(START_X, 0.0, BASE_Z))
    q = robot.get_generalized_coordinate(0)
    q[7:] = np.tile(STAND, 4)
    robot.set_generalized_coordinate(q)
    robot.set_pd_gains(np.r_[np.zeros(6), np.full(12, KP)], np.r_[np.zeros(6), np.full(12, KD)])
    q_target, u_target = np.zeros(19), np.zeros(18)

    def controller(w):
        q_target[7:], u_target[6:] = gait(w.time)
        robot.set_pd_target(q_target, u_target)

    def report(w):
        q_end = robot.get_generalized_coordinate(0)
        st = bed.get_soil_state(0)
        plastic = st["plastic_sinkage"].reshape(by, bx)
        from scipy import ndimage

        prints, n_prints = ndimage.label(plastic > FOOTPRINT)
        depths = ndimage.maximum(plastic, prints, np.arange(1, n_prints + 1)) if n_prints else np.zeros(1)
        return (f"env 0 after {w.time:.2f} s: walked {q_end[0] - START_X:.2f} m along x (drifted "
                f"{q_end[1]:+.2f} m in y), trunk at z = {q_end[2]:.3f} m; {n_prints} footprints deeper than "
                f"{FOOTPRINT * 1e3:.0f} mm in the soil, {np.mean(depths) * 1e3:.1f} mm deep on average, the "
                f"deepest {plastic.max() * 1e3:.1f} mm")

    camera = OrbitCamera(target=(-0.1, 0.1, 0.0), distance=3.5, yaw=math.radians(-72.0), pitch=math.radians(30.0))
    return app.Scene(world, camera=camera, envs=None if args.envs == 1 else "all",
                     controller=controller, control_period=CONTROL_PERIOD, report=report,
                     viewer_options={"style": Style(color_by="plastic_sinkage", color_range=0.02)})


def main(argv=None) -> dict:
    return app.main(build, "quadruped_terrain", __doc__.splitlines()[0], argv, seconds=7.0, fps=20.0)


if __name__ == "__main__":
    main()
