"""Policy lag of the samples (``policy_lag``, ``idle_policy_lag`` in progress.csv) and the
room left for weight updates in RLlib's per-runner request cap (a weight update over the
cap would be dropped without a word, leaving a runner with older weights than it could
have)."""

from __future__ import annotations

from types import SimpleNamespace

from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

from experiments.selfplay.config import load_config, runner_config
from experiments.selfplay.rllib.algorithm import (
    LAG_HISTORY,
    WEIGHT_SYNCS_IN_FLIGHT,
    GuandanPPO,
    build_algo_config,
)
from experiments.selfplay.trainer import _mean_lag


def _algo(version: int | None) -> GuandanPPO:
    """A ``GuandanPPO`` with only what the lag bookkeeping reads: a local learner at
    weights version ``version`` (None: remote learners)."""
    algo = GuandanPPO.__new__(GuandanPPO)
    learner = None if version is None else SimpleNamespace(_weights_seq_no=version)
    algo.learner_group = SimpleNamespace(_learner=learner)
    return algo


def test_a_samples_lag_counts_the_iterations_its_weights_lack():
    algo = _algo(0)
    # iterations of 7 minibatch updates each: versions 7, 14, 21 after them
    for v in (7, 14, 21):
        algo.learner_group._learner._weights_seq_no = v
        algo._record_version()
    assert algo._versions == [7, 14, 21]
    samples = [{WEIGHTS_SEQ_NO: v} for v in (21, 14, 7, 0)]
    # the newest weights: 0; one iteration behind: 1; the first weights: all three
    assert algo._policy_lags(samples) == [0, 1, 2, 3]


def test_the_version_history_is_bounded_and_remote_learners_give_no_lag():
    algo = _algo(0)
    for v in range(1, LAG_HISTORY + 11):
        algo.learner_group._learner._weights_seq_no = v
        algo._record_version()
    assert len(algo._versions) == LAG_HISTORY and algo._versions[-1] == LAG_HISTORY + 10
    remote = _algo(None)
    remote._record_version()
    assert remote._versions is None
    assert remote._policy_lags([{WEIGHTS_SEQ_NO: 3}, {}]) == [None, None]


def test_the_mean_lag_is_taken_over_the_main_or_the_idle_runners_samples():
    metrics = [{"idle": False}, {"idle": True}, {"idle": False}, {"idle": True}]
    assert _mean_lag([1, 4, 3, 6], metrics, idle=False) == 2.0
    assert _mean_lag([1, 4, 3, 6], metrics, idle=True) == 5.0
    assert _mean_lag([None] * 4, metrics, idle=True) is None
    assert _mean_lag([2], [{"idle": False}], idle=True) is None  # no idle sample this time


def test_weight_updates_have_room_beside_the_queued_samples():
    for ahead in (1, 2, 5):
        cfg = load_config(None, [f"runners.sample_ahead={ahead}"])
        config = build_algo_config(cfg)
        # the driver keeps sample_ahead sample() calls queued itself ...
        assert runner_config(cfg)["sample_ahead"] == ahead
        # ... and RLlib's cap per tag leaves weight updates room to pile up behind them
        assert config.max_requests_in_flight_per_env_runner == ahead + WEIGHT_SYNCS_IN_FLIGHT
        assert WEIGHT_SYNCS_IN_FLIGHT >= 4
