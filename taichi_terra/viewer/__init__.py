"""GGUI viewer, offscreen capture and recording for taichi_terra worlds (the physics never imports it)."""
from .camera import OrbitCamera
from .recorder import Recorder
from .viewer import COLOR_MODES, Viewer

__all__ = ["COLOR_MODES", "OrbitCamera", "Recorder", "Viewer"]
