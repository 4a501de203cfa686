"""Other libraries, run for real on our envs: Gymnasium's ``check_env``, RLlib's stock
``PettingZooEnv`` wrapper and TorchRL's ``PettingZooWrapper`` with action masks."""

from __future__ import annotations

import numpy as np

import guandan_env
from guandan_env.wrappers import SingleAgentEnv


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
    from experiments.interop_torchrl import collect_and_learn

    out = collect_and_learn(frames=300, seed=1)
    assert out["frames"] == out["decisions"] == 300
    assert out["deals"] >= 1 and out["all_legal"] and out["grad_norm"] > 0
