"""Soil constitutive law of one quadrature point: SoilMaterial and the @ti.func rows in kernels/soil/law.py.

References: spec ``deformable_terrain.md`` ("Constitutive model", "Defaults and valid values", "Traction buildup")
and ``reference/solver_math.md`` ("Soil row"). The rows are exercised through small kernels defined here.
"""
import dataclasses
import math

import numpy as np
import pytest
import taichi as ti

from taichi_terra.kernels.soil.law import (SoilPoint, soil_pressure, soil_traction, solve_soil_normal,
                                           solve_soil_row, solve_soil_shear)
from taichi_terra.terrain.soil import SOIL_FIELDS, SoilMaterial

G = 9.81


# ---------------------------------------------------------------------------------------------- test kernels
@ti.func
def _material(mats: ti.template(), i):
    """Row ``i`` of the materials array as the kernels' 8-vector."""
    mat = ti.types.vector(8, float)(0.0)
    for k in ti.static(range(8)):
        mat[k] = mats[i, k]
    return mat


@ti.kernel
def _pressure_kernel(inp: ti.types.ndarray(), mats: ti.types.ndarray(), out: ti.types.ndarray()):
    for i in range(inp.shape[0]):
        mat = _material(mats, i)
        out[i] = soil_pressure(inp[i, 0], inp[i, 1], inp[i, 2], mat)


@ti.kernel
def _normal_kernel(inp: ti.types.ndarray(), mats: ti.types.ndarray(), out: ti.types.ndarray()):
    """inp: delta, s_p, w_nn, v_n, area, b, dt. out: lam_n, delta_e, p, p_n."""
    for i in range(inp.shape[0]):
        mat = _material(mats, i)
        lam, de, p, pn = solve_soil_normal(inp[i, 0], inp[i, 1], inp[i, 2], inp[i, 3], inp[i, 4], inp[i, 5],
                                           inp[i, 6], mat)
        out[i, 0] = lam
        out[i, 1] = de
        out[i, 2] = p
        out[i, 3] = pn


@ti.kernel
def _shear_kernel(inp: ti.types.ndarray(), mats: ti.types.ndarray(), out: ti.types.ndarray()):
    """inp: lam_old (2), v_free (2), w_tt (4, row-major), j, area, dt, p_n. out: lam_t (2), j_e."""
    for i in range(inp.shape[0]):
        mat = _material(mats, i)
        wtt = ti.math.mat2([[inp[i, 4], inp[i, 5]], [inp[i, 6], inp[i, 7]]])
        lam, je = solve_soil_shear(ti.math.vec2(inp[i, 0], inp[i, 1]), ti.math.vec2(inp[i, 2], inp[i, 3]), wtt,
                                   inp[i, 8], inp[i, 9], inp[i, 10], inp[i, 11], mat)
        out[i, 0] = lam[0]
        out[i, 1] = lam[1]
        out[i, 2] = je


@ti.kernel
def _mass_on_soil_kernel(par: ti.types.ndarray(), mats: ti.types.ndarray(), hist: ti.types.ndarray()):
    """One point of area A carrying mass m (w_nn = 1/m) under gravity, stepped with the implicit normal row.
    par: m, A, b, dt, delta0, v0. hist[i, k]: delta, v_n, p, s_p after step k."""
    for i in range(par.shape[0]):
        mat = _material(mats, i)
        m, area, b, dt = par[i, 0], par[i, 1], par[i, 2], par[i, 3]
        delta = par[i, 4]
        v = par[i, 5]
        s_p = 0.0
        for k in range(hist.shape[1]):
            v_free = v - 9.81 * dt
            lam, de, p, _pn = solve_soil_normal(delta, s_p, 1.0 / m, v_free, area, b, dt, mat)
            v = v_free + lam / m
            delta = de
            s_p = ti.max(s_p, de - p / mat[3])  # spec: on the yield branch s_p = s - p / Ke; never decreases
            hist[i, k, 0] = delta
            hist[i, k, 1] = v
            hist[i, k, 2] = p
            hist[i, k, 3] = s_p


@ti.kernel
def _traction_kernel(inp: ti.types.ndarray(), mats: ti.types.ndarray(), out: ti.types.ndarray()):
    """inp: W (9, row-major), lam_old (3), vloc (3), delta, s_p, j, area, b, dt, rate, kappa, h.
    out: the row's impulse at its fixed point (3), the end velocity (3), soil_traction there with its shear impulse
    as anchor (3), its k (9), and the central difference of -lam over +-h along each velocity axis (9)."""
    for i in range(inp.shape[0]):
        mat = _material(mats, i)
        w = ti.math.mat3(0.0)
        for a in ti.static(range(3)):
            for c in ti.static(range(3)):
                w[a, c] = inp[i, 3 * a + c]
        old = ti.math.vec3(inp[i, 9], inp[i, 10], inp[i, 11])
        vloc = ti.math.vec3(inp[i, 12], inp[i, 13], inp[i, 14])
        delta, s_p, j, area, b, dt, rate, kappa, h = (inp[i, 15], inp[i, 16], inp[i, 17], inp[i, 18], inp[i, 19],
                                                      inp[i, 20], inp[i, 21], inp[i, 22], inp[i, 23])
        pt = SoilPoint(delta=delta, s_p=s_p, j=j, area=area, b=b, rate=rate)
        new = old
        for _ in range(200):  # the row's update repeated to its own fixed point (its normal and shear laws
            # are solved one after the other, and W couples them)
            new = solve_soil_row(w, new, vloc + w @ (new - old), pt, dt, mat)
        v_end = vloc + w @ (new - old)
        anchor = ti.math.vec2(new[1], new[2])
        lam, k = soil_traction(v_end, pt, dt, mat, anchor, kappa)
        for a in ti.static(range(3)):
            out[i, a] = new[a]
            out[i, 3 + a] = v_end[a]
            out[i, 6 + a] = lam[a]
            for c in ti.static(range(3)):
                out[i, 9 + 3 * a + c] = k[a, c]
        for c in ti.static(range(3)):
            dv = ti.math.vec3(0.0, 0.0, 0.0)
            dv[c] = h
            up, _k1 = soil_traction(v_end + dv, pt, dt, mat, anchor, kappa)
            down, _k2 = soil_traction(v_end - dv, pt, dt, mat, anchor, kappa)
            for a in ti.static(range(3)):
                out[i, 18 + 3 * a + c] = -(up[a] - down[a]) / (2.0 * h)


def _mats(n, **kw):
    return np.tile(SoilMaterial(**kw).as_array(), (n, 1))


def _run_normal(cases, mats):
    inp = np.ascontiguousarray(cases, dtype=np.float64)
    out = np.zeros((len(inp), 4))
    _normal_kernel(inp, np.ascontiguousarray(mats), out)
    return out


def _run_shear(cases, mats):
    inp = np.ascontiguousarray(cases, dtype=np.float64)
    out = np.zeros((len(inp), 3))
    _shear_kernel(inp, np.ascontiguousarray(mats), out)
    return out


def _pressure_ref(de, sp, b, mat):
    kc, kphi, n, ke = mat[:4]
    if de <= 0.0:
        return 0.0
    return max(0.0, min(ke * (de - sp), (kc / b + kphi) * de ** n))


# ---------------------------------------------------------------------------------------------- SoilMaterial
def test_soil_material_defaults():
    """Reference: spec "Defaults and valid values" table."""
    m = SoilMaterial()
    assert (m.bekker_kc, m.bekker_kphi, m.sinkage_exponent, m.elastic_stiffness, m.damping, m.cohesion,
            m.friction_coefficient, m.shear_displacement) == (0.0, 2.0e5, 1.1, 2.0e6, 1000.0, 0.0, 0.6, 0.01)
    assert SOIL_FIELDS == tuple(f.name for f in dataclasses.fields(SoilMaterial))
    arr = m.as_array()
    assert arr.dtype == np.float64 and arr.shape == (8,)
    np.testing.assert_array_equal(arr, [0.0, 2.0e5, 1.1, 2.0e6, 1000.0, 0.0, 0.6, 0.01])
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.damping = 5.0
    assert isinstance(SoilMaterial(damping=3).damping, float)
    # zero where the table allows it: no viscosity, no cohesion/friction, full mobilisation, kphi = 0 with kc > 0
    SoilMaterial(bekker_kc=1e3, bekker_kphi=0.0, damping=0.0, cohesion=0.0, friction_coefficient=0.0,
                 shear_displacement=0.0)


@pytest.mark.parametrize("field", SOIL_FIELDS)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_soil_material_rejects_non_finite(field, bad):
    """Reference: spec table, every field "Finite"."""
    with pytest.raises(ValueError, match=f"{field}.*finite"):
        SoilMaterial(**{field: bad})


@pytest.mark.parametrize("field", ["bekker_kc", "bekker_kphi", "damping", "cohesion", "friction_coefficient",
                                   "shear_displacement"])
def test_soil_material_rejects_negative(field):
    """Reference: spec table, "Finite, nonnegative"."""
    with pytest.raises(ValueError, match=f"{field}.*nonnegative"):
        SoilMaterial(**{field: -1e-3})


@pytest.mark.parametrize("field", ["sinkage_exponent", "elastic_stiffness"])
@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_soil_material_rejects_non_positive(field, bad):
    """Reference: spec table, "Finite, strictly positive"."""
    with pytest.raises(ValueError, match=f"{field}.*strictly positive"):
        SoilMaterial(**{field: bad})


def test_soil_material_needs_a_bekker_coefficient():
    """Reference: spec, "At least one of bekkerKc and bekkerKphi must be positive"."""
    with pytest.raises(ValueError, match="bekker_kc.*bekker_kphi.*positive"):
        SoilMaterial(bekker_kc=0.0, bekker_kphi=0.0)


@pytest.mark.parametrize("bad", ["1.0", None, True, [1.0]])
def test_soil_material_rejects_non_numbers(bad):
    """Reference: package convention (validation.py): non-numbers raise TypeError naming the field."""
    with pytest.raises(TypeError, match="cohesion"):
        SoilMaterial(cohesion=bad)


# ---------------------------------------------------------------------------------------------- pressure law
def test_pressure_law_branches_and_clamp():
    """Reference: spec "Constitutive model", p = max(0, min(Ke (s - s_p), (kc/b + kphi) s^n))."""
    kw = {"bekker_kc": 1000.0, "bekker_kphi": 1e5, "sinkage_exponent": 1.0, "elastic_stiffness": 2e6}
    cases = [  # delta_e, s_p, b, expected
        (0.01, 0.0099, 0.5, 2e6 * 1e-4),         # elastic branch: 200 Pa < envelope 1020 Pa
        (0.01, 0.0, 0.5, (1000.0 / 0.5 + 1e5) * 0.01),  # yield branch: 1020 Pa < elastic 2e4 Pa
        (0.01, 0.0, 0.1, (1000.0 / 0.1 + 1e5) * 0.01),  # kc/b grows as b shrinks
        (0.005, 0.0099, 0.5, 0.0),               # above the rut floor: max(0, ...) clamp
        (-0.01, -0.02, 0.5, 0.0),                # above the undeformed surface
        (0.0, 0.0, 0.5, 0.0),
    ]
    inp = np.array([c[:3] for c in cases])
    out = np.zeros(len(cases))
    _pressure_kernel(inp, _mats(len(cases), **kw), out)
    np.testing.assert_allclose(out, [c[3] for c in cases], rtol=1e-14, atol=0.0)
    # nonlinear envelope, n = 1.1
    kw["sinkage_exponent"] = 1.1
    inp = np.array([[0.02, 0.0, 0.5]])
    _pressure_kernel(inp, _mats(1, **kw), out[:1])
    assert out[0] == pytest.approx(1.02e5 * 0.02 ** 1.1, rel=1e-14)


# ---------------------------------------------------------------------------------------------- normal row
@pytest.mark.parametrize("n", [1.0, 1.1])
def test_normal_solve_satisfies_implicit_equation(n):
    """Reference: solver_math "Soil row": lam = dt A (p(delta_e) + D max(w_e, 0)), w_e = w - W_nn lam,
    delta_e = delta + dt w_e, for loading and resting points on the elastic and the yield branch."""
    mat = SoilMaterial(bekker_kc=500.0, bekker_kphi=1e5, sinkage_exponent=n, elastic_stiffness=2e6, damping=2000.0)
    a = mat.as_array()
    dt, area, b = 1e-3, 0.01, 0.3
    cases, kinds = [], []
    for w_nn in (1.0 / 20.0, 1.0 / 0.5, 1e-4, 0.0):
        for w in (0.5, 0.05, 0.0, -0.002):
            cases.append((0.02, 0.0, w_nn, -w, area, b, dt))       # virgin soil: yield branch
            kinds.append("yield")
            cases.append((0.02, 0.0199, w_nn, -w, area, b, dt))    # reloading a rut: elastic branch
            kinds.append("elastic")
    out = _run_normal(cases, np.tile(a, (len(cases), 1)))
    seen = set()
    for (delta, sp, w_nn, vn, A, b_, dt_), kind, (lam, de, p, pn) in zip(cases, kinds, out):
        w = -vn
        we = w - w_nn * lam
        assert de == pytest.approx(delta + dt_ * we, rel=1e-14, abs=1e-18)
        rhs = dt_ * A * (_pressure_ref(de, sp, b_, a) + a[4] * max(we, 0.0))
        assert lam > 0.0
        assert abs(lam - rhs) <= 1e-10 * lam
        assert p == pytest.approx(_pressure_ref(de, sp, b_, a), rel=1e-12)
        assert pn == pytest.approx(p + a[4] * max(we, 0.0), rel=1e-10)
        elastic = a[3] * (de - sp) < (a[0] / b_ + a[1]) * de ** n
        seen.add((kind, elastic, w > 0.0))
        assert elastic == (kind == "elastic")
    assert {("yield", False, True), ("yield", False, False), ("elastic", True, True), ("elastic", True, False)} <= seen


def test_normal_solve_no_contact_above_rut_floor():
    """Reference: spec "Constitutive model": a body above the surface or above an existing rut floor meets no
    resistance (not even viscous) until it reaches it; the soil supplies no suction."""
    mat = SoilMaterial(damping=1e5).as_array()
    cases = [
        (-0.01, 0.0, 0.05, -1.0, 0.01, 0.3, 1e-3),     # 1 cm above the surface, approaching at 1 m/s
        (0.005, 0.01, 0.05, -1.0, 0.01, 0.3, 1e-3),    # 5 mm above a 1 cm rut floor, approaching
        (0.02, 0.0, 0.05, 30.0, 0.01, 0.3, 1e-3),      # in the soil but lifting out faster than the sinkage
        (0.0, 0.0, 0.05, 0.0, 0.01, 0.3, 1e-3),        # touching, at rest, no load
    ]
    out = _run_normal(cases, np.tile(mat, (len(cases), 1)))
    np.testing.assert_array_equal(out[:, 0], 0.0)
    np.testing.assert_array_equal(out[:, 2:], 0.0)
    np.testing.assert_allclose(out[:, 1], [c[0] - c[6] * c[3] for c in cases], rtol=1e-15)


def test_normal_solve_damper_stops_body_at_rut_floor():
    """Reference: spec "only its travel into the soil is damped": a body that would reach the rut floor within
    the step but whose viscous root stops it above the floor ends exactly at the floor, with an impulse below
    the full viscous one (lam <= dt A D w_e, continuous in the approach speed)."""
    mat = SoilMaterial(damping=1e6).as_array()
    dt, area, m = 1e-3, 0.01, 1.0
    approach = np.array([1.0, 2.0, 3.0, 5.0])
    cases = [(0.0095, 0.01, 1.0 / m, -w, area, 0.3, dt) for w in approach]
    lam, de, p, pn = _run_normal(cases, np.tile(mat, (len(cases), 1))).T
    floor_lam = (0.0095 + dt * approach - 0.01) / (dt / m)
    np.testing.assert_allclose(lam, floor_lam, rtol=1e-12)
    np.testing.assert_allclose(de, 0.01, rtol=1e-12)
    we = approach - lam / m
    assert np.all(lam <= dt * area * mat[4] * we * (1 + 1e-12))
    assert np.all(p < 1e-6)
    np.testing.assert_allclose(pn, lam / (dt * area), rtol=1e-14)


@pytest.mark.parametrize("n,kphi", [(1.0, 1e5), (1.1, 2e5)])
def test_mass_on_soil_rests_at_bekker_sinkage(n, kphi):
    """Reference: spec "Normal loading" plate check s_eq = (m g / (A (kc/b + kphi)))^(1/n) (8.175 mm for the
    spec's 20 kg, 0.24 m^2 plate with kphi = 1e5, n = 1). Overdamped (D = 5e4) so that loading stays on the
    yield envelope without overshoot; Ke = 2e6, dt = 1e-3."""
    m, area, b, dt = 20.0, 0.24, 0.4, 1e-3
    mat = SoilMaterial(bekker_kphi=kphi, sinkage_exponent=n, elastic_stiffness=2e6, damping=5e4)
    hist = np.zeros((1, 6000, 4))
    _mass_on_soil_kernel(np.array([[m, area, b, dt, 0.0, 0.0]]), np.tile(mat.as_array(), (1, 1)), hist)
    s_eq = (m * G / (area * kphi)) ** (1.0 / n)
    if n == 1.0:
        assert s_eq == pytest.approx(8.175e-3, rel=1e-12)
    delta = hist[0, :, 0]
    assert np.all(np.diff(delta) >= -1e-15)  # monotone loading: never leaves the envelope
    assert delta[-1] == pytest.approx(s_eq, rel=5e-3)
    assert abs(hist[0, -1, 1]) < 1e-6
    assert hist[0, -1, 2] == pytest.approx(m * G / area, rel=1e-3)


def test_stiff_soil_is_stable_at_large_step():
    """Reference: solver_math "Soil row": the implicit normal solve keeps stiff soil stable. Ke = 2e7 Pa/m under
    20 kg on 0.24 m^2 has an elastic frequency of 490 rad/s, so omega dt = 4.9 at dt = 1e-2 (an explicit force
    needs omega dt < 2). A drop at 1 m/s onto the bed must settle without oscillation growth, at rest with
    p = m g / A."""
    m, area, b, dt = 20.0, 0.24, 0.4, 1e-2
    mat = SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, elastic_stiffness=2e7, damping=0.0)
    assert math.sqrt(area * 2e7 / m) * dt > 2.0
    hist = np.zeros((1, 2000, 4))
    _mass_on_soil_kernel(np.array([[m, area, b, dt, -0.005, -1.0]]), np.tile(mat.as_array(), (1, 1)), hist)
    delta, v, p, sp = hist[0].T
    assert np.all(np.isfinite(hist))
    final = delta[-1]
    dev = np.abs(delta - final)
    peak = int(np.argmax(delta))  # end of the impact; from here on the rebound oscillates on the elastic branch
    assert dev[peak] > 5e-5
    windows = [dev[k:k + 3].max() for k in range(peak, peak + 60, 3)]
    assert np.all(np.diff(windows) <= 1e-15)  # no oscillation growth
    assert np.max(dev[peak + 60:]) < 1e-9 and np.max(np.abs(v[peak + 60:])) < 1e-8
    assert p[-1] == pytest.approx(m * G / area, rel=1e-8)
    assert sp[-1] > 0.0 and delta.max() < 0.05
    # at rest on the elastic branch of the rut made during the impact
    assert final == pytest.approx(sp[-1] + m * G / (area * 2e7), rel=1e-8)


# ---------------------------------------------------------------------------------------------- shear row
def _spd(rng, scale):
    th = rng.uniform(0, np.pi)
    r = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    return r @ np.diag(scale * rng.uniform([0.5, 0.005], [2.0, 0.5])) @ r.T


def _strength(mat, dt, area, pn, je):
    c, mu, kj = mat[5], mat[6], mat[7]
    return dt * area * (c + mu * pn) * (1.0 - math.exp(-je / kj))


def test_shear_satisfies_implicit_equation(rng):
    """Reference: solver_math "Soil row" shear: lam_t = -dt A tau_max(j_e) v_t/|v_t|, v_t = v_t* + W_tt lam_t,
    j_e = j + dt |v_t|, for anisotropic W_tt; the result opposes the end-of-step slip and never exceeds
    dt A (c + mu p_n). A warm-start impulse does not change the result."""
    mat = SoilMaterial(cohesion=50.0, friction_coefficient=0.6, shear_displacement=0.01).as_array()
    cases = []
    for k in range(200):
        w = _spd(rng, 10.0 ** rng.uniform(-3, 1))
        vf = rng.normal(size=2) * 10.0 ** rng.uniform(-3, 0)
        j = 0.0 if k % 2 == 0 else rng.uniform(0.0, 0.03)
        pn = rng.uniform(0.0, 5e4)
        old = np.zeros(2) if k % 3 == 0 else rng.normal(size=2) * 0.01
        cases.append([*old, *vf, *w.ravel(), j, rng.uniform(1e-4, 1e-2), 10.0 ** rng.uniform(-4, -2), pn])
    cases = np.array(cases)
    out = _run_shear(cases, np.tile(mat, (len(cases), 1)))
    cold = cases.copy()
    cold[:, :2] = 0.0
    np.testing.assert_allclose(_run_shear(cold, np.tile(mat, (len(cases), 1))), out, rtol=1e-9, atol=1e-300)
    slipping = 0
    for c, (l1, l2, je) in zip(cases, out):
        lam, vf, w = np.array([l1, l2]), c[2:4], c[4:8].reshape(2, 2)
        j, area, dt, pn = c[8:12]
        v_end = vf + w @ lam
        assert je == pytest.approx(j + dt * np.linalg.norm(v_end), rel=1e-14)
        full = dt * area * (mat[5] + mat[6] * pn)
        assert np.linalg.norm(lam) <= full * (1 + 1e-14)
        stick = -np.linalg.solve(w, vf)
        if j > 0 and np.linalg.norm(stick) <= _strength(mat, dt, area, pn, j):
            np.testing.assert_allclose(lam, stick, rtol=1e-12)  # sticking within the mobilised strength
            continue
        slipping += 1
        s = _strength(mat, dt, area, pn, je)
        target = -s * v_end / np.linalg.norm(v_end)
        assert np.linalg.norm(lam - target) <= 1e-9 * s
        cos = -lam.dot(v_end) / (np.linalg.norm(lam) * np.linalg.norm(v_end))
        assert 1.0 - cos <= 1e-9
    assert slipping > 150


def test_shear_zero_without_slip_or_strength():
    """Reference: spec "Shear strength": no resistance when nothing slips or c = mu = 0 (also mu p_n = 0)."""
    w = [0.05, 0.01, 0.01, 0.2]
    cases = np.array([
        [0, 0, 0.0, 0.0, *w, 0.0, 0.01, 1e-3, 1e3],   # v_t_free = 0
        [0, 0, 0.0, 0.0, *w, 0.02, 0.01, 1e-3, 1e3],  # v_t_free = 0 with mobilised history
        [0, 0, 0.3, -0.1, *w, 0.0, 0.01, 1e-3, 1e3],  # c = mu = 0
        [0, 0, 0.3, -0.1, *w, 0.0, 0.01, 1e-3, 0.0],  # c = 0 and p_n = 0
    ])
    mats = np.array([SoilMaterial(cohesion=10.0).as_array(), SoilMaterial(cohesion=10.0).as_array(),
                     SoilMaterial(friction_coefficient=0.0).as_array(), SoilMaterial().as_array()])
    for kj in (0.01, 0.0):
        mats[:, 7] = kj
        out = _run_shear(cases, mats)
        np.testing.assert_array_equal(out[:, :2], 0.0)
        np.testing.assert_allclose(out[:, 2], cases[:, 8] + cases[:, 10] * np.hypot(cases[:, 2], cases[:, 3]))


def test_shear_buildup_follows_janosi_hanamoto():
    """Reference: spec "Traction buildup": tau/(c + mu p_n) = 1 - exp(-j/Kj), 63.2 % at j = Kj and 95 % at 3 Kj.
    Constant slip speed 0.1 m/s under a kinematic drag (W_tt = 1e-9 I), dt = 1e-3, Kj = 0.01 m."""
    mat = SoilMaterial(cohesion=100.0, friction_coefficient=0.6, shear_displacement=0.01).as_array()
    dt, area, pn, speed = 1e-3, 0.01, 2000.0, 0.1
    direction = np.array([0.6, -0.8])
    full = dt * area * (100.0 + 0.6 * pn)
    j, lam_old, js, ratios = 0.0, np.zeros(2), [], []
    for _ in range(500):
        case = np.array([[*lam_old, *(speed * direction), 1e-9, 0.0, 0.0, 1e-9, j, area, dt, pn]])
        l1, l2, je = _run_shear(case, mat[None, :])[0]
        lam_old = np.array([l1, l2])
        assert np.linalg.norm(lam_old / np.linalg.norm(lam_old) + direction) < 1e-9  # opposes the slip
        j = je
        js.append(j)
        ratios.append(np.linalg.norm(lam_old) / full)
    js, ratios = np.array(js), np.array(ratios)
    np.testing.assert_allclose(ratios, 1.0 - np.exp(-js / 0.01), rtol=1e-6)
    assert np.interp(0.01, js, ratios) == pytest.approx(0.632, rel=0.02)
    assert np.interp(0.03, js, ratios) == pytest.approx(0.95, rel=0.02)
    assert np.interp(0.04605, js, ratios) == pytest.approx(0.99, rel=0.02)


def test_shear_full_mobilisation_when_kj_zero():
    """Reference: spec "shearDisplacement = 0 selects fully mobilized friction immediately": Coulomb with cohesion,
    |lam| = dt A (c + mu p_n) at once when sliding (j = 0), sticking (v_t_end = 0) below it."""
    mat = SoilMaterial(cohesion=100.0, friction_coefficient=0.6, shear_displacement=0.0).as_array()
    w = np.array([[0.05, 0.01], [0.01, 0.2]])
    dt, area, pn = 1e-3, 0.01, 1000.0
    full = dt * area * (100.0 + 0.6 * pn)
    cases = np.array([[0, 0, 1.0, -0.5, *w.ravel(), 0.0, area, dt, pn],
                      [0, 0, 1e-5, 2e-5, *w.ravel(), 0.0, area, dt, pn]])
    out = _run_shear(cases, np.tile(mat, (2, 1)))
    lam = out[0, :2]
    assert np.linalg.norm(lam) == pytest.approx(full, rel=1e-12)
    v_end = cases[0, 2:4] + w @ lam
    assert 1.0 + lam.dot(v_end) / (np.linalg.norm(lam) * np.linalg.norm(v_end)) < 1e-9
    np.testing.assert_allclose(out[1, :2], -np.linalg.solve(w, cases[1, 2:4]), rtol=1e-12)
    assert np.linalg.norm(cases[1, 2:4] + w @ out[1, :2]) < 1e-18
    assert out[1, 2] == pytest.approx(0.0, abs=1e-18)


def test_shear_cohesion_resists_without_friction():
    """Reference: spec "With frictionCoefficient = 0, nonzero cohesion can still resist slip while loaded"."""
    w = np.array([[0.05, 0.0], [0.0, 0.05]])
    dt, area = 1e-3, 0.01
    cases = np.array([[0, 0, 1.0, 0.0, *w.ravel(), 0.0, area, dt, 500.0]] * 2)
    mats = np.tile(SoilMaterial(cohesion=100.0, friction_coefficient=0.0).as_array(), (2, 1))
    mats[1, 7] = 0.0
    out = _run_shear(cases, mats)
    assert out[1, 0] == pytest.approx(-dt * area * 100.0, rel=1e-12)  # fully mobilised: dt A c
    assert out[0, 0] < 0.0 and out[0, 1] == 0.0
    je = out[0, 2]
    assert -out[0, 0] == pytest.approx(dt * area * 100.0 * (1.0 - math.exp(-je / 0.01)), rel=1e-10)


def test_shear_sticks_within_mobilised_strength():
    """Reference: solver_math "Soil row" with Kj > 0 as the g -> 0 limit of the implicit law: after slip has
    mobilised strength S(j), a tangential demand whose stopping impulse is below S(j) is held without slip."""
    mat = SoilMaterial(cohesion=0.0, friction_coefficient=0.6, shear_displacement=0.01).as_array()
    w = np.array([[0.05, 0.01], [0.01, 0.2]])
    dt, area, pn, j = 1e-3, 0.01, 1000.0, 0.03
    vf = np.array([1e-5, -2e-5])
    out = _run_shear(np.array([[0, 0, *vf, *w.ravel(), j, area, dt, pn]]), mat[None, :])[0]
    np.testing.assert_allclose(out[:2], -np.linalg.solve(w, vf), rtol=1e-12)
    assert out[2] == pytest.approx(j, rel=1e-14)
    # the same demand on fresh soil (j = 0) cannot stick: it slips and builds traction
    out = _run_shear(np.array([[0, 0, *vf, *w.ravel(), 0.0, area, dt, pn]]), mat[None, :])[0]
    assert out[2] > 0.0 and np.linalg.norm(vf + w @ out[:2]) > 0.0


def _traction_cases(rng, n):
    """Soil points with random Delassus blocks, impulses, velocities and soil histories: loaded, sticking or
    slipping. Every third point has slip accumulated, a small tangential impulse and velocity and no coupling
    between its normal and tangential velocities, so that it sticks; of the others, half have slip
    accumulated."""
    cases = []
    for k in range(n):
        a = rng.normal(size=(3, 3))
        w = (a @ a.T + 0.1 * np.eye(3)) * 10.0 ** rng.uniform(-3, -1)
        old = np.array([rng.uniform(0.0, 2.0), *rng.normal(size=2) * 0.2])
        vloc = np.array([rng.uniform(-0.5, 0.1), *(rng.normal(size=2) * 10.0 ** rng.uniform(-4, 0))])
        j = 0.0 if k % 2 == 0 else rng.uniform(0.0, 0.05)
        if k % 3 == 2:
            w[0, 1:] = w[1:, 0] = 0.0
            old[1:] *= 0.01
            vloc[1:] *= 1e-4
            j = rng.uniform(0.01, 0.05)
        cases.append([*w.ravel(), *old, *vloc, rng.uniform(0.0, 0.05), rng.uniform(-0.01, 0.01), j,
                      rng.uniform(1e-4, 1e-3), rng.uniform(0.1, 0.5), 1e-3, rng.choice([0.5, 1.0]),
                      1.0 / w[1, 1], 1e-7])
    return np.array(cases)


def test_soil_traction_holds_the_row_update_at_its_fixed_point(rng):
    """Reference: solver_math "Soil row": the impulse a row's update solves for satisfies the normal and shear
    laws at the velocity the point ends the step with. ``soil_traction`` at that end velocity, anchored at
    the row's shear impulse, returns the same impulse (the soil block's fixed point is the sweep's): to the
    row's Newton tolerance (1e-12 relative in f64; 1e-9 of the largest entry asserted), for loaded, sticking and
    slipping points."""
    mat = SoilMaterial(bekker_kphi=2e6, elastic_stiffness=2e7, damping=4e4, sinkage_exponent=1.1, cohesion=100.0,
                       friction_coefficient=0.6, shear_displacement=0.02)
    cases = _traction_cases(rng, 300)
    out = np.zeros((len(cases), 27))
    _traction_kernel(np.ascontiguousarray(cases), np.tile(mat.as_array(), (len(cases), 1)), out)
    new, lam = out[:, 0:3], out[:, 6:9]
    scale = np.abs(new).max(axis=1, keepdims=True) + 1e-300
    assert np.all(np.abs(lam - new) <= 1e-9 * scale)
    loaded = new[:, 0] > 0.0
    v_t = np.linalg.norm(out[:, 4:6], axis=1)
    assert loaded.sum() > 100 and (loaded & (v_t < 1e-12)).sum() > 5 and (loaded & (v_t > 1e-6)).sum() > 50


def test_soil_traction_slope_is_its_derivative(rng):
    """Reference: the derivative's definition: ``k = -d lam / d v`` equals the central difference of the
    impulse over +-1e-7 m/s wherever the laws are smooth there (points slipping by 1 mm/s or more, away from
    the rut floor, the elastic-plastic switch and the disc's edge: the difference's error, of order h^2 times
    the third derivative, is then below 1e-8 of the entries), to 1e-5 of the largest entry."""
    mat = SoilMaterial(bekker_kphi=2e6, elastic_stiffness=2e7, damping=4e4, sinkage_exponent=1.1, cohesion=100.0,
                       friction_coefficient=0.6, shear_displacement=0.02)
    cases = _traction_cases(rng, 300)
    cases[:, 9:12] = 0.0  # (a cold row: its anchor then follows the row's own shear impulse)
    out = np.zeros((len(cases), 27))
    _traction_kernel(np.ascontiguousarray(cases), np.tile(mat.as_array(), (len(cases), 1)), out)
    k, fd = out[:, 9:18], out[:, 18:27]
    checked = 0
    for row_k, row_fd, c, o in zip(k, fd, cases, out):
        kappa, v_end, lam = c[22], o[3:6], o[6:9]
        trial = lam[1:] - kappa * v_end[1:]
        strength_edge = abs(np.linalg.norm(trial) - np.linalg.norm(lam[1:]))
        if lam[0] <= 0.0 or np.linalg.norm(v_end[1:]) < 1e-3 or strength_edge < 1e-6 * np.linalg.norm(lam[1:]):
            continue
        size = np.abs(row_k).max()
        np.testing.assert_allclose(row_k, row_fd, atol=1e-5 * size, rtol=0)
        checked += 1
    assert checked > 50
