"""Bad input is refused with a ``ValueError`` that says what is wrong (and cites the rule),
and leaves the state unchanged: card text (R-1.4), impossible hands and deals (R-1.2),
level text (R-2.1), action ids, illegal actions through ``Game.step`` and the AEC env
(R-3, R-5.1, R-5.2, R-7.1), the ``penalize`` mode, env config and scenario options.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import guandan_env
from guandan_env.core import actions as T
from guandan_env.core.cards import parse_card, parse_hand, parse_rank
from guandan_env.core.engine import Game
from guandan_env.core.illegal import IllegalActionError
from guandan_env.core.text import cards_for_action, describe_action, legal_actions
from guandan_env.envs.aec import raw_env
from helpers.rules import action_for, hands_array, make_game, play


def natural_id(kind: int, rank: str) -> int:
    """Id of the wildcard-free single or pair of a natural rank."""
    r = "23456789TJQKA".index(rank)
    return next(
        a for a in range(T.NUM_ACTIONS) if T.KIND[a] == kind and T.KEY[a] == r and T.WILDS[a] == 0
    )


def snapshot(g: Game) -> tuple:
    return (
        g.hands.tobytes(),
        g.played.tobytes(),
        g.to_act,
        g.phase,
        g.table_action,
        g.table_seat,
        g.passes,
        list(g.history),
        list(g.finish_order),
        [(t.giver, t.receiver, t.face, t.returned) for t in g.tributes],
        list(g.pending_returns),
        list(g.move_in_trick),
        list(g.levels),
    )


# ------------------------------------------------------------------ card text
@pytest.mark.parametrize(
    "text", ["X3", "S1", "S11", "S", "H", "", "10", "SS", "BJJ", "B", "J", "S0", "♥", "5H", "SB"]
)
def test_r1_4_malformed_card_text(text):
    """R-1.4: malformed cards are refused, with the notation and rule in the message."""
    with pytest.raises(ValueError, match="R-1.4"):
        parse_card(text)


def test_r1_4_malformed_card_in_a_hand():
    """R-1.4: one bad token spoils the hand text."""
    with pytest.raises(ValueError, match="'Z9'"):
        parse_hand("S3 Z9 H4")


def test_r1_2_third_copy_of_a_face():
    """R-1.2: the deck holds two copies of each face."""
    with pytest.raises(ValueError, match="R-1.2"):
        parse_hand("S3 S3 S3")
    with pytest.raises(ValueError, match="R-1.2"):
        parse_hand("RJ RJ ♠3 rj")


def test_r1_2_more_than_27_cards():
    """R-1.2: a seat holds at most 27 cards."""
    deck = [s + r for s in "SHCD" for r in "23456789TJQKA"]
    assert parse_hand(deck[:27]).sum() == 27
    with pytest.raises(ValueError, match="R-1.2"):
        parse_hand(deck[:28])


def test_r1_2_impossible_deals():
    """R-1.2: the four hands together hold at most two of each face and 27 per seat."""
    g = Game.new(seed=0)
    with pytest.raises(ValueError, match="R-1.2"):
        g.start_deal(hands=hands_array(["S3 S3", "S3", "S4", "S5"]))
    g = Game.new(seed=0)
    too_many = np.zeros((4, 54), dtype=np.uint8)
    too_many[0, :14] = 2  # 28 cards
    with pytest.raises(ValueError, match="R-1.2"):
        g.start_deal(hands=too_many)
    with pytest.raises(ValueError, match="shape"):
        Game.new(seed=0).start_deal(hands=np.zeros((3, 54), dtype=np.uint8))
    with pytest.raises(ValueError, match="empty"):
        Game.new(seed=0).start_deal(hands=np.zeros((4, 54), dtype=np.uint8))


def test_r6_1_bad_previous_order_and_leader():
    """R-6.1: a previous finishing order lists the four seats; a leader is a seat."""
    hands = hands_array(["S3", "S4", "S5", "S6"])
    for order in ([0, 1, 2], [0, 0, 1, 2], [0, 1, 2, 4]):
        with pytest.raises(ValueError, match="R-6.1"):
            Game.new(seed=0).start_deal(hands=hands, previous_order=order)
    with pytest.raises(ValueError, match="leader"):
        Game.new(seed=0).start_deal(hands=hands, leader=4)


# ------------------------------------------------------------------ level text
@pytest.mark.parametrize("text", ["1", "0", "11", "B", "", "AA", "BJ", "14", "S5"])
def test_r2_1_bad_level_text(text):
    """R-2.1: levels are 2 … A (``10`` accepted)."""
    with pytest.raises(ValueError, match="R-2.1"):
        parse_rank(text)


def test_r2_1_bad_level_through_api_and_env():
    """R-2.1: the text API and the env's scenario options refuse bad levels."""
    with pytest.raises(ValueError, match="R-2.1"):
        legal_actions("S3", "1")
    with pytest.raises(ValueError, match="R-2.1"):
        describe_action(1, "Z")
    e = raw_env()
    with pytest.raises(ValueError, match="R-2.1"):
        e.reset(seed=0, options={"levels": ["5", "X"]})
    with pytest.raises(ValueError, match="levels"):
        e.reset(seed=0, options={"levels": ["5"]})


# ------------------------------------------------------------------ action ids
@pytest.mark.parametrize("bad", [-1, T.NUM_ACTIONS, T.NUM_ACTIONS + 100, 10**9])
def test_out_of_range_action_id(bad):
    """R-3 (DESIGN action space): ids are 0 … NUM_ACTIONS-1; ``Game.step``, the text API and
    the raw env refuse others and name them; nothing changes."""
    g = make_game(["S3 S4", "S5", "S6", "S7"], leader=0)
    before = snapshot(g)
    with pytest.raises(ValueError, match=str(bad)):
        g.step(bad)
    assert snapshot(g) == before
    with pytest.raises(ValueError, match="out of range"):
        describe_action(bad, "2")
    with pytest.raises(ValueError):
        cards_for_action("S3", "2", bad)
    e = raw_env()
    e.reset(seed=0)
    before = snapshot(e.game)
    with pytest.raises(ValueError, match=rf"{bad}.*seat {e.game.to_act}"):
        e.step(bad)
    assert snapshot(e.game) == before


def test_out_of_range_action_id_wrapped_env():
    """R-3 (DESIGN action space): the wrapped env (PettingZoo's bounds check) refuses an
    out-of-range id before the engine sees it; the state is unchanged."""
    e = guandan_env.env()
    e.reset(seed=0)
    before = snapshot(e.unwrapped.game)
    with pytest.raises((AssertionError, ValueError)):
        e.step(T.NUM_ACTIONS)
    assert snapshot(e.unwrapped.game) == before


# ------------------------------------------------------------------ illegal actions
def illegal_cases():
    """(game, action, rule id, reason) tuples: each action is illegal for the seat to act."""
    cases = []
    g = make_game(["S3 S4 S9", "S5 SK", "S6", "S7"], leader=0)
    cases.append((g, T.PASS_ACTION, "R-5.1", "leader_must_play"))  # leader passes
    g = make_game(["S3 S4 S9", "S5 SK", "S6", "S7"], leader=0)
    cases.append((g, natural_id(T.PAIR, "3"), "R-3", "cards_not_held"))  # cards not held
    g = make_game(["S3 S4 S9", "S5 SK", "S6", "S7"], leader=0)
    play(g, "S9")
    cases.append(
        (copy.deepcopy(g), natural_id(T.SINGLE, "5"), "R-5.2", "does_not_beat")
    )  # 5 does not beat 9
    cases.append(
        (copy.deepcopy(g), T.return_action(parse_card("S5")), "R-7", "no_return_due")
    )  # no return due
    g = make_game(
        ["S4 SJ", "S8", "S9", "BJ S3"],
        levels=("5", "9"),
        leveling_team=0,
        previous_order=[0, 1, 2, 3],
    )
    cases.append(
        (copy.deepcopy(g), natural_id(T.SINGLE, "4"), "R-7.1", "return_due")
    )  # a play, not a return
    cases.append(
        (copy.deepcopy(g), T.return_action(parse_card("SJ")), "R-7.1", "bad_return")
    )  # J is not 2..10
    cases.append(
        (copy.deepcopy(g), T.return_action(parse_card("S7")), "R-7.1", "bad_return")
    )  # not held
    return cases


@pytest.mark.parametrize("case", range(7))
def test_illegal_action_through_game_step(case):
    """R-3, R-5.1, R-5.2, R-7, R-7.1: an illegal action raises ``ValueError`` naming the
    action, the seat and the rule; the state is unchanged."""
    g, a, rule, reason = illegal_cases()[case]
    assert not g.legal_mask()[a]
    before = snapshot(g)
    with pytest.raises(IllegalActionError) as exc:
        g.step(a)
    msg = str(exc.value)
    assert f"action {a}" in msg and f"seat {g.to_act}" in msg and rule in msg, msg
    e = exc.value  # the same facts as data
    assert isinstance(e, ValueError) and e.table is None
    assert (e.action, e.seat, e.reason) == (a, g.to_act, reason) and e.rule.startswith(rule)
    assert snapshot(g) == before
    # and the game goes on normally
    g.step(int(np.flatnonzero(g.legal_mask())[0]))


def test_illegal_action_in_the_vector_env_names_its_table():
    """The vector env raises the same structured error, with the table's index."""
    from guandan_env import VectorGuandanEnv

    env = VectorGuandanEnv(3)
    _, mask, to_act = env.reset(seed=4)
    acts = np.array([int(np.flatnonzero(m)[0]) for m in mask])
    acts[2] = T.PASS_ACTION  # every table leads its first trick: passing is illegal
    with pytest.raises(IllegalActionError) as exc:
        env.step(acts)
    e = exc.value
    assert (e.table, e.action, e.seat, e.reason, e.rule) == (
        2,
        T.PASS_ACTION,
        int(to_act[2]),
        "leader_must_play",
        "R-5.1",
    )
    assert str(e).startswith("table 2: illegal action")


def test_step_after_the_deal_is_over():
    """R-6.2: once the deal is over no action is legal."""
    g = make_game(["S3", "S4", "S5", "S6"], leader=0)
    play(g, "S3")
    g.step(T.PASS_ACTION)
    play(g, "S5")
    assert g.deal_over
    with pytest.raises(IllegalActionError, match="R-6.2") as exc:
        g.step(T.PASS_ACTION)
    assert exc.value.reason == "deal_over"
    with pytest.raises(ValueError, match="not over"):
        make_game(["S3", "S4", "S5", "S6"]).next_deal()


ENV_OPTIONS = {
    "hands": ["S3 S4 S9", "S5 SK", "S6", "S7"],
    "leader": 0,
    "levels": ["2", "2"],
    "leveling_team": 0,
}


@pytest.mark.parametrize("wrapped", [False, True])
def test_illegal_action_through_the_env_raises(wrapped):
    """R-5.1 / R-3 / R-5.2 in the AEC env (default ``illegal_action="raise"``): the error
    names the action, the seat and the rule; game, agent and history are unchanged."""
    e = guandan_env.env() if wrapped else raw_env()
    e.reset(seed=0, options=ENV_OPTIONS)
    game = e.unwrapped.game
    for bad, rule in ((T.PASS_ACTION, "R-5.1"), (natural_id(T.PAIR, "3"), "R-3")):
        before, agent = snapshot(game), e.agent_selection
        with pytest.raises(ValueError) as exc:
            e.step(bad)
        msg = str(exc.value)
        assert f"action {bad}" in msg and "seat 0" in msg and rule in msg, msg
        assert snapshot(game) == before and e.agent_selection == agent
    e.step(action_for(game, "S9"))
    with pytest.raises(ValueError, match=r"seat 1.*R-5\.2"):
        e.step(natural_id(T.SINGLE, "5"))
    assert e.agent_selection == "player_1"


def test_illegal_action_penalize_terminates_with_the_penalty():
    """``illegal_action="penalize"``: the offender gets ``illegal_penalty``, the episode
    terminates for every agent, the others get 0; the game state is not advanced."""
    e = raw_env(illegal_action="penalize", illegal_penalty=-5.0)
    e.reset(seed=0, options=ENV_OPTIONS)
    before = snapshot(e.game)
    e.step(T.PASS_ACTION)  # the leader may not pass
    assert e.rewards == {"player_0": -5.0, "player_1": 0.0, "player_2": 0.0, "player_3": 0.0}
    assert all(e.terminations.values())
    assert e.infos["player_2"]["illegal_action"] == "player_0"
    assert snapshot(e.game) == before
    w = guandan_env.env(illegal_action="penalize")
    w.reset(seed=0, options=ENV_OPTIONS)
    w.step(T.PASS_ACTION)
    _, reward, term, _, _ = w.last()
    assert term and reward == -3.0  # the default penalty


# ------------------------------------------------------------------ env config / options
@pytest.mark.parametrize("key", ["colour", "max_deal", "seed"])
def test_unknown_env_config_key(key):
    """DESIGN (env config, no rule id): unknown keys raise ``ValueError`` naming the key."""
    with pytest.raises(ValueError, match=key):
        guandan_env.env(**{key: 1})


@pytest.mark.parametrize(
    ("config", "word"),
    [
        ({"mode": "tournament"}, "mode"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"render_mode": "rgb_array"}, "render_mode"),
        ({"info_view": "yes"}, "info_view"),
        ({"mode": "match", "max_deals": 0}, "R-6.8"),
    ],
)
def test_bad_env_config_values(config, word):
    """DESIGN (env config; R-6.8 for the cap): bad values raise ``ValueError`` naming the
    key."""
    with pytest.raises(ValueError, match=word):
        raw_env(**config)


@pytest.mark.parametrize(
    ("options", "word"),
    [
        ({"hands": ["S3", "S4", "S5"]}, "hands"),
        ({"hands": ["S3 S3 S3", "", "", ""]}, "R-1.2"),
        ({"hands": ["S3 S3", "S3", "", ""]}, "R-1.2"),
        ({"hands": ["S3 X4", "", "", ""]}, "R-1.4"),
        ({"leveling_team": 2}, "R-2.1"),
        ({"a_failures": [3, 0]}, "R-6.7"),
        ({"previous_order": [0, 1, 1, 2]}, "R-6.1"),
        ({"leader": 7}, "leader"),
    ],
)
def test_bad_scenario_options(options, word):
    """Scenario options are checked like engine input (R-1.2, R-1.4, R-2.1, R-6.1, R-6.7)."""
    with pytest.raises(ValueError, match=word):
        raw_env().reset(seed=0, options=options)


def test_game_step_never_trusts_a_foreign_mask():
    """``Game.step(a, mask)`` reuses only the read-only mask ``legal_mask()`` returned for this
    very state; an edited or stale array cannot make an illegal action legal (R-5)."""
    import numpy as np

    from guandan_env.core.engine import Game

    g = Game.new(seed=4)
    g.start_deal()
    mask = g.legal_mask()
    with pytest.raises(ValueError, match="read-only"):
        mask[0] = True
    illegal = int(np.flatnonzero(~mask)[0])
    forged = np.ones_like(mask)
    with pytest.raises(ValueError, match="illegal|cannot|not"):
        g.step(illegal, forged)
    legal = int(np.flatnonzero(mask)[0])
    g.step(legal, mask)  # the state's own mask: reused
    with pytest.raises(ValueError):
        g.step(legal, mask)  # now stale: recomputed, and leading the same play again is illegal
