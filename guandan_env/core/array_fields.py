"""Equality of dataclasses that hold numpy arrays (a dataclass's own ``__eq__`` compares
arrays element-wise and fails on ``bool`` of the result)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np


def fields_equal(a: Any, b: Any) -> bool:
    """Every field of the dataclass instances ``a`` and ``b`` equal (arrays by value)."""
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if not (np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y):
            return False
    return True
