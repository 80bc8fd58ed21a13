"""An 896 kg off-road buggy as an articulated system: its URDF generator and the loader that closes its loops.

    python -m taichi_terra.bodies.buggy     # (re)writes taichi_terra/bodies/assets/buggy.urdf

``scenes/buggy_soil.py`` drives it over a soil bed; ``taichi_terra.envs``'s ``BuggySlipControl`` trains a policy
on it.

Axes: x forward, y to the left, z up; the chassis frame's origin is midway between the axles. Every link frame
is parallel to the chassis frame in the design pose (all joint coordinates 0), which is the pose in which the
buggy stands still on rigid ground: springs and tyres are preloaded so that, there, they carry the static axle
loads exactly (see :func:`static_loads`). Boxes and cylinders collide; the viewer draws the body, tyres and rims
as the meshes of ``assets/meshes/`` (written by ``scenes/assets/make_meshes.py``) and every other part as its
collision shapes in grey.

The tree (``s`` = ``l``/``r``, corner ``c`` = ``fl``, ``fr``, ``rl``, ``rr``)::

    chassis ─┬─ c_lower_arm (revolute, along x) ── c_upright (revolute, along x)
             │        ├─ [front] c_knuckle (revolute, kingpin) ── c_hub (prismatic z) ── c_wheel
             │        └─ [rear]  c_hub (prismatic z: the tyre) ── c_wheel (continuous about y)
             ├─ c_upper_arm (revolute, along x)          ...  pinned to c_upright at the upper ball joint
             └─ steering_rack (prismatic y) ── s_tie_yoke (revolute z) ── s_tie_rod (revolute x)
                                                         ... pinned to the front knuckle's steering arm

* **Double wishbone**: lower and upper arms of equal length, parallel in the design pose (a parallel wishbone:
  the upright translates on a circle of the arms' length and does not change camber). The tree holds the
  upright on the lower arm's outer ball joint (a hinge along x: the only rotation the planar loop needs); a pin
  at the upper ball joint closes the loop (its out-of-plane direction is redundant and takes no impulse).
* **Coil-over**: a joint spring on each lower arm (a PD with a fixed position target: the target is the arm's
  free, unloaded angle, so the spring is preloaded by the static corner load in the design pose). Rates are
  given at the wheel: ``k_w`` [N/m] and ``c_w`` [N s/m]; on the arm ``kp = k_w L^2`` [N m/rad],
  ``kd = c_w L^2`` [N m s/rad] (the upright moves ``L dtheta`` vertically per arm rotation ``dtheta``).
* **Rack-and-pinion steering**: one prismatic rack (the steering input, a stiff position PD) moves two tie rods,
  each on a universal joint (yoke revolute about z, rod revolute about x) at the rack end, and pinned at its
  outer end to the front knuckle's steering arm. The arms point at the rear axle's middle (Ackermann), and each
  tie rod is as long as the wishbones and parallel to them, so wheel travel does not steer (no bump steer).
  This mechanism was chosen because the engine has only 1-dof joints and point pins: a ball joint at the rack
  is the two hinges of the yoke, the one at the steering arm is the pin (its third rotation, the rod's spin,
  is not needed).
* **Tyre**: a radial spring, a prismatic joint along the knuckle's (upright's) z between it and the wheel hub,
  preloaded like the coil-over (``k_t`` [N/m], ``c_t`` [N s/m]); the wheel turns on the hub.
* **Drive**: rear wheels on continuous joints with a velocity PD (kp = 0, kd > 0) and an effort limit (URDF
  ``<limit effort>`` is read for continuous joints and holds the drive at that torque).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ASSETS = Path(__file__).resolve().parent / "assets"
URDF_PATH = ASSETS / "buggy.urdf"  #: the URDF (its visuals name meshes in ``ASSETS / "meshes"``)
G = 9.81  # [m/s^2]

# ------------------------------------------------------------------------- design (SI units)
WHEEL_RADIUS = 0.3611  # [m]
FRONT_WIDTH, REAR_WIDTH = 0.126, 0.1562  # wheel (soil contact) widths [m]
X_FRONT, X_REAR = 1.1, -1.1  # axle positions in the chassis frame [m] (wheelbase 2.2 m)
Y_WHEEL = 0.75  # wheel centre plane from the middle [m] (track 1.5 m, both axles)
Y_INNER, Y_OUTER = 0.25, 0.65  # wishbones' inner pivots and outer ball joints from the middle [m]
ARM = Y_OUTER - Y_INNER  # wishbone length [m]
RIDE_HEIGHT = 0.55  # chassis origin above flat rigid ground in the design pose [m]
Z_LOWER, Z_UPPER = -0.30, -0.04  # wishbone heights in the chassis frame [m]
Z_TIE = -0.17  # tie rods' and rack's height in the chassis frame [m]
STEER_ARM = 0.15  # steering arm length, kingpin to tie-rod pin [m]
STEER_LIMIT = 0.55  # knuckle angle limit [rad]
RACK_LIMIT = 0.07  # rack travel limit [m]
SUSPENSION_BUMP, SUSPENSION_DROOP = 0.35, -0.45  # lower-arm angle limits [rad]
TYRE_TRAVEL = (-0.06, 0.10)  # hub travel limits relative to the knuckle [m]

# masses [kg]: 896 in all, 745.4 in the chassis (83 %)
MASS = {
    "chassis": 745.4,
    "lower_arm": 5.0, "upper_arm": 3.5, "upright": 5.0, "knuckle": 3.0, "hub": 4.0,
    "front_wheel": 16.0, "rear_wheel": 19.0,
    "steering_rack": 2.0, "tie_yoke": 0.3, "tie_rod": 1.0,
}
CHASSIS_COM = (-0.18, 0.0, 0.0)  # [m], chassis frame: rear-biased (engine behind the seats)
CHASSIS_BOX = (2.6, 1.1, 0.7)  # extent of the uniform box whose inertia the chassis gets [m]

# suspension and tyre design
SAG = 0.10  # [m] static wheel-travel sag: the coil-over's free length is this far below the design pose
DAMPING_RATIO = 0.35  # [-] of the sprung corner mass on the coil-over
TYRE_STIFFNESS = 1.5e5  # [N/m] radial
TYRE_DAMPING = 800.0  # [N s/m] radial

# drive and steering
DRIVE_KD = 3000.0  # [N m s/rad] velocity gain of each rear wheel
DRIVE_EFFORT = 800.0  # [N m] effort limit of each rear wheel joint
RACK_KP, RACK_KD = 1.0e6, 2.0e4  # [N/m], [N s/m] rack position servo (stiff: steering a standing car scrubs)

# solver
#: [m/s] the scene's and the benchmark's sweep tolerance (the world's default is 1e-6): the sweeps stop once no
#: row's velocity moves by more, so a soil point's sinkage is off by at most tol * dt = 0.1 um per 1 ms step,
#: about 0.04 mm over a wheel's passage over a sample (0.3 m of contact at 0.75 m/s, 400 steps), against ruts of
#: 57 to 64 mm. Measured over 2 s of driving at 4 cm: sinkage within 0.022 mm and the chassis within 0.04 mm of
#: a run at 1e-6, in 3 sweeps a step instead of 22.
SOLVER_TOLERANCE = 1e-4

CORNERS = ("fl", "fr", "rl", "rr")


def side(corner: str) -> float:
    """+1 for a left corner, -1 for a right one."""
    return 1.0 if corner[1] == "l" else -1.0


def is_front(corner: str) -> bool:
    return corner[0] == "f"


def axle_x(corner: str) -> float:
    return X_FRONT if is_front(corner) else X_REAR


def wheel_centre_z(corner: str) -> float:
    """A wheel centre's height in the chassis frame in the design pose [m]: the wheel's rim touches flat ground
    (the tyre spring's free position is ``tyre_deflection`` below the hub's design position, so the spring
    carries the static load there)."""
    return WHEEL_RADIUS - RIDE_HEIGHT


def steering_arm_point(corner: str) -> np.ndarray:
    """The tie-rod pin on a front knuckle's steering arm, in the chassis frame [m]: ``STEER_ARM`` from the
    kingpin towards the rear axle's middle (Ackermann)."""
    s = side(corner)
    d = np.array([X_REAR - X_FRONT, -s * Y_OUTER])
    d /= np.linalg.norm(d)
    xy = np.array([X_FRONT, s * Y_OUTER]) + STEER_ARM * d
    return np.array([xy[0], xy[1], Z_TIE])


def tie_rod_inner_y() -> float:
    """|y| of the tie rods' inner pivots on the rack [m]: one wishbone length inboard of the steering-arm
    pin, so the rods are as long as, and parallel to, the wishbones (no bump steer)."""
    return abs(steering_arm_point("fl")[1]) - ARM


def rack_to_steer(rack: float) -> float:
    """Mean front wheel angle [rad] (positive: to the left) for a rack position [m], to first order."""
    lever = -(steering_arm_point("fl")[0] - X_FRONT)  # the pin's distance behind the kingpin [m]
    return -rack / lever


def steer_to_rack(angle: float) -> float:
    """Rack position [m] for a mean front wheel angle [rad] (positive: to the left), to first order."""
    lever = -(steering_arm_point("fl")[0] - X_FRONT)
    return -angle * lever


# ------------------------------------------------------------------------- statics
def corner_mass(corner: str) -> dict:
    """Masses of one corner's links [kg]."""
    out = {"lower_arm": MASS["lower_arm"], "upper_arm": MASS["upper_arm"], "upright": MASS["upright"],
           "hub": MASS["hub"], "wheel": MASS["front_wheel" if is_front(corner) else "rear_wheel"]}
    if is_front(corner):
        out["knuckle"] = MASS["knuckle"]
    return out


def total_mass() -> float:
    """Sum of all link masses [kg] (896 by design)."""
    steering = MASS["steering_rack"] + 2 * (MASS["tie_yoke"] + MASS["tie_rod"])
    return MASS["chassis"] + steering + sum(sum(corner_mass(c).values()) for c in CORNERS)


def static_loads() -> dict:
    """Static design loads: the ground's normal force on each wheel [N] (``wheel_load``, per corner in
    ``CORNERS`` order) from the whole car's centre of mass between the axles (left = right by symmetry), the
    coil-over's force at the wheel in the design pose [N] (``spring_force``: by virtual work, the wheel load
    less the weight of what moves with the upright and half of the arms'), the tyre's radial force [N]
    (``tyre_force``: the wheel load less hub and wheel) and its deflection [m]."""
    # centre of mass along x of the whole car (links in their design positions)
    xs = [(MASS["chassis"], CHASSIS_COM[0]), (MASS["steering_rack"] + 2 * (MASS["tie_yoke"] + MASS["tie_rod"]),
                                             steering_arm_point("fl")[0])]
    for c in CORNERS:
        xs.append((sum(corner_mass(c).values()), axle_x(c)))
    m = sum(a for a, _ in xs)
    x_com = sum(a * x for a, x in xs) / m
    front_share = (x_com - X_REAR) / (X_FRONT - X_REAR)
    wheel = np.array([0.5 * front_share * m * G if is_front(c) else 0.5 * (1.0 - front_share) * m * G
                      for c in CORNERS])
    spring, tyre = [], []
    for c, n in zip(CORNERS, wheel):
        cm = corner_mass(c)
        moving = sum(v for k, v in cm.items() if k not in ("lower_arm", "upper_arm"))
        spring.append(n - G * moving - 0.5 * G * (cm["lower_arm"] + cm["upper_arm"]))
        tyre.append(n - G * (cm["hub"] + cm["wheel"]))
    tyre = np.array(tyre)
    return {"mass": m, "x_com": x_com, "front_share": front_share, "wheel_load": wheel,
            "spring_force": np.array(spring), "tyre_force": tyre, "tyre_deflection": tyre / TYRE_STIFFNESS}


def suspension_rates() -> dict:
    """Coil-over rates at the wheel per corner: stiffness ``k_w = spring_force / SAG`` [N/m] and damping
    ``c_w = 2 zeta sqrt(k_w m_s)`` [N s/m] for the sprung corner mass ``m_s = spring_force / g`` [kg]; and the
    arm's joint gains ``kp = k_w L^2`` [N m/rad], ``kd = c_w L^2`` [N m s/rad], free angle ``-SAG / L`` [rad]."""
    f = static_loads()["spring_force"]
    k = f / SAG
    c = 2.0 * DAMPING_RATIO * np.sqrt(k * f / G)
    return {"k_wheel": k, "c_wheel": c, "kp": k * ARM ** 2, "kd": c * ARM ** 2,
            "free_angle": np.full(4, -SAG / ARM), "frequency_hz": np.sqrt(k / (f / G)) / (2 * math.pi)}


# ------------------------------------------------------------------------- URDF text
def _f(x: float) -> str:
    return f"{x:.9g}"


def _v(v) -> str:
    return " ".join(_f(float(a)) for a in v)


def _box_inertia(m, sx, sy, sz):
    return (m * (sy ** 2 + sz ** 2) / 12, m * (sx ** 2 + sz ** 2) / 12, m * (sx ** 2 + sy ** 2) / 12)


def _cyl_y_inertia(m, r, w):
    """A cylinder with its axis along y: (ixx, iyy, izz) [kg m^2]."""
    a = m * (3 * r ** 2 + w ** 2) / 12
    return (a, m * r ** 2 / 2, a)


@dataclass
class _Link:
    name: str
    origin: np.ndarray  # frame origin in the chassis frame, design pose [m]
    mass: float
    com: tuple  # in the link frame [m]
    inertia: tuple  # (ixx, iyy, izz) about the com, link axes [kg m^2]
    shapes: list = field(default_factory=list)  # (xml geometry, xyz, rpy)
    #: what the viewer draws: (xml geometry, xyz, rpy, material name); none: each shape in ``FRAME``
    visuals: list = field(default_factory=list)

    def xml(self) -> str:
        ixx, iyy, izz = self.inertia
        out = [f'  <link name="{self.name}">',
               f'    <inertial><origin xyz="{_v(self.com)}"/><mass value="{_f(self.mass)}"/>',
               f'      <inertia ixx="{_f(ixx)}" iyy="{_f(iyy)}" izz="{_f(izz)}" ixy="0" ixz="0" iyz="0"/>'
               f'</inertial>']
        for geom, xyz, rpy in self.shapes:
            out.append(f'    <collision><origin xyz="{_v(xyz)}" rpy="{_v(rpy)}"/><geometry>{geom}</geometry>'
                       f'</collision>')
        for geom, xyz, rpy, material in self.visuals or [(*shape, "frame") for shape in self.shapes]:
            out.append(f'    <visual><origin xyz="{_v(xyz)}" rpy="{_v(rpy)}"/><geometry>{geom}</geometry>'
                       f'<material name="{material}"/></visual>')
        out.append("  </link>")
        return "\n".join(out)


#: the colours of the buggy's visuals (``assets/meshes/`` holds its body, tyres and rims)
MATERIALS = {"paint": (0.86, 0.36, 0.08), "rubber": (0.11, 0.11, 0.12), "steel": (0.72, 0.72, 0.74),
             "frame": (0.26, 0.27, 0.3)}


def _mesh(name: str) -> str:
    return f'<mesh filename="meshes/{name}.obj"/>'


def _box(sx, sy, sz) -> str:
    return f'<box size="{_f(sx)} {_f(sy)} {_f(sz)}"/>'


def _cyl(r, length) -> str:
    return f'<cylinder radius="{_f(r)}" length="{_f(length)}"/>'


def _joint(name, jtype, parent: _Link, child: _Link, axis=None, limit=None, dynamics=None) -> str:
    xyz = child.origin - parent.origin
    out = [f'  <joint name="{name}" type="{jtype}"><parent link="{parent.name}"/><child link="{child.name}"/>',
           f'    <origin xyz="{_v(xyz)}" rpy="0 0 0"/>']
    if axis is not None:
        out.append(f'    <axis xyz="{_v(axis)}"/>')
    if limit is not None:
        out.append("    <limit " + " ".join(f'{k}="{_f(v)}"' for k, v in limit.items()) + "/>")
    if dynamics is not None:
        out.append("    <dynamics " + " ".join(f'{k}="{_f(v)}"' for k, v in dynamics.items()) + "/>")
    out.append("  </joint>")
    return "\n".join(out)


def buggy_urdf() -> str:
    """The buggy's URDF text (deterministic; :data:`URDF_PATH` holds a copy)."""
    links, joints = [], []
    chassis = _Link("chassis", np.zeros(3), MASS["chassis"], CHASSIS_COM,
                    _box_inertia(MASS["chassis"], *CHASSIS_BOX), [
                        (_box(2.3, 0.5, 0.26), (0.0, 0.0, -0.14), (0, 0, 0)),  # floor tub
                        (_box(0.9, 1.0, 0.3), (-0.15, 0.0, 0.08), (0, 0, 0)),  # cockpit and seats
                        (_box(0.7, 0.9, 0.35), (-0.95, 0.0, 0.12), (0, 0, 0)),  # engine bay
                        (_box(0.1, 1.0, 0.7), (0.35, 0.0, 0.55), (0, 0, 0)),  # front roll hoop
                        (_box(0.1, 1.0, 0.7), (-0.55, 0.0, 0.55), (0, 0, 0)),  # rear roll hoop
                        (_box(1.0, 1.0, 0.06), (-0.1, 0.0, 0.93), (0, 0, 0)),  # roof
                    ])
    cage = [(_box(0.06, 0.06, 0.7), (x, y, 0.55), (0, 0, 0), "frame") for x in (0.35, -0.55) for y in (-0.47, 0.47)]
    cage += [(_box(0.06, 1.0, 0.06), (x, 0.0, 0.9), (0, 0, 0), "frame") for x in (0.35, -0.55)]  # the hoops' tops
    cage += [(_box(0.96, 0.06, 0.06), (-0.1, y, 0.93), (0, 0, 0), "frame") for y in (-0.47, 0.47)]  # roof rails
    chassis.visuals = [(_mesh("buggy_body"), (0, 0, 0), (0, 0, 0), "paint"), *cage,
                       (_box(0.5, 0.42, 0.08), (-0.2, 0.0, 0.27), (0, 0, 0), "rubber")]  # the seats
    links.append(chassis)
    h = Z_UPPER - Z_LOWER
    for c in CORNERS:
        s, x = side(c), axle_x(c)
        m = corner_mass(c)
        lower = _Link(f"{c}_lower_arm", np.array([x, s * Y_INNER, Z_LOWER]), m["lower_arm"], (0, s * ARM / 2, 0),
                      _box_inertia(m["lower_arm"], 0.24, ARM, 0.04),
                      [(_box(0.24, ARM, 0.04), (0, s * ARM / 2, 0), (0, 0, 0))])
        upper = _Link(f"{c}_upper_arm", np.array([x, s * Y_INNER, Z_UPPER]), m["upper_arm"], (0, s * ARM / 2, 0),
                      _box_inertia(m["upper_arm"], 0.18, ARM, 0.03),
                      [(_box(0.18, ARM, 0.03), (0, s * ARM / 2, 0), (0, 0, 0))])
        upright = _Link(f"{c}_upright", np.array([x, s * Y_OUTER, Z_LOWER]), m["upright"], (0, 0, h / 2),
                        _box_inertia(m["upright"], 0.06, 0.06, h), [(_box(0.06, 0.06, h), (0, 0, h / 2), (0, 0, 0))])
        hub = _Link(f"{c}_hub", np.array([x, s * Y_WHEEL, wheel_centre_z(c)]), m["hub"], (0, 0, 0),
                    _cyl_y_inertia(m["hub"], 0.08, 0.1))
        width = FRONT_WIDTH if is_front(c) else REAR_WIDTH
        wheel = _Link(f"{c}_wheel", hub.origin.copy(), m["wheel"], (0, 0, 0),
                      _cyl_y_inertia(m["wheel"], WHEEL_RADIUS, width),
                      [(_cyl(WHEEL_RADIUS, width), (0, 0, 0), (math.pi / 2, 0, 0))])
        wheel.visuals = [(_mesh(f"buggy_tyre_{'front' if is_front(c) else 'rear'}"), (0, 0, 0), (0, 0, 0), "rubber"),
                         (_mesh("buggy_rim"), (0, 0, 0), (0, 0, math.pi if s < 0 else 0.0), "steel")]
        axis_x = (s, 0, 0)  # positive arm angle: the wheel moves up (bump), on both sides
        links += [lower, upper, upright]
        joints.append(_joint(f"{c}_lower_arm_joint", "revolute", chassis, lower, axis_x,
                             {"lower": SUSPENSION_DROOP, "upper": SUSPENSION_BUMP, "effort": 1e5, "velocity": 50}))
        joints.append(_joint(f"{c}_upper_arm_joint", "revolute", chassis, upper, axis_x,
                             {"lower": SUSPENSION_DROOP - 0.1, "upper": SUSPENSION_BUMP + 0.1, "effort": 1e5,
                              "velocity": 50}))
        joints.append(_joint(f"{c}_upright_joint", "continuous", lower, upright, axis_x))
        carrier = upright
        if is_front(c):
            knuckle = _Link(f"{c}_knuckle", upright.origin.copy(), m["knuckle"], (0, 0, h / 2),
                            _box_inertia(m["knuckle"], 0.08, 0.08, h))
            arm = steering_arm_point(c) - knuckle.origin
            yaw = math.atan2(arm[1], arm[0])
            knuckle.shapes.append((_box(STEER_ARM, 0.03, 0.03), (arm[0] / 2, arm[1] / 2, arm[2]), (0, 0, yaw)))
            links.append(knuckle)
            joints.append(_joint(f"{c}_steer_joint", "revolute", upright, knuckle, (0, 0, 1),
                                 {"lower": -STEER_LIMIT, "upper": STEER_LIMIT, "effort": 1e5, "velocity": 50}))
            carrier = knuckle
        links += [hub, wheel]
        joints.append(_joint(f"{c}_tyre_joint", "prismatic", carrier, hub, (0, 0, 1),
                             {"lower": TYRE_TRAVEL[0], "upper": TYRE_TRAVEL[1], "effort": 1e6, "velocity": 50}))
        wheel_limit = {"effort": DRIVE_EFFORT, "velocity": 100.0} if not is_front(c) else None
        joints.append(_joint(f"{c}_wheel_joint", "continuous", hub, wheel, (0, 1, 0), wheel_limit,
                             {"damping": 0.5}))
    # steering: rack, then a universal joint and a tie rod per side
    x_t = steering_arm_point("fl")[0]
    y_t = tie_rod_inner_y()
    rack = _Link("steering_rack", np.array([x_t, 0.0, Z_TIE]), MASS["steering_rack"], (0, 0, 0),
                 _box_inertia(MASS["steering_rack"], 0.05, 2 * y_t, 0.05),
                 [(_box(0.05, 2 * y_t, 0.05), (0, 0, 0), (0, 0, 0))])
    links.append(rack)
    joints.append(_joint("steering_rack_joint", "prismatic", chassis, rack, (0, 1, 0),
                         {"lower": -RACK_LIMIT, "upper": RACK_LIMIT, "effort": 1e5, "velocity": 10}))
    for c in ("fl", "fr"):
        s, tag = side(c), c[1]
        yoke = _Link(f"{tag}_tie_yoke", np.array([x_t, s * y_t, Z_TIE]), MASS["tie_yoke"], (0, 0, 0),
                     _box_inertia(MASS["tie_yoke"], 0.04, 0.04, 0.04))
        rod = _Link(f"{tag}_tie_rod", yoke.origin.copy(), MASS["tie_rod"], (0, s * ARM / 2, 0),
                    _box_inertia(MASS["tie_rod"], 0.025, ARM, 0.025),
                    [(_box(0.025, ARM, 0.025), (0, s * ARM / 2, 0), (0, 0, 0))])
        links += [yoke, rod]
        joints.append(_joint(f"{tag}_tie_yaw_joint", "continuous", rack, yoke, (0, 0, 1)))
        joints.append(_joint(f"{tag}_tie_pitch_joint", "continuous", yoke, rod, (s, 0, 0)))
    head = ("<!-- An 896 kg off-road buggy: double-wishbone suspension, rack-and-pinion steering, tyre springs,\n"
            "     rear-wheel drive. Written by taichi_terra/bodies/buggy.py; the suspension loops are closed by pins\n"
            "     that taichi_terra.bodies.buggy.add_buggy adds (a URDF tree cannot hold them). -->")
    materials = [f'  <material name="{name}"><color rgba="{_v(rgb)} 1"/></material>' for name, rgb in MATERIALS.items()]
    return "\n".join([head, '<robot name="buggy">', *materials, *[link.xml() for link in links], *joints,
                      "</robot>"]) + "\n"


def write_urdf(path=URDF_PATH) -> Path:
    """Write :func:`buggy_urdf` to ``path``; returns the path."""
    path = Path(path)
    path.write_text(buggy_urdf())
    return path


# ------------------------------------------------------------------------- loading into a world
@dataclass
class Buggy:
    """A buggy added to a world (:func:`add_buggy`).

    Attributes:
        system: the :class:`~taichi_terra.ArticulatedSystem`.
        pins: the six loop-closing pins: four upper ball joints, two tie-rod ends.
        rack: velocity index of the steering rack (the steering input) [m].
        rear_wheels, front_wheels: velocity indices of the wheel joints (left, right).
        suspension: velocity indices of the lower arms (``CORNERS`` order).
        tyres: velocity indices of the tyre springs (``CORNERS`` order).
        steer: velocity indices of the front knuckles (left, right) [rad].
        kp, kd: the gains set [per dof], q_target (nq,), u_target (nv,): the PD targets set.
    """

    system: object
    pins: list
    rack: int
    rear_wheels: tuple
    front_wheels: tuple
    suspension: tuple
    tyres: tuple
    steer: tuple
    kp: np.ndarray
    kd: np.ndarray
    q_target: np.ndarray
    u_target: np.ndarray

    @property
    def mass(self) -> float:
        return self.system.model.total_mass

    def set_commands(self, *, speed: float | None = None, rack: float | None = None, env=None) -> None:
        """Drive the rear wheels at ``speed`` [m/s at the ground, wheel radius 0.3611 m] (0: they brake) and put
        the rack at ``rack`` [m] (positive steers right; :func:`steer_to_rack`); None leaves a command as it is."""
        if speed is not None:
            for i in self.rear_wheels:
                self.u_target[i] = speed / WHEEL_RADIUS
        if rack is not None:
            self.q_target[1 + self.rack] = rack  # (q has one more entry than u: the base quaternion)
        self.system.set_pd_target(self.q_target, self.u_target, env)

    def drive_off(self, env=None) -> None:
        """Release the rear drives (kd 0): the wheels roll freely."""
        kd = self.kd.copy()
        kd[list(self.rear_wheels)] = 0.0
        self.system.set_pd_gains(self.kp, kd, env)


def add_buggy(world, position=(0.0, 0.0, RIDE_HEIGHT), orientation=(1.0, 0.0, 0.0, 0.0), *, urdf=None,
              speed: float = 0.0, rack: float = 0.0) -> Buggy:
    """Add the buggy to ``world`` (before its first step): the system from :data:`URDF_PATH` (written first
    if missing; ``urdf`` overrides it), its six loop-closing pins, and its drives: coil-over and tyre springs
    (PD with fixed targets), the rack's position servo at ``rack`` [m] and the rear wheels' velocity drives at
    ``speed`` [m/s at the ground]. ``position`` [m] is the chassis origin: ``RIDE_HEIGHT`` above flat ground
    puts the tyres on it in the design pose."""
    if urdf is None:
        if not URDF_PATH.exists():
            write_urdf()
        urdf = str(URDF_PATH)
    system = world.add_articulated_system(urdf, position=position, orientation=orientation)
    h = Z_UPPER - Z_LOWER
    pins = []
    for c in CORNERS:
        s = side(c)
        pins.append(world.add_pin(system, f"{c}_upper_arm", (0.0, s * ARM, 0.0), system, f"{c}_upright", (0.0, 0.0, h)))
    for c in ("fl", "fr"):
        s = side(c)
        arm = steering_arm_point(c) - np.array([X_FRONT, s * Y_OUTER, Z_LOWER])
        pins.append(world.add_pin(system, f"{c[1]}_tie_rod", (0.0, s * ARM, 0.0), system, f"{c}_knuckle", tuple(arm)))
    v = system.get_generalized_velocity_index
    nv, nq = system.get_dof(), system.get_generalized_coordinate_dim()
    kp, kd = np.zeros(nv), np.zeros(nv)
    q_target, u_target = np.zeros(nq), np.zeros(nv)
    rates, loads = suspension_rates(), static_loads()
    for k, c in enumerate(CORNERS):
        i = v(f"{c}_lower_arm_joint")
        kp[i], kd[i], q_target[1 + i] = rates["kp"][k], rates["kd"][k], rates["free_angle"][k]
        i = v(f"{c}_tyre_joint")
        kp[i], kd[i], q_target[1 + i] = TYRE_STIFFNESS, TYRE_DAMPING, -loads["tyre_force"][k] / TYRE_STIFFNESS
    rear = tuple(v(f"{c}_wheel_joint") for c in ("rl", "rr"))
    kd[list(rear)] = DRIVE_KD
    i_rack = v("steering_rack_joint")
    kp[i_rack], kd[i_rack] = RACK_KP, RACK_KD
    system.set_pd_gains(kp, kd)
    buggy = Buggy(system, pins, i_rack, rear, tuple(v(f"{c}_wheel_joint") for c in ("fl", "fr")),
                  tuple(v(f"{c}_lower_arm_joint") for c in CORNERS), tuple(v(f"{c}_tyre_joint") for c in CORNERS),
                  tuple(v(f"{c}_steer_joint") for c in ("fl", "fr")), kp, kd, q_target, u_target)
    buggy.set_commands(speed=speed, rack=rack)
    return buggy


def design_summary() -> str:
    """The design numbers, one per line."""
    loads, rates = static_loads(), suspension_rates()
    lines = [f"total mass {total_mass():.3f} kg (chassis {MASS['chassis']} kg), centre of mass x = "
             f"{loads['x_com']:+.3f} m, front share {loads['front_share'] * 100:.1f} %",
             f"wheel loads [N] {np.round(loads['wheel_load'], 1).tolist()}",
             f"coil-over at the wheel: k [N/m] {np.round(rates['k_wheel'], 0).tolist()}, c [N s/m] "
             f"{np.round(rates['c_wheel'], 0).tolist()}, sag {SAG} m, {np.round(rates['frequency_hz'], 2).tolist()} Hz",
             f"on the lower arm: kp [N m/rad] {np.round(rates['kp'], 1).tolist()}, kd [N m s/rad] "
             f"{np.round(rates['kd'], 1).tolist()}, free angle {rates['free_angle'][0]:.3f} rad",
             f"tyre: k {TYRE_STIFFNESS:g} N/m, c {TYRE_DAMPING:g} N s/m, static deflection [mm] "
             f"{np.round(loads['tyre_deflection'] * 1e3, 2).tolist()}"]
    return "\n".join(lines)


if __name__ == "__main__":
    print(f"wrote {write_urdf()}")
    print(design_summary())
