"""Golden tests of RULES.md R-7: tribute (进贡), return (还贡), resistance (抗贡), who leads.

Each scenario starts a deal with crafted (partial) hands and the previous deal's finishing
order, as ``Game.start_deal(hands, previous_order)`` does between deals of a match. The
leveling team is the previous first place's team (R-6.4), so the deal's level is its level.
"""

from __future__ import annotations

import numpy as np
import pytest

from guandan_env.core import actions as T
from guandan_env.core.cards import face_text, parse_card, parse_rank
from guandan_env.core.engine import Game
from helpers.rules import give_back, hands_array, legal_returns, make_game, play


def tribute_game(hands, order, level="5", other="9"):
    """A deal after a deal finished in ``order``; the winners' team is at ``level``."""
    lt = order[0] % 2
    levels = [other, other]
    levels[lt] = level
    return make_game(hands, levels=levels, leveling_team=lt, previous_order=order)


def gifts(g: Game) -> list[tuple[int, int, str]]:
    return [(t.giver, t.receiver, face_text(t.face)) for t in g.tributes]


def faces(*cards: str) -> set[int]:
    return {parse_card(c) for c in cards}


# ------------------------------------------------------------------ single tribute
def test_r7_1_single_tribute_last_gives_first_its_highest_card():
    """R-7.1: after a deal that was not 双下, last place gives first place its highest card
    in level order; first place then chooses a return of rank 2…10 (a level card of
    natural rank <= 10 counts); the giver leads (R-7.4)."""
    hands = ["SJ SQ D4 HT S5", "S6 S7", "S8 S9", "H5 SA D3 DK"]
    g = tribute_game(hands, [0, 1, 2, 3], level="5")
    assert g.level == parse_rank("5")
    assert gifts(g) == [(3, 0, "SA")]  # ♥5 is higher but never given
    assert g.phase == "return" and g.to_act == 0
    assert legal_returns(g) == faces("D4", "HT", "S5")
    give_back(g, "HT")
    assert g.tributes[0].returned == parse_card("HT")
    assert g.phase == "play" and g.to_act == 3 and g.leader == 3 and g.deal_leader == 3
    assert g.hands.sum(1).tolist() == [5, 2, 2, 4]
    assert g.hands[3, parse_card("HT")] == 1 and g.hands[0, parse_card("SA")] == 1
    assert g.hands[3, parse_card("SA")] == 0


@pytest.mark.parametrize(
    ("giver", "level", "given"),
    [
        ("S3 BJ RJ", "5", "RJ"),  # a big joker if it has one
        ("S3 BJ SA", "5", "BJ"),
        ("S3 H5 SA", "5", "SA"),  # never the ♥N wildcard
        ("S3 H5 S5", "5", "S5"),  # another level card is fine
        ("S3 H5 H5 SK", "5", "SK"),
        ("S2 SA", "2", "S2"),  # at level 2 the 2s are above A
        ("S2 SA", "7", "SA"),  # otherwise a 2 is lowest
        ("ST C7 SK", "7", "C7"),
    ],
)
def test_r7_1_highest_card_in_level_order_never_wild(giver, level, given):
    """R-7.1: the tribute is the highest card in level order, never a ♥N wildcard."""
    g = tribute_game(["S4 S6", "S8", "S9", giver], [0, 1, 2, 3], level=level)
    assert gifts(g) == [(3, 0, given)]


def test_r7_1_last_place_is_first_places_partner():
    """R-7.1: the single tribute is owed even when last place is first place's partner."""
    g = tribute_game(["S4 S6 DK", "S8", "BJ S3", "S9"], [0, 1, 3, 2])
    assert gifts(g) == [(2, 0, "BJ")]
    assert g.to_act == 0 and g.phase == "return"
    give_back(g, "S4")
    assert g.to_act == 2 and g.phase == "play"  # the giver leads
    assert g.hands[2, parse_card("S4")] == 1


@pytest.mark.parametrize(
    ("receiver", "level", "allowed"),
    [
        ("SJ SQ SK", "5", ["SJ"]),  # no 2..10: lowest card in level order
        ("SJ SQ SA", "J", ["SQ"]),  # the level J is above A: Q is lowest
        ("HQ SQ SK DK", "Q", ["SK", "DK"]),  # ♥Q is a level card, above K
        ("S2 SA", "2", ["S2"]),  # a level card of natural rank 2 counts as 2..10
        ("H9 SJ", "9", ["H9"]),  # so does the ♥N wildcard when N <= 10
        ("ST DT SJ", "3", ["ST", "DT"]),
    ],
)
def test_r7_1_return_rule_and_fallback(receiver, level, allowed):
    """R-7.1: the receiver returns a card of natural rank 2…10; if it holds none, its
    lowest card in level order (the received card included)."""
    g = tribute_game([receiver, "S8", "S7", "BJ S3"], [0, 1, 2, 3], level=level)
    assert gifts(g) == [(3, 0, "BJ")]
    assert legal_returns(g) == faces(*allowed)
    # every other return id is refused, and so is a play
    m = g.legal_mask()
    assert m.sum() == len(allowed) and not m[: T.RETURN_BASE].any()


def test_r7_1_return_is_a_player_decision():
    """R-7.6 / R-7.1: any allowed return may be chosen; the chosen card goes to the giver."""
    for card in ("D4", "S5"):
        g = tribute_game(["D4 S5 SK", "S8", "S7", "BJ S3"], [0, 1, 2, 3])
        give_back(g, card)
        assert g.hands[3, parse_card(card)] == 1 and g.hands[0, parse_card(card)] == 0


# ------------------------------------------------------------------ double tribute
def test_r7_2_double_tribute_higher_goes_to_first():
    """R-7.2: after a 双下 both losers give their highest card; the higher goes to first
    place, the lower to second; first place returns first, then second place; the seat
    that gave to first place leads (R-7.4)."""
    g = tribute_game(["S4 S6", "BJ S3", "ST S7", "SA S8"], [0, 2, 1, 3])
    assert gifts(g) == [(1, 0, "BJ"), (3, 2, "SA")]
    assert g.phase == "return" and g.to_act == 0
    give_back(g, "S4")
    assert g.phase == "return" and g.to_act == 2
    give_back(g, "S7")
    assert g.phase == "play" and g.to_act == 1
    assert [t.returned for t in g.tributes] == [parse_card("S4"), parse_card("S7")]
    assert g.hands[1, parse_card("S4")] == 1 and g.hands[3, parse_card("S7")] == 1


def test_r7_2_double_tribute_higher_from_the_other_loser():
    """R-7.2: here seat 3's card is higher: seat 3 gives to first place (seat 2) and leads."""
    g = tribute_game(["ST S7", "SK S3", "S4 S6", "RJ S8"], [2, 0, 3, 1])
    assert gifts(g) == [(3, 2, "RJ"), (1, 0, "SK")]
    assert g.to_act == 2
    give_back(g, "S4")
    assert g.to_act == 0
    give_back(g, "S7")
    assert g.to_act == 3 and g.phase == "play"


@pytest.mark.parametrize(
    ("order", "from_to_first"),
    [
        ([0, 2, 1, 3], 1),
        ([0, 2, 3, 1], 1),  # not "the first loser listed": the seat after first place
        ([2, 0, 1, 3], 3),
        ([2, 0, 3, 1], 3),
        ([1, 3, 0, 2], 2),
        ([3, 1, 2, 0], 0),
    ],
)
def test_r7_2_tie_first_place_receives_from_the_seat_after_it(order, from_to_first):
    """R-7.2: with equal tributes (SA and DA), first place receives from the seat after it
    in turn order; that seat leads (R-7.4)."""
    hands = ["", "", "", ""]
    first, second = order[0], order[1]
    hands[first], hands[second] = "S4 S6", "S5 S7"
    losers = order[2:]
    hands[losers[0]], hands[losers[1]] = "SA S3", "DA S8"
    g = tribute_game(hands, order)
    to_first = [t for t in g.tributes if t.receiver == first]
    to_second = [t for t in g.tributes if t.receiver == second]
    assert [t.giver for t in to_first] == [from_to_first]
    assert [t.giver for t in to_second] == [l for l in losers if l != from_to_first]
    assert g.leader == from_to_first
    assert g.to_act == first  # first place returns first


def test_r7_2_tie_between_level_cards():
    """R-7.2 with R-2.4: level cards of different suits are equal tributes."""
    g = tribute_game(["S4 S6", "S5 S3", "ST S7", "D5 S8"], [0, 2, 3, 1])
    assert gifts(g) == [(1, 0, "S5"), (3, 2, "D5")]


# ------------------------------------------------------------------ resistance
@pytest.mark.parametrize(
    ("hands", "order", "shown"),
    [
        (["S4 S6", "S8", "S9", "RJ RJ S3"], [0, 1, 2, 3], [3, 3]),  # single, both RJ
        (["S4 S6", "S8", "RJ RJ S3", "S9"], [0, 1, 3, 2], [2, 2]),  # partner owes, resists
        (["S4 S6", "RJ S3", "ST S7", "RJ S8"], [0, 2, 1, 3], [1, 3]),  # split across losers
        (["S4 S6", "RJ RJ S3", "ST S7", "BJ S8"], [0, 2, 1, 3], [1, 1]),  # one loser holds both
    ],
)
def test_r7_3_resistance_with_both_big_jokers(hands, order, shown):
    """R-7.3: when the seats that owe tribute hold both big jokers between them, no tribute
    is given or returned; the previous first place leads (R-7.4)."""
    g = tribute_game(hands, order)
    before = hands_array(hands)
    assert g.resisted and g.tributes == [] and g.pending_returns == []
    assert sorted(g.resist_jokers) == sorted(shown)
    assert np.array_equal(g.hands, before)
    assert g.phase == "play" and g.to_act == order[0] and g.leader == order[0]


@pytest.mark.parametrize(
    ("hands", "order", "want"),
    [
        (["RJ S6", "S8", "S9", "RJ S3"], [0, 1, 2, 3], [(3, 0, "RJ")]),
        (["S4 S6", "RJ S3", "RJ S7", "BJ S8"], [0, 2, 1, 3], [(1, 0, "RJ"), (3, 2, "BJ")]),
        (["RJ S6", "RJ S3", "ST S7", "SA S8"], [0, 2, 1, 3], [(1, 0, "RJ"), (3, 2, "SA")]),
    ],
)
def test_r7_3_one_big_joker_is_no_resistance(hands, order, want):
    """R-7.3: a single big joker among the seats that owe tribute does not resist."""
    g = tribute_game(hands, order)
    assert not g.resisted and gifts(g) == want


# ------------------------------------------------------------------ who leads
@pytest.mark.parametrize(
    ("hands", "order", "leader"),
    [
        (["S4 S6", "S8", "S9", "BJ S3"], [0, 1, 2, 3], 3),  # single: the giver
        (["S4 S6", "S8 BJ", "S9", "S3"], [2, 3, 0, 1], 1),
        (["S4 S6", "BJ S3", "ST S7", "SA S8"], [0, 2, 1, 3], 1),  # double: giver to first
        (["S4 S6", "S8", "S9", "RJ RJ"], [1, 0, 2, 3], 1),  # resisted: previous first
    ],
)
def test_r7_4_who_leads_after_tribute(hands, order, leader):
    """R-7.4: after a single tribute the giver leads, after a double tribute the seat that
    gave to first place, after resistance the previous first place — once the returns are
    made."""
    g = tribute_game(hands, order)
    while g.phase == "return":
        g.step(int(np.flatnonzero(g.legal_mask())[0]))
    assert g.phase == "play" and g.to_act == leader and g.deal_leader == leader
    assert g.table_action == -1 and not g.legal_mask()[T.PASS_ACTION]


# ------------------------------------------------------------------ first deal
@pytest.mark.parametrize("seed", range(3))
def test_r7_5_first_deal_has_no_tribute_and_a_seeded_leader(seed):
    """R-7.5: the first deal of a match has no tribute; its leader comes from the seed."""
    g = Game.new(seed=seed)
    g.start_deal()
    assert g.tributes == [] and not g.resisted and g.phase == "play"
    assert g.to_act == g.leader == g.deal_leader
    assert g.hands.sum(1).tolist() == [27] * 4
    again = Game.new(seed=seed)
    again.start_deal()
    assert again.leader == g.leader


def test_r7_5_seeded_leader_varies_and_later_deals_pay_tribute():
    """R-7.5: leaders drawn from different seeds cover all four seats; the match's second
    deal has tribute (or resistance) and its leader follows R-7.4."""
    leaders = set()
    for seed in range(40):
        g = Game.new(seed=seed)
        g.start_deal()
        leaders.add(g.leader)
    assert leaders == {0, 1, 2, 3}
    g = Game.new(seed=11)
    g.start_deal(hands=hands_array(["S3", "S4", "S5", "S6"]), leader=0)
    play(g, "S3")
    play(g, "S4")
    play(g, "S5")
    assert g.result.order == [0, 1, 2, 3]
    g.next_deal()
    assert g.deal_number == 2 and g.level == parse_rank("4")
    assert g.resisted or [(t.giver, t.receiver) for t in g.tributes] == [(3, 0)]
    assert g.leader == (0 if g.resisted else 3)


# ------------------------------------------------------------------ giver's choice
@pytest.mark.parametrize(
    ("giver", "level", "given"),
    [
        ("ST SJ SQ SK SA DA", "5", "DA"),  # SA would break the spade T-A straight flush
        ("DT DJ DQ DK DA SA", "5", "SA"),
        ("SA DA", "5", "SA"),  # no difference: suit order S H C D
        ("CA DA", "5", "CA"),
        ("D3 D4 D5 D6 D7 S5 H5", "5", "S5"),  # keeps the diamond 3-7; never ♥5
        ("S3 S4 S5 S6 S7 D5", "5", "D5"),
        ("S9 ST SJ SQ H9 SK C9", "9", "C9"),  # S9 is needed for 8-Q with the ♥9 as the 8
    ],
)
def test_r7_6_giver_keeps_its_straight_flush_chances(giver, level, given):
    """R-7.6: among equal highest faces the engine gives the copy least useful to the
    giver's straight flushes, then the first in suit order S H C D."""
    g = tribute_game(["S4 S6", "S8", "S2", giver], [0, 1, 2, 3], level=level)
    assert gifts(g) == [(3, 0, given)]


def test_r7_6_highest_tribute_face_query():
    """R-7.6: ``highest_tribute_face`` names the card a seat would give, without moving it."""
    g = make_game(["ST SJ SQ SK SA DA", "S3", "S4", "H5 S6"], levels=("5", "5"), leveling_team=0)
    assert face_text(g.highest_tribute_face(0)) == "DA"
    assert face_text(g.highest_tribute_face(3)) == "S6"
    h = make_game(["H5", "S3", "S4", "S6"], levels=("5", "5"), leveling_team=0)
    with pytest.raises(ValueError, match="R-7.1"):
        h.highest_tribute_face(0)  # a lone ♥N can never be given
