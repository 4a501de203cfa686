"""``experiments.bench.learner_precision`` times both precisions and measures bfloat16's error."""

from __future__ import annotations

import json


def test_both_precisions_are_timed_alternately_and_the_policy_change_is_measured(tmp_path):
    from experiments.bench.learner_precision import PRECISIONS, main

    out = tmp_path / "precision.json"
    args = ["--calls", "1", "--repeats", "2", "--out", str(out)]
    assert main([*args, "runners.tables=32", "runners.steps_per_call=8"]) == 0
    data = json.loads(out.read_text())
    for part in ("learner", "forward"):
        assert set(data["rounds"][part]) == set(PRECISIONS)
        assert all(len(v) == 2 and min(v) > 0 for v in data["rounds"][part].values())
    assert all(data["learner_samples_per_cpu_s"][p] > 0 for p in PRECISIONS)
    change = data["policy_change"]
    assert change["decisions"] == data["samples"] > 0
    # bfloat16 keeps 8 bits of mantissa: the logits move, but only by a few hundredths, and the
    # two distributions stay close
    assert 0 < change["logit_abs_error_mean"] < 0.5
    assert 0 <= change["total_variation_mean"] < 0.05
    assert 0 <= change["greedy_move_changed"] < 0.1
