"""The learner (``experiments.selfplay.rllib.learner``): a non-finite update is skipped."""

from __future__ import annotations

import torch

from experiments.selfplay.config import load_config
from helpers import REPO


def test_a_non_finite_update_is_skipped_and_counted():
    """The learner checks all gradients with one fused norm: a NaN anywhere skips the
    optimizer step (weights unchanged, counted); finite gradients step."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    from experiments.selfplay.rllib.algorithm import build_algo_config

    c = build_algo_config(load_config(REPO / "configs" / "smoke.yaml"))
    spaces = {"__env__": (c.observation_space, c.action_space)}
    spaces[DEFAULT_MODULE_ID] = spaces["__env__"]
    learner = c.build_learner(env=None, spaces=spaces)
    learner.build()
    params = dict(learner._params)
    before = {k: v.detach().clone() for k, v in params.items()}
    bad = {k: torch.ones_like(v) for k, v in params.items()}
    bad[next(iter(bad))].view(-1)[0] = float("nan")
    learner.apply_gradients(bad)
    assert learner.skipped_updates == 1
    assert all(torch.equal(before[k], v) for k, v in params.items())
    learner.apply_gradients({k: torch.ones_like(v) for k, v in params.items()})
    assert learner.skipped_updates == 1
    assert any(not torch.equal(before[k], v) for k, v in params.items())
