"""Taichi kernels and functions in subpackages by subsystem: ``common`` (math, array layout), ``collision``,
``solver``, ``dynamics``, ``soil``, ``planar`` and ``render``; ``step.py`` holds the step kernel."""
