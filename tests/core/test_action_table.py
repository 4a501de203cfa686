"""The action table (DESIGN.md "The action space", RULES.md R-3): one id per declared
combination, ``NUM_ACTIONS = 2,243``. The count of each kind is derived below from R-2.3,
R-2.5, R-3 and R-3.4, independently of ``actions.py``:

* pass: 1.
* single: 13 natural ranks + BJ + RJ + the ♥N wildcard played alone (a plain level card,
  R-2.3; its own id because it spends the wildcard) = 16.
* pair: 13 natural pairs + 13 "one natural + ♥N" pairs + BJ-BJ + RJ-RJ + ♥N♥N (a plain pair
  of level cards, R-2.3) = 29.
* triple: 13 ranks x 0, 1 or 2 wildcards = 39 (no joker triples: two copies only).
* full house: per triple rank r (13), with a wildcards in the triple and b in the pair
  (a + b <= 2, R-3.4), pair rank p != r among 12 natural ranks and 2 jokers (wildcards
  never stand for jokers, R-2.3):
  a=0: 12 x (b=0 or 1) + 2 joker pairs = 26; a=1: 12 x 2 + 2 = 26; a=2: 12 + 2 = 14; plus
  the two wildcards as the whole pair (one id whatever rank they stand for) = 1;
  67 per rank, 13 x 67 = 871.
* straight: 10 windows (A-2-3-4-5 … T-J-Q-K-A, R-2.5) x wildcard placements over 5 single
  slots: 1 + 5 + C(5,2)=10 -> 16; 10 x 16 = 160.
* three pairs: 12 windows (AA-22-33 … QQ-KK-AA) x placements that differ in the naturals
  spent (2 slots per rank): 0 wild 1; 1 wild 3 ranks; 2 wilds both in one rank 3 or in two
  ranks C(3,2)=3 -> 10; 12 x 10 = 120.
* two triples: 13 windows (AAA-222 … KKK-AAA) x (1 + 2 + (2 + 1)) = 6 -> 78.
* bomb: per rank, sizes 4..10 with 0..2 wildcards and at most 8 naturals (R-3 table):
  sizes 4-8: 3 each = 15, size 9: 2, size 10: 1 -> 18; 13 x 18 = 234.
* straight flush: 4 suits x 10 windows x 16 placements = 640.
* four jokers: 1 (no wildcard, R-3.4).
* return (R-7.1): one per face handed back = 54.

Total 1 + 16 + 29 + 39 + 871 + 160 + 120 + 78 + 234 + 640 + 1 + 54 = 2,243.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from guandan_env import KIND_NAMES, NUM_ACTIONS, declaration_text, describe_action
from guandan_env.core import actions as T
from guandan_env.core.cards import RANK_TEXT

RANKS = RANK_TEXT[:13]
LEVELS = list(RANKS)


def derived_counts() -> dict[str, int]:
    natural, jokers = 13, 2
    full_house_per_rank = 0
    for a in range(3):  # wildcards in the triple
        for b in range(3 - a):  # wildcards in the pair
            if b == 2:
                full_house_per_rank += 1  # ♥N♥N as the pair: one id
                continue
            full_house_per_rank += (natural - 1) + (jokers if b == 0 else 0)
    placements_5 = sum(comb(5, w) for w in range(3))
    three_pairs = 1 + 3 + (3 + comb(3, 2))
    two_triples = 1 + 2 + (2 + 1)
    bombs_per_rank = sum(1 for size in range(4, 11) for w in range(3) if size - w <= 8)
    return {
        "pass": 1,
        "single": natural + jokers + 1,
        "pair": natural + natural + jokers + 1,
        "triple": natural * 3,
        "full_house": natural * full_house_per_rank,
        "straight": 10 * placements_5,
        "three_pairs": 12 * three_pairs,
        "two_triples": 13 * two_triples,
        "bomb": natural * bombs_per_rank,
        "straight_flush": 4 * 10 * placements_5,
        "four_jokers": 1,
        "return": 54,
    }


def test_r3_counts_per_kind():
    """R-3 / DESIGN: counts per kind as derived in the module docstring."""
    want = derived_counts()
    assert want == {
        "pass": 1,
        "single": 16,
        "pair": 29,
        "triple": 39,
        "full_house": 871,
        "straight": 160,
        "three_pairs": 120,
        "two_triples": 78,
        "bomb": 234,
        "straight_flush": 640,
        "four_jokers": 1,
        "return": 54,
    }
    counts = np.bincount(T.KIND, minlength=len(KIND_NAMES)).tolist()
    got = dict(zip(KIND_NAMES, counts, strict=True))
    assert got == want
    assert NUM_ACTIONS == sum(want.values()) == 2243


def test_r3_table_layout():
    """R-3 / R-7.1: pass is id 0; the 54 returns are the last ids, one per face in order."""
    assert T.PASS_ACTION == 0 and T.KIND[0] == T.PASS
    assert T.RETURN_BASE == NUM_ACTIONS - 54 == T.NUM_PLAY_ACTIONS
    assert (T.KIND[T.RETURN_BASE :] == T.RETURN).all()
    assert T.RETURN_FACE[T.RETURN_BASE :].tolist() == list(range(54))
    assert (T.RETURN_FACE[: T.RETURN_BASE] == -1).all()
    assert [T.return_action(f) for f in (0, 53)] == [T.RETURN_BASE, NUM_ACTIONS - 1]
    for arr in (T.KIND, T.KEY, T.SIZE, T.NAT, T.WILDS):
        assert len(arr) == NUM_ACTIONS and not arr.flags.writeable


def _seq_ranks(kind: str, key: str) -> list[str]:
    n = {"straight": 5, "straight_flush": 5, "three_pairs": 3, "two_triples": 2}[kind]
    hi = RANKS.index(key)
    return [RANKS[i % 13] for i in range(hi - n + 1, hi + 1)]  # -1 is the low ace


def check_description(a: int, level: str) -> None:
    d = describe_action(a, level)
    kind = d["kind"]
    assert kind == KIND_NAMES[T.KIND[a]]
    ranks, wilds, size = d["ranks"], d["wilds"], d["size"]
    assert size == sum(ranks.values()) + wilds == int(T.SIZE[a])
    assert 0 <= wilds <= 2 and all(c > 0 for c in ranks.values())
    assert (d["suit"] is not None) == (kind == "straight_flush")
    text = declaration_text(a, level)
    assert text.startswith(kind)
    if kind == "pass":
        assert (d["key"], size) == (None, 0)
    elif kind == "return":
        assert d["key"] is None and size == 1 and d["card"]
        assert text == f"return {d['card']}"
    elif kind == "four_jokers":
        assert d["key"] is None and ranks == {"BJ": 2, "RJ": 2} and wilds == 0
    elif kind in ("single", "pair", "triple", "bomb"):
        assert size == {"single": 1, "pair": 2, "triple": 3}.get(kind, size)
        assert 4 <= size <= 10 or kind != "bomb"
        # one rank: the key's; ♥N alone or as a pair stands for the level rank
        assert set(ranks) <= {d["key"]}
        if not ranks:
            assert d["key"] == level and wilds == size
        assert d["key"] not in ("BJ", "RJ") or wilds == 0
    elif kind == "full_house":
        assert size == 5 and ranks.get(d["key"], 0) + wilds >= 3
        others = set(ranks) - {d["key"]}
        assert len(others) <= 1
    else:  # sequences: naturals inside the window, wildcards fill the rest
        window = _seq_ranks(kind, d["key"])
        width = {"straight": 1, "straight_flush": 1, "three_pairs": 2, "two_triples": 3}[kind]
        assert size == len(window) * width
        assert all(r in window and c <= width for r, c in ranks.items())
        assert "BJ" not in ranks and "RJ" not in ranks


def parse_level(level: str) -> int:
    return LEVELS.index(level)


@pytest.mark.parametrize("level", ["2", "7", "A"])
def test_describe_action_is_consistent_for_every_id(level):
    """R-3: every id describes a well-formed declaration (kind, key, size, suit, natural
    ranks, wildcards) and prints as that kind."""
    for a in range(NUM_ACTIONS):
        check_description(a, level)


def signature(a: int, level: str) -> tuple:
    d = describe_action(a, level)
    return (
        d["kind"],
        d["key"],
        d["size"],
        d["suit"],
        tuple(sorted(d["ranks"].items())),
        d["wilds"],
    )


def test_no_two_play_ids_share_a_declaration_at_any_level():
    """R-3 / DESIGN: one id is one declared combination: at every level, no two play ids
    (pass included) share (kind, key, size, suit, ranks, wilds); returns name 54 faces."""
    for level in LEVELS:
        seen: dict[tuple, int] = {}
        for a in range(T.RETURN_BASE):
            sig = signature(a, level)
            assert sig not in seen, (level, sig, seen.get(sig), a)
            seen[sig] = a
        returns = {describe_action(a, level)["card"] for a in range(T.RETURN_BASE, NUM_ACTIONS)}
        assert len(returns) == 54
