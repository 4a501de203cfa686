"""How fast the rule-based ``heuristic`` plays: ``python -m experiments.bench.heuristic``.

The default self-play run starts by recording ``warm_start.decisions`` heuristic decisions
(all four seats ``heuristic``), and every evaluation and suite against ``heuristic`` waits
on it, so its decisions per CPU-second are part of the run's budget. Each round plays
``--chunks`` chunks of the warm start's data (``DEALS_PER_CHUNK`` deals each, seeded as the
data is) in this process from an empty split memo; the median and range over ``--repeats``
rounds are printed and written to ``--out`` (JSON), with a digest of the decisions so that
two versions can be checked to play alike.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from statistics import median

from experiments.bench import write_json


def measure(chunks: int, repeats: int, seed: int = 7) -> dict:
    from agents.hand_split import clear_memo
    from experiments.selfplay.warm_start.data import game_config, run_chunk

    rounds, digests = [], set()
    for _ in range(repeats):
        clear_memo()
        h = hashlib.sha256()
        decisions = 0
        t = time.process_time()
        for chunk in range(chunks):
            data = run_chunk(seed, chunk, game_config(None))
            decisions += len(data["action"])
            h.update(data["action"].tobytes())
        rounds.append(decisions / (time.process_time() - t))
        digests.add(h.hexdigest()[:16])
    if len(digests) != 1:
        raise RuntimeError(f"the heuristic played the same deals differently: {sorted(digests)}")
    return {
        "chunks": chunks,
        "repeats": repeats,
        "decisions": decisions,
        "decisions_per_cpu_s": round(median(rounds)),
        "range": [round(min(rounds)), round(max(rounds))],
        "rounds": [round(r) for r in rounds],
        "actions_digest": digests.pop(),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.heuristic")
    p.add_argument("--chunks", type=int, default=8, help="data chunks per round (8 deals each)")
    p.add_argument("--repeats", type=int, default=3, help="rounds (median over them)")
    p.add_argument("--out", default="results/bench_heuristic.json")
    args = p.parse_args(argv)
    if args.chunks < 1 or args.repeats < 1:
        p.error("--chunks and --repeats must be >= 1")
    out = measure(args.chunks, args.repeats)
    print(
        f"heuristic: {out['decisions_per_cpu_s']:,} decisions per CPU-s "
        f"[{out['range'][0]:,}–{out['range'][1]:,}] over {out['repeats']} rounds of "
        f"{out['decisions']:,} decisions (actions {out['actions_digest']})"
    )
    write_json(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
