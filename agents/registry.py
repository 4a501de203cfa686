"""Build agents from short text specs, as the tournament and other CLIs take them.

Specs: ``random``, ``heuristic``, ``heuristic:NAME=VALUE,...`` (a heuristic with changed
``HeuristicParams``, for ablations), ``checkpoint:PATH`` (a trained policy; the loader lives
in ``agents.checkpoint``, added by the self-play work, and is imported only when asked for).
A ``#label`` suffix names another copy of the same agent (``random#2``), so an agent can
meet itself in a tournament.
"""

from __future__ import annotations

import dataclasses
import importlib

from .base import Agent
from .heuristic import HeuristicAgent, HeuristicParams
from .random_agent import RandomAgent

BUILTIN = {"random": RandomAgent, "heuristic": HeuristicAgent}
CHECKPOINT_PREFIX = "checkpoint:"


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """The agent a spec names, seeded. Raises ``ValueError`` for an unknown spec."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'random', got {spec!r}")
    s = spec.split("#", 1)[0].strip()
    if s in BUILTIN:
        return BUILTIN[s](seed=seed)
    if s.startswith("heuristic:"):
        return HeuristicAgent(seed=seed, params=parse_heuristic_params(s[len("heuristic:") :]))
    if s.startswith(CHECKPOINT_PREFIX):
        path = s[len(CHECKPOINT_PREFIX) :]
        if not path:
            raise ValueError("checkpoint spec needs a path: 'checkpoint:PATH'")
        try:
            module = importlib.import_module("agents.checkpoint")
        except ModuleNotFoundError as e:
            if e.name != "agents.checkpoint":
                raise
            raise ValueError(
                f"cannot load {spec!r}: the checkpoint loader (agents/checkpoint.py with "
                "load_checkpoint_agent(path, seed)) is not installed in this checkout"
            ) from e
        try:
            return module.load_checkpoint_agent(path, seed)
        except OSError as e:  # no such file, unreadable: a bad spec, said in one line
            raise ValueError(f"cannot load {spec!r}: {e}") from None
    known = ", ".join(agent_specs())
    raise ValueError(f"unknown agent spec {spec!r}; known: {known}")


def agent_specs() -> list[str]:
    """Names of the built-in specs (for CLI help)."""
    return [*BUILTIN, "heuristic:NAME=VALUE,...", CHECKPOINT_PREFIX + "PATH"]


def parse_heuristic_params(text: str) -> HeuristicParams:
    """``HeuristicParams`` from ``name=value,name=value`` (names of its fields)."""
    fields = {f.name: f for f in dataclasses.fields(HeuristicParams)}
    values = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise ValueError(
                f"bad heuristic parameter {item!r}: expected NAME=VALUE with NAME one of "
                f"{sorted(fields)}"
            )
        kind = type(getattr(HeuristicParams(), name))
        try:
            values[name] = kind(raw.strip())
        except ValueError as e:
            raise ValueError(f"heuristic parameter {name} needs a {kind.__name__}: {raw!r}") from e
    return HeuristicParams(**values)
