"""The action-masking policy network, as a plain torch module and as an RLlib RLModule.

``GuandanNet`` is a plain ``torch.nn.Module`` (MLP trunk, policy logits over the 2,243
actions, a value head). It is used three ways:

* inside ``MaskedPPOModule``, the RLlib (new API stack) ``TorchRLModule`` that PPO trains;
* by the self-play env to play frozen league snapshots inside the env;
* by ``agents.checkpoint`` to play a trained policy without any running RLlib algorithm.

Masking: the env's observation is PettingZoo's dict ``{"observation": float32[OBS_DIM],
"action_mask": int8[NUM_ACTIONS]}`` (RLlib's own example expects the key ``observations``;
this module reads the PettingZoo keys directly). Logits of illegal actions are replaced by the
most negative float32, so ``softmax`` gives them probability exactly 0 and they are never
sampled, while entropy and KL stay finite (``0 * finite``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from guandan_env.config_keys import merge_known

OBS_KEY = "observation"
MASK_KEY = "action_mask"
MASK_VALUE = float(torch.finfo(torch.float32).min)

DEFAULT_MODEL_CONFIG: dict[str, Any] = {
    "hidden": [256, 256],
    "vf_share_layers": True,
}


def check_model_config(model_config: dict | None) -> dict:
    """Merge over the defaults; unknown keys raise ``ValueError`` naming them."""
    cfg = merge_known(DEFAULT_MODEL_CONFIG, model_config, "model config")
    cfg["hidden"] = [int(h) for h in cfg["hidden"]]
    if not cfg["hidden"] or min(cfg["hidden"]) < 1:
        raise ValueError(f"model hidden sizes must be positive, got {cfg['hidden']}")
    cfg["vf_share_layers"] = bool(cfg["vf_share_layers"])
    return cfg


def _mlp(sizes: list[int]) -> nn.Sequential:
    """ReLU MLP, orthogonal init with gain sqrt(2) (the usual PPO choice)."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        lin = nn.Linear(a, b)
        nn.init.orthogonal_(lin.weight, gain=2**0.5)
        nn.init.zeros_(lin.bias)
        layers += [lin, nn.ReLU()]
    return nn.Sequential(*layers)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` where ``mask`` is set, the most negative float32 elsewhere."""
    return torch.where(mask.bool(), logits, torch.full_like(logits, MASK_VALUE))


class GuandanNet(nn.Module):
    """MLP policy/value network: ``obs -> (logits, value)`` (logits unmasked)."""

    def __init__(self, obs_dim: int, num_actions: int, model_config: dict | None = None) -> None:
        super().__init__()
        cfg = check_model_config(model_config)
        self.model_config = cfg
        hidden = cfg["hidden"]
        self.trunk = _mlp([obs_dim, *hidden])
        self.pi = nn.Linear(hidden[-1], num_actions)
        # small initial logits: a near-uniform start over the legal actions
        nn.init.orthogonal_(self.pi.weight, gain=0.01)
        nn.init.zeros_(self.pi.bias)
        self.vf_trunk = None if cfg["vf_share_layers"] else _mlp([obs_dim, *hidden])
        self.vf = nn.Linear(hidden[-1], 1)
        nn.init.orthogonal_(self.vf.weight, gain=1.0)
        nn.init.zeros_(self.vf.bias)

    def embed(self, obs: torch.Tensor) -> torch.Tensor:
        return self.trunk(obs)

    def value_from(self, obs: torch.Tensor, embeddings: torch.Tensor | None) -> torch.Tensor:
        if self.vf_trunk is not None:
            embeddings = self.vf_trunk(obs)
        elif embeddings is None:
            embeddings = self.trunk(obs)
        return self.vf(embeddings).squeeze(-1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        emb = self.trunk(obs)
        return self.pi(emb), self.value_from(obs, emb)

    @torch.no_grad()
    def act(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rng: np.random.Generator | None = None,
        greedy: bool = True,
    ) -> int:
        """One action for one observation: argmax of the masked logits, or a sample.

        Sampling uses ``rng`` (numpy), never torch's global generator.
        """
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask")
        if legal.size == 1:
            return int(legal[0])
        logits = self.pi(self.trunk(torch.from_numpy(np.asarray(obs, np.float32))[None]))[0]
        lg = logits.numpy()[legal].astype(np.float64)
        if greedy:
            return int(legal[int(np.argmax(lg))])
        if rng is None:
            raise ValueError("sampling needs an rng")
        p = np.exp(lg - lg.max())
        p /= p.sum()
        return int(legal[rng.choice(legal.size, p=p)])


def net_state_from_module_state(state: dict[str, Any]) -> dict[str, torch.Tensor]:
    """``GuandanNet`` state dict from a ``MaskedPPOModule.get_state()`` (keys ``net.*``)."""
    out = {}
    for k, v in state.items():
        if k.startswith("net."):
            out[k[4:]] = torch.as_tensor(np.asarray(v))
    if not out:
        raise ValueError(f"no 'net.*' parameters in module state (keys: {sorted(state)[:5]} …)")
    return out


# ---------------------------------------------------------------------------------- RLlib
class _NormalizedCategorical(torch.distributions.Categorical):
    """``Categorical`` normalising its logits with ``log_softmax``.

    torch's own constructor uses ``logsumexp``, which is about 10x slower than
    ``log_softmax`` on rows holding many ``MASK_VALUE`` entries (the PPO loss builds two of
    these per minibatch over 2,243 actions).
    """

    def __init__(self, logits: torch.Tensor) -> None:
        self.logits = torch.log_softmax(logits, dim=-1)
        self._param = self.logits
        self._num_events = self.logits.size(-1)
        batch_shape = self.logits.size()[:-1]
        torch.distributions.Distribution.__init__(self, batch_shape, validate_args=False)


class MaskedCategorical(TorchCategorical):
    """RLlib's ``TorchCategorical`` over masked logits (see ``_NormalizedCategorical``)."""

    def _get_torch_distribution(self, logits=None, probs=None):
        if logits is None:
            return super()._get_torch_distribution(logits=logits, probs=probs)
        return _NormalizedCategorical(logits)


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """PPO RLModule over the env's dict observation; illegal actions are masked out.

    ``model_config``: ``hidden`` (list of layer sizes), ``vf_share_layers`` (bool).
    """

    def setup(self) -> None:
        space = self.observation_space
        if not hasattr(space, "spaces") or OBS_KEY not in space.spaces:
            raise ValueError(
                f"MaskedPPOModule needs a Dict observation space with keys {OBS_KEY!r} "
                f"and {MASK_KEY!r}, got {space}"
            )
        obs_dim = int(np.prod(space[OBS_KEY].shape))
        self.net = GuandanNet(obs_dim, int(self.action_space.n), self.model_config)
        self.action_dist_cls = MaskedCategorical

    def _split(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        if MASK_KEY not in obs:
            raise ValueError(f"observation batch lacks {MASK_KEY!r} (keys {list(obs)})")
        return obs[OBS_KEY].float(), obs[MASK_KEY]

    def _forward(self, batch: dict, **kwargs) -> dict:
        x, mask = self._split(batch)
        logits = self.net.pi(self.net.embed(x))
        return {Columns.ACTION_DIST_INPUTS: masked_logits(logits, mask)}

    def _forward_exploration(self, batch: dict, **kwargs) -> dict:
        # Sample here (Gumbel-max over the masked logits) instead of leaving it to RLlib's
        # GetActions connector: building a torch Categorical over 2,243 logits per step
        # costs more than the network. Illegal actions keep logit MASK_VALUE, so the
        # perturbed argmax can never pick them while any legal action exists.
        with torch.no_grad():
            out = self._forward(batch)
            logits = out[Columns.ACTION_DIST_INPUTS]
            u = torch.rand_like(logits).clamp_(min=1e-20)
            actions = torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)
            logp = torch.log_softmax(logits, dim=-1).gather(-1, actions[:, None])[:, 0]
        out[Columns.ACTIONS] = actions
        out[Columns.ACTION_LOGP] = logp
        return out

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        x, mask = self._split(batch)
        emb = self.net.embed(x)
        return {
            Columns.ACTION_DIST_INPUTS: masked_logits(self.net.pi(emb), mask),
            Columns.EMBEDDINGS: emb,
        }

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        x, _ = self._split(batch)
        return self.net.value_from(x, embeddings)
