"""Pruned planning (``experiments.selfplay.rllib.pruned_planning``, issue 24 item 5): the
first pass keeps the top ``k`` candidates of a decision by the same network's scores on cheap
plans, and only those are planned in full. Checked against a slow reference built from
``decision_features`` one decision at a time."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.candidate_net import CandidateNet, prepare_binary
from experiments.selfplay.rllib.pruned_planning import pruned_inputs, segment_top_k
from guandan_env.encoding import hand_plan as hp
from guandan_env.encoding.candidate_features import candidates_packed, decision_features
from guandan_env.encoding.packing import BINARY, SCALAR_INDEX, pack_masks, unpack_masks
from guandan_env.envs.vector import VectorGuandanEnv


def test_segment_top_k_matches_a_per_row_sort():
    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.integers(1, 12, rng.integers(1, 9))
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


@pytest.mark.parametrize("k", [1, 4, 8])
def test_pruned_inputs_keep_the_first_pass_top_k_with_full_plans(k):
    obs, mask = _decisions()
    torch.manual_seed(1)
    net = CandidateNet().eval()
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
    rows, _ = candidates_packed(bits)
    d_all = prepare_binary(binary, scalar, bits, net.features)
    d_all.rest = torch.from_numpy(cheap.rest)
    d_all.dense[:, 1:] = torch.from_numpy(full.state)
    with torch.no_grad():
        first = net.score(d_all, net.encode(d_all)).numpy()
    for i in np.flatnonzero(n_legal > k):
        at = np.flatnonzero(rows == i)
        best = np.sort(at[np.argsort(-first[at], kind="stable")[:k]])
        assert np.array_equal(np.flatnonzero(kept[i]), d_all.ids.numpy()[best]), i

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
    d, _, kept_bits = pruned_inputs(net, binary, scalar, bits, big)
    assert np.array_equal(kept_bits, bits)
    ref = prepare_binary(binary, scalar, bits, net.features)
    assert torch.equal(d.rest, ref.rest) and torch.equal(d.ids, ref.ids)


def test_a_negative_top_k_is_refused_before_anything_runs():
    from experiments.selfplay.config import load_config
    from experiments.selfplay.rllib.env_runner import check_runner_config

    with pytest.raises(ValueError, match="runners.plan_top_k must be >= 0"):
        load_config(None, ["runners.plan_top_k=-1"])
    with pytest.raises(ValueError, match="plan_top_k must be >= 0"):
        check_runner_config({"plan_top_k": -2})
