"""The candidate-scoring policy: a plain torch network that scores only the legal actions.

``CandidateNet`` reads a decision as the observation plus ``state_features`` (own hand plan,
public counting), encodes it with an MLP trunk ``h``, and scores each legal candidate ``a``
with its features ``φ(a)`` (``guandan_env.encoding.candidate_features``: the action's row of
``action_features``, the hand it leaves, that hand's plan) and a learned per-id embedding
``E[a]`` (zero at start)::

    score(s, a) = MLP(relu(U h(s) + V φ(a) + E[a]))        value(s) = w · h(s) + b

The policy is a softmax over each decision's candidates only: logits are one flat vector of
all candidates of a batch (``rows`` says whose they are), normalised per row with segment
operations (``scatter_reduce`` / ``index_add``), never padded, so the cost of a decision
follows its number of legal actions (mean ~6, max 793), not the table's 2,243 ids. An
illegal action has no logit at all: probability exactly 0.

The same class serves the RLlib learner (wrapped by ``experiments.selfplay.rllib.learner``),
the env runner's batched acting, frozen league members, behaviour cloning and the
``checkpoint:PATH`` agent; this module imports no Ray. ``model.features`` switches input
blocks off (zeroed) for ablations.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.candidate_inputs import (
    DEFAULT_MODEL_CONFIG,
    FEATURE_BLOCKS,
    DecisionArrays,
    check_model_config,
    decision_arrays,
    upgrade_weights,
)
from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.candidate_features import ACTION_FEATURE_TABLE, CAND_DIM, STATE_DIM
from guandan_env.encoding.features import ACTION_FEATURE_DIM
from guandan_env.encoding.hand_plan import PlanCache
from guandan_env.encoding.packing import BINARY, OBS_BITS, SCALAR_INDEX, pack_masks

__all__ = ["DEFAULT_MODEL_CONFIG", "FEATURE_BLOCKS", "check_model_config", "CandidateNet"]

_FEATURE_TABLE = torch.from_numpy(ACTION_FEATURE_TABLE)  # shares the numpy table


@dataclass
class Decisions:
    """A batch of decisions as the network reads them: ``candidate_inputs.DecisionArrays``
    as torch tensors (sharing memory)."""

    obs_idx: torch.Tensor  # (K,) int64: indices of the set observation bits, row by row
    obs_offsets: torch.Tensor  # (N,) int64: start of each decision's indices
    dense: torch.Tensor  # (N, 1 + STATE_DIM) float32: bomb-power scalar + state features
    rows: torch.Tensor  # (M,) int64: decision of each candidate, ascending
    ids: torch.Tensor  # (M,) int64: action id of each candidate
    akeys: torch.Tensor  # (U,) int64: the batch's distinct rows of ACTION_FEATURE_TABLE
    ainv: torch.Tensor  # (M,) int64: each candidate's position in akeys
    rest: torch.Tensor  # (M, REST_DIM) float32: the candidate rows past the action block

    @property
    def n(self) -> int:
        return int(self.dense.shape[0])

    @classmethod
    def from_arrays(cls, a: DecisionArrays) -> Decisions:
        return cls(*(torch.from_numpy(getattr(a, f.name)) for f in fields(DecisionArrays)))


def prepare_binary(
    binary: np.ndarray,
    scalar: np.ndarray,
    mask_bits: np.ndarray,
    features: list[str] | None,
    shipped: tuple[np.ndarray, np.ndarray] | None = None,
    cache: PlanCache | None = None,
) -> Decisions:
    """``candidate_inputs.decision_arrays`` as torch tensors."""
    return Decisions.from_arrays(
        decision_arrays(binary, scalar, mask_bits, features, shipped, cache)
    )


def prepare(obs: np.ndarray, mask: np.ndarray, features: list[str] | None = None) -> Decisions:
    """Network inputs of decisions ``obs float32 (N, OBS_DIM)``, ``mask (N, NUM_ACTIONS)``."""
    return prepare_bits(obs, pack_masks(mask), features)


def prepare_bits(
    obs: np.ndarray, mask_bits: np.ndarray, features: list[str] | None = None
) -> Decisions:
    """``prepare`` with the masks as ``packing.pack_masks`` bits (the fast path)."""
    obs = np.asarray(obs)
    return prepare_binary(obs[:, BINARY] != 0, obs[:, SCALAR_INDEX], mask_bits, features)


def prepare_packed(
    obs_bits: np.ndarray,
    obs_scalar: np.ndarray,
    mask_bits: np.ndarray,
    features: list[str] | None = None,
    shipped: tuple[np.ndarray, np.ndarray] | None = None,
) -> Decisions:
    """``prepare`` from ``guandan_env.encoding.packing`` arrays (stored samples); ``shipped``: see
    ``candidate_inputs.decision_arrays``."""
    binary = np.unpackbits(obs_bits, axis=1, count=OBS_BITS)
    return prepare_binary(binary, obs_scalar, mask_bits, features, shipped)


# ------------------------------------------------------------------ segment operations
def segment_log_softmax(logits: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
    """Log-probabilities of each candidate within its row (``rows`` ascending, no empty row)."""
    peak = torch.full((n,), -torch.inf, dtype=logits.dtype).scatter_reduce(
        0, rows, logits.detach(), reduce="amax", include_self=True
    )
    z = logits - peak.index_select(0, rows)
    total = torch.zeros(n, dtype=logits.dtype).index_add(0, rows, torch.exp(z))
    return z - torch.log(total).index_select(0, rows)


def segment_sum(values: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
    return torch.zeros(n, dtype=values.dtype).index_add(0, rows, values)


def segment_entropy(logp: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
    return -segment_sum(torch.exp(logp) * logp, rows, n)


def segment_argmax(scores: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
    """Index (into the flat candidates) of each row's highest score (first on ties)."""
    peak = torch.full((n,), -torch.inf, dtype=scores.dtype).scatter_reduce(
        0, rows, scores, reduce="amax", include_self=True
    )
    hit = scores == peak.index_select(0, rows)
    pos = torch.arange(scores.shape[0])
    first = torch.full((n,), scores.shape[0], dtype=torch.int64)
    return first.scatter_reduce(0, rows[hit], pos[hit], reduce="amin", include_self=True)


def taken_index(rows: torch.Tensor, ids: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Flat candidate index of each row's taken action (``ValueError`` if one is not legal)."""
    hit = ids == actions[rows]
    idx = torch.nonzero(hit, as_tuple=False)[:, 0]
    if idx.shape[0] != actions.shape[0] or not torch.equal(rows[idx], torch.arange(len(actions))):
        raise ValueError("an action is not among its decision's legal candidates")
    return idx


# ------------------------------------------------------------------ the network
class _BitsTimesWeight(torch.autograd.Function):
    """``X @ W`` for a 0/1 matrix ``X`` given as its set bits (row by row), forward by
    ``embedding_bag`` (sum); backward ``dW = Xᵀ G`` as a sparse CSR product with ``Xᵀ``
    built from the bits by one stable 16-bit sort. Same values as ``nn.EmbeddingBag``'s
    own backward (up to float summation order) and faster on CPU (docs/selfplay.md): that
    backward sorts and scatters every (bit, row) pair."""

    @staticmethod
    def forward(ctx, weight, idx, offsets):
        ctx.save_for_backward(idx, offsets)
        ctx.shape = weight.shape
        return nn.functional.embedding_bag(idx, weight, offsets, mode="sum")

    @staticmethod
    def backward(ctx, grad):
        idx, offsets = ctx.saved_tensors
        n, k = grad.shape[0], idx.shape[0]
        counts = torch.diff(offsets, append=torch.tensor([k], dtype=offsets.dtype))
        row = torch.repeat_interleave(torch.arange(n), counts)
        order = torch.sort(idx.to(torch.int16), stable=True).indices  # bits < 2**15
        crow = torch.zeros(ctx.shape[0] + 1, dtype=torch.int64)
        torch.cumsum(torch.bincount(idx, minlength=ctx.shape[0]), 0, out=crow[1:])
        with warnings.catch_warnings():  # "sparse CSR support is in beta"
            warnings.simplefilter("ignore", UserWarning)
            xt = torch.sparse_csr_tensor(
                crow,
                row.index_select(0, order),
                torch.ones(k, dtype=grad.dtype),
                size=(ctx.shape[0], n),
            )
        return xt @ grad.contiguous(), None, None


def bits_times_weight(weight: torch.Tensor, idx: torch.Tensor, offsets: torch.Tensor):
    """Rows ``sum(weight[idx of the row])`` (see ``_BitsTimesWeight``)."""
    if torch.is_grad_enabled() and weight.requires_grad:
        return _BitsTimesWeight.apply(weight, idx, offsets)
    return nn.functional.embedding_bag(idx, weight, offsets, mode="sum")


def _mlp(sizes: list[int], last_relu: bool = True) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        lin = nn.Linear(a, b)
        nn.init.orthogonal_(lin.weight, gain=2**0.5)
        nn.init.zeros_(lin.bias)
        layers.append(lin)
        if last_relu or i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class StateEncoder(nn.Module):
    """The decision's encoding ``h(s)``: an embedding sum over the observation's set bits plus
    the dense inputs, then the trunk MLP. ``CandidateNet`` holds these parts under the same
    names (``obs_embed``, ``dense_in``, ``trunk``), so a training-only critic of this class
    loads them from a policy's state dict."""

    def __init__(self, trunk: list[int]) -> None:
        super().__init__()
        first = nn.Linear(OBS_BITS + 1 + STATE_DIM, trunk[0])
        nn.init.orthogonal_(first.weight, gain=2**0.5)
        self.obs_embed = nn.EmbeddingBag(OBS_BITS, trunk[0], mode="sum")
        self.dense_in = nn.Linear(1 + STATE_DIM, trunk[0])
        with torch.no_grad():
            self.obs_embed.weight.copy_(first.weight[:, :OBS_BITS].T)
            self.dense_in.weight.copy_(first.weight[:, OBS_BITS:])
            self.dense_in.bias.zero_()
        self.trunk = _mlp(trunk) if len(trunk) > 1 else nn.Sequential()

    def forward(self, d: Decisions) -> torch.Tensor:
        return encode_state(self, d)


def encode_state(m: nn.Module, d: Decisions) -> torch.Tensor:
    """``h (N, trunk[-1])`` of the decisions ``d`` through ``m``'s ``obs_embed``,
    ``dense_in`` and ``trunk`` (a ``CandidateNet`` or a ``StateEncoder``)."""
    x = bits_times_weight(m.obs_embed.weight, d.obs_idx, d.obs_offsets)
    x = x + m.dense_in(d.dense)
    return m.trunk(torch.relu(x))


class CandidateNet(nn.Module):
    """Scores legal candidates and values decisions (module docstring)."""

    def __init__(self, model_config: dict | None = None) -> None:
        super().__init__()
        cfg = check_model_config(model_config)
        self.model_config = cfg
        trunk, cand = cfg["trunk"], cfg["cand"]
        # first trunk layer = embedding sum over the set observation bits + dense inputs
        # (the parts are adopted under their own names: shipped policy.pt files keep them)
        enc = StateEncoder(trunk)
        self.obs_embed, self.dense_in, self.trunk = enc.obs_embed, enc.dense_in, enc.trunk
        self.state_proj = nn.Linear(trunk[-1], cand[0])
        self.cand_proj = nn.Linear(CAND_DIM, cand[0], bias=False)
        self.id_embedding = nn.Embedding(NUM_ACTIONS, cand[0]) if cfg["id_embedding"] else None
        if self.id_embedding is not None:
            nn.init.zeros_(self.id_embedding.weight)
        self.scorer = _mlp([*cand, 1], last_relu=False)
        nn.init.orthogonal_(self.scorer[-1].weight, gain=0.01)  # near-uniform start
        self.value_head = nn.Linear(trunk[-1], 1)
        nn.init.orthogonal_(self.value_head.weight, gain=1.0)
        nn.init.zeros_(self.value_head.bias)

    @property
    def features(self) -> list[str]:
        return self.model_config["features"]

    def prepare(self, obs: np.ndarray, mask: np.ndarray) -> Decisions:
        return prepare(obs, mask, self.features)

    def inputs(self, binary, scalar, mask_bits, cache: PlanCache | None = None) -> Decisions:
        """``prepare_binary`` with this network's input blocks (a batched policy's path)."""
        return prepare_binary(binary, scalar, mask_bits, self.features, cache=cache)

    def forward(self, d: Decisions) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits (M,), values (N,))``: unnormalised candidate scores and state values."""
        h = self.encode(d)
        return self.score(d, h), self.value_head(h).squeeze(-1)

    def encode(self, d: Decisions) -> torch.Tensor:
        """The trunk's output ``h (N, trunk[-1])`` of each decision (what the value head and
        the candidate scorer read, and training-only heads may read too)."""
        return encode_state(self, d)

    def score(self, d: Decisions, h: torch.Tensor) -> torch.Tensor:
        """The candidates' logits ``(M,)`` from the trunk's output."""
        # cand_proj over the full candidate rows, with its action-block columns (and the id
        # embedding) applied to the batch's distinct (level, id) rows only (~2.5x fewer than
        # candidates), then gathered
        w = self.cand_proj.weight
        table = torch.index_select(_FEATURE_TABLE, 0, d.akeys)
        actions = nn.functional.linear(table, w[:, :ACTION_FEATURE_DIM])
        if self.id_embedding is not None:
            actions = actions + self.id_embedding(torch.remainder(d.akeys, NUM_ACTIONS))
        z = torch.addmm(
            # index_select, not x[idx]: 3-7x faster forward and 2-3x faster backward on CPU
            self.state_proj(h).index_select(0, d.rows) + actions.index_select(0, d.ainv),
            d.rest,
            w[:, ACTION_FEATURE_DIM:].T,
        )
        return self.scorer(torch.relu(z)).squeeze(-1)

    @torch.no_grad()
    def probabilities(self, d: Decisions) -> tuple[np.ndarray, np.ndarray]:
        """``(ids (M,), probabilities (M,))`` of the candidates of the decisions ``d``."""
        logits, _ = self.forward(d)
        return d.ids.numpy(), torch.exp(segment_log_softmax(logits, d.rows, d.n)).numpy()

    @torch.no_grad()
    def act_batch(
        self,
        d: Decisions,
        rng: np.random.Generator | None = None,
        greedy: bool = False,
        value_of: Callable[[torch.Tensor], torch.Tensor] | None = None,
        h: torch.Tensor | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(actions int64 (N,), logp float32 (N,), values float32 (N,))``.

        Samples by Gumbel-max with noise from the numpy ``rng`` (never torch's global RNG), or
        takes the argmax when ``greedy``. ``value_of`` (training only) replaces the value head:
        a function of the trunk's output (a critic that also sees more than the seat). ``h``:
        the trunk's output of these decisions if already computed (``encode(d)``).
        """
        if h is None:
            h = self.encode(d)
        logits = self.score(d, h)
        values = (value_of or (lambda x: self.value_head(x).squeeze(-1)))(h)
        logp = segment_log_softmax(logits, d.rows, d.n)
        scores = logp
        if not greedy:
            if rng is None:
                raise ValueError("sampling needs an rng")
            u = rng.random(logits.shape[0], dtype=np.float32).clip(1e-20, 1.0)
            scores = logp - torch.from_numpy(np.log(-np.log(u)))
        pick = segment_argmax(scores, d.rows, d.n)
        return d.ids[pick].numpy(), logp[pick].numpy(), values.numpy()


def policy_state(net: CandidateNet) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def net_from_state(state: dict[str, Any], model_config: dict) -> CandidateNet:
    net = CandidateNet(model_config)
    state = upgrade_weights(state)
    net.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in state.items()})
    return net.eval()
