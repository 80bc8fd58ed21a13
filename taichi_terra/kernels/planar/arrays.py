"""The planar world's arrays, declared once, and the column indices the kernels and the Python side share.

The model lives in two arenas (``schema.py``): ``model_i`` (objects, pieces, grid maps, buckets) and ``model_f``
(settings, objects, piece vertices, grid maps). The per-env arrays are tables (``schema.Table``: one vector
per row, columns named by a block), declared at the end with their role: state (poses, velocities, the last
step's pairs), control (the drivers' commands) and scratch (rebuilt every step).
Kernel functions take all of them as one bundle, ``D`` (:class:`PlanarData`), passed as a template.
"""
import warnings

from ..common.schema import Arena, Block, BlockRef, Table

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
#: (arena, block, offsets column, attribute of PlanarData)
MODEL_REFS = ((MODEL_I, OBJECT_I, "i_object", "obj_i"), (MODEL_I, PIECE_I, "i_piece", "piece_i"),
              (MODEL_I, MAP_I, "i_map", "map_i"), (MODEL_I, BUCKET, "i_bucket", "bucket_off"),
              (MODEL_I, BUCKET_ITEM, "i_bucket_item", "bucket_item"), (MODEL_F, SETTINGS, "f_settings", "params"),
              (MODEL_F, OBJECT_F, "f_object", "obj_f"), (MODEL_F, VERTEX, "f_vertex", "lv"),
              (MODEL_F, MAP_F, "f_map", "map_f"))


# column names the kernels use, from the declarations
OI_KIND, OI_KIN, OI_P0, OI_P1, OI_MAP = (OBJECT_I.kind, OBJECT_I.kinematics, OBJECT_I.piece0, OBJECT_I.piece1,
                                         OBJECT_I.map)
OF_INV_M, OF_INV_I, OF_MU, OF_REST, OF_TRACTION, OF_BOUND = (OBJECT_F.inv_mass, OBJECT_F.inv_inertia,
                                                             OBJECT_F.friction, OBJECT_F.restitution,
                                                             OBJECT_F.traction, OBJECT_F.bound)
OF_COMX, OF_COMY, OF_WHEELBASE, OF_GYR = OBJECT_F.com, OBJECT_F.com + 1, OBJECT_F.wheelbase, OBJECT_F.gyration
P_DT, P_G, P_SLOP, P_REST, P_ITERS, P_MOVE_TOL = (SETTINGS.dt, SETTINGS.g, SETTINGS.slop, SETTINGS.rest,
                                                  SETTINGS.iterations, SETTINGS.move_tol)

# --------------------------------------------------------------------------- the per-env tables, declared once
POSE = Block("pose", [("x", 1), ("y", 1), ("heading", 1), ("steer", 1)],
             "per object: origin of the body frame (x, y) [m], heading [rad], steering angle held [rad]")
VELOCITY = Block("vel", [("linear", 2), ("angular", 1)],
                 "per object: velocity of the centre of mass (x, y) [m/s], spin [rad/s]")
COMMAND = Block("cmd", [("command", 2)],
                "per driver: (speed [m/s], turn rate [rad/s]) diff drive, (vx, vy) [m/s] body frame omni, "
                "(speed [m/s], steering angle [rad]) Ackermann")
POSE0 = Block("pose0", [("pose", 4)], "per object: the pose at the start of the step")
WORLD_VERTEX = Block("wv", [("position", 2), ("normal", 2)], "per vertex: world-frame vertex and edge normal")
PAIR_I = Block("pair_i", [("a", 1), ("b", 1), ("flags", 1), ("order", 1)],
               "per candidate pair: objects a and b, flags (F_*), sweep order (the index of the p-th pair to "
               "sweep)")
PAIR_F = Block("pair_f", [("normal", 2), ("depth", 1), ("point", 2), ("impulse", 1), ("force", 1),
                          ("first_normal", 2), ("target", 1), ("touch_normal", 2)],
               "per candidate pair: contact normal from b to a, depth [m], point [m], accumulated impulse (the "
               "sum of position multipliers) [m], force [N], normal at the first push, bounce target speed "
               "[m/s], normal between touching passive bodies")
ORDER = Block("order_tmp", [("pair", 1)], "per pair: sort buffer")
BLOCKER = Block("blk", [("normal", 2), ("friction", 1)], "per blocking contact: normal into the blocker, friction")
BLOCKER_NEXT = Block("blk_next", [("next", 1)], "per blocking contact: the object's next blocking contact")
OBJECT_S = Block("obj_s", [("level", 1), ("blocker", 1), ("stamp", 1), ("stack", 1), ("count", 1)],
                 "per object (and two more rows): graph level, first blocker, load-walk stamp, walk stack, sort "
                 "count")
ENV_I = Block("env_i", [("pairs", 1), ("dropped", 1), ("sweeps", 1), ("stamp", 1), ("touch", 1), ("done", 1),
                        ("passes", 1), ("cursor", 1), ("blockers", 1), ("moved", 1)],
              "per env: candidate pairs, pairs dropped (table full), sweeps run, load-walk stamp, pairs the "
              "touch test visits, whether the passes are done, passes finished this step, and of the pass under "
              "way (run over several launches on vulkan): its next task, blockers recorded, whether it moved "
              "anything")
#: every per-env array in kernel argument order; rows: objects, vertices, pairs, blockers (2 per pair),
#: objects + 2, or one per env (None)
TABLES = (Table(POSE, "real", "objects", "state"), Table(POSE0, "real", "objects", "scratch"),
          Table(VELOCITY, "real", "objects", "state"), Table(COMMAND, "real", "objects", "control"),
          Table(WORLD_VERTEX, "real", "vertices", "scratch"), Table(PAIR_I, "i32", "pairs", "state"),
          Table(PAIR_F, "real", "pairs", "state"), Table(ORDER, "i32", "pairs", "scratch", scalar=True),
          Table(BLOCKER, "real", "blockers", "scratch"),
          Table(BLOCKER_NEXT, "i32", "blockers", "scratch", scalar=True),
          Table(OBJECT_S, "i32", "objects+2", "scratch"), Table(ENV_I, "i32", None, "state"))

# column names the kernels use, from the declarations
POSE_X, POSE_Y, POSE_HEADING, POSE_STEER = POSE.x, POSE.y, POSE.heading, POSE.steer
PI_A, PI_B, PI_FLAGS, PI_ORDER = PAIR_I.a, PAIR_I.b, PAIR_I.flags, PAIR_I.order
F_RECORDED, F_TOUCHING, F_BOUNCE, F_FREE_A, F_FREE_B, F_PUSHED, F_NEAR = 1, 2, 4, 8, 16, 32, 64
PF_NX, PF_NY, PF_DEPTH, PF_PX, PF_PY = PAIR_F.normal, PAIR_F.normal + 1, PAIR_F.depth, PAIR_F.point, PAIR_F.point + 1
PF_IMP, PF_FORCE, PF_TARGET = PAIR_F.impulse, PAIR_F.force, PAIR_F.target
PF_BNX, PF_BNY, PF_TNX, PF_TNY = (PAIR_F.first_normal, PAIR_F.first_normal + 1, PAIR_F.touch_normal,
                                  PAIR_F.touch_normal + 1)
OS_LEVEL, OS_BLOCK, OS_SEEN, OS_STACK, OS_COUNT = (OBJECT_S.level, OBJECT_S.blocker, OBJECT_S.stamp, OBJECT_S.stack,
                                                   OBJECT_S.count)
EI_PAIRS, EI_DROPPED, EI_SWEEPS, EI_STAMP = ENV_I.pairs, ENV_I.dropped, ENV_I.sweeps, ENV_I.stamp
EI_TOUCH, EI_DONE, EI_PASSES = ENV_I.touch, ENV_I.done, ENV_I.passes
EI_CURSOR, EI_BLOCKERS, EI_MOVED = ENV_I.cursor, ENV_I.blockers, ENV_I.moved


# --------------------------------------------------------------------------- what kernels take
warnings.filterwarnings("ignore", message=".*non-taichi function \"PlanarData\"")


class PlanarData:
    """The planar world's arrays inside a kernel, as kernel functions take them (``D: ti.template()``): one
    :class:`BlockRef` per model block, named as in :data:`MODEL_REFS` (``D.obj_i``, ``D.params``, ...), built
    from ``model_i`` and ``model_f`` (``offsets`` holds the offsets row: ``model_i`` itself), and the per-env
    tables the kernel binds, by their names in :data:`TABLES` (``D.pose``, ``D.vel``, ``D.pair_i``, ...).
    Built in a kernel from its array arguments, once per env."""

    def __init__(self, offsets, model_i, model_f, **tables):
        unknown = set(tables) - {t.name for t in TABLES}
        if unknown:
            raise TypeError(f"PlanarData: unknown tables {sorted(unknown)}")
        arrays = {"model_i": model_i, "model_f": model_f}
        for arena, block, col, name in MODEL_REFS:
            setattr(self, name, BlockRef(arrays[arena.name], block, False, offsets=offsets,
                                         index=getattr(OFFSETS, col)))
        for name, arr in tables.items():
            setattr(self, name, arr)
