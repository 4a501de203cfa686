"""Golden tests of RULES.md R-8 (information): every observation slice (``OBS_SLICES``) is
recomputed here from the engine state, for every observing seat, and compared whole; the
relative-seat rotation (relative k = absolute (seat + k) % 4) is checked on each; hidden
information must not leak (a return card is seen by the two exchanging seats only; other
seats' hands never show).
"""

from __future__ import annotations

import numpy as np

from guandan_env.core import actions as T
from guandan_env.core.cards import NUM_FACES, face_text, level_rank_value, parse_card
from guandan_env.core.engine import Game
from guandan_env.encoding.observation import MAX_CARDS, OBS_DIM, OBS_SLICES
from guandan_env.envs.aec import raw_env
from helpers.rules import (
    card_bits,
    give_back,
    hands_array,
    make_game,
    obs_parts,
    observation,
    one_hot,
    pass_,
    play,
)

KINDS = len(T.KIND_NAMES)


def expected_obs(g: Game, seat: int) -> dict[str, np.ndarray]:
    """Every slice of ``seat``'s observation, derived from the engine state and R-8."""
    rel = [(seat + k) % 4 for k in range(4)]
    team = seat % 2
    following = g.phase == "play" and g.table_action >= 0
    e: dict[str, np.ndarray] = {}
    e["hand"] = card_bits(g.hands[seat])
    e["played"] = np.concatenate([card_bits(g.played[s]) for s in rel])
    e["unseen"] = card_bits(2 - g.hands[seat].astype(int) - g.played.sum(0).astype(int))
    e["table_cards"] = card_bits(g.last_cards[g.table_seat] if following else np.zeros(54))
    e["recent_cards"] = np.concatenate([card_bits(g.last_cards[s]) for s in rel[1:]])
    e["cards_left"] = np.concatenate([one_hot(MAX_CARDS + 1, int(g.hands[s].sum())) for s in rel])
    a = g.table_action
    e["table_kind"] = one_hot(KINDS, int(T.KIND[a]) if following else 0)
    if following:
        key = int(T.KEY[a])
        if key == T.LEVEL_KEY:
            value = 12
        elif T.KIND[a] in T.SEQUENCE_KINDS:
            value = key
        else:
            value = level_rank_value(key, g.level)
        e["table_value"] = one_hot(17, value)
        e["table_seat"] = one_hot(5, (g.table_seat - seat) % 4)
    else:
        e["table_value"] = one_hot(17, 16)
        e["table_seat"] = one_hot(5, 4)
    e["recent_moves"] = np.concatenate([one_hot(3, g.move_in_trick[s]) for s in rel[1:]])
    e["deal_level"] = one_hot(13, g.level)
    e["team_levels"] = np.concatenate(
        [one_hot(13, g.levels[team]), one_hot(13, g.levels[1 - team])]
    )
    lt = g.leveling_team
    e["leveling_team"] = one_hot(3, 2 if lt is None else int(lt != team))
    e["a_failures"] = np.concatenate(
        [one_hot(3, g.a_failures[team]), one_hot(3, g.a_failures[1 - team])]
    )
    order = g.result.order if g.result is not None else g.finish_order

    def place(s: int) -> int:
        if s not in order:
            return 0
        if g.result is not None and g.result.double_down and order.index(s) >= 2:
            return 4  # both losers of a 双下 count last
        return order.index(s) + 1

    e["finish_place"] = np.concatenate([one_hot(5, place(s)) for s in rel])
    e["phase"] = one_hot(3, 2 if g.phase == "return" else int(following))
    given = {t.giver: t.face for t in g.tributes}
    e["tribute_given"] = np.concatenate(
        [one_hot(NUM_FACES, given[s]) if s in given else np.zeros(NUM_FACES) for s in rel]
    )
    received = {t.receiver for t in g.tributes}
    e["tribute_received"] = np.array([s in received for s in rel], dtype=np.float32)
    e["return_given"] = np.zeros(NUM_FACES)
    e["return_received"] = np.zeros(NUM_FACES)
    for t in g.tributes:
        if t.returned >= 0 and t.receiver == seat:
            e["return_given"] = one_hot(NUM_FACES, t.returned)
        if t.returned >= 0 and t.giver == seat:
            e["return_received"] = one_hot(NUM_FACES, t.returned)
    made = {t.receiver for t in g.tributes if t.returned >= 0}
    e["returns_made"] = np.array([s in made for s in rel], dtype=np.float32)
    e["resisted"] = np.array([float(g.resisted)])
    shown = [g.resist_jokers.count(s) for s in rel]
    e["resist_jokers"] = np.array([[n >= 1, n >= 2] for n in shown], dtype=np.float32).ravel()
    e["table_bomb_power"] = np.array([0.0])  # only non-bomb plays in these scenarios
    return e


def check_all_slices(g: Game) -> None:
    assert set(OBS_SLICES) == set(expected_obs(g, 0))
    assert sum(s.stop - s.start for s in OBS_SLICES.values()) == OBS_DIM
    for seat in range(4):
        got = obs_parts(observation(g, seat))
        want = expected_obs(g, seat)
        for name in OBS_SLICES:
            assert np.array_equal(got[name], want[name]), (seat, name)


def tribute_scenario(returned: str = "S4") -> Game:
    """Deal at level 5 (team 0 leveling, one A-failure for team 1 kept at 0); seat 3 was
    last and gives BJ to seat 0, which returns ``returned``."""
    g = make_game(
        ["S4 S6 SJ", "S8 S9", "ST SQ", "BJ S3 D7"],
        levels=("5", "9"),
        leveling_team=0,
        a_failures=(1, 0),
        previous_order=[0, 1, 2, 3],
    )
    give_back(g, returned)
    return g


# ------------------------------------------------------------------
def test_r8_1_every_slice_matches_the_engine_at_each_stage():
    """R-8.1: own hand, plays and who made them, cards left per seat, both team levels, the
    deal's level, the leveling team, the finishing order so far — and R-8.2's tribute
    facts — for every observer, relative seats rotated, at each stage of a deal."""
    g = make_game(
        ["S4 S6 SJ", "S8 S9", "ST SQ", "BJ S3 D7"],
        levels=("5", "9"),
        leveling_team=0,
        a_failures=(1, 0),
        previous_order=[0, 1, 2, 3],
    )
    check_all_slices(g)  # return phase, before the return
    give_back(g, "S4")
    check_all_slices(g)  # leading
    play(g, "S3")  # seat 3 (the giver) leads
    check_all_slices(g)
    play(g, "S6")  # seat 0
    pass_(g)  # seat 1
    play(g, "ST")  # seat 2
    check_all_slices(g)  # following a T played by seat 2, with mixed recent moves
    pass_(g, 3)
    assert g.to_act == 2
    check_all_slices(g)  # seat 2 leads a fresh trick: recent moves cleared
    play(g, "SQ")  # seat 2 goes out first
    check_all_slices(g)
    pass_(g)  # seat 3
    play(g, "BJ")  # seat 0
    check_all_slices(g)  # a joker on the table
    pass_(g, 2)
    play(g, "SJ")  # seat 0 out second: 双下, deal over
    assert g.deal_over and g.result.order[:2] == [2, 0]
    check_all_slices(g)


def test_r8_1_cards_held_by_a_tribute_receiver_before_its_return():
    """R-7.1, R-8.1: until it returns a card, a tribute receiver of a full deal holds 28 cards;
    every observer sees 28 in that seat's block of ``cards_left`` and one value per block
    (regression: 28 used to spill into the next slice)."""
    for order in ([0, 1, 2, 3], [0, 2, 1, 3]):  # single tribute, then double (双下)
        g = Game.new(seed=7)
        g.levels = [4, 4]
        g.leveling_team = 0
        g.start_deal(previous_order=order)
        if g.resisted:
            continue
        assert g.phase == "return" and 28 in g.hands.sum(1).tolist()
        check_all_slices(g)
        for seat in range(4):
            blocks = obs_parts(observation(g, seat))["cards_left"].reshape(4, MAX_CARDS + 1)
            assert blocks.sum(1).tolist() == [1, 1, 1, 1]
            held = [int(g.hands[(seat + k) % 4].sum()) for k in range(4)]
            assert blocks.argmax(1).tolist() == held


def test_r8_1_observation_values_by_hand():
    """R-8.1, spelled out for one position (seat 1 observing, seat 2 made the last play)."""
    g = tribute_scenario()
    play(g, "S3")
    play(g, "S6")
    pass_(g)
    play(g, "ST")
    o = obs_parts(observation(g, 1))
    assert np.array_equal(o["hand"], card_bits(hands_array(["S8 S9", "", "", ""])[0]))
    held = o["cards_left"].reshape(4, MAX_CARDS + 1).argmax(1)
    assert held.tolist() == [2, 1, 2, 2]  # self, 2, 3, 0
    assert o["table_seat"].argmax() == 1  # seat 2 is the next seat after seat 1
    assert o["table_kind"].argmax() == T.SINGLE
    assert o["deal_level"].argmax() == 3  # level 5
    assert o["team_levels"].reshape(2, 13).argmax(1).tolist() == [7, 3]  # own 9, other 5
    assert o["leveling_team"].argmax() == 1  # the other team
    assert o["a_failures"].reshape(2, 3).argmax(1).tolist() == [0, 1]
    assert o["phase"].argmax() == 1  # following
    played = o["played"].reshape(4, 54, 2)[..., 0]
    assert [face_text(int(f)) for f in np.flatnonzero(played[1])] == ["ST"]  # by seat 2
    assert [face_text(int(f)) for f in np.flatnonzero(played[2])] == ["S3"]  # by seat 3
    assert [face_text(int(f)) for f in np.flatnonzero(played[3])] == ["S6"]  # by seat 0


def test_r8_1_finish_places_after_a_double_down():
    """R-8.1: the finishing order so far is shown; after a 双下 both losers are last."""
    g = make_game(["S3", "S4 S8", "S5", "S6 S9"], leader=0)
    play(g, "S3")
    pass_(g)
    play(g, "S5")
    assert g.deal_over
    for seat in range(4):
        places = obs_parts(observation(g, seat))["finish_place"].reshape(4, 5).argmax(1)
        absolute = [int(places[(s - seat) % 4]) for s in range(4)]
        assert absolute[0] == 1 and absolute[2] == 2 and absolute[1::2] == [4, 4]


def test_r8_1_other_hands_never_show():
    """R-8.1: a seat sees its own hand only: moving cards between two other seats (same
    counts) leaves its observation unchanged, in the middle of a random deal."""
    rng = np.random.default_rng(4)
    g = Game.new(seed=4)
    g.start_deal()
    for _ in range(23):
        legal = np.flatnonzero(g.legal_mask())
        g.step(int(legal[rng.integers(legal.size)]))
    for seat in range(4):
        a, b = (seat + 1) % 4, (seat + 3) % 4  # the two opponents
        x = next(f for f in range(54) if g.hands[a, f] and not g.hands[b, f])
        y = next(f for f in range(54) if g.hands[b, f] and not g.hands[a, f])
        before = observation(g, seat)
        h = g.hands.copy()
        g.hands[a, x] -= 1
        g.hands[b, x] += 1
        g.hands[b, y] -= 1
        g.hands[a, y] += 1
        assert np.array_equal(observation(g, seat), before)
        g.hands = h


# ------------------------------------------------------------------
def test_r8_2_tribute_cards_are_public():
    """R-8.2: the tribute card (BJ from seat 3 to seat 0) is shown to every seat, at the
    giver's relative seat, together with who received."""
    g = tribute_scenario()
    for seat in range(4):
        o = obs_parts(observation(g, seat))
        given = o["tribute_given"].reshape(4, 54)
        k = (3 - seat) % 4
        assert np.flatnonzero(given.sum(1)).tolist() == [k]
        assert np.flatnonzero(given[k]).tolist() == [parse_card("BJ")]
        assert np.flatnonzero(o["tribute_received"]).tolist() == [(0 - seat) % 4]


def test_r8_2_return_card_seen_only_by_the_two_exchanging_seats():
    """R-8.2: the return card is in the observation of the returner and the giver only;
    everyone sees who returned to whom. The other two seats' observations do not depend on
    which card was returned."""
    g4, g6 = tribute_scenario("S4"), tribute_scenario("S6")
    for seat in range(4):
        o = obs_parts(observation(g4, seat))
        assert np.flatnonzero(o["returns_made"]).tolist() == [(0 - seat) % 4]
        ret_given = np.flatnonzero(o["return_given"]).tolist()
        ret_recv = np.flatnonzero(o["return_received"]).tolist()
        assert ret_given == ([parse_card("S4")] if seat == 0 else [])
        assert ret_recv == ([parse_card("S4")] if seat == 3 else [])
    for seat in (1, 2):
        assert np.array_equal(observation(g4, seat), observation(g6, seat))
    for seat in (0, 3):
        assert not np.array_equal(observation(g4, seat), observation(g6, seat))


def test_r8_2_double_tribute_returns_private_per_pair():
    """R-8.2 with a double tribute: each return is seen by its own pair of seats only."""
    g = make_game(
        ["S4 S6", "BJ S3", "ST S7", "SA S8"],
        levels=("5", "9"),
        leveling_team=0,
        previous_order=[0, 2, 1, 3],
    )
    give_back(g, "S4")  # seat 0 to seat 1
    give_back(g, "S7")  # seat 2 to seat 3
    check_all_slices(g)
    seen = {
        s: (
            np.flatnonzero(obs_parts(observation(g, s))["return_given"]).tolist(),
            np.flatnonzero(obs_parts(observation(g, s))["return_received"]).tolist(),
        )
        for s in range(4)
    }
    s4, s7 = parse_card("S4"), parse_card("S7")
    assert seen == {0: ([s4], []), 1: ([], [s4]), 2: ([s7], []), 3: ([], [s7])}


def test_r8_2_resistance_is_public():
    """R-8.2: a resisted tribute is shown to everyone."""
    g = make_game(
        ["S4 S6", "S8", "S9", "RJ RJ S3"],
        levels=("5", "9"),
        leveling_team=0,
        previous_order=[0, 1, 2, 3],
    )
    assert g.resisted
    check_all_slices(g)
    assert all(obs_parts(observation(g, s))["resisted"][0] == 1 for s in range(4))


def test_r8_2_resisting_side_shows_its_big_jokers():
    """R-8.2: a resisting side shows its big jokers, so an observer can tell a resistance
    with both RJ in seat 1 from one with an RJ in each of seats 1 and 3."""
    both = make_game(
        ["S4 S6", "RJ RJ S3", "S5 S7", "S8 S9 ST"],
        levels=("5", "9"),
        leveling_team=0,
        previous_order=[0, 2, 1, 3],
        leader=0,
    )
    split = make_game(
        ["S4 S6", "RJ S9 S3", "S5 S7", "S8 RJ ST"],
        levels=("5", "9"),
        leveling_team=0,
        previous_order=[0, 2, 1, 3],
        leader=0,
    )
    assert both.resisted and split.resisted
    assert sorted(both.resist_jokers) != sorted(split.resist_jokers)
    assert not np.array_equal(observation(both, 0), observation(split, 0))


# ------------------------------------------------------------------ R-8 through the AEC env
def _strings(x) -> list[str]:
    if isinstance(x, str):
        return [x]
    if isinstance(x, dict):
        return [s for v in x.values() for s in _strings(v)]
    if isinstance(x, list | tuple):
        return [s for v in x for s in _strings(v)]
    return []


TRIBUTE_OPTIONS = {
    "hands": ["S4 S6 SJ", "S8 S9", "ST SQ", "BJ S3 D7"],
    "levels": ["5", "9"],
    "leveling_team": 0,
    "previous_order": [0, 1, 2, 3],
}


def test_r8_env_observation_is_the_encoders_and_mask_only_for_the_actor():
    """R-8 in the AEC env: ``observe`` gives the encoder's observation of that seat; only the
    agent to act has a non-zero action mask."""
    e = raw_env()
    e.reset(seed=0, options=TRIBUTE_OPTIONS)
    g = e.game
    assert e.agent_selection == "player_0" and g.phase == "return"
    for s, agent in enumerate(e.possible_agents):
        ob = e.observe(agent)
        assert np.array_equal(ob["observation"], observation(g, s))
        assert ob["action_mask"].any() == (agent == "player_0")
    view = e.infos["player_0"]["view"]
    assert view.cards_left == [4, 2, 2, 2] and view.tribute_faces == {3: parse_card("BJ")}
    assert view.levels == g.levels and view.leveling_team == 0 and view.finish_order == []


def test_r8_2_env_infos_do_not_reveal_the_return_card():
    """R-8.2: after a return, the two seats not in the exchange get no text naming the
    returned card (they may learn who returned to whom)."""
    e = raw_env()
    e.reset(seed=0, options=TRIBUTE_OPTIONS)
    e.step(T.return_action(parse_card("S4")))
    leaks = {
        agent: s
        for agent in ("player_1", "player_2")
        for s in _strings(e.infos[agent])
        if "S4" in s
    }
    assert not leaks, f"return card S4 visible to other seats: {leaks}"


def test_r8_2_typed_events_show_the_return_card_to_the_exchange_only():
    """R-8.2 in ``env.events``: the ``Returned`` event words the card for the returner and
    the giver only; the terminal player's deal log (``raw_deal_log``) and the narrator of
    ``experiments.hosts.play`` read it, so a seat outside the exchange never sees the card."""
    import io

    from agents.human import Console, HumanPlayer
    from guandan_env.encoding.events import DealStarted, Played, Returned

    e = raw_env()
    e.reset(seed=0, options=TRIBUTE_OPTIONS)
    assert isinstance(e.events[0], DealStarted) and e.events[0].tributes
    e.step(T.return_action(parse_card("S4")))
    ev = e.events[-1]
    assert isinstance(ev, Returned) and (ev.seat, ev.face) == (0, parse_card("S4"))
    for viewer in range(4):
        assert ("S4" in ev.text(viewer)) == (viewer in (ev.seat, ev.to)), viewer
    assert "S4" in e.log[-1]  # the omniscient text log
    e.step(int(np.flatnonzero(e._mask)[0]))  # the leader plays
    assert isinstance(e.events[-1], Played) and e.log[-1] == e.events[-1].text()
    for seat in range(4):
        console = Console(io.StringIO(), io.StringIO())
        lines = HumanPlayer(console, seat, ["a", "b", "c", "d"], e, 20).raw_deal_log()
        assert len(lines) == 2 and ("S4" in lines[0]) == (seat in (ev.seat, ev.to)), lines
