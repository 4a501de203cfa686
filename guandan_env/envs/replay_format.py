"""The replay file: what fixes a game, and check values of how it ended (JSON).

A replay holds what fixes a game (DESIGN.md "Seeds and determinism"): the env config, the
engine seed, the scenario ``reset`` options and the list of actions, plus check values of the
final state (finishing orders, levels, a hash) and a digest of those inputs (``inputs``).
Replaying (``guandan_env.envs.replay``) re-runs the engine and raises ``ValueError`` if the
recorded check values do not match (``check_final``), so a replay is also a regression test
of the rules.

JSON layout (``FORMAT_VERSION`` 1)::

    {"format": "guandan-replay", "version": 1, "env": "guandan_v1",
     "config": {...env config...}, "seed": 7, "game_seed": 123..., "options": {...},
     "actions": [2240, 17, 0, ...],
     "final": {"deals": [{"order": [...], "winner_team": 0, "gain": 2, ...}], "levels": [...],
               "leveling_team": 0, "match_winner": null, "deal_number": 1, "phase": "...",
               "finish_order": [...], "digest": "sha256...", "inputs": "sha256..."},
     "meta": {...free form: agent names, tournament game id...}}

``env`` is ``guandan_env.env_version.ENV_VERSION`` of the recording code (a replay of another
version is refused on load; files without it predate the field). ``seed`` is the seed given
to ``env.reset`` (None when the env continued its own RNG);
``game_seed`` is the seed the engine actually used (``env.unwrapped.game.seed``); replays use
``game_seed``. Each ``final["deals"]`` entry is the deal's ``DealResult.info()``.

This module imports only numpy and the standard library at import time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.engine import Game
from ..env_version import ENV_VERSION, check_env_version

FORMAT = "guandan-replay"
FORMAT_VERSION = 1
_CONFIG_DROP = ("render_mode", "info_view")  # display/info keys, not part of a game's identity


def _jsonable(x: Any) -> Any:
    """Plain JSON types from numpy scalars/arrays, tuples and nested containers."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if x is None or isinstance(x, bool | int | float | str):
        return x
    raise TypeError(f"cannot store {type(x).__name__} {x!r} in a JSON replay")


def _json_default(x: Any) -> Any:
    if isinstance(x, np.integer | np.bool_):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"cannot hash {type(x).__name__}")


def state_digest(game: Game) -> str:
    """SHA-256 of everything that defines a game's state, including its RNG (hex)."""
    h = hashlib.sha256()
    for arr in (game.hands, game.played):
        h.update(np.ascontiguousarray(arr, dtype=np.uint8).tobytes())
    state = {
        "levels": game.levels,
        "leveling_team": game.leveling_team,
        "a_failures": game.a_failures,
        "deal_number": game.deal_number,
        "match_winner": game.match_winner,
        "match_over": game.match_over,
        "level": game.level,
        "phase": game.phase,
        "to_act": game.to_act,
        "leader": game.leader,
        "last": [game.table_action, game.table_seat, game.passes],
        "finish_order": game.finish_order,
        "history": game.history,
        "tributes": [[t.giver, t.receiver, t.face, t.returned] for t in game.tributes],
        "resisted": [game.resisted, game.resist_jokers],
        "result": None if game.result is None else game.result.order,
        "rng": game.rng.bit_generator.state,
    }
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), default=_json_default)
    h.update(text.encode())
    return h.hexdigest()


def deal_summary(game: Game) -> dict:
    """The finished deal's result (``game.result``) and the levels after it, as JSON data."""
    if game.result is None:
        raise ValueError("the deal is not over: no result yet")
    return game.result.info()


def input_digest(replay: Replay) -> str:
    """SHA-256 of everything that decides the game and its rewards: the full env config
    (defaults filled in: reward settings included), both seeds, the scenario options and
    every action. Stored in ``final["inputs"]``, so verification fails if any of it changes."""
    text = json.dumps(
        _jsonable(
            {
                "config": _env_config(replay.config),
                "game_seed": replay.game_seed,
                "seed": replay.seed,
                "options": replay.options,
                "actions": replay.actions,
            }
        ),
        sort_keys=True,
        separators=(",", ":"),
        default=_json_default,
    )
    return hashlib.sha256(text.encode()).hexdigest()


FINAL_KEYS = (
    "deals",
    "levels",
    "leveling_team",
    "a_failures",
    "match_winner",
    "deal_number",
    "phase",
    "finish_order",
    "digest",
    "inputs",
)


def final_summary(game: Game, deals: Sequence[dict]) -> dict:
    """Check values of a game's state: its deal results so far, levels and a state hash."""
    return _jsonable(
        {
            "deals": list(deals),
            "levels": game.levels,
            "leveling_team": game.leveling_team,
            "a_failures": game.a_failures,
            "match_winner": game.match_winner,
            "deal_number": game.deal_number,
            "phase": game.phase,
            "finish_order": game.finish_order,
            "digest": state_digest(game),
        }
    )


@dataclass
class Replay:
    """One recorded game: enough to rebuild it action by action (module docstring)."""

    game_seed: int
    actions: list[int]
    config: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    seed: int | None = None
    final: dict | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.config = {k: v for k, v in self.config.items() if k not in _CONFIG_DROP}
        self.actions = [int(a) for a in self.actions]

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        return _jsonable(
            {
                "format": FORMAT,
                "version": FORMAT_VERSION,
                "env": ENV_VERSION,
                "config": self.config,
                "seed": self.seed,
                "game_seed": self.game_seed,
                "options": self.options,
                "actions": self.actions,
                "final": self.final,
                "meta": self.meta,
            }
        )

    @classmethod
    def from_dict(cls, data: dict) -> Replay:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f'not a Guandan replay: expected "format": {FORMAT!r}')
        version = data.get("version")
        if version != FORMAT_VERSION:
            raise ValueError(
                f"unsupported replay version {version!r}; this code reads version {FORMAT_VERSION}"
            )
        check_env_version(data.get("env"), "this replay")
        missing = [k for k in ("game_seed", "actions") if k not in data]
        if missing:
            raise ValueError(f"replay lacks required field(s) {missing}")
        from ..core import validate
        from .scenario import check_options

        actions = validate.sequence(data["actions"], "replay actions")
        rep = cls(
            game_seed=validate.integer(data["game_seed"], "replay game_seed", 0, 2**63 - 1),
            actions=[validate.action_id(a, f"replay action #{i}") for i, a in enumerate(actions)],
            config=validate.mapping(data.get("config"), "replay config"),
            options=validate.mapping(data.get("options"), "replay options"),
            seed=validate.seed(data.get("seed"), "replay seed"),
            final=data.get("final"),
            meta=validate.mapping(data.get("meta"), "replay meta"),
        )
        try:
            _env_config(rep.config)
            check_options(rep.options)
        except ValueError as e:
            raise ValueError(f"replay: {e}") from None
        return rep

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def save(self, path: str | Path) -> Path:
        return save(self, path)

    # ------------------------------------------------------------------ from a Game run
    @classmethod
    def from_game(
        cls,
        game: Game,
        actions: Sequence[int],
        config: dict | None = None,
        options: dict | None = None,
        deals: Sequence[dict] = (),
        seed: int | None = None,
        meta: dict | None = None,
    ) -> Replay:
        """A replay of ``game``, started by ``aec.build_game(game.seed, config, options)`` and
        then moved by ``actions`` (with ``next_deal`` between deals in match mode).

        ``deals`` are the per-deal summaries (``deal_summary``) collected on the way
        (``guandan_env.envs.replay.replay_of_game`` recomputes them by replaying, which also
        checks ``actions``).
        """
        if game.seed is None:
            raise ValueError("the game has no seed (Game.new(seed=None)): it cannot be replayed")
        rep = cls(
            game_seed=int(game.seed),
            actions=list(actions),
            config=dict(config or {}),
            options=dict(options or {}),
            seed=seed,
            meta=dict(meta or {}),
        )
        rep.final = {**final_summary(game, deals), "inputs": input_digest(rep)}
        return rep


def save(replay: Replay, path: str | Path) -> Path:
    """Write ``replay`` as JSON (parent folders are created); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(replay.to_json(indent=1) + "\n", encoding="utf-8")
    return p


def load(path: str | Path) -> Replay:
    """Read a replay written by :func:`save`; ``ValueError`` for anything else."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid JSON ({e})") from e
    try:
        return Replay.from_dict(data)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from e


def _env_config(config: dict) -> dict:
    from .scenario import check_config

    return check_config({k: v for k, v in config.items() if k not in _CONFIG_DROP})


def check_final(replay: Replay, got: dict) -> None:
    """Compare recorded check values with ``got`` (``final_summary`` of the replayed game)
    and the replay's inputs with their recorded digest; ``ValueError`` listing every
    difference. Check values that are present must be complete; a replay without any
    (``final`` None) passes, and says so where it is shown."""
    want = replay.final
    if want is None:
        return
    if not isinstance(want, dict):
        raise ValueError(f"replay check values must be a dict, got {type(want).__name__}")
    missing = [k for k in FINAL_KEYS if k not in want]
    if missing:
        raise ValueError(
            f"replay check values lack {missing}: it cannot be verified (re-record it)"
        )
    got = {**got, "inputs": input_digest(replay)}
    diffs = []
    for k in FINAL_KEYS:
        if want[k] == got.get(k):
            continue
        if k == "inputs":
            diffs.append(
                "inputs: the config, seeds, options or actions differ from those recorded "
                "(their digest does not match)"
            )
        else:
            diffs.append(f"{k}: recorded {want[k]!r}, replayed {got.get(k)!r}")
    if diffs:
        raise ValueError("replay does not reproduce the recorded game: " + "; ".join(diffs))
