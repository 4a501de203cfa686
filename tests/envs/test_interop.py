"""Other libraries, run for real on our envs: Gymnasium's ``check_env``, RLlib's stock
``PettingZooEnv`` wrapper, TorchRL's ``PettingZooWrapper`` with action masks, OpenSpiel
(our game registered with ``pyspiel``, its generic checks and its MCTS bots) and Tianshou
(its ``PettingZooEnv``, multi-agent dispatch, masked DQN and ``Collector``)."""

from __future__ import annotations

import numpy as np
import pytest

import guandan_env
from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.envs.wrappers import SingleAgentEnv


def test_gymnasium_check_env_passes_on_the_single_agent_env():
    """Gymnasium steps ``action_space.sample()``: an illegal id is the penalty (the wrapper's
    documented default), never an exception."""
    from gymnasium.utils.env_checker import check_env

    env = SingleAgentEnv(learner_seat=0)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    legal = np.flatnonzero(env.action_masks())
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, _ = env.step(illegal)
    assert terminated and reward == -3.0
    env.reset(seed=3)
    _, _, terminated, _, _ = env.step(int(legal[0]))
    assert env.aec.game.history  # a legal action was played


def test_rllib_stock_pettingzoo_env_plays_a_whole_deal():
    """Users with their own RLlib setup wrap the AEC env in RLlib's ``PettingZooEnv``."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    env = PettingZooEnv(guandan_env.env())
    obs, infos = env.reset(seed=4)
    rng = np.random.default_rng(0)
    steps, done = 0, False
    while not done:
        ((agent, o),) = obs.items()
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terms, truncs, infos = env.step({agent: action})
        steps += 1
        done = terms["__all__"] or truncs["__all__"]
    assert steps > 20 and sorted(abs(r) for r in rewards.values()) in (
        [1.0] * 4,
        [2.0] * 4,
        [3.0] * 4,
    )


def test_torchrl_collects_whole_deals_with_masks_and_learns():
    from experiments.examples.interop_torchrl import collect_and_learn

    out = collect_and_learn(frames=300, seed=1)
    assert out["frames"] == out["decisions"] == 300
    assert out["deals"] >= 1 and out["all_legal"] and out["grad_norm"] > 0


# ------------------------------------------------------------------ OpenSpiel
def _openspiel():
    import pyspiel

    import guandan_env.envs.openspiel_game  # noqa: F401  (registers python_guandan)

    return pyspiel


def test_openspiel_game_declares_honest_bounds_and_passes_random_sim_test():
    pyspiel = _openspiel()
    game = pyspiel.load_game("python_guandan")
    info = game.get_type(), game
    assert game.num_distinct_actions() == NUM_ACTIONS
    assert game.num_players() == 4 and game.max_chance_outcomes() == 54
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-3.0, 3.0, 0.0)
    assert game.max_game_length() == 16 * 27
    assert info[0].utility == pyspiel.GameType.Utility.ZERO_SUM
    # OpenSpiel's own generic checks: legal actions, clones, returns, observations, strings
    pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)
    small = pyspiel.load_game("python_guandan", {"cards_per_seat": 5, "level": "7"})
    pyspiel.random_sim_test(small, num_sims=20, serialize=False, verbose=False)


def test_openspiel_observations_come_from_our_encoder_and_respect_bounds():
    pyspiel = _openspiel()
    from guandan_env.encoding.observation import encode_game

    game = pyspiel.load_game("python_guandan", {"cards_per_seat": 8})
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    lengths = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            assert abs(sum(probs) - 1) < 1e-9
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        p = state.current_player()
        obs = np.asarray(state.observation_tensor(p), dtype=np.float32)
        np.testing.assert_array_equal(obs, encode_game(state.game, p))
        assert f"seat {p}" in state.information_state_string(p)
        state.apply_action(int(rng.choice(state.legal_actions())))
        lengths += 1
    assert lengths <= game.max_game_length()
    assert sum(state.returns()) == 0 and max(abs(r) for r in state.returns()) in (1, 2, 3)
    with pytest.raises(ValueError, match="cards_per_seat"):
        pyspiel.load_game("python_guandan", {"cards_per_seat": 28})


def test_openspiel_mcts_bots_beat_random_in_evaluate_bots():
    """A stock OpenSpiel algorithm on our game: MCTS (random rollouts) for one team against
    uniform random bots, through ``evaluate_bots``, on small deals."""
    pyspiel = _openspiel()
    from open_spiel.python.algorithms import evaluate_bots, mcts
    from open_spiel.python.bots import uniform_random

    game = pyspiel.load_game("python_guandan", {"cards_per_seat": 5})
    rng = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    team_returns = []
    for i in range(8):
        team = i % 2
        bots = [
            mcts.MCTSBot(game, 2.0, 25, evaluator, random_state=rng)
            if s % 2 == team
            else uniform_random.UniformRandomBot(s, rng)
            for s in range(4)
        ]
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        assert sum(returns) == 0
        team_returns.append(returns[team])
    assert np.mean(team_returns) > 0.5, team_returns


# ------------------------------------------------------------------ Tianshou
def test_tianshou_collects_whole_deals_with_masks_and_updates_a_dqn():
    """Tianshou's ``PettingZooEnv`` + ``MultiAgentOffPolicyAlgorithm``: a masked DQN team and
    Tianshou's masked random team, whole deals through its ``Collector``, then DQN steps."""
    from experiments.examples.interop_tianshou import run

    out = run(episodes=4, updates=2, seed=0)
    assert out["episodes"] == 4
    assert out["all_actions_legal"]
    assert 0.3 < out["team0_share"] < 0.7  # both teams acted
    assert out["decisions"] >= 4 * 40  # whole deals, not truncated stubs
    assert len(out["losses"]) == 2 and all(np.isfinite(out["losses"]))
