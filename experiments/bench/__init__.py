"""Benchmark scripts (medians, JSON out): ``python -m experiments.bench.core``, ``.vector``,
``.selfplay``, ``.hand_plan``."""
