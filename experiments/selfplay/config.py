"""Config of a self-play run: typed sections, YAML files, ``key=value`` overrides, validation.

A run's config is a ``RunConfig``: nested dataclasses whose field defaults are the one
source of defaults (``configs/default.yaml`` repeats them for readers; a test holds the two
equal). A YAML file (``configs/*.yaml``) and command-line overrides (``ppo.lr=1e-4``,
``league.self_share=0.6``, ``model.trunk=[256,256]``; values are parsed as YAML) are merged
over the defaults in that order (``experiments.common.typed_config``). Unknown keys and values of
the wrong type are errors that name the key.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents.candidate_net import DEFAULT_MODEL_CONFIG, check_model_config
from experiments.common.typed_config import merged, to_dict
from experiments.selfplay.warm_start.bc import BCConfig

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG_FILE = REPO_ROOT / "configs" / "default.yaml"


@dataclass
class Stop:
    """Stop at whichever limit comes first (``None`` = no limit)."""

    iterations: int | None = None
    time_s: float | None = 1500.0  # wall-clock seconds of the whole run, warm start included
    env_steps: int | None = None  # learner samples


@dataclass
class RayConfig:
    address: str | None = None  # existing cluster ("auto" or host:port); None = start locally
    num_cpus: int = 2  # CPUs of the local Ray instance (ignored with an address)
    object_store_mb: int = 512


@dataclass
class Runners:
    num: int = 1  # remote VectorEnvRunners, 1 CPU each (0 = sample in the driver)
    tables: int = 1024  # tables per runner, in lockstep
    steps_per_call: int = 20  # lockstep steps per runner and iteration (~15k samples)
    # sample() calls queued per runner (1 = no run-ahead; each more adds an iteration of
    # policy lag and keeps the runner busy through big batches)
    sample_ahead: int = 2


@dataclass
class Learners:
    # 0 = update in the driver; n >= 1 = n remote Learner actors (DDP over gloo; each
    # minibatch is split into n shards at decision boundaries, gradients averaged)
    num: int = 0
    cpus_each: float = 1.0  # CPUs reserved per remote Learner


@dataclass
class PPO:
    lr: float = 3.0e-4
    gamma: float = 1.0
    # GAE lambda (``lambda`` is a Python keyword: the YAML key is ``lambda``)
    lambda_: float = field(default=0.95, metadata={"key": "lambda"})
    minibatch_size: int = 2048  # decisions per gradient step, over all learners together
    num_epochs: int = 1
    clip_param: float = 0.2
    vf_loss_coeff: float = 0.5
    entropy_coeff: float = 0.003
    grad_clip: float | None = 1.0


@dataclass
class Anchor:
    """KL(BC policy || learner) penalty, annealed linearly to 0."""

    coeff: float = 0.1
    decay_samples: int = 5_000_000


@dataclass
class League:
    # episodes where all four seats are the learner; 1.0 (pure self-play, no league) by
    # default: on equal samples the league added nothing measurable and cost 38% of the
    # time (docs/selfplay.md, ablations)
    self_share: float = 1.0
    snapshot_every: int = 0  # iterations between frozen snapshots joining the league (0: none)
    max_snapshots: int = 6  # oldest snapshots leave beyond this (the BC net always stays)
    pfsp_power: float = 1.0  # opponent weight (1 - learner win rate) ** power
    # members new matchups draw from per iteration (0 = all; fewer means fewer, larger
    # forward passes in the runner: faster sampling, less variety)
    active_members: int = 0


@dataclass
class Eval:
    every_s: float = 300.0  # seconds between background evaluations (0 = none during training)
    pairs: int = 100  # duplicate deal pairs per opponent (2 deals each)
    final_pairs: int = 500  # after training (0 = skip)
    opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])  # specs


@dataclass
class Checkpoint:
    every: int = 20  # iterations between checkpoints (one is always written at the end)
    keep: int = 3  # newest checkpoints kept (0 = keep all)


@dataclass
class RunConfig:
    """Everything a self-play run reads (``python -m experiments.selfplay``)."""

    name: str = "default"  # run directory: <runs_dir>/<name>
    runs_dir: str = "runs"
    cache_dir: str = "runs/cache"  # behaviour-cloning data, shared between runs
    seed: int = 0
    stop: Stop = field(default_factory=Stop)
    ray: RayConfig = field(default_factory=RayConfig)
    runners: Runners = field(default_factory=Runners)
    learners: Learners = field(default_factory=Learners)
    # env config of the training deals (guandan_env.envs.scenario: checked by the env)
    game: dict[str, Any] = field(
        default_factory=lambda: {"mode": "deal", "random_levels": True, "random_tribute": True}
    )
    # network config (agents.candidate_net: checked by check_model_config)
    model: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(DEFAULT_MODEL_CONFIG))
    ppo: PPO = field(default_factory=PPO)
    warm_start: BCConfig = field(default_factory=BCConfig)  # behaviour cloning of the heuristic
    anchor: Anchor = field(default_factory=Anchor)
    league: League = field(default_factory=League)
    eval: Eval = field(default_factory=Eval)
    checkpoint: Checkpoint = field(default_factory=Checkpoint)
    torch_threads: int = 1  # torch threads of the driver (learner)


DEFAULTS = RunConfig()


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


def validate(cfg: RunConfig) -> RunConfig:
    """Check values that would otherwise fail late (inside Ray) with unclear errors; the
    ``game`` and ``model`` sections come back filled in by their owners' checks."""
    from guandan_env.envs.aec import check_config

    cfg.game = check_config(dict(cfg.game))
    if cfg.game["mode"] != "deal":
        raise ValueError("game.mode must be 'deal': training plays single deals")
    cfg.model = check_model_config(cfg.model)
    r, lr_ = cfg.runners, cfg.learners
    if r.num < 0 or r.tables < 1 or r.steps_per_call < 1:
        raise ValueError("runners.num must be >= 0, runners.tables and steps_per_call >= 1")
    if lr_.num < 0 or not lr_.cpus_each > 0:
        raise ValueError("learners.num must be >= 0 and learners.cpus_each > 0")
    if r.sample_ahead < 1:
        raise ValueError("runners.sample_ahead must be >= 1")
    if cfg.torch_threads < 1:
        raise ValueError("torch_threads must be >= 1")
    if not cfg.ppo.lr > 0:
        raise ValueError("ppo.lr must be > 0")
    from agents.registry import make_agent

    for spec in cfg.eval.opponents:  # before Ray starts, not inside an evaluation
        make_agent(spec, seed=0)
    if not 0 <= cfg.league.self_share <= 1:
        raise ValueError("league.self_share must be in [0, 1]")
    if cfg.ppo.minibatch_size < 1:
        raise ValueError("ppo.minibatch_size must be >= 1")
    for key, value in (
        ("league.snapshot_every", cfg.league.snapshot_every),
        ("eval.every_s", cfg.eval.every_s),
        ("eval.pairs", cfg.eval.pairs),
        ("eval.final_pairs", cfg.eval.final_pairs),
        ("checkpoint.every", cfg.checkpoint.every),
        ("warm_start.decisions", cfg.warm_start.decisions),
    ):
        if value < 0:
            raise ValueError(f"{key} must be >= 0")
    if cfg.warm_start.decisions > 0 and cfg.warm_start.epochs < 1:
        raise ValueError("warm_start.epochs must be >= 1 when warm_start.decisions > 0")
    return cfg


def runner_config(cfg: RunConfig) -> dict[str, Any]:
    """The ``VectorEnvRunner``'s config (``experiments.selfplay.rllib.env_runner``; RLlib
    passes it as the plain ``env_config`` dict) of a run config: the one mapping, so the runner's
    defaults are the run's."""
    r, p, lg = cfg.runners, cfg.ppo, cfg.league
    return {
        "tables": r.tables,
        "game": dict(cfg.game),
        "steps_per_call": r.steps_per_call,
        "self_share": lg.self_share,
        "pfsp_power": lg.pfsp_power,
        "active_members": lg.active_members,
        "gamma": p.gamma,
        "lambda": p.lambda_,
        "seed": cfg.seed,
        "model": dict(cfg.model),
    }


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> RunConfig:
    """Defaults <- YAML file <- overrides, validated."""
    cfg = RunConfig()
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
            cfg = merged(cfg, data)  # dict sections (game, model) merge key by key too
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
    if overrides:
        cfg = merged(cfg, parse_overrides(overrides))
    return validate(cfg)


def save_config(cfg: RunConfig, path: str | Path) -> None:
    with open(path, "w") as f:
        yaml.safe_dump(to_dict(cfg), f, sort_keys=False)
