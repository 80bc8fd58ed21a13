"""``python -m perf.bench_solver``: the same as ``python -m perf solver`` (perf/modes/solver.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("solver")

if __name__ == "__main__":
    main()
