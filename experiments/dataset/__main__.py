"""``python -m experiments.dataset AGENT [AGENT …] --pairs N --out FILE.npz``: record games
as a decision dataset (``experiments.dataset``, ``docs/datasets.md``)."""

from __future__ import annotations

import argparse
import sys

from agents.registry import specs_help
from experiments.dataset.record import record_games, save
from experiments.evaluation.game_args import add_game_arguments, game_config_and_options


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
    add_game_arguments(p, previous_order=False)
    p.add_argument("--out", required=True, help="the .npz file to write")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    config, options = game_config_and_options(args)
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
