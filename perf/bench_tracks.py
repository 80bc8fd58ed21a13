"""``python -m perf.bench_tracks``: the same as ``python -m perf tracks`` (perf/modes/tracks.py).

``main(argv)`` runs it with those arguments and returns its result (what perf/ab.py compares)."""
from .cli import entry

main = entry("tracks")

if __name__ == "__main__":
    main()
