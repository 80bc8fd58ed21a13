"""Deformable soil bed: a height map whose samples sink under bodies and keep ruts.

Per env and per sample the bed keeps the total sinkage ``s`` [m] (downward displacement of the surface),
the permanent (plastic) sinkage ``s_p`` [m] and the accumulated loaded slip ``j`` [m]. The current
surface is the undeformed surface lowered by ``s`` along the bed's local z. Bodies touch the bed through
one quadrature point per sample under their footprint (a vertical ray from the sample to the body), whose
force follows the soil's pressure and shear laws (``kernels/soil/law.py``), solved inside the contact sweep.

Each sample stands for the rectangle of half-spacings around it (``sample_areas``). A box or a cylinder loads
the part of that cell its footprint covers, through the covered part's centroid, so its quadrature area is
exact wherever it stands; a sphere, capsule or mesh loads the whole cell when the sample's ray hits it. A
sample's slip grows with the slip of its point, at half the rate while a footprint's edge advances over its
cell (``kernels/soil/law.py``, ``slip_rate``); a sample under two bodies keeps the larger of their sinkages,
plastic sinkages and slips. The point queries inherited from the height map
(``get_height``, ``get_normal``) read the undeformed surface; ``get_heights(env)`` gives the deformed one.
With no bodies in the world, ``step`` does not advance the bed.
"""
from __future__ import annotations

import numpy as np

from .heightmap import HeightMap
from ..validation import as_vector
from .soil import SOIL_FIELDS, SoilMaterial
from .soil_state import changed_rows

#: columns of the per-sample soil state array: total sinkage, plastic sinkage, slip, loaded in the last step
SOIL_S, SOIL_SP, SOIL_J, SOIL_LOADED = range(4)


class DeformableTerrain(HeightMap):
    """A soil bed. Create it with :meth:`taichi_terra.World.add_deformable_terrain`."""

    is_soil = True

    def __init__(self, terrain, index, grid, heights, material, per_env: bool = False):
        if not isinstance(material, SoilMaterial):
            raise TypeError(f"material must be a taichi_terra.SoilMaterial, got {type(material).__name__}")
        super().__init__(terrain, index, grid, heights, "default", per_env=per_env)
        self._check_heights(self._heights if self._env_heights is None else self._env_heights)
        self._soil = material
        self._env_soil = [material] * terrain.n_envs  # each env's material as last set here
        n = self._nx * self._ny
        self._init_state = np.zeros((terrain.n_envs, n, 4))  # used until the world is built
        self._rev_before_build = np.zeros((terrain.n_envs, self._ny), np.int64)

    @property
    def material(self) -> SoilMaterial:
        """The soil's constitutive parameters, as last set for every env (:meth:`get_material` reads one env's,
        which :meth:`set_material` may have set apart). Setting it sets every env's."""
        return self._soil

    @material.setter
    def material(self, value: SoilMaterial) -> None:
        self.set_material(value)

    def set_material(self, material: SoilMaterial, env=None) -> None:
        """The soil's constitutive parameters in every env (``env=None``) or in env ``env`` alone; before or
        after the build, between steps (the next step's soil law takes them). A checkpoint keeps each env's.
        The soil history the bed already holds (sinkage, slip) stays as it is."""
        if not isinstance(material, SoilMaterial):
            raise TypeError(f"material must be a taichi_terra.SoilMaterial, got {type(material).__name__}")
        env = self._terrain.check_env(env)
        if env is None:
            self._soil = material
            self._env_soil = [material] * self._terrain.n_envs
        else:
            self._env_soil[env] = material
        self._terrain.write_soil_material(self, env)

    def get_material(self, env: int = 0) -> SoilMaterial:
        """The soil's constitutive parameters in env ``env``."""
        env = self._terrain.check_env(env)
        if env is None:
            raise TypeError("env must be an int here")
        held = self._terrain.read_soil_material(self, env)
        if held is None:
            return self._env_soil[env]
        return SoilMaterial(**dict(zip(SOIL_FIELDS, (float(v) for v in held))))

    def _material_row(self, env: int) -> np.ndarray:
        """Env ``env``'s material as last set here, in :data:`SOIL_FIELDS` order, shape (8,)."""
        return self._env_soil[env].as_array()

    def env_materials_array(self) -> np.ndarray:
        """Each env's material as last set here, in :data:`SOIL_FIELDS` order, shape (n_envs, 8)."""
        return np.stack([m.as_array() for m in self._env_soil])

    @property
    def n_samples(self) -> int:
        return self.x_samples * self.y_samples

    def get_undeformed_heights(self, env: int | None = None) -> np.ndarray:
        """The original surface [m], index y * x_samples + x: shape (x_samples * y_samples,) for a bed whose
        envs share it or for ``env=i``; (n_envs, n) for every env of a bed with heights per env."""
        return self._env_or_all(env, self._heights)

    def get_heights(self, env: int = 0) -> np.ndarray:
        """The current (deformed) surface of ``env`` [m]: undeformed heights minus the sinkage."""
        return self._one_env(env, self._heights) - self.get_soil_state(env)["sinkage"]

    def _check_heights(self, h: np.ndarray) -> None:
        if not np.all(np.isfinite(h)):
            raise ValueError("heights of a soil bed must be finite")

    def set_heights(self, heights, env: int | None = None) -> None:
        """Replace the undeformed surface [m] of every env or of env ``env`` (shapes and rules as
        :meth:`HeightMap.set_heights`; the samples must be finite). The soil history of the envs whose surface
        changed starts again from zero (ruts in the old surface do not carry over), as :meth:`reset_soil`."""
        before = self._heights_rev.copy()
        super().set_heights(heights, env)
        changed = np.nonzero(self._heights_rev != before)[0]
        if len(changed) == self._terrain.n_envs:
            self._write_state(np.zeros((self.n_samples, 4)), None)
        else:
            for e in changed:
                self._write_state(np.zeros((self.n_samples, 4)), int(e))
        bump = np.zeros((self._terrain.n_envs, self._ny), np.int64)
        bump[changed] = 1
        if self._terrain.built:
            self._terrain.soil.bump(self, bump)
        else:
            self._rev_before_build += bump

    def get_surface_heights(self, env: int | None = None) -> np.ndarray:
        """The deformed surface [m] (undeformed heights minus the sinkage), shape (n_envs, n) for
        ``env=None`` and (n,) for ``env=i``."""
        self._terrain.check_env(env)
        if env is None:
            return np.stack([self.get_heights(e) for e in range(self._terrain.n_envs)])
        return self.get_heights(env)

    def get_height_row_revisions(self, env: int | None = None) -> np.ndarray:
        """One revision per sample row and env, advanced in every step (and by ``set_soil_state``,
        ``reset_soil`` and ``World.restore``) that changes a height of the row in that env; never cleared.
        Shape (n_envs, y_samples) for ``env=None`` and (y_samples,) for ``env=i``."""
        self._terrain.check_env(env)
        rev = self._terrain.soil.revisions(self) if self._terrain.built else self._rev_before_build.copy()
        return rev if env is None else rev[int(env)]

    # ------------------------------------------------------------------ height edits
    def _reject_edit(self, name):
        raise TypeError(f"{name}: height edits are rejected on a soil bed (they would bypass its soil history); "
                        "use set_soil_state or reset_soil")

    def update(self, *args, **kwargs):
        """Rejected on a soil bed (raises ``TypeError``); the bed's surface follows its soil history."""
        self._reject_edit("update")

    def update_visual_height(self, *args, **kwargs):
        """Rejected on a soil bed (raises ``TypeError``)."""
        self._reject_edit("update_visual_height")

    def update_visual_height_patch(self, *args, **kwargs):
        """Rejected on a soil bed (raises ``TypeError``)."""
        self._reject_edit("update_visual_height_patch")

    # ------------------------------------------------------------------ state
    def get_soil_state(self, env: int = 0) -> dict:
        """Per-sample ``sinkage``, ``plastic_sinkage`` and ``shear`` (accumulated loaded slip) [m] of ``env``,
        each shape (x_samples * y_samples,)."""
        self._terrain.check_env(env)
        if env is None:
            raise TypeError("env must be an int here")
        st = self._terrain.soil.read(self, env) if self._terrain.built else self._init_state[int(env)].copy()
        return {"sinkage": st[:, SOIL_S].copy(), "plastic_sinkage": st[:, SOIL_SP].copy(),
                "shear": st[:, SOIL_J].copy()}

    def set_soil_state(self, sinkage, plastic_sinkage, shear, env: int | None = None) -> None:
        """Restore the soil history (between steps). Arrays of shape (x_samples * y_samples,), finite, with
        ``0 <= plastic_sinkage <= sinkage`` and ``shear >= 0``; ``env=None`` sets every env."""
        n = self.n_samples
        s, sp, j = (as_vector(name, value, n) for name, value in
                    (("sinkage", sinkage), ("plastic_sinkage", plastic_sinkage), ("shear", shear)))
        if np.any(sp < 0.0) or np.any(sp > s):
            raise ValueError("plastic_sinkage must satisfy 0 <= plastic_sinkage <= sinkage")
        if np.any(j < 0.0):
            raise ValueError("shear must be >= 0")
        self._write_state(np.stack([s, sp, j, np.zeros(n)], axis=1), env)

    def reset_soil(self, env: int | None = None) -> None:
        """Return to the undeformed bed (all histories zero) in ``env`` or every env."""
        self._write_state(np.zeros((self.n_samples, 4)), env)

    def _write_state(self, rows: np.ndarray, env) -> None:
        """Set the soil state of ``env`` (None: every env) to ``rows`` (n_samples, 4); the rows whose heights
        changed take a new revision (``terrain/soil_state.py``)."""
        self._terrain.check_env(env)
        target = slice(None) if env is None else int(env)
        if self._terrain.built:
            self._terrain.soil.write(self, rows, target)
        else:
            before = self._init_state[:, :, 0].copy()
            self._init_state[target] = rows
            self._rev_before_build += changed_rows(self, before, self._init_state[:, :, 0])

    def get_soil_step_stats(self, env: int = 0) -> dict:
        """The last step's soil contacts of ``env``: ``contacts`` (quadrature points near bodies, loaded
        or not), ``contact_area`` [m^2] and ``normal_force`` [N] of the loaded ones."""
        self._terrain.check_env(env)
        if env is None:
            raise TypeError("env must be an int here")
        return self._terrain.soil_step_stats(self, int(env))

    def sample_areas(self) -> np.ndarray:
        """Area [m^2] each sample stands for: its cell of half-spacings around it, cut at the border."""
        dx = self.x_size / (self.x_samples - 1)
        dy = self.y_size / (self.y_samples - 1)
        wx = np.full(self.x_samples, dx)
        wx[[0, -1]] = 0.5 * dx
        wy = np.full(self.y_samples, dy)
        wy[[0, -1]] = 0.5 * dy
        return np.outer(wy, wx).reshape(-1)
