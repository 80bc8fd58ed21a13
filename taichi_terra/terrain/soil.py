"""Soil material of a deformable bed (spec ``deformable_terrain.md``: "Material parameters", "Defaults and valid
values"). All values are SI: metres, seconds, pascals (N/m^2).

The normal pressure at total sinkage ``s`` [m], permanent sinkage ``s_p`` [m] and footprint width ``b`` [m] is
``p = max(0, min(Ke (s - s_p), (kc/b + kphi) s^n))``; loading adds ``D max(ds/dt, 0)``. The shear strength is
``(c + mu p_n)(1 - exp(-j / Kj))`` for accumulated loaded slip ``j`` [m].
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields

import numpy as np

from ..kernels.common.arrays import SOIL_MATERIAL

#: Field names in the order of :meth:`SoilMaterial.as_array` (the order kernels read the material vector in).
SOIL_FIELDS = tuple(SOIL_MATERIAL.columns)

# Rule of each field: "nonnegative" (>= 0) or "positive" (> 0); every field must also be finite.
_RULES = {
    "bekker_kc": "nonnegative",
    "bekker_kphi": "nonnegative",
    "sinkage_exponent": "positive",
    "elastic_stiffness": "positive",
    "damping": "nonnegative",
    "cohesion": "nonnegative",
    "friction_coefficient": "nonnegative",
    "shear_displacement": "nonnegative",
}


@dataclass(frozen=True)
class SoilMaterial:
    """Soil response of a whole bed. Immutable; validated at construction.

    Attributes:
        bekker_kc: width-dependent Bekker coefficient ``kc`` [Pa m^(1-n)], finite, >= 0. A normal-pressure
            coefficient (contributes ``kc/b``), not the shear cohesion.
        bekker_kphi: width-independent Bekker coefficient ``kphi`` [Pa/m^n], finite, >= 0. At least one of
            ``bekker_kc`` and ``bekker_kphi`` must be > 0.
        sinkage_exponent: Bekker exponent ``n`` [-], finite, > 0.
        elastic_stiffness: unloading/reloading slope ``Ke`` [Pa/m], finite, > 0 (a foundation stiffness per area).
        damping: loading-only viscosity ``D`` [Pa s/m], finite, >= 0; 0 disables viscosity.
        cohesion: shear-strength intercept ``c`` [Pa], finite, >= 0.
        friction_coefficient: shear-strength slope ``mu = tan(phi)`` [-], finite, >= 0.
        shear_displacement: Janosi-Hanamoto slip scale ``Kj`` [m], finite, >= 0; 0 mobilises the full strength at
            once (Coulomb friction with cohesion).

    Raises:
        TypeError: a value is not a real number (bools are rejected).
        ValueError: a value breaks its rule; the message names the field and the rule.
    """

    bekker_kc: float = 0.0
    bekker_kphi: float = 2.0e5
    sinkage_exponent: float = 1.1
    elastic_stiffness: float = 2.0e6
    damping: float = 1000.0
    cohesion: float = 0.0
    friction_coefficient: float = 0.6
    shear_displacement: float = 0.01

    def __post_init__(self):
        for f in fields(self):
            name, value = f.name, getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
            v = float(value)
            if not math.isfinite(v):
                raise ValueError(f"{name} must be finite, got {value!r}")
            if _RULES[name] == "positive" and not v > 0.0:
                raise ValueError(f"{name} must be finite and strictly positive (> 0), got {value!r}")
            if _RULES[name] == "nonnegative" and not v >= 0.0:
                raise ValueError(f"{name} must be finite and nonnegative (>= 0), got {value!r}")
            object.__setattr__(self, name, v)
        if not (self.bekker_kc > 0.0 or self.bekker_kphi > 0.0):
            raise ValueError("at least one of bekker_kc and bekker_kphi must be positive (> 0), got "
                             f"bekker_kc={self.bekker_kc!r}, bekker_kphi={self.bekker_kphi!r}")

    def as_array(self) -> np.ndarray:
        """The 8 values as a float64 array in :data:`SOIL_FIELDS` order (the kernels' material vector)."""
        return np.array([getattr(self, name) for name in SOIL_FIELDS], dtype=np.float64)
