"""guandan-env: a reinforcement-learning research environment for Guandan (掼蛋).

The rules core (cards, action table, move generator, engine) imports only numpy. The
PettingZoo environment (``env``, ``raw_env``) and the batched engine (``VectorGuandanEnv``)
are imported on first use. ``guandan_env.guandan_v1`` is the env under PettingZoo's versioned
naming; the Gymnasium id ``guandan_env/SingleSeat-v1`` is registered as soon as Gymnasium is
imported (``guandan_env.envs.registration``: no eager import here).
"""

from __future__ import annotations

from .core.actions import KIND_NAMES, NUM_ACTIONS
from .core.text import cards_for_action, declaration_text, describe_action, legal_actions
from .encoding.features import ACTION_FEATURE_DIM, action_features
from .envs import registration as _registration

_registration.install()

__all__ = [
    "NUM_ACTIONS",
    "KIND_NAMES",
    "legal_actions",
    "describe_action",
    "cards_for_action",
    "declaration_text",
    "action_features",
    "ACTION_FEATURE_DIM",
    "env",
    "raw_env",
    "VectorGuandanEnv",
]
__version__ = "0.2.0"


def __getattr__(name: str):
    if name in ("env", "raw_env"):
        from .envs import aec

        return getattr(aec, name)
    if name == "VectorGuandanEnv":
        from .envs.vector import VectorGuandanEnv

        return VectorGuandanEnv
    raise AttributeError(f"module 'guandan_env' has no attribute {name!r}")
