"""The action table: one id per declared combination (RULES.md R-3, DESIGN.md "The action space").

An action is ``(kind, key, natural cards consumed per rank, wildcards consumed, suit)``. The
table does not depend on the deal's level: a wildcard entry means "one ♥ card of the current
level rank", and the natural counts never include that card. Built once at import as numpy
arrays (one row per action):

==============  ======================================================================
column          meaning
==============  ======================================================================
``KIND``        kind id (``KIND_NAMES``)
``KEY``         rank index compared (0..12 = 2..A, 13 BJ, 14 RJ); sequences: highest
                natural rank; ``LEVEL_KEY`` (15) for the ♥N single and the ♥N♥N pair,
                whose key is the level rank; -1 for pass and four jokers; returns: -1
``SIZE``        cards played
``SUIT``        straight flushes: suit 0..3 (S H C D); else -1
``NAT``         ``uint8[A, 15]`` natural cards consumed per rank index (♥N excluded)
``WILDS``       ♥N cards consumed, whatever they stand for
``PAIR_RANK``   full house: rank of the pair, -1 when the pair is the two wildcards
``WILD_AT``     ``int8[A, 5]`` positions (rank indices) the wildcards stand for (-1 unused);
                informational, for rendering readings such as ``33-44-55``
``RETURN_FACE`` return actions: the face handed back (R-7.1); else -1
==============  ======================================================================

Counts per kind (derived in ``tests/core/test_action_table.py``): pass 1, single 16, pair 29,
triple 39, full house 871, straight 160, three pairs 120, two triples 78, bomb 234,
straight flush 640, four jokers 1, return 54: 2,243 in all.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from .cards import BJ_RANK, NUM_FACES, NUM_NATURAL_RANKS, NUM_RANKS, RANK_TEXT, RJ_RANK, SUIT_TEXT

KIND_NAMES = (
    "pass",
    "single",
    "pair",
    "triple",
    "full_house",
    "straight",
    "three_pairs",
    "two_triples",
    "bomb",
    "straight_flush",
    "four_jokers",
    "return",
)
(
    PASS,
    SINGLE,
    PAIR,
    TRIPLE,
    FULL_HOUSE,
    STRAIGHT,
    THREE_PAIRS,
    TWO_TRIPLES,
    BOMB,
    STRAIGHT_FLUSH,
    FOUR_JOKERS,
    RETURN,
) = range(12)
KIND_ID = {name: i for i, name in enumerate(KIND_NAMES)}
BOMB_KINDS = (BOMB, STRAIGHT_FLUSH, FOUR_JOKERS)
SEQUENCE_KINDS = (STRAIGHT, THREE_PAIRS, TWO_TRIPLES, STRAIGHT_FLUSH)
LEVEL_KEY = 15
MAX_WILDS = 2

# Sequence windows in natural order. Rank index -1 is the ace played low.
SEQ_LEN = {STRAIGHT: 5, STRAIGHT_FLUSH: 5, THREE_PAIRS: 3, TWO_TRIPLES: 2}
SEQ_WIDTH = {STRAIGHT: 1, STRAIGHT_FLUSH: 1, THREE_PAIRS: 2, TWO_TRIPLES: 3}


def seq_ranks(kind: int, key: int) -> list[int]:
    """Rank indices (ace-low mapped to 12) of a sequence with highest natural rank ``key``."""
    n = SEQ_LEN[kind]
    return [(r if r >= 0 else 12) for r in range(key - n + 1, key + 1)]


def seq_keys(kind: int) -> range:
    """Valid highest ranks: a window may start at the low ace (index -1) and end at A (12)."""
    return range(SEQ_LEN[kind] - 2, NUM_NATURAL_RANKS)


class _Builder:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, kind, key=-1, nat=None, wilds=0, suit=-1, pair_rank=-1, wild_at=(), face=-1):
        nat_arr = np.zeros(NUM_RANKS, dtype=np.uint8)
        for r, c in (nat or {}).items():
            nat_arr[r] += c
        wa = list(wild_at) + [-1] * (5 - len(wild_at))
        self.rows.append(
            dict(
                kind=kind,
                key=key,
                nat=nat_arr,
                wilds=wilds,
                suit=suit,
                pair_rank=pair_rank,
                wild_at=wa,
                face=face,
                size=int(nat_arr.sum()) + wilds,
            )
        )


def _build() -> _Builder:
    b = _Builder()
    b.add(PASS)
    # singles: 13 natural ranks + two jokers + the ♥N wildcard played as itself
    for r in range(NUM_RANKS):
        b.add(SINGLE, r, {r: 1})
    b.add(SINGLE, LEVEL_KEY, wilds=1, wild_at=[LEVEL_KEY])
    # pairs: natural, one natural + wildcard, joker pairs, the two wildcards as level pair
    for r in range(NUM_NATURAL_RANKS):
        b.add(PAIR, r, {r: 2})
        b.add(PAIR, r, {r: 1}, wilds=1, wild_at=[r])
    b.add(PAIR, BJ_RANK, {BJ_RANK: 2})
    b.add(PAIR, RJ_RANK, {RJ_RANK: 2})
    b.add(PAIR, LEVEL_KEY, wilds=2, wild_at=[LEVEL_KEY, LEVEL_KEY])
    # triples (no joker triples: only two copies of each joker)
    for r in range(NUM_NATURAL_RANKS):
        for w in range(MAX_WILDS + 1):
            b.add(TRIPLE, r, {r: 3 - w}, wilds=w, wild_at=[r] * w)
    # full houses: triple r (a wilds) + pair p != r (b wilds); a pair of two wildcards is one
    # action per triple rank whatever it stands for (same cards, same comparison)
    for r in range(NUM_NATURAL_RANKS):
        for a in range(MAX_WILDS + 1):
            for p in range(NUM_RANKS):
                if p == r:
                    continue
                for bw in range(MAX_WILDS + 1 - a):
                    if p >= NUM_NATURAL_RANKS and bw:
                        continue  # wildcards never stand for jokers
                    if bw == 2:
                        continue  # handled below, once per (r, a=0)
                    b.add(
                        FULL_HOUSE,
                        r,
                        {r: 3 - a, p: 2 - bw},
                        wilds=a + bw,
                        pair_rank=p,
                        wild_at=[r] * a + [p] * bw,
                    )
        b.add(FULL_HOUSE, r, {r: 3}, wilds=2, pair_rank=-1, wild_at=[LEVEL_KEY, LEVEL_KEY])
    # plain sequences with every wildcard placement
    for kind in (STRAIGHT, THREE_PAIRS, TWO_TRIPLES):
        _add_sequences(b, kind, suit=-1)
    # bombs: 4..10 cards of one natural rank, up to two wildcards, at most 8 naturals
    for r in range(NUM_NATURAL_RANKS):
        for size in range(4, 11):
            for w in range(MAX_WILDS + 1):
                if size - w <= 8:
                    b.add(BOMB, r, {r: size - w}, wilds=w, wild_at=[r] * w)
    for s in range(4):
        _add_sequences(b, STRAIGHT_FLUSH, suit=s)
    b.add(FOUR_JOKERS, -1, {BJ_RANK: 2, RJ_RANK: 2})
    for f in range(NUM_FACES):
        b.rows.append(
            dict(
                kind=RETURN,
                key=-1,
                nat=np.zeros(NUM_RANKS, dtype=np.uint8),
                wilds=0,
                suit=-1,
                pair_rank=-1,
                wild_at=[-1] * 5,
                face=f,
                size=1,
            )
        )
    return b


def _add_sequences(b: _Builder, kind: int, suit: int) -> None:
    width = SEQ_WIDTH[kind]
    for key in seq_keys(kind):
        ranks = seq_ranks(kind, key)
        slots = [r for r in ranks for _ in range(width)]  # one slot per card
        seen: set[tuple] = set()
        for w in range(MAX_WILDS + 1):
            for wild_slots in combinations(range(len(slots)), w):
                nat: dict[int, int] = {}
                for i, r in enumerate(slots):
                    if i not in wild_slots:
                        nat[r] = nat.get(r, 0) + 1
                sig = tuple(sorted(nat.items()))
                if sig in seen:
                    continue  # same natural cards consumed, same comparison: one action
                seen.add(sig)
                b.add(kind, key, nat, wilds=w, suit=suit, wild_at=[slots[i] for i in wild_slots])


_B = _build()
NUM_ACTIONS: int = len(_B.rows)
KIND = np.array([r["kind"] for r in _B.rows], dtype=np.int8)
KEY = np.array([r["key"] for r in _B.rows], dtype=np.int8)
SIZE = np.array([r["size"] for r in _B.rows], dtype=np.int8)
SUIT = np.array([r["suit"] for r in _B.rows], dtype=np.int8)
NAT = np.stack([r["nat"] for r in _B.rows]).astype(np.uint8)
WILDS = np.array([r["wilds"] for r in _B.rows], dtype=np.uint8)
PAIR_RANK = np.array([r["pair_rank"] for r in _B.rows], dtype=np.int8)
WILD_AT = np.array([r["wild_at"] for r in _B.rows], dtype=np.int8)
RETURN_FACE = np.array([r["face"] for r in _B.rows], dtype=np.int8)
del _B

PASS_ACTION = 0
RETURN_BASE = int(np.flatnonzero(KIND == RETURN)[0])
NUM_PLAY_ACTIONS = RETURN_BASE  # ids below RETURN_BASE are pass and plays
IS_BOMB = np.isin(KIND, BOMB_KINDS)
for _arr in (KIND, KEY, SIZE, SUIT, NAT, WILDS, PAIR_RANK, WILD_AT, RETURN_FACE, IS_BOMB):
    _arr.setflags(write=False)


def return_action(face: int) -> int:
    """Action id of handing back ``face`` as the tribute return (R-7.1)."""
    return RETURN_BASE + int(face)


def key_text(action: int, level: int) -> str | None:
    k = int(KEY[action])
    if k < 0:
        return None
    if k == LEVEL_KEY:
        return RANK_TEXT[level]
    return RANK_TEXT[k]


def suit_text(action: int) -> str | None:
    s = int(SUIT[action])
    return SUIT_TEXT[s] if s >= 0 else None
