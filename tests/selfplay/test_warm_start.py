"""Behaviour cloning (``experiments.selfplay.warm_start.bc``): the loss falls and the
agreement with the heuristic rises."""

from __future__ import annotations

import pytest


def test_behaviour_cloning_loss_falls_and_agreement_rises(tmp_path):
    from experiments.selfplay.warm_start.bc import evaluate_bc, split_by_deal, train_bc
    from experiments.selfplay.warm_start.data import generate

    data = generate(4000, seed=3, workers=1, cache_dir=tmp_path, progress=False)
    net, record = train_bc(
        data,
        {"trunk": [64, 64], "cand": [32]},
        epochs=4,
        lr=2e-3,
        minibatch_size=256,
        holdout=0.2,
        seed=0,
        progress=False,
        log=lambda *_: None,
    )
    hist = record["history"]
    assert hist[0]["epoch"] == 0 and len(hist) == 5
    best = min(hist[1:], key=lambda h: h["policy_loss"])
    assert best["policy_loss"] < hist[0]["policy_loss"] - 0.1, hist
    assert best["agreement"] > hist[0]["agreement"] + 0.1, hist
    _, held = split_by_deal(data["deal"], 0.2, 0)
    assert evaluate_bc(net, data, held)["policy_loss"] == pytest.approx(best["policy_loss"])
