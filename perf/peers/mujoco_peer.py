"""MuJoCo peer: run the benchmark scenes in MuJoCo so the harness can print a ratio.

Scene (SI units: m, kg, s, N):
  * terrain: height map, 101 x 101 samples over 10 m x 10 m centred at the
    origin, z = 0.1*sin(pi*x)*cos(pi*y); sample (ix, iy) sits at
    x = -5 + 0.1*ix, y = -5 + 0.1*iy and is stored at index iy*101 + ix;
  * body: sphere (radius 0.1 m) or cube (edge 0.2 m, identity orientation),
    mass 1 kg, free joint, released at rest from (0.25, 0.15, 0.3);
  * friction 0.8 (sliding, condim 3), default solref/solimp (no bounce),
    gravity (0, 0, -9.81) m/s^2, timestep 1e-3 s, Euler, default solver.

MuJoCo hfield layout (checked by ray casts, see ``verify_terrain``):
``hfield_data[r*ncol + c]`` is the vertex at x = -size[0] + 2*size[0]*c/(ncol-1),
y = -size[1] + 2*size[1]*r/(nrow-1), i.e. row index = y, first row at -y;
this is exactly our ``iy*101 + ix`` order, so no transposition or flip.
Elevations are normalised to [0, 1] by the compiler and the world height is
geom_z + size[2]*normalised, so we set size[2] = hmax - hmin and put the geom
at z = hmin; size[3] = 0.1 m is the base depth below geom_z.

``mujoco`` is imported lazily: this module imports fine without it.
"""
import math
import statistics
import time

from ..scenes.rigid import SAMPLES as N, SHAPES, SIZE as EXTENT, START, terrain_heights

AMP = 0.1          # m, terrain amplitude (see perf/scenes/rigid.py)


def mujoco_available() -> bool:
    """True when the ``mujoco`` package can be imported."""
    try:
        import mujoco
    except ImportError:
        return False
    return hasattr(mujoco, "MjModel")


def terrain_height(x: float, y: float) -> float:
    """Analytic terrain height z (m) at world (x, y) (m)."""
    return AMP * math.sin(math.pi * x) * math.cos(math.pi * y)


def _samples():
    """Terrain heights (m) in storage order iy*N + ix."""
    return terrain_heights().tolist()


def _scene_xml(shape: str) -> str:
    """MJCF text of the scene for ``shape`` ("sphere" or "box")."""
    if shape == "sphere":
        body_geom = 'type="sphere" size="0.1"'
    elif shape == "box":
        body_geom = 'type="box" size="0.1 0.1 0.1"'
    else:
        raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
    z = _samples()
    zmin, zmax = min(z), max(z)
    span = zmax - zmin
    elev = " ".join(repr((v - zmin) / span) for v in z)
    half = EXTENT / 2
    return f"""
<mujoco model="peer_{shape}">
  <option timestep="0.001" gravity="0 0 -9.81"/>
  <asset>
    <hfield name="terrain" nrow="{N}" ncol="{N}"
            size="{half!r} {half!r} {span!r} 0.1" elevation="{elev}"/>
  </asset>
  <worldbody>
    <geom name="terrain" type="hfield" hfield="terrain" pos="0 0 {zmin!r}"
          friction="0.8 0.005 0.0001" condim="3"/>
    <body name="body" pos="{START[0]} {START[1]} {START[2]}">
      <freejoint name="free"/>
      <geom name="body" {body_geom} mass="1" friction="0.8 0.005 0.0001"
            condim="3"/>
    </body>
  </worldbody>
</mujoco>"""


def build_model(shape: str):
    """Compile the scene for ``shape``; return ``(MjModel, MjData)`` at rest."""
    import mujoco
    model = mujoco.MjModel.from_xml_string(_scene_xml(shape))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def verify_terrain() -> float:
    """Ray-cast the MuJoCo terrain at a few grid nodes (no body in the way).

    Returns the max abs difference (m) between the hit height and the
    analytic formula; expected ~1e-8 (float32 storage of the hfield).
    """
    import mujoco
    import numpy as np
    model, data = build_model("sphere")
    tid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "terrain")
    bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "body")
    h = EXTENT / (N - 1)
    nodes = [(55, 50), (45, 50), (37, 81), (12, 3), (73, 29), (50, 50)]
    geomid = np.zeros(1, dtype=np.int32)
    top = 1.0
    err = 0.0
    for ix, iy in nodes:
        x, y = -EXTENT / 2 + h * ix, -EXTENT / 2 + h * iy
        dist = mujoco.mj_ray(model, data, np.array([x, y, top]),
                             np.array([0.0, 0.0, -1.0]), None, 1, bid, geomid)
        if dist < 0 or geomid[0] != tid:
            raise RuntimeError(f"ray at node ({ix}, {iy}) missed the terrain")
        err = max(err, abs((top - dist) - terrain_height(x, y)))
    return err


def timed_steps(model, data, reset, steps: int, repeats: int, warmup: int) -> list:
    """Steps per second of ``repeats`` runs of ``steps`` timed ``mj_step`` calls, each run after ``reset()`` and
    ``warmup`` untimed steps."""
    import mujoco
    rates = []
    for _ in range(repeats):
        reset()
        for _ in range(warmup):
            mujoco.mj_step(model, data)
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, data)
        rates.append(steps / (time.perf_counter() - t0))
    return rates


def _reset(model, data):
    """Reset to the release state: START position, identity quat, zero velocity."""
    import mujoco
    mujoco.mj_resetData(model, data)
    data.qpos[:3] = START
    data.qpos[3:7] = (1.0, 0.0, 0.0, 0.0)
    data.qvel[:] = 0.0


def measure(shape: str, steps: int = 2000, repeats: int = 5,
            warmup: int = 200) -> dict:
    """Time ``repeats`` runs of ``steps`` ``mj_step`` calls (dt = 1 ms).

    Each repeat: reset, ``warmup`` untimed steps, then ``steps`` timed steps.
    ``final_position`` (m) is the body position after the last repeat.
    ``mean_contacts`` is data.ncon averaged over the timed steps of the last
    repeat; it is sampled in an untimed replay of that repeat (MuJoCo is
    deterministic, so the trajectory is identical) to keep timing clean.
    """
    import mujoco
    model, data = build_model(shape)
    step = mujoco.mj_step
    rates = timed_steps(model, data, lambda: _reset(model, data), steps, repeats, warmup)
    final = [float(v) for v in data.qpos[:3]]

    _reset(model, data)
    for _ in range(warmup):
        step(model, data)
    ncon = 0
    for _ in range(steps):
        step(model, data)
        ncon += data.ncon
    if [float(v) for v in data.qpos[:3]] != final:
        raise RuntimeError("MuJoCo replay diverged from the timed run")
    return {
        "engine": "mujoco",
        "version": mujoco.__version__,
        "shape": shape,
        "steps_per_s_median": statistics.median(rates),
        "steps_per_s_all": rates,
        "final_position": final,
        "mean_contacts": ncon / steps if steps else 0.0,
    }


if __name__ == "__main__":
    if not mujoco_available():
        raise SystemExit("mujoco is not installed")
    print(f"terrain max abs error at grid nodes: {verify_terrain():.3e} m")
    for name in SHAPES:
        r = measure(name)
        x, y, z = r["final_position"]
        print(f"{name}: {r['steps_per_s_median']:.0f} steps/s (median of "
              f"{len(r['steps_per_s_all'])}), mean contacts "
              f"{r['mean_contacts']:.2f}, final ({x:.4f}, {y:.4f}, {z:.4f}), "
              f"terrain there {terrain_height(x, y):.4f}")
        print("  ", r)
