"""The AEC engine's one-table fast paths equal the general batched ones.

* Observation (R-8): ``observation.encode_game`` (scalar Python, used by the AEC env) equals
  ``observation.encode(table_state([game]), seats)`` (batched, used by the vector env) for every
  seat at every decision of random deals — with single and double tribute, resistance,
  returns and finished deals among them.
* Masks (R-3, R-4, R-5.1, R-5.2): ``vector_mask.play_mask_one`` (bit-packed rows, the
  engine's and ``legal_actions``' path) equals ``movegen.lead_mask`` / ``follow_mask`` (atom
  gather) on random hands with 0, 1 and 2 ♥N wildcards at all 13 levels, leading and
  following; ``merged_index_one`` equals the batched ``merged_index``.
* ``Game.legal_mask`` caches per hand: any change of a hand (play, tribute, return, or an
  edit from outside) is seen.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from guandan_env.core import actions as T
from guandan_env.core import movegen, vector_mask
from guandan_env.core.cards import HEARTS, NUM_FACES, RJ_FACE, full_deck
from guandan_env.core.engine import Game
from guandan_env.core.table_state import table_state
from guandan_env.encoding.observation import encode, encode_game

LEVELS = range(13)
HANDS_PER_LEVEL = 300


def random_hand(rng: np.random.Generator, level: int, wilds: int) -> np.ndarray:
    """A hand of 1..27 cards (a quarter full) holding exactly ``wilds`` ♥N of ``level``."""
    wild = level * 4 + HEARTS
    deck = full_deck()
    deck = deck[deck != wild]
    size = 27 if rng.random() < 0.25 else int(rng.integers(1, 27))
    hand = np.bincount(rng.permutation(deck)[: max(size - wilds, 0)], minlength=NUM_FACES)
    hand[wild] = wilds
    return hand.astype(np.uint8)


@pytest.mark.parametrize("level", LEVELS)
def test_r5_single_hand_packed_masks_equal_atom_masks(level):
    rng = np.random.default_rng(1000 + level)
    plays = np.flatnonzero(movegen._PLAY_NO_PASS)
    for i in range(HANDS_PER_LEVEL):
        hand = random_hand(rng, level, wilds=i % 3)
        lead = movegen.lead_mask(hand, level)
        assert np.array_equal(vector_mask.play_mask_one(hand, level, -1), lead)
        assert vector_mask.merged_index_one(hand, level) == (
            vector_mask.merged_index(hand[None], np.array([level]))[0].tolist()
        )
        # follow a legal lead of another hand and a uniformly random play id
        other = random_hand(rng, level, wilds=int(rng.integers(3)))
        lasts = [int(rng.choice(np.flatnonzero(movegen.lead_mask(other, level)))), 0]
        lasts[1] = int(rng.choice(plays))
        for last in lasts:
            fast = vector_mask.play_mask_one(hand, level, last)
            assert np.array_equal(fast, movegen.follow_mask(hand, level, last)), (level, last)
            assert fast[T.PASS_ACTION]


def test_batched_state_never_writes_into_its_input():
    """Regression: a contiguous batch of one hand was a view whose ♥N column was zeroed."""
    hand = random_hand(np.random.default_rng(5), 3, wilds=2)[None]
    before = hand.copy()
    vector_mask.merged_index(hand, np.array([3]))
    vector_mask.play_masks_packed(hand, np.array([3]), np.array([-1]))
    assert np.array_equal(hand, before)


def _give_big_joker(hands: np.ndarray, to: int, rng: np.random.Generator) -> None:
    """Swap one big joker held elsewhere for a random other card of seat ``to``."""
    holder = next(s for s in range(4) if s != to and hands[s, RJ_FACE] > 0)
    card = int(rng.choice(np.flatnonzero(hands[to, :RJ_FACE])))
    hands[holder, RJ_FACE] -= 1
    hands[holder, card] += 1
    hands[to, card] -= 1
    hands[to, RJ_FACE] += 1


def _random_deal(rng: np.random.Generator, seed: int) -> Game:
    """A deal at random levels after a random finishing order, so tribute happens; every
    fourth deal hands the giver(s) both big jokers, so tribute is resisted (R-7.3)."""
    g = Game.new(seed=seed)
    g.levels = [int(rng.integers(13)), int(rng.integers(13))]
    g.leveling_team = int(rng.integers(2))
    g.a_failures = [int(rng.integers(3)), int(rng.integers(3))]
    order = [int(s) for s in rng.permutation(4)]
    hands = None
    if seed % 4 == 0:
        seat_of_card = np.repeat(np.arange(4), 27)
        deal = seat_of_card * NUM_FACES + rng.permutation(full_deck())
        hands = np.bincount(deal, minlength=4 * NUM_FACES).reshape(4, NUM_FACES)
        double = order[0] % 2 == order[1] % 2
        givers = [order[2], order[3]] if double else [order[3], order[3]]
        for giver in givers:
            if hands[giver, RJ_FACE] < 2 and hands[:, RJ_FACE].sum() - hands[giver, RJ_FACE]:
                _give_big_joker(hands, giver, rng)
        hands = hands.astype(np.uint8)
    g.start_deal(hands=hands, previous_order=order)
    return g


def test_r8_scalar_observation_equals_batched_encoder_at_every_decision():
    rng = np.random.default_rng(2024)
    seen = Counter()
    for seed in range(40):
        g = _random_deal(rng, seed)
        seen["resisted"] += g.resisted
        seen["double tribute"] += len(g.tributes) == 2
        seen["single tribute"] += len(g.tributes) == 1
        while True:
            seen[g.phase] += 1
            for seat in range(4):
                fast = encode_game(g, seat)
                assert fast.dtype == np.float32
                np.testing.assert_array_equal(fast, encode(table_state([g]), np.array([seat]))[0])
            if g.deal_over:
                break
            mask = g.legal_mask()
            legal = np.flatnonzero(mask)
            g.step(int(legal[rng.integers(legal.size)]), mask)
    for what in ("resisted", "double tribute", "single tribute", "return", "play", "deal_over"):
        assert seen[what] > 0, f"no {what} state was checked: {dict(seen)}"


def test_engine_mask_cache_follows_hand_changes():
    g = Game.new(seed=3)
    g.start_deal()
    seat = g.to_act
    before = g.legal_mask()
    assert np.array_equal(before, movegen.lead_mask(g.hands[seat], g.level))
    # edit the hand from outside: the cached rows must not be reused
    faces = np.flatnonzero(g.hands[seat])
    g.hands[seat, faces[: len(faces) // 2]] = 0
    assert np.array_equal(g.legal_mask(), movegen.lead_mask(g.hands[seat], g.level))
    g.level = (g.level + 1) % 13  # a level change, too
    assert np.array_equal(g.legal_mask(), movegen.lead_mask(g.hands[seat], g.level))


def _windows_broken(counts: list[int], face: int, wilds: int, wild_face: int) -> int:
    """Readable oracle of ``choice.sf_loss``: count, window by window, the straight flushes
    in the face's suit through its rank that the wildcards complete exactly now (removing the
    face's single copy would break them)."""
    if counts[face] != 1 or face >= 52 or face == wild_face:
        return 0
    r, s = divmod(face, 4)
    broken = 0
    for key in T.seq_keys(T.STRAIGHT_FLUSH):
        ranks = T.seq_ranks(T.STRAIGHT_FLUSH, key)
        if r not in ranks:
            continue
        missing = sum(1 for q in ranks if q * 4 + s == wild_face or counts[q * 4 + s] == 0)
        broken += missing == wilds
    return broken


@pytest.mark.parametrize("level", LEVELS)
def test_r3_3_straight_flush_loss_table_equals_window_count(level):
    """The loss table card choice reads (``choice.LOSS``, scalar and batched) equals a
    window-by-window count on random hands with 0, 1 and 2 wildcards (DESIGN.md: suits)."""
    from guandan_env.core.choice import sf_loss

    rng = np.random.default_rng(500 + level)
    wild = level * 4 + HEARTS
    for k in range(HANDS_PER_LEVEL):
        wilds = k % 3
        hand = random_hand(rng, level, wilds).tolist()
        for face in range(RJ_FACE + 1):
            want = _windows_broken(hand, face, wilds, wild)
            assert sf_loss(hand, face, wilds, wild) == want, (level, hand, face)
