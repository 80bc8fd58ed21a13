"""Impacts: the bounces of a step, resolved before its forces, in waves.

A rigid row with restitution ``e > 0`` whose bodies approach faster than the restitution threshold, and
whose gap closes within the step, is an impact. All impacts present at once are solved together (a box
landing flat bounces straight up): frictionless normal impulses drive each to separate at ``e`` times its
approach speed. Those impulses can set other rows approaching (the second ball of a Newton's cradle now
moves into the third): they form the next wave, solved the same way, until no row approaches. So a
momentum passes along a chain of touching balls one contact at a time, as in the physical cradle, instead
of being shared by one simultaneous solve.

Each impacted row keeps its impulse as the start of the step's sweep, and its separation speed after the
waves as its target velocity, so the step's forces neither add to nor take from the bounce.
"""
import taichi as ti

from ..common.arrays import CONTACT, ROW_F, ROW_I
from ..common.layout import ROW_CONTACT
from ..common.math import vec3
from ..common.schema import get, get3, put, putn, row
from .links import apply_impulse, relative_velocity
from .rows import row_geometry

_MAX_WAVES = 64  # waves per step at most (a chain of n touching bodies needs n - 1)


@ti.func
def is_impact(vn, depth, dt, restitution, threshold):
    """Whether a row with normal velocity ``vn`` [m/s] (< 0: approaching) and ``depth`` [m] bounces now."""
    return restitution > 0.0 and vn < -threshold and vn * dt - depth < 0.0


@ti.func
def resolve_impacts(D: ti.template(), e, n_rows, dt, threshold, tolerance, max_sweeps):
    """Apply the impacts of env ``e`` to ``u`` in waves; rows that bounced get their impulse in the row's
    ``impulse``, are marked ``impacted``, and get their separation speed after all waves as the lower bound
    of their target velocity."""
    for r in range(n_rows):
        putn(D.row_f, e, r, ROW_F.impulse, vec3(0.0, 0.0, 0.0))
    waves = 0
    more = True
    while more and waves < _MAX_WAVES:
        waves += 1
        more = False
        # this wave's rows and their bounce targets: e times the approach speed at the wave's start (< 0
        # marks no impact)
        for r in range(n_rows):
            ri = row(D.row_i, e, r)
            s = ri[ROW_I.slot]
            restitution = 0.0
            if ri[ROW_I.kind] == ROW_CONTACT:
                put(D.row_f, e, r, ROW_F.bounce, -1.0)
                restitution = get(D.row_f, e, r, ROW_F.restitution)
            if restitution > 0.0:
                side_a, side_b = ri[ROW_I.side_a], ri[ROW_I.side_b]
                _frame, ra, rb = row_geometry(D, e, r)
                vn = get3(D.contact, e, s, CONTACT.normal).dot(relative_velocity(D, e, r, side_a, side_b, ra, rb))
                if is_impact(vn, get(D.contact, e, s, CONTACT.depth), dt, restitution, threshold):
                    put(D.row_f, e, r, ROW_F.bounce, -restitution * vn)
                    more = True
        # the wave's rows solved together: projected Gauss-Seidel on normal impulses only
        sweeps = 0
        largest = tolerance + 1.0
        while more and sweeps < max_sweeps and largest > tolerance:
            sweeps += 1
            largest = 0.0
            for r in range(n_rows):
                ri = row(D.row_i, e, r)
                s = ri[ROW_I.slot]
                target = get(D.row_f, e, r, ROW_F.bounce)
                if ri[ROW_I.kind] == ROW_CONTACT and target >= 0.0:
                    n = get3(D.contact, e, s, CONTACT.normal)
                    side_a, side_b = ri[ROW_I.side_a], ri[ROW_I.side_b]
                    _frame, ra, rb = row_geometry(D, e, r)
                    vn = n.dot(relative_velocity(D, e, r, side_a, side_b, ra, rb))
                    w = get(D.row_f, e, r, ROW_F.delassus)  # (the normal-normal entry comes first)
                    old = get(D.row_f, e, r, ROW_F.impulse)
                    new = ti.max(0.0, old - (vn - target) / w)
                    if new != old:
                        apply_impulse(D, e, r, side_a, side_b, ra, rb, n * (new - old))
                        put(D.row_f, e, r, ROW_F.impulse, new)
                        largest = ti.max(largest, w * ti.abs(new - old))
    # every row that took an impulse separates at least as fast as the waves left it
    for r in range(n_rows):
        ri = row(D.row_i, e, r)
        s = ri[ROW_I.slot]
        if get(D.row_f, e, r, ROW_F.impulse) > 0.0:
            put(D.row_i, e, r, ROW_I.impacted, 1)
            side_a, side_b = ri[ROW_I.side_a], ri[ROW_I.side_b]
            _frame, ra, rb = row_geometry(D, e, r)
            vn = get3(D.contact, e, s, CONTACT.normal).dot(relative_velocity(D, e, r, side_a, side_b, ra, rb))
            put(D.row_f, e, r, ROW_F.target, ti.max(get(D.row_f, e, r, ROW_F.target), vn))
