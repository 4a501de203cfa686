"""Throughput of a self-play run, from its ``progress.csv``: medians over the iterations that
did not share the CPUs with an evaluation, each side's ceiling, and which side binds.

    python -m experiments.selfplay.throughput runs/default [runs/other …] [--json out.json]

The trainer writes the same figures into ``summary.json`` (``throughput``) and prints them
when a run ends. Definitions:

* learner samples/s: decisions with a choice the learner trained on, per second of an
  iteration; game decisions/s: every decision played, forced ones included (the issue's
  throughput figure).
* runner ceiling: the main runners' samples per second of their own ``sample()`` wall time
  (what they would deliver if the learner never made them wait); learner ceiling: samples
  per second of ``learn_s`` (what the learner would take if samples were always ready).
  Ratios of totals, over the iterations without an evaluation.
* binds: ``runner`` when the learner waits for samples for at least ``WAIT_SHARE`` of a
  median iteration, else ``learner``.
* runner CPU per iteration: the main runners' CPU seconds per ``sample()`` call; at equal
  settings it tells a slow machine from a fast one (docs/selfplay.md gives the reference
  machine's figures).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from statistics import median
from typing import Any

WAIT_SHARE = 0.05  # the learner waiting this share of an iteration or more: runner-bound


def _float(value: str | None) -> float | None:
    if value in (None, ""):
        return None
    return float(value)


def read_progress(run_dir: str | Path) -> list[dict[str, float | None]]:
    """The rows of ``run_dir/progress.csv`` as floats (empty cells: None)."""
    path = Path(run_dir) / "progress.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no progress.csv (is {run_dir} a self-play run?)")
    with path.open(newline="") as f:
        return [{k: _float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def throughput(rows: list[dict[str, float | None]]) -> dict[str, Any]:
    """The figures of the module docstring from ``progress.csv`` rows (a whole run,
    resumed sessions included). Empty dict when no iteration ran without an evaluation."""
    prev_steps = 0.0
    clean = []
    for row in rows:
        steps = (row["env_steps"] or 0.0) - prev_steps
        prev_steps = row["env_steps"] or 0.0
        if not row.get("eval_running") and (row.get("iter_s") or 0.0) > 0:
            clean.append((row, steps))
    if not clean:
        return {}
    main = [(r, s) for r, s in clean if (r.get("runner_sample_s") or 0.0) > 0]
    idle_samples = sum(s * (r.get("idle_share") or 0.0) for r, s in clean)
    all_samples = sum(s for _, s in clean)
    main_samples = sum(s * (1.0 - (r.get("idle_share") or 0.0)) for r, s in main)
    learn_s = sum(r.get("learn_s") or 0.0 for r, _ in clean)
    iter_s = median(r["iter_s"] for r, _ in clean)
    wait_s = median(r.get("sample_wait_s") or 0.0 for r, _ in clean)
    forced = [r["forced_share"] for r, _ in clean if r.get("forced_share") is not None]
    confident = [r["confident_share"] for r, _ in clean if r.get("confident_share") is not None]
    runner_wall = sum(r["runner_sample_s"] for r, _ in main)
    return {
        "iterations": len(clean),
        "iterations_with_eval": sum(1 for r in rows if r.get("eval_running")),
        "median_learner_samples_per_s": round(median(r["env_steps_per_s"] for r, _ in clean)),
        "median_game_decisions_per_s": round(median(r["game_steps_per_s"] for r, _ in clean)),
        "median_forced_share": round(median(forced), 4) if forced else None,
        # played by the learner's policy but kept out of its samples (runners.skip_confident)
        "median_confident_share": round(median(confident), 4) if confident else None,
        # every iteration: background evaluations run on idle CPU, so with eval.idle their
        # iterations are no slower, and the ones without are mostly the first minutes
        "all_median_learner_samples_per_s": round(median(r["env_steps_per_s"] or 0 for r in rows)),
        "all_median_game_decisions_per_s": round(median(r["game_steps_per_s"] or 0 for r in rows)),
        "median_iteration_s": round(iter_s, 3),
        "median_learner_wait_s": round(wait_s, 3),
        "runner_ceiling_samples_per_s": round(main_samples / runner_wall) if runner_wall else None,
        "learner_ceiling_samples_per_s": round(all_samples / learn_s) if learn_s else None,
        "binds": "runner" if wait_s >= WAIT_SHARE * iter_s else "learner",
        "median_runner_cpu_s_per_iteration": (
            round(median(r["runner_sample_cpu_s"] for r, _ in main), 3) if main else None
        ),
        "idle_runner_share": round(idle_samples / all_samples, 4) if all_samples else None,
    }


def fmt_throughput(t: dict[str, Any]) -> str:
    """One line for the end of a run."""
    if not t:
        return "throughput: no iteration ran without an evaluation"
    forced = t["median_forced_share"]
    forced_txt = f", {forced:.0%} of them forced" if forced is not None else ""
    confident = t.get("median_confident_share")
    if confident:
        forced_txt += f", {confident:.0%} confident (played, not learner samples)"
    idle = t["idle_runner_share"]
    idle_txt = f" (idle runners: {idle:.0%} of the samples)" if idle else ""
    ceilings = (
        f"ceilings: main runners {t['runner_ceiling_samples_per_s'] or 0:,}/s{idle_txt}, "
        f"learner {t['learner_ceiling_samples_per_s'] or 0:,}/s"
    )
    cpu = t["median_runner_cpu_s_per_iteration"]
    cpu_txt = f"; runner CPU {cpu:.2f} s per iteration" if cpu is not None else ""
    return (
        f"throughput (medians over {t['iterations']} iterations without an evaluation): "
        f"{t['median_learner_samples_per_s']:,} learner samples/s, "
        f"{t['median_game_decisions_per_s']:,} game decisions/s{forced_txt} (over every "
        f"iteration: {t['all_median_learner_samples_per_s']:,} and "
        f"{t['all_median_game_decisions_per_s']:,}); {ceilings}; "
        f"the learner waits {t['median_learner_wait_s']:.2f} s of {t['median_iteration_s']:.2f} s"
        f" per iteration: {t['binds']}-bound{cpu_txt}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.selfplay.throughput",
        description="Throughput medians of self-play runs (from their progress.csv).",
    )
    p.add_argument("runs", nargs="+", type=Path, help="run directories")
    p.add_argument("--json", type=Path, help="write {run: figures} here")
    args = p.parse_args(argv)
    out = {}
    for run in args.runs:
        out[str(run)] = t = throughput(read_progress(run))
        print(f"{run}: {fmt_throughput(t)}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
