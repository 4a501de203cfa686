"""The candidate network (``agents.candidate_net``) and its agent: probabilities only on
legal actions, the fast paths equal the plain math, seeded sampling."""

from __future__ import annotations

import numpy as np
import torch

from agents.candidate_agent import CandidateAgent
from agents.candidate_net import FEATURE_BLOCKS, CandidateNet, segment_log_softmax
from guandan_env import VectorGuandanEnv
from guandan_env.core.actions import NUM_ACTIONS
from helpers.selfplay import SMALL_MODEL


def _decisions(n_steps: int = 40, tables: int = 64, seed: int = 0):
    env = VectorGuandanEnv(tables, random_levels=True, random_tribute=True)
    obs, mask, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_steps):
        out.append((obs.copy(), mask.copy()))
        obs, mask, *_ = env.step(env.sample_actions(rng))
    return out


def test_candidate_probabilities_are_zero_off_the_legal_set_and_sum_to_one():
    net = CandidateNet(SMALL_MODEL)
    for obs, mask in _decisions()[::7]:
        d = net.prepare(obs, mask)
        logits, values = net(d)
        logp = segment_log_softmax(logits, d.rows, d.n)
        dense = torch.zeros(d.n, NUM_ACTIONS, dtype=torch.float64)
        dense[d.rows, d.ids] = torch.exp(logp).double()
        assert torch.all(dense[~torch.from_numpy(mask)] == 0)  # no logit at all off the mask
        assert torch.allclose(dense.sum(1), torch.ones(d.n, dtype=torch.float64), atol=1e-5)
        assert values.shape == (d.n,)


def test_fast_forward_and_backward_equal_the_plain_network_math():
    """The network's two shortcuts change no value: the action block projected over the
    batch's distinct (level, id) rows, and the first layer's sparse backward (both against
    the plain math: ``cand_proj`` over full candidate rows, ``nn.EmbeddingBag``)."""
    from agents.candidate_net import bits_times_weight
    from guandan_env.encoding.candidate_features import (
        candidate_rows,
        candidates_packed,
        decision_features,
    )
    from guandan_env.encoding.packing import OBS_BITS, pack_masks

    torch.manual_seed(0)
    net = CandidateNet({**SMALL_MODEL, "features": list(FEATURE_BLOCKS)})  # every block on
    obs, mask = _decisions()[20]
    d = net.prepare(obs, mask)
    assert d.akeys.shape[0] < d.ids.shape[0]  # distinct rows: fewer than candidates
    rows, ids = candidates_packed(pack_masks(mask))
    inputs = decision_features(obs[:, :OBS_BITS], rows, ids)
    full = torch.from_numpy(candidate_rows(inputs))
    x = net.obs_embed(d.obs_idx, d.obs_offsets) + net.dense_in(d.dense)
    h = net.trunk(torch.relu(x))
    z = net.state_proj(h)[d.rows] + net.cand_proj(full) + net.id_embedding(d.ids)
    plain = net.scorer(torch.relu(z)).squeeze(-1)
    logits, _ = net(d)
    assert torch.allclose(logits, plain, atol=1e-5)

    weight = torch.nn.Parameter(torch.randn(OBS_BITS, 8, dtype=torch.float64))
    grad = torch.randn(d.n, 8, dtype=torch.float64)
    bits_times_weight(weight, d.obs_idx, d.obs_offsets).backward(grad)
    fast = weight.grad.clone()
    weight.grad = None
    torch.nn.functional.embedding_bag(d.obs_idx, weight, d.obs_offsets, mode="sum").backward(grad)
    assert torch.allclose(fast, weight.grad, atol=1e-10)


def test_sampled_and_greedy_actions_are_legal_and_seeded():
    net = CandidateNet(SMALL_MODEL)
    obs, mask = _decisions()[20]
    d = net.prepare(obs, mask)
    a1, lp1, _ = net.act_batch(d, np.random.default_rng(5))
    a2, lp2, _ = net.act_batch(d, np.random.default_rng(5))
    assert np.array_equal(a1, a2) and np.array_equal(lp1, lp2)
    assert mask[np.arange(len(a1)), a1].all()
    g, _, _ = net.act_batch(d, greedy=True)
    assert mask[np.arange(len(g)), g].all()
    agent = CandidateAgent(net, seed=0)
    a = agent.act({"observation": obs[0], "action_mask": mask[0].astype(np.int8)}, {})
    assert mask[0, a]
