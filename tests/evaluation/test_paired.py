"""The paired comparison of two agents on the same duplicate deals (evaluation.paired)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.evaluation import paired
from experiments.evaluation import tournament as tour
from experiments.evaluation.tournament.results import read_results

KW = dict(pairs=4, seed=5, config={"random_tribute": True}, plots=False, progress=False, workers=1)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("paired")
    # the same pair seeds against heuristic, in tournaments with other entrants and order
    tour.run_tournament(["heuristic", "random"], out=root / "x", **KW)
    tour.run_tournament(["heuristic:follow_threshold=0.5", "heuristic"], out=root / "y", **KW)
    return root / "x", root / "y"


def _sides(two_runs):
    """random's pairs in x and the heuristic variant's in y, both against heuristic (in x
    heuristic is A and random B; in y the variant is A and heuristic B)."""
    x, y = two_runs
    rows_x = read_results(paired.results_file(x))
    rows_y = read_results(paired.results_file(y))
    return (
        paired.pair_outcomes(rows_x, "random", "heuristic"),
        paired.pair_outcomes(rows_y, "heuristic:follow_threshold=0.5", "heuristic"),
    )


def test_an_agent_against_itself_on_the_same_seeds_differs_by_nothing(two_runs):
    x, _ = two_runs
    rows = read_results(paired.results_file(x))
    side = paired.pair_outcomes(rows, "random", "heuristic")
    assert len(side) == 4 and all(o.deals == 2 for o in side.values())
    c = paired.compare(side, side)
    assert c["pairs"] == 4 and c["pairs_differing"] == 0
    assert c["gain_per_deal_diff"] == {"mean": 0.0, "ci": [0.0, 0.0]}


def test_the_difference_is_per_pair_and_matches_each_sides_own_table(two_runs, tmp_path, capsys):
    x, y = two_runs
    sx, sy = _sides(two_runs)
    assert set(sx) == set(sy)  # keyed by the deal seed: the same deals
    c = paired.compare(sx, sy)
    own_x = json.loads((x / "summary.json").read_text())["matchups"][0]
    # random's gain is minus heuristic's (A's) gain in x's own table
    assert c["gain_per_deal_x"]["mean"] == pytest.approx(-own_x["mean_gain"], abs=1e-3)
    gx = np.array([sx[s].gain for s in sorted(sx)]) / 2
    gy = np.array([sy[s].gain for s in sorted(sy)]) / 2
    assert c["gain_per_deal_diff"]["mean"] == pytest.approx(float((gx - gy).mean()), abs=1e-4)
    lo, hi = c["gain_per_deal_diff"]["ci"]
    assert lo <= c["gain_per_deal_diff"]["mean"] <= hi

    out = tmp_path / "cmp.json"
    code = paired.main(
        [
            str(x),
            "random",
            str(y / "results.jsonl"),
            "heuristic:follow_threshold=0.5",
            "--json",
            str(out),
        ]
    )  # the opponent is inferred: heuristic is the only common one
    assert code == 0
    printed = capsys.readouterr().out
    assert "on the same 4 duplicate pairs vs heuristic" in printed
    assert json.loads(out.read_text())["pairs"] == 4


def test_bad_input_is_named(two_runs, tmp_path, capsys):
    x, y = two_runs
    assert paired.main([str(tmp_path), "random", str(y), "heuristic"]) == 2
    assert "no results file" in capsys.readouterr().err
    assert paired.main([str(x), "nobody", str(y), "heuristic", "--opponent", "heuristic"]) == 2
    assert "no finished pair of 'nobody'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="share no duplicate pair"):
        paired.compare({1: paired.PairOutcome(1.0, 2, 1.0)}, {2: paired.PairOutcome(1.0, 2, 1.0)})


def test_two_runs_of_an_arm_pool_as_their_per_pair_mean(two_runs, tmp_path, capsys):
    """Issue 24's ablations: two seeds per arm, compared pair for pair as one side each."""
    x, y = two_runs
    a, b = _sides(two_runs)
    pooled = paired.pool([a, b])
    assert set(pooled) == set(a)
    for s, o in pooled.items():
        assert o.gain == pytest.approx((a[s].gain + b[s].gain) / 2)
        assert o.score == pytest.approx((a[s].score + b[s].score) / 2) and o.deals == 2
    # pooling a side with itself changes nothing
    assert paired.compare(paired.pool([a, a]), b) == paired.compare(a, b)

    out = tmp_path / "pooled.json"
    args = [str(x), "random", str(y), "heuristic:follow_threshold=0.5"]
    code = paired.main(
        [*args, "--x-also", str(y), "heuristic:follow_threshold=0.5", "--json", str(out)]
    )
    assert code == 0
    assert "random + heuristic:follow_threshold=0.5 minus" in capsys.readouterr().out
    saved = json.loads(out.read_text())
    assert saved["x_runs"] == [[str(x), "random"], [str(y), "heuristic:follow_threshold=0.5"]]
    assert saved["gain_per_deal_diff"] == paired.compare(pooled, b)["gain_per_deal_diff"]


def test_by_seed_compares_each_seeds_runs_and_gives_an_interval_over_seeds(
    two_runs, tmp_path, capsys
):
    """Issue 24's ablations: with the seeds as the unit the interval holds the run-to-run
    spread that the pooled, pair-resampling interval leaves out."""
    x, y = two_runs
    a, b = _sides(two_runs)
    per_seed = [paired.compare(a, b), paired.compare(b, a)]
    s = paired.over_seeds(per_seed)
    d = per_seed[0]["gain_per_deal_diff"]["mean"]
    assert d != 0  # the two agents differ on these pairs
    # differences d and -d: mean 0, half-width t(1) * sd / sqrt(2) = 12.706 * |d|
    assert s["seeds"] == 2 and s["gain_per_deal_diff"]["mean"] == pytest.approx(0.0, abs=1e-4)
    lo, hi = s["gain_per_deal_diff"]["ci"]
    assert hi == pytest.approx(12.706 * abs(d), abs=2e-4) and lo == pytest.approx(-hi, abs=2e-4)
    assert paired.t_quantile_975(4) == 2.776 and paired.t_quantile_975(100) == 1.96
    with pytest.raises(ValueError, match="at least two seeds"):
        paired.over_seeds(per_seed[:1])
    with pytest.raises(ValueError, match="degree of freedom"):
        paired.t_quantile_975(0)

    out = tmp_path / "by_seed.json"
    va, vb = "random", "heuristic:follow_threshold=0.5"
    code = paired.main(
        [str(x), va, str(y), vb, "--x-also", str(y), vb, "--y-also", str(x), va]
        + ["--by-seed", "--json", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "seed pair 2 (heuristic:follow_threshold=0.5 minus random" in printed
    assert "over the 2 seeds" in printed
    saved = json.loads(out.read_text())
    assert saved["per_seed"] == per_seed and saved["over_seeds"] == s
    # the pooled estimate is the mean of the per-seed ones (the same pairs in every run)
    assert saved["gain_per_deal_diff"]["mean"] == pytest.approx(0.0, abs=1e-4)

    with pytest.raises(SystemExit):
        paired.main([str(x), va, str(y), vb, "--x-also", str(y), vb, "--by-seed"])
    assert "--by-seed needs as many runs in each arm" in capsys.readouterr().err


def test_by_level_splits_the_pairs_by_their_deal_level(tmp_path, capsys):
    """Random levels: each level's comparison covers exactly that level's pairs (their deal
    level read from the records), the groups partition the pairs, and the CLI prints them."""
    kw = {**KW, "pairs": 12, "config": {"random_tribute": True, "random_levels": True}}
    tour.run_tournament(["heuristic", "random"], out=tmp_path / "x", **kw)
    tour.run_tournament(["heuristic:follow_threshold=0.5", "heuristic"], out=tmp_path / "y", **kw)
    rows_x = read_results(paired.results_file(tmp_path / "x"))
    sx = paired.pair_outcomes(rows_x, "random", "heuristic")
    sy = paired.pair_outcomes(
        read_results(paired.results_file(tmp_path / "y")),
        "heuristic:follow_threshold=0.5",
        "heuristic",
    )
    recorded = {
        int(r["record"]["seed"]): r["record"]["deals"][0]["deal_level"] for r in rows_x.values()
    }
    assert {s: o.level for s, o in sx.items()} == {s: recorded[s] for s in sx}
    groups = paired.by_level(sx, sy)
    assert len(groups) >= 3  # random levels: several met in 12 pairs
    assert sum(g["pairs"] for g in groups) == 12
    for g in groups:
        seeds = [s for s in sx if sx[s].level == g["level"]]
        diff = np.mean([(sx[s].gain - sy[s].gain) / 2 for s in seeds])
        assert g["pairs"] == len(seeds) and g["rank"] == "23456789TJQKA"[g["level"]]
        assert g["gain_per_deal_diff"]["mean"] == pytest.approx(float(diff), abs=1e-4)
    code = paired.main(
        [str(tmp_path / "x"), "random", str(tmp_path / "y"), "heuristic:follow_threshold=0.5",
         "--by-level", "--json", str(tmp_path / "c.json")]
    )  # fmt: skip
    assert code == 0
    assert "by deal level" in capsys.readouterr().out
    assert len(json.loads((tmp_path / "c.json").read_text())["by_level"]) == len(groups)


def test_by_level_needs_single_deal_pairs():
    match = {1: paired.PairOutcome(2.0, 6, 1.0), 2: paired.PairOutcome(-1.0, 5, 0.0)}
    with pytest.raises(ValueError, match="single-deal pairs"):
        paired.by_level(match, match)
