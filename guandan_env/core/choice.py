"""Which physical cards an action plays (DESIGN.md: suits are the engine's choice).

The rule, one place for all callers (engine, env, ``cards_for_action``):

1. Wildcards: the action's ``WILDS`` ♥N cards.
2. Straight flushes: the natural faces of the declared suit.
3. Other natural cards are taken one at a time, rank by rank. Among the suits available for
   a rank, take the copy whose removal breaks the fewest straight-flush windows the hand can
   still complete with its wildcards (a face held twice breaks none); ties go to the suit
   order S, H, C, D.
4. A plain straight without wildcards never uses five natural cards of one suit (R-3.3): if
   step 3 picked one suit throughout, the cheapest position is switched to another suit.

The same rule picks the tribute card among faces of equal value (R-7.6).
"""

from __future__ import annotations

import numpy as np

from . import actions as T
from .cards import BJ_FACE, BJ_RANK, NUM_NATURAL_RANKS, RJ_FACE, RJ_RANK, wildcard_face

# The straight-flush loss of a face (rule 3) depends only on its suit's presence bits along
# the rank line and the wildcards left, so it is one lookup: ``LOSS[rank * 3 + wilds, bits]``
# with ``bits`` a 14-bit word (bit 0 the ace played low, bit ``r + 1`` rank ``r``). The
# batched choice (``vector_choice``) reads the same table; the tests check it against a
# window-by-window count.
_NBITS = NUM_NATURAL_RANKS + 1  # 14 positions on the rank line, ace twice
RANK_BIT = [1 << (r + 1) for r in range(NUM_NATURAL_RANKS)]
RANK_BIT[12] |= 1  # the ace is also the low end of A-2-3-4-5


def _window_masks() -> list[int]:
    """14-bit masks of the straight-flush windows (highest rank 5..A)."""
    return [
        sum(1 << p for p in range(key - 3, key + 2))  # positions key-3..key+1
        for key in T.seq_keys(T.STRAIGHT_FLUSH)
    ]


def _loss_table() -> np.ndarray:
    """``uint8 (13 * 3, 2**14)``: per rank ``r`` and wildcards left ``wl``, the windows
    through ``r`` whose missing count equals ``wl`` — completable now, not once the single
    copy of the face at ``r`` is removed."""
    bits = np.arange(1 << _NBITS, dtype=np.int64)
    windows = _window_masks()
    lut = np.zeros((NUM_NATURAL_RANKS * 3, 1 << _NBITS), dtype=np.uint8)
    for r in range(NUM_NATURAL_RANKS):
        positions = {r + 1} | ({0} if r == 12 else set())
        through = [w for w in windows if any(w >> p & 1 for p in positions)]
        for wl in range(3):
            acc = np.zeros(bits.size, dtype=np.uint8)
            for w in through:
                missing = 5 - np.bitwise_count(bits & w)
                acc += (missing == wl).astype(np.uint8)
            lut[r * 3 + wl] = acc
    return lut


LOSS = _loss_table()
LOSS.setflags(write=False)


def sf_loss(counts: list[int], face: int, wilds: int, wild_face: int) -> int:
    """Straight-flush windows the hand could complete that removing one copy of ``face``
    would break (0 when the face is held twice): a window the wildcards complete exactly
    (missing == wilds) is broken, one with spare wildcards is not."""
    if counts[face] != 1 or face >= BJ_FACE or face == wild_face:
        return 0
    r, s = divmod(face, 4)
    bits = 0
    for rr in range(NUM_NATURAL_RANKS):
        f = rr * 4 + s
        if counts[f] and f != wild_face:
            bits |= RANK_BIT[rr]
    return int(LOSS[r * 3 + wilds, bits])


def pick_face(counts: list[int], rank: int, wilds: int, wild_face: int) -> int:
    """The copy of ``rank`` to spend (rule 3); ``counts`` is the hand as a list."""
    best, best_loss = -1, 1 << 30
    for s in range(4):
        f = rank * 4 + s
        if f == wild_face or counts[f] == 0:
            continue
        loss = sf_loss(counts, f, wilds, wild_face)
        if loss < best_loss:
            best, best_loss = f, loss
    return best


# per action: (rank, natural cards of that rank) in rank order, as plain ints
_NATURAL_RANKS: list[list[tuple[int, int]]] = [
    [(int(r), int(T.NAT[a, r])) for r in np.flatnonzero(T.NAT[a])] for a in range(T.NUM_ACTIONS)
]


def choose_cards(counts: np.ndarray, level: int, action: int) -> list[int]:
    """Faces played by ``action`` from a hand known to allow it (see ``legal``)."""
    kind = int(T.KIND[action])
    if kind == T.PASS:
        return []
    wild_face = wildcard_face(level)
    hand = counts.tolist()
    if kind == T.RETURN:
        return [int(T.RETURN_FACE[action])]
    n_wilds = int(T.WILDS[action])
    chosen = [wild_face] * n_wilds
    for _ in range(n_wilds):
        hand[wild_face] -= 1
    wilds_left = hand[wild_face]
    nat = _NATURAL_RANKS[action]
    if kind == T.STRAIGHT_FLUSH:
        suit = int(T.SUIT[action])
        return chosen + [r * 4 + suit for r, _ in nat]
    naturals: list[int] = []
    for r, copies in nat:
        for _ in range(copies):
            if r == BJ_RANK:
                f = BJ_FACE
            elif r == RJ_RANK:
                f = RJ_FACE
            else:
                f = pick_face(hand, r, wilds_left, wild_face)
            if f < 0 or hand[f] == 0:
                raise ValueError(f"hand cannot supply rank {r} for action {action}")
            hand[f] -= 1
            naturals.append(f)
    if kind == T.STRAIGHT and n_wilds == 0 and len({f % 4 for f in naturals}) == 1:
        naturals = _break_monochrome(naturals, hand, wilds_left, wild_face)
    return chosen + naturals


def _break_monochrome(faces: list[int], hand: list[int], wilds: int, wild_face: int) -> list[int]:
    """Switch one card of a one-suit plain straight to another suit (rule 4, R-3.3)."""
    suit = faces[0] % 4
    best = None
    for i, f in enumerate(faces):
        r = f // 4
        for s in range(4):
            g = r * 4 + s
            if s == suit or g == wild_face or hand[g] == 0:
                continue
            loss = sf_loss(hand, g, wilds, wild_face)
            if best is None or loss < best[0]:
                best = (loss, i, g)
    if best is None:
        raise ValueError("a plain straight cannot be five natural cards of one suit (R-3.3)")
    _, i, g = best
    out = list(faces)
    out[i] = g
    return out
