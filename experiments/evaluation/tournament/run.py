"""``run_tournament``: check the request, resume or start the run, play what is left with a
progress bar, then write the summary, ratings and plots."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

from guandan_env.envs.scenario import check_options

from ..duplicate import game_config
from .games import _chunks, _run_local, _run_ray, schedule
from .report import summarise, write_outputs
from .results import RUN_KEYS, _check_run, _repair_tail, read_results

RESULTS_ROOT = Path("results/tournament")  # where runs without ``out`` go


def run_tournament(
    agents: list[str],
    pairs: int = 100,
    seed: int = 0,
    mode: str = "deal",
    out: str | Path | None = None,
    workers: int = 2,
    address: str | None = None,
    config: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    chunk_size: int = 2,
    plots: bool = True,
    progress: bool = True,
    max_games: int | None = None,
    save_replays: bool = False,
    matchups: list[list[str]] | None = None,
) -> dict[str, Any]:
    """Run (or resume) a tournament and write its outputs; returns the summary.

    The games are fixed by ``agents``, ``pairs``, ``seed``, ``mode``, ``config`` (env config
    keys) and ``options`` (reset options); ``out`` holds the run (default: ``default_out``,
    a folder named after those, so two different runs never share one and the same request
    resumes its own). ``workers``/``address``
    say where games run, ``chunk_size`` how many a task plays. ``save_replays`` also writes
    every game as a JSON replay under ``out/replays/``. ``max_games`` stops after that many
    new games (for tests of interrupted runs). With ``workers > 1`` the games run in spawned
    processes, so a script calling this must do so under ``if __name__ == "__main__":``.
    ``matchups`` (``[[a, b], …]``, each in the agents' order) plays only those instead of the
    whole round robin (the evaluation suite: one entrant against its opponents).
    """
    _check_placement(agents, workers, address)
    run = make_run(agents, pairs, seed, mode, config, options, matchups)
    out = default_out(run) if out is None else Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _check_run(out, run)
    path = out / "results.jsonl"
    _repair_tail(path)
    games = schedule(run["agents"], pairs, seed, run.get("matchups"))
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
    summary["out"] = str(out)
    return summary


def _check_placement(agents: list[str], workers: int, address: str | None) -> None:
    """Agents that live in this process (``remote:PORT`` serves its clients here) can't
    play in worker processes or on a cluster."""
    from agents.registry import split_spec

    here = [a for a in agents if split_spec(a)[0].in_process]
    if here and (workers > 1 or address):
        raise ValueError(
            f"{', '.join(here)} must play in this process: use --workers 1 and no --address"
        )


def default_out(run: dict[str, Any], root: str | Path = RESULTS_ROOT) -> Path:
    """The default folder of a run: ``root/<agents>-<mode>-<hash>``, the hash (8 hex digits)
    over what fixes its games (``RUN_KEYS``: agents, seed, mode, env config, options). The
    number of pairs is left out, so a larger ``--pairs`` extends the same run."""
    fixed = {k: run[k] for k in RUN_KEYS if k in run}
    digest = hashlib.sha256(json.dumps(fixed, sort_keys=True).encode()).hexdigest()[:8]
    names = "_".join(re.sub(r"[^A-Za-z0-9.=]+", "-", a).strip("-") for a in run["agents"])
    if len(names) > 80:
        names = names[:80].rstrip("-_")
    return Path(root) / f"{names}-{run['mode']}-{digest}"


def make_run(
    agents: list[str],
    pairs: int,
    seed: int,
    mode: str,
    config: dict[str, Any] | None,
    options: dict[str, Any] | None,
    matchups: list[list[str]] | None = None,
) -> dict[str, Any]:
    """The run record (``run.json``) of a request, after checking it: every agent spec
    loads, the env config and options are valid. Raises ``ValueError`` before anything is
    written."""
    run = run_record(agents, pairs, seed, mode, config, options, matchups)
    from agents.registry import make_agent

    for spec in run["agents"]:  # fail early, in the main process, on a bad spec
        make_agent(spec, seed=0)
    check_options(run["options"])  # before run.json: a refused run leaves nothing behind
    return run


def run_record(
    agents: list[str],
    pairs: int,
    seed: int,
    mode: str,
    config: dict[str, Any] | None,
    options: dict[str, Any] | None,
    matchups: list[list[str]] | None = None,
) -> dict[str, Any]:
    """The run record of a request, its shape checked but its agents not built (what
    ``default_out`` names)."""
    agents = [a.strip() for a in agents]
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {agents}")
    if len(set(agents)) != len(agents):
        raise ValueError(f"agent specs must be distinct, got {agents}")
    if pairs < 1:
        raise ValueError(f"--pairs must be >= 1, got {pairs}")
    record = {
        "agents": agents,
        "pairs": pairs,
        "seed": seed,
        "mode": mode,
        "config": game_config(mode, **(config or {})),
        "options": dict(options or {}),
    }
    if matchups is not None:
        record["matchups"] = _check_matchups(agents, matchups)
    return record


def _check_matchups(agents: list[str], matchups: list[list[str]]) -> list[list[str]]:
    """Each matchup two of the agents, the first listed before the second, none twice."""
    order = {a: i for i, a in enumerate(agents)}
    out: list[list[str]] = []
    for m in matchups:
        a, b = (str(x).strip() for x in m)
        if a not in order or b not in order or order[a] >= order[b]:
            raise ValueError(
                f"matchup {[a, b]}: both must be among the agents {agents}, the first listed first"
            )
        if [a, b] in out:
            raise ValueError(f"matchup {[a, b]} is listed twice")
        out.append([a, b])
    if not out:
        raise ValueError("matchups: give at least one, or none for the whole round robin")
    return out


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
