"""Column indices of the packed model arrays shared by the Python builder and the kernels.

Per body, ``body_i`` is an 8-int vector and ``body_f`` an 8-float vector; per pair, ``pair_i`` is an
8-int vector. Module-level ints are compile-time constants inside kernels.
"""
import taichi as ti

ivec8 = ti.types.vector(8, ti.i32)

# body_i columns
B_TYPE, B_PT0, B_NPT, B_PL0, B_NPL, B_QS, B_US, B_MAT = range(8)
# body_f columns: shape params p0..p3 (see bodies/shapes.py), point inflation, bounding radius, mass
F_P0, F_P1, F_P2, F_P3, F_INFL, F_RAD, F_MASS, F_SPARE = range(8)
# pair_i columns: kind, body (b side), other (body on the a side, or height-map index), first slot, capacity
P_KIND, P_BODY, P_OTHER, P_SLOT, P_CAP = range(5)
# (static pairs: a shape with the ground, a height map or a soil bed. Shape-shape pairs are found each step
# by the broadphase and listed per env in ``broad``)

# pair kinds
PAIR_GROUND, PAIR_HEIGHTMAP, PAIR_SHAPES, PAIR_SOIL = 0, 1, 2, 3

# shape types (mirror bodies.shapes.ShapeType)
SPHERE, BOX, CAPSULE, CYLINDER, MESH = 0, 1, 2, 3, 4

# feature id bases: a contact's feature id is unique within its pair, so warm starts can match it
FEAT_POINT = 0              # shape sample point k (and cylinder support points after the rim points)
FEAT_OTHER_POINT = 100_000_000  # sample point k of the other body (shape-shape pairs)
FEAT_TRIANGLE = 200_000_000     # height-map triangle 2 * cell + t
FEAT_VERTEX = 400_000_000       # height-map vertex poking into a shape
FEAT_BELOW = 600_000_000        # point below a height-map surface (pushed out along the normal)
FEAT_EDGE = 800_000_000         # height-map ridge edge 3 * cell + k cutting into a shape
FEAT_SOIL = 1_000_000_000       # soil quadrature point at bed sample (local index)

# solver parameters, passed to the kernels as one array (see World._upload_params)
# (the integer settings are stored as floats: one array fewer keeps the step kernel within the 31 array
# arguments that Vulkan (lavapipe) binds, see world.MAX_KERNEL_ARRAYS)
# PF_N_PAIRS counts the static pairs (a shape with the ground or a map); PF_POOL0 is the first contact slot of
# the shared pool that shape-shape pairs take their slots from; PF_N_MAT the materials in the pair_mat table;
# PF_AXIS the broadphase sweep axis (0, 1, 2)
(PF_DT, PF_GX, PF_GY, PF_GZ, PF_TOL, PF_SLOP, PF_ERP, PF_MAX_PUSH, PF_REST_THRESHOLD, PF_MARGIN,
 PF_GROUND_HEIGHT, PF_MAX_SWEEPS, PF_WARM_START, PF_N_PAIRS, PF_TERRAIN_WARM_START, PF_N_SOIL,
 PF_POOL0, PF_N_MAT, PF_AXIS) = range(19)
N_PARAMS = 19

# per-env counters (``env_info``): Gauss-Seidel sweeps of the last step, shape-shape pairs found this step and
# the last step, pairs dropped because the pair table was full
EI_SWEEPS, EI_PAIRS, EI_PREV_PAIRS, EI_PAIRS_DROPPED = range(4)

# the broadphase array ``broad`` (per env, ivec4 rows): rows [0, n_bodies) hold the bodies sorted along the
# sweep axis (order, pairs per body, first pair of the body, fill cursor); the next max_pairs rows this
# step's shape-shape pairs (body, other, first slot, contacts), body < other, sorted by (body, other); the
# last max_pairs rows the same table of the previous step (for warm starts)
BR_ORDER, BR_COUNT, BR_START, BR_FILL = range(4)
DP_BODY, DP_OTHER, DP_SLOT, DP_COUNT = range(4)

# height maps: hm_int = (first sample, x samples, y samples, first soil sample or -1, first soil row or -1,
# 3 spare); hm_geom = (x size,
# y size, centre x, centre y, then the 8 soil material values in SOIL_FIELDS order, zero for rigid maps)
HM_SOIL0 = 4
