"""Golden tests of RULES.md R-5 (a trick: lead, follow, end, wind, empty seats) and R-6 (end of
a deal, level gain, cap at A, passing A, failing A, deal cap), through the ``Game`` engine
and, where the rule concerns the environment's episode, through the AEC env.

Scenarios use small crafted hands; ``deal_with_order`` (helpers.rules) plays a one-card-per-seat
deal so the seats empty their hands in a chosen order.
"""

from __future__ import annotations

import numpy as np
import pytest

import guandan_env
from guandan_env.core import actions as T
from guandan_env.core.cards import parse_rank
from guandan_env.core.engine import Game
from guandan_env.envs.aec import raw_env
from helpers.rules import (
    action_for,
    deal_with_order,
    drive_to_order,
    hands_array,
    make_game,
    pass_,
    play,
    staircase_hands,
)

A, K, Q = 12, 11, 10


def _hands(order, level):
    return hands_array(staircase_hands(order, level))


def leading(g: Game) -> bool:
    return g.phase == "play" and g.table_action < 0


# ------------------------------------------------------------------
def test_r5_1_leader_must_play():
    """R-5.1: the leader of a trick may play any combination but never pass."""
    g = make_game(["S3 S4 D4", "S5", "S6", "S7"], leader=0)
    m = g.legal_mask()
    assert not m[T.PASS_ACTION]
    assert {T.KIND_NAMES[T.KIND[a]] for a in np.flatnonzero(m)} == {"single", "pair"}
    with pytest.raises(ValueError, match="R-5.1"):
        g.step(T.PASS_ACTION)


def test_r5_2_follower_passes_or_beats_and_may_play_again():
    """R-5.2: a follower passes or beats the last play; having passed does not stop it from
    playing when its turn comes again, in this trick or a later one."""
    g = make_game(["S3 S9 SQ", "S4 ST SK", "S6 SJ", "S2 S5"], leader=0)
    play(g, "S3")
    assert g.legal_mask()[T.PASS_ACTION]
    pass_(g)  # seat 1 passes
    play(g, "S6")  # seat 2
    pass_(g)  # seat 3
    pass_(g)  # seat 0
    assert g.to_act == 1 and not leading(g)  # seat 1 passed before and may still beat
    play(g, "ST")
    pass_(g, 3)
    assert g.to_act == 1 and leading(g)  # seat 1 won the trick and leads
    play(g, "S4")
    assert g.to_act == 2
    # seat 2 holds SJ only: pass or SJ
    assert set(np.flatnonzero(g.legal_mask())) == {T.PASS_ACTION, action_for(g, "SJ")}


def test_r5_3_trick_ends_when_all_others_pass():
    """R-5.3: the trick ends only once every other seat holding cards has passed after the
    last play; the last seat that played leads the next trick."""
    g = make_game(["S3 S9", "S4 ST", "S6 SJ", "S2 S5"], leader=0)
    play(g, "S3")
    play(g, "S4")  # seat 1
    pass_(g, 2)  # seats 2, 3
    assert g.to_act == 0 and not leading(g)  # seat 0 still to answer
    pass_(g)
    assert g.to_act == 1 and leading(g)
    passed = [(seat, action == T.PASS_ACTION) for seat, action, _ in g.history]
    assert passed == [(0, False), (1, False), (2, True), (3, True), (0, True)]


# ------------------------------------------------------------------ wind
@pytest.mark.parametrize("finisher", range(4))
def test_r5_4_wind_partner_leads(finisher):
    """R-5.4: the seat whose play was its last card wins the trick when all others pass;
    its partner leads the next trick (wind)."""
    hands = ["S3 S4", "S5 S6", "S7 S8", "S9 ST"]
    hands[finisher] = "SQ"
    g = make_game(hands, leader=finisher)
    play(g, "SQ")
    assert g.finish_order == [finisher]
    pass_(g, 2)
    assert not leading(g)  # three seats still hold cards: a third pass is needed
    pass_(g)
    assert leading(g) and g.to_act == (finisher + 2) % 4
    assert g.legal_mask()[T.PASS_ACTION] == 0


def test_r5_4_no_wind_when_the_last_card_is_beaten():
    """R-5.4 applies only when everyone passes the last card; if it is beaten, the beater
    wins the trick as usual (R-5.3)."""
    g = make_game(["SQ", "SK S3", "S7 S8", "S9 ST"], leader=0)
    play(g, "SQ")
    play(g, "SK")
    pass_(g, 2)
    assert leading(g) and g.to_act == 1


def test_r5_4_r6_2_no_wind_to_a_seat_that_is_out():
    """R-5.4 with R-6.2: when a seat goes out while its partner is already out, the deal is
    over at once (first and second here), so wind never hands the lead to an empty seat."""
    g = make_game(["SQ", "SK S3", "SA", "S9 ST"], leader=0)
    play(g, "SQ")
    play(g, "SK")
    play(g, "SA")  # seat 2 out second, partner of the first: 双下
    assert g.deal_over and g.result.order[:2] == [0, 2]


# ------------------------------------------------------------------
def test_r5_5_empty_seats_are_skipped():
    """R-5.5: a seat with no cards is skipped in turn order (both when following and when
    counting the passes that end a trick)."""
    g = make_game(["SQ", "S3 S4", "S5 S6 S7", "S8 S9"], leader=0)
    play(g, "SQ")
    pass_(g, 3)  # wind: seat 2 leads
    assert g.to_act == 2 and leading(g)
    play(g, "S5")
    assert g.to_act == 3
    pass_(g)
    assert g.to_act == 1  # seat 0 is skipped
    pass_(g)
    assert g.to_act == 2 and leading(g)  # two passes end the trick: seat 0 holds nothing
    play(g, "S6")
    play(g, "S8")  # seat 3
    assert g.to_act == 1


# ------------------------------------------------------------------
def test_r6_1_places_in_order_of_emptying():
    """R-6.1: seats are ranked in the order they empty their hands."""
    g = deal_with_order([3, 0, 1, 2])
    assert g.finish_order == [3, 0, 1]
    assert g.result.order == [3, 0, 1, 2]
    assert not g.result.double_down


@pytest.mark.parametrize("first", range(4))
def test_r6_2_double_down_ends_the_deal_at_once(first):
    """R-6.2: when the first two to finish are partners the deal ends at once; the other
    two are both last, whatever they still hold."""
    partner = (first + 2) % 4
    g = deal_with_order([first, partner, (first + 1) % 4, (first + 3) % 4])
    assert g.deal_over and g.phase == "deal_over"
    assert g.finish_order == [first, partner]
    r = g.result
    assert r.double_down and r.order[:2] == [first, partner]
    assert sorted(r.order[2:]) == sorted({(first + 1) % 4, (first + 3) % 4})
    assert r.gain == 3 and r.winner_team == first % 2
    losers = [(first + 1) % 4, (first + 3) % 4]
    assert all(g.hands[s].sum() == 1 for s in losers)
    assert not g.legal_mask().any()
    with pytest.raises(ValueError):
        g.step(T.PASS_ACTION)


def test_r6_2_non_partners_first_two_play_on():
    """R-6.2: otherwise the deal goes on until three seats have finished."""
    g = make_game(staircase_hands([0, 1, 2, 3]), leader=0)
    play(g, "S3")
    play(g, "S4")
    assert not g.deal_over and g.finish_order == [0, 1] and g.to_act == 2
    play(g, "S5")
    assert g.deal_over and g.result.order == [0, 1, 2, 3] and not g.result.double_down


# ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("order", "gain"),
    [
        ([0, 2, 1, 3], 3),
        ([0, 1, 2, 3], 2),
        ([0, 3, 2, 1], 2),
        ([0, 1, 3, 2], 1),
        ([0, 3, 1, 2], 1),
        ([1, 3, 0, 2], 3),
        ([1, 2, 3, 0], 2),
        ([3, 0, 2, 1], 1),
    ],
)
def test_r6_3_level_gain_by_partner_place(order, gain):
    """R-6.3: the first place's team gains +3/+2/+1 when its partner is second/third/last;
    the other team's level does not change. Deal rewards are ±gain, zero-sum (DESIGN)."""
    g = deal_with_order(order, levels=("5", "8"), leveling_team=0)
    r = g.result
    w = order[0] % 2
    assert r.winner_team == w and r.gain == gain
    start = [parse_rank("5"), parse_rank("8")]
    assert g.levels[w] == start[w] + gain
    assert g.levels[1 - w] == start[1 - w]
    rew = r.rewards()
    assert rew.tolist() == [gain if s % 2 == w else -gain for s in range(4)]


@pytest.mark.parametrize("winner_first", [0, 1])
def test_r6_4_winner_becomes_leveling_team(winner_first):
    """R-6.4 / R-2.1: the winning team leads the level of the next deal."""
    g = deal_with_order([winner_first, (winner_first + 2) % 4, 1 - winner_first, 3 - winner_first])
    w = winner_first % 2
    assert g.leveling_team == w and g.levels[w] == parse_rank("5")
    g.next_deal()
    assert g.level == g.levels[w] == parse_rank("5")
    assert g.deal_number == 2


# ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("start", "order", "want"),
    [
        ("K", [0, 2, 1, 3], "A"),
        ("K", [0, 1, 3, 2], "A"),
        ("Q", [0, 2, 1, 3], "A"),
        ("J", [0, 2, 1, 3], "A"),
        ("T", [0, 2, 1, 3], "K"),
    ],
)
def test_r6_5_levels_stop_at_ace(start, order, want):
    """R-6.5: levels stop at A (K + 3 gives A)."""
    g = deal_with_order(order, levels=(start, "2"), leveling_team=1)
    assert g.levels[0] == parse_rank(want)
    assert not g.match_over  # a deal played at the other team's level


# ------------------------------------------------------------------ passing A
@pytest.mark.parametrize(
    ("order", "gain"), [([0, 2, 1, 3], 3), ([0, 1, 2, 3], 2), ([2, 3, 0, 1], 2), ([2, 0, 1, 3], 3)]
)
def test_r6_6_leveling_team_at_a_wins_with_partner_not_last(order, gain):
    """R-6.6: the leveling team, at A, wins the deal played at A with +3 or +2: it wins the
    match; nothing is counted after that (R-6.7 order: match win first)."""
    g = deal_with_order(order, levels=("A", "5"), leveling_team=0, a_failures=(2, 0))
    assert g.level == A and g.result.gain == gain
    assert g.match_over and g.match_winner == 0 and g.result.match_winner == 0
    assert g.phase == "match_over"
    assert g.a_failures == [2, 0] and g.levels == [A, parse_rank("5")]
    with pytest.raises(ValueError):
        g.next_deal()


def test_r6_6_partner_last_is_no_pass():
    """R-6.6: winning the A deal with the partner last (+1) does not pass A."""
    g = deal_with_order([0, 1, 3, 2], levels=("A", "5"), leveling_team=0)
    assert g.result.gain == 1 and not g.match_over and g.match_winner is None
    assert g.levels[0] == A and g.a_failures == [1, 0] and g.leveling_team == 0


@pytest.mark.parametrize("other_level", ["5", "A"])
def test_r6_6_winning_at_the_other_teams_level_never_ends_the_match(other_level):
    """R-6.6: team 1, already at A, wins +3 in a deal played at team 0's level (5, or A):
    no match win; it becomes the leveling team at A."""
    g = deal_with_order([1, 3, 0, 2], levels=(other_level, "A"), leveling_team=0)
    assert g.result.gain == 3 and g.level == parse_rank(other_level)
    assert not g.match_over and g.match_winner is None and g.result.match_winner is None
    assert g.levels[1] == A and g.leveling_team == 1
    g.next_deal()
    assert g.level == A  # the next deal is team 1's A deal


def test_r6_6_match_win_through_two_deals():
    """R-6.6 over a match: team 1 reaches A as non-leveling team, then passes A as leveling
    team in the following deal."""
    g = deal_with_order([1, 3, 0, 2], levels=("5", "J"), leveling_team=0)
    assert g.levels == [parse_rank("5"), A] and not g.match_over
    g.start_deal(hands=_hands([3, 1, 0, 2], "A"), leader=3)
    assert g.level == A
    drive_to_order(g, [3, 1, 0, 2])
    assert g.match_over and g.match_winner == 1


# ------------------------------------------------------------------ failing A
def test_r6_7_losing_the_a_deal_is_a_failure():
    """R-6.7: the leveling team at A loses: one failure; the winner gains as usual."""
    g = deal_with_order([1, 0, 3, 2], levels=("A", "7"), leveling_team=0)
    assert g.a_failures == [1, 0] and g.result.a_failure_team == 0
    assert g.levels == [A, parse_rank("9")] and g.leveling_team == 1


def test_r6_7_third_failure_by_partner_last_resets_after_gain():
    """R-6.7 order (failure count, then the winner's gain, then the reset): the leveling
    team at A with two failures wins with its partner last: failure 3, gain +1 (capped at
    A), then reset to 2 with count 0 — not 2 + 1 = 3."""
    g = deal_with_order([0, 1, 3, 2], levels=("A", "7"), leveling_team=0, a_failures=(2, 1))
    assert g.result.gain == 1 and not g.match_over
    assert g.levels == [parse_rank("2"), parse_rank("7")]
    assert g.a_failures == [0, 1]
    assert g.leveling_team == 0
    g.next_deal()
    assert g.level == parse_rank("2")


def test_r6_7_third_failure_by_loss_resets_loser_winner_gains():
    """R-6.7: third failure by losing: the leveling team goes back to 2 and count 0; the
    winner gains normally and leads the next deal."""
    g = deal_with_order([1, 0, 3, 2], levels=("A", "7"), leveling_team=0, a_failures=(2, 2))
    assert g.levels == [0, parse_rank("9")]
    assert g.a_failures == [0, 2] and g.leveling_team == 1


def test_r6_7_other_teams_failures_unchanged_when_it_wins_at_a():
    """R-6.7: only the leveling team's deal at A counts; the other team (also at A, two
    failures) wins +3 at the leveling team's A: no failure for it, no match win (R-6.6)."""
    g = deal_with_order([1, 3, 0, 2], levels=("A", "A"), leveling_team=0, a_failures=(2, 2))
    assert g.levels == [0, A] and g.a_failures == [0, 2] and not g.match_over
    assert g.leveling_team == 1


def test_r6_7_no_failure_for_deals_below_a():
    """R-6.7: a deal played at another level is no failure even for a team at A."""
    g = deal_with_order([1, 0, 3, 2], levels=("A", "7"), leveling_team=1, a_failures=(1, 0))
    assert g.level == parse_rank("7")
    assert g.a_failures == [1, 0] and g.result.a_failure_team is None


def test_r6_7_three_failures_in_a_row():
    """R-6.7 over a match: three A deals lost in a row reset the team to 2."""
    g = deal_with_order([0, 1, 3, 2], levels=("A", "2"), leveling_team=0)
    assert g.a_failures == [1, 0]
    for k in (2, 3):
        g.start_deal(hands=_hands([0, 3, 1, 2], "A"), leader=0)
        assert g.level == A
        drive_to_order(g, [0, 3, 1, 2])
        assert g.result.gain == 1
        assert g.a_failures == ([2, 0] if k == 2 else [0, 0])
    assert g.levels[0] == parse_rank("2") and g.leveling_team == 0


# ------------------------------------------------------------------ deal cap
def test_r6_8_capped_match_is_a_draw():
    """R-6.8: a match capped at N deals that ends without a pass of A is a draw; the deal's
    rewards are unaffected."""
    g = Game.new(seed=1, max_deals=2)
    g.start_deal(hands=_hands([0, 1, 2, 3], "2"), leader=0)
    drive_to_order(g, [0, 1, 2, 3])
    assert not g.match_over and g.phase == "deal_over"
    g.start_deal(hands=_hands([1, 3, 0, 2], "4"), leader=1)
    drive_to_order(g, [1, 3, 0, 2])
    assert g.match_over and g.match_winner is None and g.phase == "match_over"
    assert g.result.match_winner is None
    assert g.result.rewards().tolist() == [-3, 3, -3, 3]
    assert g.result.rewards(match_win_bonus=5.0).tolist() == [-3, 3, -3, 3]  # a draw: none
    with pytest.raises(ValueError, match="R-6"):
        g.next_deal()


def test_deal_result_rewards_carry_the_match_bonus_once():
    """R-6.3 plus the envs' ``match_win_bonus``: one definition in ``DealResult.rewards``."""
    from guandan_env.core.engine import DealResult

    res = DealResult(order=[1, 3, 0, 2], winner_team=1, gain=3, double_down=True, deal_level=12)
    assert res.rewards().tolist() == [-3, 3, -3, 3]
    assert res.rewards(10.0).tolist() == [-3, 3, -3, 3]  # the match goes on: no bonus
    res.match_winner = 1
    assert res.rewards(10.0).tolist() == [-13, 13, -13, 13]
    assert res.rewards().tolist() == [-3, 3, -3, 3]


def test_r6_8_pass_of_a_on_the_last_capped_deal_wins():
    """R-6.8 / R-6.6: a pass of A on the last allowed deal is a match win, not a draw."""
    g = deal_with_order([0, 2, 1, 3], levels=("A", "2"), leveling_team=0, max_deals=1)
    assert g.match_over and g.match_winner == 0


def test_r6_8_env_capped_match_truncates_with_deal_rewards():
    """R-6.8 in the AEC env: ``mode="match"``, ``max_deals=1``: the episode is truncated
    (a draw), the deal's rewards ±gain are paid."""
    e = guandan_env.env(mode="match", max_deals=1)
    e.reset(seed=5, options={"hands": staircase_hands([0, 3, 1, 2]), "leader": 0})
    game = e.unwrapped.game
    rewards = dict.fromkeys(e.possible_agents, 0.0)
    while not game.deal_over:
        mask = game.legal_mask()
        if game.to_act == [0, 3, 1, 2][len(game.finish_order)]:
            a = int(np.flatnonzero(mask)[-1])
        else:
            a = T.PASS_ACTION
        e.step(a)
        for ag in e.possible_agents:
            rewards[ag] += e.rewards[ag]
    assert game.match_winner is None and game.match_over
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert rewards == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}
    assert e.infos["player_0"]["deal_result"]["gain"] == 1


def test_r6_8_max_deals_must_be_positive():
    """R-6.8: a cap is a number of deals >= 1."""
    with pytest.raises(ValueError, match="R-6.8"):
        Game.new(max_deals=0)


# ------------------------------------------------------------------ in env scenarios
def test_r6_4_env_previous_order_fixes_the_leveling_team():
    """R-6.4 / R-2.1: a deal after ``previous_order`` is played at the level of the team of
    that order's first place, unless the scenario names ``leveling_team`` explicitly."""
    wrong = []
    for seed in range(10):
        e = raw_env()
        e.reset(seed=seed, options={"levels": ["5", "9"], "previous_order": [1, 0, 2, 3]})
        if (e.game.leveling_team, e.game.level) != (1, parse_rank("9")):
            wrong.append((seed, e.game.leveling_team, e.game.level))
    assert not wrong, f"(seed, leveling_team, level) contradicting previous_order: {wrong}"


def test_r6_4_env_random_tribute_and_levels_agree():
    """R-6.4: with ``random_levels`` and ``random_tribute`` the leveling team is the team
    of the drawn previous first place (the first tribute's receiver, R-7.1/R-7.2)."""
    wrong = []
    for seed in range(20):
        e = raw_env(random_levels=True, random_tribute=True)
        e.reset(seed=seed)
        g = e.game
        if not g.resisted and g.tributes[0].receiver % 2 != g.leveling_team:
            wrong.append(seed)
    assert not wrong, f"seeds with leveling team != team of the previous first: {wrong}"


def test_r2_1_env_explicit_leveling_team_is_kept():
    """R-2.1 in env scenarios: an explicit ``leveling_team`` is kept as given."""
    for seed in range(5):
        e = raw_env()
        e.reset(seed=seed, options={"previous_order": [3, 0, 2, 1], "leveling_team": 1})
        assert e.game.leveling_team == 1


def test_r6_2_r6_3_r6_7_outcome_functions_are_pure_and_total():
    """R-6 as pure functions (``core.outcome``): every finishing order of four seats is
    decided after two (a 双下) or three seats, with gain 3/2/1; ``settle`` leaves its input
    as it was, and a third failure at A resets that team to 2 (R-6.7)."""
    import itertools

    from guandan_env.core.outcome import MatchLevels, deal_result, settle

    for order in itertools.permutations(range(4)):
        order = list(order)
        double = order[0] % 2 == order[1] % 2
        assert deal_result(order[:1], 0) is None
        assert (deal_result(order[:2], 0) is None) == (not double)
        res = deal_result(order[:3], 5)
        assert res.order == order and res.winner_team == order[0] % 2 and res.deal_level == 5
        assert res.gain == {1: 3, 2: 2, 3: 1}[order.index((order[0] + 2) % 4)]
    before = MatchLevels(levels=(A, 4), leveling_team=0, a_failures=(2, 0))
    loss = deal_result([1, 0, 3], A)  # team 1 wins at team 0's A: team 0's third failure
    after, res = settle(before, loss, deal_number=9, max_deals=None)
    assert before == MatchLevels(levels=(A, 4), leveling_team=0, a_failures=(2, 0))
    assert after.levels == (0, 6) and after.a_failures == (0, 0) and after.leveling_team == 1
    assert res.a_failure_team == 0 and res.levels == (0, 6) and not after.match_over
    won, res = settle(before, deal_result([0, 2], A), deal_number=9, max_deals=9)
    assert won.match_over and won.match_winner == 0 and res.match_winner == 0
    capped, _ = settle(MatchLevels(), deal_result([1, 3], 0), deal_number=3, max_deals=3)
    assert capped.match_over and capped.match_winner is None  # a draw
