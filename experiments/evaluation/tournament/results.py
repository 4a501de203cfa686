"""The results file of a run (``results.jsonl``, one finished game per line) and the run
record (``run.json``) that fixes its games, so a rerun resumes exactly that run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agents.atomic_file import write_json_atomic

# what fixes the games of a run ("matchups" only in runs restricted to some matchups)
RUN_KEYS = ("agents", "seed", "mode", "config", "options", "matchups")


def read_results(path: Path, games: list[dict] | None = None) -> dict[str, dict]:
    """Finished games by id; a torn last line (interrupted write) is ignored. With the run's
    ``games`` (``schedule``), a row counts only if it is one of them, played from the same
    seed by the same agents; other lines (another run's rows, stray JSON) are reported on
    stderr and skipped, never counted."""
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    want = {g["id"]: g for g in games} if games is not None else None
    foreign: list[int] = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not _is_row(row) or (want is not None and not _belongs(row, want.get(row["id"]))):
                foreign.append(number)
                continue
            done[row["id"]] = row
    if foreign:
        print(
            f"warning: {path}: skipped {len(foreign)} line(s) that are not games of this run "
            f"(another seed or agents, or not a result row): lines {foreign[:10]}"
            f"{' …' if len(foreign) > 10 else ''}",
            file=sys.stderr,
        )
    return done


def _is_row(row: Any) -> bool:
    return (
        isinstance(row, dict)
        and isinstance(row.get("id"), str)
        and isinstance(row.get("record"), dict)
        and isinstance(row["record"].get("deals"), list)
    )


def _belongs(row: dict, game: dict | None) -> bool:
    """The row is the scheduled ``game``: same id, agents, pair, swap and seed."""
    return (
        game is not None
        and row.get("a") == game["a"]
        and row.get("b") == game["b"]
        and row.get("pair") == game["pair"]
        and row.get("swap") == game["swap"]
        and row["record"].get("seed") == game["seed"]
    )


def _repair_tail(path: Path) -> None:
    """Drop a partial last line so appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with path.open("r+b") as f:
        f.truncate(cut)


def _check_run(out: Path, run: dict) -> None:
    """Write ``run.json``, or refuse if the directory holds games of a different run (a
    ``run.json`` without any finished game is simply replaced)."""
    path = out / "run.json"
    if path.exists() and read_results(out / "results.jsonl"):
        old = json.loads(path.read_text(encoding="utf-8"))
        diff = [k for k in RUN_KEYS if old.get(k) != run.get(k)]
        if diff:
            raise ValueError(
                f"{out} holds a run with different {', '.join(diff)} ({path}); use a new --out "
                "directory (or delete it) to start a different tournament"
            )
    write_json_atomic(path, run)
