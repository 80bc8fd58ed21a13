"""``python -m perf.bench_articulated``: the same as ``python -m perf articulated`` (perf/modes/articulated.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("articulated")

if __name__ == "__main__":
    main()
