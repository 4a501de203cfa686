"""The one protocol every policy follows, so random, rule-based, trained and human players
are interchangeable in environments and tournaments.

An agent maps what one seat may see to an action id::

    action = agent.act(observation, info)

``observation`` is the env's per-agent observation ``{"observation": float32[D],
"action_mask": int8[NUM_ACTIONS]}`` and ``info`` the env's ``infos[agent]`` dict (it carries
the seat's view in readable form: hand, level, the play on the table …; see
``guandan_env.envs.aec``). ``reset(seed)`` is called before each game so seeded agents are
deterministic.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    name: str

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: dict[str, np.ndarray], info: dict) -> int: ...
