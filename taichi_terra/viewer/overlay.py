"""The viewer's text overlay: time, envs shown, rates, a diverged env, the controls (``viewer.py``'s mixin)."""
import math
import time


class OverlayLayer:
    """Mixin of :class:`~taichi_terra.viewer.Viewer`: the overlay's text and box, and the world's divergence report
    as the drawing reads it."""

    @property
    def overlay_box(self):
        """The text overlay's rectangle in pixels, ``(x0, y0, x1, y1)`` from the top-left, or ``None`` when the
        overlay is off."""
        if not self.overlay:
            return None
        w, h = self._overlay_size()
        return 0, 0, math.ceil((0.01 + w) * self.width) + 1, math.ceil((0.01 + h) * self.height) + 1

    def _diverged(self) -> dict:
        """The world's diverged envs (:meth:`taichi_terra.World.get_diverged`), read once per drawn frame."""
        if self._diverged_at != self.world.step_count:
            self._diverged_cache = self.world.get_diverged()
            self._diverged_at = self.world.step_count
        return self._diverged_cache

    def _overlay_size(self):
        """Width and height of the overlay as fractions of the image (it starts at (0.01, 0.01))."""
        lines = len(self.overlay_lines())
        wide = any(line.startswith("env ") for line in self.overlay_lines())
        return (min(0.98, (430.0 if wide else 250.0 if self.headless else 340.0) / self.width),
                min(0.98, (30.0 + 18.0 * lines) / self.height))

    def overlay_lines(self) -> list:
        """The overlay's text: time, envs shown, rates, the first diverged env shown (the divergence watch,
        ``World.get_diverged``), and the controls in a window."""
        sps, rtf = self._rates
        shown = f"env {self.env}" if len(self._envs) == 1 else f"{len(self._envs)} envs"
        lines = [f"t = {self.world.time:.3f} s   {shown}{'   paused' if self.paused else ''}",
                 f"{sps:,.0f} steps/s   real time x{rtf:.2f}"]
        gone = [e for e in self._envs if e in self._diverged()]
        if gone:
            d = self._diverged()[gone[0]]
            more = f" (+{len(gone) - 1} more)" if len(gone) > 1 else ""
            lines.append(f"env {gone[0]} diverged after step {d['step']}: {d['what']}, {d['body']}{more}")
        if not self.headless:
            lines += ["drag: L orbit, R pan, M zoom (z/x)", "space pause, n step, r reset, f follow, [ ] env"]
        return lines

    def _overlay(self) -> None:
        now, t_sim, steps = time.perf_counter(), self.world.time, self.world.step_count
        wall = now - self._clock[0]
        if wall > 0.25 or steps < self._clock[2]:  # refresh the rates a few times a second
            if steps >= self._clock[2] and wall > 0.0:
                self._rates = ((steps - self._clock[2]) / wall, (t_sim - self._clock[1]) / wall)
            self._clock = (now, t_sim, steps)
        if not self.overlay:
            return
        gui = self._window.get_gui()
        with gui.sub_window("taichi_terra", 0.01, 0.01, *self._overlay_size()):
            for line in self.overlay_lines():
                gui.text(line)
