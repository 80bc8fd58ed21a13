"""Component indices of the planar world's packed arrays, shared by the kernels and the Python side."""

EPS = 1e-12  # [m] shorter axes and arms are degenerate
FEATURE_TOL = 1e-7  # [m] vertices this close along the normal form one edge of the contact feature
LEVER_TOL = 1e-6  # [m] contact arms shorter than this are a centred push: they turn nothing

# object kinds and kinematics models
STATIC, PASSIVE, DRIVEN = 0, 1, 2
KIN_NONE, KIN_DIFF, KIN_OMNI, KIN_ACKER = 0, 1, 2, 3

# obj_i[k]: kind, kinematics, first piece, end piece, grid map index (-1: none)
OI_KIND, OI_KIN, OI_P0, OI_P1, OI_MAP = range(5)
N_OI = 5
# obj_f[k]: inverse mass [1/kg], inverse inertia [1/(kg m^2)], friction, restitution, ground friction force
# mu m g [N], bounding radius about the centre of mass [m], centre of mass in the body frame (x, y) [m],
# wheelbase [m], radius of gyration [m]
OF_INV_M, OF_INV_I, OF_MU, OF_REST, OF_TRACTION, OF_BOUND, OF_COMX, OF_COMY, OF_WHEELBASE, OF_GYR = range(10)
N_OF = 10

# params: step time [s], gravity [m/s^2], slop [m], rest tolerance [m], iterations, and the correction [m]
# below which a pair counts as resting (rounding noise of a pair left exactly one slop apart)
P_DT, P_G, P_SLOP, P_REST, P_ITERS, P_MOVE_TOL = range(6)
N_PARAMS = 6

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
