"""Benchmark the batched engine: random legal play, decisions per second against batch size.

    python -m experiments.bench.vector                      # 64, 256, 1024, 4096 tables
    python -m experiments.bench.vector --batch 1024 4096 --repeats 7 --reuse-obs

Every timed step is the full loop a learner would run: draw one uniformly random legal
action per table from the current masks (``sample_actions``), then ``env.step`` — which
applies the actions, runs the per-deal events of finished tables (settlement, auto-reset,
dealing, tribute), computes every table's legal mask (also unpacked to ``bool (B, A)``) and
every table's observation (``float32 (B, OBS_DIM)``). Nothing is skipped.

For each batch size: a warm-up (tables out of phase, caches built), then ``--repeats`` runs
of about ``--decisions`` decisions each (at least ``--min-steps`` lockstep steps).
Reported: medians over the runs of decisions/s by wall clock and by process CPU time (on
a shared machine the CPU figure is the one not inflated by other processes), and the
per-decision CPU time split between policy (sampling), step (applying actions), reset
(per-deal events), mask and observation. A single-table AEC env baseline is measured the
same way. JSON goes to ``--out``; a Markdown table is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from guandan_env.envs.vector import VectorGuandanEnv

PARTS = ("policy", "step", "reset", "mask", "obs")


def bench_vector(
    num_tables: int,
    repeats: int,
    decisions: int,
    warmup: int,
    seed: int,
    copy: bool,
    min_steps: int = 300,
    **config,
) -> dict:
    env = VectorGuandanEnv(num_tables, seed=seed, copy=copy, **config)
    env.clock = time.process_time  # CPU-time split: not inflated by other processes
    rng = np.random.default_rng(seed)
    env.reset()
    for _ in range(warmup):
        env.step(env.sample_actions(rng))
    # at least two deals' worth of steps per run, so that per-deal events (about one per
    # 150 decisions of a table) are sampled fairly whatever the batch size
    steps = max(min_steps, decisions // num_tables)
    runs = []
    for _ in range(repeats):
        env.reset_timers()
        policy = 0.0
        deals = 0
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            t = time.process_time()
            actions = env.sample_actions(rng)
            policy += time.process_time() - t
            obs, mask, seat, rewards, done, info = env.step(actions)
            deals += int(info["deal_over"].sum())
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        n = steps * num_tables
        split = {"policy": policy, **env.timers}
        runs.append(
            {
                "decisions": n,
                "deals": deals,
                "wall_s": wall,
                "cpu_s": cpu,
                "decisions_per_s_wall": n / wall,
                "decisions_per_s_cpu": n / cpu,
                "us_per_decision": {k: split[k] / n * 1e6 for k in PARTS},
            }
        )
    med = {
        "decisions_per_s_wall": statistics.median(r["decisions_per_s_wall"] for r in runs),
        "decisions_per_s_cpu": statistics.median(r["decisions_per_s_cpu"] for r in runs),
        "us_per_decision": {
            k: statistics.median(r["us_per_decision"][k] for r in runs) for k in PARTS
        },
        "decisions_per_deal": sum(r["decisions"] for r in runs)
        / max(1, sum(r["deals"] for r in runs)),
    }
    return {
        "num_tables": num_tables,
        "copy": copy,
        "steps_per_run": steps,
        "median": med,
        "runs": runs,
    }


def bench_aec(steps: int, seed: int) -> dict:
    """Single-table PettingZoo env for comparison: ``bench_core``'s loop (match mode)."""
    from experiments.bench.core import AEC_SETTINGS, _aec_rate

    w0, c0 = time.perf_counter(), time.process_time()
    _aec_rate(AEC_SETTINGS["match"], steps, seed)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {
        "decisions": steps,
        "decisions_per_s_wall": steps / wall,
        "decisions_per_s_cpu": steps / cpu,
    }


def markdown(results: list[dict], aec: dict | None) -> str:
    head = (
        "| tables | obs copy | decisions/s (wall) | decisions/s (CPU) | CPU µs/decision: policy | "
        "step | reset | mask | obs |\n|---:|:---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for r in results:
        m = r["median"]
        u = m["us_per_decision"]
        lines.append(
            f"| {r['num_tables']:,} | {'new' if r['copy'] else 'reused'} | "
            f"{m['decisions_per_s_wall']:,.0f} | {m['decisions_per_s_cpu']:,.0f} | "
            + " | ".join(f"{u[k]:.2f}" for k in PARTS)
            + " |"
        )
    if aec is not None:
        lines.append(
            f"| AEC env, 1 | — | {aec['decisions_per_s_wall']:,.0f} | "
            f"{aec['decisions_per_s_cpu']:,.0f} | | | | | |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, nargs="+", default=[64, 256, 1024, 4096])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--decisions", type=int, default=200_000, help="per run")
    p.add_argument("--warmup", type=int, default=300, help="steps before timing")
    p.add_argument("--min-steps", type=int, default=300, help="lockstep steps per run, at least")
    p.add_argument("--mode", choices=["deal", "match"], default="deal")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reuse-obs", action="store_true", help="also time copy=False")
    p.add_argument("--aec-steps", type=int, default=40000, help="0 skips the AEC baseline")
    p.add_argument("--out", default="results/bench_vector.json")
    args = p.parse_args(argv)
    load_before = os.getloadavg()
    results = []
    for b in args.batch:
        for copy in (True, False) if args.reuse_obs else (True,):
            r = bench_vector(
                b,
                args.repeats,
                args.decisions,
                args.warmup,
                args.seed,
                copy,
                min_steps=args.min_steps,
                mode=args.mode,
            )
            results.append(r)
            m = r["median"]
            print(
                f"B={b:5d} copy={copy!s:5}: {m['decisions_per_s_wall']:>10,.0f} dec/s wall, "
                f"{m['decisions_per_s_cpu']:>10,.0f} dec/s CPU",
                flush=True,
            )
    aec = bench_aec(args.aec_steps, args.seed) if args.aec_steps > 0 else None
    report = {
        "benchmark": "guandan_env.envs.vector random legal play",
        "mode": args.mode,
        "repeats": args.repeats,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "load_avg_before": load_before,
            "load_avg_after": os.getloadavg(),
        },
        "results": results,
        "aec_baseline": aec,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(markdown(results, aec))
    print(f"load average before/after: {load_before} / {report['machine']['load_avg_after']}")
    print(f"wrote {out}")
    return report


if __name__ == "__main__":
    main()
