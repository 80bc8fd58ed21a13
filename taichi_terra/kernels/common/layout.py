"""Closed sets the kernels and the Python side share: pair kinds, row kinds, shape types, feature ids.

(Array columns are declared in ``arrays.py``.) Module-level ints are compile-time constants inside kernels.
"""

# pair kinds: static pairs (a shape with the ground, a height map or a soil bed) are listed in the model;
# shape-shape pairs are found each step by the broadphase
PAIR_GROUND, PAIR_HEIGHTMAP, PAIR_SHAPES, PAIR_SOIL = 0, 1, 2, 3

# row kinds: what law the solver applies to a row; ROW_MERGED: a belt contact that coincides with a deeper
# one of the same belt (belts/rows.py) and takes no impulse
ROW_CONTACT, ROW_SOIL, ROW_LIMIT, ROW_JOINT_FRICTION, ROW_PIN, ROW_MERGED = 0, 1, 2, 3, 4, 5

# what the divergence watch found in an env (kernels/step.py watch_env; ENV.diverged, 0: nothing); LOOPS: the
# env's thread ran out of loop iterations in a launch (lavapipe's limit, kernels/step.py loops_ran_out)
DIVERGED_COORDINATE, DIVERGED_POSITION, DIVERGED_VELOCITY, DIVERGED_SPEED, DIVERGED_LOOPS = 1, 2, 3, 4, 5

# shape types (mirror bodies.shapes.ShapeType)
SPHERE, BOX, CAPSULE, CYLINDER, MESH = 0, 1, 2, 3, 4

# feature id bases: a contact's feature id is unique within its pair, so warm starts can match it
#: contacts a shape-shape pair may find on its own thread in the GPU layout (kernels/step.py stage_shape_pair); a
#: pair that finds more is found again in its place in the pool (place_shape_pairs)
SHAPE_PAIR_ROOM = 8

FEAT_POINT = 0              # shape sample point k (and cylinder support points after the rim points)
FEAT_OTHER_POINT = 100_000_000  # sample point k of the other body (shape-shape pairs)
FEAT_TRIANGLE = 200_000_000     # height-map triangle 2 * cell + t
FEAT_VERTEX = 400_000_000       # height-map vertex poking into a shape
FEAT_BELOW = 600_000_000        # point below a height-map surface (pushed out along the normal)
FEAT_EDGE = 800_000_000         # height-map ridge edge 3 * cell + k cutting into a shape
FEAT_SOIL = 1_000_000_000       # soil quadrature point at bed sample (local index)

# tree joint types: the root's joint (floating: 6 dofs; fixed: none) and the 1-dof joints between links
JOINT_FLOATING, JOINT_FIXED_ROOT, JOINT_REVOLUTE, JOINT_PRISMATIC = 0, 1, 2, 3
