"""Benchmark the deal sampler (``guandan_env.core.infoset``): sampled deals per second on one
core for mid-deal information sets, as hands and as engine states.

    python -m experiments.bench.infoset --repeats 7 --out results/bench_infoset.json

The information sets are those of the seat to act in heuristic deals (tribute on) after
``--moves`` moves. Reported: medians (and min..max) over the repeats of hands/s
(``Sampler.hands``, ``--batch`` deals a call), games/s (``Sampler.games``: ``Game`` objects
the engine continues from) and the cost of building a ``Sampler`` from a view.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from agents import make_agent
from guandan_env.core.infoset import Sampler
from guandan_env.envs.aec import raw_env
from guandan_env.envs.infoset import infoset


def info_sets(count: int, moves: int) -> list:
    out = []
    for seed in range(count * 3):
        env = raw_env(mode="deal", random_levels=True, random_tribute=True)
        env.reset(seed=seed)
        agent = make_agent("heuristic", seed=seed)
        for _ in range(moves):
            obs, _, term, _, info = env.last()
            if term:
                break
            env.step(agent.act(obs, info))
        if not env.game.deal_over:
            out.append(infoset(env.game, env.game.to_act))
        if len(out) == count:
            break
    return out


def rate(fn, n: int, repeats: int) -> list[float]:
    rates = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        rates.append(n / max(time.process_time() - t0, 1e-9))
    return rates


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", type=int, default=8, help="information sets")
    p.add_argument("--moves", type=int, default=30, help="moves into the deal")
    p.add_argument("--batch", type=int, default=1000, help="deals per sampler call")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--out", default="results/bench_infoset.json")
    a = p.parse_args(argv)
    sets = info_sets(a.sets, a.moves)
    rng = np.random.default_rng(0)
    hands, games, build = [], [], []
    for info in sets:
        s = Sampler(info)
        hands += rate(lambda s=s: s.hands(a.batch, rng), a.batch, a.repeats)
        games += rate(lambda s=s: s.games(a.batch, rng), a.batch, a.repeats)
        build += rate(lambda info=info: [Sampler(info) for _ in range(100)], 100, a.repeats)
    unseen = [int(Sampler(i).slots) for i in sets]

    def summary(x):
        return {"median": statistics.median(x), "min": min(x), "max": max(x)}

    report = {
        "info_sets": len(sets),
        "moves": a.moves,
        "unseen_cards": {
            "median": statistics.median(unseen),
            "min": min(unseen),
            "max": max(unseen),
        },
        "hands_per_s": summary(hands),
        "games_per_s": summary(games),
        "samplers_built_per_s": summary(build),
        "clock": "process CPU time, one core",
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    for k in ("hands_per_s", "games_per_s", "samplers_built_per_s"):
        r = report[k]
        print(f"{k:22s} median {r['median']:>12,.0f}   range {r['min']:,.0f} .. {r['max']:,.0f}")
    print(f"unseen cards per set: {report['unseen_cards']}")
    return report


if __name__ == "__main__":
    main()
