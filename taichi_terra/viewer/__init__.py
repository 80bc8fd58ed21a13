"""GGUI viewers (3D, and 2D for planar worlds), their options, offscreen capture and recording for taichi_terra
worlds (the physics never imports it)."""
from .camera import OrbitCamera
from .options import Annotations, PlanarStyle, Style, Window
from .planar_viewer import PlanarViewer
from .recorder import Recorder
from .terrain_layer import COLOR_MODES
from .viewer import Viewer

__all__ = ["COLOR_MODES", "Annotations", "OrbitCamera", "PlanarStyle", "PlanarViewer", "Recorder", "Style", "Viewer",
           "Window"]
