"""Internal consistency of the fast move generator's pieces and of the strength module
(R-4, R-5.2): every user of the bomb order reads ``guandan_env.core.strength``."""

from __future__ import annotations

import numpy as np
import pytest

from guandan_env.core import actions as T
from guandan_env.core import movegen, strength
from guandan_env.core.cards import full_deck, level_rank_value

_BOMB_TIER = {4: 1, 5: 2, 6: 4, 7: 5, 8: 6, 9: 7, 10: 8}


def strength_loop(level: int) -> tuple[np.ndarray, np.ndarray]:
    """R-4 bomb order and comparison values, stated as a plain loop over the table."""
    value = np.zeros(T.NUM_ACTIONS, dtype=np.int16)
    power = np.zeros(T.NUM_ACTIONS, dtype=np.int16)
    for a in range(T.NUM_ACTIONS):
        kind, key = int(T.KIND[a]), int(T.KEY[a])
        if kind in (T.PASS, T.RETURN, T.FOUR_JOKERS):
            v = 0
        elif key == T.LEVEL_KEY:
            v = level_rank_value(level, level)
        elif kind in T.SEQUENCE_KINDS:
            v = key
        else:
            v = level_rank_value(key, level)
        value[a] = v
        if kind == T.BOMB:
            power[a] = _BOMB_TIER[int(T.SIZE[a])] * 16 + v + 1
        elif kind == T.STRAIGHT_FLUSH:
            power[a] = 3 * 16 + v + 1
        elif kind == T.FOUR_JOKERS:
            power[a] = 9 * 16 + 1
    return value, power


@pytest.mark.parametrize("level", range(13))
def test_r4_strength_arrays_match_plain_loop(level):
    v, p = strength.strength_arrays(level)
    v2, p2 = strength_loop(level)
    assert np.array_equal(v, v2) and np.array_equal(p, p2)


def _hands(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 54), dtype=np.uint8)
    for i in range(n):
        np.add.at(out[i], rng.permutation(full_deck())[: rng.integers(1, 28)], 1)
    return out


@pytest.mark.parametrize("level", [0, 5, 12])
def test_r5_2_follow_slices_equal_full_beats_rows(level):
    rng = np.random.default_rng(level)
    for hand in _hands(level, 60):
        lead = movegen.lead_mask(hand, level)
        for last in rng.integers(1, T.RETURN_BASE, 30):
            expected = lead & movegen.beats_row(level, int(last))
            expected[T.PASS_ACTION] = True
            assert np.array_equal(movegen.follow_mask(hand, level, int(last)), expected)


def test_batch_masks_equal_single_hand_masks():
    hands = _hands(7, 200)
    rng = np.random.default_rng(7)
    levels = rng.integers(0, 13, 200)
    lasts = np.where(rng.random(200) < 0.5, -1, rng.integers(1, T.RETURN_BASE, 200))
    batch = movegen.batch_play_mask(hands, levels, lasts)
    for i in range(200):
        last = None if lasts[i] < 0 else int(lasts[i])
        assert np.array_equal(batch[i], movegen.play_mask(hands[i], int(levels[i]), last))


@pytest.mark.parametrize("level", [0, 5, 12])
def test_r4_listing_order_and_split_costs_follow_the_bomb_order(level):
    """The terminal player's listing (``action_sort_key``) and the hand split's play costs
    rank bombs as R-4 does: a stronger bomb lists later and costs no more to hold."""
    from agents.hand_split import play_cost

    _, power = strength.strength_arrays(level)
    bombs = np.flatnonzero(power > 0)
    listed = sorted(bombs, key=lambda a: strength.action_sort_key(int(a), level))
    assert np.all(np.diff(power[listed]) >= 0)
    nonbomb = np.flatnonzero((power == 0) & (T.KIND != T.PASS) & (T.KIND != T.RETURN))
    last_nonbomb = max(strength.action_sort_key(int(a), level) for a in nonbomb)
    assert all(strength.action_sort_key(int(a), level) > last_nonbomb for a in bombs)
    tier = {int(a): strength.bomb_tier(int(T.KIND[a]), int(T.SIZE[a])) for a in bombs}
    assert all(int(power[a]) // strength.POWER_PER_TIER == t for a, t in tier.items())
    by_tier = sorted(set(tier.values()))
    costs = []
    for t in by_tier:
        a = next(a for a, tt in tier.items() if tt == t)
        kind, size = int(T.KIND[a]), int(T.SIZE[a])
        costs.append(play_cost(kind, 0, size))
    assert costs == sorted(costs, reverse=True), costs  # 4 < 5 < sf < 6 ... < four jokers
    assert int(power.max()) < strength.POWER_SCALE
