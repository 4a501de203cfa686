"""``python -m experiments.dataset AGENT [AGENT …] --pairs N --out FILE.npz``: record games
as a decision dataset (``experiments.dataset``, ``docs/datasets.md``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agents.registry import specs_help
from experiments.dataset.record import record_games, save


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.dataset",
        description="Record the games of agents as a dataset of decisions (docs/datasets.md).",
    )
    p.add_argument("agents", nargs="+", help=specs_help())
    p.add_argument(
        "--pairs",
        type=int,
        default=10,
        help="duplicate pairs per matchup (one agent: games with it on every seat)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mode", choices=("deal", "match"), default="deal")
    p.add_argument("--random-levels", action="store_true", help="deal mode: draw team levels")
    p.add_argument("--random-tribute", action="store_true", help="deal mode: draw a previous order")
    p.add_argument("--levels", help="team 0's and team 1's level, e.g. 5,A")
    p.add_argument("--leveling-team", type=int, choices=(0, 1))
    p.add_argument("--max-deals", type=int, help="match mode: cap on deals per match")
    p.add_argument("--out", required=True, help="the .npz file to write")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    options: dict[str, Any] = {}
    if args.levels:
        options["levels"] = [x.strip() for x in args.levels.split(",")]
    if args.leveling_team is not None:
        options["leveling_team"] = args.leveling_team
    config = {
        "random_levels": args.random_levels or None,
        "random_tribute": args.random_tribute or None,
        "max_deals": args.max_deals,
    }
    try:
        data, meta = record_games(
            args.agents, args.pairs, args.seed, args.mode, config, options, not args.no_progress
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    save(args.out, data, meta)
    size = sum(v.nbytes for v in data.values())
    print(
        f"{meta['decisions']} decisions, {meta['deals']} deals, {meta['episodes']} games "
        f"({size / 2**20:.2f} MiB) -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
