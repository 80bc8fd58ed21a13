"""Named materials and the friction / restitution of each material pair."""
from __future__ import annotations


from .validation import check_finite

DEFAULT_MATERIAL = "default"


class MaterialTable:
    """Known material names and pair properties; unset pairs use the default friction and restitution."""

    def __init__(self, friction: float = 0.8, restitution: float = 0.0):
        self._names = [DEFAULT_MATERIAL]
        self._default = self._check(friction, restitution)
        self._pairs: dict[tuple[int, int], tuple[float, float]] = {}

    @staticmethod
    def _check(friction, restitution):
        mu = check_finite("friction", friction)
        e = check_finite("restitution", restitution)
        if mu < 0.0:
            raise ValueError(f"friction must be >= 0, got {friction!r}")
        if not 0.0 <= e <= 1.0:
            raise ValueError(f"restitution must be in [0, 1], got {restitution!r}")
        return mu, e

    @property
    def names(self) -> list[str]:
        return list(self._names)

    def add(self, name: str) -> int:
        """Declare a material name (idempotent) and return its index."""
        if not isinstance(name, str):
            raise TypeError(f"material must be a str, got {type(name).__name__}")
        if not name:
            raise ValueError("material must be a non-empty name")
        if name not in self._names:
            self._names.append(name)
        return self._names.index(name)

    def index(self, name: str, argument: str = "material") -> int:
        if not isinstance(name, str):
            raise TypeError(f"{argument} must be a str, got {type(name).__name__}")
        if name not in self._names:
            raise ValueError(f"{argument}: unknown material {name!r}; known: {self._names} "
                             "(declare it with world.add_material or world.set_material_pair_prop)")
        return self._names.index(name)

    def set_pair(self, a: str, b: str, friction: float, restitution: float) -> None:
        if not isinstance(a, str) or not isinstance(b, str):
            raise TypeError("material names must be str")
        if not a or not b:
            raise ValueError("material names must be non-empty")
        props = self._check(friction, restitution)
        ia, ib = self.add(a), self.add(b)
        self._pairs[(min(ia, ib), max(ia, ib))] = props

    def set_default(self, friction: float, restitution: float) -> None:
        self._default = self._check(friction, restitution)

    def lookup(self, ia: int, ib: int) -> tuple[float, float]:
        """(friction, restitution) of a pair of material indices."""
        return self._pairs.get((min(ia, ib), max(ia, ib)), self._default)


