"""The games of a tournament: the schedule (every duplicate pair of every matchup), and
playing chunks of it in-process, in spawned worker processes or as Ray tasks."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from itertools import combinations
from typing import Any

from ..duplicate import derive_seed, pair_games, play_game, seated

_AGENT_CACHE: dict[tuple, Any] = {}


def game_id(a: str, b: str, pair: int, swap: int) -> str:
    return f"{a}|{b}|{pair}|{swap}"


def schedule(
    agents: list[str], pairs: int, seed: int, matchups: list[list[str]] | None = None
) -> list[dict[str, Any]]:
    """Every game of the round robin (or of the given ``matchups``, each ``[a, b]`` in the
    agents' order), in a fixed order: ``id``, matchup, pair, swap, seed, and the spec sitting
    at each seat (``duplicate.seated``: A on seats 0/2 in swap 0, on 1/3 in swap 1)."""
    games = []
    if matchups is None:
        matchups = [[agents[i], agents[j]] for i, j in combinations(range(len(agents)), 2)]
    for a, b in matchups:
        for g in pair_games(seed, pairs):
            games.append(
                {
                    "id": game_id(a, b, g.pair, g.swap),
                    "a": a,
                    "b": b,
                    "pair": g.pair,
                    "swap": g.swap,
                    "seed": g.seed,
                    "seats": seated([a, b, a, b], g.swap),
                }
            )
    return games


def _agent(spec: str, seat: int):
    """Per-process agent instances, one per (spec, seat), built once per version of the
    agent (``agents.registry.agent_identity``: a checkpoint spec names a file that may be
    rewritten, or a run's newest checkpoint, so a long-lived process rebuilds it then)."""
    from agents.registry import agent_identity, make_agent

    key = (spec, seat, agent_identity(spec))
    if key not in _AGENT_CACHE:
        for old in [k for k in _AGENT_CACHE if k[:2] == (spec, seat)]:
            del _AGENT_CACHE[old]  # an older version of this agent
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
    with ctx.Pool(workers, initializer=_die_with_parent, initargs=(os.getpid(),)) as pool:
        jobs = [(c, config, options) for c in chunks]
        yield from pool.imap_unordered(_run_chunk_star, jobs)


def _die_with_parent(parent: int | None = None) -> None:
    """Linux: the worker gets SIGKILL when its parent dies (even by ``kill -9``), so no
    worker outlives an interrupted tournament; elsewhere a no-op. A parent that died while
    the worker was starting (before the request) is caught by comparing ``parent``."""
    import ctypes
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # orphaned already: the signal will never come


def _run_chunk_star(args: tuple) -> list[dict]:
    return run_chunk(*args)


def run_chunk_on_node(games: list[dict], config: dict, options: dict | None):
    """``run_chunk`` as a Ray task: its rows and the Ray node id it ran on."""
    import ray

    return run_chunk(games, config, options), ray.get_runtime_context().get_node_id()


def _run_ray(
    chunks, config, options, address: str, workers: int, placement: list[dict] | None = None
) -> Iterator[list[dict]]:
    """Chunks as Ray tasks (1 CPU each), spread over the cluster's nodes; each finished
    chunk's first game id, size and node id are appended to ``placement``."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    remote = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(run_chunk_on_node)
    todo = list(chunks)
    inflight = max(2, 4 * int(ray.cluster_resources().get("CPU", workers)))
    pending = [remote.remote(c, config, options) for c in todo[:inflight]]
    todo = todo[inflight:]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        rows, node = ray.get(done[0])
        if placement is not None and rows:
            placement.append({"first": rows[0]["id"], "games": len(rows), "node": node})
        yield rows
        if todo:
            pending.append(remote.remote(todo.pop(0), config, options))
