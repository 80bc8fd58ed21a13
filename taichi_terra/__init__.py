"""taichi_terra: batched rigid bodies on planes and height-map terrain, written in Taichi.

``import taichi_terra`` is cheap and does not initialise Taichi; :func:`init` chooses the backend and
precision (``World`` initialises cpu/f64 itself if ``init`` was not called).
"""
import os as _os

_os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
_os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

from .backend import init, is_initialized  # noqa: E402  (backend imports taichi lazily)

__version__ = "0.1.0"

__all__ = ["init", "is_initialized", "World", "SolverConfig", "Checkpoint", "DivergenceError", "ContactSet", "Ground",
           "Body",
           "ArticulatedSystem", "URDFError", "HeightMap", "DeformableTerrain", "TerrainProperties", "RayHit",
           "SoilMaterial", "ShapeType", "load_world_xml", "export_world_xml", "randomize", "TerrainTiles", "TileShapes", "__version__"]

_LAZY = {
    "World": ("world", "World"),
    "SolverConfig": ("world", "SolverConfig"),
    "Checkpoint": ("checkpoints", "Checkpoint"),
    "DivergenceError": ("divergence", "DivergenceError"),
    "ContactSet": ("contacts", "ContactSet"),
    "Ground": ("terrain.builder", "Ground"),
    "Body": ("bodies.body", "Body"),
    "ArticulatedSystem": ("bodies.articulated", "ArticulatedSystem"),
    "URDFError": ("bodies.urdf", "URDFError"),
    "HeightMap": ("terrain.heightmap", "HeightMap"),
    "DeformableTerrain": ("terrain.deformable", "DeformableTerrain"),
    "TerrainProperties": ("terrain.sources", "TerrainProperties"),
    "RayHit": ("rays", "RayHit"),
    "SoilMaterial": ("terrain.soil", "SoilMaterial"),
    "load_world_xml": ("io.xml", "load_world_xml"),
    "export_world_xml": ("io.xml", "export_world_xml"),
    "ShapeType": ("bodies.shapes", "ShapeType"),
    "randomize": ("randomize", "randomize"),
    "TerrainTiles": ("terrain.tiles", "TerrainTiles"),
    "TileShapes": ("terrain.tiles", "TileShapes"),
}


def __getattr__(name):
    if name == "viewer":  # the GGUI viewer, as ``tt.viewer`` (imported on first use)
        import importlib

        return importlib.import_module(".viewer", __name__)
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'taichi_terra' has no attribute {name!r}")
