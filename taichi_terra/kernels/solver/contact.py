"""Rigid contact rows for the projected Gauss-Seidel sweep (see ``reference/solver_math.md``).

A row holds the contact frame ``F = (n, t1, t2)``, its Delassus block ``W = F^T J M^-1 J^T F`` (3x3) and
its impulse ``lambda`` in that frame; ``links.py`` gives the velocities and responses of its two sides.
Other row kinds (soil points, belts, bilateral pins) add their own ``solve`` function over the same
velocities.
"""
import taichi as ti

from ..common.math import tangent_basis, vec3

mat2 = ti.math.mat2
vec2 = ti.math.vec2


@ti.func
def contact_frame(n):
    """The contact frame ``(n, t1, t2)`` as matrix columns; the tangents follow from ``n`` alone."""
    t1, t2 = tangent_basis(n)
    return ti.Matrix.cols([n, t1, t2])


@ti.func
def normal_target(depth, dt, slop, erp, max_push):
    """Normal velocity [m/s] the row drives towards: close a gap within the step, push out a penetration
    beyond ``slop`` at ``erp`` per step (at most ``max_push``). (Bounces come from ``impact.py``.)"""
    target = 0.0
    if depth < 0.0:
        target = depth / dt
    elif depth > slop:
        target = ti.min(erp * (depth - slop) / dt, max_push)
    return target


@ti.func
def clamp_to_cone(lam, mu):
    """Project a frame impulse (n, t1, t2) on the Coulomb cone ``|lambda_t| <= mu lambda_n``."""
    ln = ti.max(lam[0], 0.0)
    lt = vec2(lam[1], lam[2])
    limit = mu * ln
    if lt.norm() > limit:
        lt = lt * (limit / lt.norm()) if lt.norm() > 0.0 else vec2(0.0, 0.0)
    return vec3(ln, lt[0], lt[1])


@ti.func
def friction_disc(wt, b, limit):
    """Tangential impulse minimizing ``1/2 l^T wt l + b^T l`` over the disc ``|l| <= limit``.

    ``wt`` is the 2x2 tangential Delassus block and ``b`` the tangential velocity the row would see
    without its own friction. Inside the disc the minimizer is ``-wt^-1 b`` (sticking); on the rim it is
    ``-(wt + g I)^-1 b`` with ``g >= 0`` such that the post-step slip ``wt l + b = -g l`` opposes the
    impulse (maximal dissipation, also for anisotropic ``wt``). ``g`` is found by Newton's method on
    ``1/|l(g)| - 1/limit``, which converges monotonically from ``g = 0`` (as in trust-region solvers).
    """
    lt = vec2(0.0, 0.0)
    if limit > 0.0:
        lt = -(wt.inverse() @ b)
        if lt.norm() > limit:
            g = 0.0
            for _ in range(8):
                inv = (wt + g * ti.Matrix.identity(float, 2)).inverse()
                lt = -(inv @ b)
                nrm = lt.norm()
                phi = 1.0 / nrm - 1.0 / limit
                dphi = lt.dot(inv @ lt) / (nrm * nrm * nrm)
                g = ti.max(g - phi / dphi, 0.0)
            lt = -((wt + g * ti.Matrix.identity(float, 2)).inverse() @ b)
            lt *= limit / lt.norm()  # remove the last Newton step's residual from the magnitude
    return lt


@ti.func
def solve_rigid_row(w, lam, vloc, target, mu):
    """One Gauss-Seidel update of a Coulomb contact row. ``vloc``: current relative velocity in the
    contact frame. Returns the new frame impulse (normal first, then friction in the cone of the new
    normal impulse)."""
    ln = ti.max(0.0, lam[0] - (vloc[0] - target) / w[0, 0])
    wt = mat2([[w[1, 1], w[1, 2]], [w[2, 1], w[2, 2]]])
    lt_old = vec2(lam[1], lam[2])
    vt = vec2(vloc[1], vloc[2]) + vec2(w[1, 0], w[2, 0]) * (ln - lam[0])
    lt = friction_disc(wt, vt - wt @ lt_old, mu * ln)
    return vec3(ln, lt[0], lt[1])
