"""The planar contact step of one env (``step.py`` runs it, one thread per env): it separates overlapping
objects.

Per env, in order:

1. candidates: every pair something can move whose bounding circles, and then whose convex pieces, come within
   the margin (two steps of the fastest object's travel, plus the slop and the rest tolerance), in object order;
2. anchored order: pairs sorted by their contact-graph distance from immovable objects (min, then max of the
   two levels; ties keep object order), so a wall contact is handled before the robot contact behind it;
3. Gauss-Seidel sweeps: each overlapping pair is separated along its SAT normal, the depth shared in proportion
   to generalized inverse masses (translation through 1/m, turning through lever^2/I). A driven object pushes
   a passive body without yielding when its traction covers the ground friction of the body and of every
   passive body ahead of it, and stalls otherwise; whoever could not yield blocks its partner along the normal
   for the rest of the sweep, so that the partner only moves tangentially (sticking inside the friction cone if
   it is passive). Sweeps stop when one moves nothing, or after the iteration limit;
4. apply: velocities gain the position change over the step time; forces are the accumulated multipliers
   over dt^2, capped at the traction of a driven object pushing into the contact; bouncy pairs get the
   separation speed restitution asks for, shared by the passive bodies that were free to move.

The stages are separate functions so that vulkan can launch them one by one (``step.py``): on lavapipe a
thread's loops end after 65,535 iterations per launch, all loops together (``common/lanes.LAVAPIPE_LOOP_LIMIT``).
For the same reason every loop runs over what is there (a list walked to its end, the pairs found), never over
a table's capacity.
"""
import taichi as ti

from ..common.schema import get, row
from .geometry import com_of, object_mtv, refresh_object, rot
from .arrays import (
    DRIVEN,
    EI_BLOCKERS,
    EI_CURSOR,
    EI_DONE,
    EI_DROPPED,
    EI_MOVED,
    EI_PAIRS,
    EI_PASSES,
    EI_STAMP,
    EI_SWEEPS,
    EI_TOUCH,
    EPS,
    F_BOUNCE,
    F_FREE_A,
    F_FREE_B,
    F_NEAR,
    F_PUSHED,
    F_RECORDED,
    F_TOUCHING,
    KIN_OMNI,
    LEVER_TOL,
    MAP_F,
    MAP_I,
    OF_BOUND,
    OF_INV_I,
    OF_INV_M,
    OF_MU,
    OF_REST,
    OF_TRACTION,
    OI_KIN,
    OI_KIND,
    OI_MAP,
    OS_BLOCK,
    OS_COUNT,
    OS_LEVEL,
    OS_SEEN,
    OS_STACK,
    P_DT,
    P_ITERS,
    P_MOVE_TOL,
    P_REST,
    P_SLOP,
    PASSIVE,
    PF_BNX,
    PF_BNY,
    PF_DEPTH,
    PF_FORCE,
    PF_IMP,
    PF_NX,
    PF_NY,
    PF_PX,
    PF_PY,
    PF_TARGET,
    PF_TNX,
    PF_TNY,
    PI_A,
    PI_B,
    PI_FLAGS,
    PI_ORDER,
    POSE_HEADING,
    POSE_X,
    POSE_Y,
    STATIC,
)

vec2 = ti.math.vec2


@ti.func
def drive_velocity(D: ti.template(), e, k):
    """World-frame velocity [m/s] the drive of object ``k`` is commanding (zero for undriven objects)."""
    v = vec2(0.0, 0.0)
    if row(D.obj_i, 0, k)[OI_KIND] == DRIVEN:
        q, u = D.pose[e, k], D.cmd[e, k]
        c, s = ti.cos(q[POSE_HEADING]), ti.sin(q[POSE_HEADING])
        if row(D.obj_i, 0, k)[OI_KIN] == KIN_OMNI:
            v = rot(c, s, u[0], u[1])
        else:
            v = vec2(c * u[0], s * u[0])
    return v


@ti.func
def candidates(D: ti.template(), e, nk, cap, margin):
    """Pairs whose bounding circles (a grid map: its bucket grid's box) come within ``margin``; returns the
    count kept and the count dropped because the table was full."""
    n, dropped = 0, 0
    for a in range(nk):
        ca, ra = com_of(D, e, a), row(D.obj_f, 0, a)[OF_BOUND]
        for b in range(a + 1, nk):
            if row(D.obj_f, 0, a)[OF_INV_M] + row(D.obj_f, 0, b)[OF_INV_M] > 0.0:
                near = False
                ma, mb = row(D.obj_i, 0, a)[OI_MAP], row(D.obj_i, 0, b)[OI_MAP]
                if ma >= 0 or mb >= 0:
                    m, c, r = ma, com_of(D, e, b), row(D.obj_f, 0, b)[OF_BOUND] + margin
                    if mb >= 0:
                        m, c, r = mb, ca, ra + margin
                    mf = row(D.map_f, 0, m)
                    mi = row(D.map_i, 0, m)
                    x0, y0 = mf[MAP_F.origin], mf[MAP_F.origin + 1]
                    x1, y1 = x0 + mf[MAP_F.cell] * mi[MAP_I.nx], y0 + mf[MAP_F.cell] * mi[MAP_I.ny]
                    near = c[0] + r >= x0 and c[0] - r <= x1 and c[1] + r >= y0 and c[1] - r <= y1
                else:
                    near = (com_of(D, e, b) - ca).norm() <= ra + row(D.obj_f, 0, b)[OF_BOUND] + margin
                if near:
                    if n < cap:
                        D.pair_i[e, n] = ti.Vector([a, b, 0, n])
                        D.pair_f[e, n] = ti.Vector([0.0] * 12)
                        n += 1
                    else:
                        dropped += 1
    return n, dropped


@ti.func
def keep_near(D: ti.template(), e, n):
    """Compact the pair table to the pairs flagged near, in order; returns their count."""
    kept = 0
    for p in range(n):
        if D.pair_i[e, p][PI_FLAGS] == F_NEAR:
            D.pair_i[e, kept] = ti.Vector([D.pair_i[e, p][PI_A], D.pair_i[e, p][PI_B], 0, kept])
            kept += 1
    return kept


@ti.func
def anchored_order(D: ti.template(), e, nk, n):
    """Sort the pairs by (lower, higher) contact-graph level, levels counted from immovable objects; stable.

    Levels come from relaxing the edges until nothing changes (breadth-first distances); the sort is two
    stable counting passes (by the higher level, then the lower), written to the pairs' order column."""
    unreached = nk + 1
    for k in range(nk):
        D.obj_s[e, k][OS_LEVEL] = 0 if row(D.obj_f, 0, k)[OF_INV_M] <= 0.0 else unreached
    changed = True
    for _ in range(nk + 2):  # (levels settle within nk passes; a bounded loop, see the module docstring)
        if changed:
            changed = False
            for p in range(n):
                a, b = D.pair_i[e, p][PI_A], D.pair_i[e, p][PI_B]
                la, lb = D.obj_s[e, a][OS_LEVEL], D.obj_s[e, b][OS_LEVEL]
                if la + 1 < lb:
                    D.obj_s[e, b][OS_LEVEL] = la + 1
                    changed = True
                elif lb + 1 < la:
                    D.obj_s[e, a][OS_LEVEL] = lb + 1
                    changed = True
    for sort_pass in range(2):  # by the higher level, then (stably) by the lower one
        for lvl in range(nk + 2):
            D.obj_s[e, lvl][OS_COUNT] = 0
        for i in range(n):
            p = i if sort_pass == 0 else D.order_tmp[e, i]
            la, lb = D.obj_s[e, D.pair_i[e, p][PI_A]][OS_LEVEL], D.obj_s[e, D.pair_i[e, p][PI_B]][OS_LEVEL]
            key = ti.max(la, lb) if sort_pass == 0 else ti.min(la, lb)
            D.obj_s[e, key][OS_COUNT] += 1
        running = 0
        for lvl in range(nk + 2):
            count = D.obj_s[e, lvl][OS_COUNT]
            D.obj_s[e, lvl][OS_COUNT] = running
            running += count
        for i in range(n):
            p = i if sort_pass == 0 else D.order_tmp[e, i]
            la, lb = D.obj_s[e, D.pair_i[e, p][PI_A]][OS_LEVEL], D.obj_s[e, D.pair_i[e, p][PI_B]][OS_LEVEL]
            key = ti.max(la, lb) if sort_pass == 0 else ti.min(la, lb)
            pos = D.obj_s[e, key][OS_COUNT]
            D.obj_s[e, key][OS_COUNT] = pos + 1
            if sort_pass == 0:
                D.order_tmp[e, pos] = p
            else:
                D.pair_i[e, pos][PI_ORDER] = p


@ti.func
def free_motion(D: ti.template(), e, k, direction, cone):
    """The part of a wanted move ``direction`` that object ``k``'s blockers this sweep allow, and the
    separation one unit of it buys (its component along ``direction``). Against the most opposing blocker the
    move is projected onto the blocker's surface; a passive body (``cone`` >= 0, its friction) sticks instead
    when the push stays inside the friction cone of the mean coefficient."""
    best, normal, mu_blocker = -1e30, vec2(0.0, 0.0), 0.0
    j = D.obj_s[e, k][OS_BLOCK]
    while j >= 0:  # (the list holds each blocker once and ends in -1)
        u = D.blk[e, j]
        into = direction[0] * u[0] + direction[1] * u[1]
        if into >= best:  # the list runs newest first: ">=" keeps the earliest of equal blockers
            best, normal, mu_blocker = into, vec2(u[0], u[1]), u[2]
        j = D.blk_next[e, j]
    motion, gain = direction, 1.0
    if best > 0.0:
        motion = direction - best * normal
        gain = motion.dot(direction)
        if gain <= EPS:
            motion, gain = vec2(0.0, 0.0), 0.0
        elif cone >= 0.0 and motion.norm() <= 0.5 * (cone + mu_blocker) * best:
            motion, gain = vec2(0.0, 0.0), 0.0  # inside the friction cone: it sticks
    return motion, gain


@ti.func
def load(D: ti.template(), e, start, direction, n):
    """Ground friction [N] a push along ``direction`` on passive body ``start`` must overcome: its own and that
    of every touching passive body ahead of it in that direction, recursively."""
    stamp = D.env_i[e][EI_STAMP] + 1
    D.env_i[e][EI_STAMP] = stamp
    D.obj_s[e, start][OS_SEEN] = stamp
    D.obj_s[e, 0][OS_STACK] = start
    top = 1
    total = 0.0
    while top > 0:  # (each object is pushed once, so it ends after at most as many pops as objects)
        top -= 1
        cur = D.obj_s[e, top][OS_STACK]
        total += row(D.obj_f, 0, cur)[OF_TRACTION]
        for p in range(n):
            if D.pair_i[e, p][PI_FLAGS] & F_TOUCHING:
                a, b = D.pair_i[e, p][PI_A], D.pair_i[e, p][PI_B]
                nrm = vec2(D.pair_f[e, p][PF_TNX], D.pair_f[e, p][PF_TNY])  # from b toward a
                other = -1
                if a == cur:
                    other = b
                elif b == cur:
                    other, nrm = a, -nrm
                # nrm points from other to cur: pushing cur along direction drives it into other when they oppose
                if other >= 0 and D.obj_s[e, other][OS_SEEN] != stamp and direction.dot(nrm) < -EPS:
                    D.obj_s[e, other][OS_SEEN] = stamp
                    D.obj_s[e, top][OS_STACK] = other
                    top += 1
    return total


@ti.func
def lever(r, nrm):
    """Arm ``r x n`` of a push along ``nrm`` applied at ``r`` from the centre of mass; micrometre arms are zero."""
    arm = r[0] * nrm[1] - r[1] * nrm[0]
    if ti.abs(arm) <= LEVER_TOL:
        arm = 0.0
    return arm


@ti.func
def separate(D: ti.template(), e, p, nrm, depth, point, n, nblk):
    """Remove the overlap of pair ``p`` (normal from b toward a); returns (moved, blockers used)."""
    a, b = D.pair_i[e, p][PI_A], D.pair_i[e, p][PI_B]
    fa, fb = row(D.obj_f, 0, a), row(D.obj_f, 0, b)
    kind_a, kind_b = row(D.obj_i, 0, a)[OI_KIND], row(D.obj_i, 0, b)[OI_KIND]
    d = depth + get(D.params, 0, 0, P_SLOP)
    moved = d > get(D.params, 0, 0, P_MOVE_TOL)  # otherwise the pair only rests against each other
    cone_a = fa[OF_MU] if kind_a == PASSIVE else -1.0
    cone_b = fb[OF_MU] if kind_b == PASSIVE else -1.0
    move_a, gain_a = free_motion(D, e, a, nrm, cone_a)
    move_b, gain_b = free_motion(D, e, b, -nrm, cone_b)
    share_a, share_b = fa[OF_INV_M] * gain_a, fb[OF_INV_M] * gain_b
    lever_a = lever(point - com_of(D, e, a), nrm)
    lever_b = lever(point - com_of(D, e, b), nrm)
    turn_a, turn_b = fa[OF_INV_I] * lever_a * lever_a, fb[OF_INV_I] * lever_b * lever_b
    # a driver whose traction covers the load ahead keeps its motion and heading (unless the body cannot move
    # away); one that cannot push it stalls: the body is immovable to it
    if kind_a == DRIVEN and kind_b == PASSIVE and fb[OF_INV_M] > 0.0:
        if fa[OF_TRACTION] >= load(D, e, b, -nrm, n):
            if share_b > 0.0:
                share_a, turn_a = 0.0, 0.0
        else:
            share_b, turn_b = 0.0, 0.0
    if kind_b == DRIVEN and kind_a == PASSIVE and fa[OF_INV_M] > 0.0:
        if fb[OF_TRACTION] >= load(D, e, a, nrm, n):
            if share_a > 0.0:
                share_b, turn_b = 0.0, 0.0
        else:
            share_a, turn_a = 0.0, 0.0
    total = share_a + turn_a + share_b + turn_b
    moved_any = False
    if total > 0.0:
        flags = D.pair_i[e, p][PI_FLAGS]
        if moved:
            moved_any = True
            scale = d / total
            D.pair_f[e, p][PF_IMP] += scale
            flags |= F_PUSHED
            bounce = 0.5 * (fa[OF_REST] + fb[OF_REST])
            if bounce > 0.0 and not (flags & F_BOUNCE):
                rel = vec2(D.vel[e, a][0] - D.vel[e, b][0], D.vel[e, a][1] - D.vel[e, b][1])
                approach = rel.dot(nrm)
                if approach < 0.0:
                    flags |= F_BOUNCE
                    if share_a + turn_a > 0.0:
                        flags |= F_FREE_A
                    if share_b + turn_b > 0.0:
                        flags |= F_FREE_B
                    D.pair_f[e, p][PF_BNX] = nrm[0]
                    D.pair_f[e, p][PF_BNY] = nrm[1]
                    D.pair_f[e, p][PF_TARGET] = -bounce * approach
            for side in range(2):  # translate by the share, turn by the arm, about the centre of mass
                k = a if side == 0 else b
                delta = scale * fa[OF_INV_M] * move_a if side == 0 else scale * fb[OF_INV_M] * move_b
                angle = scale * fa[OF_INV_I] * lever_a if side == 0 else -scale * fb[OF_INV_I] * lever_b
                if (share_a if side == 0 else share_b) <= 0.0:
                    delta = vec2(0.0, 0.0)
                if (turn_a if side == 0 else turn_b) <= 0.0:
                    angle = 0.0
                if delta.norm() > 0.0 or angle != 0.0:
                    q = D.pose[e, k]
                    q[POSE_X] += delta[0]
                    q[POSE_Y] += delta[1]
                    if angle != 0.0:
                        D.pose[e, k] = q
                        c = com_of(D, e, k)
                        r = rot(ti.cos(angle), ti.sin(angle), q[POSE_X] - c[0], q[POSE_Y] - c[1])
                        q[POSE_X], q[POSE_Y], q[POSE_HEADING] = c[0] + r[0], c[1] + r[1], q[POSE_HEADING] + angle
                    D.pose[e, k] = q
                    refresh_object(D, e, k)
        # whoever could not yield now blocks its partner along the normal
        if share_b <= 0.0 and fa[OF_INV_M] > 0.0:
            D.blk[e, nblk] = ti.Vector([-nrm[0], -nrm[1], fb[OF_MU]])
            D.blk_next[e, nblk] = D.obj_s[e, a][OS_BLOCK]
            D.obj_s[e, a][OS_BLOCK] = nblk
            nblk += 1
        if share_a <= 0.0 and fb[OF_INV_M] > 0.0:
            D.blk[e, nblk] = ti.Vector([nrm[0], nrm[1], fa[OF_MU]])
            D.blk_next[e, nblk] = D.obj_s[e, b][OS_BLOCK]
            D.obj_s[e, b][OS_BLOCK] = nblk
            nblk += 1
        # report the contact, resting or pushed, keeping its deepest push
        if not (flags & F_RECORDED) or d > D.pair_f[e, p][PF_DEPTH]:
            flags |= F_RECORDED
            D.pair_f[e, p][PF_NX] = nrm[0]
            D.pair_f[e, p][PF_NY] = nrm[1]
            D.pair_f[e, p][PF_DEPTH] = d
            D.pair_f[e, p][PF_PX] = point[0]
            D.pair_f[e, p][PF_PY] = point[1]
        D.pair_i[e, p][PI_FLAGS] = flags
    return moved_any, nblk


@ti.func
def contact_env(D: ti.template(), e):
    """The contact step of env ``e``, its stages in order (listed in the module docstring): on cpu in one
    launch; on vulkan each stage call is a launch of its own (``step.py``)."""
    find_candidates(D, e)
    for _ in range(ti.cast(get(D.params, 0, 0, P_ITERS), ti.i32) + 1):
        contact_pass(D, e, 2 * D.pair_i.shape[1])  # (a pass has at most twice as many tasks as pairs)
    apply_contacts(D, e)


@ti.func
def contact_margin(D: ti.template(), e):
    """How near two objects must come to be a candidate pair [m]: two steps of the fastest object's travel
    plus the slop, and at least the rest tolerance, so that resting contacts are reported whether or not
    anything moves."""
    travel = 0.0
    for k in range(D.pose.shape[1]):
        if row(D.obj_i, 0, k)[OI_KIND] != STATIC:
            travel = ti.max(travel, vec2(D.vel[e, k][0], D.vel[e, k][1]).norm())
    return 2.0 * travel * get(D.params, 0, 0, P_DT) + get(D.params, 0, 0, P_SLOP) + get(D.params, 0, 0, P_REST)


@ti.func
def find_candidates(D: ti.template(), e):
    """1. candidates: bounding circles within the margin; the env's row starts the step's count afresh."""
    nk = D.pose.shape[1]
    for k in range(nk):
        D.obj_s[e, k][OS_SEEN] = 0
    n, dropped = candidates(D, e, nk, D.pair_i.shape[1], contact_margin(D, e))
    D.env_i[e][EI_PAIRS] = n
    D.env_i[e][EI_DROPPED] = dropped
    for c in ti.static((EI_SWEEPS, EI_STAMP, EI_TOUCH, EI_DONE, EI_PASSES, EI_CURSOR, EI_BLOCKERS, EI_MOVED)):
        D.env_i[e][c] = 0


@ti.func
def contact_pass(D: ti.template(), e, chunk):
    """Up to ``chunk`` tasks of the env's current pass over its pairs, and the pass's end when its last task is
    done (the env's row holds where a pass stands between calls: on vulkan a pass may take several launches,
    ``step.py``). Pass 0 keeps the candidates whose pieces come within the margin (so a long wall is a neighbour
    only of what is near it) and sorts them outward from immovable objects (2.); passes 1.. are the sweeps (3.).
    After a pass that moved nothing, or after the last sweep allowed, the env is done and a call does nothing.
    One function for both kinds of pass, so that the overlap test is compiled once."""
    if D.env_i[e][EI_DONE] == 0:
        nk = D.pose.shape[1]
        it, t0 = D.env_i[e][EI_PASSES], D.env_i[e][EI_CURSOR]
        n, n_touch = D.env_i[e][EI_PAIRS], D.env_i[e][EI_TOUCH]
        margin = 0.0
        if it == 0:
            margin = contact_margin(D, e)
        if it > 0 and t0 == 0:  # a sweep begins: no blockers yet
            for k in range(nk):
                D.obj_s[e, k][OS_BLOCK] = -1
        nblk, moved = D.env_i[e][EI_BLOCKERS], D.env_i[e][EI_MOVED] != 0
        n_tasks = n
        if it > 0:
            n_tasks = n_touch + n
        t1 = ti.min(t0 + chunk, n_tasks)
        for t in range(t0, t1):
            touch_pass = it > 0 and t < n_touch
            p = t
            if it > 0 and t >= n_touch:
                p = D.pair_i[e, t - n_touch][PI_ORDER]
            a, b = D.pair_i[e, p][PI_A], D.pair_i[e, p][PI_B]
            skip = False
            if touch_pass:
                D.pair_i[e, p][PI_FLAGS] &= ~F_TOUCHING
                skip = not (row(D.obj_i, 0, a)[OI_KIND] == PASSIVE and row(D.obj_i, 0, b)[OI_KIND] == PASSIVE
                            and row(D.obj_f, 0, a)[OF_INV_M] * row(D.obj_f, 0, b)[OF_INV_M] > 0.0)
            if not skip:
                tol = get(D.params, 0, 0, P_REST)
                if it == 0:
                    tol = margin
                found, nrm, depth, point = object_mtv(D, e, a, b, tol)
                if it == 0:
                    if found:
                        D.pair_i[e, p][PI_FLAGS] = F_NEAR
                elif touch_pass:
                    if found:
                        D.pair_i[e, p][PI_FLAGS] |= F_TOUCHING
                        D.pair_f[e, p][PF_TNX] = nrm[0]
                        D.pair_f[e, p][PF_TNY] = nrm[1]
                elif found:
                    m, nblk = separate(D, e, p, nrm, depth, point, n, nblk)
                    moved = moved or m
        D.env_i[e][EI_CURSOR] = t1
        D.env_i[e][EI_BLOCKERS] = nblk
        D.env_i[e][EI_MOVED] = 1 if moved else 0
        if t1 == n_tasks:  # the pass ends
            if it == 0:
                n = keep_near(D, e, n)
                D.env_i[e][EI_PAIRS] = n
                anchored_order(D, e, nk, n)
                for p in range(n):  # which bodies touch matters only to the load a driver pushes
                    ka = row(D.obj_i, 0, D.pair_i[e, p][PI_A])[OI_KIND]
                    kb = row(D.obj_i, 0, D.pair_i[e, p][PI_B])[OI_KIND]
                    if (ka == DRIVEN and kb == PASSIVE) or (kb == DRIVEN and ka == PASSIVE):
                        n_touch = n
                D.env_i[e][EI_TOUCH] = n_touch
                moved = True
            else:
                D.env_i[e][EI_SWEEPS] = it
            if not moved or it >= ti.cast(get(D.params, 0, 0, P_ITERS), ti.i32):
                D.env_i[e][EI_DONE] = 1
            D.env_i[e][EI_PASSES] = it + 1
            D.env_i[e][EI_CURSOR] = 0
            D.env_i[e][EI_BLOCKERS] = 0
            D.env_i[e][EI_MOVED] = 0


@ti.func
def apply_contacts(D: ti.template(), e):
    """4. apply: velocities, forces and restitution from what the passes did."""
    nk, n = D.pose.shape[1], D.env_i[e][EI_PAIRS]
    dt = get(D.params, 0, 0, P_DT)
    # 4. apply: velocities from the position change (of the centre of mass), headings wrapped
    for k in range(nk):
        if row(D.obj_i, 0, k)[OI_KIND] != STATIC:
            q, q0 = D.pose[e, k], D.pose0[e, k]
            if q[POSE_X] != q0[POSE_X] or q[POSE_Y] != q0[POSE_Y] or q[POSE_HEADING] != q0[POSE_HEADING]:
                D.pose[e, k] = q0
                c0 = com_of(D, e, k)
                D.pose[e, k] = q
                c1 = com_of(D, e, k)
                spin = (q[POSE_HEADING] - q0[POSE_HEADING]) / dt
                D.vel[e, k] += ti.Vector([(c1[0] - c0[0]) / dt, (c1[1] - c0[1]) / dt, spin])
                D.pose[e, k][POSE_HEADING] = ti.atan2(ti.sin(q[POSE_HEADING]), ti.cos(q[POSE_HEADING]))
    # forces: multipliers over dt^2, capped at the traction of a driven object pushing into the contact
    for p in range(n):
        if D.pair_i[e, p][PI_FLAGS] & F_PUSHED:
            force = D.pair_f[e, p][PF_IMP] / (dt * dt)
            nrm = vec2(D.pair_f[e, p][PF_NX], D.pair_f[e, p][PF_NY])
            for side in range(2):
                k = D.pair_i[e, p][PI_A] if side == 0 else D.pair_i[e, p][PI_B]
                into = -nrm if side == 0 else nrm
                if row(D.obj_i, 0, k)[OI_KIND] == DRIVEN and drive_velocity(D, e, k).dot(into) > 0.0:
                    force = ti.min(force, row(D.obj_f, 0, k)[OF_TRACTION])
            D.pair_f[e, p][PF_FORCE] = force
    # restitution: what the position fold left short of the target separation speed, to the free
    # passive bodies, shared by inverse mass
    for i in range(n):
        p = D.pair_i[e, i][PI_ORDER]
        flags = D.pair_i[e, p][PI_FLAGS]
        if flags & F_BOUNCE:
            a, b = D.pair_i[e, p][PI_A], D.pair_i[e, p][PI_B]
            wa, wb = 0.0, 0.0
            if row(D.obj_i, 0, a)[OI_KIND] == PASSIVE and (flags & F_FREE_A):
                wa = row(D.obj_f, 0, a)[OF_INV_M]
            if row(D.obj_i, 0, b)[OI_KIND] == PASSIVE and (flags & F_FREE_B):
                wb = row(D.obj_f, 0, b)[OF_INV_M]
            if wa + wb > 0.0:
                bn = vec2(D.pair_f[e, p][PF_BNX], D.pair_f[e, p][PF_BNY])
                separating = vec2(D.vel[e, a][0] - D.vel[e, b][0], D.vel[e, a][1] - D.vel[e, b][1]).dot(bn)
                missing = D.pair_f[e, p][PF_TARGET] - separating
                if missing > 0.0:
                    ga, gb = missing * wa / (wa + wb) * bn, missing * wb / (wa + wb) * bn
                    D.vel[e, a] += ti.Vector([ga[0], ga[1], 0.0])
                    D.vel[e, b] -= ti.Vector([gb[0], gb[1], 0.0])
