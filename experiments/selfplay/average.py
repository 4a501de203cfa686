"""Average the raw weights of a run's checkpoints into a playable ``policy.pt``, after the
run: a uniform mean over its last part (stochastic weight averaging) or a moving average
with any half-life, to measure averaging without training again. Every checkpoint is kept
only with ``checkpoint.keep=0``; the trainer's own moving average (``ema``) is unaffected.

    python -m experiments.selfplay.average runs/X --from-share 0.5 --out runs/X_swa
    python -m experiments.selfplay.average runs/X --half-life 8000000 --out runs/X_ema8m

The output plays as ``checkpoint:runs/X_swa`` (docs/selfplay_runs.md, "The level knobs
together, and weight averaging over longer spans").
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from agents.candidate_net import policy_state
from agents.checkpoint import POLICY_FILE, STATE_FILE, complete_checkpoints
from agents.policy_file import load_policy_file, save_policy


def average_checkpoints(
    run_dir: str | Path, from_share: float = 0.0, half_life: float | None = None
) -> tuple[dict[str, np.ndarray], dict, dict]:
    """``(state, model_config, info)``: the raw weights of the run's complete checkpoints at
    or after ``from_share`` of its final learner samples, averaged uniformly, or, with
    ``half_life`` (learner samples), exponentially from the first of them on."""
    if not 0.0 <= from_share <= 1.0:
        raise ValueError(f"from_share must be in [0, 1], got {from_share}")
    if half_life is not None and half_life <= 0:
        raise ValueError(f"half_life must be > 0 learner samples, got {half_life}")
    ckpts = complete_checkpoints(run_dir)
    if not ckpts:
        raise FileNotFoundError(f"{run_dir}: no complete checkpoint to average")
    steps = [int(json.loads((c / STATE_FILE).read_text())["env_steps"]) for c in ckpts]
    chosen = [(c, s) for c, s in zip(ckpts, steps, strict=True) if s >= from_share * steps[-1]]
    mean: dict[str, np.ndarray] | None = None
    config: dict | None = None
    last = 0
    for k, (ckpt, samples) in enumerate(chosen):
        net, _ = load_policy_file(ckpt / POLICY_FILE, weights="raw")
        state = {n: v.astype(np.float64) for n, v in policy_state(net).items()}
        if config is not None and net.model_config != config:
            raise ValueError(f"{ckpt}: model config differs from the run's earlier checkpoints")
        config = net.model_config
        if mean is None:
            mean = state
        else:  # uniform: the k-th joins with weight 1/(k+1); exponential: by samples since
            new = (
                1.0 / (k + 1) if half_life is None else 1.0 - 0.5 ** ((samples - last) / half_life)
            )
            mean = {n: m + new * (state[n] - m) for n, m in mean.items()}
        last = samples
    assert mean is not None and config is not None
    info = {
        "run": str(run_dir),
        "average": "uniform" if half_life is None else f"half-life {half_life:g} samples",
        "checkpoints": len(chosen),
        "from_env_steps": chosen[0][1],
        "to_env_steps": chosen[-1][1],
    }
    return {n: m.astype(np.float32) for n, m in mean.items()}, config, info


def main(argv: list[str] | None = None) -> Path:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", help="a run directory (runs/<name>)")
    ap.add_argument(
        "--from-share",
        type=float,
        default=0.5,
        help="start at this share of the run's learner samples",
    )
    ap.add_argument(
        "--half-life", type=float, default=None, help="learner samples; omitted: a uniform mean"
    )
    ap.add_argument("--out", required=True, help="directory for the averaged policy.pt")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if (
        out.resolve() == Path(args.run_dir).resolve()
        or Path(args.run_dir).resolve() in out.resolve().parents
    ):
        # a policy.pt in the run would shadow its checkpoints for checkpoint:RUN
        raise ValueError(f"--out {out} is inside the run {args.run_dir}; pick another directory")
    state, config, info = average_checkpoints(args.run_dir, args.from_share, args.half_life)
    out.mkdir(parents=True, exist_ok=True)
    path = save_policy(out / POLICY_FILE, state, config, info)
    print(
        f"{path}: {info['average']} over {info['checkpoints']} checkpoints "
        f"({info['from_env_steps']:,}-{info['to_env_steps']:,} learner samples)"
    )
    return path


if __name__ == "__main__":
    main()
