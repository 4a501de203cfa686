"""Benchmark the rules core: legal masks (lead, follow, batched), bare engine and AEC env play.

    python -m experiments.bench.core [--repeats 15] [--out results/bench_core.json]

Every figure is the median over ``--repeats`` timed samples (each sample times many calls
and divides), printed as a table and written as JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from statistics import median

import numpy as np

from guandan_env.core import movegen, vector_mask
from guandan_env.core.cards import HAND_SIZE, NUM_FACES, full_deck
from guandan_env.core.engine import Game


def random_hands(rng: np.random.Generator, n: int) -> np.ndarray:
    out = np.zeros((n, NUM_FACES), dtype=np.uint8)
    deck = full_deck()
    for i in range(n):
        np.add.at(out[i], rng.permutation(deck)[:HAND_SIZE], 1)
    return out


def _median_per_call(fn, calls: int, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(calls)
        samples.append((time.perf_counter() - t) / calls)
    return median(samples)


def bench_masks(repeats: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    hands = random_hands(rng, 512)
    levels = rng.integers(0, 13, size=512)
    for lv in range(13):  # build per-level tables outside the timing
        movegen._follow_index(lv)
        vector_mask.table_words(lv, 1)
    lasts = []
    for i in range(512):  # a legal lead of another fresh hand, at the same level
        lead = np.flatnonzero(movegen.lead_mask(hands[(i + 1) % 512], int(levels[i])))
        lasts.append(int(lead[rng.integers(lead.size)]))

    def lead(n):  # the engine's and legal_actions' path: bit-packed rows
        for i in range(n):
            vector_mask.play_mask_one(hands[i % 512], int(levels[i % 512]), -1)

    def follow(n):
        for i in range(n):
            vector_mask.play_mask_one(hands[i % 512], int(levels[i % 512]), lasts[i % 512])

    def lead_atoms(n):  # the readable atom-gather path
        for i in range(n):
            movegen.lead_mask(hands[i % 512], int(levels[i % 512]))

    def follow_atoms(n):
        for i in range(n):
            movegen.follow_mask(hands[i % 512], int(levels[i % 512]), lasts[i % 512])

    big = random_hands(rng, 1024)
    big_levels = rng.integers(0, 13, size=1024)
    big_lasts = np.full(1024, -1)

    def batch(n):
        for _ in range(n):
            movegen.batch_play_mask(big, big_levels, big_lasts)

    def batch_packed(n):  # the vector engine's path: bit-packed rows, unpacked to bool
        for _ in range(n):
            vector_mask.unpack_masks(vector_mask.play_masks_packed(big, big_levels, big_lasts))

    for fn in (lead, follow, lead_atoms, follow_atoms):  # warm caches and the CPU
        fn(500)
    return {
        "lead_mask_us": _median_per_call(lead, 500, repeats) * 1e6,
        "follow_mask_us": _median_per_call(follow, 500, repeats) * 1e6,
        "lead_mask_atoms_us": _median_per_call(lead_atoms, 500, repeats) * 1e6,
        "follow_mask_atoms_us": _median_per_call(follow_atoms, 500, repeats) * 1e6,
        "batch1024_gather_mask_us_per_hand": _median_per_call(batch, 3, repeats) * 1e6 / 1024,
        "batch1024_packed_mask_us_per_hand": _median_per_call(batch_packed, 5, repeats)
        * 1e6
        / 1024,
    }


def bench_engine(repeats: int, decisions: int = 20000, seed: int = 0) -> dict:
    """Random legal play on the bare ``Game`` (mask + card choice + state update)."""
    _warm_tables()
    rates = []
    for r in range(repeats):
        rng = np.random.default_rng(seed + r)
        g = Game.new(seed=seed + r)
        g.start_deal()
        t = time.perf_counter()
        for _ in range(decisions):
            m = g.legal_mask()
            legal = np.flatnonzero(m)
            g.step(int(legal[rng.integers(legal.size)]), m)
            if g.deal_over:
                if g.match_over:
                    g = Game.new(seed=int(rng.integers(1 << 31)))
                    g.start_deal()
                else:
                    g.next_deal()
        rates.append(decisions / (time.perf_counter() - t))
    return {"engine_decisions_per_s": median(rates)}


def _warm_tables() -> None:
    """Build the per-level tables (~15 ms per level, once per process) outside the timing."""
    for lv in range(13):
        movegen._follow_index(lv)
        vector_mask.table_words(lv, 1)


AEC_SETTINGS = {
    "match": {"mode": "match"},
    "deal_tribute": {"mode": "deal", "random_levels": True, "random_tribute": True},
    "match_no_view": {"mode": "match", "info_view": False},
}


def _aec_rate(config: dict, steps: int, seed: int, split: bool = False) -> dict:
    """Random legal play through ``guandan_env.env(**config)``, as a user would write it:
    ``env.last()``, ``np.flatnonzero(obs["action_mask"])``, a uniform pick, ``env.step``."""
    import guandan_env

    rng = np.random.default_rng(seed)
    env = guandan_env.env(**config)
    env.reset(seed=seed)
    clock = time.perf_counter
    n, t_last, t_step = 0, 0.0, 0.0
    t = clock()
    while n < steps:
        a = clock() if split else 0.0
        obs, _, term, trunc, _ = env.last()
        if split:
            t_last += clock() - a
        if term or trunc:
            env.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(legal.size)])
        a = clock() if split else 0.0
        env.step(action)
        if split:
            t_step += clock() - a
        n += 1
    out = {"steps_per_s": steps / (clock() - t)}
    if split:
        out.update(last_us=t_last / steps * 1e6, step_us=t_step / steps * 1e6)
    return out


def bench_aec(repeats: int, steps: int = 10000, seed: int = 0) -> dict:
    """Random legal play through ``guandan_env.env()``: wrappers, observation and mask included.

    ``match``: one match per episode; ``deal_tribute``: one deal per episode at random levels
    after a random finishing order (tribute, returns, a reset every ~100 steps);
    ``match_no_view``: ``match`` without the rule-based agents' ``info["view"]``. The split run
    times ``env.last()`` (observation + mask) and ``env.step()`` separately.
    """
    _warm_tables()
    _aec_rate(AEC_SETTINGS["match"], 2000, seed)  # warm caches and code paths
    res = {}
    for name, config in AEC_SETTINGS.items():
        rates = [_aec_rate(config, steps, seed + r)["steps_per_s"] for r in range(repeats)]
        res[f"aec_env_{name}_steps_per_s"] = median(rates)
    splits = [_aec_rate(AEC_SETTINGS["match"], steps, seed + r, split=True) for r in range(3)]
    res["aec_env_last_us"] = median(s["last_us"] for s in splits)
    res["aec_env_step_us"] = median(s["step_us"] for s in splits)
    return res


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--out", default="results/bench_core.json")
    args = p.parse_args(argv)
    res = {}
    res.update(bench_masks(args.repeats))
    res.update(bench_engine(max(3, args.repeats // 3)))
    res.update(bench_aec(max(5, args.repeats // 3)))
    res["machine"] = {"python": platform.python_version(), "cpu_count": _cpus()}
    res["numpy"] = np.__version__
    width = max(len(k) for k in res)
    for k, v in res.items():
        if isinstance(v, float):
            print(f"{k:<{width}}  {v:>12,.1f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2))
    print(f"wrote {out}")
    return res


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
