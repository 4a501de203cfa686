"""Search distillation (experiments.selfplay.distill): labels from the search agent, the
targets, the fine-tune."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.checkpoint import load_checkpoint_agent
from agents.registry import make_agent
from experiments.selfplay.distill import finetune as ft
from experiments.selfplay.distill import labels as lb
from guandan_env.encoding.packing import MASK_BYTES, OBS_BYTES
from guandan_env.envs.aec import raw_env

SPEC = lb.search_spec("pretrained:default", "worlds=2,candidates=3,margin=0.0,unsure=1.1")


@pytest.fixture(scope="module")
def deal_labels() -> dict[str, np.ndarray]:
    agents = [make_agent(SPEC, seed=0) for _ in range(4)]
    return lb.play_deal(raw_env(**lb.GAME), agents, deal=3, seed=11)


def test_labels_record_every_choice_and_the_searches(deal_labels):
    lab = deal_labels
    n = lab["action"].size
    assert n > 20
    assert lab["obs_bits"].shape == (n, OBS_BYTES) and lab["mask_bits"].shape == (n, MASK_BYTES)
    legal = np.unpackbits(lab["mask_bits"], axis=1)
    assert (legal.sum(1) >= 2).all()  # only decisions with a choice
    assert legal[np.arange(n), lab["action"]].all()  # the move played was legal
    s = lab["searched"]
    assert s.any()  # unsure=1.1: every play decision is searched
    tried = lab["cand"][s]
    assert (tried[:, 0] >= 0).all()
    # the search agent played one of the moves it tried: the best by gain (margin 0)
    gain = np.where(tried >= 0, lab["gain"][s], -np.inf)  # past the last tried: padding
    best = tried[np.arange(tried.shape[0]), gain.argmax(1)]
    assert (lab["action"][s] == best).all()
    assert (lab["cand"][~s] == -1).all() and (lab["gain"][~s] == 0).all()
    assert (lab["deal"] == 3).all()


def test_labels_are_a_function_of_the_seed(deal_labels):
    agents = [make_agent(SPEC, seed=0) for _ in range(4)]
    again = lb.play_deal(raw_env(**lb.GAME), agents, deal=3, seed=11)
    for k, v in deal_labels.items():
        np.testing.assert_array_equal(again[k], v, err_msg=k)


def test_labels_save_and_load_through_shards(tmp_path, deal_labels):
    lb.save_labels(tmp_path / "shard_00.npz", deal_labels)
    lb.save_labels(tmp_path / "shard_01.npz", deal_labels)
    both = lb.load_labels(tmp_path)
    assert both["action"].size == 2 * deal_labels["action"].size
    with pytest.raises(FileNotFoundError, match="no labels"):
        lb.load_labels(tmp_path / "nothing")


def test_labels_made_elsewhere_are_checked_before_use(tmp_path, deal_labels):
    bad = dict(deal_labels, gain=deal_labels["gain"][:, :2])
    lb.save_labels(tmp_path / "bad.npz", bad)
    with pytest.raises(ValueError, match="gain is float32"):
        lb.load_labels(tmp_path / "bad.npz")
    lb.save_labels(tmp_path / "short.npz", {"action": deal_labels["action"]})
    with pytest.raises(ValueError, match="not distillation labels"):
        lb.load_labels(tmp_path / "short.npz")


def test_advantages_are_gains_over_the_policy_top_move():
    labels = {
        "cand": np.array([[5, 7, 9], [4, -1, -1]], dtype=np.int16),
        "gain": np.array([[0.5, 1.5, -1.0], [0.0, 0.0, 0.0]], dtype=np.float32),
        "searched": np.array([True, False]),
    }
    rows = np.array([0, 0, 0, 0, 1, 1])
    ids = np.array([5, 6, 7, 9, 4, 8])
    adv = ft.advantages(labels, np.array([0, 1]), rows, ids)
    np.testing.assert_allclose(adv, [0.0, 0.0, 1.0, -1.5, 0.0, 0.0])


def _one_override(lab: dict) -> tuple[dict, int]:
    """The labels with one searched decision whose second tried move gains +2 levels."""
    lab = {k: v.copy() for k, v in lab.items()}
    i = int(np.flatnonzero(lab["searched"] & (lab["cand"][:, 1] >= 0))[0])
    lab["gain"][i] = 0.0
    lab["gain"][i, 1] = 2.0
    lab["action"][i] = lab["cand"][i, 1]
    return lab, i


@pytest.mark.parametrize("target", ft.TARGETS)
def test_finetune_moves_the_policy_toward_the_search_and_leaves_the_value(
    tmp_path, deal_labels, target
):
    lab, i = _one_override(deal_labels)
    params = ft.FinetuneParams(target=target, temperature=0.25, lr=3e-3, epochs=30, holdout=0.0)
    base, _ = ft.load_base("pretrained:default")
    net, config, report = ft.finetune("pretrained:default", lab, params, log=lambda m: None)
    idx = np.array([i])
    d = ft.prepare_packed(
        lab["obs_bits"][idx], lab["obs_scalar"][idx], lab["mask_bits"][idx], net.features
    )
    with torch.no_grad():
        before = dict(zip(*base.probabilities(d), strict=True))
        after = dict(zip(*net.probabilities(d), strict=True))
    move = int(lab["cand"][i, 1])
    assert after[move] > before[move] + 0.2
    torch.testing.assert_close(net.value_head.weight, base.value_head.weight)
    if target == "choice":  # one-hot: the override is now the top move, +2 levels by the search
        held = ft.held_out(net, base, lab, idx, params)
        assert held["follows_override"] == 1.0 and held["search_gain_per_searched"] == 2.0
    assert report["train"] == lab["action"].size
    path = tmp_path / "policy.pt"
    ft.save_policy(path, net, config, meta={"report": report})
    agent = load_checkpoint_agent(path)  # plays as a checkpoint agent
    assert agent.net.features == net.features


def test_the_held_out_report_of_the_unchanged_policy(deal_labels):
    base, _ = ft.load_base("pretrained:default")
    idx = np.arange(deal_labels["action"].size)
    held = ft.held_out(base, base, deal_labels, idx, ft.FinetuneParams(target="choice"))
    # the labels' first tried move is this policy's top move: nothing changes, nothing gained
    assert held["keeps_policy_elsewhere"] == 1.0
    assert held["follows_override"] == 0.0 or np.isnan(held["follows_override"])  # none made
    assert held["search_gain_per_searched"] == 0.0 and held["top_untried"] == 0.0
    assert held["kl_other"] == 0.0


def test_finetune_rejects_bad_parameters_and_bases():
    with pytest.raises(ValueError, match="target"):
        ft.FinetuneParams(target="hard")
    with pytest.raises(ValueError, match="temperature"):
        ft.FinetuneParams(temperature=0)
    with pytest.raises(ValueError, match="pretrained:NAME or checkpoint:PATH"):
        ft.load_base("heuristic")
