"""Behaviour cloning of the rule-based ``heuristic`` into a ``CandidateNet`` (the warm start).

``train_bc(data, model_config, …)`` fits the candidate scores to the heuristic's choices
(cross-entropy over each decision's legal candidates; forced moves carry no policy signal and
are skipped) and the value head to the deal's outcome for the acting seat (``ret``, ±1..3).
Decisions are split into train and held-out sets *by deal*, so held-out positions come from
deals the net never saw. It reports, per epoch, the held-out loss and top-1 agreement with
the heuristic, and keeps the epoch with the lowest held-out loss (BC overfits a few hundred
thousand decisions after a handful of epochs).

    python -m experiments.selfplay.warm_start.bc --decisions 200000 --workers 2 --epochs 4 \
        --out runs/bc

writes ``runs/bc/policy.pt`` (a ``checkpoint:runs/bc`` agent) and ``runs/bc/bc.json``.
Data comes from ``experiments.selfplay.warm_start.data`` (parallel Ray tasks, cached).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.candidate_net import (
    CandidateNet,
    check_model_config,
    prepare_packed,
    segment_log_softmax,
    taken_index,
)
from agents.policy_file import save_policy
from experiments.common.typed_config import option


@dataclass
class BCConfig:
    """Behaviour cloning of the heuristic (a self-play run's ``warm_start`` section)."""

    decisions: int = option(
        200_000, "heuristic decisions to generate (cached in cache_dir); 0: no warm start"
    )
    workers: int = option(2, "parallel generation (Ray tasks)")
    epochs: int = option(4, "passes over the data")
    lr: float = option(1.0e-3, "Adam learning rate")
    minibatch_size: int = option(1024, "decisions per gradient step")
    holdout: float = option(0.05, "share of deals held out for evaluation")
    vf_coeff: float = option(0.25, "weight of the value loss")


def split_by_deal(deal: np.ndarray, holdout: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of train and held-out decisions; whole deals on one side."""
    deals = np.unique(deal)
    rng = np.random.default_rng(seed)
    n_hold = max(1, int(round(holdout * deals.size))) if deals.size > 1 else 0
    held = rng.choice(deals, size=n_hold, replace=False) if n_hold else deals[:0]
    is_held = np.isin(deal, held)
    return np.flatnonzero(~is_held), np.flatnonzero(is_held)


def _batch_loss(net: CandidateNet, data: dict, idx: np.ndarray, vf_coeff: float):
    d = prepare_packed(
        data["obs_bits"][idx], data["obs_scalar"][idx], data["mask_bits"][idx], net.features
    )
    logits, values = net(d)
    logp_all = segment_log_softmax(logits, d.rows, d.n)
    actions = torch.from_numpy(data["action"][idx].astype(np.int64))
    taken = taken_index(d.rows, d.ids, actions)
    choice = torch.from_numpy(data["n_legal"][idx] > 1)
    nll = -logp_all[taken]
    policy_loss = (nll * choice).sum() / choice.sum().clamp(min=1)
    ret = torch.from_numpy(data["ret"][idx].astype(np.float32))
    vf_loss = 0.5 * ((values - ret) ** 2).mean()
    # agreement: the taken action has the highest score of its row
    best = torch.full((d.n,), -torch.inf).scatter_reduce(
        0, d.rows, logits.detach(), reduce="amax", include_self=True
    )
    agree = (logits.detach()[taken] >= best) & choice
    return policy_loss + vf_coeff * vf_loss, policy_loss, vf_loss, agree, choice


@torch.no_grad()
def evaluate_bc(net: CandidateNet, data: dict, idx: np.ndarray, batch: int = 4096) -> dict:
    """Held-out policy loss (choice decisions), value loss and top-1 agreement."""
    net.eval()
    pl = vl = 0.0
    agree = choices = 0
    for s in range(0, idx.size, batch):
        b = idx[s : s + batch]
        _, p, v, a, c = _batch_loss(net, data, b, 0.0)
        pl += float(p) * int(c.sum())
        vl += float(v) * b.size
        agree += int(a.sum())
        choices += int(c.sum())
    return {
        "policy_loss": pl / max(choices, 1),
        "value_loss": vl / max(idx.size, 1),
        "agreement": agree / max(choices, 1),
        "choices": choices,
    }


def train_bc(
    data: dict[str, np.ndarray],
    model_config: dict | None = None,
    epochs: int = 4,
    lr: float = 1e-3,
    minibatch_size: int = 1024,
    holdout: float = 0.05,
    vf_coeff: float = 0.25,
    seed: int = 0,
    progress: bool = True,
    log=print,
) -> tuple[CandidateNet, dict[str, Any]]:
    """A behaviour-cloned net (the best held-out epoch) and its training record."""
    torch.manual_seed(seed)  # parameter init only; data order uses a numpy generator
    t0 = time.perf_counter()
    net = CandidateNet(check_model_config(model_config))
    train_idx, held_idx = split_by_deal(data["deal"], holdout, seed)
    if train_idx.size == 0:
        raise ValueError("behaviour cloning needs data: no training decisions")
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    record: dict[str, Any] = {"train": int(train_idx.size), "held_out": int(held_idx.size)}
    history = [{"epoch": 0, **evaluate_bc(net, data, held_idx)}] if held_idx.size else []
    best_state, best_loss = None, float("inf")
    for epoch in range(1, epochs + 1):
        net.train()
        order = rng.permutation(train_idx)
        batches = range(0, order.size, minibatch_size)
        if progress:
            from tqdm import tqdm

            batches = tqdm(batches, desc=f"bc epoch {epoch}/{epochs}", unit="batch", leave=False)
        for s in batches:
            loss, *_ = _batch_loss(net, data, order[s : s + minibatch_size], vf_coeff)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        if held_idx.size:
            ev = evaluate_bc(net, data, held_idx)
            history.append({"epoch": epoch, **ev})
            log(
                f"bc epoch {epoch}: held-out loss {ev['policy_loss']:.3f}, "
                f"agreement {ev['agreement']:.1%}, value loss {ev['value_loss']:.3f}"
            )
            if ev["policy_loss"] < best_loss:
                best_loss = ev["policy_loss"]
                best_state = {k: v.clone() for k, v in net.state_dict().items()}
    if best_state is not None:
        net.load_state_dict(best_state)
    record["history"] = history
    record["best_epoch"] = (
        min(history[1:], key=lambda h: h["policy_loss"])["epoch"] if len(history) > 1 else epochs
    )
    record["seconds"] = round(time.perf_counter() - t0, 1)
    return net.eval(), record


def warm_start(cfg: BCConfig, model_config: dict, seed: int, cache_dir: Path, log=print):
    """Generate (or load) heuristic data and clone it: ``(net, record)``."""
    from experiments.selfplay.warm_start.data import generate_with_meta

    data, meta = generate_with_meta(
        cfg.decisions, seed=seed, workers=cfg.workers, cache_dir=cache_dir
    )
    net, record = train_bc(
        data,
        model_config,
        epochs=cfg.epochs,
        lr=cfg.lr,
        minibatch_size=cfg.minibatch_size,
        holdout=cfg.holdout,
        vf_coeff=cfg.vf_coeff,
        seed=seed,
        log=log,
    )
    record["data"] = {k: v for k, v in meta.items() if isinstance(v, (int, float, str, bool))}
    return net, record


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.selfplay.warm_start.bc", description=__doc__.split("\n")[0]
    )
    defaults = BCConfig()
    p.add_argument("--decisions", type=int, default=defaults.decisions)
    p.add_argument("--workers", type=int, default=defaults.workers)
    p.add_argument("--epochs", type=int, default=defaults.epochs)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/bc")
    p.add_argument("--cache-dir", default="runs/cache")
    args = p.parse_args(argv)
    if args.decisions < 1 or args.workers < 1 or args.epochs < 1:
        p.error("--decisions, --workers and --epochs must be >= 1")
    cfg = BCConfig(decisions=args.decisions, workers=args.workers, epochs=args.epochs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    net, record = warm_start(cfg, {}, args.seed, Path(args.cache_dir))
    save_policy(out, net, net.model_config, {"bc": record})
    (out / "bc.json").write_text(json.dumps(record, indent=2) + "\n")
    best = next(h for h in record["history"] if h["epoch"] == record["best_epoch"])
    print(f"wrote {out / 'policy.pt'} (held-out agreement {best['agreement']:.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
