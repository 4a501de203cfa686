"""Pruned planning (``experiments.selfplay.rllib.pruned_planning``, issue 24 item 5): the
first pass keeps the top ``k`` candidates of a decision by the same network's scores on cheap
plans, and only those are planned in full. Checked against a slow reference built from
``decision_features`` one decision at a time."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.candidate_inputs import decisions_only, with_candidates
from agents.candidate_net import CandidateNet, Decisions, prepare_binary
from experiments.selfplay.rllib.pruned_planning import pruned_inputs, segment_top_k
from guandan_env.encoding import hand_plan as hp
from guandan_env.encoding.candidate_features import candidates_packed, decision_features
from guandan_env.encoding.packing import BINARY, SCALAR_INDEX, pack_masks, unpack_masks
from guandan_env.envs.vector import VectorGuandanEnv
from helpers.selfplay import local_runner


def test_segment_top_k_matches_a_per_row_sort():
    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.integers(0, 12, rng.integers(1, 9))  # rows without candidates: gaps
        rows = np.repeat(np.arange(counts.size), counts)
        scores = rng.integers(0, 4, rows.size).astype(np.float32)  # many ties
        k = int(rng.integers(1, 6))
        got = segment_top_k(scores, rows, k)
        want = []
        for r in range(counts.size):
            at = np.flatnonzero(rows == r)
            want += sorted(at[np.argsort(-scores[at], kind="stable")[:k]].tolist())
        assert got.tolist() == sorted(want)


def _decisions(tables: int = 64, steps: int = 30, seed: int = 3):
    """Observations and masks of random play (leads with many candidates among them)."""
    env = VectorGuandanEnv(tables, random_levels=True, random_tribute=True)
    obs, mask, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    all_obs, all_mask = [], []
    for _ in range(steps):
        all_obs.append(obs.copy())
        all_mask.append(mask.copy())
        legal = [np.flatnonzero(m) for m in mask]
        obs, mask, *_ = env.step(np.array([rng.choice(a) for a in legal], dtype=np.int64))
    return np.concatenate(all_obs), np.concatenate(all_mask)


class _NoSequences:
    """A plan memo stand-in that plans without sequence rounds (the first pass's plans)."""

    def greedy(self, nat, bj, rj, wilds):
        return hp._greedy(nat, bj, rj, wilds, rounds=0)


@pytest.mark.parametrize(
    ("k", "features"), [(2, None), (4, None), (8, None), (4, ["after", "state"]), (4, ["plan"])]
)
def test_pruned_inputs_keep_the_first_pass_top_k_with_full_plans(k, features):
    obs, mask = _decisions()
    torch.manual_seed(1)
    model = {} if features is None else {"features": features}
    net = CandidateNet(model).eval()
    with torch.no_grad():  # scores spread enough to rank (the initial scorer is near flat)
        net.scorer[-1].weight.mul_(300.0)
    binary, scalar, bits = obs[:, BINARY] != 0, obs[:, SCALAR_INDEX], pack_masks(mask)
    d, h, kept_bits = pruned_inputs(net, binary, scalar, bits, k, hp.PlanCache(12))
    n_legal = mask.sum(1)
    assert (n_legal > k).sum() > 50, "the sample needs decisions with many candidates"

    # the reference: per decision, the first pass scores every candidate with plans without
    # sequences for the hand left and the hand (the state rows keep the full plans)
    kept = unpack_masks(kept_bits)
    assert not (kept & ~mask.astype(bool)).any(), "a kept candidate is not legal"
    assert np.array_equal(kept.sum(1), np.minimum(n_legal, k))
    full = decision_features(binary, *candidates_packed(bits))
    cheap = decision_features(binary, *candidates_packed(bits), cache=_NoSequences())
    d_all = prepare_binary(binary, scalar, bits, net.features)
    ref_arrays = with_candidates(
        decisions_only(binary, scalar, full.state, net.features),
        d_all.rows.numpy(),
        d_all.ids.numpy(),
        cheap.keys,
        cheap.rest,
        net.features,
    )
    d_cheap = Decisions.from_arrays(ref_arrays)
    with torch.no_grad():
        first = net.score(d_cheap, net.encode(d_cheap)).numpy()
    rows, ids = d_all.rows.numpy(), d_all.ids.numpy()
    for i in np.flatnonzero(n_legal > k):
        at = np.flatnonzero(rows == i)
        inside = kept[i, ids[at]]
        # the kept ones score at least as high as every dropped one (up to float rounding
        # between the two batches: exact ties do occur)
        assert first[at][inside].min() >= first[at][~inside].max() - 1e-5, i

    # the kept candidates carry exactly the full features of an unpruned pass over them
    ref = prepare_binary(binary, scalar, kept_bits, net.features)
    for field in ("obs_idx", "obs_offsets", "dense", "rows", "ids", "akeys", "ainv", "rest"):
        assert torch.equal(getattr(d, field), getattr(ref, field)), field
    with torch.no_grad():
        assert torch.allclose(h, net.encode(ref))
        a, logp, _ = net.act_batch(d, np.random.default_rng(0), h=h)
        a2, logp2, _ = net.act_batch(ref, np.random.default_rng(0))
    assert np.array_equal(a, a2) and np.allclose(logp, logp2, atol=1e-6)


def test_decisions_with_few_candidates_are_planned_in_full_at_once():
    obs, mask = _decisions(tables=16, steps=10)
    net = CandidateNet().eval()
    big = int(mask.sum(1).max())
    binary, scalar, bits = obs[:, BINARY] != 0, obs[:, SCALAR_INDEX], pack_masks(mask)
    d, h, kept_bits = pruned_inputs(net, binary, scalar, bits, big)
    assert h is None and np.array_equal(kept_bits, bits)
    ref = prepare_binary(binary, scalar, bits, net.features)
    for field in ("obs_idx", "obs_offsets", "dense", "rows", "ids", "akeys", "ainv", "rest"):
        assert torch.equal(getattr(d, field), getattr(ref, field)), field


@pytest.mark.parametrize("heads", [{}, {"privileged": True}, {"separate": True}])
def test_the_learner_recomputes_the_acting_log_probabilities_of_a_pruned_sample(heads):
    """The sample's masks hold the kept candidates: the learner's inputs (shipped rows, the
    masks' candidates) give back the log-probability each action was sampled with."""
    from agents.candidate_net import segment_log_softmax, taken_index
    from experiments.selfplay.rllib.env_runner import minibatches
    from experiments.selfplay.rllib.learner import batch_decisions

    runner = local_runner(11, plan_top_k=3, heads=heads)
    sample = runner.sample()
    m = runner.get_metrics()
    assert sample["cand_count"].max() <= 3 and m["num_candidates_planned"] < m["num_candidates"]
    net = runner.net
    for mb in minibatches(sample, 128, np.random.default_rng(0)):
        d = batch_decisions(mb, net.features)  # the learner's own reading of a batch
        with torch.no_grad():
            logits, _ = net(d)
        logp = segment_log_softmax(logits, d.rows, d.n)
        taken = logp[taken_index(d.rows, d.ids, torch.from_numpy(mb["actions"]))].numpy()
        assert np.allclose(taken, mb["logp"], atol=1e-5)


def test_league_members_are_pruned_too():
    runner = local_runner(4, plan_top_k=2, self_share=0.0)
    member = CandidateNet(runner.model_config)
    runner.set_league([("bc", {k: v.numpy() for k, v in member.state_dict().items()})])
    seen = []
    act_batch = member.act_batch

    def watched(d, rng, greedy=False, value_of=None, h=None):
        seen.append(int(np.bincount(d.rows.numpy()).max()))
        return act_batch(d, rng, greedy, value_of, h)

    runner.league[0][1].act_batch = watched
    runner.sample()
    assert seen and max(seen) <= 2


def test_the_audit_measures_the_mass_outside_the_kept_candidates():
    runner = local_runner(6, plan_top_k=2)
    runner.sample()
    m = runner.get_metrics()
    assert m["audit_decisions"] > 0 and 0.0 < m["audit_mass_outside"] < m["audit_decisions"]
    plain = local_runner(6)
    plain.sample()
    assert plain.get_metrics()["audit_decisions"] == 0


@pytest.mark.parametrize("k", [-1, 1])
def test_a_top_k_that_leaves_no_choice_is_refused_before_anything_runs(k):
    from experiments.selfplay.config import load_config
    from experiments.selfplay.rllib.env_runner import check_runner_config

    with pytest.raises(ValueError, match=r"runners.plan_top_k must be 0 .* or >= 2"):
        load_config(None, [f"runners.plan_top_k={k}"])
    with pytest.raises(ValueError, match=r"plan_top_k must be 0 .* or >= 2"):
        check_runner_config({"plan_top_k": k})
    net = CandidateNet()
    obs, mask = _decisions(tables=4, steps=2)
    with pytest.raises(ValueError, match="top_k must be >= 2"):
        pruned_inputs(net, obs[:, BINARY] != 0, obs[:, SCALAR_INDEX], pack_masks(mask), 1)


def test_first_pass_stand_ins_keep_the_after_block_and_differ_only_in_the_plans():
    from guandan_env.encoding.candidate_features import (
        AFTER_DIM,
        DELTA_COL,
        candidate_rest,
        decision_context,
    )

    obs, mask = _decisions(tables=16, steps=12)
    binary = obs[:, BINARY] != 0
    rows, ids = candidates_packed(pack_masks(mask))
    ctx = decision_context(binary)
    full = candidate_rest(ctx, rows, ids)
    cheap = candidate_rest(ctx, rows, ids, plans="no_sequences")
    bare = candidate_rest(ctx, rows, ids, plans="none")
    assert np.array_equal(full, decision_features(binary, rows, ids).rest)
    assert np.array_equal(full[:, :AFTER_DIM], cheap[:, :AFTER_DIM])
    assert np.array_equal(full[:, :AFTER_DIM], bare[:, :AFTER_DIM])
    assert not bare[:, AFTER_DIM : DELTA_COL + 1].any()
    # the beat block needs no plans: every mode has it
    for other in (cheap, bare):
        assert np.array_equal(full[:, DELTA_COL + 1 :], other[:, DELTA_COL + 1 :])
    # without sequences a hand never needs fewer plays than with them (plays / 10)
    assert (cheap[:, AFTER_DIM] >= full[:, AFTER_DIM] - 1e-6).all()
    with pytest.raises(ValueError, match="plans must be one of"):
        candidate_rest(ctx, rows, ids, plans="greedy")
    net = CandidateNet().eval()
    d, _, kept = pruned_inputs(
        net, binary, obs[:, SCALAR_INDEX], pack_masks(mask), 3, first_pass="none"
    )
    assert unpack_masks(kept).sum(1).max() <= 3
