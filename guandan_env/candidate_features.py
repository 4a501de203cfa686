"""Inputs of a candidate-scoring policy: the legal candidates of each decision, what each
would leave in hand and how many plays that hand still needs, and what public counting says
about the other hands. Numpy only.

A policy that scores candidates (DouZero, DanZero, PerfectDou) needs, per decision, its legal
action ids and a feature row per candidate. ``candidates_packed(mask_bits)`` flattens a batch
of bit-packed masks into ``(rows, ids)`` (row-major: each row's candidates are contiguous and
ascending). ``decision_features(obs, rows, ids)`` gives the
candidate rows ``float32 (M, CAND_DIM)``:

==============  =====  =====================================================================
block           size   meaning
==============  =====  =====================================================================
action          109    ``features.action_features(level)`` row of the id (kind, cards, value…)
after           5      the hand left: goes out, bombs broken by a non-bomb play / 4, lone
                       cards (ranks held once) / 13, pairs / 13, triples / 13
plan            13     ``hand_plan.plan_features`` of the hand left: plays still needed,
                       bombs and singles in the plan, control cards, … (``PLAN_FIELDS``)
plan_delta      1      plays needed after the action minus before it, / 4
==============  =====  =====================================================================

and the decision rows ``float32 (N, STATE_DIM)``, appended to the observation: the plan of
the own hand, and public counting over the cards no-one has shown (``unseen``: held by the
three others): per natural rank the unseen count / 8 and whether the others may hold a bomb
of that rank (≥ 4 with the unseen wildcards), the unseen jokers, whether four jokers are
possible, and per straight window whether the others may hold that straight (every rank
unseen, the unseen wildcards filling at most the gaps).

Everything is derived from the observation and the mask alone, so the acting side (the env
runner) and the learning side (the PPO loss) compute the same inputs from the same stored
sample. The plan is ``hand_plan``'s fast method (exact without sequences, sequences added
greedily; never below the true count).
"""

from __future__ import annotations

import numpy as np

from . import actions as T
from .cards import HEARTS, NUM_FACES, NUM_NATURAL_RANKS
from .features import ACTION_FEATURE_DIM, action_features
from .hand_plan import PLAN_DIM, PlanCache, plan_features
from .observation import OBS_SLICES
from .packing import set_bits

NR = NUM_NATURAL_RANKS
AFTER_DIM = 5
CAND_DIM = ACTION_FEATURE_DIM + AFTER_DIM + PLAN_DIM + 1
STRAIGHT_WINDOWS = np.array(
    [T.seq_ranks(T.STRAIGHT, k) for k in T.seq_keys(T.STRAIGHT)], dtype=np.intp
)  # (10, 5)
STATE_DIM = PLAN_DIM + NR + NR + 3 + len(STRAIGHT_WINDOWS)

_ALL_FEATURES = np.stack([action_features(lv) for lv in range(NR)])  # (13, A, F)
_FLAT_FEATURES = _ALL_FEATURES.reshape(-1, _ALL_FEATURES.shape[2])  # row level * A + id
_NAT = T.NAT.astype(np.int16)  # (A, 15)
_WILDS = T.WILDS.astype(np.int16)
_IS_BOMB = np.isin(T.KIND, T.BOMB_KINDS)
_RETURN_FACE = T.RETURN_FACE.astype(np.intp)
_HAND = OBS_SLICES["hand"]
_UNSEEN = OBS_SLICES["unseen"]
_LEVEL = OBS_SLICES["deal_level"]


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
    wilds = faces[ar, level * 4 + HEARTS]
    nat = np.empty((n, 15), dtype=np.int16)
    nat[:, :NR] = faces[:, :52].reshape(n, NR, 4).sum(2)
    nat[ar, level] -= wilds
    nat[:, 13:] = faces[:, 52:]
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
        is_wild = face == lv[is_ret] * 4 + HEARTS
        wilds[is_ret[is_wild]] -= 1
        rank = np.where(face >= 52, face - 39, face // 4)  # 52 -> 13 (BJ), 53 -> 14 (RJ)
        nat[is_ret[~is_wild], rank[~is_wild]] -= 1
    return nat, wilds


def plan_blocks(obs: np.ndarray, rows: np.ndarray, ids: np.ndarray, cache: PlanCache | None = None):
    """``(hand plan (N, PLAN_DIM), plan of each candidate's hand left (M, PLAN_DIM))``: the
    costly part of ``decision_features``, computed once where the decision is made and
    shipped with the sample so the learner need not repeat it."""
    obs = np.asarray(obs)
    level = levels_of(obs)
    hand_nat, hand_wilds = _rank_state(_face_counts(obs, _HAND), level)
    hand_plan = plan_features(*_plan_inputs(hand_nat, hand_wilds), level, cache=cache)
    lv = level[rows]
    nat, wilds = _after_hands(hand_nat[rows], hand_wilds[rows], lv, ids)
    return hand_plan, plan_features(*_plan_inputs(nat, wilds), lv, cache=cache)


def decision_features(
    obs: np.ndarray, rows: np.ndarray, ids: np.ndarray, plans=None, cache: PlanCache | None = None
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """``(candidate rows float32 (M, CAND_DIM), decision rows float32 (N, STATE_DIM), plans)``.

    ``obs``: observations ``(N, OBS_DIM)``, or their 0/1 part alone (any numeric dtype);
    ``plans``: ``plan_blocks`` of the same decisions if already known (returned either way,
    so a sampler can ship them with the sample); ``cache``: a ``hand_plan.PlanCache`` memo
    for computing them (same answers, faster when hands repeat)."""
    obs = np.asarray(obs)
    level = levels_of(obs)
    hand_nat, hand_wilds = _rank_state(_face_counts(obs, _HAND), level)
    lv = level[rows]
    nat, wilds = _after_hands(hand_nat[rows], hand_wilds[rows], lv, ids)
    if plans is None:
        # the hand first: a pass leaves it as it is, so the memo answers those candidates
        hand_plan = plan_features(*_plan_inputs(hand_nat, hand_wilds), level, cache=cache)
        plan = plan_features(*_plan_inputs(nat, wilds), lv, cache=cache)
        plans = (hand_plan, plan)
    else:
        hand_plan, plan = plans
    phi = np.empty((ids.shape[0], CAND_DIM), dtype=np.float32)
    a0 = ACTION_FEATURE_DIM
    phi[:, :a0] = np.take(_FLAT_FEATURES, lv * T.NUM_ACTIONS + ids, axis=0)  # 2x the 2-D gather
    natural = nat[:, :NR]
    after = phi[:, a0 : a0 + AFTER_DIM]
    after[:, 0] = (natural.sum(1) + nat[:, 13] + nat[:, 14] + wilds) == 0
    broken = _bombs(hand_nat)[rows] - _bombs(nat)
    after[:, 1] = np.where(_IS_BOMB[ids], 0, broken) / 4.0
    after[:, 2] = (natural == 1).sum(1) / 13.0
    after[:, 3] = (natural == 2).sum(1) / 13.0
    after[:, 4] = (natural == 3).sum(1) / 13.0
    p0 = a0 + AFTER_DIM
    phi[:, p0 : p0 + PLAN_DIM] = plan
    phi[:, -1] = (plan[:, 0] - hand_plan[rows, 0]) * (10.0 / 4.0)  # plays / 10 -> delta / 4
    return phi, _state_features(obs, level, hand_plan), plans


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
