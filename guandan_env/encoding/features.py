"""Per-action features, for agents that score candidate moves (DMC style, as in DouZero/DanZero).

``action_features(level)`` is a ``float32 (NUM_ACTIONS, ACTION_FEATURE_DIM)`` matrix, one row
per action id of the table, built from the same table as the mask (``actions.py``):

=================  ====  ===========================================================
slice              size  meaning
=================  ====  ===========================================================
kind               12    one-hot kind (``KIND_NAMES``)
natural_cards      15    natural cards consumed per rank index (2..A, BJ, RJ) / 8
wilds              3     one-hot ♥N wildcards consumed (0, 1, 2)
size               1     cards played / 10
suit               5     straight flush suit one-hot (S H C D), index 4 = none
value              17    one-hot comparison value at the level (index 16 = none)
bomb_power         1     bomb power at the level / 160 (0 for non-bombs)
return_face        54    tribute return: the face handed back (one-hot)
=================  ====  ===========================================================

Row ``a`` of the matrix describes action ``a`` at that level; gather the rows of the legal
actions (``np.flatnonzero(mask)``) to score candidates.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..core import actions as T
from ..core.cards import NUM_FACES, NUM_RANKS
from ..core.strength import POWER_SCALE, strength_arrays

FEATURE_FIELDS = [
    ("kind", len(T.KIND_NAMES)),
    ("natural_cards", NUM_RANKS),
    ("wilds", T.MAX_WILDS + 1),
    ("size", 1),
    ("suit", 5),
    ("value", 17),
    ("bomb_power", 1),
    ("return_face", NUM_FACES),
]
FEATURE_SLICES: dict[str, slice] = {}
_o = 0
for _name, _n in FEATURE_FIELDS:
    FEATURE_SLICES[_name] = slice(_o, _o + _n)
    _o += _n
ACTION_FEATURE_DIM: int = _o
del _o


@lru_cache(maxsize=13)
def action_features(level: int) -> np.ndarray:
    """Feature matrix of every action at ``level`` (rank index 0..12); read-only, cached."""
    if not 0 <= level < 13:
        raise ValueError(f"level must be a rank index 0..12, got {level}")
    a = np.arange(T.NUM_ACTIONS)
    f = np.zeros((T.NUM_ACTIONS, ACTION_FEATURE_DIM), dtype=np.float32)
    S = FEATURE_SLICES
    f[a, S["kind"].start + T.KIND.astype(np.intp)] = 1
    f[:, S["natural_cards"]] = T.NAT / 8.0
    f[a, S["wilds"].start + T.WILDS.astype(np.intp)] = 1
    f[:, S["size"].start] = T.SIZE / 10.0
    f[a, S["suit"].start + np.where(T.SUIT >= 0, T.SUIT, 4)] = 1
    value, power = strength_arrays(level)
    is_play = (T.KIND != T.PASS) & (T.KIND != T.RETURN)
    f[a, S["value"].start + np.where(is_play, value, 16)] = 1
    f[:, S["bomb_power"].start] = power / POWER_SCALE
    ret = T.RETURN_FACE >= 0
    f[a[ret], S["return_face"].start + T.RETURN_FACE[ret]] = 1
    f.setflags(write=False)
    return f
