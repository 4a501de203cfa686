"""Shared by the self-play tests: a small network config and running Ray in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from helpers import REPO

SMALL_MODEL = {"trunk": [32, 32], "cand": [16]}


def run_python(script: str, args: list[str], timeout: int) -> str:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # one process group: a hang is killed with its Ray workers
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"exceeded {timeout} s:\n{out[-3000:]}")
    assert proc.returncode == 0, out[-5000:]
    return out


def local_runner(seed: int, **overrides):
    """A ``VectorEnvRunner`` in this process: 16 small tables, ``overrides`` of its config."""
    import gymnasium as gym
    import numpy as np
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig

    from experiments.selfplay.rllib.env_runner import VectorEnvRunner
    from guandan_env.core.actions import NUM_ACTIONS
    from guandan_env.encoding.observation import OBS_DIM

    env_config = {"tables": 16, "steps_per_call": 40, "seed": seed, "model": SMALL_MODEL}
    env_config.update(overrides)
    config = PPOConfig().environment(
        observation_space=gym.spaces.Box(0, 1, (OBS_DIM,), np.float32),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        env_config=env_config,
    )
    torch.manual_seed(0)  # equal initial weights for the two runners compared
    return VectorEnvRunner(config=config, worker_index=0)
