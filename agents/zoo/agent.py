"""A pretrained model as an agent (spec ``pretrained:NAME``), acting in numpy."""

from __future__ import annotations

import numpy as np

from agents.candidate_inputs import decision_arrays, observation_arrays
from agents.zoo.numpy_net import NumpyCandidateNet
from guandan_env.encoding.hand_plan import PlanCache
from guandan_env.encoding.packing import OBS_BITS, SCALAR_INDEX, pack_masks


class PretrainedAgent:
    """Plays a zoo model greedily (``greedy=False``: samples with its seeded numpy RNG),
    like ``checkpoint:`` agents play a ``policy.pt``; stateless per seat."""

    def __init__(
        self, net: NumpyCandidateNet, seed: int | None = None, greedy: bool = True, name: str = ""
    ) -> None:
        self.net = net
        self.greedy = greedy
        self.name = name
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation, info: dict) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask: it is not this agent's turn")
        if legal.size == 1:
            return int(legal[0])
        d = self._arrays(observation)
        actions, _, _ = self.net.act_batch(d, self.rng, self.greedy)
        return int(actions[0])

    def action_probabilities(self, observation) -> dict[int, float]:
        """The policy's probability of each legal action."""
        legal = np.flatnonzero(np.asarray(observation["action_mask"]))
        if legal.size <= 1:
            return {int(a): 1.0 for a in legal}
        d = self._arrays(observation)
        p = np.exp(self.net.log_probs(d))
        return {int(a): float(x) for a, x in zip(d.ids, p, strict=True)}

    def batch_policy(self) -> NumpyPolicy:
        """The batched greedy policy the search agent plays out (``agents.playout``)."""
        return NumpyPolicy(self.net)

    def _arrays(self, observation):
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        return observation_arrays(
            obs, np.asarray(observation["action_mask"])[None], self.net.features
        )


class NumpyPolicy:
    """``agents.playout.BatchPolicy`` over a numpy net (greedy)."""

    def __init__(self, net: NumpyCandidateNet) -> None:
        self.net = net
        self.cache = PlanCache(16)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs)
        d = decision_arrays(
            obs[:, :OBS_BITS] != 0,
            obs[:, SCALAR_INDEX],
            pack_masks(mask),
            self.net.features,
            cache=self.cache,
        )
        return self.net.act_batch(d, None, greedy=True)[0]

    def candidates(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Legal ids of one decision and their probabilities, most probable first."""
        d = observation_arrays(
            np.asarray(obs, np.float32)[None], np.asarray(mask)[None], self.net.features
        )
        p = np.exp(self.net.log_probs(d)).astype(np.float64)
        order = np.lexsort((d.ids, -p))
        return d.ids[order], p[order]
