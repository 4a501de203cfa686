"""Duplicate-deal round-robin tournaments between agents, with ratings.

    python -m experiments.tournament heuristic random --pairs 1000 --out results/h_vs_r

Every pair of agents given on the command line meets in ``--pairs`` duplicate pairs (see
``experiments.arena``: each seed is played twice with the teams swapping seats). All
matchups use the same seeds, so they play the same deals. ``--mode deal`` plays single deals
(``--random-levels``/``--random-tribute`` or given ``--levels``/``--leveling-team``/
``--previous-order``); ``--mode match`` plays whole matches (2 → passing A, ``--max-deals``
caps them).

Outputs in ``--out``: ``results.jsonl`` (one line per finished game, appended as games
finish), ``run.json`` (the arguments that fix the games), ``summary.json``/``summary.csv``
(per matchup: duplicate win rate, deal win rate, mean level gain per deal, match win rate,
with 95% bootstrap intervals over pairs), ``ratings.csv`` (Bradley–Terry, Elo scale, 95%
intervals), ``ratings.png``, ``level_gain_hist.png``, and ``timing.json`` (throughput).

Resumable: rerunning the same command skips the games already in ``results.jsonl`` (a
larger ``--pairs`` extends a run). Games run in ``--workers`` processes, or as Ray tasks on
an existing cluster with ``--address`` (``--address local`` starts a local Ray instance).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

from guandan_env.scenario import check_options

from .arena import derive_seed, evaluate, game_config, pair_seed, play_game, team_view
from .ratings import elo_table, matchup_stats

__all__ = ["evaluate", "play_game", "run_tournament", "summarise", "format_tables", "main"]

RUN_KEYS = ("agents", "seed", "mode", "config", "options")  # what fixes the games of a run
_AGENT_CACHE: dict[tuple, Any] = {}


# ---------------------------------------------------------------------------- the games
def game_id(a: str, b: str, pair: int, swap: int) -> str:
    return f"{a}|{b}|{pair}|{swap}"


def schedule(agents: list[str], pairs: int, seed: int) -> list[dict[str, Any]]:
    """Every game of the round robin, in a fixed order: ``id``, matchup, pair, swap, seed,
    and the spec sitting at each seat (swap 0: A on seats 0/2; swap 1: A on seats 1/3)."""
    games = []
    for ia, ib in combinations(range(len(agents)), 2):
        a, b = agents[ia], agents[ib]
        for k in range(pairs):
            for swap in (0, 1):
                seats = [a, b, a, b] if swap == 0 else [b, a, b, a]
                games.append(
                    {
                        "id": game_id(a, b, k, swap),
                        "a": a,
                        "b": b,
                        "pair": k,
                        "swap": swap,
                        "seed": pair_seed(seed, k),
                        "seats": seats,
                    }
                )
    return games


def _agent(spec: str, seat: int):
    """Per-process agent instances, one per (spec, seat), built once: a checkpoint loads
    once per policy file version (``checkpoint:runs/x`` names the run's newest checkpoint,
    so a long-lived process reloads when a newer one appears or the file is rewritten)."""
    from agents.registry import CHECKPOINT_PREFIX, make_agent

    key: tuple = (spec, seat)
    if spec.startswith(CHECKPOINT_PREFIX):
        from agents.checkpoint import resolve_policy

        policy = resolve_policy(spec[len(CHECKPOINT_PREFIX) :])
        key = (spec, seat, str(policy.resolve()), policy.stat().st_mtime_ns)
    if key not in _AGENT_CACHE:
        for old in [k for k in _AGENT_CACHE if k[:2] == (spec, seat)]:
            del _AGENT_CACHE[old]  # an older version of this checkpoint
        _AGENT_CACHE[key] = make_agent(spec, seed=seat)
    return _AGENT_CACHE[key]


def run_chunk(games: list[dict], config: dict, options: dict | None) -> list[dict]:
    """Play a list of scheduled games (in a worker process or Ray task)."""
    out = []
    for g in games:
        t = time.perf_counter()
        agents = [_agent(spec, seat) for seat, spec in enumerate(g["seats"])]
        rec = play_game(
            agents,
            g["seed"],
            config,
            options,
            agent_seed=derive_seed(g["seed"], g["swap"]),
            replay_path=g.get("replay_path"),
        )
        out.append(
            {
                "id": g["id"],
                "a": g["a"],
                "b": g["b"],
                "pair": g["pair"],
                "swap": g["swap"],
                "record": rec,
                "seconds": round(time.perf_counter() - t, 4),
            }
        )
    return out


def _chunks(games: list[dict], size: int) -> list[list[dict]]:
    return [games[i : i + size] for i in range(0, len(games), size)]


def _run_local(chunks, config, options, workers: int) -> Iterator[list[dict]]:
    if workers <= 1:
        for c in chunks:
            yield run_chunk(c, config, options)
        return
    import multiprocessing as mp

    ctx = mp.get_context("spawn")  # safe when the caller holds threads (torch, Ray)
    with ctx.Pool(workers, initializer=_die_with_parent) as pool:
        jobs = [(c, config, options) for c in chunks]
        yield from pool.imap_unordered(_run_chunk_star, jobs)


def _die_with_parent() -> None:
    """Linux: the worker gets SIGKILL when its parent dies (even by ``kill -9``), so no
    worker outlives an interrupted tournament; elsewhere a no-op."""
    import ctypes
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _run_chunk_star(args: tuple) -> list[dict]:
    return run_chunk(*args)


def _run_ray(chunks, config, options, address: str, workers: int) -> Iterator[list[dict]]:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    remote = ray.remote(run_chunk)
    todo = list(chunks)
    inflight = max(2, 4 * int(ray.cluster_resources().get("CPU", workers)))
    pending = [remote.remote(c, config, options) for c in todo[:inflight]]
    todo = todo[inflight:]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])
        if todo:
            pending.append(remote.remote(todo.pop(0), config, options))


# ---------------------------------------------------------------------------- results file
def read_results(path: Path, games: list[dict] | None = None) -> dict[str, dict]:
    """Finished games by id; a torn last line (interrupted write) is ignored. With the run's
    ``games`` (``schedule``), a row counts only if it is one of them, played from the same
    seed by the same agents; other lines (another run's rows, stray JSON) are reported on
    stderr and skipped, never counted."""
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    want = {g["id"]: g for g in games} if games is not None else None
    foreign: list[int] = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not _is_row(row) or (want is not None and not _belongs(row, want.get(row["id"]))):
                foreign.append(number)
                continue
            done[row["id"]] = row
    if foreign:
        print(
            f"warning: {path}: skipped {len(foreign)} line(s) that are not games of this run "
            f"(another seed or agents, or not a result row): lines {foreign[:10]}"
            f"{' …' if len(foreign) > 10 else ''}",
            file=sys.stderr,
        )
    return done


def _is_row(row: Any) -> bool:
    return (
        isinstance(row, dict)
        and isinstance(row.get("id"), str)
        and isinstance(row.get("record"), dict)
        and isinstance(row["record"].get("deals"), list)
    )


def _belongs(row: dict, game: dict | None) -> bool:
    """The row is the scheduled ``game``: same id, agents, pair, swap and seed."""
    return (
        game is not None
        and row.get("a") == game["a"]
        and row.get("b") == game["b"]
        and row.get("pair") == game["pair"]
        and row.get("swap") == game["swap"]
        and row["record"].get("seed") == game["seed"]
    )


def _repair_tail(path: Path) -> None:
    """Drop a partial last line so appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with path.open("r+b") as f:
        f.truncate(cut)


def _check_run(out: Path, run: dict) -> None:
    """Write ``run.json``, or refuse if the directory holds games of a different run (a
    ``run.json`` without any finished game is simply replaced)."""
    path = out / "run.json"
    if path.exists() and read_results(out / "results.jsonl"):
        old = json.loads(path.read_text(encoding="utf-8"))
        diff = [k for k in RUN_KEYS if old.get(k) != run.get(k)]
        if diff:
            raise ValueError(
                f"{out} holds a run with different {', '.join(diff)} ({path}); use a new --out "
                "directory (or delete it) to start a different tournament"
            )
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


# ---------------------------------------------------------------------------- summary
def summarise(run: dict, results: dict[str, dict]) -> dict[str, Any]:
    """Per-matchup statistics and ratings from finished games (deterministic in the ids)."""
    agents, pairs, seed = run["agents"], run["pairs"], run["seed"]
    matchups, outcomes = [], []
    for ia, ib in combinations(range(len(agents)), 2):
        a, b = agents[ia], agents[ib]
        sides = []
        for k in range(pairs):
            g0, g1 = results.get(game_id(a, b, k, 0)), results.get(game_id(a, b, k, 1))
            if g0 is None or g1 is None:
                continue
            s0, s1 = team_view(g0["record"], 0), team_view(g1["record"], 1)
            sides.append((s0, s1))
        if not sides:
            continue
        stats = matchup_stats(sides, seed=seed)
        matchups.append({"a": a, "b": b, **stats, "pair_gains": _pair_gains(sides)})
        from .ratings import pair_score

        outcomes += [(ia, ib, pair_score(s0, s1)) for s0, s1 in sides]
    ratings = elo_table(agents, outcomes) if outcomes else []
    return {"run": run, "matchups": matchups, "ratings": ratings}


def _pair_gains(sides) -> list[float]:
    """A's level gain per deal in each pair (for the histogram)."""
    return [(a["gain"] + b["gain"]) / max(1, a["deals"] + b["deals"]) for a, b in sides]


def _fmt_ci(x: float, ci: list[float], pct: bool = False) -> str:
    if pct:
        return f"{100 * x:5.1f}% [{100 * ci[0]:5.1f}, {100 * ci[1]:5.1f}]"
    return f"{x:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"


def format_tables(summary: dict[str, Any]) -> str:
    """Readable matchup and rating tables for the terminal."""
    match_mode = summary["run"]["mode"] == "match"
    head = ["A", "B", "pairs", "dup win (ties ½)", "ties", "deal win", "gain/deal (A)"]
    if match_mode:
        head.append("match win")
    rows = []
    for m in summary["matchups"]:
        row = [
            m["a"],
            m["b"],
            str(m["pairs"]),
            _fmt_ci(m["dup_win_rate"], m["dup_win_rate_ci"], pct=True),
            str(m["dup_ties"]),
            _fmt_ci(m["deal_win_rate"], m["deal_win_rate_ci"], pct=True),
            _fmt_ci(m["mean_gain"], m["mean_gain_ci"]),
        ]
        if match_mode:
            row.append(_fmt_ci(m["match_win_rate"], m["match_win_rate_ci"], pct=True))
        rows.append(row)
    out = [_table(head, rows)]
    rrows = [
        [
            r["agent"],
            f"{r['rating']:.0f}",
            f"[{r['rating_ci'][0]:.0f}, {r['rating_ci'][1]:.0f}]",
            str(r["comparisons"]),
        ]
        for r in summary["ratings"]
    ]
    out.append(_table(["agent", "Elo", "95% interval", "pairs"], rrows))
    return "\n\n".join(out)


def _table(head: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)
    ]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
    sep = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join([line, sep, *body])


def write_outputs(out: Path, summary: dict[str, Any], plots: bool = True) -> None:
    """summary.json, summary.csv, ratings.csv and (optionally) the two PNG plots."""
    import csv

    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    cols = [
        "a",
        "b",
        "pairs",
        "games",
        "deals",
        "dup_wins",
        "dup_ties",
        "dup_losses",
        "dup_win_rate",
        "dup_win_rate_ci",
        "deal_win_rate",
        "deal_win_rate_ci",
        "mean_gain",
        "mean_gain_ci",
        "match_win_rate",
        "match_win_rate_ci",
    ]
    with (out / "summary.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(_flat_head(cols))
        for m in summary["matchups"]:
            w.writerow(_flat_row(m, cols))
    with (out / "ratings.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["agent", "rating", "rating_low", "rating_high", "se", "comparisons"])
        for r in summary["ratings"]:
            lo, hi = r["rating_ci"]
            w.writerow(
                [
                    r["agent"],
                    f"{r['rating']:.1f}",
                    f"{lo:.1f}",
                    f"{hi:.1f}",
                    f"{r['se']:.1f}",
                    r["comparisons"],
                ]
            )
    if plots:
        _plots(out, summary)


def _flat_head(cols: list[str]) -> list[str]:
    head = []
    for c in cols:
        head += [c + "_low", c + "_high"] if c.endswith("_ci") else [c]
    return head


def _flat_row(m: dict, cols: list[str]) -> list:
    row: list = []
    for c in cols:
        v = m.get(c)
        if c.endswith("_ci"):
            row += [f"{x:.6g}" for x in v] if v is not None else ["", ""]
        elif isinstance(v, float):
            row.append(f"{v:.6g}")
        else:
            row.append("" if v is None else v)
    return row


def _plots(out: Path, summary: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratings = summary["ratings"]
    fig, ax = plt.subplots(figsize=(6, 1.6 + 0.45 * max(1, len(ratings))))
    ys = list(range(len(ratings)))[::-1]
    xs = [r["rating"] for r in ratings]
    err = [
        [r["rating"] - r["rating_ci"][0] for r in ratings],
        [r["rating_ci"][1] - r["rating"] for r in ratings],
    ]
    ax.errorbar(xs, ys, xerr=err, fmt="o", capsize=4)
    ax.set_yticks(ys, [r["agent"] for r in ratings])
    ax.set_xlabel("Bradley–Terry rating (Elo scale, 95% interval)")
    ax.set_title("Ratings from duplicate pairs")
    fig.tight_layout()
    fig.savefig(out / "ratings.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    bins = [x / 4 - 0.125 for x in range(-13, 14)]
    for m in summary["matchups"]:
        ax.hist(
            m["pair_gains"],
            bins=bins,
            histtype="step",
            linewidth=1.5,
            label=f"{m['a']} vs {m['b']} (mean {m['mean_gain']:+.2f})",
        )
    ax.set_xlabel("A's level gain per deal, per duplicate pair")
    ax.set_ylabel("pairs")
    ax.set_title("Level gain over duplicate pairs")
    if summary["matchups"]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "level_gain_hist.png", dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------- driver
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

    ``save_replays`` also writes every game as a JSON replay under ``out/replays/``.

    ``max_games`` stops after that many new games (for tests of interrupted runs). With
    ``workers > 1`` the games run in spawned processes, so a script calling this must do so
    under ``if __name__ == "__main__":``.
    """
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
    run = {
        "agents": agents,
        "pairs": pairs,
        "seed": seed,
        "mode": mode,
        "config": cfg,
        "options": opts,
    }
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _check_run(out, run)
    path = out / "results.jsonl"
    _repair_tail(path)
    games = schedule(agents, pairs, seed)
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
    if address:
        stream = _run_ray(chunks, cfg, opts or None, address, workers)
    else:
        stream = _run_local(chunks, cfg, opts or None, workers)
    t0, new_deals, new_games = time.perf_counter(), 0, 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(games), initial=already, unit="game", desc="tournament")
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
    timing = {
        "new_games": new_games,
        "new_deals": new_deals,
        "seconds": round(elapsed, 3),
        "deals_per_s": round(new_deals / elapsed, 2) if elapsed > 0 and new_deals else None,
        "workers": workers,
        "address": address,
    }
    (out / "timing.json").write_text(json.dumps(timing, indent=2) + "\n", encoding="utf-8")
    summary = summarise(run, done)
    write_outputs(out, summary, plots=plots)
    summary["timing"] = timing
    return summary


def _csv_list(text: str | None) -> list[str] | None:
    return None if text is None else [x.strip() for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.tournament",
        description="Duplicate-deal round-robin tournament between agents, with ratings.",
    )
    p.add_argument("agents", nargs="+", help="agent specs: random, heuristic, checkpoint:PATH …")
    p.add_argument("--pairs", type=int, default=100, help="duplicate pairs per matchup")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mode", choices=("deal", "match"), default="deal")
    p.add_argument("--random-levels", action="store_true", help="deal mode: draw team levels")
    p.add_argument(
        "--random-tribute",
        action="store_true",
        help="deal mode: draw a previous finishing order (tribute, resistance)",
    )
    p.add_argument("--levels", help="team 0's and team 1's level, e.g. 5,A (applied to seats)")
    p.add_argument("--leveling-team", type=int, choices=(0, 1))
    p.add_argument("--previous-order", help="previous deal's finishing order, e.g. 0,2,1,3")
    p.add_argument("--max-deals", type=int, help="match mode: cap on deals per match (draw)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (1: in-process)")
    p.add_argument(
        "--address", help="run games as Ray tasks on this cluster ('local' to start one)"
    )
    p.add_argument("--out", help="output directory (default results/<name>)")
    p.add_argument("--name", default="tournament", help="run name for the default --out")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument(
        "--save-replays", action="store_true", help="also save every game as a JSON replay"
    )
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    options: dict[str, Any] = {}
    if args.levels:
        options["levels"] = _csv_list(args.levels)
    if args.leveling_team is not None:
        options["leveling_team"] = args.leveling_team
    config = {
        "random_levels": args.random_levels or None,
        "random_tribute": args.random_tribute or None,
        "max_deals": args.max_deals,
    }
    out = args.out or f"results/{args.name}"
    try:
        if args.previous_order:
            order = _csv_list(args.previous_order)
            if not all(x.isdigit() for x in order):
                raise ValueError(f"--previous-order must be four seats like 0,2,1,3, got {order}")
            options["previous_order"] = [int(x) for x in order]
        summary = run_tournament(
            args.agents,
            pairs=args.pairs,
            seed=args.seed,
            mode=args.mode,
            out=out,
            workers=args.workers,
            address=args.address,
            config=config,
            options=options,
            plots=not args.no_plots,
            progress=not args.no_progress,
            save_replays=args.save_replays,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: finished games are saved in {out}/results.jsonl; run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return 130
    print(format_tables(summary))
    t = summary["timing"]
    if t["deals_per_s"]:
        print(f"\n{t['new_deals']} deals in {t['seconds']:.1f} s: {t['deals_per_s']} deals/s")
    print(f"outputs in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
