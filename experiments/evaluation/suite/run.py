"""Running a suite: each entrant against every opponent of the suite (a tournament restricted
to those matchups, so it resumes and runs in parallel like any tournament), and the
leaderboard: the opponents' own round robin, which anchors every entrant's rating."""

from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path
from typing import Any

from ..duplicate import team_view
from ..ratings import pair_score
from ..tournament import run_tournament
from ..tournament.games import game_id
from .definition import Suite, get_suite

RESULTS_ROOT = Path("results/eval")
REFERENCE_DIR = Path(__file__).parent / "reference"


def slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9.=]+", "-", spec).strip("-")[:80] or "agent"


def games_dir(suite: Suite, name: str, root: Path = RESULTS_ROOT) -> Path:
    """Where an entrant's games of a suite live (shared by every call: they resume)."""
    return Path(root) / suite.name / "games" / name


def entrant_dir(suite: Suite, spec: str, root: Path = RESULTS_ROOT) -> Path:
    """An entrant's games: named after the spec and what makes it this agent
    (``agents.registry.agent_identity``: a checkpoint's file and version, a shipped model's
    weights), so a retrained checkpoint is evaluated afresh, never from an older one's games."""
    import hashlib

    from agents.registry import agent_identity

    ident = hashlib.sha256(repr(agent_identity(spec)).encode()).hexdigest()[:8]
    return games_dir(suite, f"{slug(spec)}-{ident}", root)


def check_pairs(suite: Suite, pairs: int | None) -> int:
    pairs = suite.pairs if pairs is None else int(pairs)
    if not 1 <= pairs <= suite.pairs:
        raise ValueError(f"--pairs must be in 1..{suite.pairs} for {suite.name}, got {pairs}")
    return pairs


def play_entrant(
    spec: str,
    suite: Suite,
    pairs: int,
    workers: int = 2,
    address: str | None = None,
    root: Path = RESULTS_ROOT,
    progress: bool = True,
) -> dict[str, Any]:
    """Play (or resume) ``spec`` against each opponent; returns the tournament summary.
    An entrant that is itself an opponent meets the others only."""
    opponents = [o for o in suite.opponents if o != spec]
    out = entrant_dir(suite, spec, root)
    matchups = [[spec, o] for o in opponents]
    return _tournament(suite, [spec, *opponents], pairs, out, workers, address, progress, matchups)


def _tournament(suite, agents, pairs, out, workers, address, progress, matchups=None):
    """A tournament on the suite's seed, mode and env config (the one place they are read),
    its pretrained opponents checked to be the frozen ones."""
    suite.check_weights()
    return run_tournament(
        agents,
        pairs=pairs,
        seed=suite.seed,
        mode=suite.mode,
        out=out,
        workers=workers,
        address=address,
        config=dict(suite.config),
        plots=False,
        progress=progress,
        matchups=matchups,
    )


def play_leaderboard(
    suite: Suite,
    pairs: int,
    workers: int = 2,
    address: str | None = None,
    root: Path = RESULTS_ROOT,
    progress: bool = True,
) -> dict[str, Any]:
    """The opponents' round robin, one two-agent tournament per matchup (each resumable on
    its own, so a new opponent adds only its own matchups); returns the matchups' summaries
    together, with the timing summed."""
    matchups, seconds, new_games = [], 0.0, 0
    for a, b in combinations(suite.opponents, 2):
        out = leaderboard_dir(suite, a, b, root)
        summary = _tournament(suite, [a, b], pairs, out, workers, address, progress)
        matchups += summary["matchups"]
        seconds += summary["timing"]["seconds"]
        new_games += summary["timing"]["new_games"]
    timing = {"seconds": round(seconds, 1), "new_games": new_games, "workers": workers}
    return {"run": {"pairs": pairs}, "matchups": matchups, "timing": timing}


def leaderboard_dir(suite: Suite, a: str, b: str, root: Path = RESULTS_ROOT) -> Path:
    return games_dir(suite, f"leaderboard/{slug(a)}--{slug(b)}", root)


def pair_scores(summary_dir: Path, a: str, b: str, pairs: int) -> list[float]:
    """A's duplicate score in each finished pair of a matchup (from ``results.jsonl``)."""
    from ..tournament.results import read_results

    done = read_results(Path(summary_dir) / "results.jsonl")
    out = []
    for k in range(pairs):
        g0, g1 = done.get(game_id(a, b, k, 0)), done.get(game_id(a, b, k, 1))
        if g0 is not None and g1 is not None:
            out.append(pair_score(team_view(g0["record"], 0), team_view(g1["record"], 1)))
    return out


def encode_scores(scores: list[float]) -> str:
    """Pair scores as one digit each: 2 win, 1 tie, 0 loss (compact and diffable)."""
    return "".join(str(int(2 * s)) for s in scores)


def decode_scores(text: str) -> list[float]:
    return [int(c) / 2.0 for c in text]


def reference_path(suite: Suite) -> Path:
    return REFERENCE_DIR / f"{suite.name}.json"


def load_reference(suite: Suite) -> dict[str, Any] | None:
    """The suite's frozen leaderboard: the opponents' pair scores among themselves (None
    until ``--leaderboard`` has been run for it)."""
    path = reference_path(suite)
    if not path.exists():
        return None
    ref = json.loads(path.read_text(encoding="utf-8"))
    if ref.get("suite") != suite.as_dict():
        raise ValueError(f"{path} was made for another definition of {suite.name}")
    return ref


def write_reference(suite: Suite, summary: dict[str, Any], root: Path) -> dict[str, Any]:
    """Freeze the leaderboard's results: every matchup's statistics and pair scores."""
    matchups = []
    for m in summary["matchups"]:
        d = leaderboard_dir(suite, m["a"], m["b"], root)
        scores = pair_scores(d, m["a"], m["b"], summary["run"]["pairs"])
        stats = {k: v for k, v in m.items() if k != "pair_gains"}
        matchups.append({**stats, "pair_scores": encode_scores(scores)})
    ref = {"suite": suite.as_dict(), "matchups": matchups}
    path = reference_path(suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ref, indent=1) + "\n", encoding="utf-8")
    return ref


__all__ = ["get_suite", "play_entrant", "play_leaderboard", "load_reference", "write_reference"]
