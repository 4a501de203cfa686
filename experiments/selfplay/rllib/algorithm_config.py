"""The RLlib side of a self-play run: a quiet Ray start and the algorithm config
(``GuandanPPO`` + ``VectorEnvRunner`` + the candidate module, learners and runners as the
run config says)."""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np

from experiments.selfplay_config import RayConfig, RunConfig, runner_config


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

    from experiments.candidate_ppo import CandidatePPOLearner, CandidatePPOModule, GuandanPPO
    from experiments.vector_runner import VectorEnvRunner
    from guandan_env.core.actions import NUM_ACTIONS
    from guandan_env.encoding.observation import OBS_DIM

    r, p = cfg.runners, cfg.ppo
    num = r.num
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
            # sample() requests queued per runner, plus a weights and a league update
            max_requests_in_flight_per_env_runner=r.sample_ahead,
        )
        # a failed runner stops the run with its error (no silent restart; this also keeps
        # Ray from warning about restartable actors at every start)
        .fault_tolerance(restart_failed_env_runners=False)
        .learners(
            learner_class=CandidatePPOLearner,
            num_learners=cfg.learners.num,
            num_cpus_per_learner=cfg.learners.cpus_each,
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=CandidatePPOModule, model_config=dict(cfg.model)
            )
        )
        .training(
            lr=p.lr,
            gamma=p.gamma,
            lambda_=p.lambda_,
            train_batch_size_per_learner=r.steps_per_call * r.tables * max(num, 1),
            minibatch_size=p.minibatch_size,
            num_epochs=p.num_epochs,
            clip_param=p.clip_param,
            vf_loss_coeff=p.vf_loss_coeff,
            entropy_coeff=p.entropy_coeff,
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
