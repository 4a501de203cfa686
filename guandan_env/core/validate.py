"""Checks for values that cross a public boundary: one ``ValueError`` that names the value,
what was expected and, where one applies, the rule — never a silent coercion (``int(2.5)``,
``bool("no")``) and never a ``TypeError`` from deep inside numpy.

Used by the AEC env, the vector env, the scenario options, the text helpers, replays and the
command lines; numpy only (rules core).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .actions import NUM_ACTIONS
from .cards import parse_rank


def _shown(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def integer(x: Any, name: str, lo: int | None = None, hi: int | None = None, rule: str = "") -> int:
    """``x`` as a Python ``int``: only ints and numpy integers (not bools, floats or text)
    within ``[lo, hi]``."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {_shown(x)} ({type(x).__name__})")
    v = int(x)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        bounds = f">= {lo}" if hi is None else f"<= {hi}" if lo is None else f"in {lo}..{hi}"
        raise ValueError(
            f"{name} {v} is out of range: must be {bounds}{f' ({rule})' if rule else ''}"
        )
    return v


def action_id(x: Any, name: str = "action") -> int:
    """An id of the action table, ``0 .. NUM_ACTIONS - 1``."""
    return integer(x, name, 0, NUM_ACTIONS - 1, "ids of the action table")


def seat(x: Any, name: str = "seat") -> int:
    return integer(x, name, 0, 3, "seats 0..3, teams 0/2 and 1/3, R-1.1")


def level(x: Any, name: str = "level") -> int:
    """Rank index 0..12 of level text ``"2"`` .. ``"A"`` (R-2.1); other types are refused."""
    try:
        return parse_rank(x)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def flag(x: Any, name: str) -> bool:
    if not isinstance(x, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {_shown(x)} ({type(x).__name__})")
    return bool(x)


def number(x: Any, name: str) -> float:
    """A finite real number (int or float; not a bool or text)."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {_shown(x)} ({type(x).__name__})")
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def seed(x: Any, name: str = "seed") -> int | None:
    """``None`` or a non-negative integer (numpy's seeds)."""
    if x is None:
        return None
    return integer(x, name, 0)


def mapping(x: Any, name: str) -> dict:
    if x is None:
        return {}
    if not isinstance(x, Mapping):
        raise ValueError(f"{name} must be a dict (or None), got {_shown(x)} ({type(x).__name__})")
    return dict(x)


def sequence(x: Any, name: str, length: int | None = None) -> list:
    """A list or tuple (text is not a sequence of values here) of ``length`` items."""
    if isinstance(x, str | bytes) or not isinstance(x, Sequence | np.ndarray):
        raise ValueError(f"{name} must be a list, got {_shown(x)} ({type(x).__name__})")
    out = list(x)
    if length is not None and len(out) != length:
        raise ValueError(f"{name} must have {length} items, got {len(out)}: {_shown(out)}")
    return out


def permutation(x: Any, name: str) -> list[int]:
    """The four seats in some order (a finishing order)."""
    order = [seat(s, f"{name}[{i}]") for i, s in enumerate(sequence(x, name, 4))]
    if sorted(order) != [0, 1, 2, 3]:
        raise ValueError(f"{name} must hold each seat 0..3 once, got {order} (R-6.1)")
    return order


def action_array(x: Any, n: int, name: str = "actions") -> np.ndarray:
    """``int64 (n,)`` of an integer array (floats, bools and text are refused, not cut)."""
    a = np.asarray(x)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name} must be an integer array, got dtype {a.dtype}")
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    return a.astype(np.int64, copy=False)
