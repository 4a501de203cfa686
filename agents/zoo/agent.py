"""A pretrained model as an agent (spec ``pretrained:NAME``), acting in numpy."""

from __future__ import annotations

from agents.candidate_agent import CandidateAgent
from agents.zoo.blas import one_blas_thread
from agents.zoo.numpy_net import NumpyCandidateNet


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
