"""The command line: ``python -m experiments.evaluate SPEC [SPEC …] [options]`` (also
``python -m experiments.evaluation.suite``)."""

from __future__ import annotations

import argparse
import sys

from agents.registry import specs_help

from .definition import CURRENT, SUITES
from .evaluate import evaluate, leaderboard
from .report import markdown
from .run import RESULTS_ROOT


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.evaluate",
        description="Rate agents on a frozen evaluation suite: duplicate deals against the "
        "suite's fixed opponents, on its fixed seeds (docs/leaderboard.md).",
    )
    p.add_argument("agents", nargs="*", help=specs_help())
    p.add_argument("--suite", default=CURRENT, choices=sorted(SUITES))
    p.add_argument(
        "--pairs", type=int, help="pairs per opponent (default: the suite's; fewer: not comparable)"
    )
    p.add_argument("--workers", type=int, default=2, help="worker processes (1: in-process)")
    p.add_argument("--address", help="run games as Ray tasks on this cluster ('local': start one)")
    p.add_argument("--out", help="report folder (default results/eval/<suite>/<agents>)")
    p.add_argument("--root", default=str(RESULTS_ROOT), help="where games and reports go")
    p.add_argument(
        "--leaderboard",
        action="store_true",
        help="play the opponents' round robin and (with the suite's pairs) freeze it: the "
        "reference results, docs/leaderboard.md and the zoo's model cards",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="--leaderboard: replace a frozen reference whose games differ (unpublished suites)",
    )
    p.add_argument(
        "--card",
        action="store_true",
        help="write each entrant's table and rating into its model card (shipped models by "
        "exact name, the suite's full pairs): rates a model shipped after the suite was frozen",
    )
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if not args.agents and not args.leaderboard:
        p.error("name agent specs to evaluate, or --leaderboard")
    if args.card and args.leaderboard:
        p.error("--card is for entrants (--leaderboard updates the opponents' cards itself)")
    try:
        if args.leaderboard:
            report = leaderboard(
                args.suite,
                args.pairs,
                args.workers,
                args.address,
                args.root,
                not args.no_progress,
                force=args.force,
            )
        else:
            report = evaluate(
                args.agents,
                args.suite,
                args.pairs,
                args.workers,
                args.address,
                args.out,
                args.root,
                not args.no_progress,
                update_cards=args.card,
            )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "\ninterrupted: the games played are saved; run the same command to resume",
            file=sys.stderr,
        )
        return 130
    print(markdown(report))
    print(f"report in {report['out']} (report.json, report.md, report.png)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
