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


def test_a_relative_id_embedding_reads_each_candidates_role_at_its_level():
    """``model.id_relative``: candidate ``a`` at level L reads ``E[level_relative_ids[L, a]]``
    (plain math against the fast path), and the numpy twin reads the same rows."""
    from agents.candidate_inputs import observation_arrays
    from agents.zoo.numpy_net import NumpyCandidateNet
    from guandan_env.encoding.level_relative import level_relative_ids

    torch.manual_seed(0)
    net = CandidateNet({**SMALL_MODEL, "id_relative": True})
    torch.nn.init.normal_(net.id_embedding.weight)  # zero at start: make it count
    levels_seen = set()
    for obs, mask in _decisions()[::9]:
        d = net.prepare(obs, mask)
        level = d.akeys[d.ainv] // NUM_ACTIONS  # each candidate's deal level
        levels_seen |= set(level.tolist())
        rows = torch.tensor(level_relative_ids())[level, d.ids]
        full = torch.cat([_action_rows(d), d.rest], 1)  # the candidates' whole rows
        z = net.state_proj(net.encode(d))[d.rows] + net.cand_proj(full) + net.id_embedding(rows)
        plain = net.scorer(torch.relu(z)).squeeze(-1)
        logits, _ = net(d)
        assert torch.allclose(logits, plain, atol=1e-5)
        twin = NumpyCandidateNet(
            {k: v.detach().numpy() for k, v in net.state_dict().items()}, net.model_config
        )
        t_logits, _ = twin.forward(observation_arrays(obs, mask, twin.features))
        np.testing.assert_allclose(t_logits, logits.detach().numpy(), rtol=1e-4, atol=1e-4)
    assert len(levels_seen) >= 8  # random levels: most levels met


def _action_rows(d) -> torch.Tensor:
    """Each candidate's action-block row (``ACTION_FEATURE_TABLE`` at its level and id)."""
    from agents.candidate_net import _FEATURE_TABLE

    return _FEATURE_TABLE.index_select(0, d.akeys).index_select(0, d.ainv)


def test_relative_card_bits_enter_the_trunk_by_their_place_in_the_levels_order():
    """``model.obs_relative``: the trunk's first layer adds a second embedding of the card
    bits, each moved to its place in the decision's level order (plain math: a dense 0/1
    matrix of the moved bits), zero at start; the numpy twin computes the same."""
    from agents.candidate_inputs import observation_arrays
    from agents.zoo.numpy_net import NumpyCandidateNet
    from guandan_env.encoding.level_relative import level_relative_card_bits
    from guandan_env.encoding.obs_layout import CARDS_END, OBS_SLICES

    torch.manual_seed(0)
    net = CandidateNet({**SMALL_MODEL, "obs_relative": True})
    assert torch.count_nonzero(net.card_embed.weight) == 0  # the natural view alone at start
    torch.nn.init.normal_(net.card_embed.weight)
    moved = level_relative_card_bits()
    for obs, mask in _decisions()[::9]:
        d = net.prepare(obs, mask)
        level = obs[:, OBS_SLICES["deal_level"]].argmax(1)
        rel = np.zeros((len(obs), CARDS_END), dtype=np.float32)
        for i in range(len(obs)):
            rel[i, moved[level[i]][np.flatnonzero(obs[i, :CARDS_END])]] = 1.0
        x = net.obs_embed(d.obs_idx, d.obs_offsets) + torch.from_numpy(rel) @ net.card_embed.weight
        h = net.trunk(torch.relu(x + net.dense_in(d.dense)))
        assert torch.allclose(net.encode(d), h, atol=1e-4)
        twin = NumpyCandidateNet(
            {k: v.detach().numpy() for k, v in net.state_dict().items()}, net.model_config
        )
        t_logits, t_values = twin.forward(observation_arrays(obs, mask, twin.features))
        logits, values = net(d)
        np.testing.assert_allclose(t_logits, logits.detach().numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(t_values, values.detach().numpy(), rtol=1e-4, atol=1e-4)
    # and it learns: the relative embedding gets a gradient
    logits, values = net(net.prepare(*_decisions()[20]))
    (logits.sum() + values.sum()).backward()
    assert torch.count_nonzero(net.card_embed.weight.grad) > 0
