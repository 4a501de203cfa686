"""Learning curve of a self-play run, from its ``eval.csv`` and ``progress.csv``.

    python -m experiments.plot_learning_curve runs/default --out docs/learning_curve.png

Panels: duplicate win rate and mean level gain per deal against each evaluation opponent
(95% intervals shaded), and the learner team's training reward against the league and the
baselines, all over learner env steps.
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
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for opp, d in ev.groupby("opponent", sort=False):
        x = d["env_steps"] / 1e6
        for ax, key in ((axes[0], "dup_win_rate"), (axes[1], "mean_gain")):
            (line,) = ax.plot(x, d[key], marker="o", ms=3, label=f"vs {opp}")
            ax.fill_between(x, d[key + "_lo"], d[key + "_hi"], color=line.get_color(), alpha=0.2)
    axes[0].axhline(0.5, color="grey", lw=0.8, ls="--")
    axes[0].set_ylim(-0.02, 1.02)
    axes[0].set_ylabel("duplicate win rate (ties ½)")
    axes[1].axhline(0.0, color="grey", lw=0.8, ls="--")
    axes[1].set_ylabel("mean level gain per deal")
    x = prog["env_steps"] / 1e6
    for kind in ("snapshot", "random", "heuristic"):
        col = f"reward_vs_{kind}"
        if col in prog and prog[col].notna().any():
            y = prog[col].rolling(20, min_periods=1).mean()
            axes[2].plot(x, y, lw=1.2, label=f"vs {kind} (20-iteration mean)")
    axes[2].axhline(0.0, color="grey", lw=0.8, ls="--")
    axes[2].set_ylabel("training reward of the learner team")
    for ax in axes:
        ax.set_xlabel("learner env steps (millions)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title or f"Self-play PPO: {run_dir.name}")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.plot_learning_curve")
    p.add_argument("run_dir", type=Path, help="runs/<name> of a self-play run")
    p.add_argument("--out", type=Path, help="PNG path (default <run_dir>/learning_curve.png)")
    p.add_argument("--title")
    args = p.parse_args(argv)
    out = plot(args.run_dir, args.out or args.run_dir / "learning_curve.png", args.title)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
