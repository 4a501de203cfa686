"""Text-level public helpers: legal actions, descriptions and cards of actions.

These are the stable names other tools rely on (``guandan_env.legal_actions`` …); they take
card text (R-1.4) and a level rank written ``2``…``A``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from . import actions as T
from . import validate
from .cards import BJ_FACE, HAND_SIZE, RANK_TEXT, face_text, parse_hand, wildcard_face
from .choice import choose_cards


def _play_mask(counts: np.ndarray, level: int, last: int | None) -> np.ndarray:
    """The engine's single-hand path (``vector_mask.play_mask_one``; imported here, as its
    tables take a while to build and ``import guandan_env`` should stay cheap)."""
    from . import vector_mask

    if last is None:
        return vector_mask.play_mask_one(counts, level, -1)
    last = validate.action_id(last)
    if T.KIND[last] in (T.PASS, T.RETURN):
        raise ValueError(
            f"action {last} ({T.KIND_NAMES[T.KIND[last]]}) cannot be the play on the table: "
            "only a combination can be followed (R-5.2)"
        )
    return vector_mask.play_mask_one(counts, level, last)


def legal_actions(hand: str, level: str, last: int | None = None) -> list[int]:
    """Ids of every legal declared combination for ``hand`` at ``level``.

    ``last`` is the action on the table, None when leading (then pass is illegal, R-5.1);
    when following, pass is always legal (R-5.2).
    """
    counts = parse_hand(hand)
    return [int(a) for a in np.flatnonzero(_play_mask(counts, validate.level(level), last))]


def describe_action(action: int, level: str) -> dict:
    """The declaration of an action at a level: kind, key, size, suit, ranks, wilds."""
    a = validate.action_id(action)
    lv = validate.level(level)
    kind = T.KIND_NAMES[T.KIND[a]]
    if T.KIND[a] == T.RETURN:
        face = int(T.RETURN_FACE[a])
        r = face // 4 if face < BJ_FACE else 13 + (face - BJ_FACE)
        wild = face == wildcard_face(lv)
        return {
            "kind": kind,
            "key": None,
            "size": 1,
            "suit": None,
            "ranks": {} if wild else {RANK_TEXT[r]: 1},
            "wilds": 1 if wild else 0,
            "card": face_text(face),
        }
    nat = T.NAT[a]
    return {
        "kind": kind,
        "key": T.key_text(a, lv),
        "size": int(T.SIZE[a]),
        "suit": T.suit_text(a),
        "ranks": {RANK_TEXT[r]: int(nat[r]) for r in np.flatnonzero(nat)},
        "wilds": int(T.WILDS[a]),
    }


def cards_for_action(hand: str, level: str, action: int) -> list[str]:
    """The cards the engine plays for ``action`` from ``hand`` (suit rule: ``choice``).

    Raises ``ValueError`` if the action is not legal for that hand when leading (or, for a
    return action, as a tribute return, R-7.1).
    """
    a = validate.action_id(action)
    # a tribute receiver holds 28 cards until it returns one
    counts = parse_hand(hand, max_cards=HAND_SIZE + 1 if T.KIND[a] == T.RETURN else HAND_SIZE)
    lv = validate.level(level)
    if T.KIND[a] == T.RETURN:
        from . import vector_mask

        ok = vector_mask.return_masks(counts[None], np.array([lv]))[0, a]
    elif T.KIND[a] == T.PASS:
        return []
    else:
        ok = _play_mask(counts, lv, None)[a]
    if not ok:
        raise ValueError(
            f"action {a} ({action_text(a, lv)}) is not legal for hand {hand!r} at level "
            f"{RANK_TEXT[lv]}: the hand lacks the cards (R-3)"
        )
    return [face_text(f) for f in choose_cards(counts, lv, a)]


def declaration_text(action: int, level: str) -> str:
    """Readable declaration of an action id at level text ``"2"``…``"A"``, e.g.
    ``three_pairs 33-44-55`` or ``straight_flush S 3-4-5-6-7``."""
    return action_text(validate.action_id(action), validate.level(level))


def action_text(action: int, level: int) -> str:
    """``declaration_text`` for callers that hold a checked id and a rank index 0..12."""
    return _declaration_text(int(action), int(level))


@cache  # at most NUM_ACTIONS x 13 short strings
def _declaration_text(a: int, level: int) -> str:
    kind = int(T.KIND[a])
    name = T.KIND_NAMES[kind]
    key = int(T.KEY[a])
    if kind == T.PASS:
        return "pass"
    if kind == T.RETURN:
        return f"return {face_text(int(T.RETURN_FACE[a]))}"
    if kind == T.FOUR_JOKERS:
        return "four_jokers BJ-BJ-RJ-RJ"
    k = RANK_TEXT[level] if key == T.LEVEL_KEY else RANK_TEXT[key]
    if kind == T.SINGLE:
        body = k
    elif kind == T.PAIR:
        body = k * 2 if len(k) == 1 else f"{k}-{k}"
    elif kind == T.TRIPLE:
        body = k * 3
    elif kind == T.BOMB:
        body = f"{k}x{int(T.SIZE[a])}"
    elif kind == T.FULL_HOUSE:
        p = int(T.PAIR_RANK[a])
        pair = "**" if p < 0 else (RANK_TEXT[p] * 2 if p < 13 else f"{RANK_TEXT[p]}-{RANK_TEXT[p]}")
        body = f"{k * 3}-{pair}"
    else:
        width = T.SEQ_WIDTH[kind]
        body = "-".join(RANK_TEXT[r] * width for r in T.seq_ranks(kind, key))
        if kind == T.STRAIGHT_FLUSH:
            body = f"{T.suit_text(a)} {body}"
    wilds = int(T.WILDS[a])
    suffix = f" ({wilds} wild)" if wilds and key != T.LEVEL_KEY else ""
    return f"{name} {body}{suffix}"
