"""``python -m perf.sweep_trace``: the same as ``python -m perf sweep_trace`` (perf/modes/sweep_trace.py);
``main(argv)`` returns its result."""
from .cli import entry

main = entry("sweep_trace")

if __name__ == "__main__":
    main()
