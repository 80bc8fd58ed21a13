"""Every array of the rigid world, declared once: Model, State, Control and Scratch.

Each arena below is one Taichi ndarray (see ``schema.py``); each block in it a table with named columns.
The step kernel binds these arrays and nothing else:

=========== ======= ====== ==========================================================================
array       role    dtype  blocks
=========== ======= ====== ==========================================================================
model_i     model   i32    offsets, settings_i, body, pair, map, tree, joint, pin, track
model_f     model   real   settings_f, body, inertia, point, plane, map, joint, pin, track
heights     model   real   sample (every height map's samples, map after map)
q           state   real   the generalized coordinates: free_body (position, orientation) per body, tree
u           state   real   the generalized velocities: free_body (linear, angular velocity) per body, tree
state_f     state   real   contact (last step's contacts), soil (per-sample soil history), pin (impulses),
                           joint_state (impulses of the joint limit and friction rows)
state_i     state   i32    env, pair_count, feature, sweep_order, shape_pair, prev_shape_pair, soil_span
control     control real   body_load (external force and torque) per body, drive (per tree dof), the per-env
                           parameters: gravity, mass_scale, pair_material (friction, restitution), soil_material (per map),
                           medium (per granular medium)
scratch_f   scratch real   link (world inverse inertia), reach (broadphase spheres), row (solver rows), frame,
                           link_dyn, tree_mass, tree_factor, tree_inverse, tree_dof,
                           link_response (articulated trees), block_matrix, block_vector, block_system,
                           block_unknown (contact block),
                           track_dyn (belts), u_seen (the sweeps' stopping test)
scratch_i   scratch i32    row (kind, slot, pair, sides), sweep (broadphase counts), launch (the step's stamp)
soil_rev    state   i64    revision per soil-bed sample row (for renderers; not checkpointed)
=========== ======= ====== ==========================================================================

Block offsets depend on the world (how many bodies, slots, samples); ``World.build`` computes them from
these declarations and writes them to the ``offsets`` row of ``model_i``, where the kernels read them
(:class:`StepData`). Checkpoints copy State and Control; Scratch is rebuilt every step.
"""
import warnings

import taichi as ti

from .schema import Arena, Block, BlockRef, RowView, get, get3, getn

# --------------------------------------------------------------------------- model
SETTINGS_I = Block("settings_i", [
    ("n_static_pairs", 1), ("pool0", 1), ("n_materials", 1), ("sweep_axis", 1), ("max_sweeps", 1),
    ("warm_start", 1), ("terrain_warm_start", 1), ("n_soil_samples", 1), ("n_bodies", 1), ("n_maps", 1),
    ("max_shape_pairs", 1), ("n_slots", 1), ("n_trees", 1), ("n_free_bodies", 1), ("n_pins", 1),
    ("broadphase", 1), ("contact_block", 1), ("n_tracks", 1), ("n_plates", 1), ("n_media", 1),
    ("n_plate_carriers", 1), ("soil_block", 1), ("pin_block", 1), ("tree_soil_block", 1), ("soil_quad_rows", 1)],
    "integer settings: static pairs (a shape with the ground or a map), first slot of the shared contact pool, "
    "materials, broadphase sweep axis (0-2), solver sweeps at most, warm-start flags (0/1), soil samples, bodies, "
    "maps, size of the shape-pair table, contact slots per env, articulated trees, free bodies (the first bodies), "
    "pins, whether any two bodies may touch (0: the step skips the broadphase), whether the sweeps solve the "
    "sticking contacts of trees together (0/1, solver/block.py), tracks (belts on tree links), RFT plates, "
    "granular media, plate carriers (free bodies + tree joint rows, where any plate exists; else 0), whether "
    "the sweeps solve each body's soil rows together (0/1, solver/soil_block.py), each tree's pins together "
    "and its rows push it with its pins held (0/1, solver/pin_block.py), the soil blocks of a tree's links "
    "together (0/1, solver/soil_group.py), the quad_row entries per static pair (at least the sample rows "
    "of any soil pair's footprint; 0 without soil beds)")
BODY_I = Block("body", [("shape", 1), ("point0", 1), ("n_points", 1), ("plane0", 1), ("n_planes", 1), ("q0", 1),
                        ("u0", 1), ("material", 1), ("joint", 1), ("track", 1)],
               "per body (free bodies first, then the shapes on tree links): shape type (layout.py), first and count "
               "of its sample points and face planes, first column of its coordinates in q and of its velocities "
               "in u (a free body), material index, the joint row of the link carrying it (-1: a free body), the track "
               "whose belt it is a part of (-1: none; belts/rows.py)")
PAIR = Block("pair", [("kind", 1), ("body", 1), ("other", 1), ("slot0", 1), ("capacity", 1)],
             "per static pair: kind (layout.py PAIR_*), body (the b side), other (height-map index), first "
             "contact slot, slots")
MAP_I = Block("map", [("sample0", 1), ("nx", 1), ("ny", 1), ("soil0", 1), ("soil_row0", 1), ("env_stride", 1)],
              "per height map: first sample in heights, samples along x and y, first soil sample and first soil "
              "sample row (-1: a rigid map), and the samples between one env's heights and the next's (0: every "
              "env shares one set)")
TREE = Block("tree", [("joint0", 1), ("n_joints", 1), ("q0", 1), ("u0", 1), ("nv", 1), ("matrix0", 1),
                     ("inverse_dynamics", 1), ("self_collision", 1), ("loop_pins", 1), ("pin_matrix0", 1),
                     ("pin_vector0", 1)],
             "per articulated tree: its first row in the joint blocks and joint count (joint k moves link k; the "
             "root first, parents before children), first row of its coordinates in the tree block of q and of "
             "its velocities in u (also its first row of the per-dof blocks), dofs, first entry of its nv x nv "
             "matrices, whether each step computes the wrenches its joints transmit (0/1), whether its links "
             "collide with each other (0/1; never a link with its parent), its pins with response columns (the pins "
             "of its loops and those holding it to the world; solver/pin_block.py), the first entry of their "
             "(3 n) x (3 n) matrix in PIN_MATRIX and their first row in PIN_VECTOR")
JOINT_I = Block("joint", [("tree", 1), ("parent", 1), ("type", 1), ("q", 1), ("u", 1), ("dof", 1),
                          ("response0", 1)],
                "per tree joint (the joint that moves link k of a tree): tree, parent joint row (-1: the root), type "
                "(layout.py JOINT_*), its coordinate's row in q's tree block and its velocity's in u's (the first of "
                "7 and 6 for a floating root), its first dof within the tree, the first row of its link's response "
                "columns in the link_response block (nv of its tree)")
DOF_I = Block("dof", [("end", 1), ("run", 1), ("up", 1)],
              "per tree dof (numbered within its tree: a floating root's six first, then one per joint, parents "
              "before children, each subtree's dofs consecutive): one past the last dof of the subtree it moves "
              "(row d of the factor U of M~ = U U^T has its entries in columns d .. end-1); the first dof of the "
              "run of consecutive dofs that ends at it, each the parent of the next; the dof on the path to the "
              "root just before that run (-1: none). A dof's ancestors are its run, then the run ending at up, "
              "and so on (dynamics/tree_solve.py)")
#: drives of one track at most (belts/rows.py)
TRACK_DRIVES = 4
TRACK_I = Block("track", [("tree", 1), ("joint", 1), ("n_drives", 1), ("dof", TRACK_DRIVES)],
                "per track: its tree, the joint row of the link carrying the belt, its drives and each drive's dof "
                "within the tree (unused entries repeat the last)")
PIN_I = Block("pin", [("joint_a", 1), ("joint_b", 1), ("response0", 1), ("local", 1)],
              "per pin: the joint rows of the links its two points are fixed on (joint_b -1: a fixed world point); "
              "the first of its 3 nv rows in PIN_RESPONSE (-1: none, the pin joins two trees; solver/pins.py); "
              "its index among its tree's pins with response columns (-1: none; solver/pin_block.py)")
SETTINGS_F = Block("settings_f", [
    ("dt", 1), ("tolerance", 1), ("slop", 1), ("erp", 1), ("max_push", 1),
    ("restitution_threshold", 1), ("margin", 1), ("ground_height", 1), ("bound", 1), ("speed_limit", 1)],
    "float settings: time step [s], sweep tolerance [m/s], slop [m], erp, max push [m/s], "
    "restitution threshold [m/s], contact margin [m], ground height [m], the divergence watch's bound on every "
    "position coordinate [m] and on every velocity component [m/s or rad/s]")
BODY_F = Block("body", [("params", 4), ("inflation", 1), ("radius", 1), ("mass", 1), ("offset", 3),
                        ("offset_rotation", 9)],
               "per body: shape parameters (bodies/shapes.py) [m], inflation of its sample points [m], "
               "bounding radius [m], mass [kg] (a free body's), placement of the shape frame on its link (position "
               "[m], rotation row by row; a shape on a tree link)")
INERTIA = Block("inertia", [("inertia", 9)],
                "per body: body-frame inertia about the centre of mass, row by row [kg m^2]")
POINT = Block("point", [("position", 3)], "shape sample points in the body frame [m]")
PLANE = Block("plane", [("normal", 3), ("offset", 1)], "shape face planes n . x <= d in the body frame [m]")
MAP_F = Block("map", [("size", 2), ("centre", 2), ("rotation", 9), ("origin", 3), ("top", 1)],
              "per height map: extent [m], centre in the map frame [m], rotation map to world (row by row), "
              "origin [m], its highest collision sample (map-frame z [m]; -1e300 when it has none)")
JOINT_F = Block("joint", [("origin", 3), ("origin_rotation", 9), ("axis", 3), ("mass", 1), ("com", 3),
                          ("inertia", 9), ("armature", 1), ("damping", 1), ("friction", 1), ("lower", 1), ("upper", 1),
                          ("velocity_limit", 1), ("effort_limit", 1)],
                "per tree joint: placement of the joint frame in the parent link's frame (position [m], rotation "
                "row by row; a root: its world placement), unit axis in the joint frame, the moved link's mass "
                "[kg], centre of mass [m] and inertia about it [kg m^2] in the link frame, rotor inertia added to "
                "the mass matrix [kg m^2 or kg], viscous damping [N m s/rad or N s/m], Coulomb friction [N m or N], "
                "position limits [rad or m], velocity [rad/s or m/s] and effort [N m or N] limits (inf: none)")
PIN_F = Block("pin", [("point_a", 3), ("point_b", 3)],
              "per pin: its point on link a in that link's frame [m], its point on link b in link b's frame (a "
              "world point [m] when joint_b is -1)")
TRACK_F = Block("track", [("gain", TRACK_DRIVES), ("width", 1)],
                "per track: each drive's gain, the belt speed per unit joint velocity [m/rad or m/m] (0 past the "
                "drives), and the belt's width [m]")
SAMPLE = Block("sample", [("height", 1)], "height-map samples [m] (a soil bed's undeformed surface)")

# --------------------------------------------------------------------------- state
Q_FREE = Block("free_body", [("position", 3), ("orientation", 4)],
               "per free body: centre of mass [m] and unit quaternion (w, x, y, z)")
U_FREE = Block("free_body", [("linear", 3), ("angular", 3)],
               "per free body: centre-of-mass velocity [m/s] and world angular velocity [rad/s]")
CONTACT = Block("contact", [("position", 3), ("normal", 3), ("depth", 1), ("impulse", 3), ("area", 1),
                            ("merged", 1), ("sample_offset", 3)],
                "per contact slot: world point [m], unit normal from side a to side b, depth (> 0 overlapping) "
                "[m], the last step's world impulse [N s], quadrature area of a soil point [m^2], 1 where the "
                "contact coincided with a deeper one of the same belt and took no impulse (belts/rows.py); for a "
                "soil point, the world vector from the point (the centroid of the part of the sample's cell "
                "its footprint covers) to the cell's centre [m] (zero where the footprint covers the whole cell)")
SOIL = Block("soil", [("sinkage", 1), ("plastic", 1), ("slip", 1), ("loaded", 1)],
             "per soil sample: total sinkage [m], plastic sinkage [m], accumulated slip [m], loaded last step (0/1)")
ENV = Block("env", [("shape_pairs", 1), ("prev_shape_pairs", 1), ("pairs_dropped", 1), ("sweeps", 1),
                    ("steps", 1), ("diverged", 1), ("diverged_body", 1), ("diverged_step", 1)],
            "per env: shape pairs this step and the last, pairs dropped (table full), sweeps of the last step, "
            "steps taken, and the divergence watch's finding (kernels/step.py watch_env): what (0: none, "
            "1: a non-finite coordinate, 2: a position out of bounds, 3: a non-finite velocity, 4: a speed over "
            "the limit, 5: the launch ran past the driver's loop limit), the body (a free body's index; "
            "n_free_bodies + t: tree t; -1: none in particular) and the step it was found after")
SOIL_SPAN = Block("soil_span", [("lo", 1), ("hi", 1), ("next_lo", 1), ("next_hi", 1)],
                  "per soil-bed sample row: the x indices lo..hi that hold every sample loaded in the last step "
                  "(lo > hi: none), the only samples whose elastic part can still need recovering; next_lo/next_hi "
                  "gather this step's while the history is written (kernels/soil/history.py). The full row after "
                  "a build or an edit of the soil state from the host")
PAIR_COUNT = Block("pair_count", [("count", 1), ("dropped", 1)],
                   "per pair (static pairs, then this step's shape pairs): contacts found, contacts dropped")
FEATURE = Block("feature", [("now", 1), ("last", 1)],
                "per contact slot: feature id this step and in the last step (-1: none), for warm starts")
SWEEP_ORDER = Block("sweep_order", [("body", 1)], "bodies sorted along the broadphase axis")
SHAPE_PAIR = Block("shape_pair", [("body", 1), ("other", 1), ("slot0", 1), ("count", 1)],
                   "this step's shape-shape pairs (body < other), sorted by (body, other): first contact slot, "
                   "contacts")
PREV_SHAPE_PAIR = Block("prev_shape_pair", [("body", 1), ("other", 1), ("slot0", 1), ("count", 1)],
                        "the last step's shape-shape pairs, for warm starts")
TREE_Q = Block("tree", [("coordinate", 1)],
               "every tree's generalized coordinates, tree after tree: a floating root's position [m] and unit "
               "quaternion (w, x, y, z), then one per joint [rad or m]")
TREE_U = Block("tree", [("velocity", 1)],
               "every tree's generalized velocities, tree after tree: a floating root's linear velocity of the "
               "root link's origin [m/s] and angular velocity [rad/s], both world frame (as a free body's), then one "
               "per joint [rad/s or m/s]")
PIN_STATE = Block("pin", [("impulse", 3), ("reaction", 3)],
                  "per pin: the last step's impulse on side b's point [N s], world frame (side a takes its opposite), "
                  "and the part of it that the pushes of rows on its tree's links took with them "
                  "(solver/pin_block.py)")
JOINT_STATE = Block("joint_state", [("limit", 1), ("friction", 1), ("held", 1)],
                    "per joint (a row of the joint block): the last step's impulses of its position-limit row "
                    "(signed: positive pushes towards larger coordinates) and of its Coulomb friction row "
                    "[N m s or N s]; the sign (+1, -1; 0: none) of the effort limit its drive is held at in the "
                    "next step, because at the end of the last one the drive asked for more than its limit "
                    "(dynamics/tree.py)")
ROW_REVISION = Block("row_revision", [("revision", 1)],
                     "per soil-bed sample row: advances whenever a surface height in the row changes")

# --------------------------------------------------------------------------- control
BODY_LOAD = Block("body_load", [("force", 3), ("torque", 3)],
                  "per body: external force [N] at the centre of mass and torque [N m], world frame")

DRIVE = Block("drive", [("force", 1), ("kp", 1), ("kd", 1), ("position_target", 1), ("velocity_target", 1)],
              "per tree dof: feed-forward generalized force [N m or N], PD gains [N m/rad, N m s/rad] and targets "
              "[rad, rad/s] (implicit in the velocity update)")

GRAVITY = Block("gravity", [("gravity", 3)], "per env, one row: gravity [m/s^2]")
MASS_SCALE = Block("mass_scale", [("scale", 1)],
                   "per env: per free body, then per tree joint row (the link it moves), the factor on its mass and "
                   "inertia (1: as built)")
PAIR_MATERIAL = Block("pair_material", [("friction", 1), ("restitution", 1)],
                      "per env, per static pair, then per material pair (i * n_materials + j): Coulomb friction, "
                      "restitution")
SOIL_MATERIAL = Block("soil_material", [
    ("bekker_kc", 1), ("bekker_kphi", 1), ("sinkage_exponent", 1), ("elastic_stiffness", 1), ("damping", 1),
    ("cohesion", 1), ("friction_coefficient", 1), ("shear_displacement", 1)],
    "per env, per height map: its soil material (terrain/soil.py SoilMaterial, same names and units; zero for "
    "rigid maps)")

# --------------------------------------------------------------------------- scratch
LINK = Block("link", [("inv_inertia", 9), ("inv_mass", 1)],
             "per link: world inverse inertia R I^-1 R^T [1/(kg m^2)] and inverse mass [1/kg] (free bodies)")
REACH = Block("reach", [("centre", 3), ("low", 1), ("high", 1), ("radius", 1)],
              "per body: broadphase sphere centre [m], its interval along the sweep axis [m], grown radius [m]")
ROW_F = Block("row", [("delassus", 9), ("impulse", 3), ("target", 1), ("bounce", 1), ("width", 1),
                     ("frame", 9), ("offset_a", 3), ("offset_b", 3), ("friction", 1), ("restitution", 1),
                     ("seen", 3), ("belt_a", 3), ("belt_b", 3), ("plastic", 1), ("slip_rate", 1),
                     ("anchor", 2)],
              "per row: Delassus block in the contact frame, impulse in the frame [N s], target normal velocity "
              "[m/s] (rigid rows), bounce target of this step's impact wave [m/s] (< 0: none), footprint "
              "width b of a soil row [m]; for contact and soil rows, the contact frame (n, t1, t2) as columns "
              "(row by row; a pin row with response columns keeps its K = J M~^-1 J^T [1/kg] there: PIN_ROW_F), the "
              "point's offsets from the references of side a and side b [m], and the friction "
              "and restitution coefficients of its material pair (0 for soil rows), fixed for the step once "
              "the rows are built; the row's velocity [m/s] (a joint row's: [m/s] or [rad/s], first entry) as "
              "the last sweep found it before updating the row (the sweeps' stop test); the world direction t [unit] "
              "in which the belt surface of each side runs at the point (zero for a side that is no belt); for a "
              "soil row, the rate at which its sample's slip grows with the point's slip (soil/law.py "
              "slip_rate) and, during the soil commit, the plastic sinkage it leaves at its sample [m]; a soil row's "
              "shear impulse [N s] when its soil block started (solver/soil_block.py)")
ROW_I = Block("row", [("kind", 1), ("slot", 1), ("pair", 1), ("side_a", 1), ("side_b", 1), ("impacted", 1),
                     ("block", 1), ("belt_a", 1), ("belt_b", 1)],
              "per row: kind (layout.py ROW_*), contact slot, pair, link of each side (-1: static), took an "
              "impact impulse this step (0/1), member of the contact block (solver/block.py; -1: not), the track "
              "of each side's belt (-1: none); joint rows and pins name the columns they use their own way "
              "(JOINT_ROW, PIN_ROW)")
#: the columns of a joint-limit or joint-friction row (``solver/limits.py``): its dof within the tree, its joint
#: row, the sign of its Jacobian (+1 at a lower limit, -1 at an upper; friction: +1) and its tree
JOINT_ROW = RowView(ROW_I, "joint rows", dof="slot", joint="pair", sign="side_a", tree="side_b")
#: the columns of a pin's row (``solver/pins.py``): the pin, the joint rows of the links its two ends are on
#: (side a, side b; -1: the world); ``ROW_F``: a pin with response columns keeps its ``K = J M~^-1 J^T``
#: [1/kg] where a contact keeps its frame
PIN_ROW = RowView(ROW_I, "pin rows", pin="pair", joint_a="side_a", joint_b="side_b")
PIN_ROW_F = RowView(ROW_F, "pin rows", k="frame")
FRAME = Block("frame", [("position", 3), ("rotation", 9), ("anchor", 3), ("motion", 6),
                        ("velocity", 6), ("bias", 6)],
              "per tree joint, of the link it moves, at the start of the step: world origin [m] and rotation (row "
              "by row), the joint's world anchor [m], its motion subspace (the spatial velocity per unit "
              "velocity of a revolute or prismatic joint; zero for a root), the link's spatial velocity (angular "
              "[rad/s], then linear of the point at the tree's reference point, the root's origin [m/s]) and the "
              "velocity-product part of its spatial acceleration")
LINK_DYN = Block("link_dyn", [("mass", 1), ("moment", 3), ("inertia", 9), ("force", 6), ("transmitted", 6),
                              ("phi", 36), ("ready", 1), ("articulated", 36), ("articulated_force", 6),
                              ("column", 6), ("acceleration", 6), ("point_row", 1), ("point_offset", 3),
                              ("held", 1), ("pushed", 6)],
                 "per tree joint: the composite rigid body of the subtree it moves (mass [kg], first moment about "
                 "the reference point [kg m], world inertia about it [kg m^2]; the link's own in a tree that takes "
                 "the articulated-body algorithm this step) and the bias force it transmits "
                 "(moment about the reference point [N m], force [N]); the wrench the joint transmitted from the parent "
                 "to the subtree in the last step (moment about the joint's anchor at the start of that step [N m], "
                 "force [N], world axes; a tree with inverse dynamics on); the link's spatial response "
                 "Phi = J M~^-1 J^T (6x6, row by row: the spatial velocity change per unit spatial impulse about "
                 "the reference point) and whether it and the link's response columns are computed this step (0/1); "
                 "the articulated-body algorithm's articulated inertia of the subtree (6x6 row by row, ground "
                 "coordinates about the reference point) and its force, the joint's column U = I^A S and the "
                 "link's spatial acceleration (a tree without rows this step, dynamics/tree_solve.py); the first "
                 "contact or soil row of the step on the link (-1: none yet) and that row's point offset from the "
                 "reference point [m], whose point response LINK_RESPONSE.point holds; whether its responses hold "
                 "the tree's pins (1: Phi and the columns are of the tree with its pins held, solver/pin_block.py) "
                 "and the spatial impulse pushed through them since (moment about the reference point, impulse)")
LINK_RESPONSE = Block("link_response", [("column", 6), ("point", 3)],
                      "per tree link, one row per dof of its tree: B = M~^-1 J^T, the velocity change of the tree per "
                      "unit spatial impulse (moment about the reference point, force) on the link, computed when a "
                      "row first pushes on the link in a step; and B A, the velocity change per unit world impulse "
                      "at the point of the link's first row (LINK_DYN.point_row, A = [skew(r); I])")
#: contact rows at most in one env's contact block (solver/block.py)
BLOCK_ROWS = 12
#: unknowns at most in the contact block's active-set system (three a member)
BLOCK_UNKNOWNS = 3 * BLOCK_ROWS
BLOCK_MATRIX = Block("block_matrix", [("delassus", 9)],
                     "per env, BLOCK_ROWS x BLOCK_ROWS 3x3 blocks (row by row): the contact block's Delassus "
                     "matrix in the rows' contact frames (both triangles)")
BLOCK_VECTOR = Block("block_vector", [("free", 3), ("slip", 3), ("next_slip", 3)],
                     "per env, BLOCK_ROWS entries: each member's velocity less its target [m/s] with every "
                     "member's impulse taken out, a sliding member's impulse per unit normal impulse (its "
                     "contact frame; solver/active_set.py), and the one the last solution asks for")
BLOCK_SYSTEM = Block("block_system", [("entry", 1)],
                     "per env, BLOCK_UNKNOWNS x BLOCK_UNKNOWNS row by row: the active-set system of the contact "
                     "block's members as built, then as eliminated (solver/active_set.py)")
BLOCK_UNKNOWN = Block("block_unknown", [("rhs", 1), ("scale", 1), ("solution", 1), ("pivot", 1)],
                      "per env, BLOCK_UNKNOWNS entries: the active-set system's right-hand side, each unknown's "
                      "diagonal entry as built (the pivots' scale), the solution [N s] and the row each "
                      "elimination step swapped in (its index, as a float)")
BLOCK_I = Block("block", [("row", 1), ("start", 1), ("state", 1), ("next", 1), ("switches", 1)],
                "per env, BLOCK_ROWS entries: the row of each contact-block member; in the active-set solve, "
                "the member's first unknown (-1: none), its state (0 off, 1 sticking, 2 sliding), the state the "
                "last solution asks for and how often it changed state in this solve")
BLOCK_STATE = Block("block_state", [("count", 1), ("built", 1), ("off", 1), ("solved", 1), ("failures", 1),
                                    ("factored", 1)],
                    "per env: contact-block members this step, Delassus matrix built (0/1), the block off for the "
                    "rest of the step (0/1: turned off in the settings, or its active-set solves failed "
                    "MAX_FAILURES times), the members the last sweep solved together (bit k: member k), the "
                    "active-set solves that failed this step, and whether BLOCK_SYSTEM holds the factors of the "
                    "members' present states (0: no; 1: as built; 2: with the diagonal raised)")
#: tree links at most in one env's soil group, and soil blocks at most on them (solver/soil_group.py)
SOIL_GROUP_LINKS = 6
SOIL_GROUP_BLOCKS = 12
SOIL_GROUP_I = Block("soil_group", [("first", 1), ("end", 1), ("member", 1), ("joint", 1), ("tree", 1)],
                     "per env, SOIL_GROUP_BLOCKS entries: the soil blocks of tree links this step that the soil group "
                     "solves together: the first row and one past the last of each, and the member (its link) it "
                     "belongs to; the first SOIL_GROUP_LINKS entries also hold each member's joint row and tree")
SOIL_GROUP_STATE = Block("soil_group_state", [("count", 1), ("blocks", 1), ("built", 1), ("solved", 1),
                                              ("failed", 1)],
                         "per env: members (tree links) of the soil group this step (0: none) and their soil "
                         "blocks, its Phi built this step (0/1), and the sweeps of this step in which it "
                         "converged and did not")
LAUNCH = Block("launch", [("stamp", 1)],
               "per env: the ``stamp`` argument of the step kernel's last launch, written before its steps "
               "(taichi_terra/kernel_cache.py reads it to tell the kernel from its stand-in, which writes nothing)")
SOIL_GROUP_F = Block("soil_group", [("origin", 6), ("velocity", 6), ("start", 6), ("summed", 6), ("h", 36),
                                    ("step", 6)],
                     "per soil-group member: its link's spatial velocity when the group started [rad/s, m/s] and "
                     "where Newton's method has it now, its rows' summed spatial impulse when the group started and "
                     "at the last pass [N m s, N s], H (6x6 row by row) and the last Newton step (solver/soil_group.py)")
SOIL_GROUP_MATRIX = Block("soil_group_matrix", [("phi", 1), ("system", 1)],
                          "per env, (6 SOIL_GROUP_LINKS) x (6 SOIL_GROUP_LINKS) row by row: the members' spatial "
                          "responses to each other (6x6 blocks Phi_ij = J_i M~^-1 J_j^T, zero between trees) and "
                          "Newton's system I + Phi H as eliminated (solver/soil_group.py)")
SOIL_GROUP_VECTOR = Block("soil_group_vector", [("rhs", 1)],
                          "per env, 6 SOIL_GROUP_LINKS entries: the right-hand side of Newton's system, then its "
                          "solution (solver/soil_group.py)")
PIN_RESPONSE = Block("pin_response", [("column", 1)],
                     "per pin within one tree (or holding a tree to the world), three columns of one row per dof "
                     "of the tree, column after column: G = M~^-1 J^T, the tree's velocity change per unit world "
                     "impulse along x, y and z at the pin (+ on side b, - on side a), for this step's factor")
PIN_MATRIX = Block("pin_matrix", [("factor", 1), ("null", 1), ("order", 1)],
                   "per tree with pins with response columns, (3 n) x (3 n) row by row: K = J M~^-1 J^T of its n pins "
                   "(J their points' relative velocities), as factored with symmetric pivoting P^T K P = L diag(d) L^T "
                   "(L below the diagonal, d on it, 0 for a pivot left out); in row c for each pivot c left out a "
                   "unit vector of K's null space, orthogonal to the others; in the first row of order the pin "
                   "vector's entry at each pivot position (P), in its second K's diagonal (solver/pin_block.py)")
PIN_VECTOR = Block("pin_vector", [("six", 6), ("value", 1)],
                   "three rows (x, y, z) per pin with response columns, tree after tree: work space of the pin "
                   "block (solver/pin_block.py), six columns and one")
TRACK_DYN = Block("track_dyn", [("gamma", 1), ("ready", 1)],
                  "per track: g^T M~^-1 g, the belt speed's change per unit belt impulse [1/kg] for this step's "
                  "factor, and whether it and the drives' rows of M~^-1 are ready this step (0/1)")
PLATE_I = Block("plate", [("carrier", 1)],
                "per RFT plate (granular/plates.py), grouped by carrier: the row of its carrier in PLATE_RANGE "
                "(a free body b: b; a tree link of joint row j: n_free_bodies + j)")
PLATE_F = Block("plate", [("centroid", 3), ("normal", 3), ("area", 1)],
                "per RFT plate: centroid [m] and outward unit normal in its carrier's frame (a free body's, or the "
                "link frame), area [m^2]")
PLATE_RANGE = Block("plate_range", [("first", 1), ("count", 1)],
                    "per plate carrier (free bodies, then tree joint rows): its first plate and plate count")
MEDIUM_I = Block("medium", [("map", 1), ("normalization", 1), ("row", 1)],
                 "per granular medium: the height map whose surface is the sand's (-1: flat), how Treers' "
                 "scaling is normalized (0: f(1) = 1, 1: RFT-SiM's constants), and whether its resistance acts "
                 "as a bounded row of the sweep (1) or as an applied force (0)")
MEDIUM_F = Block("medium", [("zeta", 1), ("smoothing", 1), ("height", 1), ("region", 4), ("coefficients", 9)],
                 "per env, per granular medium (control): zeta [N/cm^3], the smoothing factor of each plate's force (1: none), the "
                 "flat surface's height [m], the region (x_min, x_max, y_min, y_max) [m] where it acts, Li's nine "
                 "coefficients")
PLATE_STATE = Block("plate_state", [("force", 3), ("started", 1)],
                    "per RFT plate: its smoothed force of the last step [N, world] and whether it has one (0/1)")
PLATE_OUT = Block("plate_out", [("force", 3), ("depth", 1), ("medium", 1)],
                  "per RFT plate, this step: the force the medium put on it [N, world] (smoothed), the depth of its "
                  "centroid below the surface [m] (<= 0: above), and the medium it is in (-1: none)")
PLATE_LOAD = Block("plate_load", [("force", 3), ("torque", 3), ("row_force", 3), ("row_torque", 3)],
                   "per plate carrier (as PLATE_RANGE), this step: the sum of its plates' forces [N] and their "
                   "moment [N m] about the carrier's origin (a free body's centre of mass, a link frame's origin), "
                   "world axes, summed in plate order: of the plates in media that apply forces, then of those in "
                   "media whose resistance is a row (its bound; after the sweep, what the row applied)")
SAND = Block("sand", [("resistance", 6), ("impulse", 6), ("seen", 6), ("active", 1)],
             "per plate carrier, this step: its sand row (solver/sand.py): the impulse its plates' resistance gives "
             "over the step and the row's impulse (a free body: force, torque about its centre of mass [N s, N m s]; "
             "a tree link: moment about the tree's reference point, force), its twist the last sweep saw (a free "
             "body: v, omega; a link: omega, v at the reference point), and whether it has a row (0/1)")
TREE_MASS = Block("tree_mass", [("mass", 1)],
                  "per tree, nv x nv row by row: the mass matrix M (lower triangle; the rest is not written)")
TREE_FACTOR = Block("tree_factor", [("factor", 1)],
                    "per tree, nv x nv row by row: the factor U of M~ = U U^T, M~ the mass matrix plus the implicit "
                    "drive and damping terms (upper triangle, row d over the dofs of d's subtree: DOF_I)")
TREE_INVERSE = Block("tree_inverse", [("inverse", 1)],
                     "per tree, nv x nv row by row: M~^-1 (all of it where TREE_STEP.inverse is 1; else row d for each "
                     "dof d with a joint row this step)")
TREE_DOF = Block("tree_dof", [("bias", 1), ("applied", 1), ("rhs", 1), ("saturated", 1), ("pivot", 1),
                              ("held", 1), ("pushed", 1)],
                 "per tree dof: bias forces h = C u + g [N m or N], the generalized force the drives applied in "
                 "the last step, solver workspace, the sign of a drive held at its effort limit this step "
                 "(0: within it), and the articulated-body algorithm's pivot D = S^T I^A S + the joint's diagonal "
                 "terms of a 1-dof joint; whether its row of M~^-1 (TREE_INVERSE) is of the tree with its pins "
                 "held, and the impulse pushed through it since [N m s or N s] (solver/pin_block.py)")
TREE_STEP = Block("tree_step", [("factored", 1), ("inverse", 1), ("needed", 1)],
                  "per tree: 1 when some row (a contact, soil point, joint limit or friction, or pin) acts on it "
                  "this step, so its mass matrix is built and factored; 0 when its velocity update takes the "
                  "articulated-body algorithm instead; 1 when the factor comes with all of M~^-1 "
                  "(TREE_INVERSE), where the rows need more of its columns than that costs; how many columns of "
                  "M~^-1 the step's rows need (six per pair or pin side on one of its links, one per joint row)")
SOIL_CLAIM = Block("soil_claim", [("slot", 1), ("joint", 1)],
                   "per soil-bed sample (worlds with articulated trees), during a step's contact search only: the "
                   "slot + 1 of the last quadrature point found at the sample (0: none) and the joint row of the "
                   "tree link that point is on; zero again when the search ends")
U_SEEN = Block("u_seen", [("velocity", 1)],
               "the generalized velocities as the last sweep left them, laid out as u (the sweeps' stopping "
               "test, solver/sweep.py)")
STAGE_I = Block("stage", [("row_contacts", 1), ("row_joints", 1), ("sweeps_done", 1), ("sweep_block", 1),
                          ("sweep_soil_block", 1), ("sweep_light", 1)],
                "per env, one row, within a step: its Rows (kernels/step.py), passed from stage to stage when they "
                "are launched one by one (vulkan), and where its sweeps stand between launches (solver/sweep.py): "
                "whether they are done, and the contact block, soil blocks and light soil group switches")
FOUND_F = Block("found_point", [("position", 3), ("normal", 3), ("depth", 1), ("area", 1), ("sample_offset", 3)],
               "during the GPU layout's contact search only, contacts found on a thread of their own as CONTACT "
               "holds them, until they are moved to their pair's slots: per slot of the static pairs, a soil "
               "quadrature point of a footprint row (worlds with soil beds; collision/pairs.py "
               "soil_quadrature_row, place_soil_row), then SHAPE_PAIR_ROOM per shape pair (layout.py), its "
               "contacts (kernels/step.py stage_shape_pair, place_shape_pairs)")
FOUND_I = Block("found_point", [("feature", 1)], "with FOUND_F: the contact's feature")
QUAD_ROW = Block("quad_row", [("count", 1), ("lost", 1), ("start", 1), ("room", 1)],
                 "per static pair and footprint row (soil_quad_rows of them a pair), during the GPU layout's contact "
                 "search only: the row's soil quadrature points kept and lost (past its room), the first "
                 "quad_point slot of the row and how many it may fill")
SWEEP_F = Block("sweep_state", [("last_change", 1)],
                "per env, one row: the last sweep's largest velocity change (solver/sweep.py), kept between launches")
SWEEP = Block("sweep", [("count", 1), ("start", 1), ("fill", 1)],
              "per body: its shape pairs with higher bodies, first entry in the pair table, entries written")

MODEL_I = Arena("model_i", "i32", False, [Block("offsets", []), SETTINGS_I, BODY_I, PAIR, MAP_I, TREE, JOINT_I,
                                      DOF_I, PIN_I, TRACK_I, PLATE_I, PLATE_RANGE, MEDIUM_I],
                "model")
MODEL_F = Arena("model_f", "real", False, [SETTINGS_F, BODY_F, INERTIA, POINT, PLANE, MAP_F, JOINT_F,
                                          PIN_F, TRACK_F, PLATE_F],
                "model")
HEIGHTS = Arena("heights", "real", False, [SAMPLE], "model")
Q = Arena("q", "real", True, [Q_FREE, TREE_Q], "state")
U = Arena("u", "real", True, [U_FREE, TREE_U], "state")
STATE_F = Arena("state_f", "real", True, [CONTACT, SOIL, PIN_STATE, JOINT_STATE, PLATE_STATE], "state")
STATE_I = Arena("state_i", "i32", True, [ENV, PAIR_COUNT, FEATURE, SWEEP_ORDER, SHAPE_PAIR, PREV_SHAPE_PAIR,
                                        SOIL_SPAN],
                "state")
CONTROL = Arena("control", "real", True, [BODY_LOAD, DRIVE, GRAVITY, MASS_SCALE, PAIR_MATERIAL, SOIL_MATERIAL, MEDIUM_F],
                "control")
SCRATCH_F = Arena("scratch_f", "real", True, [LINK, REACH, ROW_F, FRAME, LINK_DYN, TREE_MASS, TREE_FACTOR,
                                               TREE_INVERSE, TREE_DOF,
                                               LINK_RESPONSE, BLOCK_MATRIX, BLOCK_VECTOR, BLOCK_SYSTEM, BLOCK_UNKNOWN,
                                               PIN_RESPONSE, PIN_MATRIX,
                                               PIN_VECTOR, TRACK_DYN, SOIL_GROUP_F, SOIL_GROUP_MATRIX,
                                               SOIL_GROUP_VECTOR,
                                               PLATE_OUT, PLATE_LOAD, SAND, U_SEEN, SWEEP_F, FOUND_F], "scratch")
SCRATCH_I = Arena("scratch_i", "i32", True, [ROW_I, SWEEP, SOIL_CLAIM, TREE_STEP, BLOCK_I, BLOCK_STATE, SOIL_GROUP_I,
                                             SOIL_GROUP_STATE, LAUNCH, STAGE_I, FOUND_I, QUAD_ROW],
                  "scratch")
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
warnings.filterwarnings("ignore", message=".*non-taichi function \"(StepData|BlockRef|PlanarData|RayArrays)\"")


#: the parts of the step a kernel variant may leave out, each where no world of that variant uses it: ``soil``
#: (soil beds: their quadrature points, rows, blocks and history), ``pins`` (loop-closing pins, trees only),
#: ``belts`` (tracks' belts, trees only), ``rft`` (RFT plates and the sand rows of their media)
FEATURES = ("soil", "pins", "belts", "rft")
#: the features that need articulated trees
TREE_FEATURES = ("pins", "belts")


class StepData:
    """The rigid world's arrays inside a kernel, as kernel functions take them: ``D.q``, ``D.u`` and
    ``D.heights`` are the raw arrays; every other block is a :class:`BlockRef` named after it
    (``D.contact``, ``D.body_i``, ``D.body_f``, ...). Built in a kernel from its array arguments; ``offsets``
    is what holds the ``offsets`` row: ``model_i`` itself. Each block's offset is read once into its own
    local variable (a kernel-local vector of all offsets made lavapipe's shader compile of the step kernel
    twice as slow; reading the offset from ``model_i`` at every access kept it cheap to compile but cost
    loads in the sweep)."""

    def __init__(self, offsets, trees: bool = False, features: tuple = FEATURES, **arrays):
        #: whether the kernel is compiled with articulated trees (bodies on links, tree responses); without,
        #: the functions that dispatch on the kind of a body compile their free-body branch only
        self.trees = trees
        unknown = set(features) - set(FEATURES)
        if unknown:
            raise ValueError(f"StepData: features must be among {FEATURES}, got {sorted(unknown)}")
        #: which of ``FEATURES`` the kernel compiles in (``D.has_soil``, ``D.has_pins``, ``D.has_belts``,
        #: ``D.has_rft``); the tree-only ones are off without trees
        for name in FEATURES:
            setattr(self, "has_" + name, name in features and (trees or name not in TREE_FEATURES))
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
    ("model_f", "inertia"): "inertia", ("model_f", "point"): "point", ("model_f", "plane"): "plane",
    ("model_f", "map"): "map_f", ("heights", "sample"): "sample", ("q", "free_body"): "q_free",
    ("u", "free_body"): "u_free", ("state_f", "contact"): "contact", ("state_f", "soil"): "soil",
    ("state_i", "env"): "env", ("state_i", "pair_count"): "pair_count", ("state_i", "feature"): "feature",
    ("state_i", "sweep_order"): "sweep_order", ("state_i", "shape_pair"): "shape_pair",
    ("state_i", "prev_shape_pair"): "prev_shape_pair", ("state_i", "soil_span"): "soil_span", ("control", "body_load"): "load",
    ("scratch_f", "link"): "link", ("scratch_f", "reach"): "reach", ("scratch_f", "row"): "row_f",
    ("scratch_i", "row"): "row_i", ("scratch_i", "sweep"): "sweep", ("soil_rev", "row_revision"): "rev",
    ("model_i", "tree"): "tree", ("model_i", "joint"): "joint_i", ("model_i", "dof"): "dof_i",
    ("model_f", "joint"): "joint_f",
    ("q", "tree"): "q_tree", ("u", "tree"): "u_tree", ("control", "drive"): "drive", ("scratch_f", "frame"): "frame",
    ("scratch_f", "link_dyn"): "link_dyn", ("scratch_f", "tree_mass"): "tree_mass",
    ("scratch_f", "tree_factor"): "tree_factor", ("scratch_f", "tree_inverse"): "tree_inverse",
    ("scratch_f", "tree_dof"): "tree_dof", ("model_i", "pin"): "pin_i", ("model_f", "pin"): "pin_f",
    ("state_f", "pin"): "pin_state", ("scratch_f", "link_response"): "link_response",
    ("state_f", "joint_state"): "joint_state", ("scratch_i", "soil_claim"): "soil_claim",
    ("scratch_i", "tree_step"): "tree_step", ("scratch_f", "block_matrix"): "block_matrix",
    ("scratch_f", "block_vector"): "block_vector", ("scratch_f", "block_system"): "block_system",
    ("scratch_f", "block_unknown"): "block_unknown", ("scratch_i", "block"): "block_i",
    ("scratch_i", "block_state"): "block_state", ("model_i", "track"): "track_i", ("model_f", "track"): "track_f",
    ("scratch_f", "pin_response"): "pin_response", ("scratch_f", "pin_matrix"): "pin_matrix",
    ("scratch_f", "pin_vector"): "pin_vector", ("scratch_f", "track_dyn"): "track_dyn",
    ("scratch_f", "soil_group"): "soil_group_f", ("scratch_f", "soil_group_matrix"): "soil_group_matrix",
    ("scratch_f", "soil_group_vector"): "soil_group_vector",
    ("scratch_i", "soil_group"): "soil_group_i", ("scratch_i", "soil_group_state"): "soil_group_state",
    ("scratch_i", "launch"): "launch",
    ("model_i", "plate"): "plate_i", ("model_f", "plate"): "plate_f",
    ("model_i", "plate_range"): "plate_range", ("model_i", "medium"): "medium_i", ("control", "medium"): "medium_f",
    ("state_f", "plate_state"): "plate_state", ("scratch_f", "plate_out"): "plate_out",
    ("scratch_f", "plate_load"): "plate_load", ("scratch_f", "sand"): "sand", ("scratch_f", "u_seen"): "u_seen",
    ("scratch_f", "sweep_state"): "sweep_state", ("scratch_i", "stage"): "stage",
    ("control", "gravity"): "gravity", ("control", "mass_scale"): "mass_scale", ("control", "pair_material"): "pair_material", ("control", "soil_material"): "soil_material",
    ("scratch_f", "found_point"): "found_f", ("scratch_i", "found_point"): "found_i", ("scratch_i", "quad_row"): "quad_row",
}
assert set(_REF_NAMES) == {(a.name, b.name) for a in ARENAS for b in a.blocks if b is not OFFSETS}


# --------------------------------------------------------------------------- accessors of model rows
@ti.func
def body_mass_scale(D: ti.template(), e, b):
    """Env ``e``'s factor on free body ``b``'s mass and inertia (the ``mass_scale`` block of ``control``)."""
    return get(D.mass_scale, e, b, MASS_SCALE.scale)


@ti.func
def link_mass_scale(D: ti.template(), e, j):
    """Env ``e``'s factor on the mass and inertia of the link that tree joint row ``j`` moves."""
    return get(D.mass_scale, e, get(D.settings_i, 0, 0, SETTINGS_I.n_free_bodies) + j, MASS_SCALE.scale)


@ti.func
def gravity_of(D: ti.template(), e):
    """Env ``e``'s gravity [m/s^2] (the ``gravity`` block of ``control``)."""
    return get3(D.gravity, e, 0, GRAVITY.gravity)


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
