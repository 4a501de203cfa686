"""Playing games between agents: one game, a duplicate pair, and ``evaluate`` for training code.

A *game* is one episode of the AEC env: a deal in ``mode="deal"``, a whole match in
``mode="match"``. A *duplicate pair* plays the same seed twice: the deal (cards, levels,
tribute state, first leader; in match mode every deal's cards) is a function of the seed, so
both games see identical hands at identical seats, and in the second game team A sits where
team B sat. Card luck cancels in the pair's total.

Outcome of a pair for team A (``ratings.pair_score``): 1 if A's total signed level gain over the two
games is positive, 0 if negative, 0.5 for a tie (ties are also counted separately). In match
mode the pair is compared by match points first (win 1, capped draw 0.5), then by level gain.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from agents.base import Agent
from agents.registry import make_agent
from guandan_env.envs.aec import AGENTS, raw_env
from guandan_env.envs.replay import ReplayRecorder

from .ratings import matchup_stats

AgentLike = Agent | str
T = TypeVar("T")


class LazyObservation(Mapping):
    """The env's observation dict, encoded only if an agent reads ``"observation"``.

    Rule-based agents read only the mask; encoding the observation costs about as much as
    the engine step, so the game loop defers it.
    """

    def __init__(self, env: raw_env, agent: str) -> None:
        self._env, self._agent = env, agent
        mask = env.action_mask().astype(np.int8)
        self._data: dict[str, np.ndarray] = {"action_mask": mask}

    def __getitem__(self, key: str) -> np.ndarray:
        if key == "observation" and key not in self._data:
            self._data.update(self._env.observe(self._agent))
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("observation", "action_mask"))

    def __len__(self) -> int:
        return 2


def derive_seed(*parts: int) -> int:
    """A 63-bit seed from integers (stable across runs and platforms)."""
    state = np.random.SeedSequence([int(p) for p in parts]).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1])) & ((1 << 63) - 1)


def pair_seed(seed: int, pair: int) -> int:
    """Env seed of duplicate pair ``pair`` in a run seeded ``seed`` (same in every matchup)."""
    return derive_seed(seed, pair)


SWAPS = (0, 1)  # the two games of a duplicate pair


def seat_of(participant: int, swap: int) -> int:
    """The seat of ``participant`` (0..3; 0 and 2 are team A, 1 and 3 team B) in game
    ``swap`` of a pair: swap 0 seats everyone at their own number, swap 1 moves everyone one
    seat on, so each team plays the cards the other team held."""
    return (participant + swap) % 4


def seated(participants: Sequence[T], swap: int) -> list[T]:
    """``participants`` (team A, team B, team A, team B) in seat order for game ``swap``."""
    if len(participants) != 4:
        raise ValueError(f"a table seats 4 participants, got {len(participants)}")
    by_seat: list[T] = [participants[0]] * 4
    for p, x in enumerate(participants):
        by_seat[seat_of(p, swap)] = x
    return by_seat


class PairGame(NamedTuple):
    """One game of a duplicate schedule: pair ``pair``, game ``swap`` of it, its env seed."""

    pair: int
    swap: int
    seed: int


def pair_games(seed: int, pairs: int | range, duplicate: bool = True) -> Iterator[PairGame]:
    """The games of ``pairs`` duplicate pairs in order (both swaps of pair 0, then pair 1
    …), or of the pairs of a ``range``; ``duplicate=False``: one game per pair seed, no swap."""
    for pair in range(pairs) if isinstance(pairs, int) else pairs:
        for swap in SWAPS if duplicate else (0,):
            yield PairGame(pair, swap, pair_seed(seed, pair))


def play_game(
    agents_by_seat: list[Agent],
    seed: int,
    config: dict | None = None,
    options: dict | None = None,
    agent_seed: int | None = None,
    replay_path: str | Path | None = None,
    observer: Any = None,
) -> dict[str, Any]:
    """Play one game (a deal or a match, per ``config["mode"]``) and return its record.

    With ``replay_path`` the game is also saved there as a JSON replay
    (``guandan_env.envs.replay``; ``python -m experiments.hosts.replay FILE`` shows it).
    ``observer`` (optional) watches the table: ``before_act(env)`` before every decision and
    ``after_step(env, seat, action, hands_before)`` after it (``hands_before``: the four
    hands before the move); the protocol server (``experiments.hosts.serve``) uses it. Agents
    that watch the whole table bring their own observer (``table_observer``), e.g. remote
    clients (``remote:PORT``).

    ``agents_by_seat[s]`` plays seat ``s`` (seats 0, 2 are team 0). Each agent is reset with a
    seed derived from ``agent_seed`` (default: ``seed``) and its seat. The record holds
    per-deal results (winner team, gain, finishing order, double-down, deal level),
    ``team_gain`` (signed level gain summed over deals, per team), ``match_winner`` (match
    mode; None for a capped draw), and ``steps``.
    """
    if len(agents_by_seat) != 4:
        raise ValueError(
            f"agents_by_seat must list 4 agents (one per seat), got {len(agents_by_seat)}"
        )
    cfg = dict(config or {})
    cfg.setdefault("illegal_action", "raise")
    env = raw_env(**cfg)
    if replay_path is not None:
        env = ReplayRecorder(env)
    env.reset(seed=int(seed), options=options)
    for seat, agent in enumerate(agents_by_seat):
        agent.reset(seed=derive_seed(seed if agent_seed is None else agent_seed, seat))
    observer = _table_observer(agents_by_seat, observer)
    deals: list[dict[str, Any]] = []
    steps = 0
    while True:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            break
        seat = AGENTS.index(name)
        if observer is not None:
            observer.before_act(env)
        action = agents_by_seat[seat].act(LazyObservation(env, name), env.infos[name])
        hands_before = env.game.hands.copy() if observer is not None else None
        env.step(int(action))
        steps += 1
        if observer is not None:
            observer.after_step(env, seat, int(action), hands_before)
        res = env.infos[AGENTS[0]].get("deal_result")
        if res is not None:
            deals.append(
                {
                    "winner_team": int(res["winner_team"]),
                    "gain": int(res["gain"]),
                    "order": [int(s) for s in res["order"]],
                    "double_down": bool(res["double_down"]),
                    "deal_level": int(res["deal_level"]),
                }
            )
    if replay_path is not None:
        Path(replay_path).parent.mkdir(parents=True, exist_ok=True)
        env.save(replay_path, meta={"agents": [a.name for a in agents_by_seat]})
    team_gain = [0, 0]
    for d in deals:
        team_gain[d["winner_team"]] += d["gain"]
        team_gain[1 - d["winner_team"]] -= d["gain"]
    return {
        "seed": int(seed),
        "mode": cfg.get("mode", "deal"),
        "deals": deals,
        "team_gain": team_gain,
        "match_winner": env.game.match_winner if cfg.get("mode") == "match" else None,
        "steps": steps,
    }


class _Observers:
    """Several observers as one (``play_game``'s hooks call each in turn)."""

    def __init__(self, observers: list[Any]) -> None:
        self.observers = observers

    def before_act(self, env) -> None:
        for o in self.observers:
            o.before_act(env)

    def after_step(self, env, seat: int, action: int, hands_before) -> None:
        for o in self.observers:
            o.after_step(env, seat, action, hands_before)


def _table_observer(agents_by_seat: list[Agent], observer: Any) -> Any:
    """``observer`` plus the tables that agents watch: an agent with a ``table_observer``
    (a remote client must be told of every move, ``agents.protocol_seat``) has it joined to
    this game (``join_game(agents_by_seat)``) unless it is ``observer`` already."""
    found = [] if observer is None else [observer]
    for agent in agents_by_seat:
        table = getattr(agent, "table_observer", None)
        if table is not None and all(table is not o for o in found):
            table.join_game(agents_by_seat)
            found.append(table)
    if len(found) <= 1:
        return found[0] if found else None
    return _Observers(found)


def team_view(record: dict[str, Any], team_a: int) -> dict[str, Any]:
    """A game record from team A's side: signed gain, deals won, match points."""
    deals = record["deals"]
    won = sum(1 for d in deals if d["winner_team"] == team_a)
    mw = record.get("match_winner")
    if record.get("mode") == "match":
        match_points = 0.5 if mw is None else float(mw == team_a)
    else:
        match_points = None
    return {
        "gain": int(record["team_gain"][team_a]),
        "deals": len(deals),
        "deals_won": won,
        "match_points": match_points,
    }


def _as_agents(x: AgentLike, seed: int) -> tuple[Agent, Agent]:
    """Two seat instances for a spec; an Agent instance plays both of its team's seats."""
    if isinstance(x, str):
        return make_agent(x, seed), make_agent(x, seed + 1)
    if not isinstance(x, Agent):
        raise ValueError(f"expected an agent spec string or an Agent, got {type(x).__name__}")
    return x, x


def game_config(mode: str = "deal", **extra: Any) -> dict[str, Any]:
    """Env config for tournament games: ``mode`` plus env keys (random_levels, max_deals …)."""
    if mode not in ("deal", "match"):
        raise ValueError(f"mode must be 'deal' or 'match', got {mode!r}")
    cfg = {"mode": mode, **{k: v for k, v in extra.items() if v is not None}}
    if mode == "deal":
        cfg.pop("max_deals", None)
    return cfg


def evaluate(
    agent: AgentLike,
    opponent: AgentLike = "random",
    n_pairs: int = 100,
    seed: int = 0,
    mode: str = "deal",
    config: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Duplicate evaluation of ``agent`` (team A) against ``opponent`` (team B), in-process.

    ``agent``/``opponent`` are specs (``"heuristic"``, ``"checkpoint:PATH"`` …) or Agent
    instances (an instance plays both seats of its team, so it must not keep per-seat state
    between ``act`` calls). Returns the matchup statistics of
    ``experiments.evaluation.ratings.matchup_stats``:
    ``dup_win_rate``, ``deal_win_rate``, ``mean_gain`` (per deal) with 95% bootstrap
    intervals (``*_ci``), ``match_win_rate`` in match mode, and counts.
    """

    if n_pairs < 1:
        raise ValueError(f"n_pairs must be >= 1, got {n_pairs}")
    sides = play_pairs(agent, opponent, range(n_pairs), seed, mode, config, options, progress)
    return matchup_stats(sides, seed=seed)


Sides = tuple[dict[str, Any], dict[str, Any]]


def play_pairs(
    agent: AgentLike,
    opponent: AgentLike,
    pairs: range,
    seed: int = 0,
    mode: str = "deal",
    config: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    progress: bool = False,
) -> list[Sides]:
    """Team A's view of both games of each pair in ``pairs`` (what ``evaluate`` summarises).
    Every game seeds its agents from its own seed, so any split of the pairs plays the same
    games as one run over all of them."""
    cfg = game_config(mode, **(config or {}))
    a0, a1 = _as_agents(agent, seed)
    b0, b1 = _as_agents(opponent, seed + 2)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(pairs), desc="evaluate", unit="pair")
    views: list[dict] = []
    for g in pair_games(seed, pairs):
        rec = play_game(
            seated([a0, b0, a1, b1], g.swap), g.seed, cfg, options, derive_seed(g.seed, g.swap)
        )
        views.append(team_view(rec, seat_of(0, g.swap) % 2))
        if bar is not None and g.swap == SWAPS[-1]:
            bar.update(1)
    if bar is not None:
        bar.close()
    return [(views[i], views[i + 1]) for i in range(0, len(views), 2)]
