"""Planar contact scenes (``taichi_terra.reference_scenes``, shared with IR-SIM in ``perf/peers/irsim_peer.py``)
as benchmark worlds."""
from __future__ import annotations

from taichi_terra.reference_scenes import build_planar_world, pen_scene, push_scene


def pen_world(n_envs: int, n: int = 64, shape: str = "circle", fill: float = 0.5, seed: int = 0, **options):
    """``n`` circles or squares (``shape``) overlapping at random in a pen at ``fill``; ``options`` go to the
    planar World (e.g. ``iterations``)."""
    return build_planar_world(pen_scene(n, shape, fill, seed), n_envs, **options)


def push_world(n_envs: int, **options):
    """A diff-drive robot pushing ten boxes into a wall inside a pen."""
    return build_planar_world(push_scene(), n_envs, **options)
