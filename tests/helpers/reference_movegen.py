"""Slow, independent reference move generator for Guandan, derived from RULES.md only.

This module deliberately shares no code with ``guandan_env``: it re-derives the legal
declared combinations of a hand straight from the normative rule text
(/work/shared/RULES.md, rule ids R-…) so that comparing it with the fast, table-driven
generator finds bugs in either.

Canonical form of one declared combination (hashable tuple)::

    (kind, key, size, suit, ranks, wilds)

* ``kind``  -- ``single pair triple full_house straight three_pairs two_triples bomb
  straight_flush four_jokers`` or ``pass``.
* ``key``   -- rank text compared: the rank for single/pair/triple/bomb, the triple's rank
  for a full house, the highest *natural* rank for sequences (A-2-3-4-5 -> ``5``,
  AA-22-33 -> ``3``, AAA-222 -> ``2``, 10-J-Q-K-A -> ``A``); ``None`` for four jokers
  and pass.  A lone ♥N, or the two ♥N as a pair, have key N (R-2.3).
* ``size``  -- number of physical cards played.
* ``suit``  -- suit letter for straight flushes, else ``None``.
* ``ranks`` -- sorted tuple of ``(rank, count)`` of NATURAL cards consumed (the ♥N
  wildcards are never counted here, whatever they stand for).
* ``wilds`` -- number of ♥N wildcards consumed.

Enumeration is per combination type and per key / wildcard placement (never over subsets
of physical cards), so a 27-card hand takes a few milliseconds.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter

# ---------------------------------------------------------------------------------------
# Cards
# ---------------------------------------------------------------------------------------
SUITS = "SHCD"
RANKS = "23456789TJQKA"  # natural order of suited ranks
JOKERS = ("BJ", "RJ")  # small joker, big joker
ALL_RANKS = tuple(RANKS) + JOKERS  # order used to sort the ``ranks`` field
NAT_INDEX = {r: i for i, r in enumerate(ALL_RANKS)}

PASS = ("pass", None, 0, None, (), 0)
BOMB_KINDS = frozenset({"bomb", "straight_flush", "four_jokers"})
SEQUENCE_KINDS = frozenset({"straight", "three_pairs", "two_triples", "straight_flush"})
LEVEL_ORDER_KINDS = frozenset({"single", "pair", "triple", "full_house", "bomb"})
PLAY_KINDS = (
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
)

_SUIT_ALIASES = {
    "S": "S",
    "H": "H",
    "C": "C",
    "D": "D",
    "♠": "S",
    "♥": "H",
    "♣": "C",
    "♦": "D",
    "♤": "S",
    "♡": "H",
    "♧": "C",
    "♢": "D",
}


def _norm_rank(text: str) -> str:
    t = text.upper()
    if t == "10":
        return "T"
    if len(t) == 1 and t in RANKS:
        return t
    raise ValueError(f"bad rank {text!r}")


def parse_card(token: str) -> str:
    """One card token -> canonical face text (``S3``, ``HT``, ``BJ``, ``RJ``). R-1.4."""
    tok = token.strip()
    up = tok.upper()
    if up in JOKERS:
        return up
    if len(tok) < 2 or tok[0].upper() not in _SUIT_ALIASES and tok[0] not in _SUIT_ALIASES:
        raise ValueError(f"bad card {token!r}")
    suit = _SUIT_ALIASES.get(tok[0], _SUIT_ALIASES.get(tok[0].upper()))
    return suit + _norm_rank(tok[1:])


def parse_hand(text) -> Counter:
    """Space (or comma) separated card text -> Counter of faces. At most 2 copies (R-1.2)."""
    if isinstance(text, str):
        tokens = text.replace(",", " ").split()
    else:
        tokens = list(text)
    faces = Counter(parse_card(t) for t in tokens)
    for face, n in faces.items():
        if n > 2:
            raise ValueError(f"{n} copies of {face}: a 108-card deck has only 2 (R-1.2)")
    return faces


def level_rank(level) -> str:
    """Level given as text ``2``…``A`` (``10`` accepted)."""
    return _norm_rank(str(level))


# ---------------------------------------------------------------------------------------
# Orders
# ---------------------------------------------------------------------------------------
@functools.cache
def _level_order(level: str) -> dict:
    """Level order: 2<…<K<A with N taken out, then N, small joker, big joker (R-2.4)."""
    order = [r for r in RANKS if r != level] + [level, "BJ", "RJ"]
    return {r: i for i, r in enumerate(order)}


def level_value(rank: str, level: str) -> int:
    return _level_order(level_rank(level))[rank]


def bomb_strength(m: tuple, level: str) -> tuple:
    """R-4: 4-card < 5-card < straight flush < 6 < 7 < 8 < 9 < 10-card < four jokers."""
    kind, key, size = m[0], m[1], m[2]
    if kind == "four_jokers":
        return (8, 0)
    if kind == "straight_flush":
        return (2, NAT_INDEX[key])  # suits never break ties
    if kind == "bomb":
        cls = {4: 0, 5: 1}.get(size, size - 3)  # 6->3 … 10->7
        return (cls, level_value(key, level))
    raise ValueError(f"not a bomb: {m!r}")


def beats(a: tuple, b: tuple, level: str) -> bool:
    """Does play ``a`` beat play ``b`` on the table (R-5.2, R-4)?"""
    if a[0] == "pass" or b[0] == "pass":
        return False
    a_bomb, b_bomb = a[0] in BOMB_KINDS, b[0] in BOMB_KINDS
    if a_bomb:
        if not b_bomb:
            return True  # any bomb beats any non-bomb
        return bomb_strength(a, level) > bomb_strength(b, level)
    if b_bomb or a[0] != b[0]:
        return False
    if a[0] in SEQUENCE_KINDS:  # natural order of the highest natural rank
        return NAT_INDEX[a[1]] > NAT_INDEX[b[1]]
    return level_value(a[1], level) > level_value(b[1], level)


def canonical(desc: dict) -> tuple:
    """describe_action(...) dict -> canonical tuple."""
    ranks = desc.get("ranks") or {}
    if not isinstance(ranks, dict):
        ranks = dict(ranks)
    key = desc.get("key")
    suit = desc.get("suit")
    return (
        str(desc["kind"]),
        None if key is None else str(key),
        int(desc["size"]),
        None if suit is None else str(suit),
        tuple(
            sorted(
                ((str(r), int(c)) for r, c in ranks.items() if int(c) > 0),
                key=lambda rc: NAT_INDEX[rc[0]],
            )
        ),
        int(desc.get("wilds") or 0),
    )


def _mk(kind, key, size, suit, counts: dict, wilds: int) -> tuple:
    ranks = tuple(
        sorted(((r, c) for r, c in counts.items() if c > 0), key=lambda rc: NAT_INDEX[rc[0]])
    )
    assert sum(c for _, c in ranks) + wilds == size, (kind, key, size, ranks, wilds)
    return (kind, key, size, suit, ranks, wilds)


def _window(high_index: int, length: int) -> list:
    """Natural ranks of a sequence of ``length`` ranks whose highest is RANKS[high_index].
    Index -1 is the ace played low (A-2-3-4-5, AA-22-33, AAA-222 only; R-2.5)."""
    return [RANKS[i] for i in range(high_index - length + 1, high_index + 1)]


# sequences: (kind, ranks in window, cards per rank, lowest allowed high index)
#   straight     5 ranks x1, highs 5..A   (A-2-3-4-5 lowest, 10-J-Q-K-A highest)
#   three_pairs  3 ranks x2, highs 3..A   (AA-22-33 lowest, QQ-KK-AA highest)
#   two_triples  2 ranks x3, highs 2..A   (AAA-222 lowest, KKK-AAA highest)
_SEQUENCES = (("straight", 5, 1), ("three_pairs", 3, 2), ("two_triples", 2, 3))


# ---------------------------------------------------------------------------------------
# Enumeration
# ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _all_plays(faces_key: tuple, level: str) -> frozenset:
    faces = dict(faces_key)
    wild_face = "H" + level
    W = faces.get(wild_face, 0)  # ♥N wildcards in hand

    # natural copies per (suit, rank) -- the ♥N cards are wildcards, never naturals here
    suit_cnt = {}
    for s in SUITS:
        for r in RANKS:
            suit_cnt[s, r] = 0 if (s + r) == wild_face else faces.get(s + r, 0)
    nat = {r: sum(suit_cnt[s, r] for s in SUITS) for r in RANKS}
    for j in JOKERS:
        nat[j] = faces.get(j, 0)

    out = set()
    add = out.add

    # --- single (R-3 table; lone ♥N is a plain level card, R-2.3)
    for r in ALL_RANKS:
        if nat[r] >= 1:
            add(_mk("single", r, 1, None, {r: 1}, 0))
    if W >= 1:
        add(_mk("single", level, 1, None, {}, 1))

    # --- pair: two of one rank; BJ BJ / RJ RJ; ♥N + any non-joker takes its rank;
    #     ♥N ♥N is a plain pair of level cards
    for r in ALL_RANKS:
        if nat[r] >= 2:
            add(_mk("pair", r, 2, None, {r: 2}, 0))
    if W >= 1:
        for r in RANKS:
            if nat[r] >= 1:
                add(_mk("pair", r, 2, None, {r: 1}, 1))
    if W >= 2:
        add(_mk("pair", level, 2, None, {}, 2))

    # --- triple: 3 of one (non-joker) rank, wildcards fill gaps
    triple_opts = {}  # rank -> [(naturals, wilds)]
    for r in RANKS:
        opts = [(3 - w, w) for w in range(0, min(W, 2) + 1) if nat[r] >= 3 - w]
        triple_opts[r] = opts
        for c, w in opts:
            add(_mk("triple", r, 3, None, {r: c}, w))

    # --- full house: triple + pair of a different rank; pair may be a joker pair;
    #     inside a 5-card play two ♥N may form the pair standing for any other rank
    for t in RANKS:
        for ct, wt in triple_opts[t]:
            rem = W - wt
            for p in RANKS:
                if p == t:
                    continue  # 5 of one rank is a bomb, never a FH
                if nat[p] >= 2:
                    add(_mk("full_house", t, 5, None, {t: ct, p: 2}, wt))
                if nat[p] >= 1 and rem >= 1:
                    add(_mk("full_house", t, 5, None, {t: ct, p: 1}, wt + 1))
            for j in JOKERS:
                if nat[j] >= 2:
                    add(_mk("full_house", t, 5, None, {t: ct, j: 2}, wt))
            if rem >= 2:  # wild pair (stands for some rank != t)
                add(_mk("full_house", t, 5, None, {t: ct}, wt + 2))

    # --- straight / three pairs / two triples (natural order, R-2.5, R-3.1)
    for kind, length, per in _SEQUENCES:
        lowest_high = length - 2  # index of the high card when A is low
        for hi in range(lowest_high, len(RANKS)):
            window = _window(hi, length)
            key = RANKS[hi]
            choices = [range(max(0, per - W), min(per, nat[r]) + 1) for r in window]
            for counts in itertools.product(*choices):
                w = length * per - sum(counts)
                if w > W:
                    continue
                if kind == "straight" and w == 0 and not _plain_straight_ok(window, suit_cnt):
                    continue  # five naturals of one suit: SF only
                add(_mk(kind, key, length * per, None, dict(zip(window, counts, strict=True)), w))

    # --- straight flush: a straight in one suit; a wildcard may take any suit
    for s in SUITS:
        for hi in range(3, len(RANKS)):
            window = _window(hi, 5)
            choices = [range(max(0, 1 - W), min(1, suit_cnt[s, r]) + 1) for r in window]
            for counts in itertools.product(*choices):
                w = 5 - sum(counts)
                if w > W:
                    continue
                counts_by_rank = dict(zip(window, counts, strict=True))
                add(_mk("straight_flush", RANKS[hi], 5, s, counts_by_rank, w))

    # --- bomb: 4..10 cards of one non-joker rank (R-3 table, R-3.4)
    for r in RANKS:
        for w in range(0, W + 1):
            for c in range(max(0, 4 - w), nat[r] + 1):
                if 4 <= c + w <= 10:
                    add(_mk("bomb", r, c + w, None, {r: c}, w))

    # --- four jokers: both small and both big jokers, never a wildcard
    if nat["BJ"] >= 2 and nat["RJ"] >= 2:
        add(_mk("four_jokers", None, 4, None, {"BJ": 2, "RJ": 2}, 0))

    return frozenset(out)


def _plain_straight_ok(window, suit_cnt) -> bool:
    """Can one natural card per rank be picked, NOT all of one suit? (R-3.3)

    Only impossible when every rank of the window is available in exactly one suit and
    that suit is the same for all five ranks."""
    only = set()
    for r in window:
        suits = [s for s in SUITS if suit_cnt[s, r] > 0]
        if len(suits) != 1:
            return True  # (len 0 cannot happen: caller checked counts)
        only.add(suits[0])
    return len(only) > 1


def _faces_key(hand) -> tuple:
    faces = hand if isinstance(hand, Counter) else parse_hand(hand)
    return tuple(sorted((f, n) for f, n in faces.items() if n > 0))


def all_plays(hand, level) -> frozenset:
    """Every combination the hand can form (no pass)."""
    return _all_plays(_faces_key(hand), level_rank(level))


def reference_moves(hand, level, last: tuple | None = None) -> set:
    """Legal moves as canonical tuples.

    Leading (``last is None``): every combination the hand can form, never a pass (R-5.1).
    Following: pass plus every combination that beats ``last`` (R-5.2, R-4)."""
    lvl = level_rank(level)
    plays = all_plays(hand, lvl)
    if last is None:
        return set(plays)
    if last[0] == "pass":
        raise ValueError("the play on the table cannot be a pass")
    moves = {m for m in plays if beats(m, last, lvl)}
    moves.add(PASS)
    return moves


__all__ = [
    "parse_hand",
    "parse_card",
    "reference_moves",
    "all_plays",
    "beats",
    "canonical",
    "bomb_strength",
    "level_value",
    "PASS",
    "PLAY_KINDS",
    "BOMB_KINDS",
    "SEQUENCE_KINDS",
    "NAT_INDEX",
    "ALL_RANKS",
    "RANKS",
    "SUITS",
]
