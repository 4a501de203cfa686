"""Learning curve of a self-play run, from its ``eval.csv`` and ``progress.csv``.

    python -m experiments.selfplay.plot runs/default --out docs/learning_curve.png

Panels: duplicate win rate against each evaluation opponent over learner samples and over
wall time (95% intervals shaded; the warm start counts in the time), mean level gain per deal
over samples, and the learner's training reward against the league (the behaviour-cloned
net and frozen snapshots) when the run had one, else the training throughput (learner
samples/s per iteration, iterations that shared the CPUs with an evaluation marked).

Several runs (an ablation) are drawn over each other against one opponent::

    python -m experiments.selfplay.plot runs/default runs/lr1e3 --out docs/ablation.png

Panels: duplicate win rate over samples and over wall time, level gain per deal over
samples, and each run's learner samples/s (20-iteration median).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def plot(run_dir: Path, out: Path, title: str | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ev = pd.read_csv(run_dir / "eval.csv")
    prog = pd.read_csv(run_dir / "progress.csv")
    if ev.empty:
        raise ValueError(f"{run_dir}/eval.csv has no evaluations to plot")
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    (ax_ws, ax_wt), (ax_gs, ax_tr) = axes
    for opp, d in ev.groupby("opponent", sort=False):
        for ax, x in ((ax_ws, d["env_steps"] / 1e6), (ax_wt, d["time_s"] / 60)):
            (line,) = ax.plot(x, d["dup_win_rate"], marker="o", ms=3, label=f"vs {opp}")
            ax.fill_between(
                x, d["dup_win_rate_lo"], d["dup_win_rate_hi"], color=line.get_color(), alpha=0.2
            )
        x = d["env_steps"] / 1e6
        (line,) = ax_gs.plot(x, d["mean_gain"], marker="o", ms=3, label=f"vs {opp}")
        ax_gs.fill_between(
            x, d["mean_gain_lo"], d["mean_gain_hi"], color=line.get_color(), alpha=0.2
        )
    for ax in (ax_ws, ax_wt):
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel("duplicate win rate (ties ½)")
    ax_ws.set_xlabel("learner samples (millions)")
    ax_wt.set_xlabel("run time (minutes, warm start included)")
    ax_gs.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax_gs.set_ylabel("mean level gain per deal")
    ax_gs.set_xlabel("learner samples (millions)")
    x = prog["env_steps"] / 1e6
    league = [
        k for k in ("bc", "snapshot") if prog.get(f"reward_vs_{k}", pd.Series()).notna().any()
    ]
    for kind in league:
        y = prog[f"reward_vs_{kind}"].rolling(20, min_periods=1).mean()
        ax_tr.plot(x, y, lw=1.2, label=f"vs {kind} (20-iteration mean)")
    if league:
        ax_tr.axhline(0.0, color="grey", lw=0.8, ls="--")
        ax_tr.set_ylabel("training reward of the learner team")
    else:  # pure self-play: the reward is zero-sum, show the throughput instead
        rate = prog["env_steps_per_s"] / 1e3
        ax_tr.plot(x, rate, lw=0.6, alpha=0.5, label="per iteration")
        ax_tr.plot(x, rate.rolling(20, min_periods=1).median(), lw=1.4, label="20-iteration median")
        if "eval_running" in prog:
            busy = prog["eval_running"].astype(bool)
            ax_tr.scatter(x[busy], rate[busy], s=4, color="grey", label="evaluation running")
        ax_tr.set_ylabel("learner samples/s (thousands)")
    ax_tr.set_xlabel("learner samples (millions)")
    return _save(fig, title or f"Self-play PPO: {run_dir.name}", out)


def plot_runs(
    run_dirs: list[Path], out: Path, opponent: str = "heuristic", title: str | None = None
) -> Path:
    """The in-run evaluations of several runs against ``opponent``, drawn over each other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    (ax_ws, ax_wt), (ax_gs, ax_tr) = axes
    for run_dir in run_dirs:
        ev = pd.read_csv(run_dir / "eval.csv")
        d = ev[ev["opponent"] == opponent]
        if d.empty:
            raise ValueError(f"{run_dir}/eval.csv has no evaluation against {opponent!r}")
        label = run_dir.name
        for ax, x in ((ax_ws, d["env_steps"] / 1e6), (ax_wt, d["time_s"] / 60)):
            (line,) = ax.plot(x, d["dup_win_rate"], marker="o", ms=3, label=label)
            ax.fill_between(
                x, d["dup_win_rate_lo"], d["dup_win_rate_hi"], color=line.get_color(), alpha=0.1
            )
        ax_gs.plot(d["env_steps"] / 1e6, d["mean_gain"], marker="o", ms=3, label=label)
        prog = pd.read_csv(run_dir / "progress.csv")
        rate = (prog["env_steps_per_s"] / 1e3).rolling(20, min_periods=1).median()
        ax_tr.plot(prog["env_steps"] / 1e6, rate, lw=1.2, label=label)
    for ax in (ax_ws, ax_wt):
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_ylabel(f"duplicate win rate vs {opponent} (ties ½)")
    ax_ws.set_xlabel("learner samples (millions)")
    ax_wt.set_xlabel("run time (minutes, warm start included)")
    ax_gs.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax_gs.set_ylabel(f"mean level gain per deal vs {opponent}")
    ax_gs.set_xlabel("learner samples (millions)")
    ax_tr.set_ylabel("learner samples/s (thousands, 20-iteration median)")
    ax_tr.set_xlabel("learner samples (millions)")
    return _save(fig, title or f"Self-play runs against {opponent}: in-run evaluations", out)


def _save(fig, title: str, out: Path) -> Path:
    """Grid and legend on every panel, the title, the PNG written; the figure closed."""
    import matplotlib.pyplot as plt

    for ax in fig.axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.selfplay.plot")
    p.add_argument("run_dirs", type=Path, nargs="+", help="runs/<name> of one or more runs")
    p.add_argument(
        "--out",
        type=Path,
        help="PNG path (default <run_dir>/learning_curve.png; required with several runs)",
    )
    p.add_argument("--opponent", default="heuristic", help="with several runs: whose curve")
    p.add_argument("--title")
    args = p.parse_args(argv)
    if len(args.run_dirs) == 1:
        run_dir = args.run_dirs[0]
        out = plot(run_dir, args.out or run_dir / "learning_curve.png", args.title)
    elif args.out is None:
        p.error("--out is required with several runs")
    else:
        out = plot_runs(args.run_dirs, args.out, args.opponent, args.title)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
