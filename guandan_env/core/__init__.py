"""The rules core: cards, the declared-combination table, strength, legality, card choice and
the single-table engine (``Game``). Numpy only; it imports nothing from ``encoding`` or
``envs`` (``tests/project/test_layers.py``)."""
