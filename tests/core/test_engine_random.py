"""Random seeded matches through the ``Game`` engine, checked step by step against RULES.md.

Uniformly random legal actions; matches start either from scratch (both teams at 2) or
from random levels near A with random A-failure counts, so passing and failing A occur
often. The checks recompute the rules independently of the engine:

* R-1.2: the 108 cards are conserved after the deal, after tribute and after every step
  (hands + played = two of each face); after the returns each seat holds 27 cards again.
* R-5: exactly one seat to act, holding cards; the mask is never empty while a deal runs;
  leaders never pass; turn order skips empty seats; a trick ends exactly when every other
  seat holding cards has passed, and the next leader (wind included) is recomputed.
* R-6.1/R-6.2: the deal ends exactly when three seats are out, or the first two are
  partners; the result order is the finishing order.
* R-6.3 … R-6.8: levels, leveling team, A-failures, match win and the deal cap, tracked by
  an independent implementation from each deal's finishing order.
* R-7.1 … R-7.4: tribute givers, cards, routing, resistance and leader, recomputed from the
  hands before tribute; returns offered exactly per R-7.1.
* Seeds (DESIGN.md): same seed → bit-identical trajectory; ``copy.deepcopy`` and ``pickle``
  of a mid-deal ``Game`` continue identically.

The default run plays 1,000 deals (4 x 250); ``-m slow`` adds 8,000 more.
"""

from __future__ import annotations

import copy
import functools
import pickle
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

import guandan_env
from guandan_env.core import actions as T
from guandan_env.core.cards import RJ_FACE, level_key
from guandan_env.core.engine import Game
from guandan_env.core.phase import Phase

ACE = 12
GAIN = {1: 3, 2: 2, 3: 1}  # partner's place index (second/third/last) -> levels


@dataclass
class Tracker:
    """Match state per R-6, kept by the test from deal results alone."""

    levels: list[int]
    leveling_team: int | None
    a_failures: list[int]
    max_deals: int | None
    deals: int = 0
    match_winner: int | None = None
    over: bool = False
    events: Counter = field(default_factory=Counter)

    def deal_level(self) -> int:
        return 0 if self.leveling_team is None else self.levels[self.leveling_team]

    def settle(self, order: list[int]) -> int:
        """Apply one finished deal (R-6.3 … R-6.8); returns the gain."""
        self.deals += 1
        first = order[0]
        team = first % 2
        gain = GAIN[order.index((first + 2) % 4)]
        lt = self.leveling_team
        at_a = lt is not None and self.levels[lt] == ACE
        if at_a and team == lt and gain >= 2:  # match win comes first
            self.match_winner, self.over = lt, True
            self.events["match_win"] += 1
            return gain
        if at_a:  # a failure for the leveling team
            self.a_failures[lt] += 1
            self.events["a_failure"] += 1
        self.levels[team] = min(ACE, self.levels[team] + gain)
        if at_a and self.a_failures[lt] == 3:  # reset after the gain
            self.levels[lt], self.a_failures[lt] = 0, 0
            self.events["a_reset"] += 1
        self.leveling_team = team
        if self.max_deals is not None and self.deals >= self.max_deals:
            self.over = True  # a draw
            self.events["capped"] += 1
        return gain


def check_tribute(g: Game, previous: list[int], events: Counter) -> None:
    """R-7.1 … R-7.4 for the deal just started after a deal finished in ``previous``."""
    pre = g.hands.astype(int)
    for t in g.tributes:  # undo the gifts: the hands as dealt
        pre[t.receiver, t.face] -= 1
        pre[t.giver, t.face] += 1
    assert (pre >= 0).all() and (pre.sum(1) == 27).all()
    first, second = previous[0], previous[1]
    double = first % 2 == second % 2
    givers = previous[2:] if double else [previous[3]]
    wild = g.level * 4 + 1
    if sum(pre[s, RJ_FACE] for s in givers) == 2:
        assert g.resisted and g.tributes == [] and g.leader == first
        events["resisted"] += 1
        return
    assert not g.resisted
    best = {}
    for s in givers:  # highest in level order, never ♥N
        keys = [level_key(f, g.level) for f in np.flatnonzero(pre[s]) if f != wild]
        best[s] = max(keys)
    got = {t.giver: t for t in g.tributes}
    assert sorted(got) == sorted(givers)
    for s, t in got.items():
        assert t.face != wild and level_key(t.face, g.level) == best[s]
    if not double:
        assert got[givers[0]].receiver == first and g.leader == givers[0]
        events["single"] += 1
        return
    a, b = givers
    if best[a] == best[b]:  # tie: first place receives from the seat after it
        to_first = (first + 1) % 4
        events["double_tie"] += 1
    else:
        to_first = a if best[a] > best[b] else b
    assert got[to_first].receiver == first
    assert got[givers[0] + givers[1] - to_first].receiver == second
    assert g.leader == to_first
    assert g.tributes[0].receiver == first  # first place returns first
    events["double"] += 1


def expected_returns(hand: np.ndarray, level: int) -> set[int]:
    """R-7.1: held faces of natural rank 2…10; if none, the lowest held in level order."""
    held = [int(f) for f in np.flatnonzero(hand)]
    low = {f for f in held if f < 52 and f // 4 <= 8}
    if low:
        return low
    k = min(level_key(f, level) for f in held)
    return {f for f in held if level_key(f, level) == k}


def next_active(seat: int, finished: list[int]) -> int:
    """The next seat after ``seat`` still holding cards (R-1.1, R-5.5)."""
    return next(s for s in ((seat + k) % 4 for k in (1, 2, 3)) if s not in finished)


def play_deal(
    g: Game, rng: np.random.Generator, trace: list | None = None, events: Counter | None = None
) -> list[int]:
    """Play the current deal to its end with random legal actions, checking every step
    (turn order, trick end and wind recomputed here); returns the finishing order."""
    events = Counter() if events is None else events
    finished: list[int] = [s for s in range(4) if g.hands[s].sum() == 0]
    assert finished == []
    last_player, passes = -1, 0  # the current trick, as the test sees it
    while True:
        assert type(g.phase) is Phase and g.phase in (Phase.PLAY, Phase.RETURN)
        seat = g.to_act
        assert 0 <= seat < 4 and g.hands[seat].sum() > 0 and seat not in finished
        mask = g.legal_mask()
        legal = np.flatnonzero(mask)
        assert legal.size > 0
        if g.phase == "return":
            due = g.tributes[g.pending_returns[0]]
            assert seat == due.receiver
            assert {int(a) - T.RETURN_BASE for a in legal} == expected_returns(
                g.hands[seat], g.level
            )
        elif g.table_action < 0:
            assert not mask[T.PASS_ACTION] and last_player == -1
        else:
            assert mask[T.PASS_ACTION] and g.table_seat == last_player
        a = int(legal[rng.integers(legal.size)])
        if trace is not None:
            trace.append((seat, a))
        was_return = g.phase == "return"
        g.step(a, mask)
        assert ((g.hands.sum(0) + g.played.sum(0)) == 2).all()
        if was_return:
            if g.phase == "play":
                assert (g.hands.sum(1) == 27).all()  # one for one exchanged
                assert g.to_act == g.leader
            continue
        if a == T.PASS_ACTION:
            passes += 1
        else:
            last_player, passes = seat, 0
            if g.hands[seat].sum() == 0:
                finished.append(seat)
        over = len(finished) >= 3 or (len(finished) == 2 and finished[0] % 2 == finished[1] % 2)
        assert g.deal_over == over, (finished, g.phase)
        if over:
            assert g.finish_order == finished
            rest = sorted(set(range(4)) - set(finished))
            assert g.result.order == finished + rest
            assert g.result.double_down == (len(finished) == 2)
            return finished + rest
        others = [s for s in range(4) if s != last_player and s not in finished]
        if a == T.PASS_ACTION and passes == len(others):  # the trick is over
            wind = last_player in finished
            expected = (last_player + 2) % 4 if wind else last_player
            assert g.table_action < 0 and g.to_act == expected
            events["wind"] += wind
            last_player, passes = -1, 0
        else:
            assert g.table_action >= 0 and g.to_act == next_active(seat, finished)


def run_matches(seed: int, n_deals: int, capped: bool = True) -> Counter:
    """Play random matches until ``n_deals`` deals; every check above on each. With
    ``capped`` every third match is capped at 3 deals (R-6.8)."""
    rng = np.random.default_rng(seed)
    events: Counter = Counter()
    deals = 0
    match = 0
    while deals < n_deals:
        max_deals = 3 if capped and match % 3 == 2 else None
        g = Game.new(seed=seed * 1000 + match, max_deals=max_deals)
        if match % 2:  # start near A to exercise …
            g.levels = [int(x) for x in rng.integers(9, 13, size=2)]
            g.leveling_team = int(rng.integers(2))
            g.a_failures = [int(x) for x in rng.integers(0, 3, size=2)]
        tr = Tracker(list(g.levels), g.leveling_team, list(g.a_failures), max_deals)
        match += 1
        g.start_deal()
        assert g.tributes == [] and (g.hands.sum(1) == 27).all()
        assert ((g.hands.sum(0)) == 2).all()
        while True:
            assert g.level == tr.deal_level()
            order = play_deal(g, rng, events=events)
            deals += 1
            gain = tr.settle(order)
            events["deals"] += 1
            events["double_down"] += g.result.double_down
            assert g.result.gain == gain and g.result.winner_team == order[0] % 2
            assert g.levels == tr.levels and g.a_failures == tr.a_failures
            assert g.leveling_team == tr.leveling_team or tr.over
            assert g.match_over == tr.over and g.match_winner == tr.match_winner
            assert g.phase is (Phase.MATCH_OVER if tr.over else Phase.DEAL_OVER)
            if tr.over or deals >= n_deals:
                break
            g.next_deal()
            assert g.deal_number == tr.deals + 1
            check_tribute(g, order, events)
        events.update(tr.events)
    return events


@functools.cache
def default_run(seed: int) -> Counter:
    """The default run of one seed (deterministic, so computed once per session)."""
    return run_matches(seed, 250)


@pytest.mark.parametrize("seed", range(4))
def test_random_matches_follow_the_rules(seed):
    """R-1.2, R-5, R-6, R-7 on 250 random deals per seed (1,000 in all)."""
    events = default_run(seed)
    assert events["deals"] == 250
    assert events["single"] > 0 and events["double"] > 0 and events["double_down"] > 0


def test_random_matches_cover_the_rare_rules():
    """The seeds above exercise every branch the checks recompute (so they test something):
    wind (R-5.4), A-failures and resets (R-6.7), match wins (R-6.6), capped draws (R-6.8),
    resistance (R-7.3), double-tribute ties (R-7.2)."""
    total = sum((default_run(seed) for seed in range(4)), Counter())
    needed = ("a_failure", "a_reset", "match_win", "resisted", "double_tie", "capped", "wind")
    assert all(total[k] > 0 for k in needed), total


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 18))
def test_random_matches_follow_the_rules_long(seed):
    """Same checks, 8 x 1,000 more deals (``-m slow``)."""
    assert run_matches(seed, 1000, capped=False)["deals"] == 1000


# ------------------------------------------------------------------ determinism
def trajectory(seed: int, deals: int) -> list:
    """Everything a match does for a seed, with actions from an RNG of the same seed."""
    rng = np.random.default_rng(seed)
    g = Game.new(seed=seed)
    g.start_deal()
    out = []
    for _ in range(deals):
        out.append(
            (g.hands.tobytes(), g.to_act, [(t.giver, t.receiver, t.face) for t in g.tributes])
        )
        trace: list = []
        play_deal(g, rng, trace)
        out.append((trace, list(g.result.order), list(g.levels), g.played.tobytes()))
        if g.match_over:
            break
        g.next_deal()
    return out


def test_same_seed_same_trajectory():
    """R-1.2 / R-7.5 with DESIGN "Seeds": one seed fixes the deals, the first leader and every
    engine choice (tribute cards, suits) — the same trajectory bit for bit."""
    a, b = trajectory(21, 4), trajectory(21, 4)
    assert a == b
    assert trajectory(22, 1)[0] != a[0]


def continue_game(g: Game, seed: int, deals: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(deals):
        trace: list = []
        play_deal_from_middle(g, rng, trace)
        out.append((trace, list(g.result.order), g.hands.tobytes(), list(g.levels)))
        if g.match_over:
            break
        g.next_deal()
        out.append((g.hands.tobytes(), [(t.giver, t.face) for t in g.tributes]))
    return out


def play_deal_from_middle(g: Game, rng: np.random.Generator, trace: list) -> None:
    while not g.deal_over:
        legal = np.flatnonzero(g.legal_mask())
        a = int(legal[rng.integers(legal.size)])
        trace.append((g.to_act, a, g.step(a)))


def test_deepcopy_and_pickle_mid_deal_continue_identically():
    """DESIGN (plain, copyable state): a mid-deal ``Game`` (second deal, after tribute, R-7)
    survives ``copy.deepcopy`` and ``pickle`` — its own RNG included — and continues exactly
    like the original through the next deals (R-5, R-6, R-7)."""
    rng = np.random.default_rng(5)
    g = Game.new(seed=5)
    g.start_deal()
    play_deal(g, rng)
    g.next_deal()
    for _ in range(15):
        legal = np.flatnonzero(g.legal_mask())
        g.step(int(legal[rng.integers(legal.size)]))
    assert not g.deal_over and g.deal_number == 2
    c1 = copy.deepcopy(g)
    c2 = pickle.loads(pickle.dumps(g))
    ref = continue_game(g, 77, 3)
    assert continue_game(c1, 77, 3) == ref
    assert continue_game(c2, 77, 3) == ref
    assert len(ref) >= 3


# ------------------------------------------------------------------ AEC env, random
@pytest.mark.parametrize("seed", [0, 1])
def test_env_random_match_invariants(seed):
    """R-5 / R-6 through the AEC env: exactly one agent has a non-zero mask, deal rewards
    are ±gain and zero-sum, cards are conserved, and the match ends by a win or the cap."""
    env = guandan_env.env(mode="match", max_deals=4)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    game = env.unwrapped.game
    totals = dict.fromkeys(env.possible_agents, 0.0)
    deals = 0
    for agent in env.agent_iter(max_iter=20_000):
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        masks = {a: env.observe(a)["action_mask"] for a in env.possible_agents}
        assert [a for a, m in masks.items() if m.any()] == [agent]
        assert agent == f"player_{game.to_act}"
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
        assert ((game.hands.sum(0) + game.played.sum(0)) == 2).all()
        step_rewards = [env.unwrapped.rewards[a] for a in env.possible_agents]
        if any(step_rewards):
            deals += 1
            assert sum(step_rewards) == 0
            assert step_rewards[0] == step_rewards[2] and step_rewards[1] == step_rewards[3]
            assert abs(step_rewards[0]) in (1, 2, 3)
        for a in env.possible_agents:
            totals[a] += env.unwrapped.rewards[a]
    assert 1 <= deals <= 4
    assert game.match_over
    assert sum(totals.values()) == 0
