"""The PettingZoo AEC env: API conformance, seeding, copy/pickle, rewards, rendering, wrapper."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import guandan_env
from guandan_env import NUM_ACTIONS
from guandan_env.encoding.observation import MAX_CARDS, OBS_DIM, OBS_SLICES
from guandan_env.envs.wrappers import SingleAgentEnv


def play_random(env, rng, max_steps=100000):
    """Play an episode with uniform legal actions; return per-agent total rewards."""
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for _ in range(max_steps):
        agent = env.agent_selection
        obs, rew, term, trunc, _ = env.last()
        totals[agent] += rew
        if term or trunc:
            env.step(None)
            if not env.agents:
                return totals
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.size > 0, "mask is never empty for the agent to act"
        env.step(int(legal[rng.integers(legal.size)]))
    raise AssertionError("episode did not end")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_pettingzoo_api_test():
    api_test(guandan_env.env(), num_cycles=300, verbose_progress=False)


def test_pettingzoo_api_test_match_mode_with_tribute():
    api_test(
        guandan_env.env(mode="match", max_deals=3, random_levels=True, random_tribute=True),
        num_cycles=300,
        verbose_progress=False,
    )


def test_pettingzoo_seed_test():
    seed_test(lambda **kw: guandan_env.env(random_levels=True, random_tribute=True), 100)


def test_spaces():
    env = guandan_env.env()
    env.reset(seed=0)
    space = env.observation_space("player_0")
    assert space["observation"].shape == (OBS_DIM,)
    assert space["action_mask"].shape == (NUM_ACTIONS,)
    assert env.action_space("player_0").n == NUM_ACTIONS
    obs = env.observe(env.agent_selection)
    assert space.contains(obs)
    others = [a for a in env.agents if a != env.agent_selection]
    assert all(env.observe(a)["action_mask"].sum() == 0 for a in others)


def test_rewards_zero_sum_and_equal_to_level_gain():
    rng = np.random.default_rng(0)
    for seed in range(20):
        env = guandan_env.env(random_levels=True, random_tribute=True)
        env.reset(seed=seed)
        totals = play_random(env, rng)
        res = env.unwrapped.game.result
        r = np.array([totals[f"player_{i}"] for i in range(4)])
        assert r.sum() == 0
        assert r[0] == r[2] and r[1] == r[3]
        assert abs(r[0]) == res.gain and res.gain in (1, 2, 3)
        assert np.sign(r[res.winner_team]) == 1


def test_match_mode_rewards_accumulate_over_deals():
    rng = np.random.default_rng(1)
    env = guandan_env.env(mode="match", max_deals=4)
    env.reset(seed=3)
    totals = play_random(env, rng)
    g = env.unwrapped.game
    assert g.deal_number == 4 or g.match_winner is not None
    assert sum(totals.values()) == 0
    deal_lines = [line for line in env.unwrapped.log if line.startswith("deal over")]
    assert len(deal_lines) == g.deal_number
    signed = 0
    for line in deal_lines:  # "deal over: order [...], team T +G; levels ..."
        team, gain = line.split("team ")[1].split(";")[0].split(" +")
        signed += int(gain) if team == "0" else -int(gain)
    assert totals["player_0"] == totals["player_2"] == signed
    assert totals["player_1"] == totals["player_3"] == -signed


def test_match_win_bonus_paid_once():
    rng = np.random.default_rng(2)
    env = guandan_env.env(mode="match", match_win_bonus=10.0)
    # team 0 at A and leveling: a deal won by team 0 with partner not last ends the match
    for seed in range(30):
        env.reset(seed=seed, options={"levels": ["A", "2"], "leveling_team": 0})
        totals = play_random(env, rng)
        g = env.unwrapped.game
        if g.match_winner == 0 and g.deal_number == 1:
            assert totals["player_0"] == totals["player_2"] == g.result.gain + 10.0
            assert totals["player_1"] == -(g.result.gain + 10.0)
            return
    pytest.fail("no seed produced a first-deal match win")


def test_same_seed_same_trajectory():
    def run(seed):
        env = guandan_env.env(random_levels=True, random_tribute=True)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        play_random(env, rng)
        return list(env.unwrapped.log)

    assert run(11) == run(11)
    assert run(11) != run(12)


def test_copy_and_pickle_round_trip_mid_deal():
    env = guandan_env.raw_env(random_levels=True, random_tribute=True)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(40):
        legal = np.flatnonzero(env.action_mask())
        env.step(int(legal[rng.integers(legal.size)]))
    clones = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    actions = []
    for _ in range(30):
        if env.terminations[env.agent_selection]:
            break
        legal = np.flatnonzero(env.action_mask())
        a = int(legal[rng.integers(legal.size)])
        actions.append(a)
        env.step(a)
    for c in clones:
        for a in actions:
            c.step(a)
        assert c.log == env.log
        assert np.array_equal(c.game.hands, env.game.hands)
        np.testing.assert_array_equal(
            c.observe(c.agent_selection)["observation"],
            env.observe(env.agent_selection)["observation"],
        )


def test_unknown_config_key_is_an_error():
    with pytest.raises(ValueError, match="unknown env config key.*'modee'"):
        guandan_env.env(modee="deal")
    with pytest.raises(ValueError, match="mode must be"):
        guandan_env.env(mode="tournament")


def test_illegal_action_raises_and_leaves_state_unchanged():
    env = guandan_env.raw_env()
    env.reset(seed=0)
    before = (env.game.hands.copy(), env.game.to_act, list(env.log))
    with pytest.raises(ValueError, match=r"leader of a trick must play.*R-5\.1"):
        env.step(0)  # pass while leading
    assert np.array_equal(env.game.hands, before[0])
    assert env.game.to_act == before[1] and env.log == before[2]


def test_illegal_action_penalize_mode_terminates():
    env = guandan_env.raw_env(illegal_action="penalize", illegal_penalty=-5.0)
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(0)
    assert all(env.terminations.values())
    assert env._cumulative_rewards[agent] == -5.0
    assert env.infos[agent]["illegal_action"] == agent


def test_render_ansi_snapshot():
    env = guandan_env.env(render_mode="ansi")
    env.reset(
        seed=0,
        options={
            "hands": ["S3 D4 C4 S5 D5 H2 BJ", "S9 S9", "SA", "DK"],
            "leader": 0,
        },
    )
    text = env.render()
    assert text.splitlines()[0].startswith("Deal 1 at level 2")
    assert "> seat 0 [team 0]  7 cards: S3 C4 D4 S5 D5 H2* BJ" in text
    three_pairs = next(
        a
        for a in np.flatnonzero(env.unwrapped.action_mask())
        if guandan_env.describe_action(int(a), "2")["kind"] == "three_pairs"
    )
    env.step(int(three_pairs))
    assert "seat 0: three_pairs 33-44-55 (1 wild) [H2 S3 C4 D4 S5 D5]" in env.render()
    assert env.unwrapped.infos["player_1"]["last_play"].startswith("seat 0: three_pairs")


def test_observation_matches_engine_state():
    env = guandan_env.raw_env(random_levels=True, random_tribute=True)
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    for _ in range(60):
        if env.terminations[env.agent_selection]:
            break
        agent = env.agent_selection
        seat = env.game.to_act
        obs = env.observe(agent)["observation"]
        hand_bits = obs[OBS_SLICES["hand"]].reshape(54, 2).sum(1)
        assert np.array_equal(hand_bits, env.game.hands[seat])
        left = obs[OBS_SLICES["cards_left"]].reshape(4, MAX_CARDS + 1).argmax(1)
        expected = [int(env.game.hands[(seat + k) % 4].sum()) for k in range(4)]
        assert left.tolist() == expected
        legal = np.flatnonzero(env.action_mask())
        env.step(int(legal[rng.integers(legal.size)]))


def test_single_agent_wrapper_plays_full_episodes():
    env = SingleAgentEnv(learner_seat=1, random_levels=True, random_tribute=True)
    rng = np.random.default_rng(0)
    for ep in range(5):
        obs, info = env.reset(seed=ep)
        done, total = False, 0.0
        while not done:
            assert env.aec.agent_selection == "player_1"
            legal = np.flatnonzero(obs["action_mask"])
            obs, r, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
            total += r
            done = term or trunc
        assert total == env.aec.game.result.rewards()[1]
    with pytest.raises(ValueError, match="episode is over"):
        env.step(0)


def test_action_features_describe_the_table():
    from guandan_env.core import actions as T
    from guandan_env.encoding.features import FEATURE_SLICES, action_features

    f = action_features(5)
    assert f.shape[0] == NUM_ACTIONS
    assert np.array_equal(f[:, FEATURE_SLICES["kind"]].argmax(1), T.KIND)
    assert np.allclose(f[:, FEATURE_SLICES["natural_cards"]] * 8, T.NAT)
    bombs = f[:, FEATURE_SLICES["bomb_power"]][:, 0] > 0
    assert np.array_equal(bombs, T.IS_BOMB)
    with pytest.raises(ValueError, match="level must be"):
        action_features(13)


def test_info_view_false_drops_only_the_view():
    """``info_view=False`` (a speed option): same observations, masks and other infos."""
    api_test(guandan_env.env(info_view=False), num_cycles=100, verbose_progress=False)
    with_view = guandan_env.env(mode="match", max_deals=2, random_tribute=True)
    without = guandan_env.env(mode="match", max_deals=2, random_tribute=True, info_view=False)
    with_view.reset(seed=11)
    without.reset(seed=11)
    rng = np.random.default_rng(11)
    for _ in range(400):
        a, b = with_view.last(), without.last()
        np.testing.assert_array_equal(a[0]["observation"], b[0]["observation"])
        np.testing.assert_array_equal(a[0]["action_mask"], b[0]["action_mask"])
        assert {k: v for k, v in a[4].items() if k != "view"} == b[4]
        if a[2] or a[3]:
            break
        assert "view" in a[4] and "view" not in b[4]
        legal = np.flatnonzero(a[0]["action_mask"])
        act = int(legal[rng.integers(legal.size)])
        with_view.step(act)
        without.step(act)
