"""The env ``guandan_v1`` under PettingZoo's classic naming (cf.
``pettingzoo.classic.leduc_holdem_v4``)::

    from guandan_env import guandan_v1

    env = guandan_v1.env(mode="deal")  # wrapped (order enforcing); raw_env(): unwrapped

``env`` and ``raw_env`` are ``guandan_env.env`` and ``guandan_env.raw_env``
(``guandan_env/envs/aec.py``: its docstring is the spec). The module name is the env version
(``metadata["name"]``, ``guandan_env/env_version.py``): a future observation or action table
change ships as ``guandan_v2`` beside this one. The single-seat Gymnasium view of the same
env is ``gymnasium.make("guandan_env/SingleSeat-v1")`` (``guandan_env.envs.registration``).
"""

from __future__ import annotations

from .envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
