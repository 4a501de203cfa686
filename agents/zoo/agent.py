"""A pretrained model as an agent (spec ``pretrained:NAME``), acting in numpy."""

from __future__ import annotations

import numpy as np

from agents.candidate_agent import CandidateAgent
from agents.candidate_inputs import decision_arrays, observation_arrays
from agents.zoo.blas import one_blas_thread
from agents.zoo.numpy_net import NumpyCandidateNet
from guandan_env.encoding.hand_plan import PlanCache
from guandan_env.encoding.packing import OBS_BITS, SCALAR_INDEX, pack_masks


class PretrainedAgent(CandidateAgent):
    """Plays a zoo model greedily (``greedy=False``: samples with its seeded numpy RNG),
    as ``checkpoint:`` agents play a ``policy.pt``; stateless per seat."""

    def __init__(
        self, net: NumpyCandidateNet, seed: int | None = None, greedy: bool = True, name: str = ""
    ) -> None:
        super().__init__(net, seed, greedy, name)

    def act(self, observation, info: dict) -> int:
        with one_blas_thread():  # batch 1: small products (agents.zoo.blas)
            return super().act(observation, info)

    def batch_policy(self) -> NumpyPolicy:
        """The batched greedy policy the search agent plays out (``agents.playout``)."""
        return NumpyPolicy(self.net)


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
