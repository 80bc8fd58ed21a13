"""Pins: a four-bar linkage closed by a pin keeps its loop closed, a body hung from the world by a pin
swings with the compound pendulum's period, and bad pins are refused.

Every world here has two envs, so the step kernel variant with the tree stages is the one
test_articulated.py compiles."""
import math

import numpy as np
import pytest

import taichi_terra as tt

G = 9.81
CRANK, COUPLER, ROCKER, GROUND = 0.10, 0.25, 0.15, 0.22  # [m]: a Grashof crank-rocker (0.10 + 0.25 < 0.15 + 0.22)


def _rod(name: str, length: float, mass: float = 1.0) -> str:
    i = mass * length ** 2 / 12.0
    return (f'<link name="{name}"><inertial><origin xyz="{length / 2} 0 0"/><mass value="{mass}"/>'
            f'<inertia ixx="1e-5" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def _hinge(name: str, parent: str, child: str, x: float) -> str:
    # axis -y: a positive angle turns the child's x axis from +x towards +z (the linkage moves in the x-z plane)
    return (f'<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{x} 0 0"/><axis xyz="0 -1 0"/></joint>')


FOUR_BAR = ('<robot name="four_bar"><link name="ground"/>' + _rod("crank", CRANK) + _rod("coupler", COUPLER)
            + _rod("rocker", ROCKER) + _hinge("a", "ground", "crank", 0.0) + _hinge("b", "crank", "coupler", CRANK)
            + _hinge("c", "coupler", "rocker", COUPLER) + '</robot>')


def _closed_angles(crank_angle: float) -> np.ndarray:
    """Joint angles that close the loop for a crank angle [rad] (the elbow-up assembly): the coupler's end
    C is where the circles |C - B| = coupler and |C - D| = rocker meet, D = (GROUND, 0)."""
    b = CRANK * np.array([math.cos(crank_angle), math.sin(crank_angle)])
    d = np.array([GROUND, 0.0])
    bd = d - b
    dist = np.linalg.norm(bd)
    along = (COUPLER ** 2 - ROCKER ** 2 + dist ** 2) / (2.0 * dist)
    c = b + along * bd / dist + math.sqrt(COUPLER ** 2 - along ** 2) * np.array([-bd[1], bd[0]]) / dist
    a2 = math.atan2(*(c - b)[::-1])
    a3 = math.atan2(*(d - c)[::-1])
    return np.array([crank_angle, a2 - crank_angle, a3 - a2])


def _four_bar(n_envs=2, dt=1e-3):
    world = tt.World(dt=dt, n_envs=n_envs)
    system = world.add_articulated_system(FOUR_BAR, base="fixed")
    pin = world.add_pin(system, "rocker", (ROCKER, 0.0, 0.0), None, None, (GROUND, 0.0, 0.0))
    return world, system, pin


def _energy(system, env=0) -> float:
    """Kinetic plus potential energy [J] of the three rods (each 1 kg, centre of mass at its middle)."""
    u = system.get_generalized_velocity(env)
    kinetic = 0.5 * u @ system.get_mass_matrix(env) @ u
    potential = 0.0
    for name, length in (("crank", CRANK), ("coupler", COUPLER), ("rocker", ROCKER)):
        com = system.get_frame_position(name, env) + system.get_frame_orientation(name, env) @ [length / 2, 0, 0]
        potential += 1.0 * G * com[2]
    return kinetic + potential


def test_four_bar_closed_by_a_pin_stays_closed():
    """Reference: the loop-closure constraint itself. Released from rest at two crank angles, the linkage
    swings under gravity for 10 s; the pin's gap stays below 1e-6 m (the position correction closes the
    O(dt^2) gap the velocity update leaves) while the crank sweeps more than a radian, and the pin carries
    the load."""
    world, system, pin = _four_bar()
    system.set_generalized_coordinate(np.stack([_closed_angles(math.radians(60.0)),
                                                _closed_angles(math.radians(150.0))]))
    assert np.all(pin.get_gap() < 1e-12)
    worst = 0.0
    lo, hi = np.full(2, np.inf), np.full(2, -np.inf)
    for _ in range(100):
        world.step(100)
        worst = max(worst, float(pin.get_gap().max()))
        crank = system.get_generalized_coordinate()[:, 0]
        lo, hi = np.minimum(lo, crank), np.maximum(hi, crank)
    assert worst < 1e-6, worst
    assert np.all(hi - lo > 1.0), (lo, hi)
    assert np.all(np.linalg.norm(pin.get_force(), axis=1) > 0.5)  # the rocker's end is held against gravity


def test_four_bar_energy_loss_is_first_order_in_the_step():
    """Reference: conservation of energy in the frictionless linkage, approached as dt -> 0. Each step
    solves the pin at the velocity level in the configuration at its start; moving along the links' arcs
    turns part of the velocity normal to the constraint, which the next step removes: a loss of first order
    in dt (measured: 14 % of the energy in 2 s at dt = 1e-3, 8 % at 5e-4, 4 % at 2.5e-4). Halving the step
    must nearly halve the loss (ratio 1.6 to 2.2), and the loss must stay below 10 % at dt = 5e-4."""
    losses = []
    for dt in (1e-3, 5e-4):
        world, system, pin = _four_bar(dt=dt)
        system.set_generalized_coordinate(np.stack([_closed_angles(math.radians(60.0)),
                                                    _closed_angles(math.radians(150.0))]))
        e0 = np.array([_energy(system, env) for env in range(2)])
        world.step(int(round(2.0 / dt)))
        e1 = np.array([_energy(system, env) for env in range(2)])
        assert np.all(e1 < e0)  # the scheme never gains energy here
        losses.append((e0 - e1) / e0)
    ratio = losses[0] / losses[1]
    assert np.all((ratio > 1.6) & (ratio < 2.2)), (losses, ratio)
    assert np.all(losses[1] < 0.10), losses


def test_a_body_hung_by_a_pin_swings_with_the_compound_pendulum_period():
    """Reference: the compound pendulum, T = 2 pi sqrt(I_p / (m g d)) for small angles, with I_p the
    inertia about the pivot and d the pivot's distance from the centre of mass. A floating 1 kg rod of
    length 0.4 m hangs from a world point by a pin at its top end; released 0.05 rad from the vertical, its
    half periods (zero crossings of its tilt) are measured over three swings. The small-angle period differs
    from the exact one by (1/16) theta0^2 = 1.6e-4 relative; the integrator's phase error at dt = 1e-3 is
    smaller; we allow 0.5 %."""
    length, mass = 0.4, 1.0
    i_com = mass * length ** 2 / 12.0
    rod = (f'<robot name="rod"><link name="rod"><inertial><origin xyz="0 0 {-length / 2}"/><mass value="{mass}"/>'
           f'<inertia ixx="{i_com}" iyy="{i_com}" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')
    world = tt.World(dt=1e-3, n_envs=2)
    system = world.add_articulated_system(rod, base="floating", position=(0.0, 0.0, 1.0))
    pin = world.add_pin(system, "rod", (0.0, 0.0, 0.0), None, None, (0.0, 0.0, 1.0))
    theta0 = 0.05
    q = system.get_generalized_coordinate()
    q[:, 3:7] = [math.cos(theta0 / 2), 0.0, math.sin(theta0 / 2), 0.0]  # tilted about y, top end at the pivot
    system.set_generalized_coordinate(q)
    d = length / 2
    expected = 2.0 * math.pi * math.sqrt((i_com + mass * d * d) / (mass * G * d))
    crossings = []
    prev = None
    for k in range(int(3.2 * expected / 1e-3)):
        world.step(1)
        rot = system.get_frame_orientation("rod", 0)
        tilt = rot[0, 2]  # x component of the rod's z axis: sin(theta) about y
        if prev is not None and prev * tilt < 0.0:
            crossings.append((k + 1) * 1e-3 - 1e-3 * tilt / (tilt - prev))
        prev = tilt
    assert len(crossings) >= 5
    period = 2.0 * np.mean(np.diff(crossings))
    assert abs(period - expected) < 5e-3 * expected, (period, expected)
    assert float(pin.get_gap().max()) < 1e-6
    # the pin holds the rod's weight (plus the small centripetal part)
    force = pin.get_force(0)
    assert abs(force[2] - (-mass * G)) < 0.05 * mass * G or abs(force[2] - mass * G) < 0.05 * mass * G, force


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(link_a="nope"), ValueError, "link_a must be one of"),
    (dict(point_a=(0.0, 0.0)), ValueError, "point_a must be 3 finite numbers"),
    (dict(point_b=(0.0, float("nan"), 0.0)), ValueError, "point_b must be 3 finite numbers"),
    (dict(system_a="x"), ValueError, "system_a must be an articulated system"),
    (dict(link_b="crank"), ValueError, "link_b must be None when system_b is None"),
    (dict(system_b="same", link_b="rocker"), ValueError, "two different links"),
    (dict(system_b="same", link_b="nope"), ValueError, "link_b must be one of"),
])
def test_bad_pins_raise_and_add_nothing(kwargs, error, match):
    world = tt.World(dt=1e-3, n_envs=2)
    system = world.add_articulated_system(FOUR_BAR, base="fixed")
    args = dict(system_a=system, link_a="rocker", point_a=(ROCKER, 0.0, 0.0), system_b=None, link_b=None,
                point_b=(GROUND, 0.0, 0.0))
    args.update(kwargs)
    if args["system_b"] == "same":
        args["system_b"] = system
    with pytest.raises(error, match=match):
        world.add_pin(**args)
    assert world.pins == []
    other = tt.World(dt=1e-3, n_envs=2)
    with pytest.raises(ValueError, match="system_a must be an articulated system of this world"):
        other.add_pin(system, "rocker", (0.0, 0.0, 0.0))


BALL = 0.03  # [m]: the ball on the coupler's middle that rests on the soil bed


def _four_bar_on_soil():
    """The crank-rocker with a ball on its coupler's middle over a soil bed 1 mm below it, Coulomb friction in
    the crank-coupler hinge, the rocker's end pinned to the world: its soil rows push a link of a closed loop
    and its friction row a dof of it (what the pin blocks hold, solver/pin_block.py)."""
    coupler = _rod("coupler", COUPLER).replace(
        "</link>", f'<collision><origin xyz="{COUPLER / 2} 0 0"/><geometry><sphere radius="{BALL}"/></geometry>'
                   '</collision></link>')
    hinge_b = _hinge("b", "crank", "coupler", CRANK).replace("</joint>", '<dynamics friction="0.02"/></joint>')
    urdf = ('<robot name="four_bar"><link name="ground"/>' + _rod("crank", CRANK) + coupler + _rod("rocker", ROCKER)
            + _hinge("a", "ground", "crank", 0.0) + hinge_b + _hinge("c", "coupler", "rocker", COUPLER) + '</robot>')
    world = tt.World(dt=1e-3, n_envs=2)
    system = world.add_articulated_system(urdf, base="fixed")
    pin = world.add_pin(system, "rocker", (ROCKER, 0.0, 0.0), None, None, (GROUND, 0.0, 0.0))
    q = _closed_angles(math.radians(60.0))
    a1, a2 = q[0], q[0] + q[1]  # the ball's centre in the x-z plane
    x = CRANK * math.cos(a1) + 0.5 * COUPLER * math.cos(a2)
    z = CRANK * math.sin(a1) + 0.5 * COUPLER * math.sin(a2)
    n = 21
    world.add_deformable_terrain(n, n, 0.4, 0.4, x, 0.0, np.full(n * n, z - BALL - 1e-3),
                                 tt.SoilMaterial(bekker_kphi=2e6, sinkage_exponent=1.0, damping=1e3))
    system.set_generalized_coordinate(np.stack([q, q]))
    return world, system, pin


def test_pin_blocks_reach_the_state_of_pins_swept_one_by_one():
    """Reference: the fixed point of the sweeps. Solving a tree's pins together and pushing it with its pins
    held (``SolverConfig.pin_block``) changes how the sweeps reach that point, not the point: the four-bar
    falling onto soil (its ball pressing into the bed and its friction row sliding), taken two steps from the
    same state at 40 ms and 150 ms with and without pin blocks, both swept to 1e-12 m/s, must give the same
    velocities and the same pin impulse (the pin's reaction to the soil and friction rows, which the held
    columns give, included) to 1e-10 (the stopping rule leaves a few tolerances at most; measured 1e-15), in
    fewer sweeps."""
    world, system, pin = _four_bar_on_soil()
    world.solver.tolerance, world.solver.max_sweeps = 1e-12, 20000
    for steps in (40, 110):
        world.step(steps)
        start = world.checkpoint()
        assert world.get_contacts(0).impulses.shape[0] > 0  # (the ball is on the bed)
        out = {}
        for block in (True, False):
            world.restore(start)
            world.solver.pin_block = block
            sweeps = 0
            for _ in range(2):
                world.step()
                sweeps += int(world.get_solver_sweeps(0))
            out[block] = (system.get_generalized_velocity(), pin.get_impulse(), sweeps)
        world.restore(start)
        world.solver.pin_block = True
        (u_on, imp_on, sweeps_on), (u_off, imp_off, sweeps_off) = out[True], out[False]
        assert np.abs(u_on).max() > 0.05  # (it is moving: the friction row slides)
        np.testing.assert_allclose(u_on, u_off, rtol=0.0, atol=1e-10)
        np.testing.assert_allclose(imp_on, imp_off, rtol=0.0, atol=1e-10)
        assert sweeps_on < sweeps_off
