"""The candidate rows' ``beat`` block (R-4, R-5.2) against the slow reference generator.

For a pooled multiset of cards (what the three other hands may hold together) and a
candidate play, the block says whether those cards can make a play of the candidate's kind
that beats it, and whether they can make a bomb that beats it. The reference
(tests/helpers/reference_movegen.py, written from RULES.md alone) lists the plays of the
multiset that beat the candidate; the block must agree on every case.
"""

from __future__ import annotations

import random

import numpy as np

from agents.candidate_inputs import block_mask, check_model_config, upgrade_weights
from guandan_env import describe_action
from guandan_env.core import actions as T
from guandan_env.core.cards import parse_hand
from guandan_env.encoding.candidate_features import (
    BEAT_DIM,
    CAND_DIM,
    DELTA_COL,
    REST_DIM,
    beat_features,
    candidate_rest,
    candidates_packed,
    decision_context,
    plays_of,
)
from guandan_env.encoding.packing import pack_masks
from helpers.reference_movegen import RANKS, SUITS, canonical, reference_moves

DECK = [s + r for s in SUITS for r in RANKS] * 2 + ["BJ", "RJ"] * 2
BOMB_KINDS = {"bomb", "straight_flush", "four_jokers"}
_PLAY_IDS = np.flatnonzero((T.KIND != T.PASS) & (T.KIND != T.RETURN))
_BOMB_IDS = np.flatnonzero(T.IS_BOMB)


def _reference(cards: str, level: str, action: int) -> tuple[float, float]:
    last = canonical(describe_action(int(action), level))
    beaters = [m for m in reference_moves(cards, level, last) if m[0] != "pass"]
    return (
        float(any(m[0] not in BOMB_KINDS for m in beaters)),
        float(any(m[0] in BOMB_KINDS for m in beaters)),
    )


def _cases(n: int, seed: int):
    rng = random.Random(seed)
    for i in range(n):
        level = RANKS[i % len(RANKS)]
        size = rng.choice([1, 2, 3, 5, 8, 13, 20, 27, 40, 54])
        cards = " ".join(rng.sample(DECK, size))
        # mostly plays of every kind, a quarter bombs (rare among random ids otherwise)
        pool = _BOMB_IDS if rng.random() < 0.25 else _PLAY_IDS
        yield cards, level, [int(a) for a in rng.sample(list(pool), 6)]


def test_beat_block_equals_the_reference_on_random_pooled_hands_and_candidates():
    """R-4, R-5.2: 1,560 (cards, level, candidate) cases over all 13 levels."""
    failures, total = [], 0
    for cards, level, ids in _cases(260, seed=20261203):
        lv = RANKS.index(level)
        counts = parse_hand(cards, max_cards=108).astype(np.uint8)
        plays = plays_of(counts[None], np.array([lv]))
        got = beat_features(np.repeat(plays, len(ids), 0), np.full(len(ids), lv), np.array(ids))
        for a, row in zip(ids, got, strict=True):
            total += 1
            want = _reference(cards, level, a)
            if tuple(row.tolist()) != want:
                failures.append((cards, level, describe_action(a, level), row.tolist(), want))
    assert total == 1560
    assert not failures, f"{len(failures)} of {total} differ, first: {failures[:3]}"


def test_beat_block_is_zero_for_pass_and_returns_and_known_for_the_top_cards():
    level = np.array([0])  # level 2: the ♥2 are the wildcards
    everything = parse_hand(" ".join(DECK), max_cards=108).astype(np.uint8)[None]
    nothing = np.zeros_like(everything)
    ids = np.array([T.PASS_ACTION, T.RETURN_BASE, int(np.flatnonzero(T.KIND == T.FOUR_JOKERS)[0])])
    for counts in (everything, nothing):
        plays = plays_of(counts, level)
        got = beat_features(np.repeat(plays, 3, 0), np.repeat(level, 3), ids)
        assert not got.any()  # pass and returns are never beaten; nothing beats four jokers
    rj = int(np.flatnonzero((T.KIND == T.SINGLE) & (T.KEY == T.RJ_RANK))[0])
    plays = plays_of(everything, level)
    assert beat_features(plays, level, np.array([rj])).tolist() == [[0.0, 1.0]]


def test_the_block_sits_at_the_end_of_the_rest_rows_and_switches_off():
    from guandan_env.envs.vector import VectorGuandanEnv

    env = VectorGuandanEnv(8, random_levels=True, random_tribute=True)
    obs, mask, _ = env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(12):  # some cards out, so the unseen set is not the whole other deck
        legal = [np.flatnonzero(m) for m in mask]
        obs, mask, *_ = env.step(np.array([rng.choice(a) for a in legal], dtype=np.int64))
    rows, ids = candidates_packed(pack_masks(mask))
    ctx = decision_context(obs)
    rest = candidate_rest(ctx, rows, ids)
    assert rest.shape == (ids.size, REST_DIM) and REST_DIM == DELTA_COL + 1 + BEAT_DIM
    want = beat_features(ctx.unseen_plays[rows], ctx.level[rows], ids)
    assert np.array_equal(rest[:, DELTA_COL + 1 :], want)
    assert want[:, 0].any() and not want[:, 0].all()  # the block carries information
    cand, _ = block_mask(["after", "plan", "state"])
    assert not cand[DELTA_COL + 1 :].any() and cand[: DELTA_COL + 1].all()
    assert check_model_config(None)["features"] == ["after", "plan", "state", "beat"]


def test_weights_from_before_the_block_gain_zero_columns():
    width = CAND_DIM - BEAT_DIM
    old = {"cand_proj.weight": np.ones((4, width), np.float32), "value_head.bias": np.zeros(1)}
    new = upgrade_weights(old)
    assert new["cand_proj.weight"].shape == (4, CAND_DIM)
    assert np.array_equal(new["cand_proj.weight"][:, :width], old["cand_proj.weight"])
    assert not new["cand_proj.weight"][:, width:].any()
    assert upgrade_weights(new) is new  # today's weights pass through
    for bad in (np.float32(1.0), np.zeros(width), np.zeros((2, width, 1))):
        crafted = {"cand_proj.weight": bad}  # a file made by others: left to the shape checks
        assert upgrade_weights(crafted) is crafted
