"""``python -m perf.harness``: the same as ``python -m perf`` (the backend harness, perf/modes/backends.py);
``main(argv)`` returns its result."""
from .cli import entry

main = entry("backends")

if __name__ == "__main__":
    main()
