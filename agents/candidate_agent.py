"""A ``CandidateNet`` as an agent (``agents.base.Agent``): greedy or seeded sampling over
the legal candidates."""

from __future__ import annotations

import numpy as np

from agents.candidate_net import CandidateNet


class CandidateAgent:
    """A ``CandidateNet`` following the agent protocol (``agents.base.Agent``); stateless per
    seat, so one instance may play several seats."""

    def __init__(
        self, net: CandidateNet, seed: int | None = None, greedy: bool = True, name: str = "net"
    ) -> None:
        self.net = net.eval()
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
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        d = self.net.prepare(obs, mask[None])
        actions, _, _ = self.net.act_batch(d, self.rng, self.greedy)
        return int(actions[0])

    def action_probabilities(self, observation) -> dict[int, float]:
        """The policy's probability of each legal action (what ``act`` samples from; the
        greedy agent plays the most probable)."""
        import torch

        from agents.candidate_net import segment_log_softmax

        mask = np.asarray(observation["action_mask"])
        legal = np.flatnonzero(mask)
        if legal.size <= 1:
            return {int(a): 1.0 for a in legal}
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        d = self.net.prepare(obs, mask[None])
        with torch.no_grad():
            logits, _ = self.net(d)
            p = torch.exp(segment_log_softmax(logits, d.rows, d.n)).numpy()
        return {int(a): float(x) for a, x in zip(d.ids.numpy(), p, strict=True)}
