"""Duplicate pairing, statistics, Bradley–Terry fit, resumable tournaments."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents import HeuristicAgent, make_agent
from experiments.evaluation import tournament as tour
from experiments.evaluation.duplicate import (
    evaluate,
    pair_seed,
    play_game,
    play_pairs,
    team_view,
)
from experiments.evaluation.ratings import (
    ELO_BASE,
    bootstrap_ci,
    bradley_terry,
    elo_table,
    pair_score,
)
from guandan_env.envs.aec import raw_env

DEAL_CFG = {"mode": "deal", "random_levels": True, "random_tribute": True}


# ------------------------------------------------------------------------------ duplicate
def test_duplicate_games_replay_identical_hands_levels_and_tribute():
    for k in range(5):
        seed = pair_seed(0, k)
        games = []
        for _ in range(2):
            env = raw_env(**DEAL_CFG)
            env.reset(seed=seed)
            g = env.game
            games.append(
                (g.hands.copy(), list(g.levels), g.leveling_team, g.tributes, g.leader, g.phase)
            )
        (h0, *rest0), (h1, *rest1) = games
        assert np.array_equal(h0, h1)
        assert rest0 == rest1


def test_schedule_swaps_seats_within_a_pair():
    games = tour.schedule(["x", "y", "z"], pairs=2, seed=3)
    assert len(games) == 3 * 2 * 2
    by_id = {g["id"]: g for g in games}
    for a, b in (("x", "y"), ("x", "z"), ("y", "z")):
        for k in range(2):
            g0, g1 = by_id[tour.game_id(a, b, k, 0)], by_id[tour.game_id(a, b, k, 1)]
            assert g0["seed"] == g1["seed"] == pair_seed(3, k)
            assert g0["seats"] == [a, b, a, b] and g1["seats"] == [b, a, b, a]
    # every matchup plays the same deals
    assert by_id["x|y|1|0"]["seed"] == by_id["y|z|1|0"]["seed"]


def test_same_agents_on_swapped_seats_replay_the_same_game():
    """With one deterministic policy at every seat, the swapped game is the same game: the
    cards, levels and tribute really are identical seat by seat."""
    for k in range(3):
        recs = [
            play_game([HeuristicAgent() for _ in range(4)], pair_seed(1, k), DEAL_CFG)
            for _ in range(2)
        ]
        assert recs[0] == recs[1]
        v0, v1 = team_view(recs[0], 0), team_view(recs[1], 1)
        assert v0["gain"] == -v1["gain"]
        assert pair_score(v0, v1) == 0.5  # identical play: a duplicate tie


def test_pair_score_rules():
    side = lambda gain, mp=None: {"gain": gain, "deals": 1, "deals_won": 0, "match_points": mp}  # noqa: E731
    assert pair_score(side(3), side(-1)) == 1.0
    assert pair_score(side(1), side(-1)) == 0.5
    assert pair_score(side(-2), side(1)) == 0.0
    assert pair_score(side(-5, 1.0), side(-5, 1.0)) == 1.0  # match points decide first
    assert pair_score(side(4, 1.0), side(-5, 0.0)) == 0.0  # 1:1 in matches, then level gain


# ------------------------------------------------------------------------------ statistics
def test_bootstrap_interval_is_seeded_and_covers_the_mean():
    rng = np.random.default_rng(0)
    x = rng.normal(0.5, 1.0, size=400)
    est, lo, hi = bootstrap_ci(x, seed=1)
    assert lo < est < hi and lo < 0.5 < hi
    assert (est, lo, hi) == bootstrap_ci(x, seed=1)
    est_r, lo_r, hi_r = bootstrap_ci([2.0, 4.0, 6.0], weights=[1.0, 2.0, 3.0], seed=0)
    assert est_r == pytest.approx(2.0) and lo_r <= est_r <= hi_r


def test_bradley_terry_recovers_known_strengths():
    truth = np.array([0.0, 0.6, 1.2, -0.8])
    rng = np.random.default_rng(5)
    outcomes = []
    for i in range(4):
        for j in range(i + 1, 4):
            p = 1.0 / (1.0 + np.exp(truth[j] - truth[i]))
            for s in (rng.random(1500) < p).astype(float):
                outcomes.append((i, j, float(s)))
    theta, se = bradley_terry(4, outcomes)
    centred = truth - truth.mean()
    assert np.all(np.abs(theta - centred) < 4 * se)
    assert np.all(np.abs(theta - centred) < 0.12)
    assert theta.mean() == pytest.approx(0.0, abs=1e-9)
    table = elo_table(["a", "b", "c", "d"], outcomes)
    assert [r["agent"] for r in table] == ["c", "b", "a", "d"]
    assert np.mean([r["rating"] for r in table]) == pytest.approx(ELO_BASE)
    for r in table:
        assert r["rating_ci"][0] < r["rating"] < r["rating_ci"][1]


def test_bradley_terry_stays_finite_when_one_side_wins_everything():
    theta, se = bradley_terry(2, [(0, 1, 1.0)] * 50)
    assert np.all(np.isfinite(theta)) and np.all(np.isfinite(se))
    assert theta[0] > theta[1] + 3
    with pytest.raises(ValueError):
        bradley_terry(2, [(0, 0, 1.0)])


# ------------------------------------------------------------------------------ tournaments
AGENTS3 = ["heuristic", "random", "heuristic:follow_threshold=0.5"]


def _table(summary: dict) -> dict:
    return {"matchups": summary["matchups"], "ratings": summary["ratings"]}


def test_resumed_run_gives_the_same_table(tmp_path):
    kw = dict(pairs=3, seed=11, config={"random_tribute": True}, plots=False, progress=False)
    full = tour.run_tournament(AGENTS3, out=tmp_path / "full", workers=1, **kw)
    assert [m["pairs"] for m in full["matchups"]] == [3, 3, 3]

    part = tmp_path / "part"
    tour.run_tournament(AGENTS3, out=part, workers=1, max_games=7, **kw)
    lines = (part / "results.jsonl").read_text().splitlines()
    assert len(lines) == 7
    with (part / "results.jsonl").open("a") as f:  # a write torn by the interruption
        f.write(lines[-1][: len(lines[-1]) // 2])
    resumed = tour.run_tournament(AGENTS3, out=part, workers=2, **kw)
    assert resumed["timing"]["new_games"] == 18 - 7
    assert _table(resumed) == _table(full)
    saved = json.loads((part / "summary.json").read_text())
    assert _table(saved) == json.loads(json.dumps(_table(full)))
    # a rerun has nothing left to do and rewrites the same table
    again = tour.run_tournament(AGENTS3, out=part, workers=1, **kw)
    assert again["timing"]["new_games"] == 0 and _table(again) == _table(full)


def test_run_with_other_arguments_is_refused(tmp_path):
    kw = dict(pairs=1, plots=False, progress=False, workers=1)
    tour.run_tournament(["random", "heuristic"], out=tmp_path, seed=1, **kw)
    with pytest.raises(ValueError, match="different seed"):
        tour.run_tournament(["random", "heuristic"], out=tmp_path, seed=2, **kw)
    with pytest.raises(ValueError, match="distinct"):
        tour.run_tournament(["random", "random"], out=tmp_path / "x", **kw)
    with pytest.raises(ValueError, match="unknown agent spec"):
        tour.run_tournament(["random", "nobody"], out=tmp_path / "y", **kw)


def test_default_output_folders_are_named_by_the_run_and_never_collide(
    tmp_path, monkeypatch, capsys
):
    """Issue 23: the README's two tournaments (other agents, other mode) used to share
    ``results/tournament``; the default folder is now derived from what fixes the games,
    so different runs get different folders and the same command resumes its own."""
    monkeypatch.chdir(tmp_path)
    common = ["--workers", "1", "--no-progress", "--no-plots"]
    deal = ["heuristic", "random", "--pairs", "1", "--random-levels", "--random-tribute"]
    match = ["heuristic", "random", "--mode", "match", "--max-deals", "1", "--pairs", "1"]
    assert tour.main([*deal, *common]) == 0
    assert tour.main([*match, *common]) == 0  # refused before: "holds a run with different mode"
    assert tour.main([*deal, "--seed", "3", *common]) == 0
    folders = sorted(p for p in (tmp_path / "results" / "tournament").iterdir())
    assert len(folders) == 3, folders
    assert all(p.name.startswith("heuristic_random-") for p in folders)
    assert {p.name.split("-")[-2] for p in folders} == {"deal", "match"}
    first = capsys.readouterr().out.split("outputs in ")[1].splitlines()[0]
    # the same command resumes its own folder: nothing left to play; more pairs extend it
    assert tour.main([*deal, *common]) == 0
    out = capsys.readouterr().out
    assert f"outputs in {first}" in out and "deals/s" not in out, out  # no new games
    assert tour.main([*deal[:-3], "2", *deal[-2:], *common]) == 0
    assert len(list((tmp_path / "results" / "tournament").iterdir())) == 3
    run = tour.run_tournament(
        ["heuristic", "random"],
        pairs=2,
        config={"random_levels": True, "random_tribute": True},
        workers=1,
        plots=False,
        progress=False,
    )
    assert run["timing"]["new_games"] == 0  # the library's default is the CLI's
    assert Path(run["out"]).parent == Path("results/tournament")
    assert len((Path(run["out"]) / "results.jsonl").read_text().splitlines()) == 4


def test_cli_writes_tables_and_plots(tmp_path, capsys):
    out = tmp_path / "cli"
    args = "heuristic random --pairs 2 --workers 1 --no-progress --mode match --max-deals 2"
    rc = tour.main([*args.split(), "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "match win" in text and "Elo" in text and "deals/s" in text
    names = "results.jsonl summary.csv summary.json ratings.csv run.json timing.json"
    for name in [*names.split(), "ratings.png", "level_gain_hist.png"]:
        assert (out / name).stat().st_size > 0, name
    summary = json.loads((out / "summary.json").read_text())
    m = summary["matchups"][0]
    assert 0.0 <= m["match_win_rate"] <= 1.0 and m["deals"] >= 4
    assert (out / "summary.csv").read_text().startswith("a,b,pairs")


def test_evaluate_accepts_specs_and_agent_instances():
    r1 = evaluate("heuristic", "random", n_pairs=3, seed=4)
    r2 = evaluate(HeuristicAgent(), "random", n_pairs=3, seed=4)  # same seat seeds
    assert r1 == r2
    assert r1["pairs"] == 3 and r1["games"] == 6
    assert r1["dup_win_rate"] > 0.5 and r1["mean_gain"] > 0
    lo, hi = r1["mean_gain_ci"]
    assert lo <= r1["mean_gain"] <= hi
    r3 = evaluate("heuristic", make_agent("random"), n_pairs=3, seed=4)  # one shared instance
    assert r3["pairs"] == 3
    with pytest.raises(ValueError):
        evaluate(42, "random", n_pairs=1)


def test_pairs_played_in_chunks_are_the_games_of_one_run():
    """The trainer's final evaluation splits the pairs over tasks: every game seeds its agents
    from its own seed, so chunks merged in order equal one sequential evaluation."""
    cfg = {"random_levels": True, "random_tribute": True}
    whole = play_pairs("heuristic", "random", range(5), seed=9, config=cfg)
    chunks = [range(0, 2), range(2, 3), range(3, 5)]
    split = [s for r in chunks for s in play_pairs("heuristic", "random", r, seed=9, config=cfg)]
    assert len(whole) == 5 and split == whole
    # later chunks first, on fresh agents: still the same games
    reversed_ = [play_pairs("heuristic", "random", r, seed=9, config=cfg) for r in chunks[::-1]]
    assert [s for part in reversed_[::-1] for s in part] == whole
    from experiments.evaluation.ratings import matchup_stats

    assert matchup_stats(split, seed=9) == evaluate(
        "heuristic", "random", n_pairs=5, seed=9, config=cfg
    )


@pytest.mark.slow
def test_ray_backend_matches_local(tmp_path):
    pytest.importorskip("ray")
    import os

    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    import ray

    kw = dict(pairs=2, seed=5, plots=False, progress=False)
    local = tour.run_tournament(["heuristic", "random"], out=tmp_path / "l", workers=1, **kw)
    try:
        remote = tour.run_tournament(
            ["heuristic", "random"], out=tmp_path / "r", workers=2, address="local", **kw
        )
    finally:
        ray.shutdown()
    assert _table(remote) == _table(local)


@pytest.mark.slow
def test_heuristic_beats_random_in_duplicate_deals(tmp_path):
    """Quality bar: >= 85% duplicate-deal wins and a clearly positive gain (1,000 pairs)."""
    cfg = {"random_levels": True, "random_tribute": True}
    s = tour.run_tournament(
        ["heuristic", "random"], pairs=1000, seed=2024, out=tmp_path, workers=2, config=cfg
    )
    m = s["matchups"][0]
    assert m["dup_win_rate_ci"][0] >= 0.85
    assert m["mean_gain_ci"][0] > 1.0


def test_save_replays_reproduce_the_games(tmp_path):
    """Every tournament game saved as a replay replays to the same result (issue 7)."""
    from guandan_env.envs.replay import load, replay_game

    out = tmp_path / "t"
    tour.run_tournament(
        ["random", "random#2"],
        pairs=2,
        seed=5,
        out=out,
        workers=1,
        plots=False,
        progress=False,
        save_replays=True,
    )
    files = sorted((out / "replays").glob("*.json"))
    assert len(files) == 4
    for f in files:
        replay_game(load(f))  # raises ValueError on any mismatch


def test_fault_rows_of_another_run_or_stray_lines_are_skipped_not_counted(tmp_path, capsys):
    """Issue 12: a resume counts only the rows of its own schedule (id, agents, pair, swap
    and seed); rows another ``--seed`` appended and lines that are not rows are reported
    and skipped; nothing crashes."""
    kw = dict(pairs=2, plots=False, progress=False, workers=1)
    other = tmp_path / "other"
    tour.run_tournament(["random", "heuristic"], out=other, seed=5, **kw)
    out = tmp_path / "run"
    full = tour.run_tournament(["random", "heuristic"], out=tmp_path / "full", seed=1, **kw)
    tour.run_tournament(["random", "heuristic"], out=out, seed=1, max_games=1, **kw)
    foreign = (other / "results.jsonl").read_text()
    with (out / "results.jsonl").open("a") as f:
        f.write(foreign)
        f.write('{"foo": 1}\n42\n["x"]\n')
    resumed = tour.run_tournament(["random", "heuristic"], out=out, seed=1, **kw)
    assert "skipped" in capsys.readouterr().err
    assert resumed["timing"]["new_games"] == 3  # the other run's rows did not count
    assert _table(resumed) == _table(full)


def test_fault_a_refused_run_leaves_nothing_that_blocks_its_corrected_rerun(tmp_path):
    kw = dict(pairs=1, plots=False, progress=False, workers=1)
    with pytest.raises(ValueError, match="levels"):
        tour.run_tournament(
            ["random", "heuristic"], out=tmp_path, options={"levels": ["Z", "2"]}, **kw
        )
    assert not (tmp_path / "run.json").exists()
    tour.run_tournament(["random", "heuristic"], out=tmp_path, options={"levels": ["5", "2"]}, **kw)


@pytest.mark.parametrize(
    "args, message",
    [
        (["random", "checkpoint:/no/such/run"], "cannot load"),
        (["random", "heuristic", "--previous-order", "a,b,c,d"], "previous-order"),
        (["random", "heuristic", "--levels", "Z,2"], "R-2.1"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(tmp_path, capsys, args, message):
    rc = tour.main([*args, "--pairs", "1", "--workers", "1", "--out", str(tmp_path), "--no-plots"])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_workers_die_with_a_killed_parent(tmp_path):
    """Issue 12: after ``kill -9`` of a tournament with ``--workers 2`` no worker process
    outlives it (Linux: the workers ask for SIGKILL when their parent dies)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "experiments.evaluation.tournament", "heuristic", "random"]
    cmd += ["--pairs", "400", "--workers", "2", "--out", str(tmp_path), "--no-progress"]
    cmd += ["--mode", "match"]  # long games: a worker is mid-game when the parent dies
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = tmp_path / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and results.stat().st_size):
        time.sleep(0.2)
    assert results.exists(), "the tournament never wrote a result"

    def children() -> list[int]:
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True, text=True
        ).stdout
        return [int(x) for x in out.split()]

    kids = children()
    assert len(kids) >= 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 1.5  # at once, not after the game in hand
    alive = kids
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [k for k in kids if os.path.exists(f"/proc/{k}") and _not_zombie(k)]
    assert not alive, f"workers {alive} outlived their parent"


def _not_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _terminal_sigint() -> None:
    """Ctrl-C as in a terminal: a test run started in the background (``cmd &``) ignores
    SIGINT, and a child would inherit that and never see the interrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_says_how_to_resume_without_a_traceback(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "experiments.evaluation.tournament", "heuristic", "random"]
    cmd += ["--pairs", "400", "--workers", "2", "--out", str(tmp_path), "--no-progress"]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_terminal_sigint,
    )
    results = tmp_path / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and results.stat().st_size):
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "resume" in err
    assert tour.read_results(results)  # the finished games are kept


def test_a_checkpoint_agent_reloads_when_its_policy_file_changes(tmp_path):
    """A long tournament process keeps one agent per checkpoint version, not per spec text."""
    import os

    import torch

    from agents.candidate_net import CandidateNet
    from agents.policy_file import save_policy
    from experiments.evaluation.tournament import games as tournament

    small = {"trunk": [8, 8], "cand": [4]}
    path = save_policy(tmp_path / "policy.pt", CandidateNet(small), small)
    spec = f"checkpoint:{tmp_path}"
    first = tournament._agent(spec, 0)
    assert tournament._agent(spec, 0) is first  # loaded once
    torch.manual_seed(1)
    save_policy(path, CandidateNet(small), small)
    later = path.stat().st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(later, later))
    second = tournament._agent(spec, 0)
    assert second is not first
    w1, w2 = first.net.state_dict(), second.net.state_dict()
    assert any(not torch.equal(w1[k], w2[k]) for k in w1)
    assert sum(1 for k in tournament._AGENT_CACHE if k[:2] == (spec, 0)) == 1


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    import subprocess

    out = subprocess.run(["ps", "-o", "pid=", "-g", str(pgid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split() if _not_zombie(int(x))]


def _start_in_own_group(tmp_path, wait_for_result: bool):
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "experiments.evaluation.tournament", "heuristic", "random"]
    cmd += ["--pairs", "400", "--workers", "2", "--out", str(tmp_path), "--no-progress"]
    cmd += ["--mode", "match"]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_terminal_sigint,
    )
    results = tmp_path / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if wait_for_result and results.exists() and results.stat().st_size:
            break
        if not wait_for_result and len(_group(proc.pid)) >= 3:  # workers just spawned
            break
        time.sleep(0.05)
    return proc


def _outlived(pgid: int, seconds: float) -> list[int]:
    import time

    deadline = time.monotonic() + seconds
    alive = _group(pgid)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = _group(pgid)
    return alive


# a spawning worker notices its orphaning only once its imports are done: on a loaded
# machine that took over 1.5 s
OUTLIVE_GRACE_S = 5.0


@pytest.mark.parametrize("when", ["mid-game", "while the workers start"])
def test_nothing_of_the_process_group_outlives_a_killed_parent(tmp_path, when):
    """Issue 26: every process of the tournament's group (workers, multiprocessing's resource
    tracker) is gone within a moment of ``kill -9``, even while the workers are starting."""
    import os
    import signal

    proc = _start_in_own_group(tmp_path, wait_for_result=when == "mid-game")
    assert len(_group(proc.pid)) >= 3
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    alive = _outlived(proc.pid, OUTLIVE_GRACE_S)
    for pid in alive:  # do not leave them behind for the next test
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"{alive} outlived their parent"


def test_nothing_of_the_process_group_outlives_ctrl_c(tmp_path):
    """Ctrl-C in a terminal signals the whole foreground group, workers included."""
    import os
    import signal

    proc = _start_in_own_group(tmp_path, wait_for_result=True)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    alive = _outlived(proc.pid, OUTLIVE_GRACE_S)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"{alive} outlived the interrupted tournament"
