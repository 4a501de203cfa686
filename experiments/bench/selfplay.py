"""Self-play throughput benchmark: ``python -m experiments.bench.selfplay [--seconds 120]``.

Two measurements, medians printed and written to ``results/bench_selfplay.json``:

1. **Ceilings per component, one process, CPU time** (``time.process_time``): the env
   runner's game decisions per CPU-second (engine + candidate features + batched inference +
   bookkeeping at ``runners.tables`` tables) and the learner's samples per CPU-second (input
   preparation + forward, backward and Adam on minibatches of ``ppo.minibatch_size``).
2. **The training loop itself**: ``python -m experiments.selfplay`` with the default config
   minus the warm start and evaluations, for ``--seconds``; learner samples per second per
   iteration (the first ``--skip`` iterations, start-up, are left out).

With one remote runner and the learner in the driver, the loop's rate is bounded by the
smaller of the runner's rate (times the learner's share of decisions) and the learner's.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from experiments.bench import write_json

if TYPE_CHECKING:
    from experiments.selfplay.config import RunConfig


def _quartiles(x) -> dict[str, float]:
    q = np.percentile(np.asarray(x, dtype=np.float64), [25, 50, 75])
    return {"p25": round(q[0], 1), "median": round(q[1], 1), "p75": round(q[2], 1)}


def make_runner(cfg: RunConfig, weights: dict | None = None, league: list | None = None):
    """One local ``VectorEnvRunner`` of ``cfg``: ``weights`` (trained ``CandidateNet``
    weights; default: the initial ones) and ``league`` (``[(name, weights)]`` members; with
    ``league.self_share`` < 1 they play)."""
    import gymnasium as gym
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig

    from experiments.selfplay.config import runner_config
    from experiments.selfplay.rllib.env_runner import VectorEnvRunner
    from guandan_env.core.actions import NUM_ACTIONS
    from guandan_env.encoding.observation import OBS_DIM

    torch.set_num_threads(1)
    env_config = runner_config(cfg)
    config = PPOConfig().environment(
        observation_space=gym.spaces.Box(0, 1, (OBS_DIM,), np.float32),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        env_config=env_config,
    )
    runner = VectorEnvRunner(config=config, worker_index=0)
    if weights is not None:
        runner.set_main_weights(weights)
    if league:
        runner.set_league(league)
    return runner


def trained_play(model: str, overrides: list[str], calls: int):
    """``(cfg, state, model_config, sample)``: a runner of the default config (``overrides``
    apply, except ``model.*``: the network is shipped model ``model``'s, with its own config)
    plays that model's weights for ``calls`` ``sample()`` calls past the first deals' wave;
    ``sample`` is their samples joined, ``state`` the model's weights."""
    import torch

    from agents.zoo import load_model_weights
    from experiments.selfplay.config import load_config

    state, header = load_model_weights(model)
    model_config = header["model_config"]
    cfg = load_config(None, overrides)
    weights = {k: torch.from_numpy(np.asarray(v)) for k, v in state.items()}
    cfg.model = dict(model_config)  # the runner's network must take the model's weights
    runner = make_runner(cfg, weights)
    runner.sample()
    runner.sample()  # past the first deals' wave
    parts = [runner.sample() for _ in range(calls)]
    sample = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return cfg, state, model_config, sample


def runner_ceiling(
    cfg: RunConfig, calls: int = 6, weights: dict | None = None, league: list | None = None
) -> dict:
    """Game decisions and learner samples per CPU-second of one ``VectorEnvRunner``
    (``make_runner``'s arguments)."""
    runner = make_runner(cfg, weights, league)
    runner.sample()
    runner.sample()  # past the first deals' wave
    runner.get_metrics()
    decisions, samples, cands = [], [], []
    for _ in range(calls):
        t = time.process_time()
        s = runner.sample()
        dt = time.process_time() - t
        m = runner.get_metrics()
        decisions.append(m["num_game_steps"] / dt)
        samples.append(len(s["actions"]) / dt)
        cands.append(float(s["cand_count"].mean()))
    return {
        "decisions_per_cpu_s": _quartiles(decisions),
        "samples_per_cpu_s": _quartiles(samples),
        "candidates_per_decision": round(float(np.mean(cands)), 2),
        "plan_memo_hit_rate": round(float(runner.get_metrics()["plan_cache_hit_rate"]), 3),
        "last_sample": s,
    }


def learner_ceiling(cfg: RunConfig, sample: dict, repeats: int = 3) -> dict:
    """Learner samples per CPU-second: inputs from the shipped sample, PPO-style update."""
    import torch

    from agents.candidate_net import CandidateNet
    from experiments.selfplay.rllib.env_runner import minibatches
    from experiments.selfplay.rllib.learner import batch_decisions, ppo_terms

    torch.set_num_threads(1)
    net = CandidateNet(cfg.model)
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    size = cfg.ppo.minibatch_size
    rates = []
    for rep in range(repeats):
        n = 0
        t = time.process_time()
        for mb in minibatches(sample, size, np.random.default_rng(rep)):
            d = batch_decisions(mb, net.features)
            logits, values = net(d)
            terms = ppo_terms(logits, values, d.rows, d.ids, mb, cfg.ppo.clip_param)
            loss = terms.policy_loss + cfg.ppo.vf_loss_coeff * terms.vf_loss - 0.003 * terms.entropy
            opt.zero_grad()
            loss.backward()
            opt.step()
            n += len(mb["actions"])
        rates.append(n / (time.process_time() - t))
    return {"samples_per_cpu_s": _quartiles(rates)}


def training_loop(seconds: float, skip: int, overrides: list[str]) -> dict:
    """Run the default config (no warm start, no evaluation) and read its progress."""
    import pandas as pd

    from experiments.selfplay import main

    tmp = Path(tempfile.mkdtemp(prefix="bench_selfplay_"))
    try:
        rc = main(
            [
                f"runs_dir={tmp}",
                "name=bench",
                "warm_start.decisions=0",
                "eval.every_s=0",
                "eval.final_pairs=0",
                f"stop.time_s={seconds}",
                "checkpoint.every=0",
            ]
        )
        if rc != 0:
            raise RuntimeError(f"training exited with {rc}")
        prog = pd.read_csv(tmp / "bench" / "progress.csv")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    steady = prog.iloc[skip:]
    total = float(steady["env_steps"].iloc[-1] - prog["env_steps"].iloc[skip - 1])
    return {
        "iterations": int(len(prog)),
        "samples_per_s": _quartiles(steady["env_steps_per_s"]),
        "samples_per_s_overall": round(total / float(steady["iter_s"].sum()), 1),
        "sample_wait_s": _quartiles(steady["sample_wait_s"]),
        "learn_s": _quartiles(steady["learn_s"]),
        "runner_sample_s": _quartiles(steady["runner_sample_s"]),
        "runner_sample_cpu_s": _quartiles(steady["runner_sample_cpu_s"]),
        "load1": _quartiles(steady["load1"]),
    }


def _with_league(cfg: RunConfig) -> RunConfig:
    """``cfg`` with the league playing as it did before pure self-play became the default."""
    from experiments.common.typed_config import merged

    return merged(cfg, {"league": {"self_share": 0.7}})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.selfplay")
    p.add_argument("--seconds", type=float, default=150.0, help="training-loop budget")
    p.add_argument("--skip", type=int, default=5, help="first iterations left out")
    p.add_argument("--out", default="results/bench_selfplay.json")
    p.add_argument(
        "--trained",
        default=None,
        help="a checkpoint directory (policy.pt, league.pt): also measure the runner with "
        "its trained weights, without and with its league (trained play has more candidates "
        "per decision than the initial weights)",
    )
    p.add_argument("--no-loop", action="store_true", help="ceilings only, no training loop")
    p.add_argument("overrides", nargs="*", help="config overrides key=value, as for selfplay")
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.skip < 1:
        p.error("--seconds must be > 0 and --skip >= 1")
    from experiments.common.typed_config import to_dict
    from experiments.selfplay.config import load_config

    cfg = load_config(None, args.overrides)
    data = to_dict(cfg)
    out: dict = {"config": {k: data[k] for k in ("runners", "model", "ppo", "league")}}
    rc = runner_ceiling(cfg)
    sample = rc.pop("last_sample")
    out["runner"] = rc
    out["learner"] = learner_ceiling(cfg, sample)
    print(
        f"runner ceiling: {rc['decisions_per_cpu_s']['median']:,.0f} game decisions "
        f"({rc['samples_per_cpu_s']['median']:,.0f} learner samples) per CPU-second, "
        f"{rc['candidates_per_decision']} candidates per decision"
    )
    print(
        f"learner ceiling: {out['learner']['samples_per_cpu_s']['median']:,.0f} samples "
        "per CPU-second"
    )
    if args.trained:
        import torch

        from agents.checkpoint import load_league

        ck = Path(args.trained)
        weights = torch.load(ck / "policy.pt", weights_only=True)["state_dict"]
        members = list(load_league(ck / "league.pt").items())
        for name, c, league in (
            ("trained", cfg, None),
            ("trained_league", _with_league(cfg), members),
        ):
            r = runner_ceiling(c, calls=8, weights=weights, league=league)
            trained_sample = r.pop("last_sample")
            out[f"runner_{name}"] = r
            print(
                f"runner ceiling, {name.replace('_', ' + ')} ({len(league or [])} members): "
                f"{r['decisions_per_cpu_s']['median']:,.0f} game decisions per CPU-second "
                f"[p25 {r['decisions_per_cpu_s']['p25']:,.0f}, p75 "
                f"{r['decisions_per_cpu_s']['p75']:,.0f}], "
                f"{r['candidates_per_decision']} candidates per decision"
            )
            if league is None:  # the learner on what trained play produces
                lt = learner_ceiling(cfg, trained_sample)
                out["learner_trained"] = lt
                print(
                    "learner ceiling on trained-play samples: "
                    f"{lt['samples_per_cpu_s']['median']:,.0f} samples per CPU-second"
                )
    if args.no_loop:
        write_json(out, args.out)
        return 0
    out["loop"] = training_loop(args.seconds, args.skip, args.overrides)
    lp = out["loop"]["samples_per_s"]
    print(
        f"training loop: median {lp['median']:,.0f} samples/s per iteration "
        f"[p25 {lp['p25']:,.0f}, p75 {lp['p75']:,.0f}], "
        f"overall {out['loop']['samples_per_s_overall']:,.0f}/s"
    )
    path = Path(args.out)
    write_json(out, path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
