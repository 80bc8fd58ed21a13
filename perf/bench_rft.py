"""``python -m perf.bench_rft``: the same as ``python -m perf rft`` (perf/modes/rft.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("rft")

if __name__ == "__main__":
    main()
