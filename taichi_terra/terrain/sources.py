"""Where height samples come from: grayscale PNG files, the plain text format, and a seeded fractal Perlin
generator (:class:`TerrainProperties`). Everything here runs in numpy on the host, so a seed gives the same
terrain on every backend.

Layout of the returned heights: ``heights[y * x_samples + x]`` [m], as for :class:`HeightMap`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..validation import check_finite, check_int, check_positive


def load_png(path, height_scale: float, height_offset: float) -> tuple[int, int, np.ndarray]:
    """Heights from a grayscale PNG (8 or 16 bit): ``pixel * height_scale + height_offset`` [m].

    Image column c is the x index; image row r counted from the bottom is the y index, so the picture shows
    the terrain seen from above with +x to the right and +y up. Returns ``(x_samples, y_samples, heights)``.
    """
    from PIL import Image

    scale = check_finite("height_scale", height_scale)
    offset = check_finite("height_offset", height_offset)
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise ValueError(f"png file {str(p)!r} must have the .png extension")
    try:
        with Image.open(p) as img:
            img.load()
            mode = img.mode
            data = np.array(img)
    except (OSError, ValueError) as exc:
        raise ValueError(f"png file {str(p)!r}: cannot read it: {exc}") from exc
    if mode not in ("L", "I;16", "I;16B", "I;16L", "I"):
        raise ValueError(f"png file {str(p)!r}: must be an 8- or 16-bit grayscale image, got mode {mode!r}")
    if data.ndim != 2 or min(data.shape) < 2:
        raise ValueError(f"png file {str(p)!r}: needs at least 2 x 2 pixels, got {data.shape}")
    ny, nx = data.shape
    heights = np.flipud(data.astype(np.float64)).reshape(-1) * scale + offset
    return nx, ny, heights


def load_text(path) -> tuple[int, int, float, float, np.ndarray]:
    """The plain text format: ``x_samples y_samples x_size y_size`` followed by ``x_samples * y_samples`` heights
    (index y * x_samples + x), separated by any white space. Returns ``(x_samples, y_samples, x_size, y_size,
    heights)``."""
    p = Path(path)
    try:
        tokens = p.read_text().split()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"height file {str(p)!r}: cannot read it: {exc}") from exc
    if len(tokens) < 4:
        raise ValueError(f"height file {str(p)!r}: expected 'x_samples y_samples x_size y_size' then the heights")
    try:
        nx, ny = int(tokens[0]), int(tokens[1])
        sx, sy = float(tokens[2]), float(tokens[3])
        heights = np.array([float(t) for t in tokens[4:]], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"height file {str(p)!r}: not a number: {exc}") from exc
    if nx < 2 or ny < 2:
        raise ValueError(f"height file {str(p)!r}: x_samples and y_samples must be >= 2, got {nx}, {ny}")
    if not (math.isfinite(sx) and sx > 0 and math.isfinite(sy) and sy > 0):
        raise ValueError(f"height file {str(p)!r}: x_size and y_size must be positive, got {sx}, {sy}")
    if heights.size != nx * ny:
        raise ValueError(f"height file {str(p)!r}: expected {nx} x {ny} = {nx * ny} heights, got {heights.size}")
    return nx, ny, sx, sy, heights


@dataclass(frozen=True)
class TerrainProperties:
    """Parameters of a fractal Perlin-noise terrain.

    Attributes:
        frequency: base noise frequency [lattice cycles per m], > 0.
        x_size, y_size: terrain size [m], > 0.
        z_scale: height scale [m]: the normalized noise, roughly in [0, 1], is multiplied by it.
        x_samples, y_samples: samples per side, >= 2.
        fractal_octaves: number of octaves, in [1, 64].
        fractal_lacunarity: frequency multiplier per octave, > 0.
        fractal_gain: amplitude multiplier per octave, > 0.
        step_size: quantization step [m] for stair-like terrain; heights are floored to multiples of it
            (0 disables).
        height_offset: added to every sample after quantization [m].
        seed: noise seed, an int in [0, 2**32).
    """

    frequency: float = 0.2
    x_size: float = 10.0
    y_size: float = 10.0
    z_scale: float = 1.0
    x_samples: int = 64
    y_samples: int = 64
    fractal_octaves: int = 4
    fractal_lacunarity: float = 2.0
    fractal_gain: float = 0.5
    step_size: float = 0.0
    height_offset: float = 0.0
    seed: int = 0

    def __post_init__(self):
        check_positive("frequency", self.frequency)
        check_positive("x_size", self.x_size)
        check_positive("y_size", self.y_size)
        check_finite("z_scale", self.z_scale)
        check_int("x_samples", self.x_samples, 2)
        check_int("y_samples", self.y_samples, 2)
        octaves = check_int("fractal_octaves", self.fractal_octaves, 1)
        if octaves > 64:
            raise ValueError(f"fractal_octaves must be in [1, 64], got {octaves}")
        check_positive("fractal_lacunarity", self.fractal_lacunarity)
        check_positive("fractal_gain", self.fractal_gain)
        if check_finite("step_size", self.step_size) < 0.0:
            raise ValueError(f"step_size must be >= 0 (0 disables quantization), got {self.step_size}")
        check_finite("height_offset", self.height_offset)
        seed = check_int("seed", self.seed, 0)
        if seed >= 2 ** 32:
            raise ValueError(f"seed must be in [0, 2**32), got {seed}")
        # (in logarithms, so that the checks themselves cannot overflow)
        finest = math.log(self.frequency) + max(0.0, (octaves - 1) * math.log(self.fractal_lacunarity)) \
            + math.log(max(self.x_size, self.y_size))
        if finest > 52.0 * math.log(2.0):
            raise ValueError("frequency x fractal_lacunarity^(fractal_octaves - 1) x max(x_size, y_size) must be "
                             "below 2^52 noise cells (past it float64 holds no position inside a cell), got "
                             f"frequency={self.frequency!r}, fractal_lacunarity={self.fractal_lacunarity!r}, "
                             f"x_size={self.x_size!r}, y_size={self.y_size!r}")
        if (octaves - 1) * math.log(self.fractal_gain) > 600.0:
            raise ValueError("fractal_gain^(fractal_octaves - 1) (the last octave's amplitude) must stay below "
                             f"1e260, got fractal_gain={self.fractal_gain!r}, fractal_octaves={octaves}")
        if self.step_size > 0.0 and abs(self.z_scale) > 1e15 * self.step_size:
            raise ValueError(f"step_size must be 0 or at least 1e-15 of z_scale, got step_size={self.step_size!r} "
                             f"for z_scale={self.z_scale!r}")

    def generate(self) -> np.ndarray:
        """The heights [m], shape (x_samples * y_samples,), index y * x_samples + x."""
        rng = np.random.default_rng(self.seed)
        perm = rng.permutation(256)
        perm = np.concatenate([perm, perm])
        x = np.linspace(0.0, self.x_size, self.x_samples)
        y = np.linspace(0.0, self.y_size, self.y_samples)
        X, Y = np.meshgrid(x, y)  # rows are y, columns x: row-major y * x_samples + x
        total = np.zeros_like(X)
        amp_sum = 0.0
        freq, amp = self.frequency, 1.0
        shifts = rng.uniform(0.0, 256.0, size=(self.fractal_octaves, 2))
        for k in range(self.fractal_octaves):
            total += amp * _perlin(freq * X + shifts[k, 0], freq * Y + shifts[k, 1], perm)
            amp_sum += amp
            freq *= self.fractal_lacunarity
            amp *= self.fractal_gain
        h = self.z_scale * 0.5 * (total / amp_sum + 1.0)
        if self.step_size > 0.0:
            h = np.floor(h / self.step_size) * self.step_size
        return (h + self.height_offset).reshape(-1)


_GRADIENTS = np.array([[1, 1], [-1, 1], [1, -1], [-1, -1], [1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.float64)


def _perlin(x: np.ndarray, y: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """2-D gradient (Perlin) noise in about [-1, 1], zero at the lattice points."""
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = x - x0, y - y0
    xi, yi = x0.astype(np.int64) & 255, y0.astype(np.int64) & 255

    def corner(dx, dy):
        g = _GRADIENTS[perm[perm[(xi + dx) & 255] + ((yi + dy) & 255)] & 7]
        return g[..., 0] * (fx - dx) + g[..., 1] * (fy - dy)

    u = fx * fx * fx * (fx * (fx * 6.0 - 15.0) + 10.0)
    v = fy * fy * fy * (fy * (fy * 6.0 - 15.0) + 10.0)
    bottom = corner(0, 0) + u * (corner(1, 0) - corner(0, 0))
    top = corner(0, 1) + u * (corner(1, 1) - corner(0, 1))
    return bottom + v * (top - bottom)
