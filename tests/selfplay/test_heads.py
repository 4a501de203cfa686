"""Training-only heads (``experiments.selfplay.rllib.heads``, issue 24 items 2 and 3): the
privileged critic starts at the value head's estimate and can never move the policy; the
belief and outcome heads train from the same labels; a run with all three trains, ships the
labels, logs the losses, and its ``policy.pt`` holds no head weights."""

from __future__ import annotations

import csv
import json
import textwrap

import numpy as np
import pytest
import torch

from agents.candidate_net import CandidateNet
from experiments.selfplay.rllib.heads import (
    HIDDEN_DIM,
    HeadsConfig,
    TrainingHeads,
    hidden_hands,
    outcome_class,
)
from guandan_env import VectorGuandanEnv
from helpers.selfplay import SMALL_MODEL
from helpers.selfplay import run_python as _run_python

ALL_HEADS = HeadsConfig(privileged=True, width=16, belief_coeff=0.1, outcome_coeff=0.1)


def _decisions(tables: int = 32, steps: int = 30):
    env = VectorGuandanEnv(tables, random_levels=True, random_tribute=True)
    obs, mask, seat = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        obs, mask, seat, *_ = env.step(env.sample_actions(rng))
    return env, obs, mask, seat


def test_hidden_hands_are_the_other_three_seats_in_turn_order():
    env, _, _, seat = _decisions()
    hands = env.state.hands
    hid = hidden_hands(hands, seat).reshape(len(seat), 3, -1)
    assert hid.shape[2] * 3 == HIDDEN_DIM and hid.dtype == np.uint8
    for t in range(len(seat)):
        for k in range(3):
            assert np.array_equal(hid[t, k], hands[t, (seat[t] + 1 + k) % 4])


def test_the_privileged_critic_starts_at_zero_and_never_moves_the_policy():
    torch.manual_seed(0)
    net = CandidateNet(SMALL_MODEL)
    heads = TrainingHeads(SMALL_MODEL["trunk"][-1], ALL_HEADS)
    env, obs, mask, seat = _decisions()
    d = net.prepare(obs, mask)
    hidden = torch.from_numpy(hidden_hands(env.state.hands, seat))
    h = net.encode(d)
    assert torch.all(heads.value_correction(h, hidden) == 0)  # zero-initialised output
    with torch.no_grad():
        heads.hidden_out.weight.normal_()  # as after training
    other = torch.from_numpy(np.random.default_rng(1).integers(0, 3, hidden.shape, np.uint8))
    results = []
    for hid in (hidden, other):

        def value_of(x, hid=hid):
            return net.value_head(x).squeeze(-1) + heads.value_correction(x, hid)

        results.append(net.act_batch(d, np.random.default_rng(5), value_of=value_of))
    (a0, lp0, v0), (a1, lp1, v1) = results
    assert np.array_equal(a0, a1) and np.array_equal(lp0, lp1)  # the policy: identical
    assert not np.allclose(v0, v1)  # the value: reads the hidden hands
    plain = net.act_batch(d, np.random.default_rng(5))
    assert np.array_equal(plain[0], a0) and np.array_equal(plain[1], lp0)


def test_the_belief_head_learns_and_its_guess_is_the_count_share():
    torch.manual_seed(0)
    env, obs, mask, seat = _decisions(tables=64)
    hidden = torch.from_numpy(hidden_hands(env.state.hands, seat))
    heads = TrainingHeads(8, HeadsConfig(belief_coeff=1.0))
    h = torch.randn(len(seat), 8)
    counts = hidden.float().view(-1, 3, 54)
    share = counts.sum(2) / counts.sum((1, 2))[:, None]
    want = -(counts.sum(2) * torch.log(share.clamp(min=1e-6))).sum() / counts.sum()
    loss0, guess = heads.belief_losses(h, hidden)
    assert torch.isclose(guess, want)
    opt = torch.optim.Adam(heads.parameters(), lr=0.05)
    for _ in range(100):
        opt.zero_grad()
        loss, _ = heads.belief_losses(h, hidden)
        loss.backward()
        opt.step()
    assert loss.item() < 0.8 * loss0.item()
    assert outcome_class(torch.tensor([-3, -1, 1, 3])).tolist() == [0, 2, 3, 5]


HEADS_SCRIPT = textwrap.dedent(
    """
    import sys
    from experiments.selfplay import main
    runs = sys.argv[1]
    rc = main(["--config", "configs/smoke.yaml", f"runs_dir={runs}", f"cache_dir={runs}/cache",
               "stop.iterations=3", "critic.privileged=true", "critic.width=16",
               "critic.belief_coeff=0.1", "critic.outcome_coeff=0.1", "eval.final_pairs=0",
               "stop.time_s=120", "ppo.lr_decay_from=0.0", "ppo.lr_decay_to=0.1"])
    assert rc == 0, rc
    # resume: the runners get the heads' weights back with the network's
    rc = main(["--resume", f"{runs}/smoke", "stop.iterations=4"])
    assert rc == 0, rc
    """
)


def test_the_lr_time_factor_follows_the_budget():
    from experiments.selfplay.config import load_config, lr_time_scale

    cfg = load_config(None, ["stop.time_s=100", "ppo.lr_decay_from=0.8", "ppo.lr_decay_to=0.1"])
    assert [lr_time_scale(t, cfg) for t in (0, 80, 90, 100, 150)] == pytest.approx(
        [1.0, 1.0, 0.55, 0.1, 0.1]
    )
    assert lr_time_scale(50, load_config(None, [])) == 1.0  # off by default
    with pytest.raises(ValueError, match="needs a time budget"):
        load_config(None, ["stop.time_s=null", "ppo.lr_decay_from=0.5"])


def test_a_run_with_every_head_trains_logs_them_and_ships_none(tmp_path):
    runs = tmp_path / "runs"
    _run_python(HEADS_SCRIPT, [str(runs)], 300)
    run = runs / "smoke"
    rows = list(csv.DictReader((run / "progress.csv").open()))
    assert len(rows) == 4
    for key in ("belief_loss", "belief_guess_loss", "outcome_loss"):
        values = [float(r[key]) for r in rows]
        assert all(np.isfinite(values)) and min(values) > 0, (key, values)
    assert float(rows[0]["belief_guess_loss"]) < np.log(3) + 1e-6  # the share beats uniform
    # the time budget's lr decay (ppo.lr_decay_from=0): the factor falls with the run's time,
    # and the applied lr is the schedule's times it
    scale = [float(r["lr_scale"]) for r in rows]
    assert 1.0 > scale[0] > scale[-1] > 0.1, scale
    for r in rows:
        assert np.isclose(float(r["effective_lr"]), float(r["lr"]) * float(r["lr_scale"]))
    policy = torch.load(
        run / "checkpoints" / "iter_000004" / "policy.pt", weights_only=True, map_location="cpu"
    )
    for part in ("state_dict", "ema_state_dict"):
        assert set(policy[part]) == set(CandidateNet(policy["model_config"]).state_dict())
    assert json.loads((run / "summary.json").read_text())["env_steps"] > 0
