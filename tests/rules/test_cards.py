"""Golden tests of RULES.md R-1 (table, deck, deal, notation) and R-2 (levels, level cards,
wildcards, level order), through ``guandan_env.core.cards`` and the ``Game`` engine.

Move-generation details of R-2.3 … R-4 are covered by ``core/test_reference_golden.py`` and
``core/test_reference_vs_fast.py``; here only what those do not check: the deal, the notation both
ways, the level of a deal, and level order as the engine applies it when following.
"""

from __future__ import annotations

import numpy as np
import pytest

from guandan_env.core import actions as T
from guandan_env.core.cards import (
    DECK_SIZE,
    HAND_SIZE,
    NUM_FACES,
    face_text,
    format_cards,
    format_hand,
    full_deck,
    level_key,
    parse_card,
    parse_hand,
    parse_rank,
)
from guandan_env.core.engine import Game, partner_of, team_of
from helpers.rules import action_for, make_game, pass_, play

RANKS = "23456789TJQKA"


def singles_beating(g: Game) -> set[str]:
    """Keys (rank text) of the single-card plays the seat to act may make now."""
    out = set()
    for a in np.flatnonzero(g.legal_mask()):
        if T.KIND[a] == T.SINGLE:
            k = int(T.KEY[a])
            out.add("wild" if k == T.LEVEL_KEY else ("BJ", "RJ")[k - 13] if k >= 13 else RANKS[k])
    return out


# ------------------------------------------------------------------
def test_r1_1_teams_and_partners():
    """R-1.1: seats 0 and 2 are one team, 1 and 3 the other."""
    assert [team_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert [partner_of(s) for s in range(4)] == [2, 3, 0, 1]


@pytest.mark.parametrize("leader", range(4))
def test_r1_1_play_moves_to_seat_plus_one(leader):
    """R-1.1: play moves from seat s to seat (s + 1) mod 4."""
    g = make_game(["S3 S4", "S5 S6", "S7 S8", "S9 ST"], leader=leader)
    seen = [g.to_act]
    g.step(action_for(g, {0: "S3", 1: "S5", 2: "S7", 3: "S9"}[leader]))
    for _ in range(3):
        seen.append(g.to_act)
        pass_(g)
    assert seen == [(leader + k) % 4 for k in range(4)]
    assert g.to_act == leader  # all others passed: the trick is over


# ------------------------------------------------------------------
def test_r1_2_deck_is_two_54_card_decks():
    """R-1.2: 108 cards, every face (52 suited + BJ + RJ) exactly twice."""
    deck = full_deck()
    assert DECK_SIZE == deck.size == 108
    assert np.array_equal(np.bincount(deck, minlength=NUM_FACES), np.full(NUM_FACES, 2))


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_r1_2_deal_gives_27_each_nothing_left(seed):
    """R-1.2: each seat gets 27 cards, the four hands are the whole 108-card deck."""
    g = Game.new(seed=seed)
    g.start_deal()
    assert HAND_SIZE == 27
    assert g.hands.shape == (4, NUM_FACES)
    assert g.hands.sum(1).tolist() == [27, 27, 27, 27]
    assert np.array_equal(g.hands.sum(0), np.full(NUM_FACES, 2))
    assert g.played.sum() == 0 and g.cards_total() == 108


def test_r1_2_deal_depends_on_the_seed_only():
    """R-1.2 with DESIGN "Seeds": same seed, same deal; the global RNG plays no part."""
    np.random.seed(1)
    a = Game.new(seed=7)
    a.start_deal()
    np.random.seed(2)
    b = Game.new(seed=7)
    b.start_deal()
    c = Game.new(seed=8)
    c.start_deal()
    assert np.array_equal(a.hands, b.hands) and a.to_act == b.to_act
    assert not np.array_equal(a.hands, c.hands)


# ------------------------------------------------------------------
def test_r1_3_copies_are_interchangeable():
    """R-1.3: only the face matters: two copies of one face are one face count, and a pair
    is the same action whether made of two copies of S5 or of S5 and D5."""
    assert parse_hand("S5 S5")[parse_card("S5")] == 2
    g1 = make_game(["S5 S5 S9", "S3", "S4", "S6"], leader=0)
    g2 = make_game(["S5 D5 S9", "S3", "S4", "S6"], leader=0)
    a1, a2 = action_for(g1, "S5 S5"), action_for(g2, "S5 D5")
    assert a1 == a2 and T.KIND_NAMES[T.KIND[a1]] == "pair"
    g1.step(a1)
    assert g1.hands[0, parse_card("S5")] == 0 and g1.played[0, parse_card("S5")] == 2


# ------------------------------------------------------------------
def test_r1_4_every_face_round_trips():
    """R-1.4: suit letter then rank (S H C D, 2-9 T J Q K A), BJ, RJ; text out == text in."""
    for f in range(NUM_FACES):
        assert parse_card(face_text(f)) == f
    assert [face_text(f) for f in (0, 1, 2, 3)] == ["S2", "H2", "C2", "D2"]
    assert face_text(parse_card("ST")) == "ST"
    assert (face_text(52), face_text(53)) == ("BJ", "RJ")
    assert parse_card("H5") == 3 * 4 + 1


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("S10", "ST"),
        ("H10", "HT"),
        ("♥5", "H5"),
        ("♠A", "SA"),
        ("♣10", "CT"),
        ("♦K", "DK"),
        ("h5", "H5"),
        ("bj", "BJ"),
        ("RJ", "RJ"),
        (" D9 ", "D9"),
    ],
)
def test_r1_4_accepted_input_forms(text, canonical):
    """R-1.4: ``10`` and the suit symbols ♠♥♣♦ are accepted on input; output is canonical."""
    assert face_text(parse_card(text)) == canonical


def test_r1_4_hand_text_in_and_out():
    """R-1.4: a hand written with ``10``, ``♥5``, BJ/RJ is printed back in canonical form."""
    counts = parse_hand("S10 ♥5 BJ RJ RJ H5 DA")
    assert counts.sum() == 7 and counts[parse_card("H5")] == 2 and counts[53] == 2
    assert format_hand(counts) == "H5 H5 ST DA BJ RJ RJ"  # face order
    assert parse_hand("S10, ♥5,BJ").sum() == 3  # commas separate too
    # with a level: level order, the level rank above A, wildcards marked
    assert format_hand(counts, level=parse_rank("5"), mark_wild=True) == "ST DA H5* H5* BJ RJ RJ"
    assert format_cards([53, 52, 32], level=0) == "ST BJ RJ"
    assert parse_hand(["ST", "♦A"]).sum() == 2


# ------------------------------------------------------------------
def test_r2_1_first_deal_is_played_at_2():
    """R-2.1: both teams start at 2; the first deal of a match is played at level 2."""
    g = Game.new(seed=3)
    assert g.levels == [0, 0] and g.leveling_team is None
    g.start_deal()
    assert g.level == parse_rank("2")


@pytest.mark.parametrize(("levels", "lt", "want"), [(("5", "9"), 1, "9"), (("5", "9"), 0, "5")])
def test_r2_1_deal_level_is_the_leveling_teams(levels, lt, want):
    """R-2.1: a deal is played at the leveling team's level (rank N)."""
    g = make_game(["S3", "S4", "S6", "S7"], levels=levels, leveling_team=lt)
    assert g.level == parse_rank(want)


def test_r2_1_parse_rank():
    """R-2.1: levels are written 2 … A (``10`` accepted for T)."""
    assert [parse_rank(r) for r in RANKS] == list(range(13))
    assert parse_rank("10") == parse_rank("T") == 8
    assert parse_rank("a") == 12


# ------------------------------------------------------------------
def test_r2_2_all_eight_level_cards_rank_above_ace():
    """R-2.2: the eight cards of rank N (all suits, both copies) are level cards: at level 7
    each of S7 C7 D7 (and ♥7 played alone) beats an ace."""
    g = make_game(
        ["SA S3", "S7 C7 D7 H7 SK", "S4", "S6"], levels=("7", "2"), leveling_team=0, leader=0
    )
    play(g, "SA")
    assert singles_beating(g) == {"7", "wild"}
    sevens = [a for a in np.flatnonzero(g.legal_mask()) if T.KIND[a] == T.SINGLE and T.KEY[a] == 5]
    assert len(sevens) == 1  # one action whichever natural 7 is spent


# ------------------------------------------------------------------
def test_r2_3_wildcard_in_the_engine():
    """R-2.3: at level 7 ♥7 with S3 is a pair of 3s; alone it is a plain level card."""
    g = make_game(["H7 S3", "S4", "S5", "S6"], levels=("7", "7"), leveling_team=0, leader=0)
    a = action_for(g, "H7 S3")
    assert T.KIND_NAMES[T.KIND[a]] == "pair" and int(T.KEY[a]) == parse_rank("3")
    b = action_for(g, "H7")
    assert T.KIND_NAMES[T.KIND[b]] == "single" and T.KEY[b] == T.LEVEL_KEY


# ------------------------------------------------------------------
def _level_order(level: int) -> list[str]:
    ranks = sorted(range(15), key=lambda r: level_key(4 * r if r < 13 else 39 + r, level))
    return [(RANKS + "LR")[r] for r in ranks]


def test_r2_4_level_order_at_every_level():
    """R-2.4: 2 < 3 < … < A < N < BJ < RJ with N taken out of its place; at N = 2 the 2s
    are above A, otherwise a non-level 2 is the lowest card."""
    assert "".join(_level_order(0)) == "3456789TJQKA2LR"
    assert "".join(_level_order(parse_rank("5"))) == "2346789TJQKA5LR"
    assert "".join(_level_order(12)) == "23456789TJQKALR"
    for lv in range(13):
        order = _level_order(lv)
        assert order[-3:] == [RANKS[lv], "L", "R"]
        natural = [r for r in RANKS if r != RANKS[lv]]
        assert order[:12] == natural


def test_r2_4_level_cards_are_equal_and_wild_is_not_higher():
    """R-2.4: all level cards are equal (♥N included), whatever the suit."""
    lv = parse_rank("9")
    keys = {level_key(parse_card(s + "9"), lv) for s in "SHCD"}
    assert len(keys) == 1
    g = make_game(["S9 S3", "H9 C9 SA", "S4", "S5"], levels=("9", "9"), leveling_team=0, leader=0)
    play(g, "S9")
    assert singles_beating(g) == set()  # neither C9 nor the ♥9 beats S9


@pytest.mark.parametrize(
    ("level", "table", "beaters"),
    [
        ("2", "SA", {"2", "wild", "BJ", "RJ"}),  # N = 2: the 2s are above A
        ("5", "S3", {"4", "A", "5", "wild", "BJ", "RJ"}),  # a non-level 2 is lowest
        ("5", "SA", {"5", "wild", "BJ", "RJ"}),
        ("5", "S5", {"BJ", "RJ"}),
        ("5", "BJ", {"RJ"}),
        ("5", "RJ", set()),
    ],
)
def test_r2_4_following_a_single_uses_level_order(level, table, beaters):
    """R-2.4 applied by the engine (R-5.2): which singles beat the one on the table."""
    lv_hand = f"S{level} H{level}"
    follower = f"S2 S4 SA {lv_hand} BJ RJ" if level != "2" else f"SA {lv_hand} BJ RJ"
    g = make_game(
        [f"{table} S3" if table != "S3" else "S3 S6", follower, "S7", "S8"],
        levels=(level, level),
        leveling_team=0,
        leader=0,
    )
    play(g, table)
    assert singles_beating(g) == beaters
