"""``guandan_env.encoding.level_relative``: plays and cards mapped to the ones with the same
role at level A, where level order is natural order (R-2.4); sequences stay in natural order
at every level (R-2.5). The checks are independent of how the tables are built: what beats
what, the kinds, sizes and wildcards, and the cards' places in level order."""

from __future__ import annotations

import numpy as np
import pytest

from guandan_env.core import actions as T
from guandan_env.core.cards import FACE_RANK, FACE_SUIT, NUM_FACES, NUM_NATURAL_RANKS, NUM_RANKS
from guandan_env.core.strength import LEVEL_VALUE, beats_matrix, strength_arrays
from guandan_env.encoding.level_relative import level_relative_card_bits, level_relative_ids
from guandan_env.encoding.obs_layout import CARD_BITS, CARDS_END, NUM_CARD_SETS

LEVEL_A = NUM_NATURAL_RANKS - 1
REL = level_relative_ids()


def test_each_level_is_a_permutation_and_level_a_the_identity():
    assert REL.shape == (NUM_NATURAL_RANKS, T.NUM_ACTIONS) and REL.dtype == np.int64
    ids = np.arange(T.NUM_ACTIONS)
    for level in range(NUM_NATURAL_RANKS):
        assert np.array_equal(np.sort(REL[level]), ids)
    assert np.array_equal(REL[LEVEL_A], ids)
    assert not REL.flags.writeable


@pytest.mark.parametrize("level", range(NUM_NATURAL_RANKS))
def test_what_beats_what_at_a_level_is_what_beats_what_at_level_a_after_the_map(level):
    """R-2.4, R-2.5, R-4, R-5.2: the map carries the level's whole beats relation onto level
    A's, so a play keeps every answer it has and every play it answers."""
    rel = REL[level]
    assert np.array_equal(beats_matrix(level), beats_matrix(LEVEL_A)[np.ix_(rel, rel)])
    value, power = strength_arrays(level)
    value_a, power_a = strength_arrays(LEVEL_A)
    assert np.array_equal(value, value_a[rel]) and np.array_equal(power, power_a[rel])


@pytest.mark.parametrize("level", range(NUM_NATURAL_RANKS))
def test_a_mapped_play_keeps_its_kind_size_wildcards_and_the_places_of_its_cards(level):
    rel = REL[level]
    for col in (T.KIND, T.SIZE, T.WILDS, T.SUIT):
        assert np.array_equal(col, col[rel])
    seq = np.isin(T.KIND, (*T.SEQUENCE_KINDS, T.PASS, T.FOUR_JOKERS))
    # sequences (natural order, R-2.5), pass and four jokers keep their id
    assert np.array_equal(rel[seq], np.flatnonzero(seq))
    # every other play: the naturals of rank r become naturals of the rank at r's place in
    # the level's order (the level rank to A's place, R-2.4)
    place = LEVEL_VALUE[level].astype(np.intp)
    moved = np.zeros((T.NUM_ACTIONS, NUM_RANKS), dtype=np.uint8)
    moved[:, place] = T.NAT
    assert np.array_equal(moved[~seq], T.NAT[rel][~seq])


def test_a_pair_of_2s_at_level_2_has_the_role_of_a_pair_of_aces_at_level_a():
    def natural_pair(rank: int) -> int:
        (a,) = np.flatnonzero((T.KIND == T.PAIR) & (T.NAT[:, rank] == 2) & (T.WILDS == 0))
        return int(a)

    assert REL[0][natural_pair(0)] == natural_pair(LEVEL_A)  # the highest natural pair
    assert REL[0][natural_pair(1)] == natural_pair(0)  # 3s: the lowest, as 2s at level A
    assert REL[5][natural_pair(3)] == natural_pair(3)  # below the level rank: in place


def test_card_bits_move_to_the_face_of_the_same_suit_at_the_ranks_place_in_level_order():
    """R-2.4: at level L a card of rank r plays the role of the card of the same suit whose
    rank is r's place in L's order at level A (the level rank: an ace's); jokers stay, and
    each card set and copy bit keeps its own."""
    bits = level_relative_card_bits()
    assert bits.shape == (NUM_NATURAL_RANKS, CARDS_END) and not bits.flags.writeable
    assert np.array_equal(bits[LEVEL_A], np.arange(CARDS_END))
    for level in range(NUM_NATURAL_RANKS):
        place = LEVEL_VALUE[level]
        for card_set in range(NUM_CARD_SETS):
            for face in range(NUM_FACES):
                for copy in (0, 1):
                    b = card_set * CARD_BITS + face * 2 + copy
                    to = bits[level, b]
                    assert to // CARD_BITS == card_set and to % 2 == copy
                    moved = (to % CARD_BITS) // 2
                    assert FACE_SUIT[moved] == FACE_SUIT[face]
                    if face < 52:
                        assert FACE_RANK[moved] == place[FACE_RANK[face]]
                    else:
                        assert moved == face  # jokers
        assert np.array_equal(np.sort(bits[level]), np.arange(CARDS_END))
