"""Structural bounds of the observation (R-8), OpenSpiel style: declared once in
``obs_layout.OBS_FIELDS`` (each field's kind), enforced on every observation of random play —
full deals with random levels and tribute (return phases included), through the AEC env and
the vector env.

* every value lies in the observation space's bounds [0, 1]; every field's entries are what
  its kind allows (``obs_layout.violations``): 0/1 outside the scalar fields, exactly one bit
  set per block of a one-hot field (per relative seat or team where it is repeated), at most
  one in a "one-hot or none" field;
* card sets are consistent: own hand + played + unseen = two copies of every face.
"""

from __future__ import annotations

import numpy as np

import guandan_env
from guandan_env.core.cards import NUM_FACES
from guandan_env.encoding.obs_layout import OBS_FIELD, Kind, violations
from guandan_env.encoding.observation import MAX_CARDS, OBS_DIM, OBS_SLICES
from guandan_env.envs.vector import VectorGuandanEnv


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
    assert violations(obs) == []
    hand = counts_of(obs[:, OBS_SLICES["hand"]])[:, 0]
    played = counts_of(obs[:, OBS_SLICES["played"]]).sum(1)
    unseen = counts_of(obs[:, OBS_SLICES["unseen"]])[:, 0]
    assert (hand + played + unseen == 2).all()
    left = obs[:, OBS_SLICES["cards_left"]].reshape(b, 4, MAX_CARDS + 1).argmax(-1)
    assert np.array_equal(left[:, 0], hand.sum(-1))  # relative seat 0 is the observer


def test_the_declared_kinds_are_checked():
    """``violations`` names a broken one-hot block, a non-0/1 bit and a card pair out of
    order, so the checks above can fail."""
    f = OBS_FIELD["cards_left"]
    assert f.kind is Kind.ONE_HOT and f.groups == 4
    obs = np.zeros(OBS_DIM, dtype=np.float32)
    found = violations(obs)
    assert any(v.startswith("cards_left:") for v in found)
    assert not any(v.startswith("tribute_given:") for v in found)  # one-hot or none
    obs[OBS_SLICES["hand"].start + 1] = 1  # "2 copies" without ">= 1"
    obs[OBS_SLICES["resisted"]] = 0.5
    found = violations(obs)
    assert any(v.startswith("hand:") for v in found)
    assert any(v.startswith("resisted:") for v in found)


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
