"""Batched card choice: the faces ``choice.choose_cards`` picks, for many tables at once.

The rule is ``choice``'s (wildcards first, straight-flush suit, otherwise one card at a time in
ascending rank order, taking the copy whose removal breaks the fewest completable
straight-flush windows, ties S, H, C, D; a one-suit plain straight has its cheapest position
switched to another suit). This module runs the same greedy over *card slots* instead of
over tables: an action plays at most 8 natural cards, so the loop has at most 8 passes, each
vectorised over the tables still picking.

The straight-flush loss of a face is ``choice.LOSS`` (one lookup by rank, wildcards left and
the suit's 14-bit presence word), the table the scalar choice reads too.
"""

from __future__ import annotations

import numpy as np

from . import actions as T
from .cards import BJ_FACE, NUM_NATURAL_FACES, NUM_NATURAL_RANKS, RJ_FACE, wildcard_face
from .choice import _NBITS, LOSS, RANK_BIT

MAX_SLOTS = 8
_TRASH = 54  # scratch column for padded scatters


def _slot_table() -> np.ndarray:
    """``int8 (A, MAX_SLOTS)``: natural ranks 2..A an action takes, one slot per card, in the
    order ``choose_cards`` picks them (ascending rank index); -1 pads. Straight flushes and
    jokers are not slots (their faces are fixed)."""
    slots = np.full((T.NUM_ACTIONS, MAX_SLOTS), -1, dtype=np.int8)
    for a in range(T.NUM_ACTIONS):
        if T.KIND[a] in (T.PASS, T.RETURN, T.STRAIGHT_FLUSH):
            continue
        ranks = [r for r in range(NUM_NATURAL_RANKS) for _ in range(int(T.NAT[a, r]))]
        slots[a, : len(ranks)] = ranks
    return slots


def _sf_faces() -> np.ndarray:
    """``int64 (A, 5)``: faces of a straight flush's natural cards; ``_TRASH`` pads."""
    faces = np.full((T.NUM_ACTIONS, 5), _TRASH, dtype=np.int64)
    for a in np.flatnonzero(T.KIND == T.STRAIGHT_FLUSH):
        fs = [int(r) * 4 + int(T.SUIT[a]) for r in np.flatnonzero(T.NAT[a])]
        faces[a, : len(fs)] = fs
    return faces


SLOTS = _slot_table()
NUM_SLOTS = (SLOTS >= 0).sum(1).astype(np.int64)
SF_FACES = _sf_faces()
_PLAIN_STRAIGHT = (T.KIND == T.STRAIGHT) & (T.WILDS == 0)
_IS_SF = T.KIND == T.STRAIGHT_FLUSH
_NAT_BJ = T.NAT[:, 13].astype(np.uint8)
_NAT_RJ = T.NAT[:, 14].astype(np.uint8)
_WILDS = T.WILDS.astype(np.uint8)
_AR4 = np.arange(4, dtype=np.int64)
_AR4_U8 = np.arange(4, dtype=np.uint8)
_RANK_BIT = np.array(RANK_BIT, dtype=np.int64)


def suit_bits(hand: np.ndarray) -> np.ndarray:
    """``int64 (n, 4)``: per suit, the 14-bit presence word of the faces held in ``hand``
    (``(n, 54)`` counts; the caller zeroes the ♥N wildcard, never a natural card of a window)."""
    n = hand.shape[0]
    pres = (hand[:, :NUM_NATURAL_FACES] > 0).reshape(n, NUM_NATURAL_RANKS, 4).transpose(0, 2, 1)
    return pres.astype(np.int64) @ _RANK_BIT


# argmin key per candidate copy from (copies held, loss): not held -> never; held twice ->
# loss 0; held once -> its loss. Suit order breaks ties (added by the caller).
_KEY = np.full(3 * 8, 200, dtype=np.uint8)
_KEY[8:16] = np.arange(8) * 4
_KEY[16:24] = 0
_LOSS_FLAT = LOSS.ravel()
_LOSS_ROW = 1 << _NBITS


def batch_choose_cards(hands: np.ndarray, levels: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Faces played, as counts ``uint8 (n, 54)``, by ``actions`` from ``hands`` at ``levels``.

    Row ``i`` equals ``choice.choose_cards(hands[i], levels[i], actions[i])`` counted per face.
    The hands must allow their actions (masks are not checked here).
    """
    hands = np.asarray(hands, dtype=np.uint8)
    levels = np.asarray(levels, dtype=np.int64)
    actions = np.asarray(actions, dtype=np.int64)
    n = hands.shape[0]
    rows = np.arange(n)
    cards = np.zeros((n, _TRASH + 1), dtype=np.uint8)
    wild_face = wildcard_face(levels)
    w = _WILDS[actions]
    cards[rows, wild_face] = w
    cards[:, BJ_FACE] = _NAT_BJ[actions]
    cards[:, RJ_FACE] = _NAT_RJ[actions]
    sf = np.flatnonzero(_IS_SF[actions])
    if sf.size:
        cards[sf[:, None], SF_FACES[actions[sf]]] = 1  # distinct faces per row
    slots = SLOTS[actions]  # (n, 8)
    todo = np.flatnonzero(slots[:, 0] >= 0)
    if todo.size == 0:
        return cards[:, :54]
    # scratch state of the tables that pick naturals, addressed through flat indices
    m = todo.size
    tr = np.arange(m)
    h = hands[todo]  # a copy
    wf = wild_face[todo]
    wl = h[tr, wf].astype(np.int64) - w[todo]  # wildcards left after the action's own
    h[tr, wf] = 0  # the wildcard is never a natural copy to pick
    bits = suit_bits(h)
    hf, bf, cf = h.ravel(), bits.ravel(), cards.ravel()
    sl = slots[todo].astype(np.int64)
    picked = np.zeros((m, MAX_SLOTS), dtype=np.int64)
    loss_row = wl * _LOSS_ROW
    sub = tr
    for j in range(MAX_SLOTS):
        if j:
            sub = sub[sl[sub, j] >= 0]
            if sub.size == 0:
                break
        r = sl[sub, j]
        fb = sub * 54 + r * 4
        hc = hf[fb[:, None] + _AR4]  # (k, 4) copies held per suit
        lo = _LOSS_FLAT[
            (r * (3 * _LOSS_ROW) + loss_row[sub])[:, None] + bf[sub[:, None] * 4 + _AR4]
        ]
        s = (_KEY[hc * 8 + lo] + _AR4_U8).argmin(1)
        fi = fb + s
        hf[fi] -= 1
        f = r * 4 + s
        picked[sub, j] = f
        cf[todo[sub] * (_TRASH + 1) + f] += 1
        gone = np.flatnonzero(hf[fi] == 0)
        if gone.size:
            bf[sub[gone] * 4 + s[gone]] &= ~_RANK_BIT[r[gone]]
    # a plain straight without wildcards is never five naturals of one suit
    ps = np.flatnonzero(_PLAIN_STRAIGHT[actions[todo]])
    if ps.size:
        suit = picked[ps, :5] % 4
        mono = ps[(suit == suit[:, :1]).all(1)]
        if mono.size:
            old, new = _break_monochrome(picked[mono, :5], h[mono], wl[mono], bits[mono])
            cards[todo[mono], old] -= 1
            cards[todo[mono], new] += 1
    return cards[:, :54]


def _break_monochrome(
    f5: np.ndarray, h: np.ndarray, wl: np.ndarray, bits: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rule 4 for one-suit straights: faces ``f5 (m, 5)`` in pick order, hands after the
    picks (wildcard zeroed) → the face to put back and the one to play instead: the cheapest
    (loss, position, suit) copy of another suit."""
    m = f5.shape[0]
    r5 = f5 // 4
    suit = f5[:, :1] % 4
    g = r5[:, :, None] * 4 + _AR4  # (m, 5, 4) candidate replacement faces
    hg = h[np.arange(m)[:, None, None], g]
    ok = (_AR4 != suit[:, :, None]) & (hg > 0)
    loss = LOSS[(r5 * 3 + wl[:, None])[:, :, None], bits[:, None, :]]  # (m, 5, 4)
    loss = np.where(hg == 1, loss, 0).astype(np.int64)
    order = np.arange(5)[:, None] * 4 + _AR4  # position-major, then suit: the loop order
    key = np.where(ok, loss * 32 + order, 1 << 20).reshape(m, 20)
    best = key.argmin(1)
    rr = np.arange(m)
    if (key[rr, best] >= 1 << 20).any():
        raise ValueError("a plain straight cannot be five natural cards of one suit (R-3.3)")
    pos, s = best // 4, best % 4
    return f5[rr, pos], r5[rr, pos] * 4 + s
