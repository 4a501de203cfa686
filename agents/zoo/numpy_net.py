"""The candidate network's acting pass in numpy: the twin of ``CandidateNet.forward``.

Same weights (a ``CandidateNet`` state dict as numpy arrays), same inputs
(``agents.candidate_inputs.DecisionArrays``), same math, float32 throughout; no torch. The
zoo's pretrained agents play through it, so they run on the core install.
``tests/agents/test_zoo.py`` checks it against the torch module on real decisions
(probabilities within 1e-5).
"""

from __future__ import annotations

import re

import numpy as np

from agents.candidate_inputs import (
    DecisionArrays,
    check_model_config,
    decision_arrays,
    observation_arrays,
    upgrade_weights,
)
from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.candidate_features import ACTION_FEATURE_TABLE
from guandan_env.encoding.features import ACTION_FEATURE_DIM

_DT = np.float32
_TABLE = ACTION_FEATURE_TABLE.astype(_DT)


def _linears(state: dict[str, np.ndarray], prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(weight (out, in), bias)`` of an ``nn.Sequential``'s linear layers, in order."""
    found = sorted(
        int(m.group(1)) for k in state if (m := re.fullmatch(rf"{prefix}\.(\d+)\.weight", k))
    )
    return [(state[f"{prefix}.{i}.weight"], state[f"{prefix}.{i}.bias"]) for i in found]


def _check_shapes(state: dict[str, np.ndarray], model_config: dict) -> None:
    """The weights' names and shapes are a ``CandidateNet``'s of ``model_config`` (computed
    without torch: from the config)."""
    from guandan_env.encoding.candidate_features import CAND_DIM, STATE_DIM
    from guandan_env.encoding.packing import OBS_BITS

    trunk, cand = model_config["trunk"], model_config["cand"]
    want = {
        "obs_embed.weight": (OBS_BITS, trunk[0]),
        "dense_in.weight": (trunk[0], 1 + STATE_DIM),
        "dense_in.bias": (trunk[0],),
        "state_proj.weight": (cand[0], trunk[-1]),
        "state_proj.bias": (cand[0],),
        "cand_proj.weight": (cand[0], CAND_DIM),
        "value_head.weight": (1, trunk[-1]),
        "value_head.bias": (1,),
    }
    for i, (a, b) in enumerate(zip(trunk[:-1], trunk[1:], strict=True)):
        want[f"trunk.{2 * i}.weight"], want[f"trunk.{2 * i}.bias"] = (b, a), (b,)
    for i, (a, b) in enumerate(zip(cand, [*cand[1:], 1], strict=True)):
        want[f"scorer.{2 * i}.weight"], want[f"scorer.{2 * i}.bias"] = (b, a), (b,)
    if model_config["id_embedding"]:
        want["id_embedding.weight"] = (NUM_ACTIONS, cand[0])
    got = {k: tuple(np.shape(v)) for k, v in state.items()}
    if got != want:
        wrong = sorted(set(got) ^ set(want) | {k for k in got if k in want and got[k] != want[k]})
        raise ValueError(f"weights do not fit the model config {model_config}: {wrong[:6]}")


def _rows_start(rows: np.ndarray, n: int) -> np.ndarray:
    """Start of each decision's candidates (``rows`` ascending, no decision empty)."""
    start = np.zeros(n, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n)[:-1], out=start[1:])
    return start


class NumpyCandidateNet:
    """``CandidateNet``'s forward pass on numpy weights (module docstring)."""

    def __init__(self, state: dict[str, np.ndarray], model_config: dict) -> None:
        """``ValueError`` if the weights are not those of a ``CandidateNet`` of this config."""
        self.model_config = check_model_config(model_config)
        state = upgrade_weights(state)
        _check_shapes(state, self.model_config)
        s = {k: np.ascontiguousarray(v, dtype=_DT) for k, v in state.items()}
        self.obs_embed = s["obs_embed.weight"]
        self.dense_w, self.dense_b = s["dense_in.weight"].T.copy(), s["dense_in.bias"]
        self.trunk = [(w.T.copy(), b) for w, b in _linears(s, "trunk")]
        self.state_w, self.state_b = s["state_proj.weight"].T.copy(), s["state_proj.bias"]
        cand = s["cand_proj.weight"]
        self.action_w = cand[:, :ACTION_FEATURE_DIM].T.copy()
        self.rest_w = cand[:, ACTION_FEATURE_DIM:].T.copy()
        self.id_embedding = s.get("id_embedding.weight")
        self.scorer = [(w.T.copy(), b) for w, b in _linears(s, "scorer")]
        self.value_w, self.value_b = s["value_head.weight"][0], s["value_head.bias"][0]
        if (self.id_embedding is not None) != self.model_config["id_embedding"]:
            raise ValueError("weights and model config disagree on the id embedding")

    @property
    def features(self) -> list[str]:
        return self.model_config["features"]

    def forward(self, d: DecisionArrays) -> tuple[np.ndarray, np.ndarray]:
        """``(logits (M,), values (N,))`` as ``CandidateNet.forward`` computes them."""
        # the sum of each decision's set-bit rows, as a 0/1 matrix times the embedding: one
        # BLAS product is ~20x faster than np.add.reduceat over the gathered rows (a
        # decision's set bits are distinct, so assigning 1 is exact)
        n = d.obs_offsets.shape[0]
        counts = np.diff(d.obs_offsets, append=d.obs_idx.shape[0])
        bits = np.zeros((n, self.obs_embed.shape[0]), dtype=np.float32)
        bits[np.repeat(np.arange(n), counts), d.obs_idx] = 1.0
        x = bits @ self.obs_embed + d.dense @ self.dense_w + self.dense_b
        h = np.maximum(x, 0)
        for w, b in self.trunk:
            h = np.maximum(h @ w + b, 0)
        actions = _TABLE[d.akeys] @ self.action_w
        if self.id_embedding is not None:
            actions = actions + self.id_embedding[np.remainder(d.akeys, NUM_ACTIONS)]
        z = (h @ self.state_w + self.state_b)[d.rows] + actions[d.ainv] + d.rest @ self.rest_w
        z = np.maximum(z, 0)
        for i, (w, b) in enumerate(self.scorer):
            z = z @ w + b
            if i < len(self.scorer) - 1:
                z = np.maximum(z, 0)
        return z[:, 0].astype(np.float32), (h @ self.value_w + self.value_b).astype(np.float32)

    def prepare(self, obs: np.ndarray, mask: np.ndarray) -> DecisionArrays:
        """Inputs of decisions ``obs float32 (N, OBS_DIM)``, ``mask (N, NUM_ACTIONS)``."""
        return observation_arrays(obs, mask, self.features)

    def inputs(self, binary, scalar, mask_bits, cache=None) -> DecisionArrays:
        """``candidate_inputs.decision_arrays`` with this network's input blocks."""
        return decision_arrays(binary, scalar, mask_bits, self.features, cache=cache)

    def probabilities(self, d: DecisionArrays) -> tuple[np.ndarray, np.ndarray]:
        """``(ids (M,), probabilities (M,))`` of the candidates of the decisions ``d``."""
        return d.ids, np.exp(self.log_probs(d))

    def log_probs(self, d: DecisionArrays) -> np.ndarray:
        """Log-probability of each candidate within its decision (``(M,)`` float32)."""
        logits, _ = self.forward(d)
        return segment_log_softmax(logits, d.rows, d.n)

    def act_batch(
        self, d: DecisionArrays, rng: np.random.Generator | None = None, greedy: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(actions int64 (N,), logp float32 (N,), values float32 (N,))``, drawn as
        ``CandidateNet.act_batch`` draws them (Gumbel-max on the same numpy draws)."""
        logits, values = self.forward(d)
        logp = segment_log_softmax(logits, d.rows, d.n)
        scores = logp
        if not greedy:
            if rng is None:
                raise ValueError("sampling needs an rng")
            u = rng.random(logits.shape[0], dtype=np.float32).clip(1e-20, 1.0)
            scores = logp - np.log(-np.log(u))
        pick = segment_argmax(scores, d.rows, d.n)
        return d.ids[pick], logp[pick], values


def segment_log_softmax(logits: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    start = _rows_start(rows, n)
    z = logits - np.maximum.reduceat(logits, start)[rows]
    return (z - np.log(np.add.reduceat(np.exp(z), start))[rows]).astype(np.float32)


def segment_argmax(scores: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Index (into the flat candidates) of each row's highest score (first on ties)."""
    start = _rows_start(rows, n)
    hit = scores == np.maximum.reduceat(scores, start)[rows]
    pos = np.where(hit, np.arange(scores.shape[0]), scores.shape[0])
    return np.minimum.reduceat(pos, start)
