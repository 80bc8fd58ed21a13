"""GGUI viewers (3D, and 2D for planar worlds), offscreen capture and recording for taichi_terra worlds
(the physics never imports it)."""
from .camera import OrbitCamera
from .planar_viewer import PlanarViewer
from .recorder import Recorder
from .viewer import COLOR_MODES, Viewer

__all__ = ["COLOR_MODES", "OrbitCamera", "PlanarViewer", "Recorder", "Viewer"]
