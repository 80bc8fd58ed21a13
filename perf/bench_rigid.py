"""``python -m perf.bench_rigid``: the same as ``python -m perf rigid`` (perf/modes/rigid.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("rigid")

if __name__ == "__main__":
    main()
