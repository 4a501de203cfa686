"""Behaviour-cloning data from the rule-based ``heuristic`` agent: parallel, cached, packed.

All four seats are ``agents.heuristic.HeuristicAgent`` and every decision of every seat is
recorded (plays, passes and tribute returns; a decision with a single legal action too). Per
decision, as numpy arrays of length ``n``:

==============  ====================  ===================================================
``obs_bits``    ``uint8 (n, OBS_BYTES)``   the acting seat's observation, bits
                                      (``guandan_env.encoding.packing.pack_obs``)
``obs_scalar``  ``float32 (n,)``      its last entry (``table_bomb_power``)
``mask_bits``   ``uint8 (n, MASK_BYTES)``  legal actions (``pack_masks``)
``action``      ``int16 (n,)``        the heuristic's action id
``n_legal``     ``int16 (n,)``        number of legal actions
``ret``         ``float32 (n,)``      the deal's final reward for the acting seat as the env
                                      gives it (±1/±2/±3, R-6.3)
``deal``        ``int32 (n,)``        global deal index (group / split train and held-out by it)
``seat``        ``int8 (n,)``         acting seat (absolute, 0..3)
==============  ====================  ===================================================

Determinism. Deals are grouped in chunks of ``DEALS_PER_CHUNK``; deal ``d`` of chunk ``c``
(global index ``c * DEALS_PER_CHUNK + d``) is played from env seed
``derive_seed(seed, c, d)`` (``deal_seed``). Chunks are concatenated in chunk order and whole
deals are played until at least ``num_decisions`` decisions exist; the result is then cut to
**exactly** ``num_decisions`` rows, so the last deal may keep only a prefix of its decisions
(its ``ret`` is still the outcome of the whole deal, which was played to the end). The data is
therefore identical for any number of workers (extra chunks computed ahead are discarded).

Parallelism: ``workers == 1`` runs in-process; ``workers > 1`` runs chunks as Ray tasks
(``num_cpus=1``), each returning its chunk's packed arrays. A running Ray session is reused;
otherwise a local one is started quietly and shut down again before returning.

Cache: with ``cache_dir`` the arrays are stored in ``cache_dir/bc-<key>.npz`` (``cache_key``:
a hash of the request, the env config, the heuristic's parameters, the observation and action
sizes and ``DATA_VERSION``) and loaded from there on the next identical request. The file
is the shared decision format (``guandan_env.envs.dataset``, kind ``"bc"``: the core columns
above plus ``n_legal``, ``ret``, ``deal``); ``load`` also reads a recorded-games dataset
(``python -m experiments.dataset``, ``docs/datasets.md``) as BC arrays.

CLI: ``python -m experiments.selfplay.warm_start.data --decisions 20000 --workers 2 --seed 0
--cache-dir runs/cache``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.heuristic import HeuristicAgent, HeuristicParams
from experiments.evaluation.duplicate import derive_seed
from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.observation import OBS_DIM
from guandan_env.encoding.packing import pack_masks, pack_obs
from guandan_env.envs import dataset as dataset_format
from guandan_env.envs.aec import AGENTS, raw_env
from guandan_env.envs.scenario import check_config

DATA_VERSION = 1  # bump when the recorded content or the seeding scheme changes
DEALS_PER_CHUNK = 8  # part of the seeding scheme: changing it changes the data
DEFAULT_GAME: dict[str, Any] = dict(
    mode="deal", random_levels=True, random_tribute=True, info_view=True
)
# the shared decision format's core columns (guandan_env.envs.dataset) and the BC targets
FIELDS: dataset_format.Fields = {
    **dataset_format.CORE_FIELDS,
    "n_legal": (np.dtype(np.int16), ()),
    "ret": (np.dtype(np.float32), ()),
    "deal": (np.dtype(np.int32), ()),
}
_EST_DECISIONS_PER_DEAL = 75.0  # first guess for scheduling only (measured ~74)


# ---------------------------------------------------------------------------- config / keys
def game_config(game: dict | None = None) -> dict[str, Any]:
    """The full env config of the data: ``DEFAULT_GAME`` with ``game``'s keys over it, merged
    over the env defaults. Raises ``ValueError`` for unknown keys or values the data cannot
    use (``mode`` must be ``"deal"``; the heuristic needs ``info_view=True``)."""
    cfg = check_config({**DEFAULT_GAME, **dict(game or {})})
    if cfg["mode"] != "deal":
        raise ValueError(
            f"BC data plays single deals: game mode must be 'deal', got {cfg['mode']!r}"
        )
    if not cfg["info_view"]:
        raise ValueError("the heuristic agent needs info['view']: game info_view must be True")
    cfg["illegal_action"] = "raise"
    cfg["render_mode"] = None
    return cfg


def cache_key(
    num_decisions: int, seed: int, game: dict | None = None, params: HeuristicParams | None = None
) -> str:
    """Short hash naming the cached data of a request (``bc-<key>.npz``)."""
    spec = {
        "num_decisions": int(num_decisions),
        "seed": int(seed),
        "game": game_config(game),
        "heuristic": dataclasses.asdict(params or HeuristicParams()),
        "obs_dim": OBS_DIM,
        "num_actions": NUM_ACTIONS,
        "deals_per_chunk": DEALS_PER_CHUNK,
        "version": DATA_VERSION,
    }
    text = json.dumps(spec, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def deal_seed(seed: int, deal: int) -> int:
    """Env seed of global deal index ``deal`` in data seeded ``seed`` (to replay a deal)."""
    chunk, d = divmod(int(deal), DEALS_PER_CHUNK)
    return derive_seed(seed, chunk, d)


def empty_arrays() -> dict[str, np.ndarray]:
    """Zero-length arrays of every field."""
    return {k: np.zeros((0, *shape), dtype=dt) for k, (dt, shape) in FIELDS.items()}


# ---------------------------------------------------------------------------- one chunk
def play_deal(
    env: raw_env, agents: list[HeuristicAgent], env_seed: int
) -> tuple[np.ndarray, np.ndarray, list[int], list[int], np.ndarray]:
    """Play one deal with ``agents``; ``(obs float32 (k, OBS_DIM), mask int8 (k, NUM_ACTIONS),
    actions, seats, rewards float32 (4,))`` of its ``k`` decisions."""
    env.reset(seed=env_seed)
    for s, agent in enumerate(agents):
        agent.reset(seed=derive_seed(env_seed, s))
    obs_rows: list[np.ndarray] = []
    mask_rows: list[np.ndarray] = []
    actions: list[int] = []
    seats: list[int] = []
    while True:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            break
        seat = AGENTS.index(name)
        ob = env.observe(name)  # encoded once: the agent and the record share it
        a = int(agents[seat].act(ob, env.infos[name]))
        obs_rows.append(ob["observation"])
        mask_rows.append(ob["action_mask"])
        actions.append(a)
        seats.append(seat)
        env.step(a)
    if not all(env.terminations.values()):
        raise RuntimeError("the deal ended without a termination (truncated?)")
    rewards = np.array([env.rewards[ag] for ag in AGENTS], dtype=np.float32)
    return np.stack(obs_rows), np.stack(mask_rows), actions, seats, rewards


def run_chunk(
    seed: int,
    chunk: int,
    config: dict[str, Any],
    params: HeuristicParams | None = None,
    stop_after: int | None = None,
) -> dict[str, np.ndarray]:
    """Packed arrays of chunk ``chunk``'s ``DEALS_PER_CHUNK`` deals, in play order.

    ``stop_after``: stop after the deal that brings the count to at least this many decisions
    (the result is a prefix of the full chunk's). Python's cyclic garbage collector is
    paused while the chunk runs (the deals create no reference cycles; the heuristic's memo
    made each full collection traverse ~10^5 tuples: ~25% of the time).
    """
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the split search's memo (~10^5 tuples) makes every full collection slow
    try:
        return _run_chunk(seed, chunk, config, params, stop_after)
    finally:
        if gc_was_enabled:
            gc.enable()


def _run_chunk(
    seed: int,
    chunk: int,
    config: dict[str, Any],
    params: HeuristicParams | None,
    stop_after: int | None,
) -> dict[str, np.ndarray]:
    env = raw_env(**config)
    agents = [HeuristicAgent(params=params) for _ in range(4)]
    parts: list[dict[str, np.ndarray]] = []
    count = 0
    for d in range(DEALS_PER_CHUNK):
        obs, mask, actions, seats, rewards = play_deal(env, agents, derive_seed(seed, chunk, d))
        bits, scalar = pack_obs(obs)
        seat_arr = np.asarray(seats, dtype=np.int8)
        k = len(actions)
        parts.append(
            {
                "obs_bits": bits,
                "obs_scalar": scalar,
                "mask_bits": pack_masks(mask),
                "action": np.asarray(actions, dtype=np.int16),
                "n_legal": np.count_nonzero(mask, axis=1).astype(np.int16),
                "ret": rewards[seat_arr],
                "deal": np.full(k, chunk * DEALS_PER_CHUNK + d, dtype=np.int32),
                "seat": seat_arr,
            }
        )
        count += k
        if stop_after is not None and count >= stop_after:
            break
    return _concat(parts)


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    if not parts:
        return empty_arrays()
    return {
        k: np.concatenate([p[k] for p in parts]).astype(dt, copy=False)
        for k, (dt, _) in FIELDS.items()
    }


# ---------------------------------------------------------------------------- scheduling
def _ray_init(workers: int) -> bool:
    """Initialise a quiet local Ray unless one is running; True if it was started here."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_DEDUP_LOGS", "1")
    import ray

    if ray.is_initialized():
        return False
    ray.init(
        address="local",
        num_cpus=workers,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
        configure_logging=True,
    )
    return True


def _collect(
    num_decisions: int,
    submit: Callable[[int, int | None], Any],
    wait_one: Callable[[list[Any]], tuple[Any, int, dict[str, np.ndarray]]],
    max_inflight: int,
    on_chunk: Callable[[int], None],
) -> tuple[list[dict[str, np.ndarray]], int]:
    """Run chunks 0, 1, … until the chunk-ordered prefix holds ``num_decisions`` decisions.

    ``submit(chunk, stop_after)`` starts a chunk and returns a handle; ``wait_one(handles)``
    blocks for one finished handle and returns ``(handle, chunk, arrays)``. Returns the
    prefix's chunk arrays and the number of chunks started (look-ahead included).
    """
    done: dict[int, dict[str, np.ndarray]] = {}
    pending: dict[Any, int] = {}
    prefix: list[dict[str, np.ndarray]] = []
    have = 0  # decisions in the finished chunk-ordered prefix
    next_submit = 0
    seen_decisions, seen_chunks = 0, 0
    while True:
        while len(prefix) in done:
            part = done.pop(len(prefix))
            prefix.append(part)
            have += len(part["action"])
        if have >= num_decisions:
            return prefix, next_submit
        per_chunk = (
            seen_decisions / seen_chunks
            if seen_chunks
            else _EST_DECISIONS_PER_DEAL * DEALS_PER_CHUNK
        )
        expected = have + sum(len(p["action"]) for p in done.values()) + per_chunk * len(pending)
        while len(pending) < max_inflight and (expected < num_decisions or not pending):
            handle = submit(next_submit, num_decisions - have if not pending else None)
            pending[handle] = next_submit
            next_submit += 1
            expected += per_chunk
        handle, chunk, arrays = wait_one(list(pending))
        del pending[handle]
        done[chunk] = arrays
        seen_chunks += 1
        seen_decisions += len(arrays["action"])
        on_chunk(len(arrays["action"]))


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def generate_with_meta(
    num_decisions: int,
    seed: int,
    workers: int = 1,
    cache_dir: str | Path | None = None,
    game: dict | None = None,
    progress: bool = True,
    params: HeuristicParams | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``generate``'s arrays plus timing metadata.

    ``meta``: ``from_cache``, ``path`` (cache file or None), ``key``, ``seconds`` (wall time of
    this call), ``generation_seconds`` (wall time of the run that generated the data; stored
    in the cache file), ``decisions_per_s`` (``decisions / generation_seconds``),
    ``decisions``, ``deals`` (distinct deal ids), ``chunks`` (started, including discarded
    look-ahead), ``workers``, ``startup_seconds`` (starting Ray, included in the seconds).
    """
    t0 = time.perf_counter()
    num_decisions = _check_int("num_decisions", num_decisions, 1)
    seed = _check_int("seed", seed, 0)
    workers = _check_int("workers", workers, 1)
    config = game_config(game)
    params = params or HeuristicParams()
    key = cache_key(num_decisions, seed, game, params)
    path = None if cache_dir is None else Path(cache_dir) / f"bc-{key}.npz"

    if path is not None and path.exists():
        data, stored = load(path)
        print(f"bc_data: loaded {len(data['action'])} decisions from cache {path}")
        gen_s = float(stored.get("generation_seconds", float("nan")))
        meta = {
            "from_cache": True,
            "path": str(path),
            "key": key,
            "seconds": time.perf_counter() - t0,
            "generation_seconds": gen_s,
            "decisions_per_s": len(data["action"]) / gen_s if gen_s > 0 else float("nan"),
            "decisions": int(len(data["action"])),
            "deals": int(len(np.unique(data["deal"]))),
            "chunks": stored.get("chunks"),
            "workers": stored.get("workers"),
            "startup_seconds": stored.get("startup_seconds"),
        }
        return data, meta

    started_ray = False
    startup_s = 0.0
    bar = None
    try:
        if workers > 1:
            started_ray = _ray_init(workers)
            startup_s = time.perf_counter() - t0
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=num_decisions, desc="bc data", unit="dec", smoothing=0.1)

        def on_chunk(k: int) -> None:
            if bar is not None:
                bar.update(min(k, bar.total - bar.n))

        if workers == 1:
            stops: dict[int, int | None] = {}

            def submit_local(chunk: int, stop_after: int | None) -> int:
                stops[chunk] = stop_after  # run in wait_local, one chunk at a time
                return chunk

            def wait_local(handles: list[int]) -> tuple[int, int, dict[str, np.ndarray]]:
                c = handles[0]
                return c, c, run_chunk(seed, c, config, params, stops.pop(c))

            parts, chunks = _collect(num_decisions, submit_local, wait_local, 1, on_chunk)
        else:
            import ray

            remote = ray.remote(num_cpus=1)(run_chunk)
            refs: dict[Any, int] = {}

            def submit_ray(chunk: int, stop_after: int | None) -> Any:
                ref = remote.remote(seed, chunk, config, params, None)  # whole chunks
                refs[ref] = chunk
                return ref

            def wait_ray(handles: list[Any]) -> tuple[Any, int, dict[str, np.ndarray]]:
                ready, _ = ray.wait(handles, num_returns=1)
                return ready[0], refs.pop(ready[0]), ray.get(ready[0])

            parts, chunks = _collect(num_decisions, submit_ray, wait_ray, 2 * workers, on_chunk)
            for ref in refs:  # look-ahead chunks no longer needed
                ray.cancel(ref, force=False)
    finally:
        if bar is not None:
            bar.close()
        if started_ray:
            import ray

            ray.shutdown()

    data = {k: v[:num_decisions] for k, v in _concat(parts).items()}
    data = {k: np.ascontiguousarray(v) for k, v in data.items()}
    gen_s = time.perf_counter() - t0
    meta = {
        "from_cache": False,
        "path": None if path is None else str(path),
        "key": key,
        "seconds": gen_s,
        "generation_seconds": gen_s,
        "decisions_per_s": num_decisions / gen_s,
        "startup_seconds": startup_s,
        "decisions": num_decisions,
        "deals": int(len(np.unique(data["deal"]))),
        "chunks": chunks,
        "workers": workers,
    }
    if path is not None:
        save(path, data, meta)
    return data, meta


def generate(
    num_decisions: int,
    seed: int,
    workers: int,
    cache_dir: str | Path | None,
    game: dict | None = None,
    progress: bool = True,
) -> dict[str, np.ndarray]:
    """Behaviour-cloning arrays (see module docstring) of exactly ``num_decisions`` heuristic
    decisions; ``generate_with_meta`` also returns the time it cost."""
    return generate_with_meta(num_decisions, seed, workers, cache_dir, game, progress)[0]


# ---------------------------------------------------------------------------- files
def save(path: str | Path, data: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write ``data`` (and ``meta`` as JSON) to ``path`` atomically, in the shared decision
    format (``guandan_env.envs.dataset``, kind ``"bc"``)."""
    dataset_format.write(path, data, {**meta, "kind": "bc"}, FIELDS)


def load(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(arrays, stored meta)`` of a file written by ``save`` (a cache written by earlier
    versions too), or of a recorded-games dataset (``python -m experiments.dataset``): its
    decisions as BC arrays (``dataset_format.bc_columns``: ``ret`` is the acting seat's
    deal reward, ``deal`` the deal's index in the file)."""
    data, meta = dataset_format.read(path)
    if meta.get("kind") == "games":
        data = dataset_format.bc_columns(data)
    data = {k: data[k] for k in FIELDS if k in data}
    dataset_format.check(data, FIELDS)
    return data, meta


# ---------------------------------------------------------------------------- CLI
def _int_at_least(low: int):
    """An argparse type: an integer >= ``low``, with a readable error otherwise."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {v}")
        return v

    return parse


_positive_int = _int_at_least(1)
_seed = _int_at_least(0)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """CLI entry point; returns the metadata."""
    ap = argparse.ArgumentParser(
        prog="python -m experiments.selfplay.warm_start.data",
        description="Generate (or load from cache) behaviour-cloning data of the heuristic agent.",
    )
    ap.add_argument("--decisions", type=_positive_int, required=True, help="decisions to record")
    ap.add_argument(
        "--workers", type=_positive_int, default=1, help="Ray tasks at once (1: no Ray)"
    )
    ap.add_argument("--seed", type=_seed, default=0)
    ap.add_argument("--cache-dir", default=None, help="directory of bc-<key>.npz (default: none)")
    ap.add_argument(
        "--game",
        default=None,
        help="env config overrides as JSON, e.g. '{\"random_tribute\": false}'",
    )
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    game = None
    if args.game is not None:
        try:
            game = json.loads(args.game)
        except json.JSONDecodeError as e:
            ap.error(f"--game is not valid JSON: {e}")
        if not isinstance(game, dict):
            ap.error("--game must be a JSON object")
    try:
        game_config(game)
    except ValueError as e:
        ap.error(str(e))
    data, meta = generate_with_meta(
        args.decisions, args.seed, args.workers, args.cache_dir, game, not args.no_progress
    )
    nbytes = sum(v.nbytes for v in data.values())
    src = "cache" if meta["from_cache"] else f"generated with {args.workers} worker(s)"
    print(
        f"{meta['decisions']} decisions, {meta['deals']} deals ({src}); "
        f"{meta['seconds']:.1f} s this call, generation {meta['generation_seconds']:.1f} s "
        f"({meta['decisions_per_s']:.0f} decisions/s); {nbytes / 2**20:.1f} MiB"
    )
    print(f"file: {meta['path'] if meta['path'] else '(not cached: no --cache-dir)'}")
    return meta


if __name__ == "__main__":
    # run the importable module's main so Ray workers find run_chunk by reference
    from experiments.selfplay.warm_start import data as _module

    _module.main(sys.argv[1:])
