"""The frozen evaluation suite (``experiments.evaluation.suite``): each version's definition
and seeds are frozen, its opponents exist, the reference reproduces, ratings are anchored,
and a small run works end to end through the command line (resumable, labelled)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.zoo import model_names
from experiments.evaluation.ratings import bradley_terry, elo_table
from experiments.evaluation.suite import CURRENT, SUITES, Suite, evaluate
from experiments.evaluation.suite.run import (
    decode_scores,
    encode_scores,
    entrant_dir,
    load_reference,
    pair_scores,
    play_entrant,
    reference_path,
)
from experiments.evaluation.tournament import schedule
from helpers import REPO

GOLDEN = Path(__file__).parent / "golden" / "suites.json"


def test_every_suite_version_is_frozen():
    """A suite's seeds, opponents, pairs or env config can't change under the same name:
    change them in a new version (and add it here with its golden entry)."""
    golden = json.loads(GOLDEN.read_text())
    assert sorted(golden) == sorted(SUITES), "a new suite version needs its golden entry"
    for name, suite in SUITES.items():
        assert suite.as_dict() == golden[name]["definition"], f"{name} changed: new version"
        assert suite.pair_seeds(10) == golden[name]["first_pair_seeds"], f"{name}'s seeds moved"
    assert CURRENT in SUITES


@pytest.mark.parametrize("name", sorted(SUITES))
def test_a_suites_opponents_exist_and_its_reference_matches_it(name):
    suite = SUITES[name]
    from agents.registry import make_agent

    for spec in suite.opponents:
        make_agent(spec, seed=0)  # every opponent builds (shipped models can't vanish)
        if spec.startswith("pretrained:"):
            assert spec.split(":", 1)[1] in model_names()
    assert suite.anchor in suite.opponents
    ref = load_reference(suite)
    assert ref is not None, f"{reference_path(suite)} missing: run --leaderboard"
    pairs = {(m["a"], m["b"]) for m in ref["matchups"]}
    n = len(suite.opponents)
    assert len(pairs) == n * (n - 1) // 2
    assert all(len(m["pair_scores"]) == suite.pairs for m in ref["matchups"])


def test_the_shipped_models_reproduce_the_reference_game_for_game(tmp_path):
    """On a fresh clone the reference's first pairs come out the same (greedy agents, fixed
    seeds): what lets the cards' figures be checked by anyone."""
    suite = SUITES[CURRENT]
    ref = load_reference(suite)
    models = [o for o in suite.opponents if o.startswith("pretrained:")]
    row = next(m for m in ref["matchups"] if m["a"] == "heuristic" and m["b"] == models[0])
    summary = play_entrant("heuristic", suite, 3, workers=1, root=tmp_path, progress=False)
    assert summary["matchups"]
    d = entrant_dir(suite, "heuristic", tmp_path)
    assert encode_scores(pair_scores(d, "heuristic", models[0], 3)) == row["pair_scores"][:3]


def test_anchored_ratings_fix_the_anchor_and_keep_the_differences():
    rng = np.random.default_rng(0)
    outcomes = [(0, 1, float(rng.random() < 0.7)) for _ in range(200)]
    outcomes += [(1, 2, float(rng.random() < 0.6)) for _ in range(200)]
    rows = {r["agent"]: r for r in elo_table(["a", "b", "c"], outcomes, anchor="b")}
    assert rows["b"]["rating"] == 1500.0 and rows["b"]["rating_ci"] == [1500.0, 1500.0]
    free = {r["agent"]: r for r in elo_table(["a", "b", "c"], outcomes)}
    for x in ("a", "c"):
        diff = rows[x]["rating"] - rows["b"]["rating"]
        assert diff == pytest.approx(free[x]["rating"] - free["b"]["rating"], abs=1e-6)
        assert rows[x]["rating_ci"][1] > rows[x]["rating"] > rows[x]["rating_ci"][0]
    theta, _ = bradley_terry(3, outcomes)
    assert theta[0] > theta[1] > theta[2]


def test_scores_encode_compactly():
    assert encode_scores([1.0, 0.5, 0.0]) == "210"
    assert decode_scores("210") == [1.0, 0.5, 0.0]


def test_a_tournament_restricted_to_matchups_plays_only_those():
    games = schedule(["x", "a", "b"], 2, 0, [["x", "a"], ["x", "b"]])
    assert {(g["a"], g["b"]) for g in games} == {("x", "a"), ("x", "b")} and len(games) == 8
    from experiments.evaluation.tournament.run import run_record

    with pytest.raises(ValueError, match="first listed first"):
        run_record(["x", "a"], 2, 0, "deal", None, None, [["a", "x"]])
    with pytest.raises(ValueError, match="listed twice"):
        run_record(["x", "a"], 2, 0, "deal", None, None, [["x", "a"], ["x", "a"]])


def test_a_small_suite_run_end_to_end_resumes_and_is_labelled(tmp_path):
    """The command line on a few pairs: report files, one anchored scale with the frozen
    reference, a citation marked not comparable; the same command again plays nothing new."""
    cmd = [sys.executable, "-m", "experiments.evaluate", "heuristic:danger_cards=3"]
    cmd += ["--pairs", "2", "--workers", "1", "--root", str(tmp_path), "--no-progress"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    from experiments.evaluation.suite.run import slug

    folder = tmp_path / CURRENT / slug("heuristic:danger_cards=3")
    assert f"report in {folder}" in out.stdout
    report = json.loads((folder / "report.json").read_text())
    (entrant,) = report["entrants"]
    assert set(entrant["table"]) == set(SUITES[CURRENT].opponents)
    assert all(r["pairs"] == 2 for r in entrant["table"].values())
    assert not entrant["comparable"] and "NOT COMPARABLE" in entrant["citation"]
    assert CURRENT in entrant["citation"] and "guandan_v1" in entrant["citation"]
    ratings = {r["agent"]: r for r in report["ratings"]}
    assert ratings["heuristic"]["rating"] == 1500.0 and report["reference"]
    assert set(ratings) == {*SUITES[CURRENT].opponents, "heuristic:danger_cards=3"}
    assert (folder / "report.md").read_text().count("| heuristic |") >= 1
    assert (folder / "report.png").stat().st_size > 1000
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert again.returncode == 0 and "0/" not in again.stderr[:0]
    games = entrant_dir(SUITES[CURRENT], "heuristic:danger_cards=3", tmp_path)
    timing = json.loads((games / "timing.json").read_text())
    assert timing["new_games"] == 0  # resumed: everything was played


def test_bad_requests_are_refused_clearly(tmp_path):
    suite = Suite(name="t", opponents=("random", "heuristic"), pairs=4)
    with pytest.raises(ValueError, match="--pairs must be in 1..4"):
        evaluate(["random"], suite, pairs=5, root=tmp_path)
    with pytest.raises(ValueError, match="at least one agent"):
        evaluate([], suite, root=tmp_path)
    with pytest.raises(ValueError, match="unknown suite"):
        evaluate(["random"], "guandan-eval-v0", root=tmp_path)


def test_rating_an_entrant_moves_neither_the_scale_nor_another_entrant():
    """Against the frozen reference the opponents keep the reference's ratings and each
    entrant is fitted alone; without a reference nothing is comparable."""
    from experiments.evaluation.suite.report import comparable, ratings

    rng = np.random.default_rng(0)

    def scores(p: float) -> list[float]:
        return [float(rng.random() < p) for _ in range(200)]

    suite = Suite(name="t", opponents=("random", "heuristic", "m"), pairs=200)
    ref = {
        "matchups": [
            {"a": a, "b": b, "pair_scores": encode_scores(scores(p))}
            for a, b, p in (
                ("random", "heuristic", 0.05),
                ("random", "m", 0.02),
                ("heuristic", "m", 0.4),
            )
        ]
    }
    x = {"random": scores(0.99), "heuristic": scores(0.6), "m": scores(0.5)}
    y = {"random": scores(0.2), "heuristic": scores(0.1), "m": scores(0.9)}
    one = {r["agent"]: r for r in ratings(suite, {"X": x}, ref)}
    two = {r["agent"]: r for r in ratings(suite, {"X": x, "Y": y}, ref)}
    for name in ("random", "heuristic", "m", "X"):
        assert one[name]["rating"] == pytest.approx(two[name]["rating"])
    assert one["heuristic"]["rating"] == 1500.0
    assert one["m"]["rating"] > one["X"]["rating"] > one["heuristic"]["rating"]
    table = {"heuristic": {"pairs": 200}}
    assert comparable(suite, table) and not comparable(suite, table, reference=False)


def test_a_frozen_reference_is_replaced_only_by_a_reproduction(tmp_path, monkeypatch):
    import experiments.evaluation.suite.run as suite_run
    from experiments.evaluation.suite import leaderboard

    monkeypatch.setattr(suite_run, "REFERENCE_DIR", tmp_path / "reference")
    suite = Suite(name="t-frozen", opponents=("random", "heuristic"), pairs=3)
    kw = {"workers": 1, "root": tmp_path, "progress": False, "doc": None, "update_cards": False}
    leaderboard(suite, **kw)
    path = suite_run.reference_path(suite)
    ref = json.loads(path.read_text())
    assert ref["matchups"][0]["pair_scores"] == "000"  # random loses every pair
    leaderboard(suite, **kw)  # the same games: accepted
    ref["matchups"][0]["pair_scores"] = "222"
    path.write_text(json.dumps(ref))
    with pytest.raises(ValueError, match="differ from t-frozen's frozen reference"):
        leaderboard(suite, **kw)
    leaderboard(suite, force=True, **kw)
    assert json.loads(path.read_text())["matchups"][0]["pair_scores"] == "000"


def test_a_suite_refuses_pretrained_weights_it_was_not_frozen_with(tmp_path):
    import dataclasses

    suite = SUITES[CURRENT]
    suite.check_weights()  # the shipped models are the frozen ones
    spec = next(o for o in suite.opponents if o.startswith("pretrained:"))
    changed = dataclasses.replace(suite, weights={**suite.weights, spec: "0" * 64})
    with pytest.raises(ValueError, match="not those guandan-eval-v4 was frozen with"):
        play_entrant("random", changed, 1, workers=1, root=tmp_path, progress=False)


def test_card_writes_a_shipped_entrants_rating_into_its_card(tmp_path, monkeypatch):
    """``--card``: a model shipped after a suite was frozen gets that suite's table and
    rating in its card; refused, before any game, for anything that isn't a shipped model
    rated over the suite's full pairs against its reference."""
    import shutil

    import experiments.evaluation.suite.run as suite_run
    from agents import zoo
    from experiments.evaluation.suite import leaderboard

    monkeypatch.setattr(suite_run, "REFERENCE_DIR", tmp_path / "reference")
    models = tmp_path / "models"
    models.mkdir()
    for f in zoo.MODELS_DIR.glob("default-v1.*"):
        shutil.copy(f, models / f.name)
    monkeypatch.setattr(zoo, "MODELS_DIR", models)
    suite = Suite(name="t-card", opponents=("random", "heuristic"), pairs=2)
    kw = {"workers": 1, "root": tmp_path, "progress": False}
    with pytest.raises(ValueError, match="no frozen reference"):
        evaluate(["pretrained:default-v1"], suite, update_cards=True, **kw)
    leaderboard(suite, doc=None, update_cards=False, **kw)
    for specs, pairs, match in (
        (["heuristic"], 2, "shipped models by exact name"),
        (["pretrained:default"], 2, "shipped models by exact name"),  # an alias: ambiguous later
        (["pretrained:default-v1"], 1, "needs the suite's 2 pairs"),
        (["pretrained:default-v1", "random"], 2, "shipped models by exact name"),
    ):
        with pytest.raises(ValueError, match=match):
            evaluate(specs, suite, pairs=pairs, update_cards=True, **kw)
    assert not entrant_dir(suite, "pretrained:default-v1", tmp_path).exists()  # nothing played

    before = json.loads((models / "default-v1.json").read_text())
    report = evaluate(["pretrained:default-v1"], suite, update_cards=True, **kw)
    card = json.loads((models / "default-v1.json").read_text())
    strength = card["strength"]
    (entrant,) = report["entrants"]
    assert strength["suite"] == "t-card" and strength["rating"] == entrant["rating"]["rating"]
    assert strength["opponents"] == entrant["table"] and set(strength["opponents"]) == {
        "random",
        "heuristic",
    }
    assert strength["command"].endswith("pretrained:default-v1 --suite t-card --card")
    assert (
        strength["citation"] == entrant["citation"] and "NOT COMPARABLE" not in strength["citation"]
    )
    assert {k: v for k, v in card.items() if k != "strength"} == {
        k: v for k, v in before.items() if k != "strength"
    }
    opponent = Suite(name="t-card2", opponents=("heuristic", "pretrained:default-v1"), pairs=2)
    with pytest.raises(ValueError, match="is an opponent of t-card2: its card takes the"):
        evaluate(["pretrained:default-v1"], opponent, update_cards=True, **kw)
