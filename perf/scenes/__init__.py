"""Every benchmark scene, defined once: how to build its world, how to drive it, and its labels. The backend
harness (``python -m perf``) and every benchmark mode (``python -m perf MODE``, ``perf/modes/``) build their
worlds from here.

A :class:`Scene`'s ``build(n_envs, **options)`` returns a :class:`Built`: the world, the controller that drives
it (called before every ``chunk`` steps; None: the world drives itself, e.g. by PD targets or belt speeds set
once), and named parts a mode reads (``"system"``, ``"body"``, ``"sinkage"``, ...). ``options`` are the scene's
own keywords (a tolerance, a variant), named in its builder's docstring.

Scenes with ``harness=True`` are the backend harness's default set; the others are the variants and scenes that
one mode times (a standing tracked robot, the quadruped on soil, the stage-timing worlds, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import articulated, planar, rft, rigid, soil, vehicles


@dataclass
class Built:
    """A built scene: its ``world``, its ``control`` (None: none) and named ``parts`` (see the module)."""
    world: object
    control: Callable | None = None
    parts: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Sizes:
    """Env counts, timed steps per round and untimed steps before the rounds."""
    envs: tuple
    steps: int
    warmup: int = 50


@dataclass(frozen=True)
class Scene:
    """A benchmark scene (module docstring). ``full`` and ``quick``: its sizes in a full and in a quick or smoke
    run; ``scale`` [m]: the distance a body travels over the agreement's steps (the f32 tolerance's length,
    ``perf.modes.backends.f32_tolerance``); ``chunk``: steps between controller calls; ``seconds``: the
    simulated time of its timeline where a mode runs one (solver, tolerance); ``unbounded``: why the f32
    agreement of this scene has no tolerance (empty: it has)."""
    name: str
    what: str
    build: Callable
    full: Sizes
    quick: Sizes
    scale: float = 1.0
    chunk: int = 0
    seconds: float = 1.0
    unbounded: str = ""
    harness: bool = False


def _built(build, control=None, **parts):
    """A builder returning ``(world, *parts)`` wrapped to return a :class:`Built`."""
    def wrapped(n_envs, **options):
        out = build(n_envs, **options)
        world, rest = (out[0], out[1:]) if isinstance(out, tuple) else (out, ())
        named = dict(zip(parts, rest))
        return Built(world, control(named) if control is not None else None, named)
    wrapped.__doc__ = build.__doc__
    return wrapped


def _hexapod_control(parts):
    module, robot = parts["module"], parts["robot"]
    return lambda world: module.set_gait(robot, world.time)


def _scene_control(parts):
    return parts["scene"].controller


_HARNESS = (
    Scene("rigid_sphere", "0.1 m sphere on the 101 x 101 sine map", _built(rigid.sine_world, body="body"),
          Sizes((1, 64, 1024, 4096), 500, 300), Sizes((1,), 100, 300), 0.3, harness=True),
    Scene("rigid_box", "0.2 m box on the sine map", _built(lambda n: rigid.sine_world(n, "box"), body="body"),
          Sizes((1, 64, 1024, 4096), 500, 300), Sizes((1,), 100, 300), 0.3, harness=True),
    Scene("many_bodies", "27 boxes stacked as bricks on the ground plane", _built(rigid.boxes_world),
          Sizes((1, 16, 256), 200), Sizes((1,), 50, 5), 0.2, harness=True,
          unbounded="in f32 the pile's sweeps stop at the cap (100) short of the tolerance that f64 meets in 4"),
    Scene("soil_plate", "20 kg plate settling on a 41 x 41 soil bed", _built(soil.plate_world, sinkage="sinkage"),
          Sizes((1, 16, 256), 200), Sizes((1,), 50, 5), 0.01, harness=True),
    Scene("planar_pen", "64 circles separating in a pen (planar world, dt 0.1 s)", _built(planar.pen_world),
          Sizes((1, 64, 1024), 50), Sizes((1,), 10, 5), 1.0, harness=True),
    Scene("planar_push", "diff-drive robot pushing ten boxes into a wall (planar world)", _built(planar.push_world),
          Sizes((1, 64, 1024), 25), Sizes((1,), 10, 5), 1.25, harness=True),
    Scene("chain", "60-link hanging chain, fixed base, no contacts", _built(articulated.chain_world, system="system"),
          Sizes((1, 64, 1024), 500), Sizes((1,), 50, 5), 1.0, harness=True),
    Scene("quadruped", "12-dof quadruped standing on a height map under PD",
          _built(articulated.quadruped_world, system="system"), Sizes((1, 64, 1024), 500), Sizes((1,), 50, 5), 0.1,
          harness=True),
    Scene("tracked", "tracked robot with flippers driving on a height map", _built(vehicles.tracked_world,
                                                                                  system="system"),
          Sizes((1, 16, 256), 200), Sizes((1,), 25, 5), 0.1, seconds=2.0, harness=True),
    Scene("rft_boxes", "six boxes with 500 RFT plates each sliding in sand, row mode",
          _built(rft.walking_world, bodies="bodies", sets="sets"), Sizes((1, 64, 1024), 200), Sizes((1,), 25, 5), 0.05,
          harness=True),
    Scene("hexapod", "the 12-dof hexapod walking in sand, 6 x 512 plates (scenes/hexapod_sand.py)",
          _built(rft.hexapod_world, _hexapod_control, robot="robot", module="module"),
          Sizes((1, 64, 1024), 200, 200), Sizes((1,), 20, 10), 0.05, chunk=10, harness=True),
    Scene("buggy", "the 896 kg buggy driving on its 16 m x 6 m soil bed at 4 cm (scenes/buggy_soil.py)",
          _built(vehicles.buggy_world, buggy="buggy"), Sizes((1, 16), 100), Sizes((1,), 10, 5), 0.1, seconds=3.0,
          harness=True,
          unbounded="its wheels' soil samples enter the footprints on different steps in f32 and f64"),
)

_OTHERS = (
    Scene("quadruped_no_joint_friction", "the quadruped without its URDF's Coulomb joint friction",
          _built(lambda n: articulated.quadruped_world(n, joint_friction=False), system="system"),
          Sizes((1, 64, 1024), 300, 100), Sizes((1,), 5, 2), 0.1),
    Scene("tracked_standing", "the tracked robot holding its sprockets still",
          _built(lambda n: vehicles.tracked_world(n, speed=0.0), system="system"),
          Sizes((1, 64, 1024), 300, 100), Sizes((1,), 5, 2), 0.1),
    Scene("tracked_plain", "the standing tracked robot, its belts' shapes plain collision shapes of their links",
          _built(lambda n: vehicles.tracked_world(n, speed=0.0, plain=True), system="system"),
          Sizes((1, 64, 1024), 300, 100), Sizes((1,), 5, 2), 0.1),
    Scene("rft_boxes_force", "the six RFT boxes, force mode", _built(lambda n: rft.walking_world(n, "force"),
                                                                     bodies="bodies", sets="sets"),
          Sizes((1, 64, 1024), 1000, 50), Sizes((1,), 5, 2), 0.05),
    Scene("rft_plates", "buried moving boxes carrying plates, zero gravity (options: scene '12288' or '6x500')",
          _built(rft.plate_world, bodies="bodies", sets="sets"), Sizes((1,), 1), Sizes((1,), 1)),
    Scene("control_loop", "ten spheres on the sine map, stepped and read once per control step",
          _built(rigid.control_loop_world), Sizes((1, 1024), 100, 200), Sizes((1,), 3, 5)),
    Scene("boxes", "boxes on the ground (options: boxes, layout 'spread' or 'bricks')", _built(rigid.boxes_world),
          Sizes((1, 64), 200, 50), Sizes((1,), 3, 5)),
    Scene("stack", "five 20 cm boxes stacked on the ground, each 1 cm off the one below", _built(rigid.stack_world),
          Sizes((1,), 2000), Sizes((1,), 20), seconds=2.0),
    Scene("stage_boxes", "1000 boxes on the ground in one env", _built(rigid.stage_boxes_world),
          Sizes((1,), 100), Sizes((1,), 3)),
    Scene("stage_heightmap", "64 spheres and boxes on a height map in one env", _built(rigid.stage_heightmap_world),
          Sizes((1,), 100), Sizes((1,), 3)),
    Scene("stage_soil", "a plate on a 103 x 103 soil bed in one env", _built(soil.stage_plate_world),
          Sizes((1,), 100), Sizes((1,), 3)),
    Scene("soil_10k", "a 1 m plate settling on a bed at 1 cm: 10,000 samples loaded in one env",
          _built(soil.loaded_10k_world, sinkage="sinkage"), Sizes((1,), 20, 5), Sizes((1,), 2, 1)),
    Scene("soil_bed", "a 20 kg body settling on a 1.2 m bed of 103 x 103 samples (options: body, material, start)",
          _built(soil.bed_world, bed="bed", sinkage="sinkage", material="material"),
          Sizes((1,), 500, 1500), Sizes((1,), 10, 5)),
    Scene("ruts", "scenes/soil_ruts.py: a sled, a wheel and a ball on a 7,865-sample bed, its 6 s timeline",
          _built(vehicles.ruts_world, _scene_control, scene="scene"), Sizes((1,), 6000), Sizes((1,), 10),
          chunk=50, seconds=6.0),
    Scene("buggy_50m", "the buggy on a 50 m x 50 m bed at 5 cm (about a million samples)",
          _built(vehicles.buggy_50m_world), Sizes((1,), 3000), Sizes((1,), 2), seconds=3.0),
    Scene("quadruped_soil", "the 30 kg quadruped under PD standing on a soil bed",
          _built(articulated.quadruped_soil_world, system="system"), Sizes((1,), 2000), Sizes((1,), 10), seconds=2.0),
    Scene("quadruped_fixed", "the quadruped welded at its trunk, its feet pressed into the same bed",
          _built(articulated.quadruped_fixed_world, system="system"), Sizes((1,), 2000), Sizes((1,), 10),
          seconds=2.0),
    Scene("buggy_tiles", "the buggy on the ground, nothing stepped (the viewer's robot frames)",
          _built(vehicles.buggy_on_ground, buggy="buggy"), Sizes((1, 16), 1, 0), Sizes((1,), 1, 0)),
)

SCENES = {s.name: s for s in _HARNESS + _OTHERS}
#: the backend harness's default scenes
HARNESS = tuple(s.name for s in _HARNESS)


def get(name: str) -> Scene:
    try:
        return SCENES[name]
    except KeyError:
        raise ValueError(f"unknown scene {name!r}; known: {', '.join(SCENES)}") from None


def build(name: str, n_envs: int = 1, **options) -> Built:
    """Scene ``name`` built with ``n_envs`` envs."""
    return get(name).build(n_envs, **options)
