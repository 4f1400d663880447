"""Benchmark suite of the context engine: ``python -m bench [--only NAME] [--quick]``."""
