"""A run's summary: per-matchup statistics with intervals, ratings, tables and plots."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

from ..duplicate import team_view
from ..ratings import elo_table, matchup_stats, pair_score
from .games import game_id


def summarise(run: dict, results: dict[str, dict]) -> dict[str, Any]:
    """Per-matchup statistics and ratings from finished games (deterministic in the ids)."""
    agents, pairs, seed = run["agents"], run["pairs"], run["seed"]
    matchups, outcomes = [], []
    for ia, ib in combinations(range(len(agents)), 2):
        a, b = agents[ia], agents[ib]
        sides = []
        for k in range(pairs):
            g0, g1 = results.get(game_id(a, b, k, 0)), results.get(game_id(a, b, k, 1))
            if g0 is None or g1 is None:
                continue
            s0, s1 = team_view(g0["record"], 0), team_view(g1["record"], 1)
            sides.append((s0, s1))
        if not sides:
            continue
        stats = matchup_stats(sides, seed=seed)
        matchups.append({"a": a, "b": b, **stats, "pair_gains": _pair_gains(sides)})

        outcomes += [(ia, ib, pair_score(s0, s1)) for s0, s1 in sides]
    ratings = elo_table(agents, outcomes) if outcomes else []
    return {"run": run, "matchups": matchups, "ratings": ratings}


def _pair_gains(sides) -> list[float]:
    """A's level gain per deal in each pair (for the histogram)."""
    return [(a["gain"] + b["gain"]) / max(1, a["deals"] + b["deals"]) for a, b in sides]


def _fmt_ci(x: float, ci: list[float], pct: bool = False) -> str:
    if pct:
        return f"{100 * x:5.1f}% [{100 * ci[0]:5.1f}, {100 * ci[1]:5.1f}]"
    return f"{x:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"


def format_tables(summary: dict[str, Any]) -> str:
    """Readable matchup and rating tables for the terminal."""
    match_mode = summary["run"]["mode"] == "match"
    head = ["A", "B", "pairs", "dup win (ties ½)", "ties", "deal win", "gain/deal (A)"]
    if match_mode:
        head.append("match win")
    rows = []
    for m in summary["matchups"]:
        row = [
            m["a"],
            m["b"],
            str(m["pairs"]),
            _fmt_ci(m["dup_win_rate"], m["dup_win_rate_ci"], pct=True),
            str(m["dup_ties"]),
            _fmt_ci(m["deal_win_rate"], m["deal_win_rate_ci"], pct=True),
            _fmt_ci(m["mean_gain"], m["mean_gain_ci"]),
        ]
        if match_mode:
            row.append(_fmt_ci(m["match_win_rate"], m["match_win_rate_ci"], pct=True))
        rows.append(row)
    out = [_table(head, rows)]
    rrows = [
        [
            r["agent"],
            f"{r['rating']:.0f}",
            f"[{r['rating_ci'][0]:.0f}, {r['rating_ci'][1]:.0f}]",
            str(r["comparisons"]),
        ]
        for r in summary["ratings"]
    ]
    out.append(_table(["agent", "Elo", "95% interval", "pairs"], rrows))
    return "\n\n".join(out)


def _table(head: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)
    ]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
    sep = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join([line, sep, *body])


def write_outputs(out: Path, summary: dict[str, Any], plots: bool = True) -> None:
    """summary.json, summary.csv, ratings.csv and (optionally) the two PNG plots."""
    import csv

    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    cols = [
        "a",
        "b",
        "pairs",
        "games",
        "deals",
        "dup_wins",
        "dup_ties",
        "dup_losses",
        "dup_win_rate",
        "dup_win_rate_ci",
        "deal_win_rate",
        "deal_win_rate_ci",
        "mean_gain",
        "mean_gain_ci",
        "match_win_rate",
        "match_win_rate_ci",
    ]
    with (out / "summary.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(_flat_head(cols))
        for m in summary["matchups"]:
            w.writerow(_flat_row(m, cols))
    with (out / "ratings.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["agent", "rating", "rating_low", "rating_high", "se", "comparisons"])
        for r in summary["ratings"]:
            lo, hi = r["rating_ci"]
            w.writerow(
                [
                    r["agent"],
                    f"{r['rating']:.1f}",
                    f"{lo:.1f}",
                    f"{hi:.1f}",
                    f"{r['se']:.1f}",
                    r["comparisons"],
                ]
            )
    if plots:
        _plots(out, summary)


def _flat_head(cols: list[str]) -> list[str]:
    head = []
    for c in cols:
        head += [c + "_low", c + "_high"] if c.endswith("_ci") else [c]
    return head


def _flat_row(m: dict, cols: list[str]) -> list:
    row: list = []
    for c in cols:
        v = m.get(c)
        if c.endswith("_ci"):
            row += [f"{x:.6g}" for x in v] if v is not None else ["", ""]
        elif isinstance(v, float):
            row.append(f"{v:.6g}")
        else:
            row.append("" if v is None else v)
    return row


def _plots(out: Path, summary: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratings = summary["ratings"]
    fig, ax = plt.subplots(figsize=(6, 1.6 + 0.45 * max(1, len(ratings))))
    ys = list(range(len(ratings)))[::-1]
    xs = [r["rating"] for r in ratings]
    err = [
        [r["rating"] - r["rating_ci"][0] for r in ratings],
        [r["rating_ci"][1] - r["rating"] for r in ratings],
    ]
    ax.errorbar(xs, ys, xerr=err, fmt="o", capsize=4)
    ax.set_yticks(ys, [r["agent"] for r in ratings])
    ax.set_xlabel("Bradley–Terry rating (Elo scale, 95% interval)")
    ax.set_title("Ratings from duplicate pairs")
    fig.tight_layout()
    fig.savefig(out / "ratings.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    bins = [x / 4 - 0.125 for x in range(-13, 14)]
    for m in summary["matchups"]:
        ax.hist(
            m["pair_gains"],
            bins=bins,
            histtype="step",
            linewidth=1.5,
            label=f"{m['a']} vs {m['b']} (mean {m['mean_gain']:+.2f})",
        )
    ax.set_xlabel("A's level gain per deal, per duplicate pair")
    ax.set_ylabel("pairs")
    ax.set_title("Level gain over duplicate pairs")
    if summary["matchups"]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "level_gain_hist.png", dpi=120)
    plt.close(fig)
