"""Inputs of a candidate-scoring policy: the legal candidates of each decision, what each
would leave in hand and how many plays that hand still needs, and what public counting says
about the other hands. Numpy only.

A policy that scores candidates (DouZero, DanZero, PerfectDou) needs, per decision, its legal
action ids and a feature row per candidate. ``candidates_packed(mask_bits)`` flattens a batch
of bit-packed masks into ``(rows, ids)`` (row-major: each row's candidates are contiguous and
ascending). ``decision_features(obs, rows, ids)`` gives their ``CandidateInputs``; the full
candidate rows ``float32 (M, CAND_DIM)`` (``candidate_rows``) are:

==============  =====  =====================================================================
block           size   meaning
==============  =====  =====================================================================
action          109    ``features.action_features(level)`` row of the id (kind, cards, value…)
after           5      the hand left: goes out, bombs broken by a non-bomb play / 4, lone
                       cards (ranks held once) / 13, pairs / 13, triples / 13
plan            13     ``hand_plan.plan_features`` of the hand left: plays still needed,
                       bombs and singles in the plan, control cards, … (``PLAN_FIELDS``)
plan_delta      1      plays needed after the action minus before it, / 4
beat            2      whether the unseen cards (the three other hands pooled) hold a play
                       that beats it: one of its own kind (a non-bomb), a bomb (0 for a
                       pass or a tribute return)
reply           9      the ``beat`` block seat by seat (next, partner, previous): whether
                       the unseen cards hold a play that beats it and fits in that seat's
                       hand (no more cards than it holds): of its own kind, a bomb; and
                       whether one of exactly that many cards does (the seat could go out
                       on it). 0 for a seat that is out
==============  =====  =====================================================================

and the decision rows ``float32 (N, STATE_DIM)``, appended to the observation: the plan of
the own hand, and public counting over the cards no-one has shown (``unseen``: held by the
three others): per natural rank the unseen count / 8 and whether the others may hold a bomb
of that rank (≥ 4 with the unseen wildcards), the unseen jokers, whether four jokers are
possible, and per straight window whether the others may hold that straight (every rank
unseen, the unseen wildcards filling at most the gaps).

Everything is derived from the observation and the mask alone. The acting side (the env
runner) computes it once and ships the ``rest`` and ``state`` blocks with the sample, so the
learning side (the PPO loss) reads exactly what the acting forward pass read. The plan is
``hand_plan``'s fast method (exact without sequences, sequences added greedily; never below
the true count).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import actions as T
from ..core.cards import BJ_FACE, NUM_FACES, NUM_NATURAL_FACES, NUM_NATURAL_RANKS, wildcard_face
from ..core.vector_mask import beaten_by_packed, pack_masks, play_masks_packed
from .features import ACTION_FEATURE_DIM, action_features
from .hand_plan import PLAN_DIM, PlanCache, plan_features
from .observation import OBS_SLICES
from .packing import BINARY, OBS_BITS, set_bits

NR = NUM_NATURAL_RANKS
AFTER_DIM = 5
DELTA_COL = AFTER_DIM + PLAN_DIM  # the plan delta's column of the rest rows
BEAT_COL = DELTA_COL + 1
BEAT_DIM = 2
REPLY_COL = BEAT_COL + BEAT_DIM
REPLY_SEATS = (1, 2, 3)  # relative seats of the reply block: next, partner, previous
REPLY_DIM = 3 * len(REPLY_SEATS)  # per seat: own kind, bomb, exactly its cards
REST_DIM = REPLY_COL + REPLY_DIM  # a candidate's inputs besides its action block
CAND_DIM = ACTION_FEATURE_DIM + REST_DIM
STRAIGHT_WINDOWS = np.array(
    [T.seq_ranks(T.STRAIGHT, k) for k in T.seq_keys(T.STRAIGHT)], dtype=np.intp
)  # (10, 5)
STATE_DIM = PLAN_DIM + NR + NR + 3 + len(STRAIGHT_WINDOWS)

# the action block of every (level, id): row level * NUM_ACTIONS + id
ACTION_FEATURE_TABLE = np.ascontiguousarray(
    np.stack([action_features(lv) for lv in range(NR)]).reshape(-1, ACTION_FEATURE_DIM),
    dtype=np.float32,
)
_NAT = T.NAT.astype(np.int16)  # (A, 15)
_WILDS = T.WILDS.astype(np.int16)
_IS_BOMB = np.isin(T.KIND, T.BOMB_KINDS)
_RETURN_FACE = T.RETURN_FACE.astype(np.intp)
_BOMB_WORDS = pack_masks(T.IS_BOMB[None])[0]  # the beat block: bomb plays, packed
_SIZE = T.SIZE.astype(np.int16)
MAX_PLAY_CARDS = int(T.SIZE.max())  # 10: a seat holding more fits every play
# the reply block: bombs of each size 0..MAX_PLAY_CARDS (none below 4), packed, over the
# words that hold bombs
_BOMB_SIZE_WORDS = pack_masks(
    T.IS_BOMB[None] & (T.SIZE[None] == np.arange(MAX_PLAY_CARDS + 1)[:, None])
)
_BOMB_SPAN = slice(int(np.flatnonzero(_BOMB_WORDS)[0]), int(np.flatnonzero(_BOMB_WORDS)[-1]) + 1)
_BOMB_SIZE_WORDS = np.ascontiguousarray(_BOMB_SIZE_WORDS[:, _BOMB_SPAN])
_PLAIN_PLAY = (T.KIND != T.PASS) & (T.KIND != T.RETURN) & ~_IS_BOMB  # beaten by any bomb
# (kind, the words holding its ids) of each non-bomb play kind: its answers of its own kind
_KIND_WORDS = tuple(
    (int(k), slice(int(ids[0]) // 64, int(ids[-1]) // 64 + 1))
    for k in np.unique(T.KIND[_PLAIN_PLAY])
    for ids in [np.flatnonzero(T.KIND == k)]
)
_CARDS_LEFT = OBS_SLICES["cards_left"]
_SEATS_HELD = len(REPLY_SEATS) + 1  # cards_left has one block per relative seat
_HAND = OBS_SLICES["hand"]
_UNSEEN = OBS_SLICES["unseen"]
_LEVEL = OBS_SLICES["deal_level"]
if BINARY != slice(0, OBS_BITS):
    # ``decision_features`` also reads the 0/1 part alone (``obs[:, packing.BINARY]``) with the
    # observation's column numbers: true while every scalar field comes after the 0/1 ones
    raise ValueError("candidate_features reads the 0/1 part with observation column numbers")


def candidates_packed(mask_bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, ids)`` int64 of every legal action of ``packing.pack_masks`` bits, row-major
    (each row's candidates contiguous and ascending)."""
    return set_bits(mask_bits)


def _face_counts(obs: np.ndarray, part: slice) -> np.ndarray:
    """``int16 (N, 54)`` copies per face of a 108-bit card set (bits "≥ 1", "= 2")."""
    bits = obs[:, part].reshape(obs.shape[0], NUM_FACES, 2).astype(np.int16)
    return bits[..., 0] + bits[..., 1]


def levels_of(obs: np.ndarray) -> np.ndarray:
    """Deal level rank index ``(N,)`` from the observation's one-hot."""
    return np.argmax(obs[:, _LEVEL], axis=1).astype(np.intp)


def _rank_state(faces: np.ndarray, level: np.ndarray):
    """``(nat int16 (N, 15), wilds int16 (N,))``: naturals per rank (jokers at 13, 14) and ♥N."""
    n = faces.shape[0]
    ar = np.arange(n)
    wilds = faces[ar, wildcard_face(level)]
    nat = np.empty((n, 15), dtype=np.int16)
    nat[:, :NR] = faces[:, :NUM_NATURAL_FACES].reshape(n, NR, 4).sum(2)
    nat[ar, level] -= wilds
    nat[:, 13:] = faces[:, NUM_NATURAL_FACES:]
    return nat, wilds


def _plan_inputs(nat: np.ndarray, wilds: np.ndarray):
    return (
        np.ascontiguousarray(nat[:, :NR], dtype=np.uint8),
        nat[:, 13].astype(np.uint8),
        nat[:, 14].astype(np.uint8),
        wilds.astype(np.uint8),
    )


def _bombs(nat: np.ndarray) -> np.ndarray:
    return (nat[:, :NR] >= 4).sum(1) + ((nat[:, 13] == 2) & (nat[:, 14] == 2))


def _after_hands(hand_nat, hand_wilds, lv, ids):
    """Rank states left after each candidate."""
    nat = hand_nat - _NAT[ids]
    wilds = hand_wilds - _WILDS[ids]
    ret = _RETURN_FACE[ids]
    is_ret = np.flatnonzero(ret >= 0)
    if is_ret.size:  # a tribute return hands back one face: a wildcard, a natural or a joker
        face = ret[is_ret]
        is_wild = face == wildcard_face(lv[is_ret])
        wilds[is_ret[is_wild]] -= 1
        rank = np.where(face >= BJ_FACE, face - BJ_FACE + 13, face // 4)  # BJ -> 13, RJ -> 14
        nat[is_ret[~is_wild], rank[~is_wild]] -= 1
    return nat, wilds


@dataclass
class CandidateInputs:
    """What a candidate-scoring policy reads of a batch of decisions besides the observation.

    The action block of a candidate's row depends only on (deal level, id), so it is given as
    ``keys`` into ``ACTION_FEATURE_TABLE``: a network can project the distinct keys of a batch
    once (a batch of ~25,000 candidates has ~10,000 distinct ones) instead of every row.
    ``candidate_rows`` assembles the full ``(M, CAND_DIM)`` rows."""

    keys: np.ndarray  # (M,) int64: row of ACTION_FEATURE_TABLE (level * NUM_ACTIONS + id)
    rest: np.ndarray  # (M, REST_DIM) float32: the after, plan and plan-delta blocks
    state: np.ndarray  # (N, STATE_DIM) float32: decision rows


def action_keys(obs: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Row of ``ACTION_FEATURE_TABLE`` of each candidate (its deal level and id)."""
    return _keys(levels_of(np.asarray(obs))[rows], ids)


def _keys(candidate_levels: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return candidate_levels * T.NUM_ACTIONS + ids


@dataclass
class DecisionContext:
    """What every candidate of a decision shares: the deal level, the hand in rank space, its
    plan and the decision rows. ``candidate_rest`` turns it into candidate rows, for any
    subset of the candidates (the runner's pruned planning plans the kept ones alone)."""

    level: np.ndarray  # (N,) intp: deal level rank index
    hand_nat: np.ndarray  # (N, 15) int16: naturals per rank, jokers at 13 and 14
    hand_wilds: np.ndarray  # (N,) int16: ♥N wildcards
    hand_plan: np.ndarray  # (N, PLAN_DIM) float32: the own hand's plan
    state: np.ndarray  # (N, STATE_DIM) float32: decision rows
    unseen_plays: np.ndarray  # (N, MASK_WORDS) uint64: ``plays_of`` the unseen cards
    held: np.ndarray  # (N, 3) int16: cards held by the ``REPLY_SEATS``

    def keys(self, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Rows of ``ACTION_FEATURE_TABLE`` of candidates ``(rows, ids)``."""
        return _keys(self.level[rows], ids)


def decision_context(obs: np.ndarray, cache: PlanCache | None = None) -> DecisionContext:
    """``DecisionContext`` of decisions ``obs`` (observations or their 0/1 part)."""
    obs = np.asarray(obs)
    level = levels_of(obs)
    hand_nat, hand_wilds = _rank_state(_face_counts(obs, _HAND), level)
    # the hand first: a pass leaves it as it is, so the memo answers those candidates
    hand_plan = plan_features(*_plan_inputs(hand_nat, hand_wilds), level, cache=cache)
    state = _state_features(obs, level, hand_plan)
    unseen_plays = plays_of(_face_counts(obs, _UNSEEN).astype(np.uint8), level)
    held = cards_held(obs)[:, REPLY_SEATS]
    return DecisionContext(level, hand_nat, hand_wilds, hand_plan, state, unseen_plays, held)


def cards_held(obs: np.ndarray) -> np.ndarray:
    """``int16 (N, 4)``: cards held per relative seat (the ``cards_left`` one-hots)."""
    one_hot = obs[:, _CARDS_LEFT].reshape(obs.shape[0], _SEATS_HELD, -1)
    return np.argmax(one_hot, axis=2).astype(np.int16)


def plays_of(counts: np.ndarray, level: np.ndarray) -> np.ndarray:
    """``uint64 (N, MASK_WORDS)``: every play cards ``counts (N, 54)`` can make at deal levels
    ``level`` (the engine's packed lead masks; any number of cards)."""
    return play_masks_packed(counts, level, np.full(counts.shape[0], -1, dtype=np.int64))


def beat_features(
    plays: np.ndarray, level: np.ndarray, ids: np.ndarray, rows: np.ndarray | None = None
) -> np.ndarray:
    """``float32 (M, BEAT_DIM)`` of candidates ``ids`` at deal levels ``level (M,)``, given
    ``plays_of`` the cards that may answer them: one of those plays beats the candidate and
    is no bomb (so of its kind), one is a bomb (0 for pass, returns). ``plays (N,
    MASK_WORDS)`` per decision and ``rows (M,)`` the decision of each candidate (None: one
    row of ``plays`` per candidate).

    Each kind's plays are one run of ids, so a non-bomb's answers of its kind are read over
    that run's few words alone, and every bomb beats a non-bomb (R-4): only a bomb
    candidate needs the bomb words row by row."""
    ids = np.asarray(ids, dtype=np.intp)
    level = np.asarray(level, dtype=np.int64)
    rows = np.arange(ids.shape[0]) if rows is None else np.asarray(rows, dtype=np.intp)
    out = np.zeros((ids.shape[0], BEAT_DIM), dtype=np.float32)
    kind = T.KIND[ids]
    holds_bomb = (plays[:, _BOMB_SPAN] & _BOMB_WORDS[_BOMB_SPAN]).any(1)
    out[:, 1] = _PLAIN_PLAY[ids] & holds_bomb[rows]
    for k, words in _KIND_WORDS:
        sel = np.flatnonzero(kind == k)
        if sel.size:
            answers = beaten_by_packed(level[sel], ids[sel], words) & plays[rows[sel], words]
            out[sel, 0] = (answers & ~_BOMB_WORDS[words]).any(1)
    sel = np.flatnonzero(_IS_BOMB[ids])
    if sel.size:
        out[sel, 1] = _bomb_answers(plays, level, ids, rows, sel).any(1)
    return out


def _bomb_answers(plays, level, ids, rows, sel) -> np.ndarray:
    """``uint64 (S, bomb words)``: the bombs among ``plays`` beating candidates ``sel``."""
    answers = beaten_by_packed(level[sel], ids[sel], _BOMB_SPAN) & plays[rows[sel], _BOMB_SPAN]
    return answers & _BOMB_WORDS[_BOMB_SPAN]


def _bomb_sizes(words: np.ndarray) -> np.ndarray:
    """``bool (S, MAX_PLAY_CARDS + 1)``: which bomb sizes the bomb words hold."""
    return (words[:, None, :] & _BOMB_SIZE_WORDS[None]).any(2)


def reply_features(
    beat: np.ndarray,
    plays: np.ndarray,
    level: np.ndarray,
    ids: np.ndarray,
    held: np.ndarray,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """``float32 (M, REPLY_DIM)``: the ``beat`` block ``beat (M, BEAT_DIM)`` of candidates
    ``ids`` split by the seats that may answer, holding ``held (M, 3)`` cards (see the module
    table); ``plays`` and ``rows`` as for ``beat_features``. A non-bomb answer has the
    candidate's own size, so its columns follow from the pooled one; the bomb sizes are
    looked up only where a seat holds few enough cards for them to matter (late in a deal):
    for a non-bomb, the sizes of every bomb the cards hold, per decision."""
    ids = np.asarray(ids, dtype=np.intp)
    level = np.asarray(level, dtype=np.int64)
    rows = np.arange(ids.shape[0]) if rows is None else np.asarray(rows, dtype=np.intp)
    m = ids.shape[0]
    out = np.zeros((m, len(REPLY_SEATS), 3), dtype=np.float32)
    size = _SIZE[ids][:, None]
    kind = beat[:, :1] > 0
    out[..., 0] = kind & (size <= held)
    out[..., 1] = (beat[:, 1:2] > 0) & (held > MAX_PLAY_CARDS)
    out[..., 2] = kind & (size == held)
    few = np.flatnonzero((beat[:, 1] > 0) & (held <= MAX_PLAY_CARDS).any(1))
    if few.size:
        exact = np.empty((few.size, MAX_PLAY_CARDS + 1), dtype=bool)  # bomb sizes that beat
        bomb = _IS_BOMB[ids[few]]
        plain = np.flatnonzero(~bomb)
        if plain.size:
            dec, back = np.unique(rows[few[plain]], return_inverse=True)
            exact[plain] = _bomb_sizes(plays[dec, _BOMB_SPAN] & _BOMB_WORDS[_BOMB_SPAN])[back]
        if bomb.any():
            exact[bomb] = _bomb_sizes(_bomb_answers(plays, level, ids, rows, few[bomb]))
        at_most = np.logical_or.accumulate(exact, axis=1)
        n = held[few]
        small = n <= MAX_PLAY_CARDS
        n = np.minimum(n, MAX_PLAY_CARDS).astype(np.intp)
        f = np.arange(few.size)[:, None]
        out[few, :, 1] = np.where(small, at_most[f, n], 1.0)
        out[few, :, 2] = np.maximum(out[few, :, 2], small & exact[f, n])
    return out.reshape(m, REPLY_DIM)


PLAN_MODES = ("full", "no_sequences", "none")


def candidate_rest(
    ctx: DecisionContext,
    rows: np.ndarray,
    ids: np.ndarray,
    cache: PlanCache | None = None,
    plans: str = "full",
) -> np.ndarray:
    """The ``(M, REST_DIM)`` rows past the action block of candidates ``(rows, ids)``.

    ``plans``: ``"full"`` (the features); cheaper stand-ins for a first pass that only ranks
    candidates: ``"no_sequences"`` (``hand_plan``'s split without sequence rounds, for the
    hand left and the hand alike, so the plan delta compares like with like) or ``"none"``
    (plan block and delta left at 0)."""
    if plans not in PLAN_MODES:
        raise ValueError(f"plans must be one of {PLAN_MODES}, got {plans!r}")
    lv = ctx.level[rows]
    nat, wilds = _after_hands(ctx.hand_nat[rows], ctx.hand_wilds[rows], lv, ids)
    rest = np.zeros((ids.shape[0], REST_DIM), dtype=np.float32)
    natural = nat[:, :NR]
    rest[:, 0] = (natural.sum(1) + nat[:, 13] + nat[:, 14] + wilds) == 0
    broken = _bombs(ctx.hand_nat)[rows] - _bombs(nat)
    rest[:, 1] = np.where(_IS_BOMB[ids], 0, broken) / 4.0
    rest[:, 2] = (natural == 1).sum(1) / 13.0
    rest[:, 3] = (natural == 2).sum(1) / 13.0
    rest[:, 4] = (natural == 3).sum(1) / 13.0
    plays = ctx.unseen_plays
    beat = beat_features(plays, lv, ids, rows)
    rest[:, BEAT_COL:REPLY_COL] = beat
    rest[:, REPLY_COL:] = reply_features(beat, plays, lv, ids, ctx.held[rows], rows)
    if plans == "none":
        return rest
    rounds = None if plans == "full" else 0
    plan = plan_features(*_plan_inputs(nat, wilds), lv, cache=cache, rounds=rounds)
    hand_plan = ctx.hand_plan
    if rounds is not None:
        hand_plan = plan_features(
            *_plan_inputs(ctx.hand_nat, ctx.hand_wilds), ctx.level, rounds=rounds
        )
    rest[:, AFTER_DIM:DELTA_COL] = plan
    rest[:, DELTA_COL] = (plan[:, 0] - hand_plan[rows, 0]) * (10.0 / 4.0)  # plays/10 -> delta/4
    return rest


def decision_features(
    obs: np.ndarray, rows: np.ndarray, ids: np.ndarray, cache: PlanCache | None = None
) -> CandidateInputs:
    """The inputs of candidates ``(rows, ids)`` of decisions ``obs``.

    ``obs``: observations ``(N, OBS_DIM)``, or their 0/1 part alone (any numeric dtype);
    ``cache``: a ``hand_plan.PlanCache`` memo for the plans (same answers, faster when hands
    repeat)."""
    ctx = decision_context(obs, cache)
    rest = candidate_rest(ctx, rows, ids, cache)
    return CandidateInputs(ctx.keys(rows, ids), rest, ctx.state)


def candidate_rows(inputs: CandidateInputs) -> np.ndarray:
    """The full candidate rows ``float32 (M, CAND_DIM)`` (action block, then the rest)."""
    return np.concatenate([ACTION_FEATURE_TABLE[inputs.keys], inputs.rest], axis=1)


def _state_features(obs: np.ndarray, level: np.ndarray, hand_plan: np.ndarray) -> np.ndarray:
    n = obs.shape[0]
    out = np.empty((n, STATE_DIM), dtype=np.float32)
    out[:, :PLAN_DIM] = hand_plan
    unseen_nat, unseen_wilds = _rank_state(_face_counts(obs, _UNSEEN), level)
    natural = unseen_nat[:, :NR]
    o = PLAN_DIM
    out[:, o : o + NR] = natural / 8.0
    out[:, o + NR : o + 2 * NR] = natural + unseen_wilds[:, None] >= 4
    o += 2 * NR
    out[:, o] = unseen_nat[:, 13] / 2.0
    out[:, o + 1] = unseen_nat[:, 14] / 2.0
    out[:, o + 2] = (unseen_nat[:, 13] == 2) & (unseen_nat[:, 14] == 2)
    o += 3
    gaps = (natural[:, STRAIGHT_WINDOWS] == 0).sum(2)  # (N, 10)
    out[:, o:] = gaps <= unseen_wilds[:, None]
    return out
