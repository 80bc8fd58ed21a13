"""Pinocchio (``pin`` on the package index) as an oracle for articulated systems, in our conventions.

What differs between Pinocchio and taichi_terra, all converted here:

- joint order: Pinocchio orders sibling subtrees by joint name (urdfdom keeps joints in a map); ours follows
  the file. Joints are matched by name.
- a continuous joint: Pinocchio's coordinates are (cos, sin), ours the angle.
- a floating base: Pinocchio's q = [p, qx, qy, qz, qw] and v = [R^T v_o, R^T w] (base frame); ours
  q = [p, qw, qx, qy, qz] and u = [v_o, w] (world frame). With ``u = T v``, ``T = diag(R, R, P)``
  (P the joint permutation, T orthogonal): ``M = T M_pin T^T``, ``h = T h_pin - M dT/dt v`` where
  ``dT/dt v = (w x v_o, 0, ...)``, and ``du/dt = T dv/dt + dT/dt v``.
- ``crba`` fills the upper triangle only.

Pinocchio cannot read ``<capsule>`` collisions and does not read ``rotor_inertia``; the URDF handed to it
has its collision elements removed and the armature is set from our model.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")


def _strip_collisions(xml: str) -> str:
    root = ET.fromstring(xml)
    for link in root.iter("link"):
        for c in list(link.findall("collision")):
            link.remove(c)
    return ET.tostring(root, encoding="unicode")


def _quat_matrix(qw, qx, qy, qz) -> np.ndarray:
    return np.array([[1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)],
                     [2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx)],
                     [2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)]])


class PinocchioOracle:
    """Pinocchio's model of the same URDF as ``system`` (an ArticulatedSystem), answering in our coordinates."""

    def __init__(self, xml: str, system):
        self.system = system
        self.floating = system.floating
        text = _strip_collisions(xml)
        if self.floating:
            self.model = pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
        else:
            self.model = pin.buildModelFromXML(text)
        self.data = self.model.createData()
        names = list(self.model.names)
        base = 6 if self.floating else 0
        self.joint_names = system.get_joint_names()
        self._pin_joint = [names.index(n) for n in self.joint_names]
        self._continuous = [j.type == "continuous" for j in system.model.joints]
        nv = system.get_dof()
        self.perm = np.zeros((nv, nv))  # u = perm @ v for the joint part
        for k, jid in enumerate(self._pin_joint):
            self.perm[base + k, self.model.joints[jid].idx_v] = 1.0
        if self.floating:
            self.perm[:6, :6] = np.eye(6)  # (the base rotation is applied separately)
        arm = np.zeros(self.model.nv)
        for k, jid in enumerate(self._pin_joint):
            arm[self.model.joints[jid].idx_v] = system.model.joints[k].rotor_inertia
        self.model.armature = arm

    def _T(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """T (u = T v) and the base rotation R at our coordinates ``q``."""
        T = self.perm.copy()
        R = np.eye(3)
        if self.floating:
            R = _quat_matrix(*(q[3:7] / np.linalg.norm(q[3:7])))
            T[:3, :3] = R
            T[3:6, 3:6] = R
        return T, R

    def q_pin(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nq)
        base = 7 if self.floating else 0
        if self.floating:
            quat = q[3:7] / np.linalg.norm(q[3:7])
            out[:3] = q[:3]
            out[3:7] = [quat[1], quat[2], quat[3], quat[0]]
        for k, jid in enumerate(self._pin_joint):
            i = self.model.joints[jid].idx_q
            if self._continuous[k]:
                out[i:i + 2] = np.cos(q[base + k]), np.sin(q[base + k])
            else:
                out[i] = q[base + k]
        return out

    def v_pin(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        T, _R = self._T(q)
        return T.T @ u

    def _dT_v(self, u: np.ndarray) -> np.ndarray:
        out = np.zeros_like(u)
        if self.floating:
            out[:3] = np.cross(u[3:6], u[:3])
        return out

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        M = pin.crba(self.model, self.data, self.q_pin(q))
        M = np.triu(M) + np.triu(M, 1).T
        T, _R = self._T(q)
        return T @ M @ T.T

    def nonlinearities(self, q: np.ndarray, u: np.ndarray, gravity=(0.0, 0.0, -9.81)) -> np.ndarray:
        self.model.gravity.linear = np.asarray(gravity, float)
        h = pin.nonLinearEffects(self.model, self.data, self.q_pin(q), self.v_pin(q, u))
        T, _R = self._T(q)
        return T @ h - self.mass_matrix(q) @ self._dT_v(u)

    def forward_dynamics(self, q: np.ndarray, u: np.ndarray, tau: np.ndarray,
                         gravity=(0.0, 0.0, -9.81)) -> np.ndarray:
        """du/dt in our coordinates for the generalized force ``tau`` (ours) without contacts."""
        self.model.gravity.linear = np.asarray(gravity, float)
        T, _R = self._T(q)
        vdot = pin.aba(self.model, self.data, self.q_pin(q), self.v_pin(q, u), T.T @ tau)
        return T @ vdot + self._dT_v(u)


def random_state(system, rng, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Random coordinates (a unit base quaternion, joint angles within limits where finite) and velocities."""
    nq, nv = system.get_generalized_coordinate_dim(), system.get_dof()
    q = rng.uniform(-scale, scale, nq)
    base = 7 if system.floating else 0
    if system.floating:
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
    for k, j in enumerate(system.model.joints):
        lo = j.lower if j.lower is not None else -np.pi
        hi = j.upper if j.upper is not None else np.pi
        q[base + k] = rng.uniform(lo, hi)
    return q, rng.uniform(-scale, scale, nv)
