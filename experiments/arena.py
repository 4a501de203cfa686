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

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import make_agent
from guandan_env.envs.aec import AGENTS, raw_env
from guandan_env.envs.replay import ReplayRecorder

from .ratings import matchup_stats

AgentLike = Agent | str


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
    (``guandan_env.envs.replay``; ``python -m experiments.replay FILE`` shows it).
    ``observer`` (optional) watches the table: ``before_act(env)`` before every decision and
    ``after_step(env, seat, action, hands_before)`` after it (``hands_before``: the four
    hands before the move); the protocol server (``experiments.serve``) uses it.

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
    between ``act`` calls). Returns the matchup statistics of ``experiments.ratings.matchup_stats``:
    ``dup_win_rate``, ``deal_win_rate``, ``mean_gain`` (per deal) with 95% bootstrap
    intervals (``*_ci``), ``match_win_rate`` in match mode, and counts.
    """

    if n_pairs < 1:
        raise ValueError(f"n_pairs must be >= 1, got {n_pairs}")
    cfg = game_config(mode, **(config or {}))
    a0, a1 = _as_agents(agent, seed)
    b0, b1 = _as_agents(opponent, seed + 2)
    pairs = range(n_pairs)
    if progress:
        from tqdm import tqdm

        pairs = tqdm(pairs, desc="evaluate", unit="pair")
    sides: list[tuple[dict, dict]] = []
    for k in pairs:
        s = pair_seed(seed, k)
        views = []
        for swap in (0, 1):
            seats = _seat_list(swap, a0, a1, b0, b1)
            rec = play_game(seats, s, cfg, options, agent_seed=derive_seed(s, swap))
            views.append(team_view(rec, swap))
        sides.append((views[0], views[1]))
    return matchup_stats(sides, seed=seed)


def _seat_list(swap: int, a0: Agent, a1: Agent, b0: Agent, b1: Agent) -> list[Agent]:
    return [a0, b0, a1, b1] if swap == 0 else [b0, a0, b1, a1]
