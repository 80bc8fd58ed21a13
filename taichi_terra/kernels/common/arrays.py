"""Every array of the rigid world, declared once: Model, State, Control and Scratch.

Each arena below is one Taichi ndarray (see ``schema.py``); each block in it a table with named columns.
The step kernel binds these arrays and nothing else:

=========== ======= ====== ==========================================================================
array       role    dtype  blocks
=========== ======= ====== ==========================================================================
model_i     model   i32    offsets, settings_i, body, pair, map
model_f     model   real   settings_f, body, inertia, point, plane, pair_material, map
heights     model   real   sample (every height map's samples, map after map)
q           state   real   free_body (position, orientation) per body: the generalized coordinates
u           state   real   free_body (linear, angular velocity) per body: the generalized velocities
state_f     state   real   contact (last step's contacts), soil (per-sample soil history)
state_i     state   i32    env, pair_count, feature, sweep_order, shape_pair, prev_shape_pair
control     control real   body_load (external force and torque) per body
scratch_f   scratch real   link (world inverse inertia), reach (broadphase spheres), row (solver rows)
scratch_i   scratch i32    row (kind, slot, pair, sides), sweep (broadphase counts)
soil_rev    state   i64    revision per soil-bed sample row (for renderers; not checkpointed)
=========== ======= ====== ==========================================================================

Block offsets depend on the world (how many bodies, slots, samples); ``World.build`` computes them from
these declarations and writes them to the ``offsets`` row of ``model_i``, where the kernels read them
(:class:`StepData`). Checkpoints copy State and Control; Scratch is rebuilt every step.
"""
import warnings

import taichi as ti

from .schema import Arena, Block, BlockRef, get3, getn

# --------------------------------------------------------------------------- model
SETTINGS_I = Block("settings_i", [
    ("n_static_pairs", 1), ("pool0", 1), ("n_materials", 1), ("sweep_axis", 1), ("max_sweeps", 1),
    ("warm_start", 1), ("terrain_warm_start", 1), ("n_soil_samples", 1), ("n_bodies", 1), ("n_maps", 1),
    ("max_shape_pairs", 1), ("n_slots", 1)],
    "integer settings: static pairs (a shape with the ground or a map), first slot of the shared contact pool, "
    "materials, broadphase sweep axis (0-2), solver sweeps at most, warm-start flags (0/1), soil samples, bodies, "
    "maps, size of the shape-pair table, contact slots per env")
BODY_I = Block("body", [("shape", 1), ("point0", 1), ("n_points", 1), ("plane0", 1), ("n_planes", 1), ("q0", 1),
                        ("u0", 1), ("material", 1)],
               "per body: shape type (layout.py), first and count of its sample points and face planes, first "
               "column of its coordinates in q and of its velocities in u, material index")
PAIR = Block("pair", [("kind", 1), ("body", 1), ("other", 1), ("slot0", 1), ("capacity", 1)],
             "per static pair: kind (layout.py PAIR_*), body (the b side), other (height-map index), first "
             "contact slot, slots")
MAP_I = Block("map", [("sample0", 1), ("nx", 1), ("ny", 1), ("soil0", 1), ("soil_row0", 1)],
              "per height map: first sample in heights, samples along x and y, first soil sample and first soil "
              "sample row (-1: a rigid map)")
SETTINGS_F = Block("settings_f", [
    ("dt", 1), ("gravity", 3), ("tolerance", 1), ("slop", 1), ("erp", 1), ("max_push", 1),
    ("restitution_threshold", 1), ("margin", 1), ("ground_height", 1)],
    "float settings: time step [s], gravity [m/s^2], sweep tolerance [m/s], slop [m], erp, max push [m/s], "
    "restitution threshold [m/s], contact margin [m], ground height [m]")
BODY_F = Block("body", [("params", 4), ("inflation", 1), ("radius", 1), ("mass", 1)],
               "per body: shape parameters (bodies/shapes.py) [m], inflation of its sample points [m], "
               "bounding radius [m], mass [kg]")
INERTIA = Block("inertia", [("inertia", 9)],
                "per body: body-frame inertia about the centre of mass, row by row [kg m^2]")
POINT = Block("point", [("position", 3)], "shape sample points in the body frame [m]")
PLANE = Block("plane", [("normal", 3), ("offset", 1)], "shape face planes n . x <= d in the body frame [m]")
PAIR_MATERIAL = Block("pair_material", [("friction", 1), ("restitution", 1)],
                      "per static pair, then per material pair (i * n_materials + j): Coulomb friction, "
                      "restitution")
SOIL_MATERIAL = Block("soil_material", [
    ("bekker_kc", 1), ("bekker_kphi", 1), ("sinkage_exponent", 1), ("elastic_stiffness", 1), ("damping", 1),
    ("cohesion", 1), ("friction_coefficient", 1), ("shear_displacement", 1)],
    "a soil material (terrain/soil.py SoilMaterial, same names and units): the columns of a map's soil vector")
MAP_F = Block("map", [("size", 2), ("centre", 2), ("soil", SOIL_MATERIAL.stride), ("rotation", 9), ("origin", 3)],
              "per height map: extent [m], centre in the map frame [m], soil material (SOIL_FIELDS order; zero "
              "for rigid maps), rotation map to world (row by row), origin [m]")
SAMPLE = Block("sample", [("height", 1)], "height-map samples [m] (a soil bed's undeformed surface)")

# --------------------------------------------------------------------------- state
Q_FREE = Block("free_body", [("position", 3), ("orientation", 4)],
               "per free body: centre of mass [m] and unit quaternion (w, x, y, z)")
U_FREE = Block("free_body", [("linear", 3), ("angular", 3)],
               "per free body: centre-of-mass velocity [m/s] and world angular velocity [rad/s]")
CONTACT = Block("contact", [("position", 3), ("normal", 3), ("depth", 1), ("impulse", 3), ("area", 1)],
                "per contact slot: world point [m], unit normal from side a to side b, depth (> 0 overlapping) "
                "[m], the last step's world impulse [N s], quadrature area of a soil point [m^2]")
SOIL = Block("soil", [("sinkage", 1), ("plastic", 1), ("slip", 1), ("loaded", 1)],
             "per soil sample: total sinkage [m], plastic sinkage [m], accumulated slip [m], loaded last step (0/1)")
ENV = Block("env", [("shape_pairs", 1), ("prev_shape_pairs", 1), ("pairs_dropped", 1), ("sweeps", 1)],
            "per env: shape pairs this step and the last, pairs dropped (table full), sweeps of the last step")
PAIR_COUNT = Block("pair_count", [("count", 1), ("dropped", 1)],
                   "per pair (static pairs, then this step's shape pairs): contacts found, contacts dropped")
FEATURE = Block("feature", [("now", 1), ("last", 1)],
                "per contact slot: feature id this step and in the last step (-1: none), for warm starts")
SWEEP_ORDER = Block("sweep_order", [("body", 1)], "bodies sorted along the broadphase axis")
SHAPE_PAIR = Block("shape_pair", [("body", 1), ("other", 1), ("slot0", 1), ("count", 1)],
                   "this step's shape-shape pairs (body < other), sorted by (body, other): first contact slot, contacts")
PREV_SHAPE_PAIR = Block("prev_shape_pair", [("body", 1), ("other", 1), ("slot0", 1), ("count", 1)],
                        "the last step's shape-shape pairs, for warm starts")
ROW_REVISION = Block("row_revision", [("revision", 1)],
                     "per soil-bed sample row: advances whenever a surface height in the row changes")

# --------------------------------------------------------------------------- control
BODY_LOAD = Block("body_load", [("force", 3), ("torque", 3)],
                  "per body: external force [N] at the centre of mass and torque [N m], world frame")

# --------------------------------------------------------------------------- scratch
LINK = Block("link", [("inv_inertia", 9)], "per link: world inverse inertia R I^-1 R^T [1/(kg m^2)]")
REACH = Block("reach", [("centre", 3), ("low", 1), ("high", 1), ("radius", 1)],
              "per body: broadphase sphere centre [m], its interval along the sweep axis [m], grown radius [m]")
ROW_F = Block("row", [("delassus", 9), ("impulse", 3), ("target", 1), ("bounce", 1), ("width", 1)],
              "per row: Delassus block in the contact frame, impulse in the frame [N s], target normal velocity "
              "[m/s] (rigid rows), bounce target of this step's impact wave [m/s] (< 0: none), footprint "
              "width b of a soil row [m]")
ROW_I = Block("row", [("kind", 1), ("slot", 1), ("pair", 1), ("side_a", 1), ("side_b", 1), ("impacted", 1)],
              "per row: kind (layout.py ROW_*), contact slot, pair, link of each side (-1: static), took an "
              "impact impulse this step (0/1)")
SWEEP = Block("sweep", [("count", 1), ("start", 1), ("fill", 1)],
              "per body: its shape pairs with higher bodies, first entry in the pair table, entries written")

MODEL_I = Arena("model_i", "i32", False, [Block("offsets", []), SETTINGS_I, BODY_I, PAIR, MAP_I], "model")
MODEL_F = Arena("model_f", "real", False, [SETTINGS_F, BODY_F, INERTIA, POINT, PLANE, PAIR_MATERIAL, MAP_F], "model")
HEIGHTS = Arena("heights", "real", False, [SAMPLE], "model")
Q = Arena("q", "real", True, [Q_FREE], "state")
U = Arena("u", "real", True, [U_FREE], "state")
STATE_F = Arena("state_f", "real", True, [CONTACT, SOIL], "state")
STATE_I = Arena("state_i", "i32", True, [ENV, PAIR_COUNT, FEATURE, SWEEP_ORDER, SHAPE_PAIR, PREV_SHAPE_PAIR],
                "state")
CONTROL = Arena("control", "real", True, [BODY_LOAD], "control")
SCRATCH_F = Arena("scratch_f", "real", True, [LINK, REACH, ROW_F], "scratch")
SCRATCH_I = Arena("scratch_i", "i32", True, [ROW_I, SWEEP], "scratch")
SOIL_REV = Arena("soil_rev", "i64", True, [ROW_REVISION], "state")

#: every array of the rigid world, in the step kernel's argument order
ARENAS = (MODEL_I, MODEL_F, HEIGHTS, Q, U, STATE_F, STATE_I, CONTROL, SCRATCH_F, SCRATCH_I, SOIL_REV)
#: arrays a checkpoint copies (soil_rev is a renderer's revision counter: never rewound)
CHECKPOINTED = ("q", "u", "state_f", "state_i", "control")


def _offset_columns():
    """One column of the ``offsets`` row per block whose offset the kernels need (every block of every
    arena but the ``offsets`` row itself), named ``<arena>.<block>``."""
    return [(f"{a.name}.{b.name}", 1) for a in ARENAS for b in a.blocks if b.name != "offsets"]


OFFSETS = Block("offsets", _offset_columns(), "offset of every block in its arena")
MODEL_I.blocks[0] = OFFSETS
MODEL_I.block["offsets"] = OFFSETS


def offset_column(arena: Arena, block: Block) -> int:
    return OFFSETS.columns[f"{arena.name}.{block.name}"][0]


# --------------------------------------------------------------------------- what kernels take
warnings.filterwarnings("ignore", message=".*non-taichi function \"(StepData|BlockRef|PlanarModel)\"")


class StepData:
    """The rigid world's arrays inside a kernel, as kernel functions take them: ``D.q``, ``D.u`` and
    ``D.heights`` are the raw arrays; every other block is a :class:`BlockRef` named after it
    (``D.contact``, ``D.body_i``, ``D.body_f``, ...). Built in a kernel from its array arguments; ``offsets``
    is what holds the ``offsets`` row: ``model_i`` itself. Each block's offset is read once into its own
    local variable (a kernel-local vector of all offsets made lavapipe's shader compile of the step kernel
    twice as slow; reading the offset from ``model_i`` at every access kept it cheap to compile but cost
    loads in the sweep)."""

    def __init__(self, offsets, **arrays):
        unknown = set(arrays) - {a.name for a in ARENAS}
        if unknown:
            raise TypeError(f"StepData: unknown arrays {sorted(unknown)}")
        for name, arr in arrays.items():
            setattr(self, name, arr)
        for arena in ARENAS:
            if arena.name not in arrays:
                continue
            for block in arena.blocks:
                if block is not OFFSETS:
                    setattr(self, _REF_NAMES[(arena.name, block.name)],
                            BlockRef(arrays[arena.name], block, arena.per_env, offsets=offsets,
                                     index=offset_column(arena, block)))


#: the attribute of StepData that holds each block (where a block's name alone would be ambiguous, the
#: arena's kind is added: body_i / body_f, map_i / map_f, row_i / row_f)
_REF_NAMES = {
    ("model_i", "settings_i"): "settings_i", ("model_i", "body"): "body_i", ("model_i", "pair"): "pair",
    ("model_i", "map"): "map_i", ("model_f", "settings_f"): "settings_f", ("model_f", "body"): "body_f",
    ("model_f", "inertia"): "inertia", ("model_f", "point"): "point", ("model_f", "plane"): "plane", ("model_f", "pair_material"): "pair_material",
    ("model_f", "map"): "map_f", ("heights", "sample"): "sample", ("q", "free_body"): "q_free",
    ("u", "free_body"): "u_free", ("state_f", "contact"): "contact", ("state_f", "soil"): "soil",
    ("state_i", "env"): "env", ("state_i", "pair_count"): "pair_count", ("state_i", "feature"): "feature",
    ("state_i", "sweep_order"): "sweep_order", ("state_i", "shape_pair"): "shape_pair",
    ("state_i", "prev_shape_pair"): "prev_shape_pair", ("control", "body_load"): "load",
    ("scratch_f", "link"): "link", ("scratch_f", "reach"): "reach", ("scratch_f", "row"): "row_f",
    ("scratch_i", "row"): "row_i", ("scratch_i", "sweep"): "sweep", ("soil_rev", "row_revision"): "rev",
}
assert set(_REF_NAMES) == {(a.name, b.name) for a in ARENAS for b in a.blocks if b is not OFFSETS}


# --------------------------------------------------------------------------- accessors of model rows
@ti.func
def point_at(points: ti.template(), k):
    """Sample point ``k`` of the ``point`` block, body frame [m]."""
    return get3(points, 0, k, POINT.position)


@ti.func
def plane_at(planes: ti.template(), k):
    """Face plane ``k`` of the ``plane`` block as (normal, offset)."""
    return getn(planes, 0, k, PLANE.normal, 4)


@ti.func
def body_params(bf):
    """The shape parameters (4-vector) of a ``body_f`` row."""
    return ti.Vector([bf[BODY_F.params + k] for k in ti.static(range(4))])
