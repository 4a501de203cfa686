"""The card tracker (记牌器) of one seat: per rank, the copies that seat has not seen yet.

Built from a ``SeatView`` only (``guandan_env.envs.aec.seat_view``: what the seat may know,
R-8), by the same ``WebTable.view`` that builds the rest of the page: the 108-card deck
(R-1.2) less the seat's own hand and every card played this deal (R-8.1). The ♥ wildcards
(R-2.3) are counted within their rank and again on their own; the jokers are ranks of their
own. Nothing else is read, so a hidden card cannot reach the counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from guandan_env.core.cards import (
    COPIES,
    FACE_RANK,
    NUM_FACES,
    NUM_RANKS,
    level_rank_value,
    wildcard_face,
)
from guandan_env.envs.aec import SeatView

from .words import rank


def unseen_faces(view: SeatView) -> np.ndarray:
    """``int[54]``: copies of each face outside the seat's hand and not yet played."""
    left = np.full(NUM_FACES, COPIES, dtype=np.int64) - view.hand.astype(np.int64)
    for _seat, _action, faces in view.history:
        for f in faces:
            left[int(f)] -= 1
    if (left < 0).any():
        raise ValueError("the seat's view counts a card more than twice (R-1.2)")
    return left


def tracker(view: SeatView) -> dict[str, Any]:
    """The page's tracker: ranks from the strongest (big joker) to the weakest in level
    order (R-2.4), each ``{"rank", "left", "level"}``, and the unseen wildcards."""
    left = unseen_faces(view)
    by_rank = np.bincount(FACE_RANK.astype(np.int64), weights=left, minlength=NUM_RANKS)
    order = sorted(range(NUM_RANKS), key=lambda r: -level_rank_value(r, view.level))
    return {
        "ranks": [
            {"rank": rank(r), "left": int(by_rank[r]), "level": r == view.level} for r in order
        ],
        "wild": int(left[wildcard_face(view.level)]),
        "total": int(left.sum()),
    }
