"""Granular media by resistive force theory (RFT): media (:mod:`.media`), plates (:mod:`.plates`) and what the world
does with them (:mod:`.builder`). The force law is in ``kernels/rft/law.py``."""
from .media import COEFFICIENTS, LI_2013, NORMALIZATIONS, POPPY_CLOSE, POPPY_LOOSE, GranularMedium, li_alphas
from .plates import PlateSet

__all__ = ["GranularMedium", "PlateSet", "LI_2013", "POPPY_LOOSE", "POPPY_CLOSE", "COEFFICIENTS", "NORMALIZATIONS",
           "li_alphas"]
