"""Granular media for resistive force theory (RFT): what a medium is and where it acts.

A :class:`GranularMedium` is sand with a surface (flat at a height, or a height map's surface) over a region of
the xy plane. A plate whose centroid lies in the region, below the surface, feels the medium's resistive force
(``kernels/rft/law.py``): ``zeta`` [N/cm^3] times Li 2013's generic stresses per unit depth (or another set of
nine Fourier coefficients), shaped by Treers' 3D scaling functions. Where regions overlap, the medium added first
acts. RFT forces are applied forces: they add to the rigid contacts of the body's collision shapes (a rigid ground
under the sand is the bottom of the sandbox), and soil beds (:class:`~taichi_terra.DeformableTerrain`) act through
their own contact rows, independently of any medium.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import as_float_array, check_finite, check_positive

#: Li, Zhang & Goldman 2013, generic coefficients (A00, A10, B11, B01, B-11, C11, C01, C-11, D10): the stresses
#: per unit depth of a plate, over zeta; az(0, pi/2) = 1 (a horizontal plate pushed straight down)
LI_2013 = (0.206, 0.169, 0.212, 0.358, 0.055, -0.124, 0.253, 0.007, 0.088)
#: Li 2013's sets for loosely and closely packed poppy seeds (as published in N/cm^3: use them with zeta = 1)
POPPY_LOOSE = (0.051, 0.047, 0.053, 0.083, 0.020, -0.026, 0.057, 0.0, 0.025)
POPPY_CLOSE = (0.094, 0.092, 0.092, 0.151, 0.035, -0.039, 0.086, 0.018, 0.046)
COEFFICIENTS = {"li2013": LI_2013, "poppy_loose": POPPY_LOOSE, "poppy_close": POPPY_CLOSE}
#: how Treers' scaling functions f1, f23 are normalized: "unit" (f(1) = 1, Treers' code) or "rftsim" (the
#: constants RFT-SiM's code divides by: f1(1) = 2.030, f23(1) = 1.348; its published runs used them)
NORMALIZATIONS = ("unit", "rftsim")


def li_alphas(beta, gamma, coefficients=LI_2013):
    """Li 2013's generic stresses per unit depth ``(alpha_x, alpha_z)`` (dimensionless; times zeta in N/cm^3) at
    the plate angle ``beta`` and intrusion angle ``gamma`` [rad] (numpy; the kernels have their own)."""
    a00, a10, b11, b01, bm11, c11, c01, cm11, d10 = coefficients
    beta, gamma = np.asarray(beta, np.float64), np.asarray(gamma, np.float64)
    az = (a00 + a10 * np.cos(2 * beta) + b11 * np.sin(2 * beta + gamma) + b01 * np.sin(gamma)
          + bm11 * np.sin(-2 * beta + gamma))
    ax = c11 * np.cos(2 * beta + gamma) + c01 * np.cos(gamma) + cm11 * np.cos(-2 * beta + gamma) + d10 * np.sin(2 * beta)
    return ax, az


@dataclass(frozen=True)
class GranularMedium:
    """Sand acting on plates (see the module docstring). Made by :meth:`taichi_terra.World.add_granular_medium`.

    Attributes:
        index: its index in the world, in the order media were added (the first one acts where regions overlap).
        height: the flat surface's height [m], or ``None`` for a height-map surface.
        heightmap: the :class:`~taichi_terra.HeightMap` whose surface is the sand's (depth measured vertically in
            the map's frame), or ``None``.
        coefficients: the nine Li coefficients (A00, A10, B11, B01, B-11, C11, C01, C-11, D10).
        zeta: the medium's vertical penetration stress per unit depth of a horizontal plate [N/cm^3] (RFT-SiM's
            play sand: 3.75, i.e. 3.75e6 N/m^3).
        normalization: "unit" or "rftsim" (see :data:`NORMALIZATIONS`).
        smoothing: RFT-SiM's exponential moving average of each plate's force, ``F <- a F_new + (1 - a) F_old``
            with ``a = smoothing`` in (0, 1]; 1 is no smoothing.
        region: ``(x_min, x_max, y_min, y_max)`` [m] where the medium acts (infinite by default).
        mode: ``"force"``: each plate's force, for its velocity at the start of the step, is applied as a force
            (RFT-SiM's scheme: a body at rest feels nothing, so it chatters and creeps). ``"row"``: the summed
            resistance of a body's (or link's) plates bounds a row of the sweep that either stops the body, when
            the sand's work over the step along its motion covers its kinetic measure, or applies that resistance
            (like Coulomb friction sticking or sliding; ``kernels/solver/sand.py``); a plate slower than
            gravity's velocity change over a step is taken as moving the way gravity would start it. A foot
            standing in sand then holds still; a moving one feels RFT's force.
    """

    index: int
    height: float | None
    heightmap: object | None
    coefficients: tuple
    zeta: float
    normalization: str
    smoothing: float
    region: tuple
    mode: str = "force"

    def stress_per_depth(self, beta, gamma) -> tuple:
        """``(alpha_x, alpha_z)`` [N/m^3]: zeta times Li's stresses per unit depth at (beta, gamma) [rad]."""
        ax, az = li_alphas(beta, gamma, self.coefficients)
        return self.zeta * 1e6 * ax, self.zeta * 1e6 * az


#: how a medium's resistance enters the step (see :class:`GranularMedium`)
MODES = ("force", "row")


def parse_coefficients(coefficients) -> tuple:
    """Li's nine coefficients from a name of :data:`COEFFICIENTS` or nine finite numbers."""
    if isinstance(coefficients, str):
        if coefficients not in COEFFICIENTS:
            raise ValueError(f"coefficients must be one of {sorted(COEFFICIENTS)} or nine numbers, got "
                             f"{coefficients!r}")
        return COEFFICIENTS[coefficients]
    arr = as_float_array("coefficients", coefficients)
    if arr.shape != (9,) or not np.isfinite(arr).all():
        raise ValueError(f"coefficients must be nine finite numbers (A00, A10, B11, B01, B-11, C11, C01, C-11, "
                         f"D10), got shape {arr.shape}")
    return tuple(float(x) for x in arr)


def make_medium(index, surface, coefficients, zeta, normalization, smoothing, region, mode="force") -> GranularMedium:
    """Check :meth:`World.add_granular_medium`'s arguments (each error names the argument and the rule)."""
    from ..terrain.heightmap import HeightMap

    height, heightmap = None, None
    if isinstance(surface, HeightMap):
        if surface.is_soil:
            raise ValueError("surface: a soil bed is not a granular surface (its soil acts through its own rows); "
                             "give a height, or a plain height map")
        heightmap = surface
    elif isinstance(surface, (int, float, np.floating, np.integer)) and not isinstance(surface, bool):
        height = check_finite("surface", float(surface))
    else:
        raise TypeError(f"surface must be a height [m] or a HeightMap, got {type(surface).__name__}")
    coeffs = parse_coefficients(coefficients)
    zeta = check_positive("zeta", zeta)
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {normalization!r}")
    a = check_finite("smoothing", smoothing)
    if not 0.0 < a <= 1.0:
        raise ValueError(f"smoothing must be in (0, 1] (1: none), got {smoothing!r}")
    if region is None:
        box = (-math.inf, math.inf, -math.inf, math.inf)
    else:
        arr = as_float_array("region", region)
        if arr.shape != (4,) or np.isnan(arr).any() or not (arr[0] < arr[1] and arr[2] < arr[3]):
            raise ValueError(f"region must be (x_min, x_max, y_min, y_max) with x_min < x_max and y_min < y_max, "
                             f"got {region!r}")
        box = tuple(float(x) for x in arr)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return GranularMedium(index, height, heightmap, coeffs, zeta, normalization, a, box, mode)
