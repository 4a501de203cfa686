"""Two agents compared on the same duplicate deals: the per-pair difference.

Two tournaments (or suite runs) that played the same pair seeds against the same opponent
(the same ``--seed`` and game options) can be compared deal for deal: for each pair both
played, the difference of the two agents' level gain over the pair's two games. Card luck
cancels twice (within a pair, and between the arms), so the interval of the mean difference
is much narrower than the difference of two separate intervals. This is how ablations and
the search agent are measured (issues 24 and 25)::

    python -m experiments.evaluation.paired \\
        results/tournament/A/results.jsonl "search:pretrained:default" \\
        results/eval/.../results.jsonl pretrained:default-v1 --opponent heuristic

Each side is a ``results.jsonl`` (or the folder holding it) and the agent spec whose games
are read; the opponent must be the same spec on both sides (inferred when there is one).

An arm may hold several runs (``--x-also``/``--y-also``, e.g. training seeds): they pool as
their per-pair mean, and the pooled interval resamples pairs only. With ``--by-seed`` (the
i-th run of each arm shares a training seed), each seed's runs are also compared on their
own, and the per-seed differences give an interval with the seeds as the unit (Student t):
wider, since it also holds the run-to-run spread of training.

With ``--by-level`` (single deals), the pairs are also split by the deal's level (what
``--random-levels`` varies): each arm's level gain per deal at each level and the difference,
to see where an arm gains or loses (a model weak at some levels, a change that helps there).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from guandan_env.core.cards import RANK_TEXT

from .duplicate import team_view
from .ratings import bootstrap_ci, pair_score
from .tournament.results import read_results


@dataclass(frozen=True)
class PairOutcome:
    """One agent's duplicate pair: its total level gain, deals, and the pair's score."""

    gain: float
    deals: int
    score: float
    level: int | None = None  # the deal's level (rank index) of a single-deal pair


def results_file(path: str | Path) -> Path:
    p = Path(path)
    p = p / "results.jsonl" if p.is_dir() else p
    if not p.is_file():
        raise FileNotFoundError(f"no results file at {p} (a tournament's results.jsonl)")
    return p


def opponents_of(rows: dict[str, dict], agent: str) -> set[str]:
    """The specs ``agent`` played against in these results."""
    return {
        r["b"] if r["a"] == agent else r["a"] for r in rows.values() if agent in (r["a"], r["b"])
    }


def pair_outcomes(rows: dict[str, dict], agent: str, opponent: str) -> dict[int, PairOutcome]:
    """``agent``'s finished pairs against ``opponent``, keyed by the pair's deal seed (the
    same seed means the same deals, whatever the tournament's other entrants)."""
    games: dict[int, dict[int, dict]] = {}
    levels: dict[int, int] = {}
    for r in rows.values():
        if {r["a"], r["b"]} != {agent, opponent} or agent == opponent:
            continue
        deals = r["record"]["deals"]
        if r["record"].get("mode") == "deal" and len(deals) == 1:
            levels[int(r["record"]["seed"])] = int(deals[0]["deal_level"])
        # A sits on seats 0/2 (team 0) in swap 0 and on 1/3 in swap 1 (duplicate.seated)
        team = r["swap"] if r["a"] == agent else 1 - r["swap"]
        games.setdefault(int(r["record"]["seed"]), {})[int(r["swap"])] = team_view(
            r["record"], team
        )
    out = {}
    for seed, sides in games.items():
        if set(sides) == {0, 1}:
            s0, s1 = sides[0], sides[1]
            out[seed] = PairOutcome(
                float(s0["gain"] + s1["gain"]),
                s0["deals"] + s1["deals"],
                pair_score(s0, s1),
                levels.get(seed),
            )
    return out


def pool(runs: list[dict[int, PairOutcome]]) -> dict[int, PairOutcome]:
    """Several runs of one arm (e.g. two training seeds) as one side: per pair all of them
    played, the mean of their gains and scores (an ablation's arm, issue 24)."""
    common = set(runs[0]).intersection(*runs[1:])
    out = {}
    for seed in common:
        outcomes = [r[seed] for r in runs]
        if len({o.deals for o in outcomes}) != 1:
            raise ValueError("pooled runs differ in a pair's number of deals (another mode?)")
        out[seed] = PairOutcome(
            float(np.mean([o.gain for o in outcomes])),
            outcomes[0].deals,
            float(np.mean([o.score for o in outcomes])),
            outcomes[0].level,
        )
    return out


def compare(x: dict[int, PairOutcome], y: dict[int, PairOutcome], seed: int = 0) -> dict[str, Any]:
    """Statistics of ``x`` minus ``y`` over the pairs both played (95% bootstrap intervals
    over pairs): the level gain per deal of each and their difference, the duplicate win rate
    of each and its difference, and how many pairs came out differently."""
    common = sorted(set(x) & set(y))
    if not common:
        raise ValueError("the two sides share no duplicate pair (same --seed and game options?)")
    gx = np.array([x[s].gain for s in common], dtype=np.float64)
    gy = np.array([y[s].gain for s in common], dtype=np.float64)
    deals = np.array([x[s].deals for s in common], dtype=np.float64)
    if not np.array_equal(deals, [y[s].deals for s in common]):
        raise ValueError("paired games differ in their number of deals (another mode?)")
    sx = np.array([x[s].score for s in common], dtype=np.float64)
    sy = np.array([y[s].score for s in common], dtype=np.float64)

    def ci(values, weights=None) -> dict[str, float | list[float]]:
        est, lo, hi = bootstrap_ci(values, weights, seed=seed)
        return {"mean": round(est, 4), "ci": [round(lo, 4), round(hi, 4)]}

    return {
        "pairs": len(common),
        "only_x": len(set(x) - set(y)),
        "only_y": len(set(y) - set(x)),
        "gain_per_deal_x": ci(gx, deals),
        "gain_per_deal_y": ci(gy, deals),
        "gain_per_deal_diff": ci(gx - gy, deals),
        "dup_win_rate_x": ci(sx),
        "dup_win_rate_y": ci(sy),
        "dup_win_rate_diff": ci(sx - sy),
        "pairs_differing": int(np.count_nonzero(gx != gy)),
    }


def by_level(x: dict[int, PairOutcome], y: dict[int, PairOutcome]) -> list[dict[str, Any]]:
    """``compare`` over the pairs of each deal level both sides played, lowest level first
    (single-deal pairs only: a match's deals have many levels)."""
    common = set(x) & set(y)
    levels = sorted({x[s].level for s in common} - {None})
    if not levels or any(x[s].level is None for s in common):
        raise ValueError("--by-level needs single-deal pairs (tournaments in deal mode)")
    out = []
    for level in levels:
        keep = {s for s in common if x[s].level == level}
        c = compare({s: x[s] for s in keep}, {s: y[s] for s in keep})
        out.append({"level": level, "rank": RANK_TEXT[level], **c})
    return out


def format_by_level(rows: list[dict[str, Any]]) -> str:
    lines = ["  by deal level (pairs; level gain per deal of each; difference [95%]):"]
    for r in rows:
        lines.append(
            f"    {r['rank']:>2}  {r['pairs']:4d}  {r['gain_per_deal_x']['mean']:+.3f} vs "
            f"{r['gain_per_deal_y']['mean']:+.3f}; {_fmt(r['gain_per_deal_diff'])}"
        )
    return "\n".join(lines)


def _fmt(stat: dict, pct: bool = False, sign: bool = False) -> str:
    f = (
        (lambda v: f"{100 * v:+.1f}" if sign else f"{100 * v:.1f}")
        if pct
        else (lambda v: f"{v:+.3f}")
    )
    unit = " pts" if pct and sign else ("%" if pct else "")
    return f"{f(stat['mean'])}{unit} [{f(stat['ci'][0])}, {f(stat['ci'][1])}]"


def format_comparison(name_x: str, name_y: str, opponent: str, c: dict) -> str:
    lines = [
        f"{name_x} minus {name_y}, on the same {c['pairs']} duplicate pairs vs {opponent} "
        f"(95% bootstrap intervals; {c['pairs_differing']} pairs differ in level gain)",
        f"  level gain per deal: {_fmt(c['gain_per_deal_x'])} vs {_fmt(c['gain_per_deal_y'])}"
        f"; difference {_fmt(c['gain_per_deal_diff'])}",
        f"  duplicate win rate:  {_fmt(c['dup_win_rate_x'], True)} vs "
        f"{_fmt(c['dup_win_rate_y'], True)}; difference {_fmt(c['dup_win_rate_diff'], True, True)}",
    ]
    if c["only_x"] or c["only_y"]:
        lines.append(f"  unpaired, left out: {c['only_x']} of {name_x}, {c['only_y']} of {name_y}")
    return "\n".join(lines)


# two-sided 95% quantiles of Student's t by degrees of freedom (1..30); normal beyond
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def t_quantile_975(df: int) -> float:
    """Student's t two-sided 95% quantile (1.96 beyond 30 degrees of freedom)."""
    if df < 1:
        raise ValueError(f"a t interval needs at least one degree of freedom, got {df}")
    return _T975[df - 1] if df <= len(_T975) else 1.96


def over_seeds(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-seed comparisons (``compare`` of the i-th run of each arm) summarised with the
    seeds as the unit: the mean of their differences and its 95% t interval."""
    if len(per_seed) < 2:
        raise ValueError("an interval over seeds needs at least two seeds per arm")
    out: dict[str, Any] = {"seeds": len(per_seed)}
    for key in ("gain_per_deal_diff", "dup_win_rate_diff"):
        d = np.array([c[key]["mean"] for c in per_seed], dtype=np.float64)
        half = t_quantile_975(d.size - 1) * float(d.std(ddof=1)) / np.sqrt(d.size)
        m = float(d.mean())
        out[key] = {"mean": round(m, 4), "ci": [round(m - half, 4), round(m + half, 4)]}
    return out


def format_over_seeds(s: dict[str, Any]) -> str:
    return (
        f"  over the {s['seeds']} seeds (the i-th run of each arm; seeds as the unit, t interval):"
        f" level gain per deal {_fmt(s['gain_per_deal_diff'])}; duplicate win rate "
        f"{_fmt(s['dup_win_rate_diff'], True, True)}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m experiments.evaluation.paired",
        description="Compare two agents on the duplicate pairs they both played against one "
        "opponent (module docstring).",
    )
    ap.add_argument("results_x", help="results.jsonl (or its folder) of the first agent")
    ap.add_argument("agent_x", help="the first agent's spec in those results")
    ap.add_argument("results_y", help="results.jsonl (or its folder) of the second agent")
    ap.add_argument("agent_y", help="the second agent's spec in those results")
    for side in ("x", "y"):
        ap.add_argument(
            f"--{side}-also",
            nargs=2,
            action="append",
            default=[],
            metavar=("RESULTS", "AGENT"),
            help=f"another run of the {'first' if side == 'x' else 'second'} arm (e.g. a "
            "second training seed), pooled with it: per pair, the mean over the arm's runs",
        )
    ap.add_argument(
        "--by-seed",
        action="store_true",
        help="the i-th run of each arm shares a training seed: compare each seed's runs too, "
        "and give an interval with the seeds as the unit (needs as many runs in each arm, "
        "at least two)",
    )
    ap.add_argument(
        "--by-level",
        action="store_true",
        help="also split the pairs by the deal's level (single deals, e.g. --random-levels)",
    )
    ap.add_argument("--opponent", help="the common opponent's spec (default: the only one)")
    ap.add_argument("--json", type=Path, help="also write the comparison here")
    args = ap.parse_args(argv)
    arms = {
        "x": [(args.results_x, args.agent_x), *map(tuple, args.x_also)],
        "y": [(args.results_y, args.agent_y), *map(tuple, args.y_also)],
    }
    if args.by_seed and not len(arms["x"]) == len(arms["y"]) >= 2:
        ap.error(
            f"--by-seed needs as many runs in each arm, at least two (got {len(arms['x'])} "
            f"and {len(arms['y'])}; add them with --x-also and --y-also, in seed order)"
        )
    try:
        rows = {k: [read_results(results_file(r)) for r, _ in runs] for k, runs in arms.items()}
        opp = args.opponent
        if opp is None:
            both = set.intersection(
                *(
                    opponents_of(rs, a)
                    for k in arms
                    for rs, (_, a) in zip(rows[k], arms[k], strict=True)
                )
            )
            if len(both) != 1:
                raise ValueError(
                    f"name the common opponent with --opponent (candidates: {sorted(both)})"
                )
            opp = both.pop()
        sides, found_by_arm = {}, {}
        for k, runs in arms.items():
            found = []
            for rs, (_, agent) in zip(rows[k], runs, strict=True):
                outcomes = pair_outcomes(rs, agent, opp)
                if not outcomes:
                    raise ValueError(
                        f"no finished pair of {agent!r} against {opp!r} in its results"
                    )
                found.append(outcomes)
            found_by_arm[k] = found
            sides[k] = pool(found) if len(found) > 1 else found[0]
            dropped = len(set().union(*found)) - len(sides[k])
            if dropped:
                print(f"note: {dropped} pairs left out, not played by every run of one arm")
        c = compare(sides["x"], sides["y"])
        if args.by_seed:
            per_seed = [
                compare(fx, fy) for fx, fy in zip(found_by_arm["x"], found_by_arm["y"], strict=True)
            ]
            c["per_seed"] = per_seed
            c["over_seeds"] = over_seeds(per_seed)
        if args.by_level:
            c["by_level"] = by_level(sides["x"], sides["y"])
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    name_x, name_y = (" + ".join(a for _, a in arms[k]) for k in ("x", "y"))
    print(format_comparison(name_x, name_y, opp, c))
    if args.by_seed:
        for i, (cs, (_, ax), (_, ay)) in enumerate(
            zip(c["per_seed"], arms["x"], arms["y"], strict=True), 1
        ):
            print(
                f"  seed pair {i} ({ax} minus {ay}, {cs['pairs']} pairs): level gain per deal "
                f"{_fmt(cs['gain_per_deal_diff'])}; duplicate win rate "
                f"{_fmt(cs['dup_win_rate_diff'], True, True)}"
            )
        print(format_over_seeds(c["over_seeds"]))
    if args.by_level:
        print(format_by_level(c["by_level"]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "x": args.agent_x,
            "y": args.agent_y,
            "x_runs": [list(r) for r in arms["x"]],
            "y_runs": [list(r) for r in arms["y"]],
            "opponent": opp,
            **c,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
