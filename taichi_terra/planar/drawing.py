"""World-frame geometry of one env of a planar world, in the form a 2D viewer draws."""
from __future__ import annotations

import numpy as np

from ..kernels.planar import arrays as L


def draw_data(world, env: int) -> dict:
    """Triangles of polygon pieces (fans), circles, segments, object kinds and poses, contacts and the scene's
    bounds, in metres (see ``PlanarViewer`` for the keys)."""
    world.build()
    a = world._arrays
    pi, lv = a.model_block("piece"), a.model_block("vertex")
    wv = a.wv.to_numpy()[env].astype(np.float64)
    tris, tri_obj, circ, rad, circ_obj, segs, seg_obj = [], [], [], [], [], [], []
    for kind, v0, nv, obj in pi:
        if kind == 0:
            circ.append(wv[v0, :2])
            rad.append(lv[v0, 2])
            circ_obj.append(obj)
        elif kind == 2:
            segs.append(wv[v0:v0 + 2, :2])
            seg_obj.append(obj)
        else:
            v = wv[v0:v0 + nv, :2]
            for j in range(1, nv - 1):
                tris.append([v[0], v[j], v[j + 1]])
                tri_obj.append(obj)
    c = world.get_contacts(env)
    kinds = a.model_block("object")[:, L.OI_KIND]
    pts = np.concatenate([np.asarray(circ).reshape(-1, 2), np.asarray(segs).reshape(-1, 2),
                          np.asarray(tris).reshape(-1, 2)])
    lo, hi = (pts.min(axis=0), pts.max(axis=0)) if len(pts) else (np.zeros(2), np.ones(2))
    r = max(rad, default=0.0)
    return {
        "triangles": np.asarray(tris, np.float64).reshape(-1, 3, 2),
        "triangle_object": np.asarray(tri_obj, np.int64),
        "circles": np.asarray(circ, np.float64).reshape(-1, 2),
        "circle_radius": np.asarray(rad, np.float64),
        "circle_object": np.asarray(circ_obj, np.int64),
        "segments": np.asarray(segs, np.float64).reshape(-1, 2, 2),
        "segment_object": np.asarray(seg_obj, np.int64),
        "object_kind": kinds.astype(np.int64),
        "poses": world.get_poses(env),
        "contact_points": c.point[0, :c.count[0]],
        "contact_normals": c.normal[0, :c.count[0]],
        "contact_forces": c.force[0, :c.count[0]],
        "bounds": np.array([lo[0] - r, lo[1] - r, hi[0] + r, hi[1] + r]),
    }
