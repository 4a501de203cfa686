"""The RLlib algorithm of a self-play run: ``GuandanPPO``, its config, and a quiet Ray start.

* ``GuandanPPO``: PPO with its own ``training_step``. Samples come from the
  ``VectorEnvRunner``s already carrying advantages (GAE in the runner), so they go straight
  to ``learner_group.update(batch=…, timesteps=…)`` (no learner connector; the sampled-steps
  count drives RLlib's own ``lr`` / ``entropy_coeff`` schedules). With remote runners the
  next ``sample()`` is in flight while the learner updates, so sampling and learning overlap
  on separate cores. A decision reaches the learner when its deal ends, so it was acted
  with weights ~4-6 iterations old (a deal spans ~5 ``sample()`` calls of 20 lockstep steps,
  plus the queue); the PPO ratio is taken against the acting log-probability, so the
  gradient stays right, and clipping drops what moved too far (``clip_frac``, 3-8%).
* ``build_algo_config``: ``GuandanPPO`` + ``VectorEnvRunner`` + the candidate module, with
  learners and runners as the run config says.
"""

from __future__ import annotations

import logging
import math
import os
import time
from typing import Any

import numpy as np
import ray
from ray.rllib.algorithms.ppo import PPO
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME, WEIGHTS_SEQ_NO

from experiments.selfplay.config import RayConfig, RunConfig, runner_config
from experiments.selfplay.rllib.env_runner import ATTACHED_METRICS, minibatches, shards

# RLlib's actor manager caps the requests in flight per runner and per tag, and drops the
# ones over the cap without a word. ``sample()`` requests are kept at runners.sample_ahead by
# ``_fill_queue`` itself; the cap is set this much higher so that weight updates (one per
# iteration, queued behind a runner's samples: a slow idle runner holds 3-4) are never
# dropped, which would leave the runner acting with weights older than it could have
WEIGHT_SYNCS_IN_FLIGHT = 8
LAG_HISTORY = 1024  # iterations of learner versions kept to date a runner's weights


def _multi_agent(part: dict[str, np.ndarray]) -> MultiAgentBatch:
    steps = len(part["actions"])
    return MultiAgentBatch({DEFAULT_MODULE_ID: SampleBatch(part)}, env_steps=steps)


def _concat(samples: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([s[k] for s in samples]) for k in samples[0]}


class GuandanPPO(PPO):
    """PPO whose training step feeds the learner pre-batched samples (module docstring)."""

    last_info: dict[str, Any] = {}
    # the schedules' clock: learner samples so far plus the confident decisions kept out of
    # them (the trainer sets it on resume)
    samples_lifetime: int = 0
    _queued: dict[int, int] | None = None  # runner id -> sample() requests not collected
    # the local learner's weights version after each iteration (RLlib's weights sequence
    # number), oldest first: dates the weights a sample was acted with
    _versions: list[int] | None = None
    # while set, no new sample() requests go to the idle runners (the trainer sets it while
    # an in-run evaluation is overdue, so the two stop sharing the leftover CPU)
    hold_idle_runners: bool = False

    def training_step(self) -> None:
        group = self.env_runner_group
        remote = group.num_remote_env_runners() > 0
        t0 = time.perf_counter()
        if remote:
            # Keep every runner's queue full, so it never idles while the learner works on
            # a large batch (deals end in waves, so batches vary 2-3x). New weights reach a
            # runner after the samples already queued (each sample() acts with the weights
            # sent before it was queued, or newer): ``runners.sample_ahead`` sample periods
            # of policy lag (progress.csv's policy_lag), which the PPO ratio against the
            # behaviour log-probs accounts for.
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
        # gradient all-reduce waits for all), so a pass of fewer than n decisions is dropped.
        n_learners = 1 if self.learner_group.is_local else len(self.learner_group)
        # the learner's schedules (lr, entropy, anchor) read the samples seen, this batch's
        # included, as RLlib's own PPO counts them; decisions kept out as confident
        # (runners.skip_confident) count too: the schedules follow the play, not the pruning
        confident = sum(int(m.get("num_confident_steps", 0)) for m in metrics)
        self.samples_lifetime += n + confident
        timesteps = {NUM_ENV_STEPS_SAMPLED_LIFETIME: self.samples_lifetime}
        lags = self._policy_lags(metrics)
        results = []
        # ppo.num_epochs may hold a fraction (RLlib's own num_epochs is its ceiling)
        epochs = float(self.config.learner_config_dict.get("epochs", self.config.num_epochs))
        for mb in minibatches(batch, int(self.config.minibatch_size), self._rng(), epochs):
            if len(mb["actions"]) < n_learners:
                continue
            data: dict[str, Any] = (
                {"batch": _multi_agent(mb)}
                if n_learners == 1
                else {"batches": [_multi_agent(part) for part in shards(mb, n_learners)]}
            )
            results = self.learner_group.update(
                **data, timesteps=timesteps, num_epochs=1, minibatch_size=None
            )
        if not remote:
            group.sync_weights(from_worker_or_learner_group=self.learner_group, inference_only=True)
        self._record_version()
        learner = results[0].get(DEFAULT_MODULE_ID, {}) if results else {}
        self.last_info = {
            "env_steps": n,
            "confident_steps": confident,  # played, kept out of the samples (skip_confident)
            "sample_wait_s": t1 - t0,  # waiting for samples (overlapped sampling: ~0)
            "learn_s": time.perf_counter() - t1,
            "runner_metrics": metrics,
            "policy_lags": lags,  # per sample (None without a local learner)
            "learner": {k: _peek(v) for k, v in learner.items()},
        }

    def _learner_version(self) -> int | None:
        """The local learner's weights sequence number (what ``sync_weights`` sends), or
        None with remote learners."""
        learner = getattr(self.learner_group, "_learner", None)
        return None if learner is None else int(getattr(learner, "_weights_seq_no", 0))

    def _record_version(self) -> None:
        version = self._learner_version()
        if version is None:
            return
        if self._versions is None:
            self._versions = []
        self._versions.append(version)
        del self._versions[:-LAG_HISTORY]

    def _policy_lags(self, metrics: list[dict[str, Any]]) -> list[int | None]:
        """Per sample: the iterations of updates its runner's weights lacked when it was
        collected (0: the newest weights; the last sample() call's decisions only, a deal's
        earlier ones are older)."""
        versions = self._versions or []
        if self._learner_version() is None:
            return [None] * len(metrics)
        # versions are ascending: the count of those newer than the runner's is its lag
        return [
            len(versions) - int(np.searchsorted(versions, int(m.get(WEIGHTS_SEQ_NO, 0)), "right"))
            for m in metrics
        ]

    def _rng(self) -> np.random.Generator:
        if getattr(self, "_shuffle_rng", None) is None:
            self._shuffle_rng = np.random.default_rng([int(self.config.seed or 0), 3])
        return self._shuffle_rng

    @property
    def _idle_from(self) -> int:
        """The first idle runner's worker index (``runners.idle``), 0 without idle runners."""
        return int(self.config.env_config.get("idle_from") or 0)

    def _fill_queue(self) -> None:
        group = self.env_runner_group
        # sample() requests kept queued per remote runner (selfplay's runners.sample_ahead)
        ahead = int(self.config.env_config["sample_ahead"])
        if self._queued is None:
            self._queued = dict.fromkeys(group.healthy_worker_ids(), 0)
        idle_from = self._idle_from
        held = idle_from if self.hold_idle_runners and idle_from else None
        for _ in range(ahead):
            room = [i for i, q in self._queued.items() if q < ahead and (held is None or i < held)]
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
        """As many finished ``sample()`` calls as there are main runners, from any runner
        (more if ready), and the metrics attached to them (errors re-raised)."""
        group = self.env_runner_group
        # as many as the runners at normal priority, from any runner: idle runners
        # (runners.idle, the highest worker indices) add their samples when they have some
        idle_from = self._idle_from
        want = idle_from - 1 if idle_from else group.num_remote_env_runners()
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


def quiet_ray_env() -> None:
    """Environment for a quiet Ray start (no usage stats, auth prompts or log walls)."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_DEDUP_LOGS", "1")
    os.environ.setdefault("RAY_DISABLE_IMPORT_WARNING", "1")
    os.environ.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")


def init_ray(rc: RayConfig) -> None:
    quiet_ray_env()
    import ray

    logging.getLogger("ray").setLevel(logging.ERROR)
    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.ERROR}
    if rc.address:
        ray.init(address=rc.address, **kwargs)
    else:
        # the raylet reads it when it starts the instance, and starts every worker with it
        os.environ["RAY_worker_niceness"] = str(int(rc.worker_niceness))
        ray.init(
            address="local",  # a new instance, even if `ray start` ran on this machine
            num_cpus=rc.num_cpus,
            object_store_memory=rc.object_store_mb * 2**20,
            **kwargs,
        )


def build_algo_config(cfg: RunConfig):
    """The RLlib config of a run (``GuandanPPO`` + ``VectorEnvRunner`` + candidate module)."""
    import gymnasium as gym
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from experiments.selfplay.rllib.env_runner import VectorEnvRunner
    from experiments.selfplay.rllib.learner import CandidatePPOLearner, CandidatePPOModule
    from guandan_env.core.actions import NUM_ACTIONS
    from guandan_env.encoding.observation import OBS_DIM

    r, p = cfg.runners, cfg.ppo
    num = r.num + r.idle  # the idle runners have the highest worker indices
    obs_space = gym.spaces.Box(0.0, 1.0, (OBS_DIM,), np.float32)
    config = (
        PPOConfig(algo_class=GuandanPPO)
        .environment(
            env=None,
            observation_space=obs_space,
            action_space=gym.spaces.Discrete(NUM_ACTIONS),
            env_config=runner_config(cfg),
            disable_env_checking=True,
        )
        .env_runners(
            env_runner_cls=VectorEnvRunner,
            num_env_runners=num,
            num_cpus_per_env_runner=1 if num else 0,
            sample_timeout_s=600.0,
            # per tag: sample() requests (kept at sample_ahead by _fill_queue), weight and
            # league updates
            max_requests_in_flight_per_env_runner=r.sample_ahead + WEIGHT_SYNCS_IN_FLIGHT,
        )
        # a failed runner stops the run with its error (no silent restart; this also keeps
        # Ray from warning about restartable actors at every start)
        .fault_tolerance(restart_failed_env_runners=False)
        .learners(
            learner_class=CandidatePPOLearner,
            learner_config_dict={
                "anchor_coeff": cfg.anchor.coeff.to_plain(),
                "epochs": p.num_epochs,
            },
            num_learners=cfg.learners.num,
            num_cpus_per_learner=cfg.learners.cpus_each,
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=CandidatePPOModule,
                model_config=dict(cfg.model, heads=cfg.critic.as_dict()),
            )
        )
        .training(
            lr=p.lr.to_plain(),
            gamma=p.gamma,
            lambda_=p.lambda_,
            train_batch_size_per_learner=r.steps_per_call * r.tables * max(r.num, 1),
            minibatch_size=p.minibatch_size,
            num_epochs=math.ceil(p.num_epochs),
            clip_param=p.clip_param,
            vf_loss_coeff=p.vf_loss_coeff,
            entropy_coeff=p.entropy_coeff.to_plain(),
            use_kl_loss=False,
            grad_clip=p.grad_clip,
        )
        .reporting(metrics_num_episodes_for_smoothing=1)
        .debugging(seed=cfg.seed, log_level="ERROR")
    )
    # The runners have no connector states to merge; RLlib's sync of them after each step
    # would wait for the in-flight sample and undo the overlap of sampling and learning.
    config._dont_auto_sync_env_runner_states = True
    return config
