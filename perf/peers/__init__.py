"""Peer physics engines used as reference points by the benchmark harness."""
