"""experiments.selfplay.average: the raw weights of a run's checkpoints, averaged after the
run (uniform over its last part, or with a half-life), saved as a playable policy.pt."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.candidate_net import CandidateNet, policy_state
from agents.checkpoint import load_policy_net, mark_complete
from agents.policy_file import load_policy_file, save_policy
from experiments.selfplay.average import average_checkpoints, main

SMALL = {"trunk": [8], "cand": [4]}


def _run(tmp_path, samples=(100, 200, 300)):
    """A run directory with one checkpoint per entry of ``samples``, each with its own raw
    weights and an unrelated moving average (which the averaging must not read)."""
    raws = []
    for i, s in enumerate(samples):
        torch.manual_seed(i)
        net = CandidateNet(SMALL)
        ckpt = tmp_path / "run" / "checkpoints" / f"iter_{i:06d}"
        ckpt.mkdir(parents=True)
        raw = policy_state(net)
        ema = {k: v + 1.0 for k, v in raw.items()}
        save_policy(ckpt, raw, net.model_config, {"iteration": i}, ema_state=ema)
        mark_complete(ckpt, {"iteration": i, "env_steps": s})
        raws.append(raw)
    (tmp_path / "run" / "checkpoints" / "iter_000009").mkdir()  # incomplete: skipped
    return tmp_path / "run", raws


def test_uniform_mean_of_the_run_s_last_part(tmp_path):
    run, raws = _run(tmp_path)
    state, config, info = average_checkpoints(run, from_share=0.5)
    assert info["checkpoints"] == 2 and info["from_env_steps"] == 200
    for k in state:
        np.testing.assert_allclose(state[k], (raws[1][k] + raws[2][k]) / 2, rtol=1e-6, atol=1e-7)
    assert config["trunk"] == [8] and config["cand"] == [4]
    everything, _, info = average_checkpoints(run, from_share=0.0)
    assert info["checkpoints"] == 3
    k = "value_head.weight"
    np.testing.assert_allclose(everything[k], sum(r[k] for r in raws) / 3, rtol=1e-6)


def test_half_life_weights_by_samples(tmp_path):
    run, raws = _run(tmp_path)
    state, _, info = average_checkpoints(run, half_life=100.0)
    assert info["average"] == "half-life 100 samples"
    for k in state:  # each checkpoint 100 samples after the last: half the old weight stays
        want = ((raws[0][k] + raws[1][k]) / 2 + raws[2][k]) / 2
        np.testing.assert_allclose(state[k], want, rtol=1e-6, atol=1e-7)


def test_cli_writes_a_playable_policy(tmp_path):
    run, raws = _run(tmp_path)
    path = main([str(run), "--from-share", "1.0", "--out", str(tmp_path / "avg")])
    net, meta = load_policy_file(path)  # no moving average in it: the average itself plays
    assert meta["checkpoints"] == 1 and meta["to_env_steps"] == 300
    for k, v in policy_state(net).items():
        np.testing.assert_array_equal(v, raws[2][k])
    agent_net, _ = load_policy_net(tmp_path / "avg")
    assert agent_net.model_config == net.model_config


def test_refuses_bad_input_before_writing(tmp_path):
    with pytest.raises(FileNotFoundError, match="no complete checkpoint"):
        average_checkpoints(tmp_path)
    run, _ = _run(tmp_path)
    with pytest.raises(ValueError, match="from_share"):
        average_checkpoints(run, from_share=1.5)
    with pytest.raises(ValueError, match="half_life"):
        average_checkpoints(run, half_life=0)
    with pytest.raises(FileNotFoundError):
        main([str(tmp_path / "missing"), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="inside the run"):
        main([str(run), "--out", str(run / "avg")])
    assert not (run / "avg").exists()
