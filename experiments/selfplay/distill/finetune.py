"""Fine-tune a policy toward its search's verdicts (search distillation, strength.md item 6).

The target of a searched decision is the policy improved by the search's estimates, the
solution of "maximise the expected gain minus ``temperature`` times the KL to the policy":

    q(a) ∝ p(a) · exp(A(a) / temperature),   A(a) = gain(a) − gain(policy's top move)

over the moves the search tried (``A = 0`` for the moves it did not try). With
``target="choice"`` the target of a searched decision is instead the move the search agent
played (one-hot: its override where it made one, the policy's top move otherwise). A
decision that was not searched keeps the policy's own probabilities as its target (an
anchor: the network should not move where the search said nothing). The loss is the
cross-entropy to ``q``, averaged over decisions, with the searched ones weighted
``searched_weight``. The value head is not trained. ``p`` is the starting network's, frozen.

Held-out deals (``holdout``) report the KL to ``q``, how often the network's top move is the
search's best move where that beats the policy's top move by the search agent's margin, and
the search's own estimate of what the network's top move gains over the policy's, per
searched decision (an offline proxy of the improvement; the moves the search did not try
count 0 and their share is reported).

CLI: ``python -m experiments.selfplay.distill.finetune pretrained:default runs/labels_default
--out runs/distilled/policy.pt``, then ``checkpoint:runs/distilled/policy.pt`` plays it.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from agents.candidate_net import (
    CandidateNet,
    net_from_state,
    prepare_packed,
    segment_argmax,
    segment_log_softmax,
)
from agents.checkpoint import load_policy_net
from agents.policy_file import save_policy
from experiments.selfplay.distill.labels import load_labels
from experiments.selfplay.warm_start.bc import split_by_deal

TARGETS = ("soft", "choice")


@dataclass(frozen=True)
class FinetuneParams:
    target: str = "soft"  # "soft": q above; "choice": the search agent's move, one-hot
    temperature: float = 0.5  # levels: how far the search's estimates move the target
    margin: float = 0.5  # for the held-out agreement figure only (the search agent's margin)
    searched_weight: float = 1.0  # loss weight of a searched decision (others: 1)
    lr: float = 1e-4
    epochs: int = 3
    batch: int = 512
    holdout: float = 0.1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.temperature <= 0 or self.lr <= 0 or self.epochs < 1 or self.batch < 1:
            raise ValueError("temperature and lr must be > 0, epochs and batch >= 1")
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {self.target!r}")
        if not 0 <= self.holdout < 1:
            raise ValueError("holdout must be in [0, 1)")


def load_base(spec: str) -> tuple[CandidateNet, dict]:
    """The torch network and model config of ``pretrained:NAME`` or ``checkpoint:PATH``."""
    kind, _, arg = spec.partition(":")
    if kind == "pretrained":
        from agents.zoo import load_model_weights

        state, header = load_model_weights(arg)
        return net_from_state(state, header["model_config"]), header["model_config"]
    if kind == "checkpoint":
        net, _ = load_policy_net(arg)
        return net, net.model_config
    raise ValueError(f"the base policy must be pretrained:NAME or checkpoint:PATH, got {spec!r}")


def advantages(labels: dict, idx: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``float32 (M,)``: each candidate's search gain over the policy's top move (0 where the
    decision was not searched or the move not tried)."""
    cand = labels["cand"][idx][rows]  # (M, K)
    gain = labels["gain"][idx][rows]
    hit = cand == ids[:, None]
    adv = np.where(hit, gain - gain[:, :1], 0.0).sum(1)
    return (adv * labels["searched"][idx][rows]).astype(np.float32)


def batch_terms(net, base, labels, idx, params: FinetuneParams):
    """``(loss, per-decision KL to the target, decisions, top move per decision)``."""
    d = prepare_packed(
        labels["obs_bits"][idx], labels["obs_scalar"][idx], labels["mask_bits"][idx], net.features
    )
    with torch.no_grad():
        base_logits, _ = base(d)
        base_logp = segment_log_softmax(base_logits, d.rows, d.n)
        if params.target == "soft":
            adv = torch.from_numpy(advantages(labels, idx, d.rows.numpy(), d.ids.numpy()))
            target_logp = segment_log_softmax(base_logp + adv / params.temperature, d.rows, d.n)
        else:  # the move the search agent played, where it searched
            played = torch.from_numpy(labels["action"][idx].astype(np.int64))[d.rows] == d.ids
            on = torch.from_numpy(labels["searched"][idx])[d.rows]
            target_logp = torch.where(on, torch.where(played, 0.0, -1e4), base_logp)
        q = torch.exp(target_logp)
    logits, _ = net(d)
    logp = segment_log_softmax(logits, d.rows, d.n)
    ce = torch.zeros(d.n).index_add(0, d.rows, -q * logp)
    kl = torch.zeros(d.n).index_add(0, d.rows, q * (target_logp - logp.detach()))
    searched = torch.from_numpy(labels["searched"][idx])
    w = torch.where(searched, params.searched_weight, 1.0)
    loss = (w * ce).sum() / w.sum()
    top = d.ids[segment_argmax(logits.detach(), d.rows, d.n)]
    return loss, kl, searched, top


@torch.no_grad()
def held_out(net, base, labels, idx, params: FinetuneParams) -> dict[str, float]:
    """KL to the target (searched and other decisions) and agreement with the search's
    overrides on the held-out decisions."""
    kls, srch, tops = [], [], []
    for s in range(0, idx.size, 2048):
        b = idx[s : s + 2048]
        _, kl, searched, top = batch_terms(net, base, labels, b, params)
        kls.append(kl.numpy())
        srch.append(searched.numpy())
        tops.append(top.numpy())
    kl, searched, top = np.concatenate(kls), np.concatenate(srch), np.concatenate(tops)
    gain, cand = labels["gain"][idx], labels["cand"][idx].astype(np.int64)
    best = np.where(cand >= 0, gain, -np.inf).argmax(1)  # past the last tried move: padding
    override = (
        searched & (gain[np.arange(idx.size), best] - gain[:, 0] >= params.margin) & (best > 0)
    )
    follows_search = top == cand[np.arange(idx.size), best]
    keeps_policy = top == cand[:, 0]
    # the search's own estimate of what the network's top move gains over the policy's
    tried = (cand == top[:, None]) & (cand >= 0)
    gain_of_top = np.where(tried, gain - gain[:, :1], 0.0).sum(1)
    known = searched & tried.any(1)
    return {
        "search_gain_per_searched": float(gain_of_top[known].sum() / max(int(searched.sum()), 1)),
        "top_untried": float((searched & ~tried.any(1)).sum() / max(int(searched.sum()), 1)),
        "kl_searched": float(kl[searched].mean()) if searched.any() else float("nan"),
        "kl_other": float(kl[~searched].mean()) if (~searched).any() else float("nan"),
        "overrides": int(override.sum()),
        "follows_override": float(follows_search[override].mean())
        if override.any()
        else float("nan"),
        "keeps_policy_elsewhere": float(keeps_policy[searched & ~override].mean())
        if (searched & ~override).any()
        else float("nan"),
    }


def finetune(
    base_spec: str, labels: dict, params: FinetuneParams, log=print
) -> tuple[CandidateNet, dict, dict]:
    """``(fine-tuned network, model config, report)``."""
    torch.manual_seed(params.seed)
    net, model_config = load_base(base_spec)
    base = copy.deepcopy(net).eval()
    for prm in base.parameters():
        prm.requires_grad_(False)
    train, hold = split_by_deal(labels["deal"], params.holdout, params.seed)
    rng = np.random.default_rng(params.seed)
    opt = torch.optim.Adam(
        [p for n, p in net.named_parameters() if not n.startswith("value_head")], lr=params.lr
    )
    report: dict = {"train": int(train.size), "held_out": int(hold.size)}
    report["before"] = held_out(net, base, labels, hold, params) if hold.size else {}
    log(f"held out before: {report['before']}")
    t0 = time.monotonic()
    for epoch in range(params.epochs):
        net.train()
        order = rng.permutation(train)
        total = 0.0
        for s in range(0, order.size, params.batch):
            loss, *_ = batch_terms(net, base, labels, np.sort(order[s : s + params.batch]), params)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * min(params.batch, order.size - s)
        net.eval()
        ho = held_out(net, base, labels, hold, params) if hold.size else {}
        report[f"epoch_{epoch + 1}"] = {"train_ce": total / max(order.size, 1), **ho}
        log(f"epoch {epoch + 1}/{params.epochs} ({time.monotonic() - t0:.0f} s): {ho}")
    return net.eval(), model_config, report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.selfplay.distill.finetune", description=__doc__.split("\n\n")[0]
    )
    p.add_argument(
        "base", help="pretrained:NAME or checkpoint:PATH (the policy the labels searched)"
    )
    p.add_argument(
        "labels", help="a labels directory (experiments.selfplay.distill.labels) or .npz"
    )
    p.add_argument("--out", required=True, help="the policy.pt to write")
    for f, v in asdict(FinetuneParams()).items():
        p.add_argument(f"--{f.replace('_', '-')}", type=type(v), default=v)
    a = p.parse_args(argv)
    params = FinetuneParams(**{f: getattr(a, f) for f in asdict(FinetuneParams())})
    torch.set_num_threads(1)
    labels = load_labels(a.labels)
    print(
        f"{labels['action'].size} decisions, {int(labels['searched'].sum())} searched, "
        f"{np.unique(labels['deal']).size} deals",
        file=sys.stderr,
    )
    net, model_config, report = finetune(
        a.base, labels, params, log=lambda m: print(m, file=sys.stderr)
    )
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "distilled_from": a.base,
        "labels": str(a.labels),
        "params": asdict(params),
        "report": report,
    }
    save_policy(out, net, model_config, meta=meta)
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
