"""PPO over legal candidates on RLlib: RLModule, Learner and the algorithm's training step.

* ``CandidatePPOModule`` — an RLlib ``TorchRLModule`` holding ``agents.candidate_net.
  CandidateNet`` as ``net``. Its train forward reads the compact sample columns of
  ``experiments.vector_runner`` (bit-packed observations and masks), rebuilds the candidates
  and returns ragged logits (one flat vector per minibatch) and values.
* ``CandidatePPOLearner`` — a ``TorchLearner`` with the clipped PPO loss over the candidates
  of each decision (segment log-softmax, never padded), entropy bonus, value loss, and a
  KL penalty towards a frozen anchor policy (the behaviour-cloned warm start) whose
  coefficient the trainer anneals to 0 (``set_anchor``).
* ``GuandanPPO`` — PPO with its own ``training_step``: samples come from the
  ``VectorEnvRunner``s already carrying advantages (GAE in the runner), so they go straight
  to ``learner_group.update(batch=…)`` (no learner connector); with remote runners the next
  ``sample()`` is in flight while the learner updates (one iteration of policy lag, which the
  PPO ratio corrects), so sampling and learning overlap on separate cores.
"""

from __future__ import annotations

import logging
import time
import warnings
from typing import Any

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPO
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch

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
from experiments.vector_runner import ATTACHED_METRICS, minibatches, shards

DECISION_TENSORS = ("obs_idx", "obs_offsets", "dense", "rows", "ids", "akeys", "ainv", "rest")


def _np(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


class CandidatePPOModule(TorchRLModule, ValueFunctionAPI):
    """RLlib wrapper of ``CandidateNet`` (``model_config`` = its config)."""

    def setup(self) -> None:
        # RLlib merges its own default model keys in; keep the network's (validated upstream)
        cfg = {k: v for k, v in (self.model_config or {}).items() if k in DEFAULT_MODEL_CONFIG}
        self.net = CandidateNet(cfg)

    def decisions(self, batch: dict):
        shipped = None
        if "cand_rest" in batch:  # what the acting pass computed (vector_runner)
            shipped = (_np(batch["state_feats"]), _np(batch["cand_rest"]))
        return prepare_packed(
            _np(batch["obs_bits"]),
            _np(batch["obs_scalar"]),
            _np(batch["mask_bits"]),
            self.net.features,
            shipped,
        )

    def _forward(self, batch: dict, **kwargs) -> dict:
        d = self.decisions(batch)
        logits, values = self.net(d)
        out = {"logits": logits, "values": values}
        out.update({k: getattr(d, k) for k in DECISION_TENSORS})  # the loss reuses the inputs
        return out

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        return self._forward(batch)

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        return self._forward(batch)["values"]


class CandidatePPOLearner(TorchLearner):
    """Clipped PPO over ragged candidates; optional KL to a frozen anchor policy."""

    anchor: CandidateNet | None = None
    anchor_coeff: float = 0.0

    def build(self) -> None:
        # a remote Learner (learners.num >= 1) would print RLlib's deprecation notices
        logging.getLogger("ray").setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            super().build()

    def set_anchor(self, state: dict | None, model_config: dict | None, coeff: float) -> None:
        if state is not None:
            self.anchor = net_from_state(state, model_config or {})
        self.anchor_coeff = float(coeff) if self.anchor is not None else 0.0

    skipped_updates: int = 0

    def apply_gradients(self, gradients_dict) -> None:
        """One finiteness check over all gradients (a fused norm), not RLlib's two passes
        per parameter (~5% of an update here); a non-finite update is skipped and counted."""
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
        logits, values = fwd_out["logits"], fwd_out["values"]
        rows, ids = fwd_out["rows"], fwd_out["ids"]
        n = values.shape[0]
        logp_all = segment_log_softmax(logits, rows, n)
        actions = batch["actions"].long()
        logp = logp_all[taken_index(rows, ids, actions)]
        adv = batch["advantages"].float()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = torch.exp(logp - batch["logp"].float())
        clip = float(config.clip_param)
        surrogate = torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv)
        policy_loss = -surrogate.mean()
        vf_loss = 0.5 * ((values - batch["value_targets"].float()) ** 2).mean()
        entropy = segment_entropy(logp_all, rows, n).mean()
        total = (
            policy_loss
            + float(config.vf_loss_coeff) * vf_loss
            - float(config.entropy_coeff) * entropy
        )
        anchor_kl = torch.zeros(())
        if self.anchor is not None and self.anchor_coeff > 0:
            with torch.no_grad():
                d = Decisions(**{k: fwd_out[k] for k in DECISION_TENSORS})
                a_logits, _ = self.anchor(d)
                a_logp = segment_log_softmax(a_logits, rows, n)
            anchor_kl = segment_sum(torch.exp(a_logp) * (a_logp - logp_all), rows, n).mean()
            total = total + self.anchor_coeff * anchor_kl
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
        ):
            self.metrics.log_value((module_id, key), float(v.detach()), window=1)
        self.metrics.log_value((module_id, "anchor_coeff"), self.anchor_coeff, window=1)
        return total


def _multi_agent(part: dict[str, np.ndarray]) -> MultiAgentBatch:
    steps = len(part["actions"])
    return MultiAgentBatch({DEFAULT_MODULE_ID: SampleBatch(part)}, env_steps=steps)


def _concat(samples: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([s[k] for s in samples]) for k in samples[0]}


class GuandanPPO(PPO):
    """PPO whose training step feeds the learner pre-batched samples (module docstring)."""

    last_info: dict[str, Any] = {}
    _queued: dict[int, int] | None = None  # runner id -> sample() requests not collected

    def training_step(self) -> None:
        group = self.env_runner_group
        remote = group.num_remote_env_runners() > 0
        t0 = time.perf_counter()
        if remote:
            # Keep every runner's queue full, so it never idles while the learner works on
            # a large batch (deals end in waves, so batches vary 2-3x). New weights reach a
            # runner after the samples already queued: at most ``runners.sample_ahead`` iterations
            # of policy lag, which the PPO ratio against the behaviour log-probs accounts for.
            self._fill_queue()
            samples, metrics = self._collect_samples()
            group.sync_weights(from_worker_or_learner_group=self.learner_group, inference_only=True)
            self._fill_queue()
        else:
            runner = group.local_env_runner
            samples = [runner.sample()]
            metrics = [runner.get_metrics()]
        t1 = time.perf_counter()
        batch = _concat(samples)
        n = int(batch["actions"].shape[0])
        # Minibatches are cut here, not by the Learner: each carries its rows' candidate
        # features, a ragged column RLlib's row slicing would cut wrongly.
        # With n remote learners (DDP) each minibatch goes out as n shards, one per learner,
        # cut at decision boundaries too; every learner must take part in every step (the
        # gradient all-reduce waits for all), so a tail of fewer than n decisions is dropped.
        n_learners = 1 if self.learner_group.is_local else len(self.learner_group)
        results = []
        for _ in range(int(self.config.num_epochs)):
            for mb in minibatches(batch, int(self.config.minibatch_size), self._rng()):
                if len(mb["actions"]) < n_learners:
                    continue
                data: dict[str, Any] = (
                    {"batch": _multi_agent(mb)}
                    if n_learners == 1
                    else {"batches": [_multi_agent(part) for part in shards(mb, n_learners)]}
                )
                results = self.learner_group.update(**data, num_epochs=1, minibatch_size=None)
        if not remote:
            group.sync_weights(from_worker_or_learner_group=self.learner_group, inference_only=True)
        learner = results[0].get(DEFAULT_MODULE_ID, {}) if results else {}
        self.last_info = {
            "env_steps": n,
            "sample_wait_s": t1 - t0,  # waiting for samples (overlapped sampling: ~0)
            "learn_s": time.perf_counter() - t1,
            "runner_metrics": metrics,
            "learner": {k: _peek(v) for k, v in learner.items()},
        }

    def _rng(self) -> np.random.Generator:
        if getattr(self, "_shuffle_rng", None) is None:
            self._shuffle_rng = np.random.default_rng([int(self.config.seed or 0), 3])
        return self._shuffle_rng

    def _fill_queue(self) -> None:
        group = self.env_runner_group
        # sample() requests kept queued per remote runner (selfplay's runners.sample_ahead)
        ahead = int(self.config.max_requests_in_flight_per_env_runner)
        if self._queued is None:
            self._queued = dict.fromkeys(group.healthy_worker_ids(), 0)
        for _ in range(ahead):
            room = [i for i, q in self._queued.items() if q < ahead]
            if not room:
                return
            # each returns its batch with the runner's metrics attached: a separate
            # get_metrics() call would wait behind the queued samples
            sent = group.foreach_env_runner_async(
                "sample", tag="sample", kwargs={"attach_metrics": True}, remote_worker_ids=room
            )
            if sent != len(room):
                raise RuntimeError(
                    f"only {sent} of {len(room)} env runners accepted a sample request (a "
                    "runner failed; see the Ray worker logs above)"
                )
            for i in room:
                self._queued[i] += 1

    def _fetch(self, tags, wait_s: float = 0.0) -> list[Any]:
        # ray.wait inside waits for *all* requests of the tag or the timeout, so a short
        # poll: with two samples queued, the first must not wait for the second
        manager = self.env_runner_group._worker_manager  # results with their errors
        res = manager.fetch_ready_async_reqs(tags=tags, timeout_seconds=wait_s)
        for r in res:
            if not r.ok:
                raise RuntimeError(f"an env runner failed: {r.get()}")
            if tags == "sample":
                self._queued[r.actor_id] -= 1
            else:
                self._league_busy = self._league_busy - {r.actor_id}
        return [r.get() for r in res]

    def _collect_samples(self) -> tuple[list[dict[str, np.ndarray]], list[dict[str, Any]]]:
        """At least one finished ``sample()`` per remote runner (more if ready), and the
        metrics attached to them (errors re-raised)."""
        group = self.env_runner_group
        want = group.num_remote_env_runners()  # as many as runners, from any of them
        deadline = time.monotonic() + float(self.config.sample_timeout_s)
        samples: list[dict[str, np.ndarray]] = []
        while len(samples) < want:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"env runners returned {len(samples)} of {want} samples within "
                    f"{self.config.sample_timeout_s} s"
                )
            self._fetch("league")  # league updates queued behind samples: errors only
            self._send_league()  # a newer league to runners done with the last one
            samples.extend(self._fetch("sample", wait_s=0.005))
        metrics = [s.pop(ATTACHED_METRICS) for s in samples]
        return samples, metrics

    def push_league(self, members: list[tuple[str, dict]]) -> None:
        """New league for every runner, queued behind its pending samples (never during
        one, and without waiting for them). A runner still busy with an older league update
        gets the newest one when that is done (``_send_league`` each iteration): members
        supersede each other, so none is lost that matters."""
        group = self.env_runner_group
        if group.num_remote_env_runners() == 0:
            group.local_env_runner.set_league(members)
            return
        self._league_ref = ray.put(members)
        self._league_todo = set(group.healthy_worker_ids())
        self._send_league()

    _league_ref: Any = None
    _league_todo: set[int] = set()  # runners that still need the newest league
    _league_busy: set[int] = set()  # runners with a league update not yet collected

    def _send_league(self) -> None:
        ready = sorted(self._league_todo - self._league_busy)
        if not ready:
            return
        ref = self._league_ref
        sent = self.env_runner_group.foreach_env_runner_async(
            lambda runner: runner.set_league(ray.get(ref)), tag="league", remote_worker_ids=ready
        )
        if sent != len(ready):
            raise RuntimeError(f"only {sent} of {len(ready)} env runners accepted the league")
        self._league_busy = self._league_busy | set(ready)
        self._league_todo = self._league_todo - set(ready)

    def stop_sampling(self) -> None:
        """Wait for (and drop) the queued samples, e.g. before inspecting runners in tests
        (a run's shutdown stops the runners without waiting)."""
        deadline = time.monotonic() + float(self.config.sample_timeout_s)
        while self._queued and any(self._queued.values()) and time.monotonic() < deadline:
            self._fetch("sample", wait_s=0.05)
        self._fetch("league")
        self._queued = None


def _peek(v: Any) -> Any:
    if hasattr(v, "peek"):
        return v.peek()
    return v
