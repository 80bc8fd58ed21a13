"""``python -m perf.bench_stages``: the same as ``python -m perf stages`` (perf/modes/stages.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("stages")

if __name__ == "__main__":
    main()
