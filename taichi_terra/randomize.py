"""Per-env randomisation: draw each env's parameters from ranges with a numpy ``Generator``.

:func:`randomize` sets, env by env, what a world holds per env (``World.set_gravity``,
``World.set_material_pair_prop``, ``DeformableTerrain.set_material``) from uniform draws, so that envs of one
world differ as a training curriculum asks (soil stiffness, friction, gravity). The draws come in a fixed
order from the generator given, so a seed reproduces them exactly.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .terrain.soil import SOIL_FIELDS
from .validation import check_env


def _range(name: str, value) -> tuple[float, float]:
    """``value`` as a finite range ``(lo, hi)`` with ``lo <= hi``."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a (lo, hi) pair of numbers, got {value!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        raise ValueError(f"{name} must be finite with lo <= hi, got ({lo!r}, {hi!r})")
    return lo, hi


def _envs(world, envs) -> np.ndarray:
    """``envs`` (None, an env or a sequence of envs) as an array of distinct env indices."""
    if envs is None:
        return np.arange(world.n_envs)
    items = [envs] if np.ndim(envs) == 0 else list(envs)
    out = []
    for e in items:
        if e is None:
            raise TypeError("envs: each env must be an int, got None")
        out.append(check_env(e, world.n_envs))
    if len(set(out)) != len(out):
        raise ValueError(f"envs must not repeat an env, got {out}")
    return np.array(out, np.int64)


def randomize(world, rng: np.random.Generator, *, soil: dict | None = None, friction: dict | None = None,
              sand: dict | None = None, mass_scale=None, gravity=None, envs=None) -> dict:
    """Draw each env's parameters uniformly from ranges and set them in those envs.

    Args:
        world: a :class:`taichi_terra.World` (built or not).
        rng: a ``numpy.random.Generator``; the same generator state draws the same values.
        soil: ``{field: (lo, hi)}`` over :data:`~taichi_terra.terrain.soil.SOIL_FIELDS` (their units); every
            soil bed of the world takes, in each env, its material as set for every env
            (``DeformableTerrain.material``) with those fields drawn (one draw per env, shared by the beds).
        friction: ``{(a, b): (lo, hi)}``: the friction coefficient between materials ``a`` and ``b`` (both
            declared), drawn per env; their restitution stays each env's.
        sand: ``{"zeta": (lo, hi)}`` [N/cm^3] and/or ``{"surface_height": (lo, hi)}`` [m]: every granular
            medium's (``World.set_medium_params``; the surface height only for media with a flat surface),
            one draw per env shared by the media.
        mass_scale: ``(lo, hi)``, > 0: a factor on every free body's and every articulated link's mass and
            inertia as built, drawn per env for each (free bodies in index order, then each system's links in
            ``get_body_names()`` order; links without mass are left out).
        gravity: ``((gx_lo, gy_lo, gz_lo), (gx_hi, gy_hi, gz_hi))`` [m/s^2]: each component drawn per env.
        envs: the envs to draw for (an int or a sequence of them; ``None``: every env), say the envs a reset
            starts again; the others keep their values.

    Returns:
        What was drawn, each array along ``envs``: ``{"envs": (n,), "soil": {field: (n,)},
        "friction": {(a, b): (n,)}, "sand": {name: (n,)}, "mass_scale": (n, n_masses), "gravity": (n, 3)}`` (keys only for what was asked).

    Draws come in this order: for each env in ``envs``, the soil fields in the order given, then the friction
    pairs in the order given, then the sand's parameters in the order given, then the mass factors, then gravity's three components. Everything is checked, and every material
    made, before any env changes: a bad argument raises and leaves the world as it was.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    env_list = _envs(world, envs)
    soil = dict(soil or {})
    friction = dict(friction or {})
    soil_ranges = {}
    for field, rng_ in soil.items():
        if field not in SOIL_FIELDS:
            raise ValueError(f"soil: unknown field {field!r}; known: {list(SOIL_FIELDS)}")
        soil_ranges[field] = _range(f"soil[{field!r}]", rng_)
    friction_ranges = {}
    for pair, rng_ in friction.items():
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"friction keys must be (a, b) pairs of material names, got {pair!r}")
        for name in pair:
            world.materials.index(name, "friction")
        lo, hi = _range(f"friction[{pair!r}]", rng_)
        if lo < 0.0:
            raise ValueError(f"friction[{pair!r}] must be >= 0, got ({lo!r}, {hi!r})")
        friction_ranges[pair] = (lo, hi)
    sand_ranges = {}
    media = world.granular_media
    for name, rng_ in dict(sand or {}).items():
        if name not in ("zeta", "surface_height"):
            raise ValueError(f"sand: unknown parameter {name!r}; known: ['zeta', 'surface_height']")
        lo, hi = _range(f"sand[{name!r}]", rng_)
        if name == "zeta" and lo <= 0.0:
            raise ValueError(f"sand['zeta'] must be > 0, got ({lo!r}, {hi!r})")
        if not media:
            raise ValueError("sand: the world has no granular medium")
        if name == "surface_height" and any(m.height is None for m in media):
            raise ValueError("sand['surface_height']: a medium's surface is a height map")
        sand_ranges[name] = (lo, hi)
    masses = []  # (setter of one env's mass, nominal mass [kg])
    m_range = None
    if mass_scale is not None:
        m_range = _range("mass_scale", mass_scale)
        if m_range[0] <= 0.0:
            raise ValueError(f"mass_scale must be > 0, got {mass_scale!r}")
        for body in world.bodies:
            masses.append((lambda m, e, body=body: world.set_body_mass(body, m, env=e), body.mass))
        for system in world.articulated_systems:
            for row, name in zip(system.joint_rows(), system.get_body_names()):
                if row["link"].mass > 0.0:
                    masses.append((lambda m, e, s=system, n=name: world.set_link_mass(s, n, m, env=e),
                                   float(row["link"].mass)))
    g_range = None
    if gravity is not None:
        try:
            lo_g, hi_g = (np.asarray(v, np.float64) for v in gravity)
        except (TypeError, ValueError):
            raise TypeError(f"gravity must be a (lo, hi) pair of 3-vectors, got {gravity!r}") from None
        if lo_g.shape != (3,) or hi_g.shape != (3,) or not np.all(np.isfinite([lo_g, hi_g])) or np.any(lo_g > hi_g):
            raise ValueError(f"gravity must be two finite 3-vectors with lo <= hi, got {gravity!r}")
        g_range = (lo_g, hi_g)
    beds = [hm for hm in world.heightmaps if getattr(hm, "is_soil", False)]
    if soil_ranges and not beds:
        raise ValueError("soil: the world has no soil bed")

    n = len(env_list)
    drawn = {"soil": {f: np.zeros(n) for f in soil_ranges}, "friction": {p: np.zeros(n) for p in friction_ranges},
             "sand": {k: np.zeros(n) for k in sand_ranges}, "mass_scale": np.zeros((n, len(masses))),
             "gravity": np.zeros((n, 3))}
    for k in range(n):
        for field, (lo, hi) in soil_ranges.items():
            drawn["soil"][field][k] = rng.uniform(lo, hi)
        for pair, (lo, hi) in friction_ranges.items():
            drawn["friction"][pair][k] = rng.uniform(lo, hi)
        for name, (lo, hi) in sand_ranges.items():
            drawn["sand"][name][k] = rng.uniform(lo, hi)
        if m_range is not None:
            drawn["mass_scale"][k] = rng.uniform(m_range[0], m_range[1], len(masses))
        if g_range is not None:
            drawn["gravity"][k] = rng.uniform(g_range[0], g_range[1])
    # every material made (and so checked) before any env changes
    materials = {bed.index: [dataclasses.replace(bed.material, **{f: float(v[k]) for f, v in drawn["soil"].items()})
                             for k in range(n)] for bed in beds} if soil_ranges else {}
    for k, env in enumerate(env_list):
        env = int(env)
        for bed in beds:
            if soil_ranges:
                bed.set_material(materials[bed.index][k], env=env)
        for (a, b), values in drawn["friction"].items():
            _, restitution = world.get_material_pair_prop(a, b, env)
            world.set_material_pair_prop(a, b, float(values[k]), restitution, env=env)
        for medium in media if sand_ranges else ():
            world.set_medium_params(medium, env=env, **{name: float(v[k]) for name, v in drawn["sand"].items()})
        if m_range is not None:
            for (setter, nominal), factor in zip(masses, drawn["mass_scale"][k]):
                setter(nominal * float(factor), env)
        if g_range is not None:
            world.set_gravity(drawn["gravity"][k], env=env)
    out = {"envs": env_list}
    if soil_ranges:
        out["soil"] = drawn["soil"]
    if friction_ranges:
        out["friction"] = drawn["friction"]
    if sand_ranges:
        out["sand"] = drawn["sand"]
    if m_range is not None:
        out["mass_scale"] = drawn["mass_scale"]
    if g_range is not None:
        out["gravity"] = drawn["gravity"]
    return out
