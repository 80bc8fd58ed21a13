"""The process's one GGUI window.

GGUI allows one live window per process (two at once crashed at exit on lavapipe), so viewers share
it: a new viewer takes the window over, reusing it when the size and mode match and replacing it
otherwise; the viewer that had it can no longer draw.
"""
from __future__ import annotations

import atexit

_current = {"window": None, "key": None, "owner": None}


def acquire(owner, title: str, width: int, height: int, headless: bool):
    """The window for ``owner`` (a viewer), created or reused."""
    import taichi as ti

    from .. import backend

    if not backend.is_initialized():
        raise RuntimeError("call taichi_terra.init() before making a Viewer")
    key = (int(width), int(height), bool(headless))
    if _current["window"] is not None and _current["key"] != key:
        release()
    if _current["window"] is None:
        try:
            win = ti.ui.Window(title, (int(width), int(height)), show_window=not headless, vsync=False)
        except RuntimeError as exc:
            hint = ("install a Vulkan driver (on a CPU machine: apt-get install -y mesa-vulkan-drivers "
                    "libvulkan1)" if "Vulkan" in str(exc) else
                    "a window needs a display; pass headless=True to render offscreen")
            raise RuntimeError(f"cannot open a GGUI window: {exc}; {hint}") from exc
        _current.update(window=win, key=key)
    _current["owner"] = owner
    return _current["window"]


def owns(owner) -> bool:
    return _current["owner"] is owner and _current["window"] is not None


def release(owner=None) -> None:
    """Destroy the window (only if ``owner`` holds it, when given)."""
    if owner is not None and _current["owner"] is not owner:
        return
    if _current["window"] is not None:
        _current["window"].destroy()
    _current.update(window=None, key=None, owner=None)


atexit.register(release)  # close the window before Taichi's runtime goes away
