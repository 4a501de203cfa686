"""``experiments.bench.runner_parts`` times the runner's parts and writes them as JSON."""

from __future__ import annotations

import json


def test_the_parts_are_timed_nest_inside_the_step_and_are_written(tmp_path):
    from experiments.bench.runner_parts import PARTS, main

    out = tmp_path / "parts.json"
    args = ["--calls", "1", "--repeats", "2", "--warmup-steps", "30", "--out", str(out)]
    assert main([*args, "runners.tables=16", "runners.steps_per_call=4"]) == 0
    data = json.loads(out.read_text())
    assert data["warmup_steps"] == 30
    # ms per step divides by the steps taken: a call steps on past steps_per_call until
    # enough deals have ended, so the nominal count would overstate a step's time
    assert all(r["steps"] >= 4 for r in data["rounds"])
    ms = data["ms_per_step"]
    assert set(ms) == {label for _, _, label in PARTS}
    step = ms["step (all)"]
    assert step > 0 and data["decisions_per_cpu_s"] > 0 and len(data["rounds"]) == 2
    for label in ("decision context", "candidate rows", "network", "engine step"):
        assert 0 < ms[label] <= step, label  # every part ran, inside the step
    assert ms["hand plans (all)"] > 0 and ms["beat block"] > 0 and ms["reply block"] > 0
    top = ("decision context", "candidate rows", "network", "engine step", "GAE", "store")
    assert sum(ms[k] for k in top) <= step * 1.01  # disjoint parts never add up past it


def test_the_timed_functions_are_put_back():
    import importlib
    from collections import Counter

    from experiments.bench.runner_parts import PARTS, _instrument, _restore

    def lookup(module, attr):
        owner = importlib.import_module(module)
        for p in attr.split("."):
            owner = getattr(owner, p)
        return owner

    before = [lookup(m, a) for m, a, _ in PARTS]
    _restore(_instrument(Counter()))
    assert [lookup(m, a) for m, a, _ in PARTS] == before
