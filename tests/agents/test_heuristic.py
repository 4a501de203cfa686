"""The heuristic agent's table rules (``agents.heuristic``): go out, lead low, spare the
partner, bomb or feed when a seat is about to go out, low tribute returns, speed."""

from __future__ import annotations

import numpy as np

from agents import HeuristicAgent
from experiments.evaluation.duplicate import LazyObservation
from guandan_env.core import actions as T
from guandan_env.core import movegen
from guandan_env.core.cards import parse_hand, parse_rank
from guandan_env.core.text import declaration_text
from guandan_env.envs.aec import AGENTS, SeatView, raw_env


# ------------------------------------------------------------------------------ table rules
def _view(hand: str, level: str = "2", table=None, table_seat=-1, cards_left=None, seat=0):
    counts = parse_hand(hand)
    lv = parse_rank(level)
    left = cards_left or [20, 20, 20, 20]
    left[seat] = int(counts.sum())
    view = SeatView(
        seat=seat,
        level=lv,
        hand=counts,
        phase="play",
        table_action=-1 if table is None else table,
        table_seat=table_seat,
        cards_left=left,
        finish_order=[],
        levels=[lv, lv],
        leveling_team=0,
        history=[],
        tribute_faces={},
    )
    mask = movegen.play_mask(counts, lv, table)
    return {"action_mask": mask.astype(np.int8)}, {"view": view}


def _single(rank: str) -> int:
    return 1 + parse_rank(rank)


def test_heuristic_goes_out_when_one_play_empties_the_hand():
    obs, info = _view("S9 H9 C9 SK HK")
    a = HeuristicAgent().act(obs, info)
    assert declaration_text(a, "2") == "full_house 999-KK"


def test_heuristic_leads_low_and_keeps_strong_cards():
    obs, info = _view("S3 S7 S7 SQ HA BJ RJ D8 D8 C8")
    a = HeuristicAgent().act(obs, info)
    assert T.KIND[a] != T.SINGLE or T.KEY[a] < parse_rank("Q")
    assert T.KEY[a] not in (13, 14)


def test_heuristic_does_not_overtake_partner_or_bomb_early():
    hand = "S5 H6 C7 S8 D9 SJ SJ DQ S4 H4 C4 D4 HA"
    obs, info = _view(hand, table=_single("9"), table_seat=2)  # partner's 9
    assert HeuristicAgent().act(obs, info) == T.PASS_ACTION
    # an opponent with many cards played an ace: no bomb
    obs, info = _view(hand, table=_single("A"), table_seat=1, cards_left=[0, 25, 20, 25])
    assert HeuristicAgent().act(obs, info) == T.PASS_ACTION


def test_heuristic_bombs_an_opponent_about_to_go_out():
    hand = "S5 H6 C7 S8 D9 SJ SJ DQ S4 H4 C4 D4"
    obs, info = _view(hand, table=_single("A"), table_seat=1, cards_left=[0, 2, 20, 25])
    a = HeuristicAgent().act(obs, info)
    assert declaration_text(a, "2") == "bomb 4x4"


def test_heuristic_feeds_a_partner_about_to_go_out():
    obs, info = _view("S3 S9 S9 C9 DK DK HA", cards_left=[0, 12, 1, 12])
    a = HeuristicAgent().act(obs, info)
    assert declaration_text(a, "2") == "single 3"


def test_heuristic_chooses_a_legal_low_tribute_return():
    env = raw_env(mode="deal")
    for seed in range(10):
        env.reset(seed=seed, options={"previous_order": [0, 1, 2, 3]})
        name = env.agent_selection
        if env.game.phase != "return":
            continue
        obs = LazyObservation(env, name)
        a = HeuristicAgent().act(obs, env.infos[name])
        assert T.KIND[a] == T.RETURN and obs["action_mask"][a]
        env.step(a)
        assert AGENTS.index(env.agent_selection) in range(4)


def test_heuristic_decisions_are_fast():
    import time

    env = raw_env(mode="deal", random_levels=True, random_tribute=True)
    agent, n, t = HeuristicAgent(), 0, 0.0
    for seed in range(4):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            name = env.agent_selection
            obs, info = LazyObservation(env, name), env.infos[name]
            t0 = time.perf_counter()
            a = agent.act(obs, info)
            t += time.perf_counter() - t0
            n += 1
            env.step(a)
    assert t / n < 0.02  # generous bound for a loaded CI machine; typical is < 1 ms
