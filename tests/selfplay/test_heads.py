"""Training-only heads (``experiments.selfplay.rllib.heads``, issue 24 items 2 and 3): the
privileged critic starts at the value head's estimate and can never move the policy; the
separate critic starts as the policy's value, and the two losses train apart; the belief and
outcome heads train from the same labels; a run with all of them trains, ships the labels,
logs the losses, and its ``policy.pt`` holds no head weights."""

from __future__ import annotations

import csv
import json
import textwrap

import numpy as np
import pytest
import torch

from agents.candidate_net import CandidateNet, policy_state
from experiments.selfplay.rllib.heads import (
    HIDDEN_DIM,
    HeadsConfig,
    TrainingHeads,
    critic_state,
    hidden_hands,
    outcome_class,
)
from guandan_env import VectorGuandanEnv
from helpers import REPO
from helpers.selfplay import SMALL_MODEL, local_runner
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


def test_the_separate_critic_starts_as_the_policys_value_and_never_moves_the_policy():
    torch.manual_seed(0)
    net = CandidateNet(SMALL_MODEL)
    heads = TrainingHeads(SMALL_MODEL["trunk"], HeadsConfig(separate=True))
    start = critic_state(policy_state(net))
    assert set(start) == set(heads.critic.state_dict())  # the encoder and the value head
    heads.critic.load_state_dict({k: torch.from_numpy(v) for k, v in start.items()})
    env, obs, mask, seat = _decisions()
    d = net.prepare(obs, mask)
    with torch.no_grad():
        h = net.encode(d)
        assert torch.equal(heads.value(net, d, h, None), net.value_head(h).squeeze(-1))
        for p in heads.critic.parameters():  # as after training apart from the policy
            p.add_(0.1 * torch.randn_like(p))
    critic = net.act_batch(
        d, np.random.default_rng(5), value_of=lambda x: heads.value(net, d, x, None)
    )
    plain = net.act_batch(d, np.random.default_rng(5))
    assert np.array_equal(critic[0], plain[0]) and np.array_equal(critic[1], plain[1])
    assert not np.allclose(critic[2], plain[2])  # the value is the critic's own
    with pytest.raises(ValueError, match="trunk's sizes"):
        TrainingHeads(32, HeadsConfig(separate=True))


@pytest.mark.parametrize("privileged", [False, True])
def test_with_a_separate_critic_each_loss_trains_its_own_network(privileged):
    """In the learner's module the value loss reaches the critic only, the policy's scores
    reach the policy only, and the policy's own value head is frozen."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    from experiments.selfplay.config import load_config
    from experiments.selfplay.rllib.algorithm import build_algo_config

    over = ["critic.separate=true", f"critic.privileged={str(privileged).lower()}"]
    c = build_algo_config(load_config(REPO / "configs" / "smoke.yaml", over))
    spaces = {"__env__": (c.observation_space, c.action_space)}
    spaces[DEFAULT_MODULE_ID] = spaces["__env__"]
    learner = c.build_learner(env=None, spaces=spaces)
    learner.build()
    module = learner.module[DEFAULT_MODULE_ID].unwrapped()
    model = module.net.model_config
    heads = {"separate": True, "privileged": privileged}
    sample = local_runner(3, model=model, heads=heads).sample()
    assert ("hidden" in sample) == privileged  # labels ship only for heads that read them
    batch = {k: torch.from_numpy(np.asarray(v)) for k, v in sample.items()}
    assert not module.net.value_head.weight.requires_grad
    for loss in ("value", "policy"):
        module.zero_grad(set_to_none=True)
        out = module._forward(batch)
        if loss == "value":
            ((out["values"] - batch["value_targets"].float()) ** 2).mean().backward()
        else:
            out["logits"].pow(2).mean().backward()
        for name, p in module.named_parameters():
            reached = p.grad is not None and bool(p.grad.abs().sum() > 0)
            if name.startswith("heads.critic."):
                assert reached == (loss == "value"), (loss, name)
            elif name.startswith("net."):
                assert not reached or loss == "policy", (loss, name)
        if loss == "policy":
            assert module.net.trunk[0].weight.grad.abs().sum() > 0


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


SEPARATE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import numpy as np
    import ray
    from experiments.selfplay import SelfPlayTrainer
    from experiments.selfplay.config import load_config
    from experiments.selfplay.rllib.heads import critic_state

    run = Path(sys.argv[1])
    over = ["critic.separate=true", "eval.every_s=0", "eval.final_pairs=0"]
    cfg = load_config("configs/smoke.yaml", over)

    def runner_critic(trainer):
        def get(runner):
            return {k: v.numpy().copy() for k, v in runner.heads.critic.state_dict().items()}
        return trainer.algo.env_runner_group.foreach_env_runner(get, local_env_runner=True)[0]

    def same(a, b):
        return set(a) == set(b) and all(np.array_equal(a[k], b[k]) for k in a)

    out = {}
    trainer = SelfPlayTrainer(cfg, run)
    trainer.setup()
    start = critic_state(trainer.bc_state)
    learner = {k.removeprefix("critic."): v for k, v in trainer.main_state("heads.").items()}
    out["learner_starts_as_bc"] = same(learner, start)
    out["runner_starts_as_bc"] = same(runner_critic(trainer), start)
    for _ in range(3):
        trainer.train_once()
    net = trainer.main_state()
    out["value_head_frozen"] = all(
        np.array_equal(net[k], trainer.bc_state[k]) for k in net if k.startswith("value_head.")
    )
    bc = trainer.bc_state
    out["trunk_moved"] = not np.array_equal(net["trunk.0.weight"], bc["trunk.0.weight"])
    trained = {k.removeprefix("critic."): v for k, v in trainer.main_state("heads.").items()}
    out["critic_moved"] = not same(trained, start)
    trainer.save_checkpoint()
    trainer.close()
    ray.shutdown()
    again = SelfPlayTrainer(cfg, run, resume=True)
    again.setup()
    back = {k.removeprefix("critic."): v for k, v in again.main_state("heads.").items()}
    out["resumed"] = same(back, trained) and same(runner_critic(again), trained)
    again.train_once()
    again.close()
    print("RESULT " + json.dumps(out))
    """
)


def test_a_run_with_a_separate_critic_starts_it_as_the_warm_start_and_resumes_it(tmp_path):
    out = _run_python(SEPARATE_SCRIPT, [str(tmp_path / "run")], 300)
    result = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
    assert result == {
        "learner_starts_as_bc": True,
        "runner_starts_as_bc": True,
        "value_head_frozen": True,
        "trunk_moved": True,
        "critic_moved": True,
        "resumed": True,
    }
