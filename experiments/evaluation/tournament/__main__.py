"""The command line: ``python -m experiments.evaluation.tournament AGENT AGENT … [options]``."""

from __future__ import annotations

import argparse
import inspect
import sys
from typing import Any

from agents.registry import specs_help

from .report import format_tables
from .run import RESULTS_ROOT, default_out, run_record, run_tournament

# the library's defaults are the command line's (one source: ``run_tournament``'s signature)
DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(run_tournament).parameters.items()
    if p.default is not inspect.Parameter.empty
}


def _csv_list(text: str | None) -> list[str] | None:
    return None if text is None else [x.strip() for x in text.split(",") if x.strip()]


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
    p.add_argument("--mode", choices=("deal", "match"), default=DEFAULTS["mode"])
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
    out = args.out or (f"results/{args.name}" if args.name else None)
    try:
        if args.previous_order:
            order = _csv_list(args.previous_order)
            if not all(x.isdigit() for x in order):
                raise ValueError(f"--previous-order must be four seats like 0,2,1,3, got {order}")
            options["previous_order"] = [int(x) for x in order]
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
