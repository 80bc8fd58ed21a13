"""Rigid bodies: shapes with mass properties, and per-env body handles."""
