"""Plan only the candidates a cheap first pass keeps (issue 24, item 5).

Hand plans of the hands each candidate would leave are the runner's largest cost, and most
of it goes to a few decisions with many candidates (leads: median 6 candidates, 99th
percentile 224). With ``runners.plan_top_k = k``, a decision with more than ``k`` candidates
is scored twice by the same network, on the same trunk output:

1. every candidate, with the plans' greedy sequence rounds off (``hand_plan``'s exact split
   without sequences, ~20x cheaper), for the hand left and the hand alike;
2. the ``k`` best of pass 1, with the full plans, and the policy samples among them.

Decisions with at most ``k`` candidates are planned in full at once. The stored sample's
mask holds the kept candidates only, so the learner's policy is the acting one, over the same
candidates with the same rows (PPO sees a state-dependent action subset, chosen before the
update and held fixed through it). Agents at play score every candidate; the subset is a
sampling speed-up of training alone.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.candidate_inputs import assemble_arrays, with_candidates
from agents.candidate_net import CandidateNet, Decisions
from guandan_env.encoding.candidate_features import (
    action_keys,
    candidate_rest,
    candidates_packed,
    decision_context,
)
from guandan_env.encoding.hand_plan import PlanCache
from guandan_env.encoding.packing import pack_candidates

FIRST_PASS_ROUNDS = 0  # greedy sequence rounds of the first pass's plans


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
) -> tuple[Decisions, torch.Tensor, np.ndarray]:
    """``(decisions with the kept candidates, the trunk's output h, their packed masks)``."""
    n = binary.shape[0]
    rows, ids = candidates_packed(mask_bits)
    ctx = decision_context(binary, cache)
    keys = action_keys(binary, rows, ids)
    many = np.bincount(rows, minlength=n)[rows] > top_k
    first = np.flatnonzero(many)
    if first.size == 0:
        rest = candidate_rest(ctx, rows, ids, cache)
        a = assemble_arrays(binary, scalar, ctx.state, rows, ids, keys, rest, net.features)
        d = Decisions.from_arrays(a)
        return d, net.encode(d), mask_bits
    rest0 = candidate_rest(ctx, rows[first], ids[first], rounds=FIRST_PASS_ROUNDS)
    a0 = assemble_arrays(
        binary, scalar, ctx.state, rows[first], ids[first], keys[first], rest0, net.features
    )
    d0 = Decisions.from_arrays(a0)
    h = net.encode(d0)
    scores = net.score(d0, h).numpy()
    best = first[segment_top_k(scores, rows[first], top_k)]
    kept = np.sort(np.concatenate([np.flatnonzero(~many), best]))
    kr, ki = rows[kept], ids[kept]
    rest = candidate_rest(ctx, kr, ki, cache)
    d = Decisions.from_arrays(with_candidates(a0, kr, ki, keys[kept], rest, net.features))
    return d, h, pack_candidates(kr, ki, n)
