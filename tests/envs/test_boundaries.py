"""Every public boundary takes what it documents or raises one ``ValueError`` that names the
problem, and a refused call changes nothing (the state pickles to the same bytes): the AEC
env (config, ``reset`` seeds and scenario options, ``step``), the vector env, the text API
and the single-agent wrapper. Regression tests for issue 12's faults are marked "fault".
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import guandan_env
from guandan_env import VectorGuandanEnv
from guandan_env.core import actions as T
from guandan_env.core.text import cards_for_action, declaration_text, describe_action, legal_actions
from guandan_env.envs.aec import raw_env
from guandan_env.envs.wrappers import SingleAgentEnv


def env_state(e: raw_env) -> bytes:
    """Everything a refused call must leave as it was."""
    return pickle.dumps(
        (
            e.game,
            e._episode_rng.bit_generator.state,
            e.rewards,
            e._cumulative_rewards,
            e.terminations,
            e.truncations,
            e.agents,
            e.agent_selection,
            e.log,
        )
    )


def random_legal(e, rng) -> int:
    return int(rng.choice(np.flatnonzero(e.action_mask())))


# ------------------------------------------------------------------ faults (issue 12)
def test_fault_a_refused_step_keeps_the_pending_deal_reward_in_match_mode():
    """R-6.3 rewards of a finished deal stay readable through ``last()`` after a refused
    step (they used to be zeroed before the action was checked)."""
    e = guandan_env.env(mode="match")
    e.reset(seed=3)
    raw = e.unwrapped
    rng = np.random.default_rng(0)
    while "deal_result" not in raw.infos[raw.agent_selection]:
        e.step(random_legal(raw, rng))
    before = e.last()[1]
    assert before != 0
    state = env_state(raw)
    for bad in (T.NUM_ACTIONS, -5, 0.5, "0", [1], None):
        with pytest.raises(ValueError):
            e.step(bad)
        assert e.last()[1] == before
        assert env_state(raw) == state


def test_fault_a_refused_reset_does_not_advance_the_episode_rng():
    a, b = raw_env(), raw_env()
    a.reset(seed=11)
    b.reset(seed=11)
    for bad in ({"levels": ["Z", "2"]}, {"level": ["2", "2"]}, {"hands": None}, "abc"):
        with pytest.raises(ValueError):
            b.reset(options=bad)
    with pytest.raises(ValueError):
        b.reset(seed=1.5)
    a.reset()
    b.reset()
    assert np.array_equal(a.game.hands, b.game.hands)
    assert a.game.seed == b.game.seed


# ------------------------------------------------------------------ AEC env: table of inputs
BAD_CONFIGS = [
    {"max_deals": 2.5},
    {"max_deals": 0},
    {"max_deals": True},
    {"random_levels": "no"},
    {"random_tribute": 1},
    {"match_win_bonus": "abc"},
    {"match_win_bonus": float("nan")},
    {"illegal_penalty": None},
    {"info_view": "yes"},
    {"mode": "tournament"},
    {"levl": 3},
]


@pytest.mark.parametrize("config", BAD_CONFIGS, ids=[str(c) for c in BAD_CONFIGS])
def test_bad_env_config_is_a_value_error(config):
    for make in (raw_env, guandan_env.env, lambda **c: VectorGuandanEnv(2, **c)):
        with pytest.raises(ValueError):
            make(**config)


BAD_OPTIONS = [
    {"leader": 1.5},
    {"leader": 4},
    {"leader": True},
    {"previous_order": [0, 1, 2, 3.7]},
    {"previous_order": []},
    {"previous_order": [0, 0, 1, 2]},
    {"previous_order": "0123"},
    {"leveling_team": True},
    {"leveling_team": 2},
    {"hands": None},
    {"hands": ["S3", "S4", "S5"]},
    {"hands": ["S3", "S4", "S5", 7]},
    {"hands": ["S3", "S4", "S5", {"S6": 1}]},
    {"hands": ["S3 S3 S3", "", "", ""]},
    {"levels": None},
    {"levels": ["2"]},
    {"levels": [2, 3]},
    {"levels": ["Z", "2"]},
    {"a_failures": [3, 0]},
    {"a_failures": [0.5, 0]},
    {"level": ["2", "2"]},  # a typo of "levels": an error, not a warning
    "abc",
    [("levels", ["2", "2"])],
]


@pytest.mark.parametrize("options", BAD_OPTIONS, ids=[repr(o) for o in BAD_OPTIONS])
def test_bad_reset_options_are_refused_and_change_nothing(options):
    e = raw_env()
    e.reset(seed=5)
    state = env_state(e)
    with pytest.raises(ValueError):
        e.reset(options=options)
    assert env_state(e) == state
    v = VectorGuandanEnv(2, seed=0)
    with pytest.raises(ValueError):
        v.reset(options=options)


def test_api_test_probe_option_is_accepted():
    """PettingZoo's ``api_test`` resets with ``{"options": 1}``; that exact probe is
    ignored, any other unknown key is an error."""
    e = raw_env()
    e.reset(seed=0, options={"options": 1})
    with pytest.raises(ValueError, match="unknown reset option"):
        e.reset(seed=0, options={"options": 2})


@pytest.mark.parametrize("seed", [1.5, "abc", -1, True, [1, 2]])
def test_bad_seeds_are_value_errors(seed):
    e = raw_env()
    e.reset(seed=0)
    state = env_state(e)
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed=seed)
    assert env_state(e) == state


@pytest.mark.parametrize("action", [0.5, 1.0, "0", True, None, [1], object(), float("inf"), -1])
def test_non_integer_actions_raise_or_are_penalised(action):
    e = raw_env()
    e.reset(seed=0)
    state = env_state(e)
    with pytest.raises(ValueError, match="action"):
        e.step(action)
    assert env_state(e) == state
    p = raw_env(illegal_action="penalize", illegal_penalty=-2.0)
    p.reset(seed=0)
    agent = p.agent_selection
    p.step(action)  # a penalty, never a TypeError
    assert p.rewards[agent] == -2.0 and all(p.terminations.values())


def test_use_before_reset_and_after_the_end_are_clear_errors():
    e = raw_env()
    for call in (lambda: e.step(0), lambda: e.last(), lambda: e.observe("player_0")):
        with pytest.raises(ValueError, match="reset"):
            call()
    w = guandan_env.env()
    w.reset(seed=1)
    rng = np.random.default_rng(1)
    while w.agents:
        obs, _, term, trunc, _ = w.last()
        w.step(None if term or trunc else random_legal(w.unwrapped, rng))
    with pytest.raises(ValueError, match="episode is over"):
        w.last()
    with pytest.raises(ValueError, match="episode is over"):
        w.step(0)
    with pytest.raises(ValueError, match="unknown agent"):
        w.unwrapped.observe("player_9")


# ------------------------------------------------------------------ vector env
@pytest.mark.parametrize("n", [2.5, True, 0, 10**12, "4"])
def test_vector_table_count_is_checked(n):
    with pytest.raises(ValueError, match="num_tables"):
        VectorGuandanEnv(n)


@pytest.mark.parametrize(
    "actions",
    [
        np.zeros(3, dtype=np.float64),
        np.array(["0", "0", "0"]),
        np.zeros(3, dtype=bool),
        np.zeros((3, 1), dtype=np.int64),
        np.zeros(2, dtype=np.int64),
    ],
    ids=["float", "str", "bool", "column", "short"],
)
def test_vector_actions_must_be_an_integer_array_of_one_per_table(actions):
    v = VectorGuandanEnv(3, seed=0)
    v.reset()
    hands = v.state.hands.copy()
    with pytest.raises(ValueError, match="actions"):
        v.step(actions)
    assert np.array_equal(v.state.hands, hands)


# ------------------------------------------------------------------ text API
def test_the_four_text_helpers_take_level_text():
    a = legal_actions("S3 S3", "2")[-1]
    assert declaration_text(a, "2") == "pair 33"
    assert describe_action(a, "2")["kind"] == "pair"
    assert cards_for_action("S3 S3", "2", a) == ["S3", "S3"]
    for bad_level in (0, 16, -1, None, "Z", 2.0):
        for call in (
            lambda lv: declaration_text(a, lv),
            lambda lv: describe_action(a, lv),
            lambda lv: cards_for_action("S3 S3", lv, a),
            lambda lv: legal_actions("S3 S3", lv),
        ):
            with pytest.raises(ValueError, match="R-2.1"):
                call(bad_level)


@pytest.mark.parametrize("bad", [1.0, 1.5, True, "1", None, [1], float("inf"), -1, T.NUM_ACTIONS])
def test_action_ids_of_the_text_api_are_checked(bad):
    for call in (
        lambda: declaration_text(bad, "2"),
        lambda: describe_action(bad, "2"),
        lambda: cards_for_action("S3", "2", bad),
        lambda: (
            legal_actions("S3", "2", last=bad) if bad is not None else declaration_text(bad, "2")
        ),
    ):  # last=None means leading: legal
        with pytest.raises(ValueError, match="action"):
            call()


@pytest.mark.parametrize("hand", [None, 3, {"S3": 1}, b"S3", ["S3", 4]])
def test_hands_must_be_card_text(hand):
    with pytest.raises(ValueError, match="R-1.4"):
        legal_actions(hand, "2")


def test_single_agent_env_refuses_an_agent_spec_up_front():
    with pytest.raises(ValueError, match="make_agent"):
        SingleAgentEnv(0, {1: "heuristic"})
    with pytest.raises(ValueError, match="learner_seat"):
        SingleAgentEnv(1.5)


# ------------------------------------------------------------------ properties
ANY_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
OPTION_KEYS = st.sampled_from(
    ["hands", "levels", "leveling_team", "previous_order", "leader", "a_failures", "other"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=st.dictionaries(OPTION_KEYS, ANY_VALUE, max_size=3), seed=ANY_VALUE)
def test_reset_works_or_refuses_without_change(options, seed):
    e = raw_env()
    e.reset(seed=0)
    state = env_state(e)
    try:
        e.reset(seed=seed, options=options)
    except ValueError:
        assert env_state(e) == state
    else:
        assert e.agent_selection in e.agents  # a playable deal


@settings(max_examples=300, deadline=None)
@given(action=ANY_VALUE, level=ANY_VALUE)
def test_text_helpers_answer_or_refuse(action, level):
    try:
        text = declaration_text(action, level)
    except ValueError:
        return
    assert isinstance(text, str) and isinstance(level, str)


@settings(max_examples=200, deadline=None)
@given(action=ANY_VALUE)
def test_step_works_or_refuses_without_change(action):
    e = raw_env()
    e.reset(seed=2)
    state = env_state(e)
    try:
        e.step(action)
    except ValueError:
        assert env_state(e) == state
    else:
        assert isinstance(action, int) and e.action_mask is not None
