"""The planar world's arrays, declared once, and the column indices the kernels and the Python side share.

The model lives in two arenas (``schema.py``): ``model_i`` (objects, pieces, grid maps, buckets) and ``model_f``
(settings, objects, piece vertices, grid maps). The per-env arrays are vector ndarrays whose columns are named
below (``PI_*``, ``PF_*``, ``OS_*``, ``EI_*``).
"""
from ..common.schema import Arena, Block, BlockRef

EPS = 1e-12  # [m] shorter axes and arms are degenerate
FEATURE_TOL = 1e-7  # [m] vertices this close along the normal form one edge of the contact feature
LEVER_TOL = 1e-6  # [m] contact arms shorter than this are a centred push: they turn nothing

# object kinds and kinematics models
STATIC, PASSIVE, DRIVEN = 0, 1, 2
KIN_NONE, KIN_DIFF, KIN_OMNI, KIN_ACKER = 0, 1, 2, 3

# --------------------------------------------------------------------------- the model, declared once
OBJECT_I = Block("object", [("kind", 1), ("kinematics", 1), ("piece0", 1), ("piece1", 1), ("map", 1)],
                 "per object: kind, kinematics, first piece, end piece, grid map index (-1: none)")
PIECE_I = Block("piece", [("kind", 1), ("vertex0", 1), ("n_vertices", 1), ("object", 1)],
                "per convex piece: kind (0 circle, 1 polygon, 2 segment), first vertex, vertices, object")
MAP_I = Block("map", [("nx", 1), ("ny", 1), ("bucket0", 1)],
              "per grid map: buckets along x and y, first bucket")
BUCKET = Block("bucket", [("start", 1)], "per bucket (and one past the last): first entry in bucket_item")
BUCKET_ITEM = Block("bucket_item", [("piece", 1)], "pieces listed by bucket")
SETTINGS = Block("settings", [("dt", 1), ("g", 1), ("slop", 1), ("rest", 1), ("iterations", 1), ("move_tol", 1)],
                 "step time [s], gravity [m/s^2], slop [m], rest tolerance [m], iterations, and the correction [m] "
                 "below which a pair counts as resting (rounding noise of a pair left exactly one slop apart)")
OBJECT_F = Block("object", [("inv_mass", 1), ("inv_inertia", 1), ("friction", 1), ("restitution", 1),
                            ("traction", 1), ("bound", 1), ("com", 2), ("wheelbase", 1), ("gyration", 1)],
                 "per object: inverse mass [1/kg], inverse inertia [1/(kg m^2)], friction, restitution, ground "
                 "friction force mu m g [N], bounding radius about the centre of mass [m], centre of mass in the "
                 "body frame [m], wheelbase [m], radius of gyration [m]")
VERTEX = Block("vertex", [("position", 2), ("normal", 2)],
               "body-frame vertex (x, y) and the outward normal of the edge that starts there; a circle: centre, "
               "radius, 0")
MAP_F = Block("map", [("origin", 2), ("cell", 1)], "per grid map: origin (x0, y0) [m], bucket size [m]")
MODEL_F = Arena("model_f", "real", False, [SETTINGS, OBJECT_F, VERTEX, MAP_F], "model")
OFFSETS = Block("offsets", [("i_object", 1), ("i_piece", 1), ("i_map", 1), ("i_bucket", 1), ("i_bucket_item", 1),
                            ("f_settings", 1), ("f_object", 1), ("f_vertex", 1), ("f_map", 1)],
                "offset of every block of model_i and model_f")
MODEL_I = Arena("model_i", "i32", False, [OFFSETS, OBJECT_I, PIECE_I, MAP_I, BUCKET, BUCKET_ITEM], "model")
#: (arena, block, offsets column, attribute of PlanarModel)
MODEL_REFS = ((MODEL_I, OBJECT_I, "i_object", "obj_i"), (MODEL_I, PIECE_I, "i_piece", "piece_i"),
              (MODEL_I, MAP_I, "i_map", "map_i"), (MODEL_I, BUCKET, "i_bucket", "bucket_off"),
              (MODEL_I, BUCKET_ITEM, "i_bucket_item", "bucket_item"), (MODEL_F, SETTINGS, "f_settings", "params"),
              (MODEL_F, OBJECT_F, "f_object", "obj_f"), (MODEL_F, VERTEX, "f_vertex", "lv"),
              (MODEL_F, MAP_F, "f_map", "map_f"))


class PlanarModel:
    """The planar model inside a kernel: one :class:`BlockRef` per block (``M.obj_i``, ``M.params``, ...),
    built from ``model_i`` and ``model_f``; ``offsets`` holds the offsets row (``model_i`` itself)."""

    def __init__(self, offsets, model_i, model_f):
        arrays = {"model_i": model_i, "model_f": model_f}
        for arena, block, col, name in MODEL_REFS:
            setattr(self, name, BlockRef(arrays[arena.name], block, False, offsets=offsets,
                                         index=getattr(OFFSETS, col)))


# column names the kernels use, from the declarations
OI_KIND, OI_KIN, OI_P0, OI_P1, OI_MAP = (OBJECT_I.kind, OBJECT_I.kinematics, OBJECT_I.piece0, OBJECT_I.piece1,
                                         OBJECT_I.map)
OF_INV_M, OF_INV_I, OF_MU, OF_REST, OF_TRACTION, OF_BOUND = (OBJECT_F.inv_mass, OBJECT_F.inv_inertia,
                                                             OBJECT_F.friction, OBJECT_F.restitution,
                                                             OBJECT_F.traction, OBJECT_F.bound)
OF_COMX, OF_COMY, OF_WHEELBASE, OF_GYR = OBJECT_F.com, OBJECT_F.com + 1, OBJECT_F.wheelbase, OBJECT_F.gyration
P_DT, P_G, P_SLOP, P_REST, P_ITERS, P_MOVE_TOL = (SETTINGS.dt, SETTINGS.g, SETTINGS.slop, SETTINGS.rest,
                                                  SETTINGS.iterations, SETTINGS.move_tol)

# pair_i[e, p]: object a, object b, flags, sweep order (the index of the p-th pair to sweep)
PI_A, PI_B, PI_FLAGS, PI_ORDER = range(4)
F_RECORDED, F_TOUCHING, F_BOUNCE, F_FREE_A, F_FREE_B, F_PUSHED, F_NEAR = 1, 2, 4, 8, 16, 32, 64
# pair_f[e, p]: contact normal (x, y) from b to a, depth [m], point (x, y) [m], accumulated impulse (the sum
# of position multipliers) [m], force [N], normal at the first push (x, y), bounce target speed [m/s],
# normal between touching passive bodies (x, y)
PF_NX, PF_NY, PF_DEPTH, PF_PX, PF_PY, PF_IMP, PF_FORCE, PF_BNX, PF_BNY, PF_TARGET, PF_TNX, PF_TNY = range(12)
N_PF = 12

# obj_s[e, k] (scratch, N + 2 rows): graph level, first blocker, load-walk stamp, walk stack, sort count
OS_LEVEL, OS_BLOCK, OS_SEEN, OS_STACK, OS_COUNT = range(5)
N_OS = 5

# env_i[e]: candidate pairs, pairs dropped (table full), sweeps run, load-walk stamp
EI_PAIRS, EI_DROPPED, EI_SWEEPS, EI_STAMP = range(4)
