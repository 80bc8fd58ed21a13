"""Soil rows: the constitutive law of ONE soil quadrature point (``reference/solver_math.md``, "Soil row").

Conventions as in :mod:`.contact`: impulses in the contact frame ``(n, t1, t2)``, ``n`` pointing from the soil into
the body, so a normal velocity ``v_n < 0`` moves the body into the soil; ``w_nn`` (scalar) and ``w_tt`` (2x2) are
the normal and tangential parts of the point's Delassus block [1/kg = (m/s)/(N s)]. The point covers area ``area``
[m^2] of a footprint of effective width ``b`` [m]; ``dt`` is the step [s]. ``mat`` is a ``ti.types.vector(8, float)`` in
:data:`taichi_terra.terrain.soil.SOIL_FIELDS` order: ``kc, kphi, n, Ke, D, c, mu, Kj``.
Every function here is a ``@ti.func`` without global state; ``float`` follows :func:`taichi_terra.init`.
"""
import taichi as ti
from taichi.lang import impl

from ..common.arrays import SOIL_MATERIAL
from ..solver.contact import friction_disc

vec2 = ti.math.vec2
SOIL_MAX_ITERATIONS = 60


@ti.dataclass
class SoilPoint:
    """What the laws need of one soil quadrature point beside its velocity and impulse: ``delta``, how far the
    body's underside lies below the undeformed surface at the start of the step [m]; the sample's plastic
    sinkage ``s_p`` [m] and loaded slip ``j`` [m]; the point's ``area`` [m^2] and footprint width ``b`` [m];
    ``rate``, how fast the sample's slip grows with the point's (:func:`slip_rate`)."""
    delta: float
    s_p: float
    j: float
    area: float
    b: float
    rate: float


def _rel_tol():
    """Relative root tolerance: 1e-12 in f64, 1e-6 in f32 (evaluated at compile time)."""
    return 1e-12 if impl.get_runtime().default_fp == ti.f64 else 1e-6


@ti.func
def _pressure_and_slope(delta_e, s_p, b, mat):
    """``(p, dp/d delta_e)`` of :func:`soil_pressure` [Pa, Pa/m] (slope 0 where ``p = 0``)."""
    p = 0.0
    dp = 0.0
    if delta_e > 0.0:
        pe = mat[SOIL_MATERIAL.elastic_stiffness] * (delta_e - s_p)
        py = (mat[SOIL_MATERIAL.bekker_kc] / b + mat[SOIL_MATERIAL.bekker_kphi]) * ti.pow(delta_e, mat[SOIL_MATERIAL.sinkage_exponent])
        if pe <= py:
            if pe > 0.0:
                p = pe
                dp = mat[SOIL_MATERIAL.elastic_stiffness]
        else:
            p = py
            dp = mat[SOIL_MATERIAL.sinkage_exponent] * py / delta_e
    return p, dp


@ti.func
def soil_pressure(delta_e, s_p, b, mat):
    """Non-viscous normal pressure [Pa] at total sinkage ``delta_e`` [m] over the rut floor ``s_p`` [m]:

    ``p = max(0, min(Ke (delta_e - s_p), (kc/b + kphi) delta_e^n))``, and 0 when ``delta_e <= 0``.
    """
    p, _ = _pressure_and_slope(delta_e, s_p, b, mat)
    return p


@ti.func
def solve_soil_normal(delta, s_p, w_nn, v_n, area, b, dt, mat):
    """:func:`solve_soil_normal_from` with Newton's method started from zero impulse."""
    return solve_soil_normal_from(delta, s_p, w_nn, v_n, area, b, dt, mat, 0.0)


@ti.func
def solve_soil_normal_from(delta, s_p, w_nn, v_n, area, b, dt, mat, guess):
    """Implicit normal impulse of a soil point. Returns ``(lam_n, delta_e, p, p_n)``.

    Inputs: ``delta`` [m] the depth of the body's surface below the undeformed surface at the start of the step,
    ``s_p`` [m] the permanent sinkage (rut floor ``max(s_p, 0)``), ``w_nn`` [1/kg] the normal Delassus entry,
    ``v_n`` [m/s] the normal velocity the point has WITHOUT this row's normal impulse (the caller passes
    ``vloc[0] - w_nn * lam_n_old``), ``area`` [m^2], ``b`` [m], ``dt`` [s], ``mat`` (see module doc).

    With ``w = -v_n``, end-of-step approach speed ``w_e = w - w_nn lam_n`` and ``delta_e = delta + dt w_e``, the
    impulse solves ``lam_n = dt area (p(delta_e) + D max(w_e, 0))``. Its residual is increasing in ``lam_n``,
    so the root is unique in ``[0, L_max]``, ``L_max = dt area (p(delta + dt w) + D max(w, 0))``; it is found by
    Newton's method safeguarded by bisection (relative step tolerance 1e-12 in f64, 1e-6 in f32), started
    from ``guess`` [N s] (the row's impulse from its last update) where that lies inside the bracket, else
    from zero: in a sweep the root has moved little since the row's last update, and Newton from there takes
    one or two steps instead of five or six. The root is the same to the tolerance either way.
    No contact (``lam_n = 0``) when ``delta + dt w <= max(s_p, 0)``: a body that stays above the rut floor meets
    no resistance, viscous or otherwise. When the viscous root would stop the body above the floor, the body
    instead ends exactly at the floor (``lam_n = (delta + dt w - floor) / (dt w_nn)``, the smaller impulse):
    the dashpot acts only on travel into the soil, and ``lam_n`` stays continuous in ``v_n``.

    Returns ``lam_n`` [N s] (>= 0), ``delta_e`` [m] = ``delta + dt (w - w_nn lam_n)``, ``p`` [Pa] the non-viscous
    pressure at ``delta_e`` and ``p_n = lam_n / (dt area)`` [Pa] the total pressure the impulse transmits
    (equal to ``p + D max(w_e, 0)`` at the root; 0 without contact).
    """
    w = -v_n
    de0 = delta + dt * w
    floor = ti.max(s_p, 0.0)
    scale = dt * area
    lam = 0.0
    p_n = 0.0
    if de0 > floor and scale > 0.0:
        damping = mat[SOIL_MATERIAL.damping]
        lmax = scale * (soil_pressure(de0, s_p, b, mat) + damping * ti.max(w, 0.0))
        tol = ti.static(_rel_tol())
        lo = 0.0
        hi = lmax
        x = 0.0
        hi_seen = False  # whether r(hi) was evaluated; until then Newton may land on hi = L_max itself
        solved = False
        if w_nn > 0.0:
            # the impulse that stops the body at the floor, where p = 0: the root is never beyond it
            x_floor = (de0 - floor) / (dt * w_nn)
            if x_floor < lmax:
                if x_floor - scale * damping * ti.max(w - w_nn * x_floor, 0.0) <= 0.0:
                    x = x_floor  # the viscous root lies above the floor: the body ends on the floor
                    solved = True
                else:
                    hi = x_floor
                    hi_seen = True
        if not solved:
            if guess > lo and guess < hi:
                x = guess
            for _ in range(SOIL_MAX_ITERATIONS):
                we = w - w_nn * x
                p, dp = _pressure_and_slope(delta + dt * we, s_p, b, mat)
                dvisc = 0.0
                if we > 0.0:
                    dvisc = damping
                r = x - scale * (p + dvisc * we)
                if r == 0.0:
                    break
                if r < 0.0:
                    lo = x
                else:
                    hi = x
                    hi_seen = True
                x_new = x - r / (1.0 + scale * w_nn * (dt * dp + dvisc))
                if ti.abs(x_new - x) <= tol * x:
                    break  # Newton converged at x (also when its step would land on a bracket end)
                if not ((x_new > lo and x_new < hi) or (x_new == hi and not hi_seen)):
                    x_new = 0.5 * (lo + hi)
                x = x_new
                if hi - lo <= tol * hi:
                    break
        lam = ti.max(x, 0.0)
        p_n = lam / scale
    delta_e = delta + dt * (w - w_nn * lam)
    return lam, delta_e, soil_pressure(delta_e, s_p, b, mat), p_n


@ti.func
def _one_minus_exp(x):
    """``1 - exp(-x)`` for ``x >= 0``, accurate for small ``x`` (no ``expm1`` in Taichi)."""
    r = 0.0
    if x < 1e-4:
        r = x * (1.0 - x * (0.5 - x / 6.0))
    else:
        r = 1.0 - ti.exp(-x)
    return r


@ti.func
def _janosi_impulse(lam_t_old, f, w_tt, j, s_full, kj, dt):
    """Tangential impulse of :func:`solve_soil_shear` for ``Kj > 0`` (``|f| > 0``, ``s_full > 0``); ``dt`` here is
    the time over which the slip grows (the step times :func:`slip_rate`).

    Parametrisation as in ``friction_disc``: ``l(g) = -(w_tt + g I)^-1 f`` gives the end slip
    ``v = f + w_tt l = -g l``, exactly opposite to ``l``, for any ``g > 0`` and any SPD ``w_tt``. The scalar root
    ``phi(g) = S(j + dt g |l(g)|) / |l(g)| - 1 = 0`` with ``S(x) = s_full (1 - exp(-x/Kj))`` is unique: ``|l|`` falls
    and the slip ``g |l|`` grows with ``g``. This ratio form is nearly linear in ``g`` both while ``S`` grows
    linearly with slip and once it saturates, so Newton's method (safeguarded by bisection) converges in a few
    steps. Bracket ``(0, max(tr w_tt, |f| / S(j + dt |f| / 2))]`` (at its upper end ``|l| <= |f| / g <= S`` while
    the slip is at least ``|f| / 2``). If the impulse that stops the slip, ``-w_tt^-1 f``, lies within the strength
    ``S(j)`` already mobilised, the point sticks (the ``g -> 0`` limit).
    """
    eye = ti.Matrix.identity(float, 2)
    nf = f.norm()
    lam = vec2(0.0, 0.0)
    stuck = False
    if w_tt.determinant() > 0.0:
        ls = -(w_tt.inverse() @ f)
        if ls.norm() <= s_full * _one_minus_exp(j / kj):
            lam = ls
            stuck = True
    sh = s_full * _one_minus_exp((j + 0.5 * dt * nf) / kj)
    if not stuck and sh > 0.0:
        lo = 0.0
        hi = ti.max(w_tt[0, 0] + w_tt[1, 1], nf / sh)
        g = nf / (s_full * _one_minus_exp((j + dt * nf) / kj))  # exact root for w_tt = 0 (pure drag), <= hi
        old_norm = lam_t_old.norm()
        if old_norm > 0.0:  # warm start from the previous impulse of this row, when it lies in the bracket
            g_old = -(f + w_tt @ lam_t_old).dot(lam_t_old) / (old_norm * old_norm)
            if g_old > lo and g_old < hi:
                g = g_old
        tol = ti.static(_rel_tol())
        for _ in range(SOIL_MAX_ITERATIONS):
            a_inv = (w_tt + g * eye).inverse()
            l = -(a_inv @ f)
            m = l.norm()
            x = (j + dt * g * m) / kj
            strength = s_full * _one_minus_exp(x)
            phi = strength / m - 1.0
            if phi == 0.0:
                break
            if phi < 0.0:
                lo = g
            else:
                hi = g
            dm = -l.dot(a_inv @ l) / m  # d|l|/dg
            ds = s_full * ti.exp(-x) * dt * (m + g * dm) / kj  # dS/dg
            g_new = g - phi * m * m / (ds * m - strength * dm)
            if ti.abs(g_new - g) <= tol * g:
                break  # Newton converged at g
            if not (g_new > lo and g_new < hi):
                g_new = 0.5 * (lo + hi)
            g = g_new
            if hi - lo <= tol * hi:
                break
        lam = -((w_tt + g * eye).inverse() @ f)
        # magnitude exactly S(j_e) of its own slip (removes the last step's residual, keeps |lam| <= s_full);
        # a slip so small that |lam| underflows (rounding-level velocities in f32) gets no impulse
        m = lam.norm()
        if m > 0.0:
            lam *= s_full * _one_minus_exp((j + dt * g * m) / kj) / m
        else:
            lam = vec2(0.0, 0.0)
    return lam


@ti.func
def slip_rate(offset, v_t):
    """How fast a sample's slip grows with the slip ``|v_t|`` of its soil point: 1, but 1/2 where the footprint
    covers only part of the sample's cell and the cell's centre lies ahead of the covered part along the slip
    (``offset``, from the point, the covered part's centroid, to the cell's centre, within 45 degrees of
    ``v_t``). There the footprint's edge is advancing over the cell, and the covered part's centroid has been
    under the body for half of the edge's advance; when the edge leaves the cell the sample's slip is half a
    cell, the distance the body has slid since the edge passed the sample, as in the continuum (a rate of 1
    would leave every sample half a cell ahead: an error of first order in the spacing). Beside or behind the
    footprint (a wheel's tread edge, a plate's trailing edge) the covered part has been under the body all
    along."""
    rate = 1.0
    along = offset.dot(v_t)
    if along > 0.0 and 2.0 * along * along > offset.norm_sqr() * v_t.norm_sqr():
        rate = 0.5
    return rate


@ti.func
def solve_soil_shear(lam_t_old, v_t_free, w_tt, j, area, dt, p_n, mat):
    """:func:`solve_soil_shear_at` with the slip growing at the point's own rate (``rate = 1``)."""
    return solve_soil_shear_at(lam_t_old, v_t_free, w_tt, j, area, dt, p_n, mat, 1.0)


@ti.func
def solve_soil_shear_at(lam_t_old, v_t_free, w_tt, j, area, dt, p_n, mat, rate):
    """Tangential impulse of a soil point. Returns ``(lam_t, j_e)``: ``lam_t`` [N s] (vec2 in ``(t1, t2)``) and the
    end-of-step accumulated slip ``j_e = j + dt |v_t_end|`` [m], ``v_t_end = v_t_free + w_tt @ lam_t``.

    Inputs: ``lam_t_old`` [N s] this row's previous tangential impulse (only a warm-start guess), ``v_t_free``
    [m/s] the tangential velocity WITHOUT this row's tangential impulse, ``w_tt`` [1/kg] the 2x2 tangential
    Delassus block (symmetric positive definite), ``j`` [m] the slip accumulated before this step, ``area``
    [m^2], ``dt`` [s], ``p_n`` [Pa] the total normal pressure (viscosity included, from
    :func:`solve_soil_normal`), ``mat`` (module doc).

    ``rate`` (:func:`slip_rate`) scales how fast the sample's slip grows: ``j_e = j + rate dt |v_t_end|``.

    Strength ``S(j_e) = dt area (c + mu p_n)(1 - exp(-j_e / Kj))``. ``Kj > 0``: the impulse opposes the end-of-step
    slip with magnitude ``S(j_e)``, ``lam_t = -S(j_e) v_t_end / |v_t_end|``, solved as a scalar root (see
    ``_janosi_impulse``); a fresh point (``j = 0``) therefore resists only by slipping, while a point whose
    stopping impulse ``-w_tt^-1 v_t_free`` is within ``S(j)`` sticks. ``Kj = 0``: Coulomb friction with cohesion,
    ``friction_disc(w_tt, v_t_free, dt area (c + mu p_n))``. Zero when ``v_t_free = 0`` or ``c + mu p_n = 0``.
    """
    c, mu, kj = mat[SOIL_MATERIAL.cohesion], mat[SOIL_MATERIAL.friction_coefficient], mat[SOIL_MATERIAL.shear_displacement]
    s_full = dt * area * (c + mu * ti.max(p_n, 0.0))
    lam = vec2(0.0, 0.0)
    if s_full > 0.0 and v_t_free.norm() > 0.0:
        if kj > 0.0:  # (the slip grows by rate dt |v| in a step)
            lam = _janosi_impulse(lam_t_old, v_t_free, w_tt, j, s_full, kj, rate * dt)
        else:
            lam = friction_disc(w_tt, v_t_free, s_full)
    return lam, j + rate * dt * (v_t_free + w_tt @ lam).norm()


@ti.func
def solve_soil_row(w, lam, vloc, pt, dt, mat):
    """One Gauss-Seidel update of a soil quadrature row (frame ``(n, t1, t2)``, ``n`` the bed's +z).

    ``w``: the 3x3 Delassus block, ``lam``: the row's current impulse, ``vloc``: the current relative
    velocity in the frame (with ``lam`` applied), ``pt``: the point (:class:`SoilPoint`). The normal law is
    solved first with the row's current tangential impulse (its root sought from the row's current normal
    impulse), then the shear law under the new normal pressure; returns the new frame impulse [N s]."""
    delta, s_p, j, area, b, rate = pt.delta, pt.s_p, pt.j, pt.area, pt.b, pt.rate
    v_n_free = vloc[0] - w[0, 0] * lam[0]
    ln, _delta_e, _p, p_n = solve_soil_normal_from(delta, s_p, w[0, 0], v_n_free, area, b, dt, mat, lam[0])
    wt = ti.math.mat2([[w[1, 1], w[1, 2]], [w[2, 1], w[2, 2]]])
    lt_old = vec2(lam[1], lam[2])
    vt_free = vec2(vloc[1], vloc[2]) + vec2(w[1, 0], w[2, 0]) * (ln - lam[0]) - wt @ lt_old
    lt = vec2(0.0, 0.0)
    if ln > 0.0:
        lt, _j_e = solve_soil_shear_at(lt_old, vt_free, wt, j, area, dt, p_n, mat, rate)
    return ti.math.vec3(ln, lt[0], lt[1])


@ti.func
def soil_traction(vloc, pt, dt, mat, anchor, kappa):
    """The same laws as :func:`solve_soil_row`, written for the velocity a soil point (``pt``,
    :class:`SoilPoint`) ENDS the step with: returns ``(lam, k)``, the frame impulse ``lam`` [N s] the point
    transmits when its velocity at the end of the step is ``vloc`` [m/s] (frame ``(n, t1, t2)``), and
    ``k = -d lam / d vloc`` [N s / (m/s)] (3x3).

    ``lam_n = dt area (p(delta_e) + D max(w_e, 0))`` with ``w_e = -vloc[0]``, ``delta_e = delta + dt w_e``, and
    0 while ``delta_e`` stays above the rut floor ``max(s_p, 0)``. The shear impulse is bounded by the
    strength ``S = (dt area c + mu lam_n)(1 - exp(-(j + rate dt |v_t|) / Kj))`` (``Kj = 0``: without the last
    factor) and opposes the slip. At ``v_t = 0`` that law is set-valued (a point that mobilised strength
    earlier may stick), so it is written as a projection: ``lam_t = P_S(anchor - kappa v_t)``, the point of
    the disc of radius ``S`` nearest to ``anchor - kappa v_t``, with ``anchor`` [N s] the point's current
    shear impulse and ``kappa`` [N s / (m/s)] > 0. A point is at the law's fixed point exactly when
    ``lam_t = anchor``: then it sticks (``v_t = 0``, ``|lam_t| <= S``) or slips with ``lam_t = -S v_t / |v_t|``.
    ``k`` includes the shear's dependence on ``lam_n`` (column 0 below the diagonal)."""
    delta, s_p, j, area, b, rate = pt.delta, pt.s_p, pt.j, pt.area, pt.b, pt.rate
    lam = ti.math.vec3(0.0, 0.0, 0.0)
    k = ti.math.mat3(0.0)
    w_e = -vloc[0]
    de = delta + dt * w_e
    scale = dt * area
    if de > ti.max(s_p, 0.0) and scale > 0.0:
        p, dp = _pressure_and_slope(de, s_p, b, mat)
        visc = 0.0
        if w_e > 0.0:
            visc = mat[SOIL_MATERIAL.damping]
        ln = scale * (p + visc * w_e)
        knn = scale * (dt * dp + visc)
        lam[0] = ln
        k[0, 0] = knn
        mu, kj = mat[SOIL_MATERIAL.friction_coefficient], mat[SOIL_MATERIAL.shear_displacement]
        s_full = scale * mat[SOIL_MATERIAL.cohesion] + mu * ln
        vt = vec2(vloc[1], vloc[2])
        sp = vt.norm()
        if s_full > 0.0:
            g = 1.0  # the strength's share mobilised by the slip, and its slope in |v_t|
            dg = 0.0
            if kj > 0.0:
                x = (j + rate * dt * sp) / kj
                g = _one_minus_exp(x)
                dg = ti.exp(-x) * rate * dt / kj
            strength = s_full * g
            trial = anchor - kappa * vt
            tn = trial.norm()
            lt = trial
            ktt = kappa * ti.Matrix.identity(float, 2)
            if tn > strength:  # slipping: on the disc's edge
                dirn = trial / tn
                lt = strength * dirn
                vdir = vec2(0.0, 0.0)
                if sp > 0.0:
                    vdir = vt / sp
                ktt = kappa * strength / tn * (ti.Matrix.identity(float, 2) - dirn.outer_product(dirn)) - \
                    s_full * dg * dirn.outer_product(vdir)
                for a in ti.static(range(2)):
                    k[a + 1, 0] = mu * knn * g * dirn[a]
            lam[1] = lt[0]
            lam[2] = lt[1]
            for a in ti.static(range(2)):
                for c in ti.static(range(2)):
                    k[a + 1, c + 1] = ktt[a, c]
    return lam, k


@ti.func
def sample_area(ix, iy, nx, ny, dx, dy):
    """Area [m^2] a bed sample stands for: the rectangle of half-spacings around it, cut at the border."""
    ax = dx if (ix > 0 and ix < nx - 1) else 0.5 * dx
    ay = dy if (iy > 0 and iy < ny - 1) else 0.5 * dy
    return ax * ay
