"""Env config and scenario set-up shared by the AEC env, the vector env and replays.

Kept free of gymnasium/pettingzoo imports (numpy only) so the rules side stays light.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import validate
from ..core.cards import parse_hand
from ..core.config_keys import merge_known
from ..core.engine import Game, check_deal, team_of

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


# PettingZoo's api_test resets with this exact option to see that unknown ones are tolerated
API_TEST_PROBE = {"options": 1}
MAX_DEALS_CAP = 100_000


def check_config(config: dict) -> dict:
    """Merge ``config`` over the defaults; unknown keys or bad values raise ``ValueError``."""
    cfg = merge_known(DEFAULT_CONFIG, validate.mapping(config, "env config"), "env config")
    if cfg["mode"] not in ("deal", "match"):
        raise ValueError(f"mode must be 'deal' or 'match', got {cfg['mode']!r}")
    if cfg["illegal_action"] not in ("raise", "penalize"):
        raise ValueError(
            f"illegal_action must be 'raise' or 'penalize', got {cfg['illegal_action']!r}"
        )
    if cfg["render_mode"] not in (None, "ansi", "human"):
        raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {cfg['render_mode']!r}")
    for key in ("info_view", "random_levels", "random_tribute"):
        cfg[key] = validate.flag(cfg[key], key)
    for key in ("match_win_bonus", "illegal_penalty"):
        cfg[key] = validate.number(cfg[key], key)
    if cfg["max_deals"] is not None:
        cfg["max_deals"] = validate.integer(
            cfg["max_deals"], "max_deals", 1, MAX_DEALS_CAP, "R-6.8; None = no cap"
        )
    return cfg


def _hand(text: Any, name: str) -> np.ndarray:
    try:
        return parse_hand(text)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def check_options(options: Any) -> dict:
    """Scenario options of ``reset`` in canonical form (``hands`` as face counts, levels as
    rank indices), or a ``ValueError`` naming the bad one. Nothing is drawn or changed here,
    so a refused reset leaves the env (and its RNG) as it was."""
    given = validate.mapping(options, "reset options")
    if given == API_TEST_PROBE:
        return {}
    unknown = sorted(set(given) - set(SCENARIO_KEYS))
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; valid: {list(SCENARIO_KEYS)}")
    out: dict[str, Any] = {}
    if "hands" in given:
        hands = validate.sequence(given["hands"], "hands", 4)
        out["hands"] = check_deal(np.stack([_hand(h, f"hands[{i}]") for i, h in enumerate(hands)]))
    if "levels" in given:
        lv = validate.sequence(given["levels"], "levels (team 0's, team 1's)", 2)
        out["levels"] = [validate.level(x, f"levels[{i}]") for i, x in enumerate(lv)]
    if "leveling_team" in given:
        lt = given["leveling_team"]
        out["leveling_team"] = (
            None
            if lt is None
            else validate.integer(lt, "leveling_team", 0, 1, "R-2.1; None before the first deal")
        )
    if "previous_order" in given:
        po = given["previous_order"]
        out["previous_order"] = None if po is None else validate.permutation(po, "previous_order")
    if "leader" in given:
        ld = given["leader"]
        out["leader"] = None if ld is None else validate.seat(ld, "leader")
    if "a_failures" in given:
        af = validate.sequence(given["a_failures"], "a_failures (per team)", 2)
        out["a_failures"] = [
            validate.integer(x, f"a_failures[{i}]", 0, 2, "R-6.7") for i, x in enumerate(af)
        ]
    return out


def build_game(seed: int, cfg: dict, options: dict | None = None) -> Game:
    """A ``Game`` with the first deal started from the config and scenario ``options``."""
    return start_scenario(seed, cfg, check_options(options))


def start_scenario(seed: int, cfg: dict, options: dict) -> Game:
    """``build_game`` with ``options`` as ``check_options`` returned them."""
    g = Game.new(seed=seed, max_deals=cfg["max_deals"] if cfg["mode"] == "match" else None)
    rng = g.rng
    if "levels" in options:
        g.levels = list(options["levels"])
    elif cfg["random_levels"]:
        g.levels = [int(x) for x in rng.integers(0, 13, size=2)]
    if "leveling_team" in options:
        g.leveling_team = options["leveling_team"]
    elif options.get("previous_order") is not None:
        # the last deal's first place made its team the leveling team
        g.leveling_team = team_of(options["previous_order"][0])
    elif "levels" in options or cfg["random_levels"]:
        g.leveling_team = int(rng.integers(2))
    if "a_failures" in options:
        g.a_failures = list(options["a_failures"])
    previous = options.get("previous_order")
    if previous is None and cfg["random_tribute"] and "previous_order" not in options:
        previous = [int(s) for s in rng.permutation(4)]
        if "leveling_team" not in options:
            g.leveling_team = team_of(previous[0])
    g.start_deal(hands=options.get("hands"), previous_order=previous, leader=options.get("leader"))
    return g
