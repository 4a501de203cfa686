"""Config of a self-play run: defaults, YAML files, ``key=value`` overrides, validation.

A config is a nested dict. ``DEFAULTS`` lists every key; a YAML file (``configs/*.yaml``)
and command-line overrides (``ppo.lr=1e-4``, ``league.self_share=0.6``,
``model.trunk=[256,256]``; values are parsed as YAML) are merged over it in that order.
Unknown keys are an error that names them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from agents.candidate_net import DEFAULT_MODEL_CONFIG, check_model_config
from experiments.bc import DEFAULT_BC_CONFIG

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG_FILE = REPO_ROOT / "configs" / "default.yaml"

# The built-in defaults equal configs/default.yaml (tested).
DEFAULTS: dict[str, Any] = {
    "name": "default",  # run directory: <runs_dir>/<name>
    "runs_dir": "runs",
    "cache_dir": "runs/cache",  # behaviour-cloning data, shared between runs
    "seed": 0,
    "stop": {  # stop at whichever comes first (null = no limit)
        "iterations": None,
        "time_s": 1500,  # wall-clock seconds of the whole run, warm start included
        "env_steps": None,  # learner samples
    },
    "ray": {
        "address": None,  # existing Ray cluster ("auto" or host:port); None = start locally
        "num_cpus": 2,  # CPUs of the local Ray instance (ignored with an address)
        "object_store_mb": 512,
    },
    "runners": {
        "num": 1,  # remote VectorEnvRunners, 1 CPU each (0 = sample in the driver)
        "tables": 1024,  # tables per runner, in lockstep
        "steps_per_call": 20,  # lockstep steps per runner and iteration (~15k samples)
        "sample_ahead": 2,  # sample() calls queued per runner (1 = no run-ahead; each
        # more adds an iteration of policy lag and keeps the runner busy through big batches)
    },
    "learners": {
        "num": 0,  # 0 = update in the driver; n >= 1 = n remote Learner actors (DDP over gloo;
        # each minibatch is split into n shards at decision boundaries, gradients averaged)
        "cpus_each": 1,  # CPUs reserved per remote Learner
    },
    "game": {"mode": "deal", "random_levels": True, "random_tribute": True},
    "model": copy.deepcopy(DEFAULT_MODEL_CONFIG),
    "ppo": {
        "lr": 3.0e-4,
        "gamma": 1.0,
        "lambda": 0.95,
        "minibatch_size": 2048,  # decisions per gradient step, over all learners together
        "num_epochs": 1,
        "clip_param": 0.2,
        "vf_loss_coeff": 0.5,
        "entropy_coeff": 0.003,
        "grad_clip": 1.0,
    },
    "warm_start": dict(DEFAULT_BC_CONFIG),  # behaviour cloning of the heuristic
    "anchor": {  # KL(BC policy || learner) penalty, annealed linearly to 0
        "coeff": 0.1,
        "decay_samples": 5_000_000,
    },
    "league": {
        # episodes where all four seats are the learner; 1.0 (pure self-play, no league) by
        # default: on equal samples the league added nothing measurable and cost 38% of the
        # time (docs/selfplay.md, ablations)
        "self_share": 1.0,
        "snapshot_every": 0,  # iterations between frozen snapshots joining the league (0: none)
        "max_snapshots": 6,  # oldest snapshots leave beyond this (the BC net always stays)
        "pfsp_power": 1.0,  # opponent weight (1 - learner win rate) ** power
        "active_members": 0,  # members new matchups draw from per iteration (0 = all; fewer
        # means fewer, larger forward passes in the runner: faster sampling, less variety)
    },
    "eval": {
        "every_s": 300,  # seconds between background evaluations (0 = none during training)
        "pairs": 100,  # duplicate deal pairs per opponent (2 deals each)
        "final_pairs": 500,  # after training (0 = skip)
        "opponents": ["random", "heuristic"],  # agent specs (agents.registry)
    },
    "checkpoint": {
        "every": 20,  # iterations between checkpoints (one is always written at the end)
        "keep": 3,  # newest checkpoints kept (0 = keep all)
    },
    "torch_threads": 1,  # torch threads of the driver (learner)
}


def _merge(base: dict, override: dict, path: str = "") -> dict:
    """``override`` merged over ``base``; keys missing from ``base`` raise ``ValueError``."""
    out = copy.deepcopy(base)
    unknown = []
    for k, v in override.items():
        key = f"{path}{k}"
        if k not in base:
            unknown.append(key)
        elif isinstance(base[k], dict) and k != "game":
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
    """A value of the default's type: numbers written like ``1e-4`` (YAML reads them as
    strings) become floats; a list, text or bool where a number belongs (``ppo.lr=[1]``), or
    a number where a flag or list belongs, is an error naming the key. ``None`` is allowed
    where the default is ``None`` (no limit) or a number (stop limits)."""
    numeric = isinstance(default, int | float) and not isinstance(default, bool)
    if default is None and key in _NULLABLE:
        numeric = True
    if default is None and key == "ray.address" and not (v is None or isinstance(v, str)):
        raise ValueError(f"config key {key!r} needs an address (text) or null, got {v!r}")
    if numeric:
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                raise ValueError(f"config key {key!r} needs a number, got {v!r}") from None
        if v is None and key in _NULLABLE:
            return v
        if isinstance(v, bool) or not isinstance(v, int | float) or v != v:
            raise ValueError(f"config key {key!r} needs a number, got {v!r}")
        seconds = key.endswith("_s")  # durations: any number
        if isinstance(default, int) and not seconds:
            if isinstance(v, float) and not v.is_integer():
                raise ValueError(f"config key {key!r} needs a whole number, got {v!r}")
            return int(v)
        return v
    if isinstance(default, bool) and not isinstance(v, bool):
        raise ValueError(f"config key {key!r} needs true or false, got {v!r}")
    if isinstance(default, list) and not isinstance(v, list):
        raise ValueError(f"config key {key!r} needs a list, got {v!r}")
    if isinstance(default, str) and not isinstance(v, str):
        raise ValueError(f"config key {key!r} needs text, got {v!r}")
    return v


# numeric keys that may also be null (no limit / none)
_NULLABLE = {"stop.iterations", "stop.time_s", "stop.env_steps", "ppo.grad_clip"}


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
    from guandan_env.envs.aec import check_config

    game = check_config(dict(cfg["game"]))
    if game["mode"] != "deal":
        raise ValueError("game.mode must be 'deal': training plays single deals")
    cfg["model"] = check_model_config(cfg["model"])
    for k in cfg["eval"]["opponents"]:
        if not isinstance(k, str):
            raise ValueError(f"eval.opponents must be agent specs (strings), got {k!r}")
    r = cfg["runners"]
    if int(r["num"]) < 0 or int(r["tables"]) < 1 or int(r["steps_per_call"]) < 1:
        raise ValueError("runners.num must be >= 0, runners.tables and steps_per_call >= 1")
    lr_ = cfg["learners"]
    if int(lr_["num"]) < 0 or not float(lr_["cpus_each"]) > 0:
        raise ValueError("learners.num must be >= 0 and learners.cpus_each > 0")
    if int(r["sample_ahead"]) < 1:
        raise ValueError("runners.sample_ahead must be >= 1")
    if int(cfg["torch_threads"]) < 1:
        raise ValueError("torch_threads must be >= 1")
    if not float(cfg["ppo"]["lr"]) > 0:
        raise ValueError("ppo.lr must be > 0")
    from agents.registry import make_agent

    for spec in cfg["eval"]["opponents"]:  # before Ray starts, not inside an evaluation
        make_agent(spec, seed=0)
    if not 0 <= float(cfg["league"]["self_share"]) <= 1:
        raise ValueError("league.self_share must be in [0, 1]")
    if int(cfg["ppo"]["minibatch_size"]) < 1:
        raise ValueError("ppo.minibatch_size must be >= 1")
    for section, key in (
        ("league", "snapshot_every"),
        ("eval", "every_s"),
        ("eval", "pairs"),
        ("eval", "final_pairs"),
        ("checkpoint", "every"),
        ("warm_start", "decisions"),
    ):
        if float(cfg[section][key]) < 0:
            raise ValueError(f"{section}.{key} must be >= 0")
    if int(cfg["warm_start"]["decisions"]) > 0 and int(cfg["warm_start"]["epochs"]) < 1:
        raise ValueError("warm_start.epochs must be >= 1 when warm_start.decisions > 0")
    return cfg


def runner_config(cfg: dict) -> dict[str, Any]:
    """The ``VectorEnvRunner``'s config (``experiments.vector_runner``) of a run config: the
    one mapping, so the runner's defaults are the run's (``DEFAULTS``)."""
    r, p, lg = cfg["runners"], cfg["ppo"], cfg["league"]
    return {
        "tables": int(r["tables"]),
        "game": dict(cfg["game"]),
        "steps_per_call": int(r["steps_per_call"]),
        "self_share": float(lg["self_share"]),
        "pfsp_power": float(lg["pfsp_power"]),
        "active_members": int(lg["active_members"]),
        "gamma": float(p["gamma"]),
        "lambda": float(p["lambda"]),
        "seed": int(cfg["seed"]),
        "model": dict(cfg["model"]),
    }


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> dict:
    """Defaults <- YAML file <- overrides, validated."""
    cfg = copy.deepcopy(DEFAULTS)
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ValueError(
                f"--config {path}: not a config file (a YAML file such as configs/default.yaml)"
            )
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
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
