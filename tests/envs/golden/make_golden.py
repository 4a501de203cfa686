"""Regenerate the golden game transcripts: ``python tests/envs/golden/make_golden.py``.

Each file holds one game of four ``heuristic`` agents whose play shows one rule at work, found
by scanning seeds: its replay (``guandan_env.envs.replay``: seed, options, actions, final check
values) and the env's text log. ``tests/envs/test_golden.py`` replays every file and requires the
same log, line for line, and the same final state: a rules change shows up as a readable diff.
Regenerate only for a deliberate change, and read the diff.

============  =====================================================================
file          what it shows
============  =====================================================================
tribute       a double down (双下) paid by two tributes and two returns (R-6.2, R-7.1, R-7.2)
resistance    tribute resisted: the payers hold both big jokers (R-7.3)
wind          the trick winner has gone out; the lead passes to the partner (R-5.4)
a_failure     a team at A fails a third time and drops back to 2 (R-6.7)
============  =====================================================================
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from agents.registry import make_agent  # noqa: E402
from guandan_env.core.engine import partner_of  # noqa: E402
from guandan_env.envs.replay import record_game, replay_env, replay_steps  # noqa: E402

DEAL = {"mode": "deal"}
SCENARIOS = {
    "tribute": (DEAL, {"levels": ["7", "9"], "leveling_team": 0, "previous_order": [0, 2, 1, 3]}),
    "resistance": (
        DEAL,
        {"levels": ["5", "5"], "leveling_team": 0, "previous_order": [0, 2, 1, 3]},
    ),
    "wind": (DEAL, {"levels": ["2", "2"], "leveling_team": 0}),
    "a_failure": (
        {"mode": "match", "max_deals": 1},
        {"levels": ["A", "9"], "leveling_team": 0, "a_failures": [2, 0]},
    ),
}


def shows(name: str, replay, env) -> bool:
    """Does this game show the rule of ``name``?"""
    log = "\n".join(env.unwrapped.log)
    game = env.unwrapped.game
    if name == "tribute":
        return log.count("tribute: seat") == 2 and log.count("returns") == 2
    if name == "resistance":
        return "tribute resisted" in log
    if name == "a_failure":
        return game.levels[0] == 0 and game.a_failures[0] == 0 and "levels 2/" in log
    if name == "wind":
        table_seat, out = -1, []
        for step in replay_steps(replay):
            g = step.game
            if (
                step.action == 0
                and g.table_action == -1
                and table_seat in out
                and g.leader == partner_of(table_seat)
            ):
                return True
            table_seat, out = g.table_seat, list(g.finish_order)
        return False
    raise ValueError(name)


def record(name: str, seed: int):
    config, options = SCENARIOS[name]
    agents = [make_agent("heuristic", seed=s) for s in range(4)]
    replay = record_game(agents, seed=seed, config=config, options=options)
    return replay, replay_env(replay)


def main() -> int:
    for name in SCENARIOS:
        for seed in range(500):
            replay, env = record(name, seed)
            if shows(name, replay, env):
                out = {"replay": replay.to_dict(), "log": list(env.unwrapped.log)}
                path = HERE / f"{name}.json"
                path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
                print(f"{name}: seed {seed}, {len(replay.actions)} actions -> {path.name}")
                break
        else:
            raise SystemExit(f"{name}: no seed in 0..499 shows it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
