"""The command line: ``python -m experiments.evaluation.tournament AGENT AGENT … [options]``."""

from __future__ import annotations

import argparse
import inspect
import sys

from agents.registry import specs_help

from ..game_args import add_game_arguments, game_config_and_options
from .report import format_tables
from .run import RESULTS_ROOT, default_out, run_record, run_tournament

# the library's defaults are the command line's (one source: ``run_tournament``'s signature)
DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(run_tournament).parameters.items()
    if p.default is not inspect.Parameter.empty
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.evaluation.tournament",
        description="Duplicate-deal round-robin tournament between agents, with ratings.",
    )
    p.add_argument("agents", nargs="+", help=specs_help())
    p.add_argument(
        "--pairs", type=int, default=DEFAULTS["pairs"], help="duplicate pairs per matchup"
    )
    p.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    add_game_arguments(p)
    p.add_argument(
        "--workers",
        type=int,
        default=DEFAULTS["workers"],
        help="worker processes (1: in-process)",
    )
    p.add_argument(
        "--address", help="run games as Ray tasks on this cluster ('local' to start one)"
    )
    p.add_argument(
        "--out",
        help=f"output directory (default {RESULTS_ROOT}/<agents>-<mode>-<hash of the run>: "
        "a different run gets a different folder, the same command resumes its own)",
    )
    p.add_argument("--name", help="output directory results/NAME instead (as --out)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument(
        "--save-replays", action="store_true", help="also save every game as a JSON replay"
    )
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    out = args.out or (f"results/{args.name}" if args.name else None)
    try:
        config, options = game_config_and_options(args)
        if out is None:  # named after the run, so it is known for the Ctrl-C message too
            out = default_out(
                run_record(args.agents, args.pairs, args.seed, args.mode, config, options)
            )
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
