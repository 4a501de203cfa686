"""Strength of plays: the one definition of bomb order and of which play beats which.

* Level order of single cards and ranks (R-2.4) is ``cards.level_rank_value`` /
  ``cards.level_key``; everything here builds on it, as one table ``LEVEL_VALUE``.
* Per action, ``strength_arrays(level)`` gives ``value`` (the order within one non-bomb kind:
  level order for single/pair/triple/full house, natural order for sequences) and
  ``power`` (0 for non-bombs; bombs by R-4: tier, then rank).
* ``beats_matrix(level)`` is R-5.2 and R-4 as a boolean table.
* ``bomb_tier`` and ``action_sort_key`` serve the agents and the terminal player, so that
  no caller keeps its own copy of the bomb order.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import actions as T
from .cards import NUM_NATURAL_RANKS, NUM_RANKS, level_key, level_rank_value

# 4 < 5 < straight flush < 6 < 7 < 8 < 9 < 10 < four jokers
BOMB_TIER_OF_SIZE = np.zeros(11, dtype=np.int16)
BOMB_TIER_OF_SIZE[[4, 5, 6, 7, 8, 9, 10]] = [1, 2, 4, 5, 6, 7, 8]
BOMB_TIER_OF_SIZE.setflags(write=False)
STRAIGHT_FLUSH_TIER = 3
FOUR_JOKERS_TIER = 9
POWER_PER_TIER = 16  # power = tier * 16 + value + 1: the rank orders bombs of one tier
POWER_SCALE = 160.0  # every power is below this (four jokers: 145); encoders divide by it

# level order of the rank indices 0..14 at each level 0..12, from cards
LEVEL_VALUE = np.array(
    [[level_rank_value(r, lv) for r in range(NUM_RANKS)] for lv in range(NUM_NATURAL_RANKS)],
    dtype=np.int16,
)
LEVEL_VALUE.setflags(write=False)
LEVEL_RANK_VALUE = 12  # the level rank's place in level order, above A


def bomb_tier(kind: int, size: int = 0) -> int:
    """Tier of a bomb kind (R-4), 0 for a non-bomb."""
    if kind == T.FOUR_JOKERS:
        return FOUR_JOKERS_TIER
    if kind == T.STRAIGHT_FLUSH:
        return STRAIGHT_FLUSH_TIER
    if kind == T.BOMB:
        return int(BOMB_TIER_OF_SIZE[size])
    return 0


@lru_cache(maxsize=13)
def strength_arrays(level: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-action ``(value, power)`` at ``level`` (read-only, cached); see the module text."""
    kind = T.KIND
    key = T.KEY.astype(np.intp)
    seq = np.isin(kind, T.SEQUENCE_KINDS)
    natural = (key >= 0) & (key < NUM_RANKS)
    value = np.zeros(T.NUM_ACTIONS, dtype=np.int16)
    value[natural] = LEVEL_VALUE[level][key[natural]]
    value[seq] = key[seq]  # sequences: natural order, keyed by their highest rank
    value[key == T.LEVEL_KEY] = LEVEL_RANK_VALUE
    value[np.isin(kind, (T.PASS, T.RETURN, T.FOUR_JOKERS))] = 0
    tier = np.zeros(T.NUM_ACTIONS, dtype=np.int16)
    bomb = kind == T.BOMB
    tier[bomb] = BOMB_TIER_OF_SIZE[T.SIZE[bomb]]
    tier[kind == T.STRAIGHT_FLUSH] = STRAIGHT_FLUSH_TIER
    tier[kind == T.FOUR_JOKERS] = FOUR_JOKERS_TIER
    power = np.where(tier > 0, tier * POWER_PER_TIER + value + 1, 0).astype(np.int16)
    value.setflags(write=False)
    power.setflags(write=False)
    return value, power


_IS_PLAY = (T.KIND != T.PASS) & (T.KIND != T.RETURN)


def beats_matrix(level: int) -> np.ndarray:
    """``bool[A, A]``: row ``last``, column ``a``: play ``a`` beats ``last`` (R-5.2, R-4).

    Pass and return actions never beat anything and cannot be beaten.
    """
    value, power = strength_arrays(level)
    kind = T.KIND.astype(np.int16)
    same_kind = kind[:, None] == kind[None, :]
    higher = value[None, :] > value[:, None]
    last_bomb = power[:, None] > 0
    m = np.where(
        last_bomb, power[None, :] > power[:, None], (power[None, :] > 0) | (same_kind & higher)
    )
    m &= _IS_PLAY[None, :] & _IS_PLAY[:, None]
    return m


# Listing order of the non-bomb kinds (bombs follow, in bomb order)
NONBOMB_LIST_ORDER = (
    T.SINGLE,
    T.PAIR,
    T.TRIPLE,
    T.FULL_HOUSE,
    T.STRAIGHT,
    T.THREE_PAIRS,
    T.TWO_TRIPLES,
)


def action_sort_key(action: int, level: int) -> tuple:
    """Sort key listing actions weakest first: non-bombs by kind (``NONBOMB_LIST_ORDER``) and
    value, then every bomb by power; returns first. Ties (same play, other wildcards or
    suits) keep a fixed order: fewer wildcards, the pair of a full house, suit, id."""
    kind = int(T.KIND[action])
    if kind == T.RETURN:
        face = int(T.RETURN_FACE[action])
        return (0, 0, level_key(face, level), face)
    value, power = strength_arrays(level)
    if power[action] > 0:
        group, order = len(NONBOMB_LIST_ORDER) + 1, int(power[action])
    else:
        group, order = 1 + NONBOMB_LIST_ORDER.index(kind), int(value[action])
    pr = int(T.PAIR_RANK[action])
    pair = int(LEVEL_VALUE[level][pr]) if pr >= 0 else 99  # the two-wildcard pair last
    return (group, order, int(T.WILDS[action]), pair, int(T.SUIT[action]), action)
