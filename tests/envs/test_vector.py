"""The batched engine (``guandan_env.envs.vector``) against the single-table code it must equal.

* ``vector_mask``: packed masks equal ``movegen.batch_play_mask`` / ``return_mask``.
* ``vector_choice``: batched card choice equals ``choice.choose_cards`` (every kind, wildcards,
  one-suit plain straights that rule 4 must break).
* Equivalence: table ``i`` of ``VectorGuandanEnv`` and ``guandan_env.env`` reset with
  ``table_seeds[i]`` give the same seats, observations, masks, rewards and done flags under
  the same actions, across auto-resets (deal, match, random levels/tribute, scenarios,
  capped matches, penalized illegal actions).
* Invariants over 10,000+ batched deals: cards conserved, masks never empty, rewards
  zero-sum, shared within a team and in {±1, ±2, ±3} (R-6.3).
"""

from __future__ import annotations

import numpy as np
import pytest

import guandan_env
from guandan_env.core import actions as T
from guandan_env.core import movegen
from guandan_env.core.choice import choose_cards
from guandan_env.core.table_state import FIELD_NAMES, table_state
from guandan_env.core.vector_choice import batch_choose_cards
from guandan_env.core.vector_mask import (
    play_masks_packed,
    return_masks,
    sample_packed,
    unpack_masks,
)
from guandan_env.envs.vector import VectorGuandanEnv

DECK = np.repeat(np.arange(54), 2)


def random_hands(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random hands of 1..27 cards at random levels, with 0/1/2 wildcards forced."""
    hands = np.zeros((n, 54), dtype=np.uint8)
    for i in range(n):
        size = 27 if i % 4 == 0 else int(rng.integers(1, 28))
        np.add.at(hands[i], rng.choice(DECK, size, replace=False), 1)
    levels = rng.integers(0, 13, n)
    hands[np.arange(n), levels * 4 + 1] = rng.integers(0, 3, n)
    keep = hands.sum(1) > 0
    return hands[keep], levels[keep]


# ------------------------------------------------------------------------------- masks
def test_play_masks_equal_movegen():
    rng = np.random.default_rng(11)
    hands, levels = random_hands(rng, 3000)
    plays = np.flatnonzero(movegen._PLAY_NO_PASS)
    lasts = np.where(rng.random(len(hands)) < 0.4, -1, rng.choice(plays, len(hands)))
    ref = movegen.batch_play_mask(hands, levels, lasts)
    got = unpack_masks(play_masks_packed(hands, levels, lasts))
    assert got.shape == ref.shape
    bad = np.flatnonzero((got != ref).any(1))
    assert bad.size == 0, f"mask differs for hands {bad[:5]}"
    assert ref[lasts < 0].any(1).all()


def test_return_masks_equal_movegen():
    rng = np.random.default_rng(12)
    hands, levels = random_hands(rng, 600)
    hands[: len(hands) // 3, :36] = 0  # no card of rank 2..10: the lowest-card rule
    keep = hands.sum(1) > 0
    hands, levels = hands[keep], levels[keep]
    got = return_masks(hands, levels)
    for i in range(len(hands)):
        assert np.array_equal(got[i], movegen.return_mask(hands[i], int(levels[i]))), i


def test_sample_packed_is_legal_and_uniform():
    rng = np.random.default_rng(13)
    hands, levels = random_hands(rng, 200)
    packed = play_masks_packed(hands, levels, np.full(len(hands), -1))
    masks = unpack_masks(packed)
    a = sample_packed(packed, rng)
    assert masks[np.arange(len(a)), a].all()
    row = np.repeat(packed[:1], 40_000, axis=0)
    counts = np.bincount(sample_packed(row, rng), minlength=T.NUM_ACTIONS)
    legal = np.flatnonzero(masks[0])
    assert set(np.flatnonzero(counts)) == set(legal)
    expected = 40_000 / legal.size
    assert np.abs(counts[legal] - expected).max() < 6 * np.sqrt(expected) + 5


# ------------------------------------------------------------------------------- card choice
def _random_actions(rng, hands, levels):
    """One legal lead per hand, kind first (uniform over the kinds the hand allows)."""
    masks = movegen.batch_play_mask(hands, levels, np.full(len(hands), -1))
    out = np.empty(len(hands), dtype=np.int64)
    for i, m in enumerate(masks):
        legal = np.flatnonzero(m)
        kind = rng.choice(np.unique(T.KIND[legal]))
        out[i] = rng.choice(legal[T.KIND[legal] == kind])
    return out


def _monochrome_cases(rng, n):
    """Hands holding a one-suit run of five plus other copies, with the plain straight."""
    hands = np.zeros((n, 54), dtype=np.uint8)
    levels = rng.integers(0, 13, n)
    actions = np.empty(n, dtype=np.int64)
    straights = np.flatnonzero((T.KIND == T.STRAIGHT) & (T.WILDS == 0))
    for i in range(n):
        a = int(rng.choice(straights))
        suit = int(rng.integers(4))
        ranks = np.flatnonzero(T.NAT[a])
        hands[i, ranks * 4 + suit] = 1
        for r in rng.choice(ranks, int(rng.integers(1, 4)), replace=False):
            hands[i, r * 4 + (suit + int(rng.integers(1, 4))) % 4] += 1
        extra = rng.choice(DECK, int(rng.integers(0, 12)), replace=False)
        np.add.at(hands[i], extra, 1)
        np.minimum(hands[i], 2, out=hands[i])
        actions[i] = a
    ok = movegen.batch_play_mask(hands, levels, np.full(n, -1))[np.arange(n), actions]
    return hands[ok], levels[ok], actions[ok]


def _reference_cards(hands, levels, actions):
    return np.stack(
        [
            np.bincount(choose_cards(h, int(lv), int(a)), minlength=54)
            for h, lv, a in zip(hands, levels, actions, strict=True)
        ]
    ).astype(np.uint8)


def test_batch_choose_cards_equals_choice():
    rng = np.random.default_rng(14)
    hands, levels = random_hands(rng, 6000)
    actions = _random_actions(rng, hands, levels)
    got = batch_choose_cards(hands, levels, actions)
    ref = _reference_cards(hands, levels, actions)
    bad = np.flatnonzero((got != ref).any(1))
    assert bad.size == 0, f"card choice differs at {bad[:5]} (actions {actions[bad[:5]]})"
    kinds = set(T.KIND[actions].tolist())
    assert kinds >= {T.SINGLE, T.PAIR, T.TRIPLE, T.FULL_HOUSE, T.STRAIGHT, T.THREE_PAIRS}
    assert kinds >= {T.TWO_TRIPLES, T.BOMB, T.STRAIGHT_FLUSH}


def test_batch_choose_cards_breaks_monochrome_straights():
    rng = np.random.default_rng(15)
    hands, levels, actions = _monochrome_cases(rng, 800)
    got = batch_choose_cards(hands, levels, actions)
    ref = _reference_cards(hands, levels, actions)
    assert np.array_equal(got, ref)
    suits = [{f % 4 for f in np.repeat(np.arange(52), row[:52])} for row in got]
    assert all(len(s) >= 2 for s in suits)
    assert len(hands) > 300


# ------------------------------------------------------------------------------- equivalence
def _aec_mask(e) -> np.ndarray:
    return e.observe(e.agent_selection)["action_mask"].astype(bool)


def run_equivalence(
    num_tables: int,
    steps: int,
    seed: int,
    options=None,
    illegal_every: int = 0,
    **config,
) -> int:
    """Step a vector env and one AEC env per table with the same actions; compare all
    outputs table by table, and the whole table state (every ``TableState`` field of the
    vector env against ``table_state`` of the AEC env's ``Game``). Returns the number of
    finished episodes."""
    v = VectorGuandanEnv(num_tables, seed=seed, **config)
    obs, mask, seat = v.reset(options=options)
    envs = []
    for i in range(num_tables):
        e = guandan_env.env(**config)
        e.reset(seed=v.table_seeds[i], options=options)
        envs.append(e)
    rng = np.random.default_rng(seed + 1000)
    episodes = 0
    for t in range(steps):
        for i, e in enumerate(envs):
            assert e.agent_selection == f"player_{seat[i]}", (t, i)
            o = e.observe(e.agent_selection)
            ref_state = table_state([e.unwrapped.game])
            for name in FIELD_NAMES:
                want, got = getattr(ref_state, name)[0], getattr(v.state, name)[i]
                assert np.array_equal(want, got), (t, i, name, want, got)
            assert np.array_equal(o["action_mask"].astype(bool), mask[i]), (t, i)
            assert np.array_equal(o["observation"], obs[i]), (t, i)
        actions = v.sample_actions(rng)
        if illegal_every and t % illegal_every == illegal_every - 1:
            i = int(rng.integers(num_tables))
            actions[i] = int(rng.choice(np.flatnonzero(~mask[i])))
        obs, mask, seat, rewards, done, info = v.step(actions)
        for i, e in enumerate(envs):
            e.step(int(actions[i]))
            ref = np.array([e.rewards[f"player_{k}"] for k in range(4)], dtype=np.float32)
            assert np.array_equal(ref, rewards[i]), (t, i, ref, rewards[i])
            ended = any(e.terminations.values()) or any(e.truncations.values())
            assert ended == done[i], (t, i)
            assert any(e.truncations.values()) == info["truncated"][i], (t, i)
            if ended:
                episodes += 1
                e.reset(options=options)
    return episodes


@pytest.mark.parametrize(
    "config",
    [
        dict(mode="deal"),
        dict(mode="deal", random_levels=True, random_tribute=True),
        dict(mode="match"),
    ],
    ids=["deal", "random-levels-tribute", "match"],
)
def test_equivalence_with_aec(config):
    episodes = run_equivalence(6, 420, seed=21, **config)
    if config["mode"] == "deal":
        assert episodes >= 6


def test_equivalence_capped_match_and_scenario():
    assert run_equivalence(4, 500, seed=22, mode="match", max_deals=2) >= 4
    options = {"levels": ["A", "7"], "leveling_team": 0, "previous_order": [1, 3, 0, 2]}
    assert run_equivalence(4, 300, seed=23, options=options) >= 4


def test_equivalence_match_at_ace():
    # deals at A: passing A wins the match, failures reset a team to 2
    options = {"levels": ["A", "A"], "leveling_team": 0, "a_failures": [2, 2]}
    config = dict(mode="match", match_win_bonus=2.0)
    assert run_equivalence(6, 400, seed=26, options=options, **config) >= 6


def test_per_table_options():
    v = VectorGuandanEnv(2, seed=0)
    v.reset(options=[{"levels": ["A", "9"], "leveling_team": 1}, None])
    assert v.state.level.tolist() == [7, 0] and v.state.levels[0].tolist() == [12, 7]
    with pytest.raises(ValueError, match="options"):
        v.reset(options=[None])


def test_equivalence_partial_hands_scenario():
    options = {"hands": ["S3 S4 H9", "D5 D5", "C6 C7 C8 C9 CT", "BJ RJ S2"], "leader": 2}
    assert run_equivalence(3, 120, seed=24, options=options) >= 8


def test_equivalence_penalized_illegal_actions():
    config = dict(illegal_action="penalize", illegal_penalty=-5.0)
    assert run_equivalence(5, 150, seed=25, illegal_every=7, **config) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("seed", [31, 32, 33])
def test_equivalence_with_aec_many_seeds(seed):
    run_equivalence(16, 700, seed=seed, mode="deal", random_levels=True, random_tribute=True)
    run_equivalence(16, 700, seed=seed + 100, mode="match", max_deals=6, match_win_bonus=1.0)


# ------------------------------------------------------------------------------- invariants
def run_invariants(num_tables: int, min_deals: int, seed: int, **config) -> int:
    """Random play until ``min_deals`` deals ended; check invariants at every step."""
    v = VectorGuandanEnv(num_tables, seed=seed, **config)
    obs, mask, seat = v.reset()
    rng = np.random.default_rng(seed)
    deals = 0
    allowed = {1.0, 2.0, 3.0}
    while deals < min_deals:
        assert mask.any(1).all(), "an empty action mask"
        total = v.state.hands.sum((1, 2), dtype=np.int64) + v.state.played.sum(
            (1, 2), dtype=np.int64
        )
        assert (total == 108).all(), "cards not conserved (R-1.2)"
        assert np.array_equal(v.state.hands.sum(2, dtype=np.int64), v.state.cards_left)
        assert (v.state.hands.sum(1) + v.state.played.sum(1) == 2).all()
        obs, mask, seat, rewards, done, info = v.step(v.sample_actions(rng))
        ended = info["deal_over"]
        r = rewards[ended]
        assert (r.sum(1) == 0).all(), "rewards not zero-sum"
        assert (r[:, 0] == r[:, 2]).all() and (r[:, 1] == r[:, 3]).all()
        assert set(np.abs(r).ravel().tolist()) <= allowed
        assert not rewards[~ended].any()
        assert np.array_equal(np.abs(r[:, 0]), info["gain"][ended])
        deals += int(ended.sum())
    return deals


@pytest.mark.slow  # the declared bounds run on every engine by default: test_conformance.py
def test_invariants_10000_deals():
    # about 10 s: 1,024 tables, random levels and tribute, until 10,000 deals have ended
    assert run_invariants(1024, 10_000, seed=42, random_levels=True, random_tribute=True) >= 10_000


def test_invariants_match_mode():
    assert run_invariants(256, 600, seed=43, mode="match") >= 600


# ------------------------------------------------------------------------------- interface
def test_determinism_and_seeds():
    a = VectorGuandanEnv(8, seed=5)
    b = VectorGuandanEnv(8, seed=5)
    oa, ma, sa = a.reset()
    ob, mb, sb = b.reset()
    assert a.table_seeds == b.table_seeds and len(set(a.table_seeds)) == 8
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    for _ in range(200):
        oa, ma, sa, ra, da, _ = a.step(a.sample_actions(rng_a))
        ob, mb, sb, rb, db, _ = b.step(b.sample_actions(rng_b))
        assert np.array_equal(oa, ob) and np.array_equal(ma, mb) and np.array_equal(ra, rb)
    c = VectorGuandanEnv(3)
    c.reset(seed=[7, 8, 9])
    assert c.table_seeds == [7, 8, 9]


def test_output_shapes_and_spaces():
    v = VectorGuandanEnv(4, seed=0)
    obs, mask, seat = v.reset()
    assert obs.shape == (4, v.single_observation_space.shape[0]) and obs.dtype == np.float32
    assert mask.shape == (4, T.NUM_ACTIONS) and mask.dtype == bool
    assert seat.shape == (4,)
    obs, mask, seat, rewards, done, info = v.step(v.sample_actions(np.random.default_rng(0)))
    assert rewards.shape == (4, 4) and rewards.dtype == np.float32
    assert done.shape == (4,) and done.dtype == bool
    assert info["order"].shape == (4, 4)
    assert v.single_action_space.n == T.NUM_ACTIONS


def test_copy_false_reuses_the_observation_buffer():
    v = VectorGuandanEnv(4, seed=0, copy=False)
    o1, *_ = v.reset()
    o2, *_ = v.step(v.sample_actions(np.random.default_rng(0)))
    assert o1 is o2 or np.shares_memory(o1, o2)


def test_errors():
    v = VectorGuandanEnv(3, seed=0)
    with pytest.raises(ValueError, match="reset"):
        v.step(np.zeros(3, dtype=np.int64))
    obs, mask, seat = v.reset()
    with pytest.raises(ValueError, match="3 actions"):
        v.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match=r"table 0: .*R-5.1"):
        v.step(np.zeros(3, dtype=np.int64))  # leading seats cannot pass
    with pytest.raises(ValueError, match="ids are"):
        v.step(np.full(3, T.NUM_ACTIONS))
    with pytest.raises(ValueError, match="unknown env config"):
        VectorGuandanEnv(2, bogus=1)
    with pytest.raises(ValueError, match="seeds"):
        v.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="num_tables"):
        VectorGuandanEnv(0)


def test_torch_loop_example_runs():
    pytest.importorskip("torch")
    from experiments.examples import torch_loop as torch_loop_example

    score = torch_loop_example.main(
        ["--tables", "16", "--steps", "40", "--iters", "2", "--hidden", "16", "--eval-deals", "4"]
    )
    assert -3.0 <= score <= 3.0  # a mean deal reward
