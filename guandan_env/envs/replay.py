"""Replays: save any game as JSON (seed, scenario, actions) and reproduce it exactly.

A replay holds what fixes a game (DESIGN.md "Seeds and determinism"): the env config, the
engine seed, the scenario ``reset`` options and the list of actions, plus check values of the
final state (finishing orders, levels, a hash) and a digest of those inputs (``inputs``).
Replaying re-runs the engine and raises ``ValueError`` if the recorded check values do not
match, so a replay is also a regression test of the rules.

JSON layout (``FORMAT_VERSION`` 1)::

    {"format": "guandan-replay", "version": 1, "env": "guandan_v1",
     "config": {...env config...}, "seed": 7, "game_seed": 123..., "options": {...},
     "actions": [2240, 17, 0, ...],
     "final": {"deals": [{"order": [...], "winner_team": 0, "gain": 2, ...}], "levels": [...],
               "leveling_team": 0, "match_winner": null, "deal_number": 1, "phase": "...",
               "finish_order": [...], "digest": "sha256...", "inputs": "sha256..."},
     "meta": {...free form: agent names, tournament game id...}}

``env`` is ``guandan_env.version.ENV_VERSION`` of the recording code (a replay of another
version is refused on load; files without it predate the field). ``seed`` is the seed given
to ``env.reset`` (None when the env continued its own RNG);
``game_seed`` is the seed the engine actually used (``env.unwrapped.game.seed``); replays use
``game_seed``.

Ways to make one:

* ``ReplayRecorder(env)``: wraps an AEC env; use it exactly like the env, then
  ``recorder.replay(meta=...)`` (or ``recorder.save(path)``).
* ``record_game(agents, seed=..., config=..., options=...)``: plays one game with four agents.
* ``Replay.from_game(game, actions, config=..., options=...)`` for code that drives a
  ``Game`` directly (the actions are those passed to ``Game.step``, in order).

Ways to use one: ``replay_game(r)`` (engine only; returns the final ``Game``),
``replay_steps(r)`` (yields each step), ``replay_env(r)`` (re-runs the AEC env and returns it).

This module imports only numpy and the standard library at import time; building the first
deal from a scenario reuses ``guandan_env.envs.aec.build_game`` (imported lazily) so the replay
follows the env's code path exactly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.engine import Game
from ..version import ENV_VERSION, check_env_version

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
        deals: Sequence[dict] | None = None,
        seed: int | None = None,
        meta: dict | None = None,
    ) -> Replay:
        """A replay of ``game``, started by ``aec.build_game(game.seed, config, options)`` and
        then moved by ``actions`` (with ``next_deal`` between deals in match mode).

        ``deals`` are the per-deal summaries (``deal_summary``) collected on the way; when
        omitted they are recomputed by replaying, which also checks ``actions``.
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
        if deals is None:
            deals = []
            for step in replay_steps(rep):
                if step.deal_result is not None:
                    deals.append(step.deal_result)
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


# ---------------------------------------------------------------------- replaying
def _env_config(config: dict) -> dict:
    from .scenario import check_config

    return check_config({k: v for k, v in config.items() if k not in _CONFIG_DROP})


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
        env.unwrapped.reset_to_game(replay.game_seed, options=replay.options or None)
        env._has_reset = True
    return env


# ---------------------------------------------------------------------- recording
class ReplayRecorder:
    """Wraps an AEC env (``guandan_env.env(...)``) and records what a replay needs.

    Use it exactly like the env (``reset``, ``step``, ``agent_iter``, ``last``… are passed
    through); each ``reset`` starts a new recording. Dead steps (``step(None)`` for finished
    agents) are not recorded. With ``illegal_action="penalize"`` an illegal action ends the
    recording (it is kept in ``meta["illegal_action"]``, not in ``actions``).
    """

    def __init__(self, env) -> None:
        self.env = env
        self.seed: int | None = None
        self.options: dict = {}
        self.actions: list[int] = []
        self.deals: list[dict] = []
        self.illegal: dict | None = None
        self._started = False

    def __getattr__(self, name: str):
        if name == "env":  # not set yet (copy/unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.env, name)

    @property
    def unwrapped(self):
        return self.env.unwrapped

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self.start(seed, options)

    def start(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new recording of an env that was just reset with ``seed`` and ``options``
        (for envs reset before they were wrapped)."""
        self.seed = None if seed is None else int(seed)
        self.options = _jsonable(dict(options or {}))
        self.actions, self.deals, self.illegal = [], [], None
        self._started = True

    def step(self, action) -> None:
        env = self.env
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(action)
            return
        raw = env.unwrapped
        game = raw.game
        mask = raw.action_mask()
        legal = action is not None and 0 <= int(action) < len(mask) and bool(mask[action])
        env.step(action)  # raises for an illegal action in "raise" mode: nothing recorded
        if not legal:
            self.illegal = {"seat": int(game.to_act), "action": _jsonable(action)}
            return
        self.actions.append(int(action))
        res = raw.infos[agent].get("deal_result")
        if res is not None:
            self.deals.append(dict(res))

    def replay(self, meta: dict | None = None) -> Replay:
        """The recording so far (a finished game or not) as a :class:`Replay`."""
        if not self._started:
            raise ValueError("nothing recorded: call reset() first")
        game = self.env.unwrapped.game
        m = dict(meta or {})
        if self.illegal is not None:
            m["illegal_action"] = self.illegal
        rep = Replay(
            game_seed=int(game.seed),
            actions=list(self.actions),
            config=dict(self.env.unwrapped.config),
            options=self.options,
            seed=self.seed,
            meta=m,
        )
        rep.final = {**final_summary(game, self.deals), "inputs": input_digest(rep)}
        return rep

    def save(self, path: str | Path, meta: dict | None = None) -> Path:
        return save(self.replay(meta), path)


def record_game(
    agents: Sequence[Any],
    seed: int | None = None,
    config: dict | None = None,
    options: dict | None = None,
    meta: dict | None = None,
) -> Replay:
    """Play one game (a deal or a match, per ``config``) with four agents (seat order; any
    object with ``act(observation, info) -> int``) and return its replay."""
    from . import aec

    if len(agents) != 4:
        raise ValueError(f"need 4 agents (one per seat), got {len(agents)}")
    rec = ReplayRecorder(aec.env(**dict(config or {})))
    rec.reset(seed=seed, options=options)
    for i, ag in enumerate(agents):
        if hasattr(ag, "reset"):
            ag.reset(None if seed is None else seed * 4 + i)
    for name in rec.agent_iter():
        obs, _, term, trunc, info = rec.last()
        if term or trunc:
            rec.step(None)
            continue
        rec.step(agents[aec.AGENTS.index(name)].act(obs, info))
    m = {"agents": [getattr(a, "name", type(a).__name__) for a in agents], **(meta or {})}
    return rec.replay(meta=m)
