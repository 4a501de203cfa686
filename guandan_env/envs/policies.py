"""The uniform random policy: the floor every policy should beat (numpy only).

``agents.RandomAgent`` is this policy; the Gymnasium wrapper uses it for seats without a
policy. It follows the agent protocol of ``agents/base.py``.
"""

from __future__ import annotations

import numpy as np


class UniformRandomPolicy:
    """Picks uniformly among the actions the mask allows; seeded by ``reset(seed)``."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], info: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in the mask: it is not this agent's turn")
        return int(legal[self.rng.integers(legal.size)])
