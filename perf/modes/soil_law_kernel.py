"""The contact-law microbenchmark's kernel (``python -m perf soil --contact-law``): 32 soil points solved by the
row function alone.

Each point has its own anisotropic Delassus block, load and slip speed; over the run its load and slip
speed change so that the points pass through fresh, partly and fully mobilized shear. After the run the
last visit of every point is checked: normal pressure against the law, shear within its strength,
traction opposite the end-of-step slip, and no power put into the body.
"""

import taichi as ti

from taichi_terra.kernels.soil.law import SoilPoint, soil_pressure, solve_soil_row

N_POINTS = 32


@ti.kernel
def contact_law_run(n_steps: ti.i32, warm: ti.i32, mat_arr: ti.types.ndarray(), out: ti.types.ndarray()):
    mat = mat_arr[0]
    dt = 1e-3
    area = 1.44e-4
    b = 0.4
    for i in range(N_POINTS):
        # a fixed anisotropic block per point (positive definite), 1/kg
        a = 0.05 + 0.01 * i
        wmat = ti.math.mat3([[a, 0.2 * a, 0.1 * a], [0.2 * a, 1.5 * a, 0.3 * a], [0.1 * a, 0.3 * a, 0.8 * a]])
        lam = ti.math.vec3(0.0, 0.0, 0.0)
        j = 0.0
        s_p = 0.0
        delta = 0.004 + 0.0002 * i
        residual = 0.0
        excess = 0.0
        align = 0.0
        power = -1.0
        fresh = 0
        partial = 0
        full = 0
        for k in range(n_steps):
            phase = 6.283185307179586 * (k % 997) / 997.0
            v_free = ti.math.vec3(-0.05 * (1.0 + ti.sin(phase + i)), 0.05 * (i % 7) * ti.cos(phase),
                                  0.001 * (i % 5))  # approach speed and slip changing over the run
            start = lam if warm != 0 else ti.math.vec3(0.0, 0.0, 0.0)
            lam = start
            for _ in range(3):  # a few sweeps of the isolated row
                vloc = v_free + wmat @ lam
                lam = solve_soil_row(wmat, lam, vloc, SoilPoint(delta=delta, s_p=s_p, j=j, area=area, b=b, rate=1.0),
                                     dt, mat)
            v_end = v_free + wmat @ lam
            w_e = -v_end[0]
            delta_e = delta + dt * w_e
            p = soil_pressure(delta_e, s_p, b, mat)
            if lam[0] > 0.0:
                pn = p + mat[4] * ti.max(w_e, 0.0)
                residual = ti.abs(lam[0] - dt * area * pn) / (dt * area * pn)
                strength = dt * area * (mat[5] + mat[6] * pn)
                lt = ti.math.vec2(lam[1], lam[2])
                vt = ti.math.vec2(v_end[1], v_end[2])
                excess = ti.max(0.0, lt.norm() - strength) / strength
                if lt.norm() > 0.0 and vt.norm() > 1e-12:
                    align = 1.0 + lt.dot(vt) / (lt.norm() * vt.norm())
                power = lt.dot(vt)
                ratio = lt.norm() / strength
                if ratio < 0.05:
                    fresh += 1
                elif ratio < 0.99:
                    partial += 1
                else:
                    full += 1
                j += dt * vt.norm()
                s_p = ti.max(s_p, delta_e - p / mat[3])
            else:
                j = 0.0
            delta = ti.max(delta_e, s_p) if k % 500 != 499 else s_p - 0.001  # unload now and then
        out[i, 0] = residual
        out[i, 1] = excess
        out[i, 2] = align
        out[i, 3] = power
        out[i, 4] = ti.cast(fresh > 0, ti.f64)
        out[i, 5] = ti.cast(partial > 0, ti.f64)
        out[i, 6] = ti.cast(full > 0, ti.f64)
