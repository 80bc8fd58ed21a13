"""Taichi kernels and functions, grouped by pipeline stage (math, shapes, collision, dynamics, contact, step)."""
