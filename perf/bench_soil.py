"""``python -m perf.bench_soil``: the same as ``python -m perf soil`` (perf/modes/soil.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("soil")

if __name__ == "__main__":
    main()
