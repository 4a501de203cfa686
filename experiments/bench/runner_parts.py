"""Where the self-play runner's CPU time goes: ``python -m experiments.bench.runner_parts``.

One ``VectorEnvRunner`` (the default config: 1,024 tables) plays a shipped model's weights
(trained play: ~17 candidates per decision, against ~6 for initial weights), and each part
of a lockstep step is timed in CPU seconds by wrapping its function: the candidate features
(hand plans, the ``beat`` and ``reply`` blocks, the rest), the network, the engine. Medians
over ``--repeats`` rounds of ``--calls`` ``sample()`` calls, in milliseconds per lockstep step
actually taken and as shares of the step, are printed and written to ``--out`` (JSON).

The rounds start after ``--warmup-steps`` lockstep steps: all tables deal together, so the
first deals run in phase (long early hands, then short late ones), and a window inside that
first wave would weigh the phases by how many steps per call the config takes.

The runner binds the default run's throughput (docs/selfplay.md), so this says where a
speed-up would pay. Parts nest (``candidate rows`` holds the plans, ``beat``, ``reply``);
a wrapped function costs ~1 µs a call, far below the parts' milliseconds.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from statistics import median
from typing import Any

import numpy as np

from experiments.bench import write_json

# (module, attribute, label): the parts timed, outermost first
PARTS = (
    ("experiments.selfplay.rllib.env_runner", "VectorEnvRunner._step", "step (all)"),
    ("guandan_env.encoding.candidate_features", "decision_context", "decision context"),
    ("guandan_env.encoding.candidate_features", "candidate_rest", "candidate rows"),
    ("guandan_env.encoding.candidate_features", "plan_features", "hand plans (all)"),
    ("guandan_env.encoding.candidate_features", "plays_of", "unseen plays"),
    ("guandan_env.encoding.candidate_features", "beat_features", "beat block"),
    ("guandan_env.encoding.candidate_features", "reply_features", "reply block"),
    ("agents.candidate_net", "CandidateNet.act_batch", "network"),
    ("guandan_env.envs.vector", "VectorGuandanEnv.step", "engine step"),
    ("guandan_env.envs.vector", "VectorGuandanEnv._new_episode", "new deals"),
    ("experiments.selfplay.rllib.env_runner", "VectorEnvRunner._close", "GAE"),
    ("experiments.selfplay.rllib.env_runner", "VectorEnvRunner._record", "store"),
)


def _instrument(spent: Counter, calls: Counter | None = None) -> list[tuple[Any, str, Any]]:
    """Wrap every part so that its CPU seconds add up in ``spent[label]`` (and its calls in
    ``calls[label]``); returns what ``_restore`` puts back."""
    import importlib

    originals = []
    for module, attr, label in PARTS:
        owner: Any = importlib.import_module(module)
        *path, name = attr.split(".")
        for p in path:
            owner = getattr(owner, p)
        inner = getattr(owner, name)

        def timed(*a, _inner=inner, _label=label, **k):
            t = time.process_time()
            try:
                return _inner(*a, **k)
            finally:
                spent[_label] += time.process_time() - t
                if calls is not None:
                    calls[_label] += 1

        originals.append((owner, name, inner))
        setattr(owner, name, timed)
    return originals


def _restore(originals: list[tuple[Any, str, Any]]) -> None:
    for owner, name, inner in reversed(originals):
        setattr(owner, name, inner)


def _runner(model: str, overrides: list[str]):
    """A runner of the default config (with ``overrides``) playing shipped model ``model``."""
    import torch

    from agents.zoo import load_model_weights
    from experiments.bench.selfplay import make_runner
    from experiments.selfplay.config import load_config

    cfg = load_config(None, overrides)
    state, _ = load_model_weights(model)
    weights = {k: torch.from_numpy(np.asarray(v)) for k, v in state.items()}
    return make_runner(cfg, weights)


STEP = PARTS[0][2]


def measure(
    model: str, calls: int, repeats: int, overrides: list[str], warmup_steps: int = 300
) -> dict:
    spent: Counter = Counter()
    steps: Counter = Counter()
    originals = _instrument(spent, steps)
    try:
        runner = _runner(model, overrides)
        while steps[STEP] < warmup_steps:  # past the first deals' wave
            runner.sample()
            runner.get_metrics()
        rounds = []
        for _ in range(repeats):
            spent.clear()
            steps.clear()
            decisions = 0
            for _ in range(calls):
                runner.sample()
                decisions += runner.get_metrics()["num_game_steps"]
            taken = steps[STEP]
            rounds.append(
                {
                    "decisions_per_cpu_s": decisions / spent[STEP],
                    "steps": taken,
                    **{label: 1e3 * spent[label] / taken for _, _, label in PARTS},
                }
            )
    finally:
        _restore(originals)
    keys = [k for k in rounds[0] if k != "steps"]
    med = {k: median(r[k] for r in rounds) for k in keys}
    return {
        "model": model,
        "calls": calls,
        "repeats": repeats,
        "warmup_steps": warmup_steps,
        "overrides": overrides,
        "ms_per_step": {k: round(v, 2) for k, v in med.items() if k != "decisions_per_cpu_s"},
        "share_of_step": {
            k: round(v / med["step (all)"], 3) for k, v in med.items() if k != "decisions_per_cpu_s"
        },
        "decisions_per_cpu_s": round(med["decisions_per_cpu_s"]),
        "rounds": rounds,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.runner_parts")
    p.add_argument("--model", default="default", help="shipped model whose weights play")
    p.add_argument("--calls", type=int, default=4, help="sample() calls per round")
    p.add_argument("--repeats", type=int, default=3, help="rounds (medians over them)")
    p.add_argument(
        "--warmup-steps", type=int, default=300, help="lockstep steps played before the rounds"
    )
    p.add_argument("--out", default="results/bench_runner_parts.json")
    p.add_argument("overrides", nargs="*", help="config overrides key=value, as for selfplay")
    args = p.parse_args(argv)
    if args.calls < 1 or args.repeats < 1 or args.warmup_steps < 0:
        p.error("--calls and --repeats must be >= 1, --warmup-steps >= 0")
    out = measure(args.model, args.calls, args.repeats, args.overrides, args.warmup_steps)
    print(f"runner, {args.model} weights: {out['decisions_per_cpu_s']:,} decisions per CPU-s")
    for label, ms in out["ms_per_step"].items():
        print(f"  {label:18s} {ms:7.2f} ms per step  {100 * out['share_of_step'][label]:5.1f}%")
    write_json(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
