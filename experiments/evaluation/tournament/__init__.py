"""Duplicate-deal round-robin tournaments between agents, with ratings.

    python -m experiments.evaluation.tournament heuristic random --pairs 1000 --out results/h_vs_r

Every pair of agents given on the command line meets in ``--pairs`` duplicate pairs (see
``experiments.evaluation.duplicate``: each seed is played twice with the teams swapping seats). All
matchups use the same seeds, so they play the same deals. ``--mode deal`` plays single deals
(``--random-levels``/``--random-tribute`` or given ``--levels``/``--leveling-team``/
``--previous-order``); ``--mode match`` plays whole matches (2 → passing A, ``--max-deals``
caps them).

Outputs in ``--out`` (default ``results/tournament/<agents>-<mode>-<hash>``, the hash over
what fixes the games, so different runs never share a folder): ``results.jsonl`` (one
line per finished game, appended as games finish), ``run.json`` (the arguments that fix
the games), ``summary.json``/``summary.csv``
(per matchup: duplicate win rate, deal win rate, mean level gain per deal, match win rate,
with 95% bootstrap intervals over pairs), ``ratings.csv`` (Bradley–Terry, Elo scale, 95%
intervals), ``ratings.png``, ``level_gain_hist.png``, and ``timing.json`` (throughput;
with ``--address`` also the Ray node id of every chunk, ``chunks``, and the games per
node, ``nodes``).

Resumable: rerunning the same command (same folder) skips the games already in ``results.jsonl`` (a
larger ``--pairs`` extends a run). Games run in ``--workers`` processes, or as Ray tasks on
an existing cluster with ``--address`` (``--address local`` starts a local Ray instance).
"""

from __future__ import annotations

from ..duplicate import evaluate, play_game
from .games import game_id, run_chunk, schedule
from .report import format_tables, summarise, write_outputs
from .results import read_results
from .run import run_tournament

__all__ = [
    "evaluate",
    "play_game",
    "run_tournament",
    "schedule",
    "game_id",
    "run_chunk",
    "read_results",
    "summarise",
    "format_tables",
    "write_outputs",
    "main",
]


def main(argv: list[str] | None = None) -> int:
    """The command line (``python -m experiments.evaluation.tournament``)."""
    from .__main__ import main as cli_main

    return cli_main(argv)
