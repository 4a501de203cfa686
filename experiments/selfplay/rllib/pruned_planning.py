"""Plan only the candidates a cheap first pass keeps (issue 24, item 5).

The candidates' feature rows (the hand each would leave and its plan) are the largest part of
the runner's input path, and most of it goes to a few decisions with many candidates
(trained self-play: a decision with a choice has 18.8 candidates on average, median 6, 99th
percentile 236). With ``runners.plan_top_k = k``, a decision with more than ``k`` candidates
is scored twice by the same network, on the same trunk output:

1. every candidate, with the plans' greedy sequence rounds off (``hand_plan``'s exact split
   without sequences, ~20x cheaper), for the hand left and the hand alike;
2. the ``k`` best of pass 1, with the full plans, and the policy samples among them.

Decisions with at most ``k`` candidates are planned in full at once. The stored sample's
mask holds the kept candidates only, so the learner's policy is the acting one, over the same
candidates with the same rows (PPO sees a state-dependent action subset, chosen before the
update and held fixed through it); its entropy bonus and BC-anchor KL are over the kept
candidates too. League members in the runner are pruned the same way. Agents at play score
every candidate; the subset is a sampling speed-up of training alone. The runner audits it:
every ``AUDIT_EVERY`` steps it also scores every candidate in full and logs the policy's
mass outside the kept ones (``pruned_mass`` in ``progress.csv``).

Measured, it does not pay: the runner (the bound) is no faster, the learner ~25% faster
(docs/selfplay.md, "Pruned planning"), so ``plan_top_k`` is 0 (off) by default.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.candidate_inputs import decisions_only, with_candidates
from agents.candidate_net import CandidateNet, Decisions, prepare_binary
from guandan_env.encoding.candidate_features import (
    candidate_rest,
    candidates_packed,
    decision_context,
)
from guandan_env.encoding.hand_plan import PlanCache
from guandan_env.encoding.packing import pack_candidates

FIRST_PASS = "no_sequences"  # the first pass's plan stand-in (candidate_features.candidate_rest)
AUDIT_EVERY = 50  # runner steps between audits of the pruned mass (~2% more planning)


def segment_top_k(scores: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """Ascending positions of the ``k`` highest ``scores`` of each row's segment (``rows``
    ascending; ties go to the earlier candidate)."""
    order = np.lexsort((-scores, rows))
    sorted_rows = rows[order]
    rank = np.arange(rows.size) - np.searchsorted(sorted_rows, sorted_rows, side="left")
    return np.sort(order[rank < k])


@torch.no_grad()
def pruned_inputs(
    net: CandidateNet,
    binary: np.ndarray,
    scalar: np.ndarray,
    mask_bits: np.ndarray,
    top_k: int,
    cache: PlanCache | None = None,
    first_pass: str = FIRST_PASS,
) -> tuple[Decisions, torch.Tensor | None, np.ndarray]:
    """``(decisions with the kept candidates, the trunk's output h or None when nothing was
    pruned, their packed masks)``."""
    if top_k < 2:
        raise ValueError(f"top_k must be >= 2 (one kept candidate leaves no choice), got {top_k}")
    n = binary.shape[0]
    rows, ids = candidates_packed(mask_bits)
    counts = np.bincount(rows, minlength=n)
    if rows.size == 0 or not counts.all():
        raise ValueError("every decision needs at least one legal action in its mask")
    many = counts[rows] > top_k
    if not many.any():
        return prepare_binary(binary, scalar, mask_bits, net.features, cache=cache), None, mask_bits
    first = np.flatnonzero(many)
    ctx = decision_context(binary, cache)
    keys = ctx.keys(rows, ids)
    rest0 = candidate_rest(ctx, rows[first], ids[first], plans=first_pass)
    base = decisions_only(binary, scalar, ctx.state, net.features)
    a0 = with_candidates(base, rows[first], ids[first], keys[first], rest0, net.features)
    d0 = Decisions.from_arrays(a0)
    h = net.encode(d0)
    scores = net.score(d0, h).numpy()
    best = first[segment_top_k(scores, rows[first], top_k)]
    kept = np.sort(np.concatenate([np.flatnonzero(~many), best]))
    kr, ki = rows[kept], ids[kept]
    rest = candidate_rest(ctx, kr, ki, cache)
    d = Decisions.from_arrays(with_candidates(a0, kr, ki, keys[kept], rest, net.features))
    return d, h, pack_candidates(kr, ki, n)
