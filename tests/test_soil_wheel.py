"""Wheels and plates on a soil bed: a cylinder's footprint weights, the slip's onset under a moving edge, a sample
under two bodies, a rigid wheel's sinkage and a driven wheel's drawbar pull against closed forms.

The bed is the soil specification's vehicle bed (``kphi = 2e6``, ``n = 1.1``, ``Ke = 2e7``, ``D = 4e4``,
``c = 100``, other fields at their defaults: ``mu = 0.6``, ``Kj = 0.01 m``) and the wheel the buggy's rear
wheel (radius 0.3611 m, contact width 0.1562 m)."""
import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

import taichi_terra as tt

G = 9.81
R, WIDTH = 0.3611, 0.1562
KPHI, N, KE, DAMPING, COHESION, MU, KJ = 2.0e6, 1.1, 2.0e7, 4.0e4, 100.0, 0.6, 0.01
AXLE_Y = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # the cylinder's axis along world y


def spec_bed(world, length, width, spacing, x_centre=0.0):
    nx, ny = round(length / spacing) + 1, round(width / spacing) + 1
    soil = tt.SoilMaterial(bekker_kphi=KPHI, sinkage_exponent=N, elastic_stiffness=KE, damping=DAMPING,
                           cohesion=COHESION)
    return world.add_deformable_terrain(nx, ny, (nx - 1) * spacing, (ny - 1) * spacing, x_centre, 0.0,
                                        np.zeros(nx * ny), soil)


def yaw(deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def test_rigid_wheel_rests_at_the_sinkage_of_the_pressure_law_over_its_chord():
    """Reference: the pressure law integrated over the chord. A rigid wheel lowered slowly onto the bed loads
    every sample along the Bekker envelope, so at rest ``m g = w integral kphi delta(x)^n dx`` with
    ``delta(x) = s - (R - sqrt(R^2 - x^2))`` over ``|x| <= sqrt(R^2 - (R - s)^2)``. At 1 cm spacing the wheel rests
    within 1 % of that root (the sum over samples alone differs from the integral by 0.03 %; the rest is the
    lowering's small overshoot onto the stiff elastic branch). Its footprint weights each sample by the part of
    its cell the tread covers, so the sinkage is the same, to 1e-6, wherever the wheel stands across the sample
    columns (without the weights a 0.156 m tread covers 15 or 16 columns of 1 cm: a jump of 6 % in area), and
    within 0.1 % when it is turned 30 degrees on the bed (the samples then cut its chord elsewhere: the sum
    over them moves by a few 0.01 %)."""
    mass, spacing, dt, ramp = 224.0, 0.01, 2e-3, 1.5

    def load(s):
        x1 = math.sqrt(R * R - (R - s) ** 2)
        return WIDTH * quad(lambda x: KPHI * max(s - (R - math.sqrt(R * R - x * x)), 0.0) ** N, -x1, x1,
                            limit=200)[0]

    expected = brentq(lambda s: load(s) - mass * G, 1e-5, 0.2)
    cases = [(0.0, 0.0), (0.5 * spacing, 0.0), (0.21 * spacing, 30.0)]  # (offset across the columns, yaw [deg])
    world = tt.World(dt=dt, n_envs=len(cases))
    spec_bed(world, 0.8, 0.6, spacing)
    wheel = world.add_cylinder(R, WIDTH, mass)
    for e, (dy, angle) in enumerate(cases):
        wheel.set_orientation(yaw(angle) @ AXLE_Y, env=e)
        wheel.set_position([0.0013, dy, R], env=e)
    for k in range(1000):  # the load ramped in smoothly over 1.5 s, then 0.5 s at rest
        lift = 0.5 * (1.0 + math.cos(math.pi * min(1.0, k * dt / ramp))) * mass * G
        wheel.set_external_force(np.tile([0.0, 0.0, lift], (len(cases), 1)))
        world.step()
    sinkage = R - wheel.get_position()[:, 2]
    assert sinkage[0] == pytest.approx(expected, rel=0.01)
    assert sinkage[1] == pytest.approx(sinkage[0], rel=1e-6)
    assert sinkage[2] == pytest.approx(sinkage[0], rel=1e-3)


def test_a_spinning_wheel_keeps_its_footprint():
    """Reference: the footprint's geometry. A wheel spun at 1.1 rad/s while it rolls on 2 cm samples keeps all 144
    of its soil points step after step. Its axle tilts by about 4e-12 rad from the contacts' torques, and a
    convex-hull wrapping of its rims' nearly collinear projected points once lost the whole footprint in the
    third step (no contact at all: the wheel fell through the bed); the hull is now built directly."""
    world = tt.World(dt=2e-3)
    spec_bed(world, 1.2, 0.3, 0.02)
    wheel = world.add_cylinder(R, WIDTH, 224.0)
    wheel.set_orientation(AXLE_Y)
    wheel.set_position([-0.35, 0.0013, R - 0.04])
    counts = []
    for _ in range(5):
        wheel.set_linear_velocity([0.2, 0.0, wheel.get_linear_velocity(0)[2]])
        wheel.set_angular_velocity([0.0, 0.2 / (0.5 * R), 0.0])
        world.step()
        counts.append(len(world.get_contacts(0).impulses))
    assert counts == [144] * 5


def test_sample_under_two_bodies_takes_both_loads_once():
    """Reference: the soil history's rule for a sample under several bodies (each loads the part of the sample's
    cell it covers; the sample keeps the deepest sinkage, plastic sinkage and slip of them all, read against the
    rut floor of the start of the step). Two equal plates stand side by side with a 2 mm gap in the middle of
    one column of cells, each covering 45 % of it: they sink alike, and that shared column is pressed exactly
    as deep, plastic and total, as the columns under either plate alone (to 1e-7 m of 5 mm: the partly covered
    column moves each plate's centre of pressure, tilting it by a few 1e-9 m across its width). Committing one
    plate's row after the other had moved the floor would press the shared column deeper at every loading
    step, by as much again as the floor moved."""
    spacing = 0.02
    world = tt.World(dt=1e-3)
    bed = spec_bed(world, 0.8, 0.6, spacing)
    plates = [world.add_box(0.2, 0.3, 0.02, 40.0) for _ in range(2)]
    for plate, x in zip(plates, (-0.101, 0.101)):  # edges at -0.001 and +0.001: inside the cell of x = 0
        plate.set_position([x, 0.01, 0.0101])
    world.step(1500)
    state = bed.get_soil_state(0)
    nx = round(0.8 / spacing) + 1
    plastic = state["plastic_sinkage"].reshape(-1, nx)
    sinkage = state["sinkage"].reshape(-1, nx)
    row = round(0.3 / spacing)  # y = 0, under both plates
    shared, left, right = nx // 2, nx // 2 - 3, nx // 2 + 3
    assert plastic[row, left] > 0.005
    assert plastic[row, shared] == pytest.approx(plastic[row, left], abs=1e-7)
    assert plastic[row, shared] == pytest.approx(plastic[row, right], abs=1e-7)
    assert sinkage[row, shared] == pytest.approx(sinkage[row, left], abs=1e-7)


def drawbar_closed_form(slip, sinkage, speed):
    """Drawbar pull and vertical load [N] of the wheel in the bed's own law: vertical pressure, horizontal shear.
    A soil point at ``x`` ahead of the axle (front edge ``x1``) is pressed on the envelope plus the loading
    viscosity (``D`` times the wheel's material velocity into the soil, ``omega R sin(theta)``) until the
    bottom, then unloads on the elastic branch; it has slid ``j(x) = integral_x^x1 |cos(theta)/(1 - i) - 1| dx'``
    (the wheel surface's horizontal speed against the ground, ``omega R cos(theta) - v``, over the time ``dx / v``),
    and its shear ``(c + mu p_n)(1 - exp(-j / Kj))`` pulls forward where the surface runs backward."""
    x1 = math.sqrt(R * R - (R - sinkage) ** 2)
    xs = np.linspace(-x1, x1, 200001)
    cos = np.sqrt(1.0 - (xs / R) ** 2)
    delta = sinkage - R * (1.0 - cos)
    envelope = KPHI * np.maximum(delta, 0.0) ** N
    floor = sinkage - KPHI * sinkage ** N / KE  # (the plastic sinkage the bottom leaves)
    pressure = np.where(xs >= 0.0, envelope + DAMPING * speed / (1.0 - slip) * xs / R,
                        np.maximum(KE * (delta - floor), 0.0))
    rate = cos / (1.0 - slip) - 1.0
    step = np.abs(rate)
    slid = np.concatenate([[0.0], np.cumsum(0.5 * (step[1:] + step[:-1]) * np.diff(xs))])
    j = slid[-1] - slid
    shear = np.sign(rate) * (COHESION + MU * pressure) * (1.0 - np.exp(-j / KJ))
    return WIDTH * np.trapezoid(shear, xs), WIDTH * np.trapezoid(pressure, xs)


def drawbar_run(slips, spacing=0.01, speed=0.2, dt=2e-3, steps=1100, window=0.05, solver=None):
    """A driven wheel at each slip (one env each) on a carriage: its forward speed and spin are set before every
    step, less the change the step itself made last time, so that the end-of-step speed and spin (which the
    soil sees) are the requested ones; its height is free. ``solver``: SolverConfig fields to set (a dict; None:
    the defaults). Returns per env the means over the last ``window`` metres of travel (whole cells) of (pull
    [N], vertical soil force [N], sinkage [m], end-of-step slip)."""
    n = len(slips)
    world = tt.World(dt=dt, n_envs=n)
    for name, value in (solver or {}).items():
        setattr(world.solver, name, value)
    spec_bed(world, 1.2, 0.3, spacing)
    wheel = world.add_cylinder(R, WIDTH, 224.0)
    for e in range(n):
        wheel.set_orientation(AXLE_Y, env=e)
        wheel.set_position([-0.35, 0.0013, R - 0.04], env=e)
    spin = speed / (R * (1.0 - np.asarray(slips)))
    change_v, change_w = np.zeros(n), np.zeros(n)
    start_v, start_w = np.full(n, speed), spin
    rows = []
    for k in range(steps):
        v = wheel.get_linear_velocity()
        w = wheel.get_angular_velocity()
        if k > 0:
            change_v, change_w = v[:, 0] - start_v, w[:, 1] - start_w
            forces = [world.get_contacts(e).impulses.sum(axis=0) / dt for e in range(n)]
            rows.append(np.array([[f[0] for f in forces], [f[2] for f in forces], R - wheel.get_position()[:, 2],
                                  1.0 - v[:, 0] / (w[:, 1] * R)]))
        start_v, start_w = speed - change_v, spin - change_w
        v[:, 0], v[:, 1] = start_v, 0.0
        w[:, :] = 0.0
        w[:, 1] = start_w
        wheel.set_linear_velocity(v)
        wheel.set_angular_velocity(w)
        world.step()
    last = round(window / (speed * dt))
    return np.mean(rows[-last:], axis=0)


def test_drawbar_pull_follows_the_janosi_integral_over_the_contact():
    """Reference: the Janosi-Hanamoto integral over the contact length (``drawbar_closed_form``) at the wheel's
    measured sinkage. A rigid driven wheel (224 kg) on 1 cm samples at 0.2 m/s: the pull rises with slip, is
    negative at zero slip (the curved contact slides forward over the soil: rolling resistance), and follows the
    integral at the measured slip within half a per cent of the weight (the sum over 1 cm samples of a contact
    0.2 m long, averaged over five cells of travel once the wheel has run 2 contact lengths; measured: 0.03 %
    from slip 0.1 on) plus the pull of 1e-4 of slip (the slip's spread over the steps averaged: near zero slip
    the pull changes by over 20 kN per unit slip, as the point where the tread's slide turns moves). The soil
    carries the weight (vertical force within 1e-3 of m g) and its vertical force matches the pressure integral
    within 0.5 % (the same sum over samples; measured 0.25 %)."""
    slips = [0.0, 0.1, 0.3, 0.5]
    pull, vertical, sinkage, measured_slip = drawbar_run(slips)
    weight = 224.0 * G
    np.testing.assert_allclose(measured_slip, slips, atol=1e-4)
    np.testing.assert_allclose(vertical, weight, rtol=1e-3)
    assert pull[0] < -0.2 * weight
    assert np.all(np.diff(pull) > 0.0)
    for i, s, f, fz in zip(measured_slip, sinkage, pull, vertical):
        expected, load = drawbar_closed_form(i, s, 0.2)
        sensitivity = abs(drawbar_closed_form(i + 1e-4, s, 0.2)[0] - expected)  # (the pull of 1e-4 of slip)
        assert f == pytest.approx(expected, abs=0.005 * weight + sensitivity)
        assert load == pytest.approx(fz, rel=0.005)
