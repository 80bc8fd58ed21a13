"""Sand rows: a granular medium's resistance as a bounded row of the sweep (media with ``mode="row"``).

Resistive force theory gives each plate a force for the direction it moves in, whatever its speed, and none at
rest: applied as a force, it lets a body standing in sand chatter and creep (RFT-SiM smooths it to hide that).
Here the plates of one carrier (a free body or a tree link) give, in the RFT stage, their summed resistance
``R`` (force and moment, ``PLATE_LOAD.row_*``) for their velocities, a plate slower than gravity's velocity change
over the step taken as moving the way gravity would start it (straight down at rest; ``kernels/rft/plates.py``). It bounds one 6-dof row of the sweep on the carrier, like Coulomb friction
bounds a contact's traction: with ``xi*`` the carrier's twist without the row's impulse and ``Phi`` its spatial
response (twist change per unit wrench impulse),

* the row stops the carrier, impulse ``-Phi^-1 xi*``, when the sand's work over the step along that motion
  covers its kinetic measure: ``xi*^T Phi^-1 xi* <= -xi* . R dt`` (in one dimension: ``m |v*| <= |R| dt``, the
  sand's impulse is enough to stop it);
* otherwise it applies the full resistance, impulse ``R dt``, and the carrier moves on, as under an applied RFT
  force.

So a foot loaded within the sand's resistance stands still, exactly, without smoothing, and one pushed beyond it
sinks or slides with RFT's force. Pairings: a free body's wrench is (force, torque about its centre of mass)
against its twist (v, omega); a tree link's is (moment about the tree's reference point, force) against (omega, v
at that point), through the link's responses ``B`` and ``Phi = J B`` (``dynamics/bodies.py``). A link's ``Phi``
may be singular (a hinge moves its link in one direction only): it is solved with a relative ``1e-9`` of its
trace added, and the stopping impulse moves the link along its free directions only.
"""
import taichi as ti

from ..common.arrays import BODY_I, FRAME, LINK, PLATE_LOAD, SAND, SETTINGS_I
from ..common.schema import get, get3, get33, getn, put, putn
from ..dynamics.bodies import link_phi, link_responses, link_spatial_velocity, push_link, tree_reference
from ..dynamics.free_body import add_link_velocity, link_velocity
from ..dynamics.tree_solve import solve_spd6

vec3 = ti.math.vec3
vec6 = ti.types.vector(6, float)


@ti.func
def _twist(D: ti.template(), e, c, n_free):
    """The carrier's current twist, paired with its wrenches (module docstring)."""
    out = vec6(0.0)
    if c < n_free:
        v, w = link_velocity(D.u, e, get(D.body_i, e, c, BODY_I.u0))
        out = vec6(v[0], v[1], v[2], w[0], w[1], w[2])
    elif ti.static(D.trees):
        j = c - n_free
        out = link_spatial_velocity(D, e, j, tree_reference(D, e, j), False)
    return out


@ti.func
def _response(D: ti.template(), e, c, n_free, wrench):
    """``Phi wrench``: the carrier's twist change per wrench impulse."""
    out = vec6(0.0)
    if c < n_free:
        inv_m = get(D.link, e, c, LINK.inv_mass)
        dw = get33(D.link, e, c, LINK.inv_inertia) @ vec3(wrench[3], wrench[4], wrench[5])
        out = vec6(inv_m * wrench[0], inv_m * wrench[1], inv_m * wrench[2], dw[0], dw[1], dw[2])
    elif ti.static(D.trees):
        out = link_phi(D, e, c - n_free) @ wrench
    return out


@ti.func
def _stop(D: ti.template(), e, c, n_free, twist):
    """``-Phi^-1 twist``: the wrench impulse that brings the carrier's twist to zero."""
    out = vec6(0.0)
    if c < n_free:
        m = 1.0 / get(D.link, e, c, LINK.inv_mass)
        iw = get33(D.link, e, c, LINK.inv_inertia).inverse() @ vec3(twist[3], twist[4], twist[5])
        out = -vec6(m * twist[0], m * twist[1], m * twist[2], iw[0], iw[1], iw[2])
    elif ti.static(D.trees):
        phi = link_phi(D, e, c - n_free)
        eps = 1e-9 * (phi[0, 0] + phi[1, 1] + phi[2, 2] + phi[3, 3] + phi[4, 4] + phi[5, 5])
        out = -solve_spd6(phi + eps * ti.Matrix.identity(float, 6), twist)
    return out


@ti.func
def _push(D: ti.template(), e, c, n_free, wrench):
    """``u += M^-1 J^T wrench`` for a wrench impulse on the carrier."""
    if c < n_free:
        dv = get(D.link, e, c, LINK.inv_mass) * vec3(wrench[0], wrench[1], wrench[2])
        dw = get33(D.link, e, c, LINK.inv_inertia) @ vec3(wrench[3], wrench[4], wrench[5])
        add_link_velocity(D.u, e, get(D.body_i, e, c, BODY_I.u0), dv, dw)
    elif ti.static(D.trees):
        push_link(D, e, c - n_free, wrench, 1.0)


@ti.func
def build_sand_rows(D: ti.template(), e, dt):
    """Each carrier's sand row for this step (``SAND``), after the free velocities: the impulse of its plates'
    resistance over the step, in the carrier's pairing; no row where they offer none."""
    n_free = get(D.settings_i, e, 0, SETTINGS_I.n_free_bodies)
    for c in range(get(D.settings_i, e, 0, SETTINGS_I.n_plate_carriers)):
        f = get3(D.plate_load, e, c, PLATE_LOAD.row_force)
        t = get3(D.plate_load, e, c, PLATE_LOAD.row_torque)
        active = f.norm() + t.norm() > 0.0
        wrench = vec6(f[0], f[1], f[2], t[0], t[1], t[2]) * dt
        if c >= n_free:
            if ti.static(D.trees):
                j = c - n_free
                moment = t + (get3(D.frame, e, j, FRAME.position) - tree_reference(D, e, j)).cross(f)
                wrench = vec6(moment[0], moment[1], moment[2], f[0], f[1], f[2]) * dt
                if active:
                    link_responses(D, e, j)
        putn(D.sand, e, c, SAND.resistance, wrench)
        putn(D.sand, e, c, SAND.impulse, vec6(0.0))
        putn(D.sand, e, c, SAND.seen, vec6(0.0))
        put(D.sand, e, c, SAND.active, 1.0 if active else 0.0)


@ti.func
def solve_sand_rows(D: ti.template(), e):
    """One Gauss-Seidel pass over the sand rows; returns (the largest twist change a row's update made, the
    largest change of a row's twist since the last pass), as the other rows' solvers do."""
    n_free = get(D.settings_i, e, 0, SETTINGS_I.n_free_bodies)
    local = 0.0
    net = 0.0
    for c in range(get(D.settings_i, e, 0, SETTINGS_I.n_plate_carriers)):
        if get(D.sand, e, c, SAND.active) != 0.0:
            twist = _twist(D, e, c, n_free)
            net = ti.max(net, (twist - getn(D.sand, e, c, SAND.seen, 6)).norm())
            putn(D.sand, e, c, SAND.seen, twist)
            old = getn(D.sand, e, c, SAND.impulse, 6)
            free = twist - _response(D, e, c, n_free, old)  # (the twist without this row)
            stop = _stop(D, e, c, n_free, free)
            resistance = getn(D.sand, e, c, SAND.resistance, 6)
            new = resistance
            if -stop.dot(free) <= -free.dot(resistance):  # xi*^T Phi^-1 xi* <= -xi* . R dt
                new = stop
            change = new - old
            if change.norm() > 0.0:
                _push(D, e, c, n_free, change)
                putn(D.sand, e, c, SAND.impulse, new)
                local = ti.max(local, _response(D, e, c, n_free, change).norm())
    return local, net


@ti.func
def finish_sand_rows(D: ti.template(), e, dt):
    """After the sweep: each carrier's row part of ``PLATE_LOAD`` becomes the wrench its row applied (force,
    moment about the carrier's origin, as the rest of ``PLATE_LOAD``)."""
    n_free = get(D.settings_i, e, 0, SETTINGS_I.n_free_bodies)
    for c in range(get(D.settings_i, e, 0, SETTINGS_I.n_plate_carriers)):
        if get(D.sand, e, c, SAND.active) != 0.0:
            w = getn(D.sand, e, c, SAND.impulse, 6) / dt
            f = vec3(w[0], w[1], w[2])
            t = vec3(w[3], w[4], w[5])
            if c >= n_free:
                if ti.static(D.trees):
                    j = c - n_free
                    f = vec3(w[3], w[4], w[5])
                    t = vec3(w[0], w[1], w[2]) - (get3(D.frame, e, j, FRAME.position) - tree_reference(D, e, j)).cross(f)
            putn(D.plate_load, e, c, PLATE_LOAD.row_force, f)
            putn(D.plate_load, e, c, PLATE_LOAD.row_torque, t)
