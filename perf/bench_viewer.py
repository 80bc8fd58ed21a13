"""``python -m perf.bench_viewer``: the same as ``python -m perf viewer`` (perf/modes/viewer.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("viewer")

if __name__ == "__main__":
    main()
