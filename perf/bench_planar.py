"""``python -m perf.bench_planar``: the same as ``python -m perf planar`` (perf/modes/planar.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("planar")

if __name__ == "__main__":
    main()
