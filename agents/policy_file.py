"""The policy file ``policy.pt``: a ``CandidateNet``'s weights, model config and free-form
``meta``, with the env version, observation size and action count it was trained for (each
checked at load). Plain tensors only: it loads with ``torch.load(weights_only=True)``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.candidate_net import CandidateNet, net_from_state, policy_state
from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.observation import OBS_DIM
from guandan_env.env_version import ENV_VERSION, check_env_version

POLICY_FORMAT = "guandan-candidate-policy-v2"


def save_policy(
    path: str | Path,
    net_or_state,
    model_config: dict,
    meta: dict | None = None,
    ema_state: dict | None = None,
):
    """Write ``policy.pt``: weights, model config, free-form ``meta`` (atomically); with
    ``ema_state``, also an exponential moving average of the weights (what agents play)."""
    path = Path(path)
    if path.is_dir():
        path = path / "policy.pt"
    state = policy_state(net_or_state) if isinstance(net_or_state, nn.Module) else net_or_state
    payload = {
        "format": POLICY_FORMAT,
        "env_version": ENV_VERSION,
        "obs_dim": OBS_DIM,
        "num_actions": NUM_ACTIONS,
        "model_config": dict(model_config),
        "state_dict": {k: torch.from_numpy(np.array(v)) for k, v in state.items()},
        "meta": dict(meta or {}),
    }
    if ema_state is not None:
        payload["ema_state_dict"] = {k: torch.from_numpy(np.array(v)) for k, v in ema_state.items()}
    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)
    return path


WEIGHTS = ("ema", "raw")


def load_policy_file(path: str | Path, weights: str = "ema") -> tuple[CandidateNet, dict]:
    """The network and ``meta`` of a ``policy.pt``; a clear error for other formats.
    ``weights="ema"`` (the default) takes the moving average of the weights when the file
    has one, ``"raw"`` the trained weights themselves."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    payload = torch.load(path, map_location="cpu", weights_only=True)
    fmt = payload.get("format") if isinstance(payload, dict) else None
    if fmt == "guandan-policy-v1":
        raise ValueError(
            f"{path} is a policy of the old flat 2,243-logit network (format guandan-policy-v1), "
            "which this version no longer plays; retrain it with python -m experiments.selfplay"
        )
    if fmt != POLICY_FORMAT:
        raise ValueError(f"{path} is not a {POLICY_FORMAT} policy file (format {fmt!r})")
    check_env_version(payload.get("env_version"), str(path))
    if payload["obs_dim"] != OBS_DIM or payload["num_actions"] != NUM_ACTIONS:
        raise ValueError(
            f"{path} was trained with obs_dim={payload['obs_dim']}, num_actions="
            f"{payload['num_actions']}; this env has {OBS_DIM}, {NUM_ACTIONS}"
        )
    key = "ema_state_dict" if weights == "ema" and "ema_state_dict" in payload else "state_dict"
    return net_from_state(payload[key], payload["model_config"]), dict(payload["meta"])


def load_ema_state(path: str | Path) -> dict[str, np.ndarray] | None:
    """The moving average of the weights a ``policy.pt`` holds (``None``: it has none)."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    ema = payload.get("ema_state_dict")
    return None if ema is None else {k: v.numpy() for k, v in ema.items()}
