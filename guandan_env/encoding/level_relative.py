"""Plays and cards by their place in the deal level's order (R-2.4), for inputs that
should mean the same thing at every level.

At level A, level order is natural order (2 < … < K < A); at another level the level rank
moves above A and the ranks above it move down one. Moving each rank to its place in the
level's order therefore maps a level's plays and cards onto level A's, where they have the
same role: at level 2 a pair of 2s is the highest natural pair, the pair of aces' role at
level A. Sequences are the exception: they use natural order at every level (R-2.5).

* ``level_relative_ids()``: per level, each action id to the id with its role at level A
  (``model.id_relative``: the candidate scorer's id embedding indexed by role).
* ``level_relative_card_bits()``: per level, each card bit of the observation (its card-set
  fields) to the bit of the same set and copy for the card with that role at level A
  (``model.obs_relative``: a second embedding of the card bits, indexed by role).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..core import actions as T
from ..core.cards import FACE_RANK, FACE_SUIT, NUM_FACES, NUM_NATURAL_RANKS, NUM_RANKS
from ..core.strength import LEVEL_VALUE
from .obs_layout import CARD_BITS, CARDS_END


@lru_cache(maxsize=1)
def level_relative_ids() -> np.ndarray:
    """``int64 (13, NUM_ACTIONS)``: row ``level``, column ``a``: the id of the play that has
    action ``a``'s role at level A, where level order is natural order (R-2.4). Singles,
    pairs, triples, full houses, bombs and tribute returns have their ranks moved to their
    places in the level's order (the level rank to A's place, the ranks above it down one);
    sequences keep their id (natural order at every level, R-2.5), as do pass and four
    jokers. Each row is a permutation, the identity at level A. A learned per-id embedding
    indexed by it means the same thing at every level ("the second-highest pair"), where one
    indexed by the id would mean "a pair of 2s": the lowest pair at twelve levels and the
    highest at one."""
    sig = {
        _signature(a, T.KEY[a], T.NAT[a], T.PAIR_RANK[a], T.RETURN_FACE[a]): a
        for a in range(T.NUM_ACTIONS)
    }
    face = {(int(FACE_SUIT[f]), int(FACE_RANK[f])): f for f in range(NUM_FACES)}
    fixed = np.isin(T.KIND, (*T.SEQUENCE_KINDS, T.PASS, T.FOUR_JOKERS))
    out = np.tile(np.arange(T.NUM_ACTIONS, dtype=np.int64), (NUM_NATURAL_RANKS, 1))
    for level in range(NUM_NATURAL_RANKS):
        place = LEVEL_VALUE[level].astype(np.intp)  # rank index -> its place in level order
        for a in np.flatnonzero(~fixed):
            nat = np.zeros(NUM_RANKS, dtype=np.uint8)
            nat[place] = T.NAT[a]
            key, pair, ret = int(T.KEY[a]), int(T.PAIR_RANK[a]), int(T.RETURN_FACE[a])
            key = int(place[key]) if 0 <= key < NUM_RANKS else key  # LEVEL_KEY, -1 stay
            pair = int(place[pair]) if pair >= 0 else pair
            if ret >= 0:
                ret = face[(int(FACE_SUIT[ret]), int(place[FACE_RANK[ret]]))]
            out[level, a] = sig[_signature(a, key, nat, pair, ret)]
    out.setflags(write=False)
    return out


def _signature(a: int, key, nat, pair, ret) -> tuple:
    """What tells action ``a``'s row of the table from every other, with the rank-dependent
    columns given."""
    return (
        int(T.KIND[a]),
        int(key),
        bytes(np.asarray(nat, dtype=np.uint8)),
        int(T.WILDS[a]),
        int(T.SUIT[a]),
        int(pair),
        int(ret),
    )


@lru_cache(maxsize=1)
def level_relative_card_bits() -> np.ndarray:
    """``int64 (13, CARDS_END)``: row ``level``, column ``b`` (a bit of the observation's
    card-set fields, ``CARD_BITS`` per set: two per face, "≥ 1 copy" and "2 copies"): the
    bit of the same set and copy for the face of the same suit whose rank has this face's
    place in the level's order; jokers keep theirs. Each row is a permutation within every
    card set, the identity at level A."""
    faces = np.arange(NUM_FACES)
    out = np.empty((NUM_NATURAL_RANKS, CARDS_END), dtype=np.int64)
    face_of = {(int(FACE_SUIT[f]), int(FACE_RANK[f])): f for f in faces}
    bits = np.arange(CARDS_END)
    card_set, within = np.divmod(bits, CARD_BITS)
    face, copy = np.divmod(within, 2)
    for level in range(NUM_NATURAL_RANKS):
        place = LEVEL_VALUE[level].astype(np.intp)
        moved = np.array(
            [face_of[(int(FACE_SUIT[f]), int(place[FACE_RANK[f]]))] for f in faces], np.int64
        )
        out[level] = card_set * CARD_BITS + moved[face] * 2 + copy
    out.setflags(write=False)
    return out
