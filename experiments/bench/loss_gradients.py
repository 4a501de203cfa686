"""How hard each PPO loss term pulls on the network: ``python -m experiments.bench.loss_gradients``.

A runner of the default config (``overrides`` apply, except ``model.*``: the network is the
shipped model's, with its own config) plays that model's weights for
``--calls`` ``sample()`` calls; on those samples, minibatch by minibatch
(``ppo.minibatch_size``), the gradient of each weighted term of the learner's loss
(``rllib.learner.ppo_terms``: the clipped surrogate, ``ppo.vf_loss_coeff`` times the value
loss, the entropy bonus) is taken on its own and all together, and its norm is measured over
every weight and over the trunk alone (the observation embedding and the trunk's layers,
which the policy and the value share). Medians over minibatches are printed and written to
``--out`` (JSON), with the share of minibatches whose whole gradient ``ppo.grad_clip`` cuts.

The question it answers: does the value loss crowd the policy out of the shared trunk, or
does the gradient clip shrink the policy's steps? The BC anchor's KL (on for the first 5 M
samples of a run) is left out; the entropy coefficient is the schedule's first value.
"""

from __future__ import annotations

import argparse
from statistics import median

import numpy as np

from experiments.bench import write_json

TRUNK_PREFIXES = ("obs_embed.", "dense_in.", "trunk.")  # what the policy and the value share
TERMS = ("policy", "value", "entropy", "total")


def _norm(grads: list) -> float:
    import torch

    present = [g for g in grads if g is not None]
    return float(torch.linalg.vector_norm(torch.stack([g.norm() for g in present])))


def measure(model: str, calls: int, overrides: list[str], seed: int = 0) -> dict:
    import torch

    from agents.candidate_net import net_from_state
    from experiments.bench.selfplay import trained_play
    from experiments.selfplay.rllib.env_runner import minibatches
    from experiments.selfplay.rllib.learner import batch_decisions, ppo_terms

    cfg, state, model_config, sample = trained_play(model, overrides, calls)
    net = net_from_state(state, model_config).train()
    params = dict(net.named_parameters())
    trunk = [name for name in params if name.startswith(TRUNK_PREFIXES)]
    ppo = cfg.ppo
    entropy_coeff = float(ppo.entropy_coeff.points[0][1])
    rows: list[dict[str, float]] = []
    for mb in minibatches(sample, ppo.minibatch_size, np.random.default_rng(seed)):
        d = batch_decisions(mb, net.features)
        logits, values = net(d)
        t = ppo_terms(logits, values, d.rows, d.ids, mb, ppo.clip_param)
        weighted = {
            "policy": t.policy_loss,
            "value": ppo.vf_loss_coeff * t.vf_loss,
            "entropy": -entropy_coeff * t.entropy,
        }
        weighted["total"] = sum(weighted.values())
        row: dict[str, float] = {"vf_loss": float(t.vf_loss.detach())}
        for term, loss in weighted.items():
            all_grads = torch.autograd.grad(
                loss, list(params.values()), retain_graph=True, allow_unused=True
            )
            by_name = dict(zip(params, all_grads, strict=True))
            row[f"{term} all"] = _norm(list(all_grads))
            row[f"{term} trunk"] = _norm([by_name[name] for name in trunk])
        rows.append(row)
    med = {k: median(r[k] for r in rows) for k in rows[0]}
    clip = ppo.grad_clip
    targets = sample["value_targets"].astype(np.float64)
    return {
        "model": model,
        "calls": calls,
        "overrides": overrides,
        "decisions": int(len(sample["actions"])),
        "minibatches": len(rows),
        "coefficients": {"vf_loss_coeff": ppo.vf_loss_coeff, "entropy_coeff": entropy_coeff},
        "value_target_std": round(float(targets.std()), 3),
        "median_vf_loss": round(med["vf_loss"], 4),
        "median_grad_norm": {k: round(v, 4) for k, v in med.items() if k != "vf_loss"},
        "grad_clip": clip,
        "share_clipped": None
        if clip is None
        else float(np.mean([r["total all"] > clip for r in rows])),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.loss_gradients")
    p.add_argument("--model", default="default", help="shipped model whose weights play")
    p.add_argument("--calls", type=int, default=2, help="sample() calls of data (~15k each)")
    p.add_argument("--out", default="results/bench_loss_gradients.json")
    p.add_argument("overrides", nargs="*", help="config overrides key=value, as for selfplay")
    args = p.parse_args(argv)
    if args.calls < 1:
        p.error("--calls must be >= 1")
    out = measure(args.model, args.calls, args.overrides)
    g = out["median_grad_norm"]
    print(
        f"{args.model}: {out['decisions']:,} decisions, {out['minibatches']} minibatches; "
        f"median gradient norms (all weights / the shared trunk):"
    )
    for term in TERMS:
        print(f"  {term:8s} {g[f'{term} all']:8.4f} {g[f'{term} trunk']:8.4f}")
    if out["share_clipped"] is not None:
        print(
            f"grad_clip {out['grad_clip']}: cuts {100 * out['share_clipped']:.0f}% of minibatches"
        )
    write_json(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
