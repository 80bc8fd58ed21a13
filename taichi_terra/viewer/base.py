"""What the GGUI viewers share: drawing into the process's one window, capturing frames, showing and closing."""
from __future__ import annotations

import numpy as np

from . import window as _window


class WindowViewer:
    """Base of :class:`~taichi_terra.viewer.Viewer` and :class:`~taichi_terra.viewer.PlanarViewer`.

    A subclass sets ``self.headless`` and ``self._window`` (from :func:`window.acquire`) and draws a frame in
    ``_render()``."""

    def _render(self) -> None:
        raise NotImplementedError

    def _draw(self) -> None:
        import taichi as ti

        # GGUI's own staging kernels warn about f64 -> f32 casts when the default float is f64
        ti.set_logging_level(ti.ERROR)
        try:
            self._render()
        finally:
            ti.set_logging_level(ti.WARN)

    def capture(self) -> np.ndarray:
        """Draw the current state and return the image, uint8 RGB of shape (height, width, 3), row 0 at the top."""
        self._draw()
        img = self._window.get_image_buffer_as_numpy()
        return np.ascontiguousarray(np.flipud(np.round(np.clip(img[:, :, :3], 0.0, 1.0) * 255.0)
                                              .astype(np.uint8).transpose(1, 0, 2)))

    def save_image(self, path) -> None:
        """Draw the current state into a PNG file."""
        from PIL import Image

        from .recorder import check_output_path

        Image.fromarray(self.capture()).save(check_output_path("path", path, (".png",)))

    def show(self) -> None:
        """Draw the current state in the window (interactive viewers)."""
        if self.headless:
            raise RuntimeError("show() needs a window; a headless viewer returns frames from capture()")
        self._draw()
        self._window.show()

    @property
    def running(self) -> bool:
        """False once the window was closed (or Escape pressed)."""
        return _window.owns(self) and self._window.running

    def close(self) -> None:
        """Destroy the window if this viewer holds it."""
        _window.release(self)
