"""A Gymnasium single-agent view of the AEC env, for single-agent RL libraries.

One seat is learned; the other three are driven by given policies (anything with
``act(observation, info) -> int``, e.g. the agents in ``agents/``). ``step`` applies the
learner's action, then lets the others play until the learner must act again or the episode
ends. The reward is everything the learner's seat earned since its previous action (deal
rewards are ±3/2/1, shared by the team).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ..core import validate
from .aec import AGENTS, raw_env
from .policies import UniformRandomPolicy


class SingleAgentEnv(gym.Env):
    """``gymnasium.Env`` where seat ``learner_seat`` is the agent and the rest are policies.

    ``policies`` maps other seats (0..3) to policies; missing seats play uniformly at random.
    Remaining keyword arguments are the AEC env config (``guandan_env.env``).

    Gymnasium's convention is that every action of ``action_space`` may be stepped, so here
    ``illegal_action`` defaults to ``"penalize"``: an illegal id ends the episode with
    ``illegal_penalty`` (Gymnasium's ``check_env`` passes; ``action_masks()`` gives the legal
    set). Pass ``illegal_action="raise"`` for the AEC env's strict default.
    """

    metadata = {"render_modes": ["ansi", "human"]}

    def __init__(
        self,
        learner_seat: int = 0,
        policies: Mapping[int, Any] | None = None,
        **config,
    ) -> None:
        learner_seat = validate.seat(learner_seat, "learner_seat")
        policies = validate.mapping(policies, "policies (seat -> policy)")
        for s, p in policies.items():
            if p is not None and not callable(getattr(p, "act", None)):
                hint = (
                    f"; for the agent spec {p!r} pass agents.registry.make_agent({p!r})"
                    if isinstance(p, str)
                    else ""
                )
                raise ValueError(
                    f"the policy for seat {s!r} must have an act() method, got "
                    f"{type(p).__name__}{hint}"
                )
        bad = sorted(set(policies) - (set(range(4)) - {learner_seat}))
        if bad:
            raise ValueError(f"policies given for seats {bad}: only the other seats take policies")
        self.learner_seat = learner_seat
        self.learner = AGENTS[learner_seat]
        self.policies = {
            s: policies.get(s) or UniformRandomPolicy() for s in range(4) if s != learner_seat
        }
        config.setdefault("illegal_action", "penalize")
        self.aec = raw_env(**config)
        self.render_mode = self.aec.render_mode
        self.observation_space = self.aec.observation_space(self.learner)
        self.action_space = self.aec.action_space(self.learner)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.aec.reset(seed=seed, options=options)
        if seed is not None:
            for s, p in self.policies.items():
                if hasattr(p, "reset"):
                    p.reset(seed + 1000 * (s + 1))
        reward, done = self._advance()
        obs, _, _, _, info = self.aec.last()
        return obs, info

    def step(self, action: int):
        if self.aec.terminations[self.learner] or self.aec.truncations[self.learner]:
            raise ValueError("the episode is over: call reset() (step after termination)")
        self.aec.step(action)  # the env checks it (an int id; numpy ints included)
        reward, done = self._advance()
        obs = self.aec.observe(self.learner)
        info = dict(self.aec.infos[self.learner])
        terminated = self.aec.terminations[self.learner]
        truncated = self.aec.truncations[self.learner]
        return obs, reward, terminated, truncated, info

    def _advance(self) -> tuple[float, bool]:
        """Play the other seats until the learner acts or the episode ends."""
        e = self.aec
        while True:
            agent = e.agent_selection
            if e.terminations[self.learner] or e.truncations[self.learner]:
                return float(e._cumulative_rewards[self.learner]), True
            if agent == self.learner:
                return float(e._cumulative_rewards[self.learner]), False
            seat = AGENTS.index(agent)
            obs = e.observe(agent)
            e.step(self.policies[seat].act(obs, e.infos[agent]))

    def action_masks(self) -> np.ndarray:
        """Mask of the learner's legal actions (sb3-contrib's MaskablePPO convention)."""
        return self.aec.action_mask()

    def render(self):
        return self.aec.render()
