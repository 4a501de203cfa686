"""The learning side of PPO over legal candidates, in RLlib's roles.

* ``CandidatePPOModule``: an RLlib ``TorchRLModule`` holding ``agents.candidate_net.
  CandidateNet`` as ``net``. Its train forward reads the compact sample columns of
  ``experiments.selfplay.rllib.env_runner`` (bit-packed observations and masks), rebuilds the
  candidates and returns ragged logits (one flat vector per minibatch) and values.
* ``CandidatePPOLearner``: a ``TorchLearner`` with the clipped PPO loss over the candidates
  of each decision (segment log-softmax, never padded), entropy bonus, value loss, and a
  KL penalty towards a frozen anchor policy (the behaviour-cloned warm start) whose
  coefficient follows the run's ``anchor.coeff`` schedule (``set_anchor`` installs it).
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME
from ray.rllib.utils.schedules.scheduler import Scheduler

from agents.candidate_net import (
    DEFAULT_MODEL_CONFIG,
    CandidateNet,
    Decisions,
    net_from_state,
    prepare_packed,
    segment_entropy,
    segment_log_softmax,
    segment_sum,
    taken_index,
)
from experiments.selfplay.rllib.heads import HeadsConfig, TrainingHeads

DECISION_TENSORS = ("obs_idx", "obs_offsets", "dense", "rows", "ids", "akeys", "ainv", "rest")


def _np(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _tensor(x) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.from_numpy(np.asarray(x))


def batch_decisions(batch: dict, features: list[str]) -> Decisions:
    """A sample's (or minibatch's) decisions as the learner reads them: the candidates of its
    masks, with the feature rows the acting pass shipped (recomputed if it shipped none)."""
    shipped = None
    if "cand_rest" in batch:  # what the acting pass computed (vector_runner)
        shipped = (_np(batch["state_feats"]), _np(batch["cand_rest"]))
    return prepare_packed(
        _np(batch["obs_bits"]), _np(batch["obs_scalar"]), _np(batch["mask_bits"]), features, shipped
    )


@dataclass
class PPOTerms:
    """The loss terms of a minibatch (``ppo_terms``) and what the metrics reuse."""

    policy_loss: torch.Tensor  # the clipped surrogate, negated (minimised)
    vf_loss: torch.Tensor  # half the mean squared error of the values against their targets
    entropy: torch.Tensor  # mean over decisions of the entropy over their candidates
    logp_all: torch.Tensor  # (M,) log-probability of every candidate
    logp: torch.Tensor  # (N,) of the actions taken
    ratio: torch.Tensor  # (N,) new over acting probability of the actions taken


def ppo_terms(
    logits: torch.Tensor,
    values: torch.Tensor,
    rows: torch.Tensor,
    ids: torch.Tensor,
    batch: dict,
    clip: float,
) -> PPOTerms:
    """The clipped PPO surrogate (advantages normalised per minibatch), the value loss and
    the entropy over ragged candidates: what ``CandidatePPOLearner`` weighs into its loss
    (and ``experiments.bench.loss_gradients`` takes apart)."""
    n = values.shape[0]
    logp_all = segment_log_softmax(logits, rows, n)
    logp = logp_all[taken_index(rows, ids, _tensor(batch["actions"]).long())]
    adv = _tensor(batch["advantages"]).float()
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = torch.exp(logp - _tensor(batch["logp"]).float())
    surrogate = torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv)
    vf_loss = 0.5 * ((values - _tensor(batch["value_targets"]).float()) ** 2).mean()
    entropy = segment_entropy(logp_all, rows, n).mean()
    return PPOTerms(-surrogate.mean(), vf_loss, entropy, logp_all, logp, ratio)


class CandidatePPOModule(TorchRLModule, ValueFunctionAPI):
    """RLlib wrapper of ``CandidateNet`` (``model_config`` = its config)."""

    def setup(self) -> None:
        # RLlib merges its own default model keys in; keep the network's (validated upstream)
        cfg = {k: v for k, v in (self.model_config or {}).items() if k in DEFAULT_MODEL_CONFIG}
        self.net = CandidateNet(cfg)
        # training-only heads (``heads``): a separate or privileged critic, belief and outcome
        # heads
        self.heads_cfg = HeadsConfig.from_dict((self.model_config or {}).get("heads"))
        if self.heads_cfg.any:
            self.heads = TrainingHeads(self.net.model_config["trunk"], self.heads_cfg)
        if self.heads_cfg.separate:  # the critic's own value head replaces the policy's
            self.net.value_head.requires_grad_(False)

    def decisions(self, batch: dict):
        return batch_decisions(batch, self.net.features)

    def _forward(self, batch: dict, **kwargs) -> dict:
        d = self.decisions(batch)
        h = self.net.encode(d)
        out = {"logits": self.net.score(d, h), "h": h}
        if self.heads_cfg.separate or self.heads_cfg.privileged:  # the value GAE used
            hidden = _tensor(batch["hidden"]) if self.heads_cfg.privileged else None
            out["values"] = self.heads.value(self.net, d, h, hidden)
        else:
            out["values"] = self.net.value_head(h).squeeze(-1)
        out.update({k: getattr(d, k) for k in DECISION_TENSORS})  # the loss reuses the inputs
        return out

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        out = self._forward(batch)
        cfg, h = self.heads_cfg, out["h"]
        if cfg.belief_coeff > 0:
            loss, guess = self.heads.belief_losses(h, _tensor(batch["hidden"]))
            out["belief_loss"], out["belief_guess_loss"] = loss, guess
        if cfg.outcome_coeff > 0:
            out["outcome_loss"] = self.heads.outcome_loss(h, _tensor(batch["outcome"]))
        return out

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        return self._forward(batch)["values"]


class CandidatePPOLearner(TorchLearner):
    """Clipped PPO over ragged candidates; optional KL to a frozen anchor policy.

    Its coefficients are RLlib ``Scheduler``s over the sampled-steps count that
    ``GuandanPPO`` passes to every update (``timesteps``): ``entropy_coeff`` from the PPO
    config, the anchor's from ``learner_config_dict["anchor_coeff"]``; the learning rate is
    RLlib's own optimizer schedule (``lr``)."""

    anchor: CandidateNet | None = None

    def build(self) -> None:
        # a remote Learner (learners.num >= 1) would print RLlib's deprecation notices
        logging.getLogger("ray").setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            super().build()
        extra = self.config.learner_config_dict or {}
        self.schedules = {
            name: Scheduler(fixed_value_or_schedule=value, framework="torch", device=self._device)
            for name, value in (
                ("entropy_coeff", self.config.entropy_coeff),
                ("anchor_coeff", extra.get("anchor_coeff", 0.0)),
                ("lr", self.config.lr),
            )
        }
        self.lr_scale = 1.0  # the time budget's decay (ppo.lr_decay_from), set by the trainer

    def set_lr_scale(self, scale: float) -> None:
        self.lr_scale = float(scale)

    def coeff(self, name: str) -> float:
        """The scheduled coefficient ``name`` at the samples seen so far."""
        return float(self.schedules[name].get_current_value())

    def before_gradient_based_update(self, *, timesteps: dict[str, Any]) -> None:
        """The coefficients at the samples seen (RLlib moves ``lr`` after the update)."""
        super().before_gradient_based_update(timesteps=timesteps)
        samples = timesteps.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
        for name, scheduler in self.schedules.items():
            scheduler.update(timestep=samples)
            self.metrics.log_value((DEFAULT_MODULE_ID, name), self.coeff(name), window=1)
        # the lr this update uses: its schedule times the time budget's factor (RLlib's own
        # schedule step after the update logs the unscaled value; this is the one applied)
        lr = self.coeff("lr") * self.lr_scale
        for names in self._module_optimizers.values():
            for name in names:
                self._set_optimizer_lr(self._named_optimizers[name], lr=lr)
        self.metrics.log_value((DEFAULT_MODULE_ID, "effective_lr"), lr, window=1)
        self.metrics.log_value((DEFAULT_MODULE_ID, "lr_scale"), self.lr_scale, window=1)

    def set_anchor(self, state: dict | None, model_config: dict | None) -> None:
        """The frozen policy the KL penalty pulls towards (``None``: no anchor)."""
        self.anchor = None if state is None else net_from_state(state, model_config or {})

    skipped_updates: int = 0

    def apply_gradients(self, gradients_dict) -> None:
        """One finiteness check over all gradients (a fused norm), not RLlib's two passes
        per parameter; a non-finite update is skipped and counted."""
        grads = [g for g in gradients_dict.values() if g is not None]
        for pid, g in gradients_dict.items():
            self._params[pid].grad = g
        norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads))) if grads else 0
        if grads and not torch.isfinite(norm):
            self.skipped_updates += 1
            self.metrics.log_value("skipped_nonfinite_updates", self.skipped_updates, window=1)
            return
        for module_id, names in self._module_optimizers.items():
            for name in names:
                self.get_optimizer(module_id, name).step()

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out) -> torch.Tensor:
        values, rows = fwd_out["values"], fwd_out["rows"]
        n = values.shape[0]
        clip = float(config.clip_param)
        t = ppo_terms(fwd_out["logits"], values, rows, fwd_out["ids"], batch, clip)
        logp_all, logp, ratio = t.logp_all, t.logp, t.ratio
        policy_loss, vf_loss, entropy = t.policy_loss, t.vf_loss, t.entropy
        total = (
            policy_loss
            + float(config.vf_loss_coeff) * vf_loss
            - self.coeff("entropy_coeff") * entropy
        )
        heads = self.module[module_id].unwrapped().heads_cfg
        aux = {}
        for key, coeff in (
            ("belief_loss", heads.belief_coeff),
            ("outcome_loss", heads.outcome_coeff),
        ):
            if key in fwd_out:
                total = total + coeff * fwd_out[key]
                aux[key] = fwd_out[key]
        if "belief_guess_loss" in fwd_out:
            aux["belief_guess_loss"] = fwd_out["belief_guess_loss"]
        anchor_kl = torch.zeros(())
        anchor_coeff = self.coeff("anchor_coeff") if self.anchor is not None else 0.0
        if anchor_coeff > 0:
            with torch.no_grad():
                d = Decisions(**{k: fwd_out[k] for k in DECISION_TENSORS})
                a_logits, _ = self.anchor(d)
                a_logp = segment_log_softmax(a_logits, rows, n)
            anchor_kl = segment_sum(torch.exp(a_logp) * (a_logp - logp_all), rows, n).mean()
            total = total + anchor_coeff * anchor_kl
        with torch.no_grad():
            approx_kl = (batch["logp"].float() - logp).mean()
            clip_frac = ((ratio - 1).abs() > clip).float().mean()
            resid = batch["value_targets"].float() - values
            explained = 1 - resid.var() / (batch["value_targets"].float().var() + 1e-8)
        for key, v in (
            ("policy_loss", policy_loss),
            ("vf_loss", vf_loss),
            ("entropy", entropy),
            ("approx_kl", approx_kl),
            ("clip_frac", clip_frac),
            ("anchor_kl", anchor_kl),
            ("vf_explained_var", explained),
            *aux.items(),
        ):
            self.metrics.log_value((module_id, key), float(v.detach()), window=1)
        return total
