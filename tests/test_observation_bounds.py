"""Structural bounds of the observation (R-8), OpenSpiel style: declared once in
``OBS_FIELDS``, enforced on every observation of random play — full deals with random levels
and tribute (return phases included), through the AEC env and the vector env.

* every value lies in the observation space's bounds [0, 1];
* every one-hot group has exactly one bit set (per relative seat or team where the group
  is repeated);
* card sets are consistent: own hand + played + unseen = two copies of every face.
"""

from __future__ import annotations

import numpy as np

import guandan_env
from guandan_env.core.cards import NUM_FACES
from guandan_env.encoding.observation import MAX_CARDS, OBS_DIM, OBS_SLICES
from guandan_env.envs.vector import VectorGuandanEnv

# one-hot groups: slice name -> number of equal blocks it is made of
ONE_HOT = {
    "cards_left": 4,
    "table_kind": 1,
    "table_value": 1,
    "table_seat": 1,
    "recent_moves": 3,
    "deal_level": 1,
    "team_levels": 2,
    "leveling_team": 1,
    "a_failures": 2,
    "finish_place": 4,
    "phase": 1,
}


def counts_of(bits: np.ndarray) -> np.ndarray:
    """Face counts (0..2) of ``k`` stacked 108-bit card sets ``(B, k * 108)`` → ``(B, k, 54)``:
    the two bits of a face add up."""
    return bits.reshape(bits.shape[0], -1, NUM_FACES, 2).sum(-1)


def check_bounds(obs: np.ndarray) -> None:
    """Assert the bounds above for one observation ``(OBS_DIM,)`` or a batch ``(B, OBS_DIM)``."""
    obs = np.atleast_2d(obs)
    b = obs.shape[0]
    assert obs.shape[1] == OBS_DIM and obs.dtype == np.float32
    assert obs.min() >= 0.0 and obs.max() <= 1.0
    for name, blocks in ONE_HOT.items():
        group = obs[:, OBS_SLICES[name]].reshape(b, blocks, -1)
        assert (group.sum(-1) == 1).all(), name
    hand = counts_of(obs[:, OBS_SLICES["hand"]])[:, 0]
    played = counts_of(obs[:, OBS_SLICES["played"]]).sum(1)
    unseen = counts_of(obs[:, OBS_SLICES["unseen"]])[:, 0]
    assert (hand + played + unseen == 2).all()
    left = obs[:, OBS_SLICES["cards_left"]].reshape(b, 4, MAX_CARDS + 1).argmax(-1)
    assert np.array_equal(left[:, 0], hand.sum(-1))  # relative seat 0 is the observer


def test_r8_aec_observations_stay_in_bounds_through_random_deals_with_tribute():
    rng = np.random.default_rng(3)
    env = guandan_env.env(mode="deal", random_levels=True, random_tribute=True)
    seen_return = 0
    for episode in range(12):
        env.reset(seed=episode)
        for _agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            check_bounds(obs["observation"])
            if term or trunc:
                env.step(None)
                continue
            seen_return += info["view"].phase == "return"
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
    assert seen_return > 0


def test_r8_vector_observations_stay_in_bounds():
    env = VectorGuandanEnv(64, seed=5, mode="match", random_levels=True, random_tribute=True)
    obs, mask, _ = env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(300):
        check_bounds(obs)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, _, _, _, _ = env.step(actions)
