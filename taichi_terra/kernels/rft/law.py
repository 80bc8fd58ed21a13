"""Resistive force theory: the force granular media put on ONE plate (``reference/rft_formulas.md``).

The law is Treers' 3D RFT with Li's generic coefficients, as RFT-SiM uses it. A plate is a small flat piece of a
body's surface: centroid, outward unit normal ``n``, area ``A`` [m^2], velocity ``v`` of its centroid [m/s],
depth ``z`` [m] of the centroid below the sand's surface (``z > 0`` buried), world axes with ``z`` up.

* Only a leading plate resists: ``n . v > 0`` (strict) and ``z > 0``; otherwise the force is zero (the leading-
  edge hypothesis; a plate sliding along itself, ``n . v = 0``, feels nothing).
* Plate basis: ``e2`` the horizontal direction of ``n`` (of ``v`` for a horizontal plate, ``|n_z| >= 1 - 1e-3``;
  x when that has none), ``e1 = e2 x z``. Treers' and RFT-SiM's code add ``1e-5`` to ``v_x`` there instead, which
  turns the force of a horizontal plate by up to 1e-5 rad with the scene; this keeps it exactly symmetric. The unit velocity splits into ``v1 = (v^ . e1) e1`` and ``v23 = v^ - v1``.
* Angles: ``beta = atan2(n . z, n . e2) + pi/2`` (0: facing down, pi/2: vertical, pi: facing up) and ``gamma =
  -atan2(v23 . z, v23 . e2)`` (pi/2: moving down).
* Li 2013's generic stresses per unit depth, a Fourier series in ``2 beta`` and ``gamma`` with nine coefficients
  ``(A00, A10, B11, B01, B-11, C11, C01, C-11, D10)`` (:data:`taichi_terra.granular.LI_2013`)::

      az(beta, gamma) = A00 + A10 cos 2b + B11 sin(2b + g) + B01 sin g + B-11 sin(-2b + g)
      ax(beta, gamma) = C11 cos(2b + g) + C01 cos g + C-11 cos(-2b + g) + D10 sin 2b

  scaled by ``zeta`` [N/cm^3], the medium's vertical penetration stress per unit depth of a horizontal plate (Li's
  generic set has ``az(0, pi/2) = 1``).
* Treers' sigmoids of ``vt = |v^ . e1|`` and ``vn = sqrt(1 - vt^2)``, normalized so that ``f(1) = 1``
  (``"unit"``) or by the constants RFT-SiM's code divides by (``"rftsim"``: ``f1(1) = 2.030``, ``f23(1) = 1.348``).
* The force, ``alpha`` in N/cm^3 times ``1e6`` for N/m^3::

      F = zeta 1e6 z A ( -f1 ax(0, 0) sign(v^ . e1) e1  -  f23 ax(beta, gamma) e2  +  f23 az(beta, gamma) z )

Every function here is a ``@ti.func`` without global state; ``float`` follows :func:`taichi_terra.init`.
"""
import taichi as ti

vec3 = ti.math.vec3

#: (a1, a2, a3) of f1 = a1 (tanh(a2 vt - a3) + tanh(a3)) / N1 and (b1, b2, b3) of f23 = b1 (atanh(b2 vn - b3) +
#: atanh(b3)) / N23 (Treers 2021)
F1_FIT = (0.440850096954369, 3.62263982880971, 1.60910808139526)
F23_FIT = (1.99392673405210, 1.61146827229181, 0.973746396532650)
#: (N1, N23) per normalization: 0 "unit" (f(1) = 1), 1 "rftsim" (the constants of RFT-SiM's code)
NORMALIZERS = ((0.832324700111401, 5.81083560370960), (0.41, 4.31))
#: N/cm^3 -> N/m^3 (alpha z A with z in m and A in m^2)
PER_CM3 = 1e6
#: a plate is horizontal when |n_z| >= 1 - HORIZONTAL (its e2 then follows the velocity)
HORIZONTAL = 1e-3


@ti.func
def li_alphas(cb, sb, cg, sg, c):
    """``(ax, az)``: Li 2013's generic stresses per unit depth (dimensionless; times zeta for N/cm^3) at the
    plate angle ``beta`` and intrusion angle ``gamma``, given by their cosines and sines (``cb, sb, cg, sg``;
    the series expanded by the angle-sum identities, so no trigonometric call), for the nine coefficients ``c``
    (``A00, A10, B11, B01, B-11, C11, C01, C-11, D10``)."""
    c2b = cb * cb - sb * sb
    s2b = 2.0 * sb * cb
    az = (c[0] + c[1] * c2b + c[2] * (s2b * cg + c2b * sg) + c[3] * sg + c[4] * (c2b * sg - s2b * cg))
    ax = c[5] * (c2b * cg - s2b * sg) + c[6] * cg + c[7] * (c2b * cg + s2b * sg) + c[8] * s2b
    return ax, az


@ti.func
def _atanh(x):
    return 0.5 * ti.log((1.0 + x) / (1.0 - x))


@ti.func
def treers_scales(vt, normalization):
    """``(f1, f23)``: Treers' scaling of the lateral and in-plane resistance for the unit velocity's component
    ``vt`` along ``e1`` (0 <= vt <= 1); ``normalization`` 0 ("unit") or 1 ("rftsim")."""
    vn = ti.sqrt(ti.max(1.0 - vt * vt, 0.0))
    n1 = NORMALIZERS[0][0]
    n23 = NORMALIZERS[0][1]
    if normalization == 1:
        n1 = NORMALIZERS[1][0]
        n23 = NORMALIZERS[1][1]
    f1 = F1_FIT[0] * (ti.tanh(F1_FIT[1] * vt - F1_FIT[2]) + ti.tanh(F1_FIT[2])) / n1
    f23 = F23_FIT[0] * (_atanh(F23_FIT[1] * vn - F23_FIT[2]) + _atanh(F23_FIT[2])) / n23
    return f1, f23


@ti.func
def plate_force(n, v, depth, area, zeta, c, normalization):
    """World force [N] of the medium on a plate with outward unit normal ``n`` and centroid velocity ``v``
    [m/s], its centroid ``depth`` [m] below the surface, ``area`` [m^2]; ``zeta`` [N/cm^3], Li coefficients
    ``c`` (9-vector), ``normalization`` 0 ("unit") or 1 ("rftsim"). Zero for a trailing or unburied plate."""
    force = vec3(0.0, 0.0, 0.0)
    speed = v.norm()
    if depth > 0.0 and speed > 0.0:
        vh = v / speed
        if n.dot(vh) > 0.0:
            e2 = vec3(n[0], n[1], 0.0)
            if ti.abs(n[2]) >= 1.0 - HORIZONTAL:  # a horizontal plate: its e2 follows the velocity (x if none)
                e2 = vec3(vh[0], vh[1], 0.0)
            e2 = e2 / e2.norm() if e2.norm() > 1e-12 else vec3(1.0, 0.0, 0.0)
            ez = vec3(0.0, 0.0, 1.0)
            e1 = e2.cross(ez)
            along = vh.dot(e1)
            v23 = vh - along * e1
            # beta = atan2(n . z, n . e2) + pi/2 and gamma = -atan2(v23 . z, v23 . e2), by their cosines and sines
            nb = ti.sqrt(n[2] * n[2] + n.dot(e2) ** 2)
            cb, sb = -n[2] / nb, n.dot(e2) / nb
            ng = ti.sqrt(v23[2] * v23[2] + v23.dot(e2) ** 2)
            cg, sg = 1.0, 0.0  # (motion along e1 alone: atan2(0, 0) = 0)
            if ng > 0.0:
                cg, sg = v23.dot(e2) / ng, -v23[2] / ng
            ax, az = li_alphas(cb, sb, cg, sg, c)
            ay = c[5] + c[6] + c[7]  # (ax at beta = gamma = 0)
            f1, f23 = treers_scales(ti.abs(along), normalization)
            scale = zeta * PER_CM3 * depth * area
            force = scale * (-f1 * ay * ti.math.sign(along) * e1 - f23 * ax * e2 + f23 * az * ez)
    return force
