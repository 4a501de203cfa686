"""Plays and cards in the competition platform's message format (``docs/protocol.md``).

Most public Guandan agents were written for the national Guandan AI competition platform, a
WebSocket server that offers each seat an ``actionList`` of concrete plays and takes back an
index. This module is the one translation between that format and our action ids; the server
(``experiments.hosts.serve``) and the client (``agents.remote``) both use it.

* A card is ``S/H/C/D`` + ``23456789TJQKA``; the small joker is ``SB``, the big joker ``HR``.
* A play is ``[type, rank, cards]``: type ``Single``, ``Pair``, ``Trips``, ``ThreeWithTwo``,
  ``Straight``, ``ThreePair``, ``TwoTrips``, ``Bomb``, ``StraightFlush``; ``rank`` is the rank
  of the set (the triple's for a full house, ``B``/``R`` for jokers, ``JOKER`` for four
  jokers) or, for sequences, the **lowest** card (``A`` for A-2-3-4-5, AA-22-33, AAA-222).
  Cards are listed slot by slot: sequences in window order, a full house as triple then pair;
  ♥N wildcards fill the slots the natural cards leave open.
* A pass is ``["PASS", "PASS", "PASS"]``, a tribute return ``["back", "back", [card]]``.

One action id may be played with several suit choices; ``action_list`` offers each distinct
choice the hand allows (the engine's own choice, ``guandan_env.core.choice``, first), because
several public clients build the card list themselves and look it up in ``actionList``.
"""

from __future__ import annotations

from functools import cache
from itertools import product
from typing import Any

import numpy as np

from ..core import actions as T
from ..core.cards import (
    BJ_FACE,
    BJ_RANK,
    FACE_RANK,
    NUM_FACES,
    NUM_NATURAL_FACES,
    RJ_FACE,
    RJ_RANK,
    wildcard_face,
)
from ..core.choice import choose_cards

SUITS = "SHCD"
RANKS = "23456789TJQKA"
JOKER_TEXT = {BJ_FACE: "SB", RJ_FACE: "HR"}
PASS_ENTRY: list[Any] = ["PASS", "PASS", "PASS"]
TYPE_OF_KIND = {
    T.SINGLE: "Single",
    T.PAIR: "Pair",
    T.TRIPLE: "Trips",
    T.FULL_HOUSE: "ThreeWithTwo",
    T.STRAIGHT: "Straight",
    T.THREE_PAIRS: "ThreePair",
    T.TWO_TRIPLES: "TwoTrips",
    T.BOMB: "Bomb",
    T.STRAIGHT_FLUSH: "StraightFlush",
    T.FOUR_JOKERS: "Bomb",
}
KINDS_OF_TYPE: dict[str, tuple[int, ...]] = {}
for _k, _t in TYPE_OF_KIND.items():
    KINDS_OF_TYPE[_t] = (*KINDS_OF_TYPE.get(_t, ()), _k)
MAX_VARIANTS = 256  # suit choices listed per action id (a five-rank straight has at most 4**5)
# per action id, as Python values (scalar numpy indexing is slow in these loops)
_KIND = T.KIND.tolist()
_WILDS = T.WILDS.tolist()
_NEEDS = [
    [(r, int(T.NAT[a, r])) for r in np.flatnonzero(T.NAT[a]).tolist()] for a in range(T.NUM_ACTIONS)
]


def card_text(face: int) -> str:
    """Protocol text of a face: ``H5``, ``ST``, ``SB`` (small joker), ``HR`` (big joker)."""
    face = int(face)
    if face in JOKER_TEXT:
        return JOKER_TEXT[face]
    if not 0 <= face < NUM_NATURAL_FACES:
        raise ValueError(f"face id {face} out of range 0..53 (R-1.4)")
    return SUITS[face % 4] + RANKS[face // 4]


def parse_card(text: Any) -> int:
    """Face id of a protocol card; anything else is a ``ValueError`` naming it."""
    if isinstance(text, str):
        if text == "SB":
            return BJ_FACE
        if text == "HR":
            return RJ_FACE
        if len(text) == 2 and text[0] in SUITS and text[1] in RANKS:
            return RANKS.index(text[1]) * 4 + SUITS.index(text[0])
    raise ValueError(
        f"malformed protocol card {text!r}: expected S/H/C/D then 2-9/T/J/Q/K/A, or SB/HR"
    )


def hand_cards(counts: np.ndarray) -> list[str]:
    """A hand (face counts) as protocol cards sorted by rank, then S H C D; jokers last."""
    return [card_text(f) for f in range(NUM_FACES) for _ in range(int(counts[f]))]


@cache  # at most NUM_ACTIONS x 13 short strings
def rank_label(action: int, level: int) -> str:
    """The ``rank`` field of a play (module docstring)."""
    kind, key = int(T.KIND[action]), int(T.KEY[action])
    if kind == T.FOUR_JOKERS:
        return "JOKER"
    if kind in T.SEQUENCE_KINDS:
        return RANKS[T.seq_ranks(kind, key)[0]]
    if key == T.LEVEL_KEY:
        return RANKS[level]
    if key == BJ_RANK:
        return "B"
    if key == RJ_RANK:
        return "R"
    return RANKS[key]


@cache
def _slot_ranks(action: int) -> tuple[int, ...]:
    """Rank of each card slot, in the order the protocol lists cards (-1: any, a wildcard)."""
    kind, key = int(T.KIND[action]), int(T.KEY[action])
    if kind in T.SEQUENCE_KINDS:
        return tuple(r for r in T.seq_ranks(kind, key) for _ in range(T.SEQ_WIDTH[kind]))
    if kind == T.FULL_HOUSE:
        p = int(T.PAIR_RANK[action])
        return (key,) * 3 + (p,) * 2
    return (-1,) * int(T.SIZE[action])


def entry(action: int, level: int, faces) -> list[Any]:
    """``[type, rank, cards]`` of ``action`` played with ``faces`` (slot order)."""
    kind = _KIND[action]
    if kind == T.PASS:
        return list(PASS_ENTRY)
    if kind == T.RETURN:
        return ["back", "back", [card_text(int(T.RETURN_FACE[action]))]]
    wild = wildcard_face(level)
    faces = sorted(int(f) for f in faces)
    wilds = [f for f in faces if f == wild][: _WILDS[action]]
    naturals = list(faces)
    for f in wilds:
        naturals.remove(f)
    slots = _slot_ranks(action)
    if all(r == -1 for r in slots):  # one-rank sets: naturals, then wildcards
        ordered = naturals + wilds
    else:
        ordered, pool = [], list(naturals)
        for r in slots:
            hit = next((f for f in pool if r >= 0 and int(FACE_RANK[f]) == r), None)
            if hit is None:
                ordered.append(wilds.pop() if wilds else pool.pop(0))
            else:
                pool.remove(hit)
                ordered.append(hit)
    return [TYPE_OF_KIND[kind], rank_label(action, level), [card_text(f) for f in ordered]]


def variants(counts: np.ndarray, level: int, action: int, limit: int = MAX_VARIANTS):
    """Distinct face tuples the hand ``counts`` can play ``action`` with (sorted tuples), the
    engine's own choice first; at most ``limit``."""
    action = int(action)
    kind = _KIND[action]
    first = tuple(sorted(choose_cards(counts, level, action)))
    if kind in (T.PASS, T.RETURN, T.STRAIGHT_FLUSH, T.FOUR_JOKERS):
        return [first]
    wild = wildcard_face(level)
    hand = counts.tolist()
    per_rank = []  # per rank: the suit multisets that supply its natural cards
    for r, need in _NEEDS[action]:
        if r >= BJ_RANK:
            per_rank.append([(BJ_FACE if r == BJ_RANK else RJ_FACE,) * need])
            continue
        faces = [r * 4 + s for s in range(4) if r * 4 + s != wild]
        options = []
        for take in product(*(range(min(hand[f], need) + 1) for f in faces)):
            if sum(take) == need:
                options.append(tuple(f for f, t in zip(faces, take, strict=True) for _ in range(t)))
        per_rank.append(options)
    wilds = (wild,) * _WILDS[action]
    out, seen = [first], {first}
    for combo in product(*per_rank):
        faces = tuple(sorted(wilds + tuple(f for part in combo for f in part)))
        if faces in seen:
            continue
        if kind == T.STRAIGHT and not wilds and len({f % 4 for f in faces}) == 1:
            continue  # five naturals of one suit are a straight flush, never a straight
        seen.add(faces)
        out.append(faces)
        if len(out) >= limit:
            break
    return out


def action_list(
    counts: np.ndarray, level: int, legal: np.ndarray, limit: int = MAX_VARIANTS
) -> tuple[list[list[Any]], list[int]]:
    """``(actionList entries, action id of each entry)`` for a seat holding ``counts`` whose
    legal ids are ``legal`` (bool mask or ids): pass first when legal, then every id in
    ascending order with each of its suit choices."""
    legal = np.asarray(legal)
    ids = np.flatnonzero(legal) if legal.dtype == bool else np.sort(legal.astype(np.int64))
    entries: list[list[Any]] = []
    owners: list[int] = []
    for a in ids.tolist():
        for faces in variants(counts, level, a, limit):
            entries.append(entry(a, level, faces))
            owners.append(a)
    return entries, owners


def entry_key(e: Any) -> tuple:
    """A hashable form of an entry with its cards as a multiset (clients order cards freely)."""
    if not (isinstance(e, list | tuple) and len(e) == 3):
        raise ValueError(f"malformed protocol play {e!r}: expected [type, rank, cards]")
    cards = e[2]
    cards = tuple(sorted(cards)) if isinstance(cards, list | tuple) else (cards,)
    return (str(e[0]), str(e[1]), cards)


def action_of_entry(e: Any, level: int) -> tuple[int, tuple[int, ...]]:
    """``(action id, faces)`` of a play announced in protocol form (a server's ``curAction``),
    or a ``ValueError`` saying why it cannot be read."""
    if not (isinstance(e, list | tuple) and len(e) == 3):
        raise ValueError(f"malformed protocol play {e!r}: expected [type, rank, cards]")
    kind_text, rank, cards = e
    if kind_text == "PASS":
        return T.PASS_ACTION, ()
    if not isinstance(cards, list | tuple) or not cards:
        raise ValueError(f"malformed protocol play {e!r}: no card list")
    faces = tuple(sorted(parse_card(c) for c in cards))
    if kind_text in ("back", "tribute"):
        if len(faces) != 1:
            raise ValueError(f"a {kind_text} moves one card, got {e!r}")
        return T.return_action(faces[0]), faces
    kinds = KINDS_OF_TYPE.get(kind_text)
    if kinds is None:
        raise ValueError(f"unknown protocol play type {kind_text!r} in {e!r}")
    wild = wildcard_face(level)
    nat = np.zeros(T.NAT.shape[1], dtype=np.int64)
    for f in faces:
        if f != wild:
            nat[int(FACE_RANK[f])] += 1
    n_wild = sum(1 for f in faces if f == wild)
    ok = np.isin(T.KIND, kinds) & (T.WILDS == n_wild) & (T.NAT == nat).all(1)
    suits = {f % 4 for f in faces if f != wild and f < NUM_NATURAL_FACES}
    ok &= (T.SUIT < 0) | ((len(suits) == 1) & (T.SUIT == min(suits, default=-1)))
    for a in np.flatnonzero(ok).tolist():
        if rank_label(a, level) == rank:
            return a, faces
    raise ValueError(f"play {e!r} is no combination at level {RANKS[level]} (R-3)")
