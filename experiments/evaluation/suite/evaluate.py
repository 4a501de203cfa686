"""``evaluate`` (entrants against a suite's opponents) and ``leaderboard`` (the opponents'
round robin, frozen as the suite's reference, ``docs/leaderboard.md`` and the zoo's cards)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .definition import Suite, get_suite
from .report import citation, comparable, entrant_table, ratings, write_report
from .run import (
    RESULTS_ROOT,
    check_pairs,
    entrant_dir,
    games_dir,
    load_reference,
    pair_scores,
    play_entrant,
    play_leaderboard,
    slug,
    write_reference,
)

REPO = Path(__file__).resolve().parents[3]
# the leaderboard document and the cards are rewritten only in a source checkout
SOURCE_CHECKOUT = (REPO / "pyproject.toml").is_file() and (REPO / "docs").is_dir()
LEADERBOARD_DOC = REPO / "docs" / "leaderboard.md"


def evaluate(
    specs: list[str],
    suite: Suite | str | None = None,
    pairs: int | None = None,
    workers: int = 2,
    address: str | None = None,
    out: str | Path | None = None,
    root: str | Path = RESULTS_ROOT,
    progress: bool = True,
    update_cards: bool = False,
) -> dict[str, Any]:
    """Play every entrant against the suite's opponents (resuming what is played) and write
    ``report.json``, ``report.md`` and ``report.png`` to ``out`` (default
    ``results/eval/<suite>/<entrants>``). Returns the report.

    ``update_cards``: each entrant is a shipped model (``pretrained:NAME``); its table and
    rating go into its model card, as a leaderboard's do for the suite's opponents. So a
    model shipped after a suite was frozen is rated on that suite's scale without a new
    version. Only full pairs against the frozen reference, checked before any game."""
    suite = suite if isinstance(suite, Suite) else get_suite(suite)
    if not specs:
        raise ValueError("name at least one agent spec to evaluate")
    pairs = check_pairs(suite, pairs)
    reference = load_reference(suite)
    if update_cards:
        _check_card_request(suite, specs, pairs, reference is not None)
    root = Path(root)
    t0 = time.perf_counter()
    played, scores = {}, {}
    for spec in specs:
        played[spec] = play_entrant(spec, suite, pairs, workers, address, root, progress)
        d = entrant_dir(suite, spec, root)
        scores[spec] = {o: pair_scores(d, spec, o, pairs) for o in suite.opponents if o != spec}
    rated = ratings(suite, scores, reference)
    by_agent = {r["agent"]: r for r in rated}
    entrants = []
    for spec in specs:
        table = entrant_table(spec, played[spec])
        ok = comparable(suite, table, reference is not None)
        entrants.append(
            {
                "spec": spec,
                "table": table,
                "rating": by_agent.get(spec),
                "comparable": ok,
                "citation": citation(suite, spec, table, by_agent.get(spec), ok),
            }
        )
    report = {
        "suite": suite.as_dict(),
        "entrants": entrants,
        "ratings": rated,
        "reference": reference is not None,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    out = Path(out) if out else root / suite.name / "-".join(slug(s) for s in specs)[:120]
    write_report(report, out)
    if update_cards:
        for e in entrants:
            name = e["spec"].split(":", 1)[1]
            command = (
                f"python -m experiments.evaluate pretrained:{name} --suite {suite.name} --card"
            )
            _update_cards(suite, [e], command)
    report["out"] = str(out)
    return report


def flip(m: dict[str, Any]) -> dict[str, Any]:
    """A matchup's statistics from B's side."""
    r = {"pairs": m["pairs"], "deals": m["deals"]}
    for k in ("dup_win_rate", "deal_win_rate"):
        r[k], r[k + "_ci"] = 1.0 - m[k], [1.0 - m[k + "_ci"][1], 1.0 - m[k + "_ci"][0]]
    r["mean_gain"], r["mean_gain_ci"] = (
        -m["mean_gain"],
        [-m["mean_gain_ci"][1], -m["mean_gain_ci"][0]],
    )
    return r


def leaderboard(
    suite: Suite | str | None = None,
    pairs: int | None = None,
    workers: int = 2,
    address: str | None = None,
    root: str | Path = RESULTS_ROOT,
    progress: bool = True,
    doc: str | Path | None = LEADERBOARD_DOC,
    update_cards: bool = True,
    force: bool = False,
) -> dict[str, Any]:
    """Play the opponents' round robin; freeze it as the suite's reference (only with the
    full pairs), write the leaderboard document and the strength table of every shipped
    model's card."""
    suite = suite if isinstance(suite, Suite) else get_suite(suite)
    pairs = check_pairs(suite, pairs)
    t0 = time.perf_counter()
    summary = play_leaderboard(suite, pairs, workers, address, Path(root), progress)
    seconds = time.perf_counter() - t0
    full = pairs == suite.pairs
    d = games_dir(suite, "leaderboard", Path(root))
    reference = None
    if full:
        _check_reproduces(suite, summary, Path(root), force)
        reference = write_reference(suite, summary, Path(root))
    # the leaderboard's own games (also with fewer pairs): one anchored fit of them
    rated = ratings(suite, {}, reference or _as_reference(suite, summary, Path(root)))
    tables: dict[str, dict[str, Any]] = {o: {} for o in suite.opponents}
    for m in summary["matchups"]:
        stats = {
            k: v
            for k, v in m.items()
            if k in ("pairs", "deals")
            or k.startswith(("dup_win_rate", "deal_win_rate", "mean_gain"))
        }
        tables[m["a"]][m["b"]] = stats
        tables[m["b"]][m["a"]] = flip(m)
    by_agent = {r["agent"]: r for r in rated}
    entrants = [
        {
            "spec": o,
            "table": tables[o],
            "rating": by_agent.get(o),
            "comparable": full,
            "citation": citation(suite, o, tables[o], by_agent.get(o), full),
        }
        for o in sorted(suite.opponents, key=lambda o: -by_agent.get(o, {}).get("rating", 0))
    ]
    timing = summary.get("timing", {})
    report = {
        "suite": suite.as_dict(),
        "entrants": entrants,
        "ratings": rated,
        "reference": full,
        "seconds": round(seconds, 1),
        "timing": timing,
    }
    write_report(report, d)
    if doc is not None and full and SOURCE_CHECKOUT:
        from .leaderboard_doc import write_leaderboard_doc

        write_leaderboard_doc(report, Path(doc))
    if update_cards and full and SOURCE_CHECKOUT:
        _update_cards(suite, entrants)
    report["out"] = str(d)
    return report


def _check_reproduces(suite: Suite, summary: dict[str, Any], root: Path, force: bool) -> None:
    """A frozen reference is replaced only by the same games (a reproduction), or with
    ``force`` (a suite being made, before it is published)."""
    from .run import load_reference

    if force:
        return
    old = load_reference(suite)
    if old is None:
        return
    new = _as_reference(suite, summary, root)
    old_scores = {(m["a"], m["b"]): m["pair_scores"] for m in old["matchups"]}
    new_scores = {(m["a"], m["b"]): m["pair_scores"] for m in new["matchups"]}
    if old_scores != new_scores:
        differ = [f"{a} vs {b}" for (a, b), v in new_scores.items() if old_scores.get((a, b)) != v]
        raise ValueError(
            f"the games differ from {suite.name}'s frozen reference ({', '.join(differ)}): a "
            "published suite does not change; make a new suite version (or --force while the "
            "suite is not yet published)"
        )
    print(f"the leaderboard reproduces {suite.name}'s frozen reference game for game")


def _as_reference(suite: Suite, summary: dict[str, Any], root: Path) -> dict[str, Any]:
    """The leaderboard's pair scores as a reference (for a run with fewer pairs)."""
    from .run import encode_scores, leaderboard_dir

    rows = []
    for m in summary["matchups"]:
        d = leaderboard_dir(suite, m["a"], m["b"], root)
        scores = pair_scores(d, m["a"], m["b"], summary["run"]["pairs"])
        rows.append({"a": m["a"], "b": m["b"], "pair_scores": encode_scores(scores)})
    return {"matchups": rows}


def _check_card_request(suite: Suite, specs: list[str], pairs: int, reference: bool) -> None:
    """``ValueError`` unless the entrants' cards can take what this evaluation measures."""
    from agents.zoo import model_names

    if not SOURCE_CHECKOUT:
        raise ValueError("--card rewrites the shipped cards: run it in a source checkout")
    for spec in specs:
        kind, _, name = spec.partition(":")
        if kind != "pretrained" or name not in model_names():
            raise ValueError(
                f"--card takes shipped models by exact name (pretrained:NAME of "
                f"{', '.join(model_names())}), got {spec!r}"
            )
        if spec in suite.opponents:
            raise ValueError(
                f"{spec} is an opponent of {suite.name}: its card takes the leaderboard's row "
                "(--leaderboard)"
            )
    if not reference:
        raise ValueError(f"--card: {suite.name} has no frozen reference to rate against")
    if pairs != suite.pairs:
        raise ValueError(f"--card needs the suite's {suite.pairs} pairs (got --pairs {pairs})")


def _update_cards(suite: Suite, entrants: list[dict[str, Any]], command: str | None = None) -> None:
    """Each shipped model's card gets its row of the leaderboard (or, with ``command``, of
    an entrant's evaluation: how to reproduce it)."""
    from agents import zoo
    from agents.zoo.store import load_card, save_card

    for e in entrants:
        if not e["spec"].startswith("pretrained:"):
            continue
        path = zoo.MODELS_DIR / f"{e['spec'].split(':', 1)[1]}.json"
        card = load_card(path)
        rating = e["rating"] or {}
        card["strength"] = {
            "suite": suite.name,
            "rating": rating.get("rating"),
            "rating_ci": rating.get("rating_ci"),
            "opponents": e["table"],
            "citation": e["citation"],
            "command": command
            or f"python -m experiments.evaluate --leaderboard --suite {suite.name}",
        }
        save_card(path, card)
