"""Uniform random play over the legal actions (a floor every policy should beat)."""

from __future__ import annotations

import numpy as np


class RandomAgent:
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
