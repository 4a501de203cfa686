"""``python -m agents.zoo list`` (the shipped models and their headline figures) and
``python -m agents.zoo export RUN --name NAME …`` (a self-play run into the zoo; needs
torch and yaml)."""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

from agents.zoo import MODELS_DIR, cards
from guandan_env.env_version import ENV_VERSION


def _headline(card: dict) -> str:
    s = card.get("strength") or {}
    h = (s.get("opponents") or {}).get("heuristic")
    if not h:
        return "not yet evaluated"
    lo, hi = h["dup_win_rate_ci"]
    g_lo, g_hi = h["mean_gain_ci"]
    return (
        f"vs heuristic {100 * h['dup_win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] of "
        f"{h['pairs']} pairs, {h['mean_gain']:+.2f} [{g_lo:+.2f}, {g_hi:+.2f}] levels/deal"
        + (f"; rating {s['rating']:.0f}" if s.get("rating") is not None else "")
        + (f" ({s['suite']})" if s.get("suite") else "")
    )


def list_models() -> str:
    lines = []
    for c in cards():
        aliases = (
            f" (also pretrained:{', pretrained:'.join(c['aliases'])})" if c.get("aliases") else ""
        )
        lines.append(f"pretrained:{c['name']}{aliases}\n    {c['summary']}")
        lines.append(
            f"    {c['learner_samples'] / 1e6:.1f} M learner samples, "
            f"{c['wall_time_s'] / 60:.0f} min on {c['machine']}; {_headline(c)}"
        )
    return "\n".join(lines) if lines else "no models shipped"


def _git_commit(path: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def export(args: argparse.Namespace) -> Path:
    """Write ``NAME.npz`` and ``NAME.json`` from a run directory (its newest checkpoint's
    moving-average weights, its config and summary)."""
    import json

    import yaml

    from agents.candidate_net import policy_state
    from agents.checkpoint import resolve_policy
    from agents.policy_file import load_ema_state, load_policy_file
    from agents.zoo.store import save_card, save_weights

    run = Path(args.run)
    policy = resolve_policy(run)
    net, meta = load_policy_file(policy, "ema")
    has_ema = load_ema_state(policy) is not None
    summary = json.loads((run / "summary.json").read_text())
    config = yaml.safe_load((run / "config.yaml").read_text())
    out_dir = Path(args.out or MODELS_DIR)
    save_weights(out_dir / f"{args.name}.npz", policy_state(net), net.model_config, args.dtype)
    card = {
        "name": args.name,
        "aliases": args.alias or [],
        "summary": args.summary,
        "recipe": args.recipe,
        "command": args.command,
        "config": args.config,
        "run_config": config,
        "seed": config.get("seed"),
        "commit": args.commit or _git_commit(run),
        "env_version": ENV_VERSION,
        "learner_samples": summary["env_steps"],
        "game_decisions": summary.get("game_steps"),
        "wall_time_s": summary["train_seconds"],
        "warm_start_s": summary.get("warm_start_seconds"),
        "machine": args.machine
        or f"{os.cpu_count()} CPU cores ({platform.machine()}, {platform.system()}), no GPU",
        "weights": {
            "which": "moving average (EMA)" if has_ema else "raw",
            "dtype": args.dtype,
            "iteration": meta.get("iteration"),
        },
        "in_run_final_eval": summary.get("final_eval"),
        "strength": None,
    }
    save_card(out_dir / f"{args.name}.json", card)
    return out_dir / f"{args.name}.npz"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.zoo", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the shipped models and their headline figures")
    e = sub.add_parser("export", help="add a self-play run's policy to the zoo (needs torch)")
    e.add_argument("run", help="run directory (runs/NAME)")
    e.add_argument("--name", required=True)
    e.add_argument("--alias", action="append", help="a short name (repeatable)")
    e.add_argument("--summary", required=True, help="one line on the model")
    e.add_argument("--recipe", required=True, help="which training recipe made it")
    e.add_argument("--command", required=True, help="the exact training command")
    e.add_argument("--config", required=True, help="the config file it names")
    e.add_argument("--commit", help="code commit of the run (default: the run folder's git HEAD)")
    e.add_argument("--machine", help="machine description (default: this one's)")
    e.add_argument("--dtype", default="float16", choices=("float16", "float32"))
    e.add_argument("--out", help=f"output folder (default {MODELS_DIR})")
    args = p.parse_args(argv)
    if args.cmd == "list":
        print(list_models())
        return 0
    try:
        print(f"wrote {export(args)}")
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
