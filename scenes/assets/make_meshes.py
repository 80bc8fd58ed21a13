"""Visual meshes of the scenes' robots: what the viewer draws of them (the physics reads only their collision
shapes).

    python scenes/assets/make_meshes.py   # (re)writes the buggy's in taichi_terra/bodies/assets/meshes/ and
                                          # the quadruped's in scenes/assets/meshes/

Each mesh is in its link's frame as the URDF places it (x forward, y left, z up, metres) and small: a few
hundred to a few thousand triangles. Made with trimesh from primitives, so the files are reproducible:

* ``buggy_body.obj``: the buggy's tub, a hull tapering to the nose, with side pods.
* ``buggy_tyre_front.obj``, ``buggy_tyre_rear.obj``: knobbly tyres (a rounded profile turned about the
  wheel's axis, y, with tread blocks), ``taichi_terra.bodies.buggy.WHEEL_RADIUS`` and the soil-contact widths.
* ``buggy_rim.obj``: a dished rim with five spokes.
* ``quadruped_trunk.obj``: the quadruped's trunk, a box with bevelled edges and a raised head at the front.
* ``quadruped_thigh.obj``, ``quadruped_shank.obj``: tapered legs from the joint down 0.25 m.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "meshes"  # the scenes' meshes (the quadruped's)


def _hull(points):
    import trimesh

    return trimesh.convex.convex_hull(np.asarray(points, float))


def _bevelled_box(size, bevel: float, centre=(0.0, 0.0, 0.0)):
    """A box of full ``size`` [m] whose edges are cut back by ``bevel`` [m]."""
    sx, sy, sz = (0.5 * s for s in size)
    pts = []
    for a in (-1, 1):
        for b in (-1, 1):
            for c in (-1, 1):
                pts += [(a * (sx - bevel), b * (sy - bevel), c * sz), (a * sx, b * (sy - bevel), c * (sz - bevel)),
                        (a * (sx - bevel), b * sy, c * (sz - bevel))]
    return _hull(np.array(pts) + centre)


def _tapered(top_radius: float, bottom_radius: float, length: float):
    """A leg along -z from the origin: the hull of a sphere of ``top_radius`` at 0 and one of ``bottom_radius``
    at ``-length`` [m]."""
    import trimesh

    a = trimesh.creation.icosphere(2, top_radius).vertices
    b = trimesh.creation.icosphere(2, bottom_radius).vertices + (0.0, 0.0, -length)
    return _hull(np.vstack([a, b]))


def buggy_body():
    import trimesh

    tub = _hull([(x, y * s, z) for s in (-1, 1) for x, y, z in (
        (1.25, 0.22, -0.26), (1.25, 0.22, -0.08), (0.9, 0.42, -0.27), (0.6, 0.5, 0.05),
        (-1.15, 0.5, -0.27), (-1.3, 0.45, 0.2), (-0.5, 0.5, 0.22), (0.45, 0.45, 0.1))])
    pods = [_bevelled_box((1.3, 0.18, 0.22), 0.04, (-0.25, s * 0.48, -0.12)) for s in (-1, 1)]
    return trimesh.util.concatenate([tub, *pods])


def buggy_tyre(width: float, radius: float, blocks: int = 24):
    """A tyre about the y axis: a rounded profile from the rim (0.62 ``radius``) out to ``radius`` less the
    tread, turned, with ``blocks`` tread blocks standing out to ``radius`` [m]."""
    import trimesh

    tread = 0.025
    r_in, r_out, h = 0.62 * radius, radius - tread, 0.5 * width
    bulge = [(r_out - 0.06 * radius * (1 - math.cos(t)), h * math.sin(t)) for t in np.linspace(-1.3, 1.3, 11)]
    profile = [(r_in, -0.8 * h)] + bulge + [(r_in, 0.8 * h)]
    body = trimesh.creation.revolve(np.array(profile), sections=48)  # about z; turned onto y below
    parts = [body]
    for k in range(blocks):
        a = 2.0 * math.pi * k / blocks
        shift = 0.22 * h * (1 if k % 2 else -1)
        block = trimesh.creation.box(extents=(0.09 * radius, 0.62 * width, tread + 0.01))
        block.apply_translation((0.0, shift, r_out + 0.5 * tread - 0.005))
        block.apply_transform(trimesh.transformations.rotation_matrix(a, (0, 1, 0)))
        parts.append(block)
    turn = trimesh.transformations.rotation_matrix(-0.5 * math.pi, (1, 0, 0))  # z -> y
    body.apply_transform(turn)
    return trimesh.util.concatenate(parts)


def buggy_rim(radius: float, width: float):
    """A rim about the y axis: a dish of ``radius`` [m], a hub and five spokes."""
    import trimesh

    turn = trimesh.transformations.rotation_matrix(0.5 * math.pi, (1, 0, 0))
    dish = trimesh.creation.annulus(r_min=0.82 * radius, r_max=radius, height=0.8 * width, sections=40)
    hub = trimesh.creation.cylinder(radius=0.22 * radius, height=width, sections=24)
    parts = [dish, hub]
    for k in range(5):
        spoke = trimesh.creation.box(extents=(0.14 * radius, 0.9 * radius, 0.3 * width))
        spoke.apply_translation((0.0, 0.45 * radius, 0.25 * width))
        spoke.apply_transform(trimesh.transformations.rotation_matrix(2.0 * math.pi * k / 5, (0, 0, 1)))
        parts.append(spoke)
    rim = trimesh.util.concatenate(parts)
    rim.apply_transform(turn)
    return rim


def quadruped_trunk():
    import trimesh

    body = _bevelled_box((0.6, 0.3, 0.15), 0.035)
    head = _bevelled_box((0.12, 0.2, 0.09), 0.025, (0.27, 0.0, 0.07))
    return trimesh.util.concatenate([body, head])


def meshes() -> dict:
    """Every mesh, by file name without ``.obj``."""
    from taichi_terra.bodies import buggy as mb

    return {
        "buggy_body": buggy_body(),
        "buggy_tyre_front": buggy_tyre(mb.FRONT_WIDTH + 0.04, mb.WHEEL_RADIUS),
        "buggy_tyre_rear": buggy_tyre(mb.REAR_WIDTH + 0.04, mb.WHEEL_RADIUS),
        "buggy_rim": buggy_rim(0.62 * mb.WHEEL_RADIUS, 0.12),
        "quadruped_trunk": quadruped_trunk(),
        "quadruped_thigh": _tapered(0.042, 0.03, 0.25),
        "quadruped_shank": _tapered(0.028, 0.018, 0.25),
    }


def home(name: str) -> Path:
    """The folder a mesh is kept in: the buggy's ship with the package (``taichi_terra.bodies.buggy``), the
    quadruped's with the scenes."""
    if name.startswith("buggy_"):
        from taichi_terra.bodies import buggy

        return buggy.ASSETS / "meshes"
    return OUT


def write(out=None) -> list:
    """Write every mesh as ``<folder>/<name>.obj`` (5 decimals), the folder ``out`` or, when None, its
    :func:`home`; returns the paths."""
    paths = []
    for name, mesh in meshes().items():
        folder = Path(out) if out is not None else home(name)
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.obj"
        mesh.export(path, digits=5)
        paths.append(path)
    return paths


def main(argv=None) -> int:
    for path in write():
        print(f"{path}: {path.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
