"""Tracks and conveyors in the step: belt rows (``rows.py``)."""
