"""The command-line options that fix a game (mode, levels, tribute), for every CLI that plays
games (the tournament, the dataset recorder): one declaration, one reading."""

from __future__ import annotations

import argparse
from typing import Any


def add_game_arguments(p: argparse.ArgumentParser, previous_order: bool = True) -> None:
    """``--mode``, ``--random-levels``, ``--random-tribute``, ``--levels``,
    ``--leveling-team``, ``--max-deals`` (and ``--previous-order``)."""
    p.add_argument("--mode", choices=("deal", "match"), default="deal")
    p.add_argument("--random-levels", action="store_true", help="deal mode: draw team levels")
    p.add_argument(
        "--random-tribute",
        action="store_true",
        help="deal mode: draw a previous finishing order (tribute, resistance)",
    )
    p.add_argument("--levels", help="team 0's and team 1's level, e.g. 5,A (applied to seats)")
    p.add_argument("--leveling-team", type=int, choices=(0, 1))
    if previous_order:
        p.add_argument("--previous-order", help="previous deal's finishing order, e.g. 0,2,1,3")
    p.add_argument("--max-deals", type=int, help="match mode: cap on deals per match (draw)")


def _csv_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def game_config_and_options(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(env config, reset options)`` of parsed ``add_game_arguments`` options; a bad
    ``--previous-order`` is a ``ValueError``."""
    options: dict[str, Any] = {}
    if args.levels:
        options["levels"] = _csv_list(args.levels)
    if args.leveling_team is not None:
        options["leveling_team"] = args.leveling_team
    order = getattr(args, "previous_order", None)
    if order:
        seats = _csv_list(order)
        if not all(x.isdigit() for x in seats):
            raise ValueError(f"--previous-order must be four seats like 0,2,1,3, got {seats}")
        options["previous_order"] = [int(x) for x in seats]
    config = {
        "random_levels": args.random_levels or None,
        "random_tribute": args.random_tribute or None,
        "max_deals": args.max_deals,
    }
    return config, options
