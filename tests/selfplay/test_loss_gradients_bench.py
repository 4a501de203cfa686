"""``experiments.bench.loss_gradients`` takes the learner's loss apart and writes JSON."""

from __future__ import annotations

import json


def test_each_term_has_a_gradient_and_they_add_up_as_norms_do(tmp_path):
    from experiments.bench.loss_gradients import TERMS, main

    out = tmp_path / "grads.json"
    args = ["--calls", "1", "--out", str(out), "runners.tables=16", "ppo.minibatch_size=64"]
    assert main(args) == 0
    data = json.loads(out.read_text())
    g = data["median_grad_norm"]
    assert set(g) == {f"{t} {part}" for t in TERMS for part in ("all", "trunk")}
    assert data["minibatches"] >= 2 and data["decisions"] > 0
    for term in TERMS:
        assert 0 < g[f"{term} trunk"] <= g[f"{term} all"], term
    # per minibatch the whole gradient is at most the sum of its terms' (a triangle); the
    # medians keep that up to the spread between minibatches, far below a factor of two
    assert g["total all"] <= 2 * (g["policy all"] + g["value all"] + g["entropy all"])
    assert 0.0 <= data["share_clipped"] <= 1.0 and data["median_vf_loss"] > 0


def test_the_terms_are_the_learners_and_weigh_the_value_loss_by_its_coefficient(tmp_path):
    from experiments.bench.loss_gradients import main

    grads = {}
    for coeff in (0.5, 1.0):
        out = tmp_path / f"g{coeff}.json"
        args = [
            "--calls",
            "1",
            "--out",
            str(out),
            "runners.tables=16",
            f"ppo.vf_loss_coeff={coeff}",
        ]
        assert main(args) == 0
        grads[coeff] = json.loads(out.read_text())["median_grad_norm"]
    # the same samples (equal seeds) and weights: the value term's gradient doubles, the
    # policy's does not move
    assert abs(grads[1.0]["value all"] / grads[0.5]["value all"] - 2.0) < 1e-3
    assert abs(grads[1.0]["policy all"] - grads[0.5]["policy all"]) < 1e-6
