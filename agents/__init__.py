"""Policies that play guandan-env: the shared protocol, baselines and the spec registry."""

from __future__ import annotations

from .base import Agent
from .heuristic import HeuristicAgent, HeuristicParams
from .random_agent import RandomAgent
from .registry import make_agent

__all__ = ["Agent", "HeuristicAgent", "HeuristicParams", "RandomAgent", "make_agent"]
