"""The candidate network's model config and inputs, in numpy only.

What ``agents.candidate_net.CandidateNet`` (torch) and its numpy twin
``agents.zoo.numpy_net.NumpyCandidateNet`` both read: the model config with its defaults and
checks, and a batch of decisions as arrays (``DecisionArrays``): the set bits of each
observation's 0/1 part, the dense inputs, and the legal candidates with their features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from guandan_env.core.config_keys import merge_known
from guandan_env.encoding.candidate_features import (
    ACTION_FEATURE_TABLE,
    AFTER_DIM,
    BEAT_COL,
    BEAT_DIM,
    CAND_DIM,
    DELTA_COL,
    REPLY_COL,
    REPLY_DIM,
    REST_DIM,
    STATE_DIM,
    action_keys,
    candidates_packed,
    decision_features,
)
from guandan_env.encoding.hand_plan import PLAN_DIM, PlanCache
from guandan_env.encoding.packing import BINARY, OBS_BITS, SCALAR_INDEX, pack_masks

FEATURE_BLOCKS = ("after", "plan", "state", "beat", "reply")
DEFAULT_MODEL_CONFIG: dict[str, Any] = {
    "trunk": [256, 256],  # MLP over observation + state features
    "cand": [64],  # candidate scorer: first width joins h, φ and E, then an MLP
    "id_embedding": True,  # learned per-id embedding E[a]
    # input blocks used (ablations switch them off)
    "features": ["after", "plan", "state", "beat", "reply"],
}
# widths of ``cand_proj`` before the blocks appended since: before ``beat`` (2026-12-03), and
# before ``reply`` (2026-12-04)
LEGACY_CAND_WIDTHS = (CAND_DIM - REPLY_DIM - BEAT_DIM, CAND_DIM - REPLY_DIM)


def check_model_config(model_config: dict | None) -> dict:
    """Merge over the defaults; unknown keys or blocks raise ``ValueError`` naming them."""
    cfg = merge_known(DEFAULT_MODEL_CONFIG, model_config, "model config")
    for key in ("trunk", "cand"):
        cfg[key] = [int(h) for h in cfg[key]]
        if not cfg[key] or min(cfg[key]) < 1:
            raise ValueError(f"model.{key} must be a non-empty list of positive sizes")
    cfg["id_embedding"] = bool(cfg["id_embedding"])
    cfg["features"] = list(cfg["features"])
    bad = sorted(set(cfg["features"]) - set(FEATURE_BLOCKS))
    if bad:
        raise ValueError(f"model.features: unknown block(s) {bad}; known: {list(FEATURE_BLOCKS)}")
    return cfg


@dataclass
class DecisionArrays:
    """A batch of decisions as the network reads them (numpy arrays).

    The observation's 0/1 part enters as the indices of its set bits (``obs_idx``, a flat
    vector, ``obs_offsets`` where each decision's start), so the first layer is a sum of
    weight rows (~150 of the ``OBS_BITS`` bits are set): in torch an ``EmbeddingBag``, ~10x
    cheaper than a dense matmul, same math. (The numpy twin rebuilds the 0/1 rows for one
    BLAS product instead: numpy has no fast segment sum, ``agents.zoo.numpy_net``.)
    """

    obs_idx: np.ndarray  # (K,) int64: indices of the set observation bits, row by row
    obs_offsets: np.ndarray  # (N,) int64: start of each decision's indices
    dense: np.ndarray  # (N, 1 + STATE_DIM) float32: bomb-power scalar + state features
    rows: np.ndarray  # (M,) int64: decision of each candidate, ascending
    ids: np.ndarray  # (M,) int64: action id of each candidate
    akeys: np.ndarray  # (U,) int64: the batch's distinct rows of ACTION_FEATURE_TABLE
    ainv: np.ndarray  # (M,) int64: each candidate's position in akeys
    rest: np.ndarray  # (M, REST_DIM) float32: the candidate rows past the action block

    @property
    def n(self) -> int:
        return int(self.dense.shape[0])


def _block_masks(features: list[str] | None) -> tuple[np.ndarray, np.ndarray] | None:
    """``block_mask(features)``, or None when every block is on (nothing to mask)."""
    if features is None or set(features) == set(FEATURE_BLOCKS):
        return None
    return block_mask(features)


def block_mask(features: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """0/1 column masks of the candidate (past the action block) and state inputs for the
    enabled blocks."""
    cand = np.ones(REST_DIM, dtype=np.float32)
    if "after" not in features:
        cand[:AFTER_DIM] = 0
    if "plan" not in features:
        cand[AFTER_DIM : DELTA_COL + 1] = 0
    if "beat" not in features:
        cand[BEAT_COL:REPLY_COL] = 0
    if "reply" not in features:
        cand[REPLY_COL:] = 0
    state = np.ones(STATE_DIM, dtype=np.float32)
    if "plan" not in features:
        state[:PLAN_DIM] = 0
    if "state" not in features:
        state[PLAN_DIM:] = 0
    return cand, state


def upgrade_weights(state: dict[str, Any]) -> dict[str, Any]:
    """Weights saved before the ``beat`` or ``reply`` block existed, made to fit today's
    ``CandidateNet``: their ``cand_proj`` gains zero columns for the blocks appended since,
    so the function is the same (their model configs leave those blocks off, which zeroes
    their inputs too)."""
    w = state.get("cand_proj.weight")
    if w is None or np.ndim(w) != 2 or np.shape(w)[1] not in LEGACY_CAND_WIDTHS:
        return state  # today's weights, or malformed ones the shape checks name
    w = np.asarray(w, dtype=np.float32)
    missing = CAND_DIM - w.shape[1]
    padded = np.concatenate([w, np.zeros((w.shape[0], missing), np.float32)], axis=1)
    return {**state, "cand_proj.weight": padded}


def distinct(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct keys ascending, position of each key among them)``; O(M + table)."""
    present = np.zeros(ACTION_FEATURE_TABLE.shape[0], dtype=bool)
    present[keys] = True
    found = np.flatnonzero(present)
    position = np.cumsum(present, dtype=np.int64) - 1
    return found, position[keys]


def decision_arrays(
    binary: np.ndarray,
    scalar: np.ndarray,
    mask_bits: np.ndarray,
    features: list[str] | None,
    shipped: tuple[np.ndarray, np.ndarray] | None = None,
    cache: PlanCache | None = None,
) -> DecisionArrays:
    """Inputs from the observations' 0/1 part ``binary (N, OBS_BITS)`` (bool, or uint8 0/1),
    their scalar and the packed masks. ``shipped``: the ``(state (N, STATE_DIM), rest
    (M, REST_DIM))`` blocks of these decisions as an acting pass computed them (a stored
    sample carries them), else they are computed here (``cache``: a ``hand_plan.PlanCache``)."""
    rows, ids = candidates_packed(mask_bits)
    n = binary.shape[0]
    if rows.size == 0 or not np.bincount(rows, minlength=n).all():
        raise ValueError("every decision needs at least one legal action in its mask")
    if shipped is None:
        inputs = decision_features(binary, rows, ids, cache)
        st, rest, keys = inputs.state, inputs.rest, inputs.keys
    else:
        st, rest = (np.asarray(x, dtype=np.float32) for x in shipped)
        if st.shape != (n, STATE_DIM) or rest.shape != (rows.size, REST_DIM):
            raise ValueError(
                f"shipped features of shapes {st.shape}, {rest.shape} for {n} decisions with "
                f"{rows.size} candidates (want ({n}, {STATE_DIM}), ({rows.size}, {REST_DIM}))"
            )
        keys = action_keys(binary, rows, ids)
    return with_candidates(
        decisions_only(binary, scalar, st, features), rows, ids, keys, rest, features
    )


def decisions_only(
    binary: np.ndarray, scalar: np.ndarray, state: np.ndarray, features: list[str] | None
) -> DecisionArrays:
    """``DecisionArrays`` of decisions ``binary``/``scalar`` with their ``state`` rows and no
    candidates yet (``with_candidates`` gives them some); ``features`` switches blocks off."""
    n = binary.shape[0]
    masks = _block_masks(features)
    if masks is not None:
        state = state * masks[1]
    # over bools: 2x faster than over uint8, and faster than np.nonzero over the 2-D array
    flat = np.flatnonzero(binary.view(bool) if binary.dtype == np.uint8 else binary)
    r = flat // OBS_BITS
    c = flat - r * OBS_BITS
    offsets = np.zeros(n, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=n)[:-1], out=offsets[1:])
    dense = np.concatenate([np.asarray(scalar, np.float32)[:, None], state], axis=1)
    empty = np.zeros(0, dtype=np.int64)
    return DecisionArrays(
        c, offsets, dense, empty, empty, empty, empty, np.zeros((0, REST_DIM), np.float32)
    )


def with_candidates(
    a: DecisionArrays,
    rows: np.ndarray,
    ids: np.ndarray,
    keys: np.ndarray,
    rest: np.ndarray,
    features: list[str] | None,
) -> DecisionArrays:
    """The decisions of ``a`` with the candidates ``(rows, ids)`` (any subset of the legal
    ones, rows ascending; ``keys`` their ``ACTION_FEATURE_TABLE`` rows) instead of its own:
    ``a``'s observation and dense rows are kept as they are (already masked for the same
    ``features``); only the new ``rest`` rows are masked here."""
    masks = _block_masks(features)
    if masks is not None:
        rest = rest * masks[0]
    akeys, ainv = distinct(keys)
    return DecisionArrays(
        a.obs_idx, a.obs_offsets, a.dense, rows, ids, akeys, ainv, np.ascontiguousarray(rest)
    )


def observation_arrays(
    obs: np.ndarray, mask: np.ndarray, features: list[str] | None = None
) -> DecisionArrays:
    """Inputs of decisions ``obs float32 (N, OBS_DIM)``, ``mask (N, NUM_ACTIONS)``."""
    obs = np.asarray(obs)
    return decision_arrays(obs[:, BINARY] != 0, obs[:, SCALAR_INDEX], pack_masks(mask), features)
