"""Env config and scenario set-up shared by the AEC env, the vector env and replays.

Kept free of gymnasium/pettingzoo imports (numpy only) so the rules side stays light.
"""

from __future__ import annotations

import warnings

import numpy as np

from .cards import parse_hand, parse_rank
from .config_keys import merge_known
from .engine import Game, team_of

DEFAULT_CONFIG = dict(
    mode="deal",
    max_deals=None,
    random_levels=False,
    random_tribute=False,
    match_win_bonus=0.0,
    illegal_action="raise",
    illegal_penalty=-3.0,
    render_mode=None,
    info_view=True,
)
SCENARIO_KEYS = ("hands", "levels", "leveling_team", "previous_order", "leader", "a_failures")


def check_config(config: dict) -> dict:
    """Merge ``config`` over the defaults; unknown keys or bad values raise ``ValueError``."""
    cfg = merge_known(DEFAULT_CONFIG, config, "env config")
    if cfg["mode"] not in ("deal", "match"):
        raise ValueError(f"mode must be 'deal' or 'match', got {cfg['mode']!r}")
    if cfg["illegal_action"] not in ("raise", "penalize"):
        raise ValueError(
            f"illegal_action must be 'raise' or 'penalize', got {cfg['illegal_action']!r}"
        )
    if cfg["render_mode"] not in (None, "ansi", "human"):
        raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {cfg['render_mode']!r}")
    if not isinstance(cfg["info_view"], bool):
        raise ValueError(f"info_view must be True or False, got {cfg['info_view']!r}")
    if cfg["max_deals"] is not None and int(cfg["max_deals"]) < 1:
        raise ValueError(f"max_deals must be >= 1 or None, got {cfg['max_deals']} (R-6.8)")
    return cfg


def build_game(seed: int, cfg: dict, options: dict | None) -> Game:
    """A ``Game`` with the first deal started from the config and scenario ``options``."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(SCENARIO_KEYS))
    if unknown:
        # a warning, not an error: PettingZoo's api_test passes arbitrary reset options
        warnings.warn(
            f"ignoring unknown reset option(s) {unknown}; valid: {list(SCENARIO_KEYS)}",
            stacklevel=3,
        )
    g = Game.new(seed=seed, max_deals=cfg["max_deals"] if cfg["mode"] == "match" else None)
    rng = g.rng
    if "levels" in options:
        lv = list(options["levels"])
        if len(lv) != 2:
            raise ValueError(f"levels must give team 0's and team 1's level, got {lv}")
        g.levels = [parse_rank(x) for x in lv]
    elif cfg["random_levels"]:
        g.levels = [int(x) for x in rng.integers(0, 13, size=2)]
    if "leveling_team" in options:
        lt = options["leveling_team"]
        if lt not in (0, 1, None):
            raise ValueError(f"leveling_team must be 0, 1 or None, got {lt!r} (R-2.1)")
        g.leveling_team = lt
    elif "previous_order" in options and options["previous_order"] is not None:
        # the last deal's first place made its team the leveling team
        g.leveling_team = team_of(int(list(options["previous_order"])[0]))
    elif "levels" in options or cfg["random_levels"]:
        g.leveling_team = int(rng.integers(2))
    if "a_failures" in options:
        af = [int(x) for x in options["a_failures"]]
        if len(af) != 2 or min(af) < 0 or max(af) > 2:
            raise ValueError(f"a_failures must be two counts in 0..2, got {af} (R-6.7)")
        g.a_failures = af
    hands = None
    if "hands" in options:
        hs = list(options["hands"])
        if len(hs) != 4:
            raise ValueError(f"hands must give 4 card strings, got {len(hs)}")
        hands = np.stack([parse_hand(h) for h in hs])
    previous = options.get("previous_order")
    if previous is None and cfg["random_tribute"] and "previous_order" not in options:
        previous = [int(s) for s in rng.permutation(4)]
        if "leveling_team" not in options:
            g.leveling_team = team_of(previous[0])
    g.start_deal(hands=hands, previous_order=previous, leader=options.get("leader"))
    return g
