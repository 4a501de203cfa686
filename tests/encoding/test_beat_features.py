"""The candidate rows' ``beat`` and ``reply`` blocks (R-4, R-5.2) against the slow reference
generator.

For a pooled multiset of cards (what the three other hands may hold together) and a
candidate play, ``beat`` says whether those cards can make a play of the candidate's kind
that beats it, and whether they can make a bomb that beats it; ``reply`` says the same per
seat for the plays that fit in that seat's hand (no more cards than it holds), and whether
one of exactly its cards does. The reference (tests/helpers/reference_movegen.py, written
from RULES.md alone) lists the plays of the multiset that beat the candidate; the blocks
must agree on every case.
"""

from __future__ import annotations

import random

import numpy as np

from agents.candidate_inputs import (
    LEGACY_CAND_WIDTHS,
    block_mask,
    check_model_config,
    upgrade_weights,
)
from guandan_env import describe_action
from guandan_env.core import actions as T
from guandan_env.core.cards import parse_hand
from guandan_env.encoding.candidate_features import (
    BEAT_COL,
    BEAT_DIM,
    CAND_DIM,
    REPLY_COL,
    REPLY_DIM,
    REST_DIM,
    beat_features,
    candidate_rest,
    candidates_packed,
    cards_held,
    decision_context,
    plays_of,
    reply_features,
)
from guandan_env.encoding.packing import pack_masks
from helpers.reference_movegen import RANKS, SUITS, canonical, reference_moves

DECK = [s + r for s in SUITS for r in RANKS] * 2 + ["BJ", "RJ"] * 2
BOMB_KINDS = {"bomb", "straight_flush", "four_jokers"}
_PLAY_IDS = np.flatnonzero((T.KIND != T.PASS) & (T.KIND != T.RETURN))
_BOMB_IDS = np.flatnonzero(T.IS_BOMB)


def _beaters(cards: str, level: str, action: int) -> list[tuple]:
    last = canonical(describe_action(int(action), level))
    return [m for m in reference_moves(cards, level, last) if m[0] != "pass"]


def _reference(cards: str, level: str, action: int) -> tuple[float, float]:
    beaters = _beaters(cards, level, action)
    return (
        float(any(m[0] not in BOMB_KINDS for m in beaters)),
        float(any(m[0] in BOMB_KINDS for m in beaters)),
    )


def _reference_reply(cards: str, level: str, action: int, held: list[int]) -> list[float]:
    """Per seat: a non-bomb answer of at most ``n`` cards, a bomb of at most ``n``, an answer
    of exactly ``n`` (the reference's moves carry their size at index 2)."""
    beaters = _beaters(cards, level, action)
    row = []
    for n in held:
        fits = [m for m in beaters if m[2] <= n]
        row += [
            float(any(m[0] not in BOMB_KINDS for m in fits)),
            float(any(m[0] in BOMB_KINDS for m in fits)),
            float(any(m[2] == n for m in beaters)),
        ]
    return row


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


def test_reply_block_equals_the_reference_seat_by_seat():
    """R-4, R-5.2: 1,040 (cards, level, candidate, three seats' card counts) cases; the
    counts mostly small (late in a deal, where the seats differ from the pooled block)."""
    failures, total = [], 0
    rng = random.Random(20261204)
    for cards, level, ids in _cases(260, seed=20261204):
        ids = ids[:4]
        lv = RANKS.index(level)
        counts = parse_hand(cards, max_cards=108).astype(np.uint8)
        plays = np.repeat(plays_of(counts[None], np.array([lv])), len(ids), 0)
        levels, actions = np.full(len(ids), lv), np.array(ids)
        held = np.array(
            [
                [rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 27]) for _ in range(3)]
                for _ in ids
            ],
            dtype=np.int16,
        )
        beat = beat_features(plays, levels, actions)
        got = reply_features(beat, plays, levels, actions, held)
        for a, n, row in zip(ids, held, got, strict=True):
            total += 1
            want = _reference_reply(cards, level, a, n.tolist())
            if row.tolist() != want:
                failures.append((cards, level, describe_action(a, level), n, row.tolist(), want))
    assert total == 1040
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
    assert rest.shape == (ids.size, REST_DIM) and REST_DIM == REPLY_COL + REPLY_DIM
    assert REPLY_COL == BEAT_COL + BEAT_DIM
    plays = ctx.unseen_plays[rows]
    want = beat_features(plays, ctx.level[rows], ids)
    assert np.array_equal(rest[:, BEAT_COL:REPLY_COL], want)
    assert want[:, 0].any() and not want[:, 0].all()  # the block carries information
    reply = reply_features(want, plays, ctx.level[rows], ids, ctx.held[rows])
    assert np.array_equal(rest[:, REPLY_COL:], reply)
    cand, _ = block_mask(["after", "plan", "state"])
    assert not cand[BEAT_COL:].any() and cand[:BEAT_COL].all()
    cand, _ = block_mask(["after", "plan", "state", "beat"])
    assert not cand[REPLY_COL:].any() and cand[:REPLY_COL].all()
    assert check_model_config(None)["features"] == ["after", "plan", "state", "beat", "reply"]


def test_cards_held_are_the_seats_card_counts_seen_from_the_acting_seat():
    from guandan_env.envs.vector import VectorGuandanEnv

    env = VectorGuandanEnv(16, random_levels=True, random_tribute=True)
    obs, mask, to_act = env.reset(seed=9)
    rng = np.random.default_rng(9)
    for step in range(150):
        held = cards_held(obs)
        truth = env.state.hands.sum(2)  # (tables, 4) cards per absolute seat
        rel = (to_act[:, None] + np.arange(4)) % 4
        assert np.array_equal(held, np.take_along_axis(truth, rel, 1)), step
        legal = [np.flatnonzero(m) for m in mask]
        obs, mask, to_act, *_ = env.step(np.array([rng.choice(a) for a in legal], np.int64))


def test_weights_from_before_the_blocks_gain_zero_columns():
    for width in LEGACY_CAND_WIDTHS:
        old = {"cand_proj.weight": np.ones((4, width), np.float32), "value_head.bias": np.zeros(1)}
        new = upgrade_weights(old)
        assert new["cand_proj.weight"].shape == (4, CAND_DIM)
        assert np.array_equal(new["cand_proj.weight"][:, :width], old["cand_proj.weight"])
        assert not new["cand_proj.weight"][:, width:].any()
        assert upgrade_weights(new) is new  # today's weights pass through
        for bad in (np.float32(1.0), np.zeros(width), np.zeros((2, width, 1))):
            crafted = {"cand_proj.weight": bad}  # made by others: left to the shape checks
            assert upgrade_weights(crafted) is crafted


def _unpack(words: np.ndarray) -> np.ndarray:
    """``bool (N, NUM_ACTIONS)`` of packed ``uint64`` masks."""
    return np.unpackbits(words.view(np.uint8), axis=1)[:, : T.NUM_ACTIONS].astype(bool)


def test_blocks_in_play_equal_the_beats_table_on_every_candidate():
    """R-4, R-5.2: the runner's path (unseen plays per decision, candidates by row) against
    ``strength.beats_matrix`` read candidate by candidate, over whole deals of 48 tables
    (late positions included, where seats hold few cards and the bomb sizes matter)."""
    from guandan_env.core.strength import beats_matrix
    from guandan_env.envs.vector import VectorGuandanEnv

    beats = {lv: beats_matrix(lv) for lv in range(13)}
    env = VectorGuandanEnv(48, random_levels=True, random_tribute=True)
    obs, mask, _ = env.reset(seed=11)
    rng = np.random.default_rng(11)
    checked = few_cards = bombs = 0
    for _ in range(160):
        rows, ids = candidates_packed(pack_masks(mask))
        ctx = decision_context(obs)
        rest = candidate_rest(ctx, rows, ids)
        unseen = _unpack(ctx.unseen_plays)
        lv = ctx.level[rows]
        answers = np.stack([beats[int(v)][a] for v, a in zip(lv, ids, strict=True)])
        answers &= unseen[rows]
        is_bomb = T.IS_BOMB[None, :]
        want_beat = np.stack([(answers & ~is_bomb).any(1), (answers & is_bomb).any(1)], 1)
        assert np.array_equal(rest[:, BEAT_COL:REPLY_COL], want_beat)
        held = ctx.held[rows].astype(np.int64)
        size = T.SIZE[None, :]
        want = []
        for seat in range(3):
            n = held[:, seat : seat + 1]
            fits = answers & (size <= n)
            want += [
                (fits & ~is_bomb).any(1),
                (fits & is_bomb).any(1),
                (answers & (size == n)).any(1),
            ]
        assert np.array_equal(rest[:, REPLY_COL:], np.stack(want, 1).astype(np.float32))
        checked += ids.size
        few_cards += int((held <= 10).any(1).sum())
        bombs += int(T.IS_BOMB[ids].sum())
        legal = [np.flatnonzero(m) for m in mask]
        obs, mask, *_ = env.step(np.array([rng.choice(a) for a in legal], dtype=np.int64))
    assert checked > 50_000 and few_cards > 5_000 and bombs > 500
