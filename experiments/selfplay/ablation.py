"""Ablations of the self-play recipe on one budget: ``python -m experiments.selfplay.ablation``.

Each variant is the default config with some keys overridden, trained on one budget —
``--samples`` learner samples (the fair choice on a shared machine: it does not depend on
what else runs), or ``--seconds`` of wall time (warm start included, as in the main job) —
then evaluated by the run's final duplicate evaluation against ``heuristic`` (``--pairs``
pairs, random levels and tribute). Warm-start data comes from the shared cache after the
first variant; its generation time is reported beside it. Results go to
``results/ablation.json`` and a Markdown table on stdout.

    python -m experiments.selfplay.ablation --samples 3000000 --pairs 300 full no_plan no_bc
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

VARIANTS: dict[str, list[str]] = {
    "full": [],
    "no_plan": ["model.features=[after]"],  # no hand plan, no public counting, no beat block
    "no_beat": ["model.features=[after,plan,state]"],  # the candidate rows before 2026-12-03
    "no_reply": ["model.features=[after,plan,state,beat]"],  # the rows before 2026-12-04
    "no_features": ["model.features=[]"],  # candidate = action features + id embedding only
    "no_bc": ["warm_start.decisions=0"],  # no warm start, no anchor, no BC league member
    # the default is pure self-play; this adds the league as it was before 2026-12-01
    "league": ["league.self_share=0.7", "league.snapshot_every=10"],
    "no_anchor": ["anchor.coeff=0"],
}


def run_variant(
    name: str, seconds: float | None, samples: int | None, pairs: int, runs_dir: Path
) -> dict:
    from experiments.selfplay import main

    budget = (
        [f"stop.env_steps={samples}", "stop.time_s=null"] if samples else [f"stop.time_s={seconds}"]
    )
    args = [
        f"runs_dir={runs_dir}",
        f"name={name}",
        *budget,
        "eval.every_s=0",
        f"eval.final_pairs={pairs}",
        "eval.opponents=[heuristic]",
        *VARIANTS[name],
    ]
    if main(args) != 0:
        raise RuntimeError(f"variant {name} failed")
    summary = json.loads((runs_dir / name / "summary.json").read_text())
    bc = runs_dir / name / "bc" / "bc.json"
    data_s = json.loads(bc.read_text())["data"].get("generation_seconds") if bc.exists() else 0
    st = summary["final_eval"]["heuristic"]
    return {
        "variant": name,
        "overrides": VARIANTS[name],
        "samples": summary["env_steps"],
        "run_seconds": summary["train_seconds"],
        "warm_start_seconds": summary["warm_start_seconds"],
        "bc_data_generation_seconds": data_s,
        "dup_win_rate": st["dup_win_rate"],
        "dup_win_rate_ci": st["dup_win_rate_ci"],
        "mean_gain": st["mean_gain"],
        "mean_gain_ci": st["mean_gain_ci"],
        "pairs": st["pairs"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.selfplay.ablation")
    p.add_argument("variants", nargs="*", default=["full", "no_plan", "no_bc"])
    p.add_argument("--seconds", type=float, default=600.0, help="wall-time budget per variant")
    p.add_argument(
        "--samples", type=int, help="learner-sample budget per variant (overrides --seconds)"
    )
    p.add_argument("--pairs", type=int, default=300)
    p.add_argument("--runs-dir", type=Path, default=Path("runs/ablation"))
    p.add_argument("--out", type=Path, default=Path("results/ablation.json"))
    args = p.parse_args(argv)
    bad = [v for v in args.variants if v not in VARIANTS]
    if bad:
        p.error(f"unknown variant(s) {bad}; known: {sorted(VARIANTS)}")
    rows = []
    for name in args.variants:
        rows.append(run_variant(name, args.seconds, args.samples, args.pairs, args.runs_dir))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2) + "\n")
    head = ["variant", "samples", "run time", "vs heuristic: duplicate win [95% CI]", "gain/deal"]
    print("| " + " | ".join(head) + " |")
    print("| --- | ---: | ---: | --- | --- |")
    for r in rows:
        lo, hi = r["dup_win_rate_ci"]
        glo, ghi = r["mean_gain_ci"]
        print(
            f"| {r['variant']} | {r['samples'] / 1e6:.2f} M | {r['run_seconds'] / 60:.1f} min "
            f"| {r['dup_win_rate']:.1%} "
            f"[{lo:.1%}, {hi:.1%}] | {r['mean_gain']:+.2f} [{glo:+.2f}, {ghi:+.2f}] |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
