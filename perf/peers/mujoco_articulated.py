"""MuJoCo peer of ``python -m perf articulated`` (perf/modes/articulated.py): the same two articulated models, built in MuJoCo and timed.

Models (SI units: m, kg, s, rad, N, N m):
  * ``chain60``: ``make_chain_urdf(60)`` (60 capsule rods of 0.1 m, 0.1 kg, revolute joints alternating
    x / y, limits +-3.14 rad) on a fixed base at (0, 0, 10) m, every joint at 0.05 rad, at rest; contacts
    disabled (the bench's chain world has no ground and no self-collision).
  * ``quadruped_heightmap``: ``tests/data/urdf/quadruped.urdf`` (30 kg, 12 revolute joints) on a free base
    at (0, 0, 0.46) m, identity orientation, joints at STAND = [0, 0.6, -1.2] * 4 rad, at rest, on a 65 x 65
    height map over 4 m x 4 m centred at the origin, z = 0.02 sin(2 x); PD drives kp = 300 N m/rad,
    kd = 20 N m s/rad towards STAND (MuJoCo ``<position kp kv>`` actuators, control = target angle), held
    at the URDF effort limit 33.5 N m (``forcerange``). ``joint_friction=False`` zeroes the joints' dry
    friction (the bench's ``quadruped_heightmap_no_joint_friction``).
Both: gravity (0, 0, -9.81) m/s^2, dt = 1e-3 s, integrator ``implicitfast`` (joint damping and the
actuators' kv taken implicitly), MuJoCo's default Newton solver and soft contacts (default solref/solimp),
pyramidal cone, condim 3, sliding friction 0.8 (taichi_terra's default material).

The MJCF is written from taichi_terra's own parsed model (``parse_urdf``: fixed joints merged, so the IMU
and feet are folded into the trunk and shanks with the same numbers): link mass, COM and full inertia
tensor (link axes), joint placement / axis / range, URDF ``<dynamics damping friction rotor_inertia>`` as
MuJoCo ``damping`` / ``frictionloss`` / ``armature``, and the collision shapes (box, sphere, cylinder,
capsule). A system's links do not collide with each other (taichi_terra's ``self_collision=False``): robot
geoms have contype 1 / conaffinity 0, the height map contype 0 / conaffinity 1.

Not matched (MuJoCo has no equivalent or does it differently): taichi_terra clamps joint velocities to the
URDF velocity limit and takes the PD stiffness implicitly too (M + dt K_d + dt^2 K_p); its joint limits,
joint friction and contacts are hard rows of its own solver, MuJoCo's are soft constraints.

Height map layout (as in ``mujoco_peer.py``): ``hfield_data[r*ncol + c]`` is the vertex at column c = x,
row r = y, first row at -y, which is taichi_terra's ``heights[iy*nx + ix]``; elevations are normalised by
the compiler, so size[2] = hmax - hmin and the geom sits at z = hmin.

``mujoco`` is imported lazily: this module imports fine without it.
"""
import statistics
import time
from pathlib import Path

import numpy as np

from .mujoco_peer import timed_steps

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "urdf"
STAND = [0.0, 0.6, -1.2] * 4      # rad, the quadruped's PD target and initial joint coordinates
KP, KD = 300.0, 20.0              # N m/rad, N m s/rad
FRICTION = 0.8                    # taichi_terra's default material friction (materials.py)
MODELS = ("chain60", "quadruped_heightmap")


def mujoco_available() -> bool:
    """True when the ``mujoco`` package can be imported."""
    try:
        import mujoco
    except ImportError:
        return False
    return hasattr(mujoco, "MjModel")


def _f(values) -> str:
    return " ".join(repr(float(v)) for v in np.ravel(values))


def _quat(rotation) -> str:
    """MJCF quat (w x y z) of a rotation matrix (columns = child axes in the parent frame)."""
    import mujoco
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(rotation, dtype=np.float64).ravel())
    return _f(q)


def _geom(shape, collide: str) -> str:
    """MJCF geom of a taichi_terra :class:`CollisionShape` (URDF full sizes -> MuJoCo half sizes)."""
    p = np.asarray(shape.params, dtype=float)
    if shape.kind == "box":
        size = p / 2
    elif shape.kind == "sphere":
        size = p[:1]
    elif shape.kind in ("cylinder", "capsule"):
        size = [p[0], p[1] / 2]
    else:
        raise ValueError(f"collision shape {shape.kind!r} is not handled by this peer")
    return (f'<geom type="{shape.kind}" size="{_f(size)}" pos="{_f(shape.position)}" '
            f'quat="{_quat(shape.rotation)}" {collide}/>')


def _body_xml(model, index: int, joint_friction: bool, collide: str, indent: str) -> list:
    """MJCF lines of link ``index`` (> 0) and its subtree; the body frame is the joint frame."""
    link, joint = model.links[index], model.joints[index - 1]
    lines = [f'{indent}<body name="{link.name}" pos="{_f(joint.position)}" quat="{_quat(joint.rotation)}">']
    i = link.inertia
    lines.append(f'{indent}  <inertial pos="{_f(link.com)}" mass="{link.mass!r}" '
                 f'fullinertia="{_f([i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]])}"/>')
    kind = "slide" if joint.type == "prismatic" else "hinge"
    attrs = f'name="{joint.name}" type="{kind}" axis="{_f(joint.axis)}" damping="{joint.damping!r}"'
    attrs += f' frictionloss="{joint.friction if joint_friction else 0.0!r}" armature="{joint.rotor_inertia!r}"'
    if joint.lower is not None and joint.type != "continuous":
        attrs += f' range="{joint.lower!r} {joint.upper!r}"'
    lines.append(f"{indent}  <joint {attrs}/>")
    lines += [f"{indent}  {_geom(s, collide)}" for s in link.collisions]
    for k, j in enumerate(model.joints):
        if j.parent == link.name:
            lines += _body_xml(model, k + 1, joint_friction, collide, indent + "  ")
    lines.append(f"{indent}</body>")
    return lines


def _heightmap_xml() -> tuple:
    """(asset line, geom line) of the bench's 65 x 65 height map, z = 0.02 sin(2x) m over 4 m x 4 m."""
    n = 65
    x = np.linspace(-2.0, 2.0, n)
    z = (0.02 * np.sin(2.0 * x)[None, :] * np.ones((n, 1))).ravel()   # heights[iy*n + ix], as the bench
    zmin, span = float(z.min()), float(z.max() - z.min())
    asset = (f'<hfield name="terrain" nrow="{n}" ncol="{n}" size="2.0 2.0 {span!r} 0.1" '
             f'elevation="{_f((z - zmin) / span)}"/>')
    geom = (f'<geom name="terrain" type="hfield" hfield="terrain" pos="0 0 {zmin!r}" contype="0" '
            f'conaffinity="1" friction="{FRICTION} 0.005 0.0001" condim="3"/>')
    return asset, geom


def mjcf(model_name: str, joint_friction: bool = True) -> str:
    """MJCF text of ``model_name`` ("chain60" or "quadruped_heightmap"); see the module docstring."""
    from taichi_terra.bodies.urdf import make_chain_urdf, parse_urdf
    if model_name == "chain60":
        model, base_pos = parse_urdf(make_chain_urdf(60), base="fixed"), (0.0, 0.0, 10.0)
        flags = '<flag contact="disable"/>'
        collide, asset, ground = 'contype="0" conaffinity="0"', "", ""
    elif model_name == "quadruped_heightmap":
        model, base_pos, flags = parse_urdf(DATA / "quadruped.urdf"), (0.0, 0.0, 0.46), ""
        collide = f'contype="1" conaffinity="0" condim="3" friction="{FRICTION} 0.005 0.0001"'
        asset, ground = _heightmap_xml()
    else:
        raise ValueError(f"unknown model {model_name!r}; expected one of {MODELS}")
    root = model.links[0]
    body = [f'<body name="{root.name}" pos="{_f(base_pos)}">']
    if model.base == "floating":
        i = root.inertia
        body += ['  <freejoint name="base"/>',
                 f'  <inertial pos="{_f(root.com)}" mass="{root.mass!r}" '
                 f'fullinertia="{_f([i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]])}"/>']
    body += [f"  {_geom(s, collide)}" for s in root.collisions]
    for k, j in enumerate(model.joints):
        if j.parent == root.name:
            body += _body_xml(model, k + 1, joint_friction, collide, "  ")
    body.append("</body>")
    actuators = ""
    if model_name == "quadruped_heightmap":
        acts = [f'<position joint="{j.name}" kp="{KP!r}" kv="{KD!r}" forcerange="{-j.effort!r} {j.effort!r}"/>'
                for j in model.joints]
        actuators = "<actuator>\n    " + "\n    ".join(acts) + "\n  </actuator>"
    nl = "\n    "
    return f"""<mujoco model="{model_name}">
  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>
  <option timestep="0.001" gravity="0 0 -9.81" integrator="implicitfast">{flags}</option>
  <asset>{asset}</asset>
  <worldbody>
    {ground}
    {nl.join(body)}
  </worldbody>
  {actuators}
</mujoco>"""


def build(model_name: str, joint_friction: bool = True):
    """Compile ``model_name``; return ``(MjModel, MjData)`` at the initial state (mj_forward done)."""
    import mujoco
    m = mujoco.MjModel.from_xml_string(mjcf(model_name, joint_friction))
    d = mujoco.MjData(m)
    _reset(m, d, model_name)
    return m, d


def _reset(m, d, model_name: str) -> None:
    """Initial state: chain joints at 0.05 rad; quadruped base (0, 0, 0.46) m, identity, joints and ctrl STAND."""
    import mujoco
    mujoco.mj_resetData(m, d)
    if model_name == "chain60":
        d.qpos[:] = 0.05
    else:
        d.qpos[:7] = (0.0, 0.0, 0.46, 1.0, 0.0, 0.0, 0.0)
        d.qpos[7:] = STAND
        d.ctrl[:] = STAND
    mujoco.mj_forward(m, d)


def _sanity(m, d, model_name: str) -> dict:
    """Chain: tip height (m), the far end of the last rod (twice its COM offset). Quadruped: trunk height (m)
    and the z component of the trunk's z axis (1 = upright)."""
    if model_name == "chain60":
        b = m.nbody - 1
        tip = d.xpos[b] + d.xmat[b].reshape(3, 3) @ (2.0 * m.body_ipos[b])
        return {"tip_height": float(tip[2]), "finite": bool(np.isfinite(d.qpos).all())}
    return {"trunk_height": float(d.qpos[2]), "trunk_up_z": float(d.xmat[1][8]),
            "finite": bool(np.isfinite(d.qpos).all())}


def measure_single(model_name: str, joint_friction: bool = True, steps: int = 2000, repeats: int = 3,
                   warmup: int = 200) -> dict:
    """Median ``mj_step`` steps/s on one thread: each repeat resets, runs ``warmup`` untimed then ``steps``
    timed steps (dt = 1 ms). The sanity numbers come from an untimed run of the same warmup + steps
    (simulated time (warmup + steps) ms): ``mean_contacts`` is data.ncon averaged over its steps."""
    import mujoco
    m, d = build(model_name, joint_friction)
    step = mujoco.mj_step
    rates = timed_steps(m, d, lambda: _reset(m, d, model_name), steps, repeats, warmup)
    _reset(m, d, model_name)
    ncon = 0
    for _ in range(warmup + steps):
        step(m, d)
        ncon += d.ncon
    return {"engine": "mujoco", "version": mujoco.__version__, "model": model_name,
            "joint_friction": joint_friction, "dof": m.nv, "steps_per_s": statistics.median(rates),
            "steps_per_s_all": rates, "sim_time_s": d.time, "mean_contacts": ncon / (warmup + steps),
            **_sanity(m, d, model_name)}


def measure_rollout(model_name: str, n_envs: int, joint_friction: bool = True, steps: int = 200,
                    repeats: int = 3, n_threads: int = 2, warmup: int = 0) -> dict:
    """Median env-steps/s of ``mujoco.rollout`` over ``n_envs`` copies of the state after ``warmup`` steps
    from the initial one, ``steps`` steps each, on a persistent pool of ``n_threads`` threads (one MjData
    each), control held at STAND (rad).
    One untimed warm-up rollout first; the output array is allocated once. The sanity numbers are those of
    ``measure_single`` (trunk height / tip height, m) at the final state of env 0 (simulated ``warmup + steps`` ms),
    ``env_spread`` the max abs difference of any env's final state from env 0's (0: deterministic copies),
    ``sane`` whether all is finite and the trunk is within 0.3..0.5 m and upright (the chain below its base)."""
    import mujoco
    from mujoco import rollout
    m, d = build(model_name, joint_friction)
    for _ in range(warmup):
        mujoco.mj_step(m, d)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, s0, spec)
    init = np.tile(s0, (n_envs, 1))
    ctrl = np.tile(np.asarray(d.ctrl, dtype=np.float64), (n_envs, 1, 1))   # (n_envs, 1, nu): held
    state = np.empty((n_envs, steps, s0.size))
    datas = [mujoco.MjData(m) for _ in range(n_threads)]
    rates = []
    with rollout.Rollout(nthread=n_threads) as pool:
        kw = dict(nstep=steps, state=state, control=ctrl if m.nu else None)
        pool.rollout(m, datas, init, **kw)
        for _ in range(repeats):
            t0 = time.perf_counter()
            pool.rollout(m, datas, init, **kw)
            rates.append(n_envs * steps / (time.perf_counter() - t0))
    final = state[:, -1]
    mujoco.mj_setState(m, d, final[0], spec)
    mujoco.mj_forward(m, d)
    check = _sanity(m, d, model_name)
    ok = check["finite"] and bool(np.isfinite(final).all())
    if model_name == "chain60":
        ok = ok and check["tip_height"] < 10.0
    else:
        ok = ok and 0.3 < check["trunk_height"] < 0.5 and check["trunk_up_z"] > 0.9
    return {"engine": "mujoco", "model": model_name, "joint_friction": joint_friction, "n_envs": n_envs,
            "n_threads": n_threads, "steps": steps, "env_steps_per_s": statistics.median(rates),
            "env_steps_per_s_all": rates, "env_spread": float(np.abs(final - final[0]).max()), "sane": ok,
            **check}


if __name__ == "__main__":
    if not mujoco_available():
        raise SystemExit("mujoco is not installed")
    cases = (("chain60", True), ("quadruped_heightmap", True), ("quadruped_heightmap", False))
    for name, fr in cases:
        label = name + ("" if fr or name == "chain60" else "_no_joint_friction")
        r = measure_single(name, fr)
        extra = (f"tip height {r['tip_height']:.3f} m" if name == "chain60" else
                 f"trunk height {r['trunk_height']:.3f} m, up_z {r['trunk_up_z']:.4f}, "
                 f"mean contacts {r['mean_contacts']:.2f}")
        print(f"{label:38s}     1 env  ({r['dof']} dof): {r['steps_per_s']:10,.0f} steps/s  "
              f"[after {r['sim_time_s']:.1f} s: {extra}, finite {r['finite']}]", flush=True)
        for n in (64, 1024):
            r = measure_rollout(name, n, fr)
            extra = (f"tip height {r['tip_height']:.3f} m" if name == "chain60" else
                     f"trunk height {r['trunk_height']:.3f} m")
            print(f"{label:38s} {n:5d} envs (rollout, {r['n_threads']} threads): {r['env_steps_per_s']:10,.0f} "
                  f"env-steps/s  [after {r['steps']} steps: {extra}, env spread {r['env_spread']:.1e}, "
                  f"sane {r['sane']}]", flush=True)
