"""``python -m perf.bench_buggy``: the same as ``python -m perf buggy`` (perf/modes/buggy.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("buggy")

if __name__ == "__main__":
    main()
