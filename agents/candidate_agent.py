"""A candidate network as an agent (``agents.base.Agent``): greedy or seeded sampling over
the legal candidates. The network is the torch ``CandidateNet`` (``checkpoint:`` agents) or
its numpy twin ``agents.zoo.numpy_net.NumpyCandidateNet`` (``pretrained:`` agents): both
``prepare`` a decision, ``act_batch`` on it and give its candidates' ``probabilities``."""

from __future__ import annotations

from typing import Any

import numpy as np


class CandidateAgent:
    """A candidate network following the agent protocol (``agents.base.Agent``); stateless
    per seat, so one instance may play several seats."""

    def __init__(
        self, net: Any, seed: int | None = None, greedy: bool = True, name: str = "net"
    ) -> None:
        self.net = net.eval() if hasattr(net, "eval") else net
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
        actions, _, _ = self.net.act_batch(self._prepare(observation), self.rng, self.greedy)
        return int(actions[0])

    def action_probabilities(self, observation) -> dict[int, float]:
        """The policy's probability of each legal action (what ``act`` samples from; the
        greedy agent plays the most probable)."""
        legal = np.flatnonzero(np.asarray(observation["action_mask"]))
        if legal.size <= 1:
            return {int(a): 1.0 for a in legal}
        ids, p = self.net.probabilities(self._prepare(observation))
        return {int(a): float(x) for a, x in zip(ids, p, strict=True)}

    def batch_policy(self):
        """The batched greedy policy the search agent plays out (``agents.playout``)."""
        from agents.playout import NetPolicy

        return NetPolicy(self.net)

    def _prepare(self, observation):
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        return self.net.prepare(obs, np.asarray(observation["action_mask"])[None])
