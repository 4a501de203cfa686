"""Config of a self-play run: defaults, YAML files, ``key=value`` overrides, validation.

A config is a nested dict. ``DEFAULTS`` lists every key; a YAML file (``configs/*.yaml``)
and command-line overrides (``ppo.lr=1e-4``, ``env.opponents.random=0.2``,
``model.hidden=[128,128]``; values are parsed as YAML) are merged over it in that order.
Unknown keys are an error that names them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from agents.rllib_module import check_model_config
from experiments.selfplay_env import DEFAULT_ENV_CONFIG, OPPONENT_KINDS, check_env_config

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG_FILE = REPO_ROOT / "configs" / "default.yaml"

# The built-in defaults equal configs/default.yaml (a ~20 minute run on 2 cores).
DEFAULTS: dict[str, Any] = {
    "name": "default",  # run directory: <runs_dir>/<name>
    "runs_dir": "runs",
    "seed": 0,
    "stop": {  # stop at whichever comes first (null = no limit)
        "iterations": None,
        "time_s": 1200,  # wall-clock seconds of the training loop (evaluations included)
        "env_steps": None,  # learner env steps
    },
    "ray": {
        "address": None,  # existing Ray cluster ("auto" or host:port); None = start locally
        "num_cpus": 2,  # CPUs of the local Ray instance (ignored with an address)
        "object_store_mb": 256,
    },
    "env_runners": {
        "num": 2,  # remote env runner actors, 1 CPU each (0 = sample in the driver)
        "envs_per_runner": 32,  # tables per runner, batched through one forward pass
        "rollout_fragment_length": "auto",  # steps per table per sampling round
        "sample_timeout_s": 120.0,
    },
    "env": {
        "game": dict(DEFAULT_ENV_CONFIG["game"]),  # guandan_env.env config of a deal
        "opponents": dict(DEFAULT_ENV_CONFIG["opponents"]),  # opposing team per episode
    },
    "model": {"hidden": [256, 256], "vf_share_layers": True},
    "ppo": {
        "lr": 1.0e-3,
        "gamma": 1.0,
        "lambda": 0.95,
        "train_batch_size": 4000,  # learner env steps per iteration
        "minibatch_size": 500,
        "num_epochs": 1,
        "clip_param": 0.2,
        "vf_clip_param": 10.0,
        "vf_loss_coeff": 0.5,
        "entropy_coeff": 0.01,
        "use_kl_loss": True,
        "kl_coeff": 0.2,
        "kl_target": 0.01,
        "grad_clip": 1.0,
    },
    "league": {
        "snapshot_every": 20,  # iterations between frozen snapshots of the policy
        "max_size": 10,  # oldest snapshots are dropped beyond this (0 = keep all)
    },
    "eval": {
        "every": 20,  # iterations between evaluations (0 = never during training)
        "pairs": 30,  # duplicate deal pairs per opponent (2 deals each)
        "final_pairs": 100,  # at the end of the run (0 = skip)
        "opponents": ["random", "heuristic"],  # agent specs (agents.registry)
        "greedy": True,  # evaluate the argmax policy (False: sample)
    },
    "checkpoint": {
        "every": 20,  # iterations between checkpoints (one is always written at the end)
        "keep": 3,  # newest checkpoints kept (0 = keep all)
    },
    "torch_threads": 1,  # torch threads of the driver (learner); see docs/selfplay.md
}


def _merge(base: dict, override: dict, path: str = "") -> dict:
    """``override`` merged over ``base``; keys missing from ``base`` raise ``ValueError``."""
    out = copy.deepcopy(base)
    unknown = []
    for k, v in override.items():
        key = f"{path}{k}"
        if k not in base:
            unknown.append(key)
        elif isinstance(base[k], dict) and k not in ("opponents", "game"):
            if not isinstance(v, dict):
                raise ValueError(f"config key {key!r} is a section; got {v!r}")
            out[k] = _merge(base[k], v, key + ".")
        elif isinstance(base[k], dict):
            if not isinstance(v, dict):
                raise ValueError(f"config key {key!r} must be a mapping; got {v!r}")
            out[k] = {**base[k], **v}  # checked by check_env_config
        else:
            out[k] = _coerce(key, base[k], copy.deepcopy(v))
    if unknown:
        raise ValueError(f"unknown config key(s): {', '.join(unknown)}")
    return out


def _coerce(key: str, default: Any, v: Any) -> Any:
    """Numbers written like ``1e-4`` (YAML reads them as strings) become floats."""
    numeric = isinstance(default, (int, float)) and not isinstance(default, bool)
    if numeric and isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            raise ValueError(f"config key {key!r} needs a number, got {v!r}") from None
    return v


def parse_overrides(items: list[str]) -> dict:
    """``["a.b=1", "c=[1, 2]"]`` -> ``{"a": {"b": 1}, "c": [1, 2]}`` (values parsed as YAML)."""
    out: dict = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"override {item!r} is not key=value")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        if not all(parts):
            raise ValueError(f"bad override key {key!r}")
        d = out
        for p in parts[:-1]:
            d = d.setdefault(p, {})
            if not isinstance(d, dict):
                raise ValueError(f"override {item!r} conflicts with another override")
        d[parts[-1]] = yaml.safe_load(raw)
    return out


def validate(cfg: dict) -> dict:
    """Check values that would otherwise fail late (inside Ray) with unclear errors."""
    check_env_config({"game": cfg["env"]["game"], "opponents": cfg["env"]["opponents"]})
    from guandan_env.aec import check_config

    check_config(cfg["env"]["game"])
    cfg["model"] = check_model_config(cfg["model"])
    for k in cfg["eval"]["opponents"]:
        if not isinstance(k, str):
            raise ValueError(f"eval.opponents must be agent specs (strings), got {k!r}")
    er = cfg["env_runners"]
    if int(er["num"]) < 0 or int(er["envs_per_runner"]) < 1:
        raise ValueError("env_runners.num must be >= 0 and env_runners.envs_per_runner >= 1")
    p = cfg["ppo"]
    if p["minibatch_size"] > p["train_batch_size"]:
        raise ValueError("ppo.minibatch_size must be <= ppo.train_batch_size")
    for section, key in (("league", "snapshot_every"), ("eval", "every"), ("checkpoint", "every")):
        if int(cfg[section][key]) < 0:
            raise ValueError(f"{section}.{key} must be >= 0")
    if set(cfg["env"]["opponents"]) - set(OPPONENT_KINDS):
        raise ValueError(f"env.opponents kinds must be in {OPPONENT_KINDS}")
    return cfg


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> dict:
    """Defaults <- YAML file <- overrides, validated."""
    cfg = copy.deepcopy(DEFAULTS)
    if path is not None:
        with open(path) as f:
            data = yaml.safe_load(f) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a config file must be a mapping")
        try:
            cfg = _merge(cfg, data)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
    if overrides:
        cfg = _merge(cfg, parse_overrides(overrides))
    return validate(cfg)


def save_config(cfg: dict, path: str | Path) -> None:
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
