"""Benchmark the zoo's numpy agents against the same weights in torch, at batch 1.

    python -m experiments.bench.zoo --model default --decisions 400 --repeats 5

Collects ``--decisions`` real decisions with a choice (a deal played by the model itself,
random levels and tribute), then times ``act`` per decision for the ``pretrained:`` agent
(numpy) and a ``checkpoint:`` agent holding the same float16-rounded weights (torch, one
thread), alternating the two ``--repeats`` times. Also: load time of each, and the largest
probability difference between them. Prints medians and p90s; JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def _decisions(model: str, n: int) -> list[dict]:
    from agents.playout import NetPolicy
    from agents.zoo import load_net
    from guandan_env import VectorGuandanEnv

    env = VectorGuandanEnv(16, random_levels=True, random_tribute=True)
    obs, mask, _ = env.reset(seed=7)
    policy = NetPolicy(load_net(model))
    out: list[dict] = []
    while len(out) < n:
        for o, m in zip(obs, mask, strict=True):
            if m.sum() > 1 and len(out) < n:
                out.append({"observation": o.copy(), "action_mask": m.copy()})
        obs, mask, *_ = env.step(policy.act(obs, mask))
    return out


def _torch_twin(model: str) -> str:
    """A policy.pt with the model's (float16-rounded) weights."""
    from agents.policy_file import save_policy
    from agents.zoo import load_model_weights

    state, header = load_model_weights(model)
    return str(save_policy(Path(tempfile.mkdtemp()), state, header["model_config"]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.zoo", description=__doc__)
    p.add_argument("--model", default="default")
    p.add_argument("--decisions", type=int, default=400)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", default="results/bench/zoo.json")
    args = p.parse_args(argv)
    from agents import zoo
    from agents.registry import make_agent

    decisions = _decisions(args.model, args.decisions)
    zoo._net.cache_clear()  # time a fresh load from the file
    t = time.perf_counter()
    numpy_agent = make_agent(f"pretrained:{args.model}")
    load_numpy = time.perf_counter() - t
    path = _torch_twin(args.model)
    t = time.perf_counter()
    torch_agent = make_agent(f"checkpoint:{path}")
    load_torch = time.perf_counter() - t
    agents = {"numpy": numpy_agent, "torch": torch_agent}
    times: dict[str, list[float]] = {"numpy": [], "torch": []}
    for rep in range(args.repeats):
        order = ["numpy", "torch"] if rep % 2 == 0 else ["torch", "numpy"]
        for name in order:
            for d in decisions:
                s = time.perf_counter()
                agents[name].act(d, {})
                times[name].append(time.perf_counter() - s)
    worst = 0.0
    for d in decisions:
        a, b = numpy_agent.action_probabilities(d), torch_agent.action_probabilities(d)
        worst = max(worst, max(abs(a[k] - b[k]) for k in a))
    result = {
        "model": args.model,
        "decisions": len(decisions),
        "repeats": args.repeats,
        "load_s": {"numpy": round(load_numpy, 4), "torch": round(load_torch, 4)},
        "max_probability_difference": worst,
    }
    for name, ts in times.items():
        ms = np.array(ts) * 1e3
        result[name] = {
            "median_ms": round(statistics.median(ms), 3),
            "p90_ms": round(float(np.quantile(ms, 0.9)), 3),
        }
        r = result[name]
        print(f"{name:6s} act: median {r['median_ms']:.2f} ms, p90 {r['p90_ms']:.2f} ms")
    print(f"load: numpy {load_numpy:.3f} s, torch {load_torch:.3f} s; max |Δp| {worst:.2e}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"JSON in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
