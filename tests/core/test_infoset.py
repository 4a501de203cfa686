"""Information sets and the deal sampler (issue 25): sampled deals are consistent with what
the seat knows, never depend on what it cannot see, and are uniform over placements; the
OpenSpiel game resamples from them and OpenSpiel's IS-MCTS plays it."""

from __future__ import annotations

import copy
import itertools
from collections import Counter

import numpy as np
import pytest

from agents import make_agent
from guandan_env.core.cards import COPIES, NUM_FACES
from guandan_env.core.engine import Game
from guandan_env.core.infoset import UNSEEN, Sampler, known_cards
from guandan_env.envs.aec import raw_env
from guandan_env.envs.infoset import infoset

CFG = {"mode": "deal", "random_levels": True, "random_tribute": True}


def mid_deal(seed: int, steps: int) -> Game:
    """A deal of heuristic play, ``steps`` moves in (or fewer if it ends first)."""
    env = raw_env(**CFG)
    env.reset(seed=seed)
    agent = make_agent("heuristic", seed=seed)
    for _ in range(steps):
        obs, _, term, _, info = env.last()
        if term:
            break
        env.step(agent.act(obs, info))
        if env.game.deal_over:
            break
    return copy.deepcopy(env.game)


def _states():
    """Mid-deal states with single, double and resisted tribute among them."""
    out = []
    for seed in range(40):
        g = mid_deal(seed, 25)
        if not g.deal_over:
            out.append(g)
    kinds = {(len(g.tributes), g.resisted) for g in out}
    assert (1, False) in kinds and (2, False) in kinds
    return out


STATES = _states()


def test_sampled_deals_are_consistent_with_the_seat_information():
    rng = np.random.default_rng(0)
    resisted = 0
    for g in STATES:
        for seat in range(4):
            info = infoset(g, seat)
            sampler = Sampler(info)
            played = g.played.astype(np.int64)
            known = known_cards(info)
            # the inference is sound: the true deal satisfies every known-card bound (the true
            # deal is in the support), and its hidden cards are the unseen pool
            assert (g.hands >= known).all()
            hidden = g.hands.astype(np.int64).sum(0) - g.hands[seat] - (known.sum(0) - known[seat])
            pool = np.bincount(sampler.pool, minlength=NUM_FACES)
            assert np.array_equal(hidden, pool)
            resisted += bool(info.resist_jokers)
            for w in sampler.games(20, rng):
                assert np.array_equal(w.hands[seat], g.hands[seat])  # own hand exact
                assert w.cards_left() == g.cards_left()
                assert np.array_equal(w.played, g.played)  # the same plays, no card twice
                total = w.hands.astype(np.int64).sum(0) + played.sum(0)
                assert (total == COPIES).all() and total.sum() == 108  # 108 cards conserved
                assert (w.hands >= known).all()  # tribute, seen returns, shown jokers
                assert w.history == g.history and w.to_act == g.to_act
                assert [(t.giver, t.receiver, t.face) for t in w.tributes] == [
                    (t.giver, t.receiver, t.face) for t in g.tributes
                ]
                for t, tw in zip(g.tributes, w.tributes, strict=True):
                    if seat in (t.giver, t.receiver):
                        assert tw.returned == t.returned  # a return it saw is kept
                    assert tw.returned != UNSEEN
                for s in set(info.resist_jokers):  # the resisting seats hold shown jokers
                    assert w.hands[s, 53] + w.played[s, 53] >= info.resist_jokers.count(s)
                if seat == g.to_act:
                    assert np.array_equal(w.legal_mask(), g.legal_mask())


def test_the_sampler_never_reads_the_hidden_hands():
    """Permuting the other seats' hidden cards (same public history) changes neither the
    information set nor the sampled deals for the same seed."""
    rng = np.random.default_rng(1)
    for g in STATES[:10]:
        seat = g.to_act
        h = copy.deepcopy(g)
        others = [s for s in range(4) if s != seat]
        cards = np.concatenate([np.repeat(np.arange(NUM_FACES), g.hands[s]) for s in others])
        cards = rng.permutation(cards)
        cut = np.cumsum([int(g.hands[s].sum()) for s in others])[:-1]
        for s, part in zip(others, np.split(cards, cut), strict=True):
            h.hands[s] = np.bincount(part, minlength=NUM_FACES)
        assert not np.array_equal(h.hands, g.hands) or cards.size < 2
        a, b = infoset(g, seat), infoset(h, seat)
        assert a == b
        sa = Sampler(a).hands(50, np.random.default_rng(7))
        sb = Sampler(b).hands(50, np.random.default_rng(7))
        assert np.array_equal(sa, sb)


def _small_infoset_state() -> tuple[Game, int]:
    for seed in range(200):
        env = raw_env(mode="deal")
        env.reset(seed=seed)
        agent = make_agent("heuristic", seed=seed)
        while not env.game.deal_over:
            g = env.game
            left = g.cards_left()
            for seat in range(4):
                others = [left[s] for s in range(4) if s != seat and left[s] > 0]
                if len(others) >= 2 and 4 <= sum(others) <= 6:
                    return copy.deepcopy(g), seat
            obs, _, _, _, info = env.last()
            env.step(agent.act(obs, info))
    raise AssertionError("no small information set found")


def test_sampled_placements_are_uniform_chi_square():
    """On a small information set, the empirical distribution over placements matches the
    exact count of physical card placements (chi-square)."""
    from scipy.stats import chisquare

    g, seat = _small_infoset_state()
    sampler = Sampler(infoset(g, seat))
    free = [int(g.cards_left()[s] - sampler.base[s].sum()) if s != seat else 0 for s in range(4)]
    exact: Counter = Counter()
    for perm in itertools.permutations(sampler.pool.tolist()):
        parts, k = [], 0
        for s in range(4):
            parts.append(tuple(sorted(perm[k : k + free[s]])))
            k += free[s]
        exact[tuple(parts)] += 1
    n = 20000
    hands = sampler.hands(n, np.random.default_rng(3))
    seen: Counter = Counter()
    for h in hands:
        extra = h.astype(np.int64) - sampler.base
        key = tuple(
            tuple(np.repeat(np.arange(NUM_FACES), extra[s]).tolist()) if s != seat else ()
            for s in range(4)
        )
        seen[key] += 1
    assert set(seen) <= set(exact) and len(exact) > 1
    keys = sorted(exact)
    total = sum(exact.values())
    expected = np.array([exact[k] * n / total for k in keys])
    observed = np.array([seen[k] for k in keys])
    assert chisquare(observed, expected).pvalue > 1e-3


# ------------------------------------------------------------------------------ OpenSpiel
pyspiel = pytest.importorskip("pyspiel")


def _openspiel_state(seed: int, cards: int, moves: int):
    import guandan_env.envs.openspiel_game  # noqa: F401  (registers python_guandan)

    game = pyspiel.load_game("python_guandan", {"cards_per_seat": cards, "level": "5"})
    state = game.new_initial_state()
    rng = np.random.default_rng(seed)
    while state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(outcomes, p=probs)))
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(state.legal_actions())))
    return game, state


def test_openspiel_resample_from_infostate_is_consistent():
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    differs = 0
    for seed in range(6):
        game, state = _openspiel_state(seed, 6, seed * 2)
        if state.is_terminal():
            continue
        for player in range(4):
            for _ in range(4):
                r = state.resample_from_infostate(player, sampler)
                assert r.information_state_string(player) == state.information_state_string(player)
                assert r.observation_string(player) == state.observation_string(player)
                assert np.array_equal(
                    r.observation_tensor(player), state.observation_tensor(player)
                )
                assert r.current_player() == state.current_player()
                if player == state.current_player():
                    assert r.legal_actions() == state.legal_actions()
                assert r.history_text(player) == state.history_text(player)
                assert np.array_equal(r.game.hands[player], state.game.hands[player])
                dealt = np.zeros((4, NUM_FACES), dtype=np.int64)
                for i, f in enumerate(r.dealt):
                    dealt[i % 4, f] += 1
                assert np.array_equal(dealt, r.counts) and (r.counts.sum(0) <= COPIES).all()
                differs += not np.array_equal(r.game.hands, state.game.hands)
                # the resampled state plays on to the end
                c = r.clone()
                rng = np.random.default_rng(seed)
                while not c.is_terminal():
                    c.apply_action(int(rng.choice(c.legal_actions())))
                assert sum(c.returns()) == 0
    assert differs > 0


def test_openspiel_ismcts_plays_whole_games():
    from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts

    class StatelessISMCTS(ismcts.ISMCTSBot):
        """ISMCTSBot searches from scratch at each step: nothing to restart or inform."""

        def restart_at(self, state) -> None:
            pass

        def inform_action(self, state, player_id, action) -> None:
            pass

    import guandan_env.envs.openspiel_game  # noqa: F401

    game = pyspiel.load_game("python_guandan", {"cards_per_seat": 4, "level": "2"})
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bots = [
        StatelessISMCTS(game, evaluator, 2.0, 25, random_state=np.random.RandomState(s))
        for s in range(4)
    ]
    for g in range(2):
        returns = evaluate_bots.evaluate_bots(
            game.new_initial_state(), bots, np.random.RandomState(g)
        )
        assert sum(returns) == 0 and max(abs(x) for x in returns) in (1.0, 2.0, 3.0)
