"""Replays: save any game as JSON (seed, scenario, actions) and reproduce it exactly.

The file and its checks are ``replay_format`` (``Replay``, ``save``, ``load``); recording is
``recorder`` (``ReplayRecorder``, ``record_game``). This module replays, and is the one import
for all three (it re-exports their public names).

Ways to make one:

* ``ReplayRecorder(env)``: wraps an AEC env; use it exactly like the env, then
  ``recorder.replay(meta=...)`` (or ``recorder.save(path)``).
* ``record_game(agents, seed=..., config=..., options=...)``: plays one game with four agents.
* ``replay_of_game(game, actions, config=..., options=...)`` for code that drives a
  ``Game`` directly (the actions are those passed to ``Game.step``, in order).

Ways to use one: ``replay_game(r)`` (engine only; returns the final ``Game``),
``replay_steps(r)`` (yields each step), ``replay_env(r)`` (re-runs the AEC env and returns it).

Building the first deal from a scenario reuses ``guandan_env.envs.scenario.build_game``
(imported lazily) so the replay follows the env's code path exactly.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.engine import Game
from .recorder import ReplayRecorder, record_game
from .replay_format import (
    FORMAT,
    FORMAT_VERSION,
    Replay,
    _env_config,
    check_final,
    deal_summary,
    final_summary,
    input_digest,
    load,
    save,
    state_digest,
)

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Replay",
    "ReplayRecorder",
    "Step",
    "check_final",
    "deal_summary",
    "final_summary",
    "input_digest",
    "load",
    "make_replay_env",
    "record_game",
    "replay_env",
    "replay_game",
    "replay_of_game",
    "replay_steps",
    "save",
    "start_game",
    "state_digest",
]


def start_game(replay: Replay) -> Game:
    """The game as it was after ``reset``: first deal dealt, tribute given, nothing played."""
    from .scenario import build_game

    return build_game(replay.game_seed, _env_config(replay.config), replay.options)


@dataclass
class Step:
    """One replayed action: who acted, in which phase, and what it moved."""

    index: int  # position in ``Replay.actions``
    deal: int  # deal number the action belongs to
    seat: int
    phase: str  # "return" or "play"
    action: int
    faces: tuple[int, ...]
    game: Game  # live state after the action (and after the next deal began, if one did)
    deal_result: dict | None  # set on the action that ended a deal


def replay_steps(replay: Replay) -> Iterator[Step]:
    """Re-run ``replay`` on the engine, yielding a :class:`Step` after each action.

    Follows ``guandan_env.envs.aec``: after a deal in ``mode="match"`` the next one starts unless
    the match is over. ``ValueError`` if an action is illegal or comes after the game ended.
    """
    cfg = _env_config(replay.config)
    game = start_game(replay)
    for i, a in enumerate(replay.actions):
        if game.deal_over:
            raise ValueError(
                f"replay action #{i} ({a}) comes after the game ended "
                f"({len(replay.actions) - i} action(s) left over)"
            )
        seat, phase, deal = game.to_act, game.phase, game.deal_number
        try:
            faces = game.step(a)
        except ValueError as e:
            raise ValueError(f"replay action #{i} does not reproduce: {e}") from e
        result = None
        if game.deal_over:
            result = deal_summary(game)
            if cfg["mode"] == "match" and not game.match_over:
                game.next_deal()
        yield Step(i, deal, seat, phase, int(a), tuple(int(f) for f in faces), game, result)


def replay_of_game(
    game: Game,
    actions: Sequence[int],
    config: dict | None = None,
    options: dict | None = None,
    seed: int | None = None,
    meta: dict | None = None,
) -> Replay:
    """A replay of ``game`` (started by ``aec.build_game(game.seed, config, options)``, then
    moved by ``actions``); its deal summaries come from replaying, which checks ``actions``."""
    draft = Replay.from_game(game, actions, config, options, (), seed, meta)
    deals = [s.deal_result for s in replay_steps(draft) if s.deal_result is not None]
    return Replay.from_game(game, actions, config, options, deals, seed, meta)


def replay_game(replay: Replay, verify: bool = True) -> Game:
    """The final ``Game`` of ``replay``; with ``verify`` its recorded check values must match
    (``ValueError`` naming what differs)."""
    game = start_game(replay)
    deals = []
    for step in replay_steps(replay):
        game = step.game
        if step.deal_result is not None:
            deals.append(step.deal_result)
    if verify:
        check_final(replay, final_summary(game, deals))
    return game


def replay_env(replay: Replay, verify: bool = True, **overrides: Any):
    """Re-run ``replay`` through the AEC env (``guandan_env.env``) and return the env at the
    end, e.g. to read ``env.unwrapped.log`` or render. ``overrides`` change display-only
    config such as ``render_mode``. Verifies the check values like :func:`replay_game`."""
    rec = ReplayRecorder(make_replay_env(replay, **overrides))
    rec.start(replay.seed, replay.options)
    for i, a in enumerate(replay.actions):
        if all(rec.terminations.values()) or all(rec.truncations.values()):
            raise ValueError(f"replay action #{i} ({a}) comes after the game ended")
        try:
            rec.step(a)
        except ValueError as e:
            raise ValueError(f"replay action #{i} does not reproduce: {e}") from e
    if verify:
        check_final(replay, final_summary(rec.unwrapped.game, rec.deals))
    return rec.env


def make_replay_env(replay: Replay, **overrides: Any):
    """A fresh wrapped AEC env reset to the replay's start (nothing played yet)."""
    from . import aec

    env = aec.env(**{**replay.config, **overrides})
    seed = replay.seed
    if seed is not None and int(np.random.default_rng(seed).integers(2**63)) == replay.game_seed:
        env.reset(seed=seed, options=replay.options or None)
    else:
        # the recorded env continued its own RNG (reset without a seed): start from the
        # recorded engine seed directly
        env.reset(options={**replay.options, aec.GAME_SEED: replay.game_seed})
    return env
