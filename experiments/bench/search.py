"""Benchmark the search agent: seconds per searched decision and share of decisions searched.

    python -m experiments.bench.search --inner pretrained:default --deals 4 \
        --setting full=worlds=32,candidates=8 --setting cheap=worlds=8,candidates=4,horizon=8

Plays ``--deals`` deals (random levels and tribute), the search agent over ``--inner`` (an
agent spec with a batched policy; default the shipped ``pretrained:default``; ``--policy
PATH`` is ``checkpoint:PATH``; ``--random-init`` a freshly initialised default-size
``CandidateNet``: the real network's cost without its confidence) in seats 0 and 2 and
``heuristic`` in 1 and 3, for each setting; at most ``--max-searches`` searches a setting.
Reported per setting: median and p90 wall seconds per searched decision (and CPU seconds),
share of decisions searched, overrides, the machine's load. JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from agents import make_agent
from guandan_env.envs.aec import raw_env


def _random_init_policy() -> str:
    import torch

    from agents.candidate_net import CandidateNet
    from agents.policy_file import save_policy

    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = CandidateNet()
    return "checkpoint:" + str(save_policy(Path(tempfile.mkdtemp()), net, net.model_config))


def run_setting(options: str, inner: str, deals: int, max_searches: int, seed: int) -> dict:
    spec = f"search:{options}:{inner}" if options else f"search:{inner}"
    agent = make_agent(spec, seed=seed)
    other = make_agent("heuristic", seed=seed)
    cpu: list[float] = []
    env = raw_env(mode="deal", random_levels=True, random_tribute=True)
    for d in range(deals):
        env.reset(seed=seed + d)
        while len(agent.stats.seconds) < max_searches:
            obs, _, term, _, info = env.last()
            if term:
                break
            if env.game.to_act % 2 == 0:
                before, t0 = len(agent.stats.seconds), time.process_time()
                a = agent.act(obs, info)
                if len(agent.stats.seconds) > before:
                    cpu.append(time.process_time() - t0)
            else:
                a = other.act(obs, info)
            env.step(a)
    wall = agent.stats.seconds
    st = agent.stats
    return {
        "spec": spec,
        "searches": len(wall),
        "decisions": st.decisions,
        "share_searched": st.searched / max(st.decisions, 1),
        "overrides": st.overrides,
        "wall_s": {"median": statistics.median(wall), "p90": float(np.percentile(wall, 90))}
        if wall
        else None,
        "cpu_s": {"median": statistics.median(cpu), "p90": float(np.percentile(cpu, 90))}
        if cpu
        else None,
    }


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inner", default="pretrained:default", help="the searched policy's spec")
    p.add_argument("--policy", default=None, help="policy file or run (checkpoint:PATH)")
    p.add_argument("--random-init", action="store_true", help="a fresh default-size network")
    p.add_argument("--setting", action="append", default=None, help="NAME=OPTIONS")
    p.add_argument("--deals", type=int, default=2)
    p.add_argument("--max-searches", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/bench_search.json")
    a = p.parse_args(argv)
    settings = a.setting or [
        "full=worlds=32,candidates=8",
        "cheap=worlds=8,candidates=4,horizon=8",
    ]
    if a.random_init:
        inner, label = _random_init_policy(), "random-init CandidateNet (default size)"
    else:
        inner = f"checkpoint:{a.policy}" if a.policy else a.inner
        label = inner
    report = {"inner": label, "load_before": os.getloadavg(), "settings": {}}
    for item in settings:
        name, _, options = item.partition("=")
        r = run_setting(options, inner, a.deals, a.max_searches, a.seed)
        report["settings"][name] = r
        w, c = r["wall_s"] or {}, r["cpu_s"] or {}
        print(
            f"{name:6s} {r['searches']:3d} searches  wall median {w.get('median', 0):.3f} s "
            f"p90 {w.get('p90', 0):.3f} s  cpu median {c.get('median', 0):.3f} s  "
            f"searched {r['share_searched']:.0%} of {r['decisions']}  overrides {r['overrides']}"
        )
    report["load_after"] = os.getloadavg()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
