"""``experiments.bench.selfplay --no-loop`` measures both ceilings and writes them as JSON."""

from __future__ import annotations

import json


def test_the_runner_and_learner_ceilings_are_measured_and_written(tmp_path):
    from experiments.bench.selfplay import main

    out = tmp_path / "bench.json"
    assert main(["--no-loop", "--out", str(out), "runners.tables=16"]) == 0
    data = json.loads(out.read_text())
    assert data["config"]["runners"]["tables"] == 16
    assert data["runner"]["decisions_per_cpu_s"]["median"] > 0
    assert data["runner"]["candidates_per_decision"] >= 1
    # the learner ceiling runs the learner's own loss terms (ppo_terms) forward and backward
    assert data["learner"]["samples_per_cpu_s"]["median"] > 0
