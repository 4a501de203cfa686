"""Hand splitting (``agents.hand_split``): sequences, full houses, wildcards, legal leads."""

from __future__ import annotations

import numpy as np
import pytest

from agents.hand_split import best_split, component_action, rank_state, split_cost
from guandan_env.core import actions as T
from guandan_env.core import movegen
from guandan_env.core.cards import parse_hand, parse_rank
from guandan_env.core.text import action_text


# ------------------------------------------------------------------------------ hand split
def _split(text: str, level: str = "2") -> list[str]:
    lv = parse_rank(level)
    _, comps = best_split(rank_state(parse_hand(text), lv), lv)
    return sorted(action_text(component_action(c), lv) for c in comps)


def test_split_finds_sequences_and_full_houses():
    assert _split("S3 H4 C5 D6 S7") == ["straight 3-4-5-6-7"]
    assert _split("S3 H3 C4 D4 S5 H5") == ["three_pairs 33-44-55"]
    assert _split("S9 H9 C9 SK HK") == ["full_house 999-KK"]
    assert _split("S8 H8 C8 D8") == ["bomb 8x4"]
    assert _split("BJ BJ RJ RJ") == ["four_jokers BJ-BJ-RJ-RJ"]


def test_split_uses_wildcards_where_they_save_plays():
    # at level 2 the two H2 are wildcards: 3-4-_-6-7 becomes one straight
    assert _split("S3 C4 D6 S7 H2") == ["straight 3-4-5-6-7 (1 wild)"]
    # a wildcard joins a lone card rather than stay a second play
    assert _split("S3 H2") == ["pair 33 (1 wild)"]
    # two wildcards turn a triple into a 5-card bomb
    assert _split("S3 D3 C3 S9 D9 H2 H2") == ["bomb 3x5 (2 wild)", "pair 99"]


def test_split_components_are_legal_leads():
    rng = np.random.default_rng(0)
    deck = np.repeat(np.arange(54), 2)
    for _ in range(30):
        cards = rng.permutation(deck)[: rng.integers(5, 28)]
        hand = np.bincount(cards, minlength=54).astype(np.uint8)
        level = int(rng.integers(13))
        cost, comps = best_split(rank_state(hand, level), level)
        mask = movegen.lead_mask(hand, level)
        used = np.zeros(15, dtype=np.int64)
        wilds = 0
        for c in comps:
            a = component_action(c)
            assert a > 0
            used += T.NAT[a]
            wilds += int(T.WILDS[a])
            if T.KIND[a] != T.STRAIGHT:  # a one-suit plain straight is illegal
                assert mask[a], action_text(a, level)
        c13, bj, rj, w = rank_state(hand, level)
        assert used.tolist() == [*c13, bj, rj] and wilds == w
        assert cost == pytest.approx(split_cost(rank_state(hand, level), level))


def test_split_search_is_unchanged_on_3000_seeded_hands():
    """The splits (cost and components, in order) of 3,000 seeded random hands, all sizes
    and levels, equal those of the search before it skipped unfillable windows and empty
    ranks without a memo entry (commit 00efa97): the speed-up left the heuristic's play as
    it was."""
    import hashlib
    import json

    from guandan_env.core.cards import COPIES, HAND_SIZE, NUM_FACES, NUM_NATURAL_RANKS

    rng = np.random.default_rng(20261207)
    deck = np.repeat(np.arange(NUM_FACES), COPIES)
    digest = hashlib.sha256()
    for _ in range(3000):
        size = int(rng.integers(1, HAND_SIZE + 1))
        level = int(rng.integers(NUM_NATURAL_RANKS))
        hand = np.bincount(rng.choice(deck, size, replace=False), minlength=NUM_FACES)
        cost, comps = best_split(rank_state(hand, level), level)
        digest.update(json.dumps([round(cost, 9), comps]).encode())
    assert digest.hexdigest() == (
        "64ef6bcdeecc89bcd769e43f5ac65a59161f6dd3b53bd9bac665cf0bae4cbebf"
    )
