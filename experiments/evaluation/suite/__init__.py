"""The frozen evaluation suite: one way to report strength that everyone can quote.

    python -m experiments.evaluate checkpoint:runs/default          # rate an agent
    python -m experiments.evaluate --leaderboard                    # the opponents' table

``definition`` fixes each versioned suite (``guandan-eval-v1``: duplicate deals with random
levels and tribute, fixed pair seeds, fixed opponents, 1,000 pairs each), ``run`` plays an
entrant against the opponents as a tournament restricted to those matchups (resumable,
``--workers``, ``--address``), ``report`` turns the games into tables, anchored
Bradley–Terry ratings, a plot and a citation line, ``evaluate`` ties them together and
``leaderboard_doc`` writes ``docs/leaderboard.md``.
"""

from __future__ import annotations

from .definition import CURRENT, SUITES, Suite, get_suite
from .evaluate import evaluate, leaderboard

__all__ = ["CURRENT", "SUITES", "Suite", "get_suite", "evaluate", "leaderboard"]
