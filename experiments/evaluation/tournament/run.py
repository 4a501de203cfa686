"""``run_tournament``: check the request, resume or start the run, play what is left with a
progress bar, then write the summary, ratings and plots."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from guandan_env.envs.scenario import check_options

from ..duplicate import game_config
from .games import _chunks, _run_local, _run_ray, schedule
from .report import summarise, write_outputs
from .results import _check_run, _repair_tail, read_results


def run_tournament(
    agents: list[str],
    pairs: int = 100,
    seed: int = 0,
    mode: str = "deal",
    out: str | Path = "results/tournament",
    workers: int = 2,
    address: str | None = None,
    config: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    chunk_size: int = 2,
    plots: bool = True,
    progress: bool = True,
    max_games: int | None = None,
    save_replays: bool = False,
) -> dict[str, Any]:
    """Run (or resume) a tournament and write its outputs; returns the summary.

    The games are fixed by ``agents``, ``pairs``, ``seed``, ``mode``, ``config`` (env config
    keys) and ``options`` (reset options); ``out`` holds the run. ``workers``/``address``
    say where games run, ``chunk_size`` how many a task plays. ``save_replays`` also writes
    every game as a JSON replay under ``out/replays/``. ``max_games`` stops after that many
    new games (for tests of interrupted runs). With ``workers > 1`` the games run in spawned
    processes, so a script calling this must do so under ``if __name__ == "__main__":``.
    """
    run = make_run(agents, pairs, seed, mode, config, options)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _check_run(out, run)
    path = out / "results.jsonl"
    _repair_tail(path)
    games = schedule(run["agents"], pairs, seed)
    done = read_results(path, games)
    todo = [g for g in games if g["id"] not in done]
    already = len(games) - len(todo)
    if max_games is not None:
        todo = todo[:max_games]
    if save_replays:
        for g in todo:
            name = "".join(c if c.isalnum() or c in "-_." else "_" for c in g["id"])
            g["replay_path"] = str(out / "replays" / f"{name}.json")
    chunks = _chunks(todo, chunk_size)
    cfg, opts = run["config"], run["options"] or None
    placement: list[dict] = []  # Ray only: which node played each chunk
    if address:
        stream = _run_ray(chunks, cfg, opts, address, workers, placement)
    else:
        stream = _run_local(chunks, cfg, opts, workers)
    timing = _play(stream, path, done, len(games), already, progress)
    timing.update(workers=workers, address=address)
    if address:
        nodes: dict[str, int] = {}
        for p in placement:
            nodes[p["node"]] = nodes.get(p["node"], 0) + p["games"]
        timing.update(nodes=nodes, chunks=placement)
    (out / "timing.json").write_text(json.dumps(timing, indent=2) + "\n", encoding="utf-8")
    summary = summarise(run, done)
    write_outputs(out, summary, plots=plots)
    summary["timing"] = timing
    return summary


def make_run(
    agents: list[str],
    pairs: int,
    seed: int,
    mode: str,
    config: dict[str, Any] | None,
    options: dict[str, Any] | None,
) -> dict[str, Any]:
    """The run record (``run.json``) of a request, after checking it: every agent spec
    loads, the env config and options are valid. Raises ``ValueError`` before anything is
    written."""
    agents = [a.strip() for a in agents]
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {agents}")
    if len(set(agents)) != len(agents):
        raise ValueError(f"agent specs must be distinct, got {agents}")
    if pairs < 1:
        raise ValueError(f"--pairs must be >= 1, got {pairs}")
    from agents.registry import make_agent

    for spec in agents:  # fail early, in the main process, on a bad spec
        make_agent(spec, seed=0)
    cfg = game_config(mode, **(config or {}))
    opts = dict(options or {})
    check_options(opts)  # before run.json: a refused run leaves nothing behind
    return {
        "agents": agents,
        "pairs": pairs,
        "seed": seed,
        "mode": mode,
        "config": cfg,
        "options": opts,
    }


def _play(stream, path: Path, done: dict, total: int, already: int, progress: bool) -> dict:
    """Append every finished game to ``path`` as it arrives (and to ``done``); a progress
    bar shows games and deals per second. Returns the timing of the new games."""
    t0, new_deals, new_games = time.perf_counter(), 0, 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=already, unit="game", desc="tournament")
    with path.open("a", encoding="utf-8") as f:
        for rows in stream:
            for row in rows:
                f.write(json.dumps(row, separators=(",", ":")) + "\n")
                done[row["id"]] = row
                new_deals += len(row["record"]["deals"])
            f.flush()
            new_games += len(rows)
            if bar is not None:
                bar.update(len(rows))
                bar.set_postfix(deals_per_s=f"{new_deals / (time.perf_counter() - t0):.1f}")
    if bar is not None:
        bar.close()
    elapsed = time.perf_counter() - t0
    return {
        "new_games": new_games,
        "new_deals": new_deals,
        "seconds": round(elapsed, 3),
        "deals_per_s": round(new_deals / elapsed, 2) if elapsed > 0 and new_deals else None,
    }
