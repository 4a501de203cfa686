"""Declarations and cards as data the page words in its language (``static/i18n``).

The page never shows the engine's text (``straight_flush H 7-8-9-T-J``): it gets the kind, a
language-neutral body in which ten is always ``10`` and jokers are ``BJ``/``RJ`` (the page
names them), the suit of a straight flush and the wildcards a declaration uses.
"""

from __future__ import annotations

from typing import Any

from guandan_env.core import actions as T
from guandan_env.core.cards import RANK_TEXT, face_text

RANKS = tuple("10" if r == "T" else r for r in RANK_TEXT)  # one spelling of ten


def rank(r: int) -> str:
    """A rank index 0..14 as the page shows it (``10``, ``BJ``, ``RJ``)."""
    return RANKS[int(r)]


def card_label(face: int) -> str:
    """A card as ``H10``/``BJ``: the engine's text with ten spelled ``10``."""
    t = face_text(int(face))
    return t[0] + "10" if t[1:] == "T" else t


def _group(r: str, width: int) -> str:
    return r * width if len(r) == 1 else " ".join([r] * width)


def declaration(action: int, level: int) -> dict[str, Any]:
    """``{"kind", "body", "suit", "wilds"}`` of an action id at a level (rank index)."""
    a, level = int(action), int(level)
    kind = int(T.KIND[a])
    out: dict[str, Any] = {"kind": T.KIND_NAMES[kind], "body": "", "suit": None, "wilds": 0}
    if kind == T.PASS or kind == T.FOUR_JOKERS:
        return out
    if kind == T.RETURN:
        out["body"] = card_label(int(T.RETURN_FACE[a]))
        return out
    key = int(T.KEY[a])
    k = rank(level if key == T.LEVEL_KEY else key)
    if kind == T.SINGLE:
        body = k
    elif kind == T.PAIR:
        body = _group(k, 2)
    elif kind == T.TRIPLE:
        body = _group(k, 3)
    elif kind == T.BOMB:
        body = f"{k}×{int(T.SIZE[a])}"
    elif kind == T.FULL_HOUSE:
        p = int(T.PAIR_RANK[a])
        body = f"{_group(k, 3)}+{'★★' if p < 0 else _group(rank(p), 2)}"
    else:
        width = T.SEQ_WIDTH[kind]
        body = "-".join(_group(rank(r), width) for r in T.seq_ranks(kind, key))
        if kind == T.STRAIGHT_FLUSH:
            out["suit"] = T.suit_text(a)
    out["body"] = body
    if int(T.WILDS[a]) and key != T.LEVEL_KEY:
        out["wilds"] = int(T.WILDS[a])
    return out
