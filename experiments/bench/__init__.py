"""Benchmark scripts (medians, JSON out): ``python -m experiments.bench.core``, ``.vector``,
``.selfplay``, ``.hand_plan``, ``.runner_parts``, ``.loss_gradients``, ``.infoset``,
``.search``, ``.zoo``, ``.heuristic``, ``.learner_precision``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(out: dict[str, Any], path: str | Path) -> None:
    """Write a benchmark's results to ``path`` (parents made) and say so."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
