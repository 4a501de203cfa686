"""Throughput figures of a run (``experiments.selfplay.throughput``), from its progress rows."""

from __future__ import annotations

import csv
import json

import pytest

from experiments.selfplay.log import PROGRESS_COLUMNS
from experiments.selfplay.throughput import fmt_throughput, main, read_progress, throughput


def _row(it, steps, iter_s, *, wait=0.0, learn=None, runner_s=0.0, cpu=0.0, idle=0.0, ev=0):
    return {
        "iteration": it,
        "env_steps": steps,
        "iter_s": iter_s,
        "env_steps_per_s": None,  # filled by _write
        "game_steps_per_s": None,
        "forced_share": 0.25,
        "sample_wait_s": wait,
        "learn_s": iter_s - wait if learn is None else learn,
        "eval_running": ev,
        "runner_sample_s": runner_s,
        "runner_sample_cpu_s": cpu,
        "idle_share": idle,
    }


def _write(tmp_path, rows):
    prev = 0
    with (tmp_path / "progress.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, PROGRESS_COLUMNS)
        w.writeheader()
        for r in rows:
            steps = r["env_steps"] - prev
            prev = r["env_steps"]
            r["env_steps_per_s"] = steps / r["iter_s"]
            r["game_steps_per_s"] = steps / r["iter_s"] / 0.75  # a quarter forced
            w.writerow(r)
    return tmp_path


def test_medians_skip_iterations_with_an_evaluation_and_ceilings_are_ratios_of_totals(tmp_path):
    rows = [
        # main runner: 1,000 samples in 1 s of iteration, its sample() took 0.8 s wall
        _row(1, 1000, 1.0, wait=0.2, learn=0.5, runner_s=0.8, cpu=0.7),
        # an idle runner's batch: 500 samples, no main runner timing
        _row(2, 1500, 0.5, wait=0.1, learn=0.25, idle=1.0),
        _row(3, 2500, 1.0, wait=0.2, learn=0.5, runner_s=0.8, cpu=0.9),
        # shares the CPUs with an evaluation: left out (it would drag every median)
        _row(4, 2600, 10.0, wait=9.0, learn=1.0, runner_s=9.0, cpu=5.0, ev=1),
    ]
    t = throughput(read_progress(_write(tmp_path, rows)))
    assert t["iterations"] == 3 and t["iterations_with_eval"] == 1
    assert t["median_learner_samples_per_s"] == 1000
    assert t["median_game_decisions_per_s"] == round(1000 / 0.75)
    assert t["median_forced_share"] == 0.25
    assert t["all_median_learner_samples_per_s"] == 1000  # [1000, 1000, 1000, 10]
    assert t["all_median_game_decisions_per_s"] == round(1000 / 0.75)
    assert t["runner_ceiling_samples_per_s"] == round(2000 / 1.6)  # main samples / its wall
    assert t["learner_ceiling_samples_per_s"] == round(2500 / 1.25)  # all samples / learn_s
    assert t["median_runner_cpu_s_per_iteration"] == 0.8  # over the main runner's rows
    assert t["idle_runner_share"] == pytest.approx(500 / 2500)
    assert t["median_learner_wait_s"] == 0.2 and t["binds"] == "runner"
    line = fmt_throughput(t)
    assert "1,000 learner samples/s" in line and "runner-bound" in line and "20%" in line


def test_a_learner_that_never_waits_binds(tmp_path):
    rows = [_row(i, 1000 * i, 1.0, wait=0.01, runner_s=0.5, cpu=0.5) for i in range(1, 6)]
    t = throughput(read_progress(_write(tmp_path, rows)))
    assert t["binds"] == "learner" and t["idle_runner_share"] == 0.0


def test_the_confident_share_is_reported_when_decisions_were_kept_out(tmp_path):
    rows = [_row(i, 1000 * i, 1.0, wait=0.2, runner_s=0.8, cpu=0.7) for i in range(1, 4)]
    t = throughput(read_progress(_write(tmp_path, rows)))
    assert t["median_confident_share"] is None  # runs before runners.skip_confident
    assert "confident" not in fmt_throughput(t)
    for r, share in zip(rows, (0.2, 0.3, 0.4), strict=True):
        r["confident_share"] = share
    t = throughput(read_progress(_write(tmp_path, rows)))
    assert t["median_confident_share"] == 0.3
    assert "25% of them forced, 30% confident (played, not learner samples)" in fmt_throughput(t)


def test_no_clean_iteration_and_missing_run_are_reported(tmp_path):
    assert throughput(read_progress(_write(tmp_path, [_row(1, 100, 1.0, ev=1)]))) == {}
    assert "no iteration ran without an evaluation" in fmt_throughput({})
    with pytest.raises(FileNotFoundError, match="no progress.csv"):
        read_progress(tmp_path / "nothing")


def test_cli_prints_each_run_and_writes_json(tmp_path, capsys):
    run = _write(tmp_path, [_row(1, 1000, 1.0, wait=0.2, runner_s=0.8, cpu=0.7)])
    out = tmp_path / "t.json"
    assert main([str(run), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert str(run) in printed and "learner samples/s" in printed
    assert json.loads(out.read_text())[str(run)]["median_learner_samples_per_s"] == 1000
