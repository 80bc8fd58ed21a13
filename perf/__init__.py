"""Benchmark harness: backends, n_envs sweeps and peer engines on the same scenes (JSON results)."""
