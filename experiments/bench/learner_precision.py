"""Would bfloat16 pay on this CPU? ``python -m experiments.bench.learner_precision``.

The machine's cores have AVX-512 BF16, where one large matrix product runs about twice as
fast in bfloat16 as in float32. This script asks whether that carries over to our network:
a runner of the default config (``overrides`` apply, except ``model.*``: the network is the
shipped model's, with its own config) plays that model's weights for ``--calls`` ``sample()``
calls; on those samples it then alternates, ``--repeats`` times each:

* the learner's update (inputs, forward, the PPO loss, backward, Adam over minibatches of
  ``ppo.minibatch_size``) in float32 and under ``torch.autocast`` bfloat16, in learner
  samples per CPU-second;
* the runner's forward pass (``act_batch``-sized batches of ``runners.tables`` decisions)
  in both precisions, in ms per batch.

It also measures what bfloat16 changes in the policy itself, on every decision of the
samples: the logits' error against float32, the total-variation distance between the two
candidate distributions, and how often the greedy (argmax) move differs. Medians are
printed and written to ``--out`` (JSON). One BLAS thread, as in the runner and the learner.
"""

from __future__ import annotations

import argparse
import time
from statistics import median

import numpy as np

from experiments.bench import write_json

PRECISIONS = ("float32", "bfloat16")


def _policy_change(net, d) -> dict:
    """How far bfloat16 moves the policy on decisions ``d`` (float32 as the reference)."""
    import torch

    from agents.candidate_net import segment_argmax, segment_log_softmax, segment_sum

    with torch.no_grad():
        ref, _ = net(d)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low, _ = net(d)
        low = low.float()
        err = (low - ref).abs()
        p_ref = torch.exp(segment_log_softmax(ref, d.rows, d.n))
        p_low = torch.exp(segment_log_softmax(low, d.rows, d.n))
        tv = 0.5 * segment_sum((p_ref - p_low).abs(), d.rows, d.n)
        same = segment_argmax(ref, d.rows, d.n) == segment_argmax(low, d.rows, d.n)
    return {
        "decisions": int(d.n),
        "logit_abs_error_mean": round(float(err.mean()), 4),
        "logit_abs_error_max": round(float(err.max()), 4),
        "logit_abs_mean": round(float(ref.abs().mean()), 3),
        "total_variation_mean": round(float(tv.mean()), 5),
        "total_variation_p99": round(float(torch.quantile(tv, 0.99)), 5),
        "greedy_move_changed": round(1.0 - float(same.float().mean()), 5),
    }


def measure(model: str, calls: int, repeats: int, overrides: list[str]) -> dict:
    import torch

    from agents.candidate_net import net_from_state
    from experiments.bench.selfplay import trained_play
    from experiments.selfplay.rllib.env_runner import minibatches
    from experiments.selfplay.rllib.learner import batch_decisions, ppo_terms

    cfg, state, model_config, sample = trained_play(model, overrides, calls)
    torch.set_num_threads(1)

    def fresh_net():
        return net_from_state(state, model_config)

    def learner_rate(precision: str, seed: int) -> float:
        net = fresh_net().train()
        opt = torch.optim.Adam(net.parameters(), lr=3e-5)
        n = 0
        t = time.process_time()
        for mb in minibatches(sample, cfg.ppo.minibatch_size, np.random.default_rng(seed)):
            d = batch_decisions(mb, net.features)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
                logits, values = net(d)
            terms = ppo_terms(logits.float(), values.float(), d.rows, d.ids, mb, cfg.ppo.clip_param)
            loss = terms.policy_loss + cfg.ppo.vf_loss_coeff * terms.vf_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            n += len(mb["actions"])
        return n / (time.process_time() - t)

    batch = next(minibatches(sample, cfg.runners.tables, np.random.default_rng(0)))
    forward_d = batch_decisions(batch, model_config["features"])
    net = fresh_net()

    def forward_ms(precision: str) -> float:
        with (
            torch.no_grad(),
            torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"),
        ):
            net(forward_d)  # warm
            t = time.process_time()
            for _ in range(10):
                net(forward_d)
            return 100.0 * (time.process_time() - t)

    learner: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    forward: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    for rep in range(repeats):  # alternate, so a drift of the machine hits both alike
        for p in PRECISIONS if rep % 2 == 0 else PRECISIONS[::-1]:
            learner[p].append(learner_rate(p, rep))
            forward[p].append(forward_ms(p))
    whole = batch_decisions(sample, model_config["features"])
    return {
        "model": model,
        "calls": calls,
        "repeats": repeats,
        "overrides": overrides,
        "samples": int(len(sample["actions"])),
        "learner_samples_per_cpu_s": {p: round(median(v)) for p, v in learner.items()},
        "forward_ms_per_batch": {p: round(median(v), 2) for p, v in forward.items()},
        "forward_batch_decisions": int(forward_d.n),
        "policy_change": _policy_change(net, whole),
        "rounds": {"learner": learner, "forward": forward},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.learner_precision")
    p.add_argument("--model", default="default", help="shipped model whose weights play")
    p.add_argument("--calls", type=int, default=2, help="sample() calls for the data")
    p.add_argument("--repeats", type=int, default=4, help="alternating rounds per precision")
    p.add_argument("--out", default="results/bench_learner_precision.json")
    p.add_argument("overrides", nargs="*", help="config overrides key=value, as for selfplay")
    args = p.parse_args(argv)
    if args.calls < 1 or args.repeats < 1:
        p.error("--calls and --repeats must be >= 1")
    out = measure(args.model, args.calls, args.repeats, args.overrides)
    rate, fwd = out["learner_samples_per_cpu_s"], out["forward_ms_per_batch"]
    for prec in PRECISIONS:
        print(
            f"{prec:9s} learner {rate[prec]:7,} samples per CPU-s   "
            f"forward {fwd[prec]:6.2f} ms per {out['forward_batch_decisions']}-decision batch"
        )
    ch = out["policy_change"]
    print(
        f"bfloat16 against float32 on {ch['decisions']:,} decisions: logit error "
        f"{ch['logit_abs_error_mean']} mean, {ch['logit_abs_error_max']} max "
        f"(logits {ch['logit_abs_mean']} on average); total variation "
        f"{ch['total_variation_mean']} mean, {ch['total_variation_p99']} p99; "
        f"greedy move changed in {100 * ch['greedy_move_changed']:.2f}%"
    )
    write_json(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
