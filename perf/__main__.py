"""``python -m perf``: every benchmark scene on every backend present (perf/harness.py)."""
from .harness import main

main()
