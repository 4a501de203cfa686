"""Gymnasium ids of our envs, registered when Gymnasium is imported (no eager import).

``gymnasium.make("guandan_env/SingleSeat-v1", learner_seat=0, policies=None, **config)``
builds ``guandan_env.envs.wrappers.SingleAgentEnv`` (the version suffix is the env's,
``guandan_v1``: ``guandan_env/env_version.py``). The ids exist once both ``guandan_env`` and
``gymnasium`` are imported, in either order.

Why a hook: Gymnasium 1.x has no plugin entry points any more (``gymnasium.make`` reads only
its registry), and ``import guandan_env`` must not load Gymnasium (the rules core loads only
numpy: ``tests/project/test_imports.py``). So ``install()`` registers at once if Gymnasium is
already loaded, and otherwise puts a one-shot finder on ``sys.meta_path`` that lets Python import
``gymnasium`` as usual and registers right after the package has run; the finder then
removes itself. ``register_gymnasium()`` may also be called directly.
"""

from __future__ import annotations

import importlib.abc
import sys
from types import ModuleType

# id -> entry point (a string: nothing is imported until ``gymnasium.make``)
GYMNASIUM_ENVS: dict[str, str] = {
    "guandan_env/SingleSeat-v1": "guandan_env.envs.wrappers:SingleAgentEnv",
}


def register_gymnasium() -> None:
    """Register ``GYMNASIUM_ENVS`` with Gymnasium (imports it); a registered id is kept."""
    import gymnasium

    for env_id, entry_point in GYMNASIUM_ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)


class _AfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the real loader of ``gymnasium`` to register after it."""

    def find_spec(self, name: str, path=None, target: ModuleType | None = None):
        if name != "gymnasium":
            return None
        _uninstall()  # one shot, and no recursion into ourselves below
        spec = None
        for finder in list(sys.meta_path):  # the finders Python would have asked
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                break
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            register_gymnasium()

        loader.exec_module = exec_module  # this spec's own loader instance
        return spec


_HOOK = _AfterGymnasium()


def _uninstall() -> None:
    while _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)


def install() -> None:
    """Register now if Gymnasium is loaded, else as soon as it is imported."""
    if "gymnasium" in sys.modules:
        register_gymnasium()
    elif _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
