"""The vector env runner (``experiments.selfplay.rllib.env_runner``): its RLlib contract
(sample, metrics, set_state), seeding, GAE, shipped features, league members.

Runs that start Ray go through subprocesses with hard timeouts, so a Ray hang cannot stall CI.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import torch

from agents.candidate_net import CandidateNet
from helpers.selfplay import SMALL_MODEL
from helpers.selfplay import local_runner as _local_runner
from helpers.selfplay import run_python as _run_python

# ---------------------------------------------------------------------- the env runner
RUNNER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from experiments.selfplay.rllib.algorithm import build_algo_config, init_ray
    from experiments.selfplay.config import load_config
    from ray.rllib.core import COMPONENT_RL_MODULE, DEFAULT_MODULE_ID

    num = int(sys.argv[1])
    cfg = load_config("configs/smoke.yaml", [f"runners.num={num}", "runners.tables=16",
                      "runners.steps_per_call=16", "ppo.minibatch_size=128"])
    init_ray(cfg.ray)
    algo = build_algo_config(cfg).build_algo()
    out = {}
    # a warm start's weights reach the runners before any update (no sequence-number skip)
    import tempfile
    from pathlib import Path
    from agents.candidate_net import CandidateNet, policy_state
    from experiments.selfplay import SelfPlayTrainer
    trainer = SelfPlayTrainer(cfg, Path(tempfile.mkdtemp()))
    trainer.algo = algo
    warm = policy_state(CandidateNet(cfg.model))
    trainer._set_main_weights(warm)
    states = algo.env_runner_group.foreach_env_runner(
        lambda r: r.get_state(), local_env_runner=(num == 0))
    rw = states[0][COMPONENT_RL_MODULE][DEFAULT_MODULE_ID]
    out["warm_weights"] = all(np.array_equal(rw["net." + k], v) for k, v in warm.items())
    for it in range(2):
        algo.train()
        info = algo.last_info
        out[f"steps{it}"] = info["env_steps"]
        out[f"metrics{it}"] = {k: v for k, v in info["runner_metrics"][0].items()
                               if isinstance(v, (int, float))}
    algo.stop_sampling()
    # set_state: the runners hold the learner's weights after a sync
    learner = algo.learner_group.get_state(components="learner/rl_module")
    lw = learner["learner"]["rl_module"][DEFAULT_MODULE_ID]
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group)
    states = algo.env_runner_group.foreach_env_runner(
        lambda r: r.get_state(), local_env_runner=(num == 0))
    rw = states[0][COMPONENT_RL_MODULE][DEFAULT_MODULE_ID]
    out["same_weights"] = all(np.array_equal(np.asarray(lw[k]), rw[k]) for k in rw)
    out["runners"] = algo.env_runner_group.num_remote_env_runners()
    batch = algo.env_runner_group.foreach_env_runner(
        lambda r: r.sample(), local_env_runner=(num == 0))[0]
    out["legal"] = bool(np.unpackbits(batch["mask_bits"], axis=1)[
        np.arange(len(batch["actions"])), batch["actions"]].all())
    algo.stop()
    print("RESULT " + json.dumps(out))
    """
)


@pytest.mark.parametrize("num_runners", [0, 1])
def test_runner_contract_sample_metrics_set_state(num_runners):
    out = _run_python(RUNNER_SCRIPT, [str(num_runners)], 180)
    res = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
    assert res["runners"] == num_runners
    for it in range(2):
        m = res[f"metrics{it}"]
        assert res[f"steps{it}"] >= 16 * 16 // 4  # a quarter of the steps' decisions
        assert m["num_env_steps_sampled"] == res[f"steps{it}"]  # what PPO's loop counts
        assert m["num_game_steps"] > 0
    assert res["warm_weights"] and res["same_weights"] and res["legal"]


@pytest.mark.parametrize("plan_top_k", [0, 4])
def test_equal_seeds_give_equal_samples(plan_top_k):
    a, b, c = (_local_runner(s, plan_top_k=plan_top_k) for s in (7, 7, 8))
    state = a.get_state()
    b.set_state(state)
    c.set_state(state)
    sa, sb, sc = a.sample(), b.sample(), c.sample()
    for k in sa:
        assert np.array_equal(sa[k], sb[k]), k
    assert not np.array_equal(sa["obs_bits"][:50], sc["obs_bits"][:50])


def test_gae_targets_are_the_deal_reward_with_lambda_one():
    """With γ = λ = 1 every decision's target is its seat's final reward (±1..3, R-6.3), and
    the advantage is that reward minus the value the acting pass predicted."""
    runner = _local_runner(3, **{"lambda": 1.0})
    s = runner.sample()
    targets = s["value_targets"]
    assert np.allclose(targets, np.round(targets), atol=1e-5)  # float32 sums of adv + value
    assert set(np.unique(np.round(targets))) <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}
    assert np.allclose(s["advantages"], s["value_targets"] - s["values"], atol=1e-5)
    m = runner.get_metrics()
    assert m["num_env_steps_sampled"] == len(s["actions"])


def test_forced_decisions_skip_the_network_and_the_learner_batch():
    """A decision with one legal action carries no policy gradient: with ``skip_forced``
    (the default) it is played without the network, never stored, and counted apart; the
    GAE chain goes from choice to choice, so with γ = λ = 1 every target is still the
    seat's final reward (the same as with the forced decisions kept)."""
    from guandan_env.encoding.packing import unpack_masks

    runner = _local_runner(5, **{"lambda": 1.0})
    seen = []
    act_batch = runner.net.act_batch

    def watched(d, rng, greedy=False, value_of=None, h=None):
        seen.append(np.bincount(d.rows.numpy()))  # candidates per decision in the batch
        return act_batch(d, rng, greedy, value_of, h)

    runner.net.act_batch = watched
    s = runner.sample()
    m = runner.get_metrics()
    assert seen and min(int(c.min()) for c in seen) >= 2, "a forced decision reached the net"
    legal = unpack_masks(s["mask_bits"]).sum(axis=1)
    assert legal.min() >= 2 and m["num_env_steps_sampled"] == len(s["actions"])
    assert 0 < m["num_forced_steps"] < m["num_game_steps"]
    print(f"forced share of game decisions: {m['num_forced_steps'] / m['num_game_steps']:.1%}")
    assert set(np.unique(np.round(s["value_targets"]))) <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}

    kept = _local_runner(5, **{"lambda": 1.0, "skip_forced": False}).sample()
    legal_kept = unpack_masks(kept["mask_bits"]).sum(axis=1)
    assert (legal_kept == 1).any()  # without skipping, forced decisions are learner samples
    assert set(np.unique(np.round(kept["value_targets"]))) <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}


def _peaked_runner_after(steps: int, **overrides):
    """A local runner whose scorer is scaled up (most sampled actions then have probability
    >= 0.9), after exactly ``steps`` lockstep steps, and its finished decisions (``sample()``
    may step further, by the complete decisions it counts, which skipping changes)."""
    runner = _local_runner(5, **{"lambda": 1.0}, **overrides)
    with torch.no_grad():
        runner.net.scorer[-1].weight.mul_(1e4)
    runner._ensure_env()
    for _ in range(steps):
        runner._step()
    return runner, runner._store.take_complete(runner._last)


def test_confident_decisions_are_played_but_never_learner_samples():
    """``skip_confident`` = p: the same games are played (same actions, same RNG draws), and
    the samples are exactly the decisions whose sampled action had probability below p, with
    GAE along the chain without the others: with γ = λ = 1 each target is the seat's final
    reward, so the samples equal the full run's, filtered (targets up to float rounding)."""
    from experiments.selfplay.rllib.env_runner import take_rows

    full_runner, full = _peaked_runner_after(400)
    runner, kept = _peaked_runner_after(400, skip_confident=0.9)
    confident = runner.get_metrics()["num_confident_steps"]
    assert np.array_equal(full_runner._obs, runner._obs)  # the same games, step for step
    assert confident > 0 and 0 < len(kept["actions"]) < len(full["actions"])
    assert kept["logp"].max() < np.log(0.9)
    expected = take_rows(full, np.flatnonzero(full["logp"] < np.log(0.9)))
    for k, v in kept.items():
        if k in ("advantages", "value_targets"):
            np.testing.assert_allclose(v, expected[k], atol=1e-5, err_msg=k)
        else:
            assert np.array_equal(v, expected[k]), k
    assert set(np.unique(np.round(kept["value_targets"]))) <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}
    assert full_runner.get_metrics()["num_confident_steps"] == 0  # off by default


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_a_confidence_threshold_outside_0_1_is_refused_before_anything_runs(p):
    from experiments.selfplay.config import load_config
    from experiments.selfplay.rllib.env_runner import check_runner_config

    with pytest.raises(ValueError, match=r"runners.skip_confident must be 0 \(off\) or a"):
        load_config(None, [f"runners.skip_confident={p}"])
    with pytest.raises(ValueError, match=r"skip_confident must be 0 \(off\) or a"):
        check_runner_config({"skip_confident": p})


@pytest.mark.parametrize("plan_top_k", [0, 3])
def test_shipped_candidate_features_equal_recomputed_ones_in_every_minibatch(plan_top_k):
    """The runner ships each decision's state and candidate blocks (computed when it acted);
    the learner's minibatches must carry exactly what ``decision_features`` gives for their
    rows, and the network must read the same inputs either way. With ``plan_top_k`` the
    sample's masks hold the kept candidates, planned in full like any others."""
    from agents.candidate_inputs import block_mask
    from agents.candidate_net import CandidateNet, prepare_packed
    from experiments.selfplay.rllib.env_runner import minibatches
    from guandan_env.encoding.candidate_features import candidates_packed, decision_features
    from guandan_env.encoding.packing import OBS_BITS

    runner = _local_runner(5, plan_top_k=plan_top_k)
    sample = runner.sample()
    m = runner.get_metrics()
    share = m["num_candidates_planned"] / m["num_candidates"]
    if plan_top_k:
        assert sample["cand_count"].max() <= plan_top_k and 0 < share < 1
    else:
        assert share == 1.0
    net = CandidateNet()
    # the runner ships the blocks its network reads (the others zeroed, as the net zeroes them)
    cand_mask, state_mask = block_mask(net.features)
    for mb in minibatches(sample, 97, np.random.default_rng(0)):
        binary = np.unpackbits(mb["obs_bits"], axis=1, count=OBS_BITS)
        rows, ids = candidates_packed(mb["mask_bits"])
        inputs = decision_features(binary, rows, ids)
        assert np.array_equal(inputs.state * state_mask, mb["state_feats"])
        assert np.array_equal(inputs.rest * cand_mask, mb["cand_rest"])
        assert np.array_equal(np.bincount(rows, minlength=len(mb["actions"])), mb["cand_count"])
        args = (mb["obs_bits"], mb["obs_scalar"], mb["mask_bits"], net.features)
        shipped = prepare_packed(*args, (mb["state_feats"], mb["cand_rest"]))
        computed = prepare_packed(*args)
        for field in ("obs_idx", "obs_offsets", "dense", "rows", "ids", "akeys", "ainv", "rest"):
            assert torch.equal(getattr(shipped, field), getattr(computed, field)), field


def test_fractional_epochs_pass_every_decision_then_a_share_again():
    """``ppo.num_epochs`` 1.3: every decision once (a full shuffle), then 30% of them again
    from a fresh shuffle; whole epochs are full passes; the same RNG gives the same cuts."""
    from experiments.selfplay.rllib.env_runner import minibatches

    n = 1000
    sample = {
        "actions": np.arange(n, dtype=np.int64),
        "cand_count": np.full(n, 2, np.int32),
        "cand_rest": np.arange(2 * n, dtype=np.float32)[:, None],
    }

    def passes(epochs: float, seed: int = 0) -> list[np.ndarray]:
        mbs = list(minibatches(sample, 128, np.random.default_rng(seed), epochs))
        for mb in mbs:  # each decision keeps its own candidate rows
            assert np.array_equal(mb["cand_rest"][::2, 0], 2 * mb["actions"])
        return [mb["actions"] for mb in mbs]

    seen = np.concatenate(passes(1.3))
    assert seen.size == 1300
    assert np.array_equal(np.sort(seen[:n]), np.arange(n))  # the whole pass first
    assert np.unique(seen[n:]).size == 300  # then 300 distinct decisions again
    assert np.bincount(seen, minlength=n).max() == 2
    assert np.concatenate(passes(2.0)).size == 2000
    half = np.concatenate(passes(0.5))
    assert half.size == 500 and np.unique(half).size == 500  # below one: a share only
    assert all(np.array_equal(a, b) for a, b in zip(passes(1.3), passes(1.3), strict=True))


def test_minibatches_are_near_equal_with_no_short_tail():
    """A pass of 1,025 decisions at size 128 is nine minibatches of 113-114 decisions, not
    eight of 128 and a tail of one (whose advantage std is NaN: a lost update)."""
    from experiments.selfplay.rllib.env_runner import minibatches

    for n, size in [(1025, 128), (1024, 128), (50, 128), (2049, 2048)]:
        sample = {
            "actions": np.arange(n, dtype=np.int64),
            "cand_count": np.ones(n, np.int32),
            "cand_rest": np.zeros((n, 1), np.float32),
        }
        sizes = [len(mb["actions"]) for mb in minibatches(sample, size, np.random.default_rng(0))]
        assert sum(sizes) == n and len(sizes) == -(-n // size)
        assert max(sizes) <= size and max(sizes) - min(sizes) <= 1


def test_league_members_play_inside_the_runner():
    runner = _local_runner(4, self_share=0.0)
    member = CandidateNet(SMALL_MODEL)
    runner.set_league([("bc", {k: v.numpy() for k, v in member.state_dict().items()})])
    runner.sample()
    m = runner.get_metrics()
    assert m["games_vs_bc"] > 0 and "bc" in m["league_win_rates"]


@pytest.mark.parametrize(
    "features", [["after", "plan", "state"], ["after", "plan", "state", "beat"]]
)
def test_weights_from_before_a_block_load_into_a_runner_and_refuse_to_resume(tmp_path, features):
    """A policy saved before the candidate rows' beat or reply block (fewer columns) still
    plays in a runner (zero columns added); resuming its run is refused before anything
    loads."""
    import torch

    from agents.candidate_inputs import LEGACY_CAND_WIDTHS
    from agents.checkpoint import POLICY_FILE
    from experiments.selfplay.trainer import _check_resumable_width
    from guandan_env.encoding.candidate_features import CAND_DIM

    width = LEGACY_CAND_WIDTHS[len(features) - 3]
    runner = _local_runner(5, model={**SMALL_MODEL, "features": features})
    old = {k: v.detach().numpy().copy() for k, v in runner.net.state_dict().items()}
    old["cand_proj.weight"] = old["cand_proj.weight"][:, :width] + 1.0
    runner.set_main_weights(old)
    w = runner.net.cand_proj.weight.detach().numpy()
    assert w.shape[1] == CAND_DIM
    assert np.allclose(w[:, :width], old["cand_proj.weight"])
    assert not w[:, width:].any()
    assert len(runner.sample()["actions"]) > 0

    ckpt = tmp_path / "iter_000001"
    ckpt.mkdir()
    state = {k: torch.from_numpy(np.asarray(v)) for k, v in old.items()}
    torch.save({"state_dict": state}, ckpt / POLICY_FILE)
    with pytest.raises(ValueError, match="blocks added"):
        _check_resumable_width(ckpt)
    state["cand_proj.weight"] = torch.zeros(4, CAND_DIM)
    torch.save({"state_dict": state}, ckpt / POLICY_FILE)
    _check_resumable_width(ckpt)  # today's width: no complaint
