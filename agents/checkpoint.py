"""Trained policies as agents: ``load_checkpoint_agent(path, seed)`` (spec ``checkpoint:PATH``).

A self-play checkpoint directory (``runs/<name>/checkpoints/iter_000120/``) holds RLlib's
algorithm state and, beside it, ``policy.pt``: the trained network's weights and model
config in plain torch form. Loading needs neither Ray running nor an RLlib algorithm: the
network (``agents.rllib_module.GuandanNet``) is rebuilt from ``policy.pt`` and plays
``argmax`` over the legal actions (``greedy=False``: samples from the masked softmax with
the agent's seeded numpy RNG).

``PATH`` may be the ``policy.pt`` file, a checkpoint directory, or a run directory
(``runs/<name>``: its newest checkpoint). A checkpoint directory without ``policy.pt``
(written by plain RLlib) is read from RLlib's saved module state of ``main``.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.rllib_module import GuandanNet, net_state_from_module_state
from guandan_env.actions import NUM_ACTIONS
from guandan_env.observation import OBS_DIM

POLICY_FILE = "policy.pt"
POLICY_FORMAT = "guandan-policy-v1"
MODULE_ID = "main"


class CheckpointAgent:
    """A trained ``GuandanNet`` following the agent protocol (``agents.base.Agent``).

    It keeps no per-seat state, so one instance may play several seats.
    """

    def __init__(
        self,
        net: GuandanNet,
        seed: int | None = None,
        greedy: bool = True,
        name: str = "checkpoint",
    ) -> None:
        self.net = net.eval()
        self.greedy = greedy
        self.name = name
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation, info: dict) -> int:
        return self.net.act(
            observation["observation"], observation["action_mask"], self.rng, self.greedy
        )


def save_policy(
    path: str | Path,
    state_dict: dict[str, Any],
    model_config: dict,
    meta: dict | None = None,
) -> Path:
    """Write ``policy.pt`` (weights as tensors, model config, free-form ``meta``)."""
    path = Path(path)
    if path.is_dir():
        path = path / POLICY_FILE
    payload = {
        "format": POLICY_FORMAT,
        "obs_dim": OBS_DIM,
        "num_actions": NUM_ACTIONS,
        "model_config": dict(model_config),
        "state_dict": {k: torch.as_tensor(np.asarray(v)).clone() for k, v in state_dict.items()},
        "meta": dict(meta or {}),
    }
    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)
    return path


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """Newest ``checkpoints/iter_*`` directory of a run (by iteration), or None."""
    ckpts = sorted(Path(run_dir, "checkpoints").glob("iter_*"))
    ckpts = [c for c in ckpts if c.is_dir() and (c / "trainer_state.json").exists()]
    return ckpts[-1] if ckpts else None


def _resolve(path: Path) -> Path:
    if path.is_file():
        return path
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    if (path / POLICY_FILE).exists():
        return path / POLICY_FILE
    if (path / "checkpoints").is_dir():
        ckpt = latest_checkpoint(path)
        if ckpt is None:
            raise FileNotFoundError(f"run directory {path} has no finished checkpoint yet")
        return _resolve(ckpt)
    return path  # maybe a plain RLlib checkpoint directory


def _rllib_module_state(ckpt: Path) -> tuple[dict, dict]:
    """(module state, model config) of module ``main`` from an RLlib checkpoint directory."""
    mdir = ckpt / "learner_group" / "learner" / "rl_module" / MODULE_ID
    if not mdir.is_dir():
        raise FileNotFoundError(
            f"{ckpt} is neither a policy file, a self-play checkpoint (with {POLICY_FILE}) nor "
            f"an RLlib checkpoint with module {MODULE_ID!r}"
        )
    for name in ("module_state.pt", "module_state.pkl"):
        f = mdir / name
        if f.exists():
            if name.endswith(".pt"):
                state = torch.load(f, map_location="cpu", weights_only=False)
            else:
                with f.open("rb") as fh:
                    state = pickle.load(fh)
            break
    else:
        raise FileNotFoundError(f"no module_state.pt/.pkl in {mdir}")
    model_config: dict = {}
    meta = mdir / "class_and_ctor_args.pkl"
    if meta.exists():
        with meta.open("rb") as fh:
            ctor = pickle.load(fh)
        kwargs = ctor.get("ctor_args_and_kwargs", ((), {}))[1] if isinstance(ctor, dict) else {}
        model_config = dict(kwargs.get("model_config") or {})
    return state, model_config


def load_policy_net(path: str | Path) -> tuple[GuandanNet, dict]:
    """The network and the ``meta`` dict stored at ``path`` (see module docstring)."""
    p = _resolve(Path(path))
    if p.is_file():
        payload = torch.load(p, map_location="cpu", weights_only=True)
        if not isinstance(payload, dict) or payload.get("format") != POLICY_FORMAT:
            raise ValueError(f"{p} is not a {POLICY_FORMAT} policy file")
        if payload["obs_dim"] != OBS_DIM or payload["num_actions"] != NUM_ACTIONS:
            raise ValueError(
                f"{p} was trained with obs_dim={payload['obs_dim']}, "
                f"num_actions={payload['num_actions']}; this env has {OBS_DIM}, {NUM_ACTIONS}"
            )
        net = GuandanNet(OBS_DIM, NUM_ACTIONS, payload["model_config"])
        net.load_state_dict(payload["state_dict"])
        return net.eval(), dict(payload.get("meta") or {})
    state, model_config = _rllib_module_state(p)
    net = GuandanNet(OBS_DIM, NUM_ACTIONS, model_config)
    net.load_state_dict(net_state_from_module_state(state))
    return net.eval(), {"source": str(p)}


def load_checkpoint_agent(
    path: str | Path, seed: int | None = None, greedy: bool = True
) -> CheckpointAgent:
    """An agent playing the policy saved at ``path`` (policy file, checkpoint or run dir)."""
    torch.set_num_threads(1)  # batch-1 inference; more threads only contend
    net, meta = load_policy_net(path)
    name = f"checkpoint:{path}"
    return CheckpointAgent(net, seed=seed, greedy=greedy, name=name)
