"""Batched playouts and the search agent (issue 25): a playout is the AEC game played step
by step with the same policy; the search's decision never depends on hidden cards; specs."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from agents import make_agent
from agents.candidate_agent import CandidateAgent
from agents.candidate_net import CandidateNet
from agents.playout import NetPolicy, playouts
from agents.policy_file import save_policy
from agents.search_agent import SearchAgent, SearchParams, parse_search_spec
from guandan_env.core.cards import NUM_FACES
from guandan_env.core.infoset import Sampler
from guandan_env.envs.aec import raw_env
from guandan_env.envs.infoset import infoset

CFG = {"mode": "deal", "random_levels": True, "random_tribute": True}


def spread_net(seed: int = 0) -> CandidateNet:
    """A random network whose scores are spread (no near-ties between candidates)."""
    torch.manual_seed(seed)
    net = CandidateNet({"trunk": [32], "cand": [16]})
    with torch.no_grad():
        net.scorer[-1].weight.normal_(0.0, 1.0)
    return net.eval()


def _mid_deal(env, agent, seed: int, steps: int):
    env.reset(seed=seed)
    for _ in range(steps):
        obs, _, _, _, info = env.last()
        env.step(agent.act(obs, info))
    return env.last()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_playout_equals_the_aec_game_step_by_step(seed):
    net = spread_net(seed)
    agent = CandidateAgent(net, greedy=True)
    env = raw_env(**CFG)
    obs, _, _, _, info = _mid_deal(env, agent, seed, 10 + 7 * seed)
    game, seat = copy.deepcopy(env.game), env.game.to_act
    first = agent.act(obs, info)
    aec_actions = []
    while True:
        obs, _, term, _, info = env.last()
        if term:
            break
        a = first if not aec_actions else agent.act(obs, info)
        aec_actions.append(a)
        env.step(a)
    res = playouts([game], [first], seat, NetPolicy(net), record=True)
    assert res.actions[0] == aec_actions
    assert res.gains[0, 0] == env.rewards[f"player_{seat}"] != 0
    assert res.steps == len(aec_actions)


@pytest.mark.parametrize("horizon", [1, 6])
def test_a_playout_with_a_horizon_is_scored_by_the_value_head_of_the_seat_to_act(horizon):
    net = spread_net(7)
    with torch.no_grad():
        net.value_head.weight.normal_(0.0, 0.5)  # a value head that says something
    agent, policy = CandidateAgent(net, greedy=True), NetPolicy(net)
    env = raw_env(**CFG)
    obs, _, _, _, info = _mid_deal(env, agent, 11, 12)
    game, seat = copy.deepcopy(env.game), env.game.to_act
    first = agent.act(obs, info)
    env.step(first)
    for _ in range(horizon):
        obs, _, _, _, info = env.last()
        env.step(agent.act(obs, info))
    obs, _, term, _, _ = env.last()
    assert not term
    mover = env.game.to_act
    value = policy.values(obs["observation"][None], obs["action_mask"].astype(bool)[None])[0]
    expected = np.clip(value, -3, 3) * (1.0 if mover % 2 == seat % 2 else -1.0)
    res = playouts([game], [first], seat, policy, horizon=horizon)
    assert res.scored == 1 and res.steps == horizon + 1
    assert res.gains[0, 0] == pytest.approx(expected, abs=1e-9)
    full = playouts([game], [first], seat, policy)
    assert (
        playouts([game], [first], seat, policy, horizon=full.steps).gains[0, 0]
        == (full.gains[0, 0])
    )
    with pytest.raises(ValueError, match="horizon"):
        playouts([game], [first], seat, policy, horizon=-1)


def test_playouts_batch_worlds_and_candidates():
    net = spread_net(3)
    env = raw_env(**CFG)
    agent = CandidateAgent(net)
    obs, _, _, _, info = _mid_deal(env, agent, 4, 30)
    for _ in range(40):  # on to a decision with three candidates to play out
        if obs["action_mask"].sum() >= 3:
            break
        env.step(agent.act(obs, info))
        obs, _, _, _, info = env.last()
    assert obs["action_mask"].sum() >= 3
    g = env.game
    ids, probs = NetPolicy(net).candidates(obs["observation"], obs["action_mask"].astype(bool))
    assert np.all(np.diff(probs) <= 0) and abs(probs.sum() - 1) < 1e-5
    worlds = Sampler(infoset(g, g.to_act)).games(6, np.random.default_rng(0))
    res = playouts(worlds, ids[:3], g.to_act, NetPolicy(net), record=True)
    assert res.gains.shape == (6, min(3, ids.size))
    assert set(np.abs(res.gains).ravel().tolist()) <= {1.0, 2.0, 3.0}
    assert res.mean.shape == res.stderr.shape == (res.gains.shape[1],)
    # each table is its own playout: the same as playing that world alone
    alone = playouts([worlds[2]], ids[1:2], g.to_act, NetPolicy(net), record=True)
    assert alone.actions[0] == res.actions[2 * res.gains.shape[1] + 1]


def test_search_spec_parsing():
    assert parse_search_spec("checkpoint:a/b") == (SearchParams(), "checkpoint:a/b")
    p, inner = parse_search_spec(
        "worlds=4,candidates=2,margin=0.25,unsure=0.9,horizon=12:checkpoint:x"
    )
    assert (p.worlds, p.candidates, p.margin, p.unsure, p.close, p.horizon, inner) == (
        4,
        2,
        0.25,
        0.9,
        10,
        12,
        "checkpoint:x",
    )
    for bad in (
        "",
        "worlds=4",
        "worlds=x:checkpoint:y",
        "depth=3:checkpoint:y",
        "horizon=-2:checkpoint:y",
    ):
        with pytest.raises(ValueError):
            parse_search_spec(bad)
    with pytest.raises(ValueError, match="batched policy"):
        make_agent("search:heuristic")


def _search_agent(net, seed=5) -> SearchAgent:
    params = SearchParams(worlds=6, candidates=3, margin=0.0, unsure=1.01)  # always search
    return SearchAgent(CandidateAgent(net), params, seed=seed)


def test_the_search_decision_never_depends_on_hidden_cards():
    net = spread_net(1)
    env = raw_env(**CFG)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(6):
        obs, _, _, _, info = _mid_deal(env, CandidateAgent(net), seed, 20 + seed)
        if obs["action_mask"].sum() < 2:
            continue
        g, seat = env.game, env.game.to_act
        h = copy.deepcopy(g)
        others = [s for s in range(4) if s != seat]
        cards = rng.permutation(
            np.concatenate([np.repeat(np.arange(NUM_FACES), g.hands[s]) for s in others])
        )
        cut = np.cumsum([int(g.hands[s].sum()) for s in others])[:-1]
        for s, part in zip(others, np.split(cards, cut), strict=True):
            h.hands[s] = np.bincount(part, minlength=NUM_FACES)
        from guandan_env.envs.aec import seat_view

        a, b = _search_agent(net), _search_agent(net)
        pick_a = a.act(obs, {**info, "view": seat_view(g, seat)})
        pick_b = b.act(obs, {**info, "view": seat_view(h, seat)})
        assert pick_a == pick_b
        assert np.array_equal(a.last.result.gains, b.last.result.gains)
        checked += 1
    assert checked >= 3


def _decision_with_choices(net, seed: int, steps: int, choices: int):
    """A mid-deal decision of ``net``'s self-play with at least ``choices`` legal moves."""
    env = raw_env(**CFG)
    obs, _, _, _, info = _mid_deal(env, CandidateAgent(net), seed, steps)
    while obs["action_mask"].sum() < choices:
        env.step(CandidateAgent(net).act(obs, info))
        obs, _, _, _, info = env.last()
    return obs, info


def test_the_search_agent_is_deterministic_and_overrides_only_by_a_margin(tmp_path):
    net = spread_net(2)
    path = save_policy(tmp_path, net, net.model_config)
    spec = f"search:worlds=4,candidates=3,margin=0,unsure=1.01:checkpoint:{path}"
    obs, info = _decision_with_choices(net, 7, 15, 3)
    picks = [make_agent(spec, seed=11).act(obs, info) for _ in range(2)]
    assert picks[0] == picks[1]
    agent = make_agent(spec, seed=11)
    agent.act(obs, info)
    rec = agent.last
    best = int(np.argmax(rec.result.mean))
    assert rec.choice == int(
        rec.candidates[best if rec.result.mean[best] > rec.result.mean[0] else 0]
    )
    never = make_agent(spec.replace("margin=0", "margin=7"), seed=11)
    assert never.act(obs, info) == CandidateAgent(net).act(obs, info)
    quiet = make_agent(f"search:unsure=0,close=0:checkpoint:{path}", seed=1)
    assert quiet.act(obs, info) == CandidateAgent(net).act(obs, info)
    assert quiet.stats.searched == 0


def test_a_search_with_a_horizon_scores_its_playouts_by_the_value_head(tmp_path):
    net = spread_net(4)
    path = save_policy(tmp_path, net, net.model_config)
    spec = f"search:worlds=4,candidates=3,margin=0,unsure=1.01,horizon=3:checkpoint:{path}"
    obs, info = _decision_with_choices(net, 9, 8, 2)
    agent = make_agent(spec, seed=3)
    pick = agent.act(obs, info)
    assert obs["action_mask"][pick] and agent.stats.searched == 1
    res = agent.last.result
    assert res.steps <= 4 and res.scored > 0  # early in a deal: no table ends in 3 moves
    assert make_agent(spec, seed=3).act(obs, info) == pick
