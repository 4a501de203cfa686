"""``experiments.bench.heuristic`` measures the rule-based agent and writes JSON."""

from __future__ import annotations

import json


def test_the_bench_writes_speed_and_a_digest_that_repeats(tmp_path):
    from experiments.bench.heuristic import main

    out = tmp_path / "heuristic.json"
    assert main(["--chunks", "1", "--repeats", "2", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["decisions"] > 0 and len(data["rounds"]) == 2
    low, high = data["range"]
    assert 0 < low <= data["decisions_per_cpu_s"] <= high
    assert len(data["actions_digest"]) == 16  # one digest: every round played alike
