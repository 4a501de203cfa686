"""Vectorised move generator: legal-action masks from array operations over the action table.

Legality of a play for a hand is a conjunction of at most ``ATOMS_PER_ACTION`` *atoms*,
small facts about the hand at the deal's level:

* ``GE(r, c)``  — at least ``c`` natural cards of rank ``r`` (♥N not counted), r in 0..14
* ``WGE(c)``    — at least ``c`` ♥N wildcards
* ``FACE(f)``   — the natural face ``f`` is held (straight flushes need exact suits)
* ``PS(w)``     — a plain straight in window ``w`` can be formed without wildcards and
                  without five natural cards of one suit (R-3.3)

Each action stores the ids of its atoms (``ATOM_IDX``, padded with the always-true atom).
A hand's mask is ``atoms[ATOM_IDX].all(0)``; a batch of hands is the same gather over a
``(B, NUM_ATOMS)`` array. Following (R-5.2, R-4) is an AND with a precomputed per-level
"beats" row. No Python loop over combinations.
"""

from __future__ import annotations

import numpy as np

from . import actions as T
from .cards import (
    NUM_FACES,
    NUM_NATURAL_FACES,
    NUM_NATURAL_RANKS,
    NUM_RANKS,
    level_key,
    wildcard_face,
)
from .strength import beats_matrix, strength_arrays

MAX_COUNT = 8  # natural cards of one rank in the deck
GE_BASE = 0
WGE_BASE = GE_BASE + NUM_RANKS * (MAX_COUNT + 1)  # 135
FACE_BASE = WGE_BASE + T.MAX_WILDS + 1  # 138
PS_BASE = FACE_BASE + NUM_NATURAL_FACES  # 190
STRAIGHT_KEYS = list(T.seq_keys(T.STRAIGHT))  # 10 windows, highest rank 3 ('5') .. 12 ('A')
NUM_ATOMS = PS_BASE + len(STRAIGHT_KEYS)  # 200
TRUE_ATOM = GE_BASE  # GE(0, 0)
ATOMS_PER_ACTION = 5

_WINDOWS = np.array([T.seq_ranks(T.STRAIGHT, k) for k in STRAIGHT_KEYS], dtype=np.intp)  # (10, 5)


def _ge(r: int, c: int) -> int:
    return GE_BASE + r * (MAX_COUNT + 1) + c


def _action_atoms(a: int) -> list[int]:
    kind = int(T.KIND[a])
    atoms: list[int] = []
    if kind in (T.PASS, T.RETURN):
        return atoms
    w = int(T.WILDS[a])
    if w:
        atoms.append(WGE_BASE + w)
    if kind == T.STRAIGHT_FLUSH:
        suit = int(T.SUIT[a])
        atoms += [FACE_BASE + r * 4 + suit for r in np.flatnonzero(T.NAT[a])]
    elif kind == T.STRAIGHT and w == 0:
        atoms.append(PS_BASE + STRAIGHT_KEYS.index(int(T.KEY[a])))
    else:
        atoms += [_ge(int(r), int(T.NAT[a, r])) for r in np.flatnonzero(T.NAT[a])]
    return atoms


def _build_atom_idx() -> np.ndarray:
    idx = np.full((ATOMS_PER_ACTION, T.NUM_ACTIONS), TRUE_ATOM, dtype=np.intp)
    for a in range(T.NUM_ACTIONS):
        at = _action_atoms(a)
        assert len(at) <= ATOMS_PER_ACTION
        idx[: len(at), a] = at
    return idx


ATOM_IDX = _build_atom_idx()
_PLAY = np.arange(T.NUM_ACTIONS) < T.RETURN_BASE
_PLAY_NO_PASS = _PLAY.copy()
_PLAY_NO_PASS[T.PASS_ACTION] = False


# ---------------------------------------------------------------------------------------------
# Atoms


_AR9 = np.arange(MAX_COUNT + 1, dtype=np.uint8)
_AR3 = np.arange(T.MAX_WILDS + 1, dtype=np.uint8)
_SUIT_BITS = np.array([1, 2, 4, 8], dtype=np.uint8)
_POW16 = 16 ** np.arange(5, dtype=np.int64)


def _plain_straight_lut() -> np.ndarray:
    """``bool[16**5]``: for the suit masks (4 bits each) of a window's five ranks, can a plain
    straight be picked — every rank held, and not only by one and the same single suit."""
    held = np.arange(16) > 0
    lut = held
    for _ in range(4):  # every rank held: an outer AND over the five positions (symmetric)
        lut = np.logical_and.outer(lut, held)
    lut = lut.reshape(-1)
    for bit in (1, 2, 4, 8):  # all five in one and the same single suit: a flush, not plain
        lut[bit * int(_POW16.sum())] = False
    return lut


_PS_LUT = _plain_straight_lut()


def hand_atoms(counts: np.ndarray, level: int, plain_straights: bool = True) -> np.ndarray:
    """Atom vector (``bool[NUM_ATOMS]``) of one hand (``uint8[54]`` face counts) at ``level``.

    ``plain_straights=False`` skips the ``PS`` atoms (left False): only plain straights
    without wildcards read them, so a caller that checks no such action may skip them.
    """
    out = np.empty(NUM_ATOMS, dtype=bool)
    wild_face = wildcard_face(level)
    natural = np.array(counts[:NUM_NATURAL_FACES], dtype=np.uint8)
    wilds = natural[wild_face]
    natural[wild_face] = 0
    rank_counts = np.empty(NUM_RANKS, dtype=np.uint8)
    nat4 = natural.reshape(NUM_NATURAL_RANKS, 4)
    nat4.sum(1, out=rank_counts[:NUM_NATURAL_RANKS])
    rank_counts[NUM_NATURAL_RANKS:] = counts[NUM_NATURAL_FACES:]
    np.greater_equal(rank_counts[:, None], _AR9, out=out[GE_BASE:WGE_BASE].reshape(NUM_RANKS, -1))
    np.greater_equal(wilds, _AR3, out=out[WGE_BASE:FACE_BASE])
    present = out[FACE_BASE:PS_BASE]
    np.greater(natural, 0, out=present)
    if plain_straights:
        suit_masks = present.reshape(NUM_NATURAL_RANKS, 4) @ _SUIT_BITS
        out[PS_BASE:] = _PS_LUT[suit_masks[_WINDOWS] @ _POW16]
    else:
        out[PS_BASE:] = False
    return out


def batch_atoms(counts: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Atoms of a batch of hands ``(B, 54)`` at per-hand levels ``(B,)`` → ``bool (B, 200)``."""
    counts = np.asarray(counts, dtype=np.uint8)
    levels = np.asarray(levels, dtype=np.intp)
    n = counts.shape[0]
    rows = np.arange(n)
    wild_face = wildcard_face(levels)
    wilds = counts[rows, wild_face]
    natural = counts[:, :NUM_NATURAL_FACES].copy()
    natural[rows, wild_face] = 0
    rank_counts = np.empty((n, NUM_RANKS), dtype=np.uint8)
    rank_counts[:, :NUM_NATURAL_RANKS] = natural.reshape(n, NUM_NATURAL_RANKS, 4).sum(2)
    rank_counts[:, NUM_NATURAL_RANKS:] = counts[:, NUM_NATURAL_FACES:]
    out = np.empty((n, NUM_ATOMS), dtype=bool)
    out[:, GE_BASE:WGE_BASE] = (
        rank_counts[:, :, None] >= np.arange(MAX_COUNT + 1, dtype=np.uint8)
    ).reshape(n, -1)
    out[:, WGE_BASE:FACE_BASE] = wilds[:, None] >= np.arange(T.MAX_WILDS + 1, dtype=np.uint8)
    present = natural > 0  # (n, NUM_NATURAL_FACES)
    out[:, FACE_BASE:PS_BASE] = present
    suit_masks = present.reshape(n, NUM_NATURAL_RANKS, 4) @ _SUIT_BITS  # (n, 13)
    out[:, PS_BASE:] = _PS_LUT[suit_masks[:, _WINDOWS] @ _POW16]
    return out


# ---------------------------------------------------------------------------------------------
# Comparison (R-4, R-5.2; the rules themselves are in strength.py)

_BEATS_PACKED: dict[int, np.ndarray] = {}


def beats_rows_packed(level: int) -> np.ndarray:
    """Bit-packed beats matrix of a level, built once per level and cached (≈0.6 MB)."""
    m = _BEATS_PACKED.get(level)
    if m is None:
        m = np.packbits(beats_matrix(level), axis=1)
        m.setflags(write=False)
        _BEATS_PACKED[level] = m
    return m


def beats_row(level: int, last: int) -> np.ndarray:
    """``bool[A]``: which actions beat ``last`` at ``level``."""
    return np.unpackbits(beats_rows_packed(level)[last], count=T.NUM_ACTIONS).view(bool)


# ---------------------------------------------------------------------------------------------
# Masks


def mask_from_atoms(atoms: np.ndarray) -> np.ndarray:
    """Which table actions the cards allow, as ``bool[A]`` (or ``(B, A)`` for a batch of atoms).

    Pass and return actions are False here; callers add them per phase.
    """
    if atoms.ndim == 1:
        m = atoms[ATOM_IDX].all(0)
        m &= _PLAY_NO_PASS
        return m
    m = atoms[:, ATOM_IDX].all(1)
    m &= _PLAY_NO_PASS
    return m


def lead_mask(counts: np.ndarray, level: int) -> np.ndarray:
    """Legal actions when leading a trick (R-5.1): every combination the hand can form."""
    return mask_from_atoms(hand_atoms(counts, level))


class _FollowIndex:
    """Per-level ordering of the table so that the actions able to beat any given play are
    at most two contiguous slices: same kind with a higher value, and the stronger bombs."""

    def __init__(self, level: int) -> None:
        value, power = strength_arrays(level)
        bomb_group = 99
        group = np.where(power > 0, bomb_group, T.KIND).astype(np.int64)
        score = np.where(power > 0, power, value).astype(np.int64)
        ids = np.flatnonzero(_PLAY_NO_PASS)
        order = ids[np.lexsort((score[ids], group[ids]))]
        self.order = order.astype(np.intp)
        self.atom_idx = np.ascontiguousarray(ATOM_IDX[:, order])
        combined = group * 1024 + score  # sorted along ``order``
        sorted_combined = combined[order]
        sorted_group = group[order]
        # slice 1: same group, strictly higher score; slice 2: every bomb (non-bomb last only)
        self.start = np.searchsorted(sorted_combined, combined, side="right")
        self.end = np.searchsorted(sorted_group, group, side="right")
        bomb_start = int(np.searchsorted(sorted_group, bomb_group))
        self.bomb_start = np.where(group == bomb_group, 0, bomb_start)
        self.bomb_end = np.where(group == bomb_group, 0, len(order))
        playable = _PLAY_NO_PASS
        for arr in (self.start, self.end, self.bomb_start, self.bomb_end):
            arr[~playable] = 0
        self.slices = [
            ((int(s1), int(e1)), (int(s2), int(e2)))
            for s1, e1, s2, e2 in zip(
                self.start, self.end, self.bomb_start, self.bomb_end, strict=True
            )
        ]


_FOLLOW: dict[int, _FollowIndex] = {}


def _follow_index(level: int) -> _FollowIndex:
    fi = _FOLLOW.get(level)
    if fi is None:
        fi = _FOLLOW[level] = _FollowIndex(level)
    return fi


def follow_mask(counts: np.ndarray, level: int, last: int) -> np.ndarray:
    """Legal actions when following ``last`` (R-5.2): pass, or a combination that beats it."""
    # only a plain straight on the table makes plain straights candidates (PS atoms)
    atoms = hand_atoms(counts, level, plain_straights=T.KIND[last] == T.STRAIGHT)
    return follow_mask_from_atoms(atoms, level, last)


def follow_mask_from_atoms(atoms: np.ndarray, level: int, last: int) -> np.ndarray:
    """``follow_mask`` for a hand given by its atoms (callers may cache them per hand).

    Only the two candidate slices of the level's ordering are checked against the hand.
    """
    if not _PLAY_NO_PASS[last]:
        raise ValueError(f"action {last} is not a play that can be on the table (R-5.2)")
    fi = _follow_index(level)
    m = np.zeros(T.NUM_ACTIONS, dtype=bool)
    m[T.PASS_ACTION] = True
    for start, end in fi.slices[last]:
        if end > start:
            ok = atoms[fi.atom_idx[:, start:end]].all(0)
            m[fi.order[start:end][ok]] = True
    return m


def play_mask(counts: np.ndarray, level: int, last: int | None) -> np.ndarray:
    return lead_mask(counts, level) if last is None else follow_mask(counts, level, last)


def batch_play_mask(counts: np.ndarray, levels: np.ndarray, lasts: np.ndarray) -> np.ndarray:
    """Masks of a batch: ``counts (B, 54)``, ``levels (B,)``, ``lasts (B,)`` with -1 = leading."""
    levels = np.asarray(levels, dtype=np.intp)
    lasts = np.asarray(lasts, dtype=np.intp)
    m = mask_from_atoms(batch_atoms(counts, levels))
    following = lasts >= 0
    if following.any():
        rows = np.empty((int(following.sum()), (T.NUM_ACTIONS + 7) // 8), dtype=np.uint8)
        fl, fa = levels[following], lasts[following]
        for lv in np.unique(fl):
            sel = fl == lv
            rows[sel] = beats_rows_packed(int(lv))[fa[sel]]
        b = np.unpackbits(rows, axis=1, count=T.NUM_ACTIONS).view(bool)
        m[following] &= b
        m[following, T.PASS_ACTION] = True
    return m


def return_mask(counts: np.ndarray, level: int) -> np.ndarray:
    """Legal tribute returns (R-7.1): any held card of natural rank 2..10 (a level card whose
    natural rank is ≤ 10 included); if none, a held card of the lowest rank in level order."""
    m = np.zeros(T.NUM_ACTIONS, dtype=bool)
    held = np.asarray(counts[:NUM_FACES]) > 0
    low = held.copy()
    low[9 * 4 :] = False  # ranks 2..T are faces 0..35
    if low.any():
        m[T.RETURN_BASE : T.RETURN_BASE + NUM_FACES] = low
        return m
    faces = np.flatnonzero(held)
    if faces.size == 0:
        raise ValueError("a seat with no cards cannot return tribute (R-7.1)")

    keys = np.array([level_key(int(f), level) for f in faces])
    m[T.RETURN_BASE + faces[keys == keys.min()]] = True
    return m
