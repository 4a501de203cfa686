"""The declared bounds (``guandan_env.envs.testing.BOUNDS``) hold under random play on every
engine: ``engine.Game``, the AEC env and the vector env (R-1.1, R-5, R-6.3, R-7)."""

import numpy as np
import pytest

from guandan_env.envs.testing import BOUNDS, ENGINES, check_random_play


@pytest.mark.parametrize("engine", ENGINES)
def test_random_play_stays_within_the_declared_bounds(engine):
    out = check_random_play(engine, deals=30, seed=3)
    assert out["deals"] >= 30


def test_bounds_are_the_game_s_numbers():
    assert BOUNDS.cards_per_deal == 4 * 27
    assert BOUNDS.max_decisions_per_deal == 4 * 108 + 2


def test_a_violation_names_itself():
    from guandan_env.envs.testing import check_deal_rewards, check_observation

    with pytest.raises(AssertionError, match="zero-sum"):
        check_deal_rewards([2, -1, 2, -1], "here")
    with pytest.raises(AssertionError, match=r"outside \[0.0, 1.0\]"):
        check_observation(np.full(BOUNDS.obs_dim, 1.5, np.float32), "here")
    with pytest.raises(ValueError, match="engine must be one of"):
        check_random_play("openspiel", deals=1)
