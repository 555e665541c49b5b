"""Benchmarks: `make bench` runs every `bench_*.py` module here; each prints its figures and ratios."""
