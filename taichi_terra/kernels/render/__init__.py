"""Kernels that fill the viewer's vertex buffers."""
