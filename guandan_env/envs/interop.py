"""What other RL libraries need from the AEC env, kept here rather than in their examples.

``array_infos(env)``: the env with empty ``infos``. TorchRL's ``PettingZooWrapper`` turns
every ``infos`` value into a tensor spec at reset; ours carry text (the last play, the level)
and a ``SeatView`` for rule-based agents, which have no tensor form. Everything a learner
needs is in the observation and its ``action_mask``.

    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    env = PettingZooWrapper(env=array_infos(guandan_env.env()), use_mask=True, seed=0)
"""

from __future__ import annotations

from pettingzoo.utils import BaseWrapper
from pettingzoo.utils.env import AECEnv


class _ArrayInfos(BaseWrapper):
    """``infos`` of every agent is an empty dict; everything else is the wrapped env's."""

    @property
    def infos(self) -> dict[str, dict]:
        return {agent: {} for agent in self.env.possible_agents}

    def last(self, observe: bool = True):
        obs, reward, term, trunc, _ = self.env.last(observe)
        return obs, reward, term, trunc, {}


def array_infos(env: AECEnv) -> AECEnv:
    """``env`` (an AEC env of ``guandan_env.env()``) with empty ``infos``: see the module
    docstring."""
    return _ArrayInfos(env)
