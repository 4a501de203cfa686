"""Logging of a self-play run: TensorBoard scalars, CSV files and the progress line."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Metric:
    """One column of ``progress.csv``: its TensorBoard tag (x axis: learner samples), and
    the key of the learner's results it is read from (others the trainer fills in)."""

    column: str
    tag: str | None = None
    learner: str | None = None


METRICS = (
    Metric("iteration"),
    Metric("env_steps"),  # learner samples
    Metric("game_steps"),  # decisions played in the runners
    # the schedules' clock: learner samples plus the confident decisions kept out of them
    # (runners.skip_confident; equal to env_steps without it)
    Metric("choices"),
    Metric("time_s"),
    Metric("iter_s", "perf/iteration_s"),
    Metric("env_steps_per_s", "perf/samples_per_s"),
    Metric("game_steps_per_s", "perf/game_steps_per_s"),
    Metric("forced_share", "perf/forced_share"),  # game decisions with one legal action
    # game decisions the learner played but kept out of its samples (runners.skip_confident)
    Metric("confident_share", "perf/confident_share"),
    # legal candidates planned in full (below 1 with runners.plan_top_k)
    Metric("planned_share", "perf/planned_share"),
    # the policy's mass outside the kept candidates, audited every AUDIT_EVERY runner steps
    Metric("pruned_mass", "train/pruned_mass"),
    Metric("reward_vs_bc", "train/reward_vs_bc"),
    Metric("reward_vs_snapshot", "train/reward_vs_snapshot"),
    Metric("policy_loss", "loss/policy", "policy_loss"),
    Metric("vf_loss", "loss/value", "vf_loss"),
    Metric("entropy", "loss/entropy", "entropy"),
    Metric("kl", "loss/kl", "approx_kl"),
    Metric("clip_frac", "loss/clip_frac", "clip_frac"),
    Metric("anchor_kl", "loss/anchor_kl", "anchor_kl"),
    Metric("vf_explained_var", "loss/vf_explained_var", "vf_explained_var"),
    Metric("lr", "schedule/lr", "default_optimizer_learning_rate"),  # the schedule's value
    Metric("lr_scale", "schedule/lr_time_scale", "lr_scale"),  # ppo.lr_decay_from's factor
    Metric("effective_lr", "schedule/effective_lr", "effective_lr"),  # lr x lr_scale, applied
    Metric("entropy_coeff", "schedule/entropy_coeff", "entropy_coeff"),
    Metric("anchor_coeff", "schedule/anchor_coeff", "anchor_coeff"),
    Metric("league_size", "league/size"),
    Metric("sample_wait_s", "perf/sample_wait_s"),
    Metric("learn_s", "perf/learn_s"),
    Metric("eval_running"),
    Metric("idle_held"),  # the idle runners paused for an overdue evaluation
    Metric("load1"),
    Metric("runner_sample_s", "perf/runner_sample_s"),
    Metric("runner_sample_cpu_s", "perf/runner_sample_cpu_s"),
    # idle runners (runners.idle): their share of the learner samples, and their CPU time
    Metric("idle_share", "perf/idle_runner_share"),
    Metric("idle_runner_cpu_s", "perf/idle_runner_cpu_s"),
    # iterations of updates the weights a sample was acted with lacked, main and idle runners
    # (the last sample() call's decisions; a deal's earlier ones are older); local learner only
    Metric("policy_lag", "perf/policy_lag"),
    Metric("idle_policy_lag", "perf/idle_policy_lag"),
    # training-only heads (experiments.selfplay.rllib.heads), empty when off
    Metric("belief_loss", "loss/belief", "belief_loss"),
    Metric("belief_guess_loss", "loss/belief_count_guess", "belief_guess_loss"),
    Metric("outcome_loss", "loss/outcome", "outcome_loss"),
)
PROGRESS_COLUMNS = [m.column for m in METRICS]
TB_TAGS = {m.column: m.tag for m in METRICS if m.tag}


def learner_columns(results: dict[str, Any]) -> dict[str, Any]:
    """The progress columns read from one update's learner results."""
    return {m.column: results.get(m.learner) for m in METRICS if m.learner}


EVAL_COLUMNS = [
    "iteration",
    "env_steps",
    "time_s",
    "opponent",
    "pairs",
    "dup_win_rate",
    "dup_win_rate_lo",
    "dup_win_rate_hi",
    "deal_win_rate",
    "deal_win_rate_lo",
    "deal_win_rate_hi",
    "mean_gain",
    "mean_gain_lo",
    "mean_gain_hi",
]


class CsvLog:
    """Append-only CSV with a fixed header (written once)."""

    def __init__(self, path: Path, columns: list[str]) -> None:
        self.path, self.columns = path, columns
        if not path.exists():
            with path.open("w", newline="") as f:
                csv.writer(f).writerow(columns)
            return
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
        if rows and rows[0] != columns:  # a run logged by another version: rewrite by name
            old = rows[0]
            with path.open("w", newline="") as f:
                w = csv.writer(f)
                w.writerow(columns)
                for r in rows[1:]:
                    named = dict(zip(old, r, strict=False))
                    w.writerow([named.get(c, "") for c in columns])

    def write(self, row: dict[str, Any]) -> None:
        with self.path.open("a", newline="") as f:
            csv.writer(f).writerow([_fmt(row.get(c)) for c in self.columns])


def _truncate_csv(path: Path, max_iteration: int) -> None:
    """Keep the header and the rows whose ``iteration`` is at most ``max_iteration``."""
    if not path.exists():
        return
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return
    col = rows[0].index("iteration")
    keep = [rows[0]] + [r for r in rows[1:] if r and int(r[col]) <= max_iteration]
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(keep)


def _fmt(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


class RunLogger:
    """TensorBoard events plus ``progress.csv``/``eval.csv`` in the run directory."""

    def __init__(self, run_dir: Path, resume_at: tuple[int, int] | None = None) -> None:
        """``resume_at=(iteration, env_steps)`` of the restored checkpoint: logged rows and
        TensorBoard events after it (from iterations that were not checkpointed) are dropped."""
        from torch.utils.tensorboard import SummaryWriter

        purge = None
        if resume_at is not None:
            it, steps = resume_at
            for name in ("progress.csv", "eval.csv"):
                _truncate_csv(run_dir / name, it)
            purge = steps + 1
        self.writer = SummaryWriter(log_dir=str(run_dir), purge_step=purge)
        self.progress = CsvLog(run_dir / "progress.csv", PROGRESS_COLUMNS)
        self.evals = CsvLog(run_dir / "eval.csv", EVAL_COLUMNS)

    def scalars(self, values: dict[str, float | None], step: int) -> None:
        for tag, v in values.items():
            if v is not None and math.isfinite(float(v)):
                self.writer.add_scalar(tag, float(v), global_step=step)

    def iteration(self, row: dict[str, Any]) -> None:
        self.progress.write(row)
        self.scalars({tag: row.get(k) for k, tag in TB_TAGS.items()}, int(row["env_steps"]))

    def evaluation(
        self, iteration: int, env_steps: int, opponent: str, stats: dict, time_s: float
    ) -> None:
        """One evaluation row, written whole (an interrupted evaluation writes nothing)."""
        row = {"iteration": iteration, "env_steps": env_steps, "opponent": opponent}
        row["time_s"] = time_s
        row["pairs"] = stats["pairs"]
        for k in ("dup_win_rate", "deal_win_rate", "mean_gain"):
            row[k] = stats[k]
            row[k + "_lo"], row[k + "_hi"] = stats[k + "_ci"]
        self.evals.write(row)
        tag = f"eval/{opponent}"
        self.scalars(
            {
                f"{tag}/win_rate": stats["dup_win_rate"],
                f"{tag}/win_rate_ci_low": stats["dup_win_rate_ci"][0],
                f"{tag}/win_rate_ci_high": stats["dup_win_rate_ci"][1],
                f"{tag}/deal_win_rate": stats["deal_win_rate"],
                f"{tag}/mean_level_gain": stats["mean_gain"],
                f"{tag}/mean_level_gain_ci_low": stats["mean_gain_ci"][0],
                f"{tag}/mean_level_gain_ci_high": stats["mean_gain_ci"][1],
            },
            env_steps,
        )
        self.writer.flush()

    def close(self) -> None:
        self.writer.flush()
        self.writer.close()


def fmt_count(n: float) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.2f}M"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k"
    return f"{n:.0f}"


def fmt_eval(opponent: str, stats: dict) -> str:
    lo, hi = stats["dup_win_rate_ci"]
    glo, ghi = stats["mean_gain_ci"]
    return (
        f"vs {opponent}: win {stats['dup_win_rate']:.2f} [{lo:.2f},{hi:.2f}] "
        f"gain {stats['mean_gain']:+.2f} [{glo:+.2f},{ghi:+.2f}]"
    )


def fmt_time(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def progress_line(row: dict[str, Any], evals: dict[str, dict], budget_s: float | None) -> str:
    def f(key: str, spec: str) -> str:
        v = row.get(key)
        return "-" if v is None else format(v, spec)

    t = row["time_s"]
    clock = fmt_time(t) + (f" ({fmt_time(max(budget_s - t, 0))} left)" if budget_s else "")
    parts = [
        f"it {row['iteration']:4d}",
        clock,
        f"samples {fmt_count(row['env_steps']):>7}",
        f"{row['env_steps_per_s']:6.0f}/s (decisions {row['game_steps_per_s']:6.0f}/s)",
        f"ent {f('entropy', '.2f')} kl {f('kl', '.4f')} vf {f('vf_loss', '.2f')}",
        f"vs bc {f('reward_vs_bc', '+.2f')} vs snap {f('reward_vs_snapshot', '+.2f')}",
        f"league {row['league_size']}",
    ]
    line = "  ".join(parts)
    if evals:
        line += "  | " + " | ".join(fmt_eval(k, v) for k, v in evals.items())
    return line
