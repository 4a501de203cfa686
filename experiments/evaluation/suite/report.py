"""A suite's report: per opponent the duplicate win rate, deal win rate and level gain per
deal with 95% intervals, Bradley–Terry ratings on the suite's anchored scale, a citation
line, and the same as JSON, Markdown and a plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from guandan_env.env_version import ENV_VERSION

from ..ratings import ELO_PER_LOGIT, elo_table, rating_against
from .definition import ANCHOR_RATING, Suite
from .run import decode_scores

STATS = ("dup_win_rate", "deal_win_rate", "mean_gain")


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("guandan-env")
    except PackageNotFoundError:
        return "unknown"


def entrant_table(spec: str, summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per opponent: the statistics of ``spec`` (side A) against it."""
    out = {}
    for m in summary["matchups"]:
        if m["a"] != spec:
            continue
        out[m["b"]] = {"pairs": m["pairs"], "deals": m["deals"]}
        for k in STATS:
            out[m["b"]][k], out[m["b"]][k + "_ci"] = m[k], m[k + "_ci"]
    return out


def ratings(
    suite: Suite,
    entrants: dict[str, dict[str, list[float]]],
    reference: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    """Bradley–Terry ratings of the opponents and ``entrants`` (``{spec: {opponent: pair
    scores}}``) on the suite's scale, ``suite.anchor`` fixed at ``ANCHOR_RATING``.

    With the frozen reference the opponents' ratings are its fit alone, held fixed, and
    each entrant is fitted on its own against them (``ratings.rating_against``): rating an
    agent never moves the scale or another entrant. Its interval is conditional on the
    opponents' ratings. Without a reference, one joint fit of everything given (not
    comparable with other reports)."""
    if reference is None:
        return _joint(suite, entrants)
    ref = _joint(suite, {}, reference)
    by_agent = {r["agent"]: r for r in ref}
    rows = list(ref)
    for spec, by_opponent in entrants.items():
        if spec in by_agent:
            continue  # a shipped model: its rating is the reference's
        opps = [o for o in by_opponent if o in by_agent and by_opponent[o]]
        if not opps:
            continue
        logits = [(by_agent[o]["rating"] - ANCHOR_RATING) / ELO_PER_LOGIT for o in opps]
        theta, se = rating_against(logits, [by_opponent[o] for o in opps])
        r, h = ANCHOR_RATING + ELO_PER_LOGIT * theta, 1.96 * ELO_PER_LOGIT * se
        rows.append(
            {
                "agent": spec,
                "rating": float(r),
                "rating_ci": [float(r - h), float(r + h)],
                "se": float(ELO_PER_LOGIT * se),
                "comparisons": int(sum(len(by_opponent[o]) for o in opps)),
            }
        )
    rows.sort(key=lambda x: (-x["rating"], x["agent"]))
    return rows


def _joint(
    suite: Suite,
    entrants: dict[str, dict[str, list[float]]],
    reference: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One anchored fit over the reference's matchups and the entrants' games."""
    names = list(suite.opponents) + [s for s in entrants if s not in suite.opponents]
    index = {n: i for i, n in enumerate(names)}
    outcomes: list[tuple[int, int, float]] = []
    for m in (reference or {}).get("matchups", []):
        outcomes += [(index[m["a"]], index[m["b"]], s) for s in decode_scores(m["pair_scores"])]
    for spec, by_opponent in entrants.items():
        for opp, scores in by_opponent.items():
            outcomes += [(index[spec], index[opp], s) for s in scores]
    if not outcomes:
        return []
    rated = {i for i, j, _ in outcomes} | {j for i, j, _ in outcomes}
    names = [n for n in names if index[n] in rated]
    keep = {index[n]: k for k, n in enumerate(names)}
    outcomes = [(keep[i], keep[j], s) for i, j, s in outcomes]
    anchor = suite.anchor if suite.anchor in names else None
    return elo_table(names, outcomes, anchor=anchor, anchor_rating=ANCHOR_RATING)


def comparable(suite: Suite, table: dict[str, dict[str, Any]], reference: bool = True) -> bool:
    """Comparable with other reports of the suite: every opponent met over all its pairs,
    rated against the frozen reference."""
    return reference and bool(table) and all(r["pairs"] >= suite.pairs for r in table.values())


def citation(suite: Suite, spec: str, table: dict, rating: dict | None, ok: bool) -> str:
    h = table.get(suite.anchor)
    parts = [f"{spec} on {suite.name} (guandan-env {package_version()}, env {ENV_VERSION})"]
    if h:
        lo, hi = h["dup_win_rate_ci"]
        parts.append(
            f"{100 * h['dup_win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] duplicate win "
            f"rate and {h['mean_gain']:+.2f} [{h['mean_gain_ci'][0]:+.2f}, "
            f"{h['mean_gain_ci'][1]:+.2f}] levels/deal vs {suite.anchor}"
        )
    if rating:
        lo, hi = rating["rating_ci"]
        parts.append(
            f"rating {rating['rating']:.0f} [{lo:.0f}, {hi:.0f}] ({suite.anchor} = "
            f"{ANCHOR_RATING:.0f})"
        )
    pairs = min((r["pairs"] for r in table.values()), default=0)
    parts.append(
        f"{pairs} pairs per opponent" + ("" if ok else f", NOT COMPARABLE (< {suite.pairs})")
    )
    return "; ".join(parts)


def _pct(x: float, ci: list[float]) -> str:
    return f"{100 * x:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _gain(x: float, ci: list[float]) -> str:
    return f"{x:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}]"


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown tables (what ``report.md`` and the leaderboard hold)."""
    suite = report["suite"]
    lines = []
    for e in report["entrants"]:
        lines += [
            f"### {e['spec']}",
            "",
            "" if e["comparable"] else "**Not comparable**: fewer pairs than the suite's.\n",
            "| opponent | pairs | duplicate win rate | deal win rate | levels/deal |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for opp, r in e["table"].items():
            lines.append(
                f"| {opp} | {r['pairs']} | {_pct(r['dup_win_rate'], r['dup_win_rate_ci'])} | "
                f"{_pct(r['deal_win_rate'], r['deal_win_rate_ci'])} | "
                f"{_gain(r['mean_gain'], r['mean_gain_ci'])} |"
            )
        lines += ["", f"Cite as: {e['citation']}", ""]
    if report["ratings"]:
        lines += [
            f"### Ratings (Bradley–Terry on duplicate pairs, {suite['anchor']} = "
            f"{ANCHOR_RATING:.0f}, Elo scale, 95% intervals)",
            "",
            "| agent | rating | 95% interval | pairs |",
            "| --- | ---: | ---: | ---: |",
        ]
        for r in report["ratings"]:
            lo, hi = r["rating_ci"]
            lines.append(
                f"| {r['agent']} | {r['rating']:.0f} | [{lo:.0f}, {hi:.0f}] | {r['comparisons']} |"
            )
        lines.append("")
    return "\n".join(line for line in lines if line is not None)


def plot(report: dict[str, Any], path: Path) -> bool:
    """Each entrant's duplicate win rate per opponent with its interval (needs matplotlib,
    the ``analysis`` extra; False without it)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        return False
    entrants = report["entrants"]
    opponents = sorted(
        {o for e in entrants for o in e["table"]}, key=report["suite"]["opponents"].index
    )
    fig, ax = plt.subplots(figsize=(7, 1.5 + 0.5 * len(opponents) * max(1, len(entrants))))
    y = 0
    ticks, labels = [], []
    for e in entrants:
        for o in opponents:
            r = e["table"].get(o)
            if r is None:
                continue
            lo, hi = r["dup_win_rate_ci"]
            ax.errorbar(
                [100 * r["dup_win_rate"]],
                [y],
                xerr=[[100 * (r["dup_win_rate"] - lo)], [100 * (hi - r["dup_win_rate"])]],
                fmt="o",
                capsize=4,
            )
            ticks.append(y)
            labels.append(f"{e['spec']} vs {o}")
            y -= 1
        y -= 0.5
    ax.axvline(50, color="grey", linewidth=0.8)
    ax.set_yticks(ticks, labels, fontsize=8)
    ax.set_xlabel("duplicate win rate, % of pairs (ties ½), 95% interval")
    ax.set_title(report["suite"]["name"])
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_report(report: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (out / "report.md").write_text(markdown(report), encoding="utf-8")
    plot(report, out / "report.png")
