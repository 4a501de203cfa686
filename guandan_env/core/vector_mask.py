"""Bit-packed batched legal masks for the vector engine (same result as ``movegen``).

``movegen`` decides legality as a conjunction of atoms gathered per action. Here the same
atoms are grouped by the part of the hand they read, and each group's *state* indexes a
precomputed bitset over the action table of the actions that state rules out:

* one group per natural rank ``r`` (2..A): state = (natural cards of rank ``r``, ♥N
  excluded, 0..8) × (suits held, 4 bits) → ``GE(r, ·)`` and ``FACE(r, ·)`` atoms;
* jokers and wildcards: state = (small jokers, big jokers, ♥N) → ``GE(13/14, ·)``, ``WGE``;
* plain straights: state = the 10 ``PS(w)`` bits.

A hand's play mask is the complement of the OR of its 15 exclusion rows (``EXCL``). To gather
fewer rows, ``MERGED`` pre-ORs them in 8 groups (ranks two by two over their 48 possible
states, A with the jokers and wildcards, plain straights): a batch of hands costs 8 row
gathers of 36 ``uint64`` words each instead of 2,243 × 5 byte gathers. The trick state is
one more AND: leading, every play but pass (R-5.1); following, ``movegen``'s bit-packed
per-level beats row of the play on the table, plus pass (R-5.2, R-4).

Packed masks use ``np.packbits`` order (action ``a`` is bit ``7 - a % 8`` of byte ``a // 8``),
padded to ``MASK_WORDS`` 64-bit words; ``unpack_masks`` gives ``bool (B, NUM_ACTIONS)``.
"""

from __future__ import annotations

import numpy as np

from . import actions as T
from . import movegen as M
from .cards import NUM_FACES, NUM_NATURAL_RANKS, level_key, wildcard_face

MASK_BYTES = ((T.NUM_ACTIONS + 63) // 64) * 8  # 288
MASK_WORDS = MASK_BYTES // 8  # 36
_RANK_STATES = (M.MAX_COUNT + 1) * 16  # 144: count 0..8 x suit mask
_J_BASE = NUM_NATURAL_RANKS * _RANK_STATES  # 1872: 27 joker/wild states
_PS_BASE = _J_BASE + 27  # 1899: 1024 plain-straight states
NUM_EXCL_ROWS = _PS_BASE + 1024
_GROUPS = NUM_NATURAL_RANKS + 2  # 15 rows per hand


def _pack_rows(rows: np.ndarray) -> np.ndarray:
    """``bool (n, NUM_ACTIONS)`` → ``uint64 (n, MASK_WORDS)`` in packbits order."""
    out = np.zeros((rows.shape[0], MASK_BYTES), dtype=np.uint8)
    out[:, : (T.NUM_ACTIONS + 7) // 8] = np.packbits(rows, axis=1)
    return out.view(np.uint64)


_PAD_WORDS = ~_pack_rows(np.ones((1, T.NUM_ACTIONS), dtype=bool))[0]


def _requires() -> np.ndarray:
    """``bool (NUM_ATOMS, NUM_ACTIONS)``: which actions need each atom."""
    req = np.zeros((M.NUM_ATOMS, T.NUM_ACTIONS), dtype=bool)
    for k in range(M.ATOMS_PER_ACTION):
        req[M.ATOM_IDX[k], np.arange(T.NUM_ACTIONS)] = True
    req[M.TRUE_ATOM] = False  # padding: always true
    return req


def _build_exclusions() -> np.ndarray:
    req = _requires()
    excl = np.zeros((NUM_EXCL_ROWS, T.NUM_ACTIONS), dtype=bool)
    for r in range(NUM_NATURAL_RANKS):
        ge = req[M.GE_BASE + r * (M.MAX_COUNT + 1) : M.GE_BASE + (r + 1) * (M.MAX_COUNT + 1)]
        # actions needing more than n natural cards of rank r: OR of GE(r, c) for c > n
        above = np.logical_or.accumulate(ge[::-1], axis=0)[::-1]  # above[c] = OR_{c'>=c}
        face = req[M.FACE_BASE + r * 4 : M.FACE_BASE + r * 4 + 4]
        for n in range(M.MAX_COUNT + 1):
            count_ex = above[n + 1] if n < M.MAX_COUNT else np.zeros(T.NUM_ACTIONS, dtype=bool)
            for m in range(16):
                row = count_ex.copy()
                for s in range(4):
                    if not m >> s & 1:
                        row |= face[s]
                excl[r * _RANK_STATES + n * 16 + m] = row
    for bj in range(3):
        for rj in range(3):
            for w in range(3):
                row = np.zeros(T.NUM_ACTIONS, dtype=bool)
                for c in range(bj + 1, M.MAX_COUNT + 1):
                    row |= req[M.GE_BASE + 13 * (M.MAX_COUNT + 1) + c]
                for c in range(rj + 1, M.MAX_COUNT + 1):
                    row |= req[M.GE_BASE + 14 * (M.MAX_COUNT + 1) + c]
                for c in range(w + 1, T.MAX_WILDS + 1):
                    row |= req[M.WGE_BASE + c]
                excl[_J_BASE + bj * 9 + rj * 3 + w] = row
    ps = req[M.PS_BASE : M.PS_BASE + len(M.STRAIGHT_KEYS)]
    for bits in range(1024):
        row = np.zeros(T.NUM_ACTIONS, dtype=bool)
        for w in range(len(M.STRAIGHT_KEYS)):
            if not bits >> w & 1:
                row |= ps[w]
        excl[_PS_BASE + bits] = row
    excl |= ~M._PLAY  # returns are added per phase; pass is decided by the table row
    packed = _pack_rows(excl)
    packed |= _PAD_WORDS  # bits past the table are never legal
    return packed


EXCL = _build_exclusions()
EXCL.setflags(write=False)


def _rank_states() -> np.ndarray:
    """``int64[144]``: compact id of each possible (count, suit mask) state of a rank, -1 if
    impossible (a rank's count is between the number of suits held and twice that)."""
    ids = np.full(_RANK_STATES, -1, dtype=np.int64)
    k = 0
    for n in range(M.MAX_COUNT + 1):
        for m in range(16):
            if m.bit_count() <= n <= 2 * m.bit_count():
                ids[n * 16 + m] = k
                k += 1
    return ids


_STATE_ID = _rank_states()
_NUM_STATES = int(_STATE_ID.max()) + 1  # 48
_STATES = np.flatnonzero(_STATE_ID >= 0)
_PAIR_ROWS = _NUM_STATES * _NUM_STATES
_A_BASE = 6 * _PAIR_ROWS  # rank A with the joker/wild state
_MPS_BASE = _A_BASE + _NUM_STATES * 27


def _build_merged() -> np.ndarray:
    """``EXCL`` rows merged in fewer groups (two ranks per group; A with the jokers and
    wildcards; plain straights), so that a hand needs 8 row gathers instead of 15."""
    parts = []
    for k in range(6):
        a = EXCL[2 * k * _RANK_STATES + _STATES]
        b = EXCL[(2 * k + 1) * _RANK_STATES + _STATES]
        parts.append((a[:, None] | b[None, :]).reshape(-1, MASK_WORDS))
    a = EXCL[12 * _RANK_STATES + _STATES]
    parts.append((a[:, None] | EXCL[None, _J_BASE : _J_BASE + 27]).reshape(-1, MASK_WORDS))
    parts.append(EXCL[_PS_BASE:])
    return np.concatenate(parts)


MERGED = _build_merged()
MERGED.setflags(write=False)
_MERGED_GROUPS = 8
_PAIR_BASES = np.arange(6, dtype=np.int64) * _PAIR_ROWS
_PASS_WORDS = _pack_rows((np.arange(T.NUM_ACTIONS) == T.PASS_ACTION)[None])[0]
# extended rank line for plain straights: position 0 is the ace played low, 1..13 are 2..A
_EXT = np.array([12] + list(range(NUM_NATURAL_RANKS)), dtype=np.intp)
_RANK_OFF = np.arange(NUM_NATURAL_RANKS, dtype=np.int64) * _RANK_STATES
_SUM_BYTES = np.uint64(0x01010101)
_GATHER_BITS = np.uint64(0x01020408)
_POW2_10 = 1 << np.arange(10, dtype=np.int64)
# "table rows": row 0 for leading (every play, no pass, R-5.1), then per level and action on
# the table, the plays that beat it plus pass: row 1 + level * NUM_ACTIONS + last.
# Level blocks are filled on first use (``beats_matrix`` takes ~15 ms per level).
_TABLE_ROWS = np.zeros((1 + NUM_NATURAL_RANKS * T.NUM_ACTIONS, MASK_WORDS), dtype=np.uint64)
_TABLE_ROWS[0] = ~_PASS_WORDS
_TABLE_DONE = np.zeros(NUM_NATURAL_RANKS, dtype=bool)


def _table_rows(levels: np.ndarray) -> np.ndarray:
    """The table rows, with the blocks of ``levels`` filled in."""
    if not _TABLE_DONE[levels].all():
        for lv in np.flatnonzero(~_TABLE_DONE):
            if (levels == lv).any():
                block = _TABLE_ROWS[1 + lv * T.NUM_ACTIONS : 1 + (lv + 1) * T.NUM_ACTIONS]
                block[:] = beats_words(int(lv)) | _PASS_WORDS
                _TABLE_DONE[lv] = True
    return _TABLE_ROWS


def beaten_by_packed(
    levels: np.ndarray, actions: np.ndarray, words: slice = slice(None)
) -> np.ndarray:
    """``uint64 (B, MASK_WORDS)``: the plays that beat play ``actions[i]`` at deal level
    ``levels[i]`` (R-5.2, R-4; empty for pass and returns), from the same table rows;
    ``words``: only those words of each row (gathered alone: a kind's plays span few)."""
    levels = np.asarray(levels, dtype=np.int64)
    return _table_rows(levels)[1 + levels * T.NUM_ACTIONS + actions, words] & ~_PASS_WORDS[words]


def beats_words(level: int) -> np.ndarray:
    """``uint64 (NUM_ACTIONS, MASK_WORDS)``: ``movegen.beats_rows_packed`` padded to words."""
    rows = M.beats_rows_packed(level)
    buf = np.zeros((T.NUM_ACTIONS, MASK_BYTES), dtype=np.uint8)
    buf[:, : rows.shape[1]] = rows
    return buf.view(np.uint64)


def _hand_state(counts: np.ndarray, levels: np.ndarray):
    """Group states of a batch of hands: per natural rank ``count * 16 + suit mask``
    (``int64 (n, 13)``), the joker/wild state ``(n,)`` and the plain-straight bits ``(n,)``."""
    n = counts.shape[0]
    rows = np.arange(n)
    wild_face = wildcard_face(levels)
    natural = counts[:, :52].copy()  # never a view: the wildcard column is zeroed below
    wilds = natural[rows, wild_face]
    natural[rows, wild_face] = 0
    # the 4 suit counts (0..2) of a rank are the 4 bytes of one little-endian uint32
    quad = natural.view(np.uint32).astype(np.uint64)  # (n, 13)
    count = (quad * _SUM_BYTES) >> 24 & 0xFF  # sum of the 4 bytes
    present = (quad | quad >> 1) & 0x01010101
    suits = (present * _GATHER_BITS) >> 24 & 0xF  # byte s nonzero -> bit s
    rank_state = (count * 16 + suits).astype(np.int64)
    jstate = counts[:, 52].astype(np.int64) * 9 + counts[:, 53] * 3 + wilds
    # plain straight in window w (ext positions w..w+4): every rank held, and not all by
    # one and the same single suit (R-3.3) <=> the OR of the suit masks has >= 2 bits
    e = suits[:, _EXT]  # (n, 14)
    held = e[:, 0:10] > 0
    orm = e[:, 0:10].copy()
    for k in range(1, 5):
        held &= e[:, k : k + 10] > 0
        orm |= e[:, k : k + 10]
    ok = held & ((orm & (orm - 1)) != 0)
    return rank_state, jstate, ok.astype(np.int64) @ _POW2_10


def merged_index(counts: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """``int64 (B, 8)``: the rows of ``MERGED`` a batch of hands selects."""
    rank_state, jstate, ps = _hand_state(counts, levels)
    state = _STATE_ID[rank_state]  # (n, 13) compact ids
    idx = np.empty((state.shape[0], _MERGED_GROUPS), dtype=np.int64)
    np.multiply(state[:, 0:12:2], _NUM_STATES, out=idx[:, :6])
    idx[:, :6] += state[:, 1:12:2]
    idx[:, :6] += _PAIR_BASES
    idx[:, 6] = _A_BASE + state[:, 12] * 27 + jstate
    idx[:, 7] = _MPS_BASE + ps
    return idx


def play_masks_packed(counts: np.ndarray, levels: np.ndarray, lasts: np.ndarray) -> np.ndarray:
    """Packed play masks ``uint64 (B, MASK_WORDS)``: equal to ``movegen.batch_play_mask``.

    ``counts (B, 54)`` uint8 hands, ``levels (B,)`` deal levels, ``lasts (B,)`` the action to
    beat (-1 when leading, R-5.1); when following, pass is legal (R-5.2).
    """
    counts = np.asarray(counts, dtype=np.uint8)
    levels = np.asarray(levels, dtype=np.int64)
    lasts = np.asarray(lasts, dtype=np.int64)
    idx = merged_index(counts, levels)
    acc = MERGED[idx[:, 0]]
    for k in range(1, _MERGED_GROUPS):
        acc |= MERGED[idx[:, k]]
    np.invert(acc, out=acc)
    row = np.where(lasts >= 0, 1 + levels * T.NUM_ACTIONS + lasts, 0)
    acc &= _table_rows(levels)[row]
    return acc


# ---------------------------------------------------------------------------------------------
# one hand (the AEC engine's path): the same rows, group states computed in scalar Python

_STATE_ID_L = _STATE_ID.tolist()
_WILDCARD_FACE = [wildcard_face(lv) for lv in range(NUM_NATURAL_RANKS)]


def _rank_lut() -> list[tuple[int, int]]:
    """(state id, suit mask) of a natural rank by the base-3 code of its four suit counts."""
    out = []
    for code in range(81):
        s = [code // 27, code // 9 % 3, code // 3 % 3, code % 3]
        m = sum(1 << k for k in range(4) if s[k])
        out.append((_STATE_ID_L[sum(s) * 16 + m], m))
    return out


_RANK_LUT = _rank_lut()


def merged_index_one(counts: np.ndarray, level: int) -> list[int]:
    """``merged_index`` of one hand in scalar Python, faster than the batched function at
    ``B = 1`` (tested equal; figures in docs/benchmarks.md)."""
    c = counts.tolist()
    wild_face = _WILDCARD_FACE[level]
    wilds = c[wild_face]
    c[wild_face] = 0  # the ♥N wildcards are not natural cards
    groups = [
        _RANK_LUT[27 * c[4 * r] + 9 * c[4 * r + 1] + 3 * c[4 * r + 2] + c[4 * r + 3]]
        for r in range(NUM_NATURAL_RANKS)
    ]
    state = [g[0] for g in groups]
    ext = [groups[12][1]] + [g[1] for g in groups]  # suit masks; the ace also plays low
    ps = 0
    for w in range(10):  # plain straight: all five ranks held, not one single suit
        m0, m1, m2, m3, m4 = ext[w : w + 5]
        if m0 and m1 and m2 and m3 and m4:
            both = m0 | m1 | m2 | m3 | m4
            if both & (both - 1):
                ps |= 1 << w
    idx = [k * _PAIR_ROWS + state[2 * k] * _NUM_STATES + state[2 * k + 1] for k in range(6)]
    idx.append(_A_BASE + state[12] * 27 + c[52] * 9 + c[53] * 3 + wilds)
    idx.append(_MPS_BASE + ps)
    return idx


def hand_words(counts: np.ndarray, level: int) -> np.ndarray:
    """``uint64 (MASK_WORDS,)``: the plays one hand's cards allow, pass bit set; AND it with
    ``table_words`` for the trick state (as ``play_masks_packed`` does for a batch)."""
    acc = np.bitwise_or.reduce(MERGED.take(merged_index_one(counts, level), axis=0), axis=0)
    return np.invert(acc, out=acc)


def table_words(level: int, last: int) -> np.ndarray:
    """``uint64 (MASK_WORDS,)``: the table row of ``play_masks_packed`` for one table —
    every play but pass when leading (``last < 0``, R-5.1), else pass and what beats
    ``last`` (R-5.2, R-4)."""
    if last < 0:
        return _TABLE_ROWS[0]
    if not _TABLE_DONE[level]:
        _table_rows(np.array([level]))
    return _TABLE_ROWS[1 + level * T.NUM_ACTIONS + last]


def play_mask_one(counts: np.ndarray, level: int, last: int) -> np.ndarray:
    """``bool (NUM_ACTIONS,)`` play mask of one hand: leading when ``last < 0`` (R-5.1), else
    pass and the plays that beat ``last`` (R-5.2). Equal to ``movegen.lead_mask`` /
    ``movegen.follow_mask``, and about twice as fast at one hand (docs/benchmarks.md)."""
    return unpack_one(hand_words(counts, level) & table_words(level, last))


def unpack_one(words: np.ndarray) -> np.ndarray:
    """``uint64 (MASK_WORDS,)`` → ``bool (NUM_ACTIONS,)`` (a new array).

    Unpacks every bit, then slices: faster than ``np.unpackbits(..., count=...)``."""
    return np.unpackbits(words.view(np.uint8))[: T.NUM_ACTIONS].view(bool)


def unpack_masks(packed: np.ndarray) -> np.ndarray:
    """``uint64 (B, MASK_WORDS)`` → ``bool (B, NUM_ACTIONS)``."""
    return np.unpackbits(packed.view(np.uint8), axis=1, count=T.NUM_ACTIONS).view(bool)


def pack_masks(masks: np.ndarray) -> np.ndarray:
    """``bool (B, NUM_ACTIONS)`` → ``uint64 (B, MASK_WORDS)``."""
    return _pack_rows(np.asarray(masks, dtype=bool))


_LEVEL_KEYS = np.array(
    [[level_key(f, lv) for f in range(NUM_FACES)] for lv in range(NUM_NATURAL_RANKS)],
    dtype=np.int16,
)
_LOW_FACES = 9 * 4  # ranks 2..T are faces 0..35


def return_masks(counts: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Legal tribute returns for a batch (R-7.1), ``bool (B, NUM_ACTIONS)``; equal to
    ``movegen.return_mask`` per hand."""
    counts = np.asarray(counts)
    n = counts.shape[0]
    held = counts[:, :NUM_FACES] > 0
    low = held.copy()
    low[:, _LOW_FACES:] = False
    none_low = ~low.any(1)
    if none_low.any():
        keys = np.where(held[none_low], _LEVEL_KEYS[np.asarray(levels)[none_low]], 99)
        low[none_low] = keys == keys.min(1, keepdims=True)
    m = np.zeros((n, T.NUM_ACTIONS), dtype=bool)
    m[:, T.RETURN_BASE : T.RETURN_BASE + NUM_FACES] = low
    return m


# ---------------------------------------------------------------------------------------------
# sampling a uniformly random legal action straight from packed masks

_BYTE_POP = np.bitwise_count(np.arange(256, dtype=np.uint8)).astype(np.int64)
# _KTH_BIT[v, k]: position (0 = most significant, packbits order) of the k-th set bit of v
_KTH_BIT = np.zeros((256, 8), dtype=np.int64)
for _v in range(256):
    _bits = [p for p in range(8) if _v >> (7 - p) & 1]
    _KTH_BIT[_v, : len(_bits)] = _bits
del _v, _bits


def sample_packed(packed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of packed masks (``int64 (B,)``).

    Two levels: choose the 64-bit word by cumulative popcounts, then the byte, then the bit.
    Rows with an empty mask raise ``ValueError``.
    """
    n = packed.shape[0]
    rows = np.arange(n)
    pop = np.bitwise_count(packed).astype(np.int64)  # (B, W)
    cum = np.cumsum(pop, axis=1)
    total = cum[:, -1]
    if (total == 0).any():
        raise ValueError(f"empty action mask at rows {np.flatnonzero(total == 0)[:8].tolist()}")
    k = (rng.random(n) * total).astype(np.int64)
    word = (cum <= k[:, None]).sum(1)
    k -= cum[rows, word] - pop[rows, word]
    wbytes = packed[rows, word].view(np.uint8).reshape(n, 8).astype(np.int64)
    bpop = _BYTE_POP[wbytes]
    bcum = np.cumsum(bpop, axis=1)
    byte = (bcum <= k[:, None]).sum(1)
    k -= bcum[rows, byte] - bpop[rows, byte]
    return (word * 8 + byte) * 8 + _KTH_BIT[wbytes[rows, byte], k]
