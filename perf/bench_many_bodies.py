"""``python -m perf.bench_many_bodies``: the same as ``python -m perf many_bodies`` (perf/modes/many_bodies.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("many_bodies")

if __name__ == "__main__":
    main()
