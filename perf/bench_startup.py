"""``python -m perf.bench_startup``: the same as ``python -m perf startup`` (perf/modes/startup.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("startup")

if __name__ == "__main__":
    main()
