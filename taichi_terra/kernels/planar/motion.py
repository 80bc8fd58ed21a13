"""The planar kinematic step: driven objects follow their commands, passive bodies coast under ground friction.

``step.py`` runs it for each object of an env before the env's contact step. Poses are (x, y, heading,
steering angle) of the body frame; velocities are the world-frame (vx, vy) of the centre of mass and the yaw
rate.
"""
import taichi as ti

from ..common.schema import get, row
from .geometry import refresh_object, rot
from .arrays import (
    DRIVEN,
    KIN_ACKER,
    KIN_DIFF,
    KIN_OMNI,
    OF_COMX,
    OF_COMY,
    OF_GYR,
    OF_MU,
    OF_WHEELBASE,
    OI_KIN,
    OI_KIND,
    P_DT,
    P_G,
    PASSIVE,
    POSE_HEADING,
    POSE_STEER,
    POSE_X,
    POSE_Y,
    PlanarData,
)

vec2 = ti.math.vec2


@ti.func
def advance_object(D: ti.template(), e, k):
    dt, g = get(D.params, 0, 0, P_DT), get(D.params, 0, 0, P_G)
    kind = row(D.obj_i, 0, k)[OI_KIND]
    f = row(D.obj_f, 0, k)
    q = D.pose[e, k]
    com_l = vec2(f[OF_COMX], f[OF_COMY])
    if kind == PASSIVE:
        # keep the momentum of the last push, slowed by ground friction mu g (a spin at the radius of gyration)
        v = D.vel[e, k]
        brake = f[OF_MU] * g * dt
        speed = vec2(v[0], v[1]).norm()
        if speed > 0.0:
            shrink = ti.max(0.0, speed - brake) / speed
            v[0] *= shrink
            v[1] *= shrink
        if f[OF_GYR] > 0.0:
            v[2] = ti.math.sign(v[2]) * ti.max(0.0, ti.abs(v[2]) - brake / f[OF_GYR])
        com = vec2(q[POSE_X], q[POSE_Y]) + rot(ti.cos(q[POSE_HEADING]), ti.sin(q[POSE_HEADING]), com_l[0], com_l[1])
        com += vec2(v[0], v[1]) * dt
        q[POSE_HEADING] += v[2] * dt
        origin = com - rot(ti.cos(q[POSE_HEADING]), ti.sin(q[POSE_HEADING]), com_l[0], com_l[1])
        q[POSE_X], q[POSE_Y] = origin[0], origin[1]
        D.vel[e, k] = v
    elif kind == DRIVEN:
        u = D.cmd[e, k]
        kin = row(D.obj_i, 0, k)[OI_KIN]
        c, s = ti.cos(q[POSE_HEADING]), ti.sin(q[POSE_HEADING])
        v_origin = vec2(c * u[0], s * u[0])
        omega = 0.0
        if kin == KIN_DIFF:
            omega = u[1]
        elif kin == KIN_OMNI:
            v_origin = rot(c, s, u[0], u[1])
        elif kin == KIN_ACKER:
            omega = u[0] * ti.tan(q[POSE_STEER]) / f[OF_WHEELBASE]  # the steering angle held during the step
            q[POSE_STEER] = u[1]
        q[POSE_X] += v_origin[0] * dt
        q[POSE_Y] += v_origin[1] * dt
        q[POSE_HEADING] += omega * dt
        arm = rot(c, s, com_l[0], com_l[1])
        D.vel[e, k] = ti.Vector([v_origin[0] - omega * arm[1], v_origin[1] + omega * arm[0], omega])
    if kind == PASSIVE or kind == DRIVEN:
        q[POSE_HEADING] = ti.atan2(ti.sin(q[POSE_HEADING]), ti.cos(q[POSE_HEADING]))
        D.pose[e, k] = q
        refresh_object(D, e, k)
    D.pose0[e, k] = D.pose[e, k]


@ti.kernel
def refresh_all(model_i: ti.types.ndarray(), model_f: ti.types.ndarray(), pose: ti.types.ndarray(),
                wv: ti.types.ndarray()):
    """World coordinates of every piece in every env, after poses were set from outside."""
    for e, k in ti.ndrange(pose.shape[0], pose.shape[1]):
        refresh_object(PlanarData(model_i, model_i, model_f, pose=pose, wv=wv), e, k)
