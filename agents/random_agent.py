"""Uniform random play over the legal actions (a floor every policy should beat)."""

from __future__ import annotations

from guandan_env.envs.policies import UniformRandomPolicy


class RandomAgent(UniformRandomPolicy):
    """Picks uniformly among the actions the mask allows; seeded by ``reset(seed)``."""
