"""``python -m perf [MODE] [options]``: the benchmark harness (perf/cli.py)."""
from .cli import main

main()
