"""``python -m perf.bench_tolerance``: the same as ``python -m perf tolerance`` (perf/modes/tolerance.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("tolerance")

if __name__ == "__main__":
    main()
