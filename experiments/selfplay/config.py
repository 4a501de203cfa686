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
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agents.candidate_net import DEFAULT_MODEL_CONFIG, check_model_config
from experiments.common.typed_config import Schedule, describe, merged, option, to_yaml
from experiments.selfplay.warm_start.bc import BCConfig

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG_FILE = REPO_ROOT / "configs" / "default.yaml"


@dataclass
class Stop:
    """Stop at whichever limit comes first (null: no limit)."""

    iterations: int | None = option(None, "PPO iterations")
    time_s: float | None = option(
        1620.0, "wall-clock seconds of the whole run, warm start included"
    )
    env_steps: int | None = option(None, "learner samples")


@dataclass
class RayConfig:
    """Where the run's Ray work goes."""

    address: str | None = option(
        None, "an existing cluster ('auto' or host:port); null starts a local instance"
    )
    num_cpus: int = option(2, "CPUs of the local Ray instance (ignored with an address)")
    object_store_mb: int = option(512, "object store of the local Ray instance, MiB")
    worker_niceness: int = option(
        0,
        "niceness of the local Ray instance's workers, the runners included (at Ray's own "
        "default, 15, an idle runner or evaluation under SCHED_IDLE takes ~8% of a core it "
        "shares with them; at 0 they are level with the learner in the driver)",
    )


@dataclass
class Runners:
    """The VectorEnvRunners that play the training tables."""

    num: int = option(1, "remote VectorEnvRunners, 1 CPU each (0: sample in the driver)")
    tables: int = option(1024, "tables per runner, in lockstep")
    skip_forced: bool = option(
        True,
        "decisions with one legal action are played without the network and never become "
        "learner samples (no policy gradient; the GAE chain skips them)",
    )
    skip_confident: float = option(
        0.0,
        "0: off; p in (0, 1): decisions whose sampled action had probability >= p are played "
        "but never become learner samples (their policy gradient is ~(1 - p) of a full one), "
        "and the GAE chain skips them as it skips forced ones",
    )
    plan_top_k: int = option(
        0,
        "0: plan every candidate; k >= 2: a decision with more than k candidates plans only "
        "the k best of a cheap first pass (plans without sequences) and samples among them "
        "(experiments.selfplay.rllib.pruned_planning; training only, agents score all)",
    )
    steps_per_call: int = option(
        20, "lockstep steps per runner and iteration (about 15k samples at 1,024 tables)"
    )
    sample_ahead: int = option(
        2,
        "sample() calls queued per runner (1: no run-ahead; each more adds an iteration of "
        "policy lag and keeps the runner busy through big batches)",
    )
    idle: int = option(
        1,
        "more runners beside runners.num, each sampling only on CPU time nothing else wants "
        "(Linux SCHED_IDLE): on 2 cores, the learner's waits for samples; each takes a Ray "
        "CPU slot, so on a cluster set 0 or leave a CPU for it",
    )
    idle_tables: int = option(
        256,
        "tables of each idle runner (fewer than runners.tables: on leftover CPU a deal "
        "takes longer, and fewer tables keep its samples' policy lag near the main runner's)",
    )


@dataclass
class Learners:
    """Where the PPO update runs."""

    num: int = option(
        0,
        "0: update in the driver; n >= 1: n remote Learner actors (DDP over gloo; each "
        "minibatch is split into n shards at decision boundaries, gradients averaged)",
    )
    cpus_each: float = option(1.0, "CPUs reserved per remote Learner")


@dataclass
class PPO:
    """The PPO update. A Schedule is a number or [[samples, value], ...] over learner samples
    (linear between points, RLlib's form)."""

    lr: Schedule = option(Schedule.constant(3.0e-4), "learning rate (Schedule)")
    gamma: float = option(1.0, "discount")
    lambda_: float = option(0.95, "GAE lambda", key="lambda")
    minibatch_size: int = option(2048, "decisions per gradient step, over all learners together")
    num_epochs: float = option(
        1.0,
        "passes over each iteration's samples; a fraction is one more pass over that share of "
        "them (1.3: every decision once, then 30% again), e.g. to use a learner that would "
        "otherwise wait for the runner",
    )
    clip_param: float = option(0.2, "PPO ratio clip")
    vf_loss_coeff: float = option(0.5, "weight of the value loss")
    entropy_coeff: Schedule = option(Schedule.constant(0.003), "entropy bonus (Schedule)")
    grad_clip: float | None = option(1.0, "gradient norm clip (null: none)")
    lr_decay_from: float | None = option(
        None,
        "share of stop.time_s after which the learning rate falls linearly, to lr_decay_to "
        "times its schedule when the time is up (null: no decay by time)",
    )
    lr_decay_to: float = option(0.1, "the learning rate's factor at the end of the time budget")


@dataclass
class Anchor:
    """KL(BC policy || learner) penalty towards the warm start."""

    coeff: Schedule = option(
        Schedule(((0, 0.1), (5_000_000, 0.0))),
        "weight of the KL penalty (Schedule; by default 0.1 annealed linearly to 0 over 5 M "
        "samples); ignored without a warm start",
    )


@dataclass
class WeightAverage:
    """An exponential moving average of the policy weights, saved in policy.pt beside the
    raw weights; agents and evaluations play it, resume continues the raw weights."""

    half_life_samples: int = option(
        2_000_000,
        "learner samples (with runners.skip_confident: choices, the confident decisions kept "
        "out counted too) over which an old weight's share halves (0: no average)",
    )


@dataclass
class Critic:
    """Training-only heads beside the policy network (experiments.selfplay.rllib.heads): a
    privileged critic that also reads the other hands (used only for GAE; never by the
    policy, never saved in policy.pt), a separate critic network, a belief head and an
    outcome head."""

    privileged: bool = option(
        False, "the value for GAE also reads the three other hands (zero at start)"
    )
    separate: bool = option(
        False,
        "the value for GAE comes from a network of its own (the policy's trunk sizes, copied "
        "from the warm start), so the policy's trunk learns from the policy's loss only",
    )
    width: int = option(128, "hidden width of the privileged branch")
    belief_coeff: float = option(
        0.0, "weight of the belief head's log loss: which seat holds each unseen card (0: off)"
    )
    outcome_coeff: float = option(
        0.0, "weight of the outcome head's log loss: the deal's result for the seat (0: off)"
    )

    def as_dict(self) -> dict[str, Any]:
        return {
            "privileged": self.privileged,
            "separate": self.separate,
            "width": self.width,
            "belief_coeff": self.belief_coeff,
            "outcome_coeff": self.outcome_coeff,
        }


@dataclass
class League:
    """Opponents besides the learner itself."""

    self_share: float = option(
        1.0,
        "share of episodes where all four seats are the learner; 1.0 (pure self-play, no "
        "league) by default: on equal samples the league added nothing measurable and cost 38% "
        "of the time (docs/selfplay_runs.md, the ablations)",
    )
    snapshot_every: int = option(
        0, "iterations between frozen snapshots joining the league (0: none)"
    )
    max_snapshots: int = option(6, "oldest snapshots leave beyond this (the BC net always stays)")
    pfsp_power: float = option(1.0, "opponent weight (1 - learner win rate) ** power")
    active_members: int = option(
        0,
        "members new matchups draw from per iteration (0: all; fewer means fewer, larger "
        "forward passes in the runner: faster sampling, less variety)",
    )


@dataclass
class Eval:
    """Duplicate evaluation of the greedy policy, beside training and at the end."""

    every_s: float = option(
        300.0, "seconds between background evaluations (0: none during training)"
    )
    pairs: int = option(100, "duplicate deal pairs per opponent (2 deals each)")
    final_pairs: int = option(500, "pairs per opponent after training (0: skip)")
    opponents: list[str] = option(
        help="agent specs to evaluate against", factory=lambda: ["random", "heuristic"]
    )
    final_only: list[str] = option(
        help="opponents of eval.opponents played only after training, never beside it (random: "
        "won in every pair from the warm start on, yet half of an evaluation's CPU, which "
        "beside training is only what the runners leave idle)",
        factory=lambda: ["random"],
    )
    idle: bool = option(
        True,
        "background evaluations run on idle CPU only (SCHED_IDLE on Linux), not slowing the "
        "runner; they wait where no CPU is ever idle",
    )
    overdue_holds_idle: bool = option(
        False,
        "an evaluation still running when the next is due pauses the idle runners "
        "(runners.idle) until it ends, so it has the idle CPU to itself: where the learner "
        "binds, evaluations ~40% faster for a few idle-runner samples",
    )


@dataclass
class Checkpoint:
    """Checkpoints in runs/<name>/checkpoints."""

    every: int = option(20, "iterations between checkpoints (one is always written at the end)")
    keep: int = option(3, "newest checkpoints kept (0: keep all)")


@dataclass
class RunConfig:
    """Everything a self-play run reads (``python -m experiments.selfplay``)."""

    name: str = option("default", "run directory: <runs_dir>/<name>")
    runs_dir: str = option("runs", "where runs go")
    cache_dir: str = option("runs/cache", "behaviour-cloning data, shared between runs")
    seed: int = option(0, "fixes the deals, the warm-start data and the network's start")
    stop: Stop = option(help=Stop.__doc__, factory=Stop)
    ray: RayConfig = option(help=RayConfig.__doc__, factory=RayConfig)
    runners: Runners = option(help=Runners.__doc__, factory=Runners)
    learners: Learners = option(help=Learners.__doc__, factory=Learners)
    game: dict[str, Any] = option(
        help="env config of the training deals (guandan_env.envs.scenario; checked by the env)",
        factory=lambda: {"mode": "deal", "random_levels": True, "random_tribute": True},
    )
    model: dict[str, Any] = option(
        help="network config (agents.candidate_net; checked by check_model_config)",
        factory=lambda: copy.deepcopy(DEFAULT_MODEL_CONFIG),
    )
    ppo: PPO = option(help=PPO.__doc__, factory=PPO)
    warm_start: BCConfig = option(
        help="behaviour cloning of the heuristic (experiments.selfplay.warm_start.bc)",
        factory=BCConfig,
    )
    anchor: Anchor = option(help=Anchor.__doc__, factory=Anchor)
    ema: WeightAverage = option(help=WeightAverage.__doc__, factory=WeightAverage)
    critic: Critic = option(help=Critic.__doc__, factory=Critic)
    league: League = option(help=League.__doc__, factory=League)
    eval: Eval = option(help=Eval.__doc__, factory=Eval)
    checkpoint: Checkpoint = option(help=Checkpoint.__doc__, factory=Checkpoint)
    torch_threads: int = option(1, "torch threads of the driver (learner)")


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
    if r.plan_top_k < 0 or r.plan_top_k == 1:
        raise ValueError(
            "runners.plan_top_k must be 0 (plan every candidate) or >= 2 (one kept candidate "
            f"leaves no choice), got {r.plan_top_k}"
        )
    if not 0.0 <= r.skip_confident < 1.0:
        raise ValueError(
            "runners.skip_confident must be 0 (off) or a probability in (0, 1), got "
            f"{r.skip_confident}"
        )
    if r.sample_ahead < 1:
        raise ValueError("runners.sample_ahead must be >= 1")
    if not 0 <= cfg.ray.worker_niceness <= 19:
        raise ValueError(
            f"ray.worker_niceness must be in 0..19 (below 0 needs privileges), got "
            f"{cfg.ray.worker_niceness}"
        )
    if r.idle < 0 or r.idle_tables < 1:
        raise ValueError("runners.idle must be >= 0 and runners.idle_tables >= 1")
    if r.idle and r.num == 0:
        raise ValueError(
            f"runners.idle={r.idle} needs runners.num >= 1 (with runners.num=0 the driver "
            "samples, with no remote runner to sit beside); set runners.idle=0"
        )
    if cfg.torch_threads < 1:
        raise ValueError("torch_threads must be >= 1")
    if not all(v > 0 for v in cfg.ppo.lr.values()):
        raise ValueError("ppo.lr must be > 0 at every point of its schedule")
    for key, sched in (
        ("ppo.entropy_coeff", cfg.ppo.entropy_coeff),
        ("anchor.coeff", cfg.anchor.coeff),
    ):
        if not all(v >= 0 for v in sched.values()):
            raise ValueError(f"{key} must be >= 0 at every point of its schedule")
    from agents.registry import make_agent

    for spec in [*cfg.eval.opponents, *cfg.eval.final_only]:  # before Ray starts
        make_agent(spec, seed=0)
    if not 0 <= cfg.league.self_share <= 1:
        raise ValueError("league.self_share must be in [0, 1]")
    if cfg.ppo.minibatch_size < 1:
        raise ValueError("ppo.minibatch_size must be >= 1")
    if not cfg.ppo.num_epochs > 0:
        raise ValueError(f"ppo.num_epochs must be > 0, got {cfg.ppo.num_epochs}")
    for key, value in (
        ("ema.half_life_samples", cfg.ema.half_life_samples),
        ("league.snapshot_every", cfg.league.snapshot_every),
        ("eval.every_s", cfg.eval.every_s),
        ("eval.pairs", cfg.eval.pairs),
        ("eval.final_pairs", cfg.eval.final_pairs),
        ("checkpoint.every", cfg.checkpoint.every),
        ("warm_start.decisions", cfg.warm_start.decisions),
    ):
        if value < 0:
            raise ValueError(f"{key} must be >= 0")
    if cfg.ppo.lr_decay_from is not None:
        if cfg.stop.time_s is None:
            raise ValueError("ppo.lr_decay_from needs a time budget (stop.time_s)")
        if not 0 <= cfg.ppo.lr_decay_from < 1 or not 0 < cfg.ppo.lr_decay_to <= 1:
            raise ValueError("ppo.lr_decay_from must be in [0, 1) and ppo.lr_decay_to in (0, 1]")
    if cfg.critic.outcome_coeff > 0 and cfg.game.get("match_win_bonus"):
        raise ValueError(
            "critic.outcome_coeff needs game.match_win_bonus=0: the outcome head's classes are "
            "the deal's level gains (R-6.3), which a match bonus would shift"
        )
    if cfg.critic.width < 1 or cfg.critic.belief_coeff < 0 or cfg.critic.outcome_coeff < 0:
        raise ValueError("critic.width must be >= 1, critic.belief_coeff and outcome_coeff >= 0")
    if cfg.warm_start.decisions > 0 and cfg.warm_start.epochs < 1:
        raise ValueError("warm_start.epochs must be >= 1 when warm_start.decisions > 0")
    return cfg


def lr_time_scale(elapsed_s: float, cfg: RunConfig) -> float:
    """The learning rate's factor after ``elapsed_s`` of the run (``ppo.lr_decay_from``)."""
    start, time_s = cfg.ppo.lr_decay_from, cfg.stop.time_s
    if start is None or not time_s:
        return 1.0
    share = min(max(elapsed_s / time_s, 0.0), 1.0)
    if share <= start:
        return 1.0
    return 1.0 - (1.0 - cfg.ppo.lr_decay_to) * (share - start) / (1.0 - start)


def runner_config(cfg: RunConfig) -> dict[str, Any]:
    """The ``VectorEnvRunner``'s config (``experiments.selfplay.rllib.env_runner``; RLlib
    passes it as the plain ``env_config`` dict) of a run config: the one mapping, so the runner's
    defaults are the run's."""
    r, p, lg = cfg.runners, cfg.ppo, cfg.league
    return {
        "tables": r.tables,
        "game": dict(cfg.game),
        "steps_per_call": r.steps_per_call,
        "sample_ahead": r.sample_ahead,  # read by the driver's GuandanPPO, not the runner
        "idle_from": r.num + 1 if r.idle else 0,  # remote runners' worker indices: 1, 2, …
        "idle_tables": r.idle_tables,
        "skip_forced": r.skip_forced,
        "skip_confident": r.skip_confident,
        "plan_top_k": r.plan_top_k,
        "self_share": lg.self_share,
        "pfsp_power": lg.pfsp_power,
        "active_members": lg.active_members,
        "gamma": p.gamma,
        "lambda": p.lambda_,
        "seed": cfg.seed,
        "model": dict(cfg.model),
        "heads": cfg.critic.as_dict(),
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
    Path(path).write_text(to_yaml(cfg), encoding="utf-8")


DEFAULT_CONFIG_HEADER = """\
# The main job: a useful self-play run on a 2-core machine in under 30 minutes, all included
# (heuristic data for the warm start, behaviour cloning, PPO):
#   python -m experiments.selfplay --config configs/default.yaml
# One remote VectorEnvRunner samples 1,024 tables on one core while the learner (the driver)
# updates on the other. Generated from experiments/selfplay/config.py (the one source of the
# defaults and their meaning): python -m experiments.selfplay --write-default-config
"""


def config_help() -> str:
    """Every key of a run config with its default and meaning (``--help-config``)."""
    rows = describe(RunConfig)
    width = max(len(k) for k, _, _ in rows)
    out = []
    for key, default, text in rows:
        out.append(f"{key:<{width}}  {default}")
        out += textwrap.wrap(
            " ".join(text.split()), 96, initial_indent="    ", subsequent_indent="    "
        )
    return "\n".join(out)


def default_config_text() -> str:
    """The text of ``configs/default.yaml``: the defaults, each key with its meaning."""
    return DEFAULT_CONFIG_HEADER + to_yaml(RunConfig())
