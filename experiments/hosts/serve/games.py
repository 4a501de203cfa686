"""Games of the protocol host: participants (agent specs or ``remote`` clients) seated by
the duplicate scheduler (``experiments.evaluation.duplicate``), results and the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.protocol_seat import MAX_TIMEOUTS, ProtocolTable, RemoteSeat
from agents.protocol_server import ProtocolServer
from agents.registry import make_agent
from experiments.evaluation.duplicate import (
    derive_seed,
    game_config,
    pair_games,
    play_game,
    seat_of,
)

REMOTE = "remote"


def check_duplicate(specs: list[str], duplicate: bool, trust_remote: bool) -> None:
    """Refuse duplicate games with remote seats unless the operator trusts the clients: after
    the first game of a pair every card is public, and the same client replays that deal."""
    if duplicate and REMOTE in specs and not trust_remote:
        raise ValueError(
            "--duplicate with remote seats lets a client replay a deal it has seen in full; "
            "pass --trust-remote if the remote clients are trusted (docs/security.md)"
        )


def run_games(
    specs: list[str],
    server: ProtocolServer | None,
    games: int,
    seed: int = 0,
    mode: str = "deal",
    duplicate: bool = False,
    config: dict | None = None,
    timeout: float = 30.0,
    fallback: str = "heuristic",
    out: Path | None = None,
    save_replays: bool = False,
    trust_remote: bool = False,
    max_timeouts: int = MAX_TIMEOUTS,
) -> list[dict[str, Any]]:
    """Play ``games`` games; returns (and, with ``out``, writes) one row per game."""
    check_duplicate(specs, duplicate, trust_remote)
    cfg = game_config(mode, **(config or {}))
    links = server.links if server is not None else {}
    table = ProtocolTable(links, timeout, fallback, max_timeouts)
    rows = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    schedule = pair_games(seed, (games + 1) // 2 if duplicate else games, duplicate)
    for i, (pair, swap, game_seed) in zip(range(games), schedule, strict=False):
        seats = {p: seat_of(p, swap) for p in range(4)}
        table.start_game(seats)
        by_seat: list[Any] = [None] * 4
        for p, spec in enumerate(specs):
            if spec == REMOTE:
                fb = make_agent(fallback, derive_seed(seed, pair, p, 7))
                by_seat[seats[p]] = RemoteSeat(table, p, fb)
            else:
                by_seat[seats[p]] = make_agent(spec, derive_seed(seed, pair, p))
        replay = out / "replays" / f"game_{i:05d}.json" if (out and save_replays) else None
        rec = play_game(
            by_seat,
            game_seed,
            cfg,
            agent_seed=derive_seed(game_seed, swap),
            replay_path=replay,
            observer=table,
        )
        table.broadcast(
            {"type": "notify", "stage": "gameOver", "curTimes": i + 1, "settingTimes": games}
        )
        row = {
            "game": i,
            "pair": pair,
            "swap": swap,
            "seed": game_seed,
            "seats": [specs[p] for p in sorted(seats, key=seats.get)],
            "participant_seat": [seats[p] for p in range(4)],
            "record": rec,
            "faults": table.faults,
        }
        rows.append(row)
        if out is not None:
            with open(out / "results.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")
    wins, draws = [0] * 4, [0] * 4
    for row in rows:
        for p in range(4):
            team = row["participant_seat"][p] % 2
            rec = row["record"]
            if rec["mode"] == "match":
                if rec["match_winner"] is None:
                    draws[p] += 1
                else:
                    wins[p] += int(rec["match_winner"] == team)
            else:
                g = rec["team_gain"][team]
                wins[p] += int(g > 0)
                draws[p] += int(g == 0)
    result = {"type": "notify", "stage": "gameResult", "victoryNum": wins, "draws": draws}
    for link in links.values():
        link.send(result)
    if out is not None:
        summary = {
            "specs": specs,
            "games": games,
            "victoryNum": wins,
            "draws": draws,
            "gain": [
                sum(r["record"]["team_gain"][r["participant_seat"][p] % 2] for r in rows)
                for p in range(4)
            ],
            "faults": sum(len(r["faults"]) for r in rows),
        }
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return rows
