"""The terminal player ``python -m experiments.hosts.play``, driven through stdin.

A scripted "human" that always answers ``1`` (the first listed play; passes happen by
themselves when nothing beats the table) must finish a deal; bad input gets a message and
never a traceback; the saved replay reproduces the game.
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

from experiments.hosts import play
from guandan_env.core import actions as T
from guandan_env.core.cards import parse_card, parse_hand, parse_rank
from guandan_env.core.movegen import lead_mask
from guandan_env.envs.replay import load, replay_game

ONES = "1\n" * 400


def run(argv: list[str], text: str) -> tuple[int, str]:
    out = io.StringIO()
    code = play.main(argv, stdin=io.StringIO(text), stdout=out)
    return code, out.getvalue()


def test_plays_a_full_deal_and_saves_a_replay(tmp_path):
    path = tmp_path / "deal.json"
    code, out = run(["--seed", "3", "--save-replay", str(path)], ONES)
    assert code == 0
    assert "Deal 1 at level 2" in out and "Your hand (27):" in out
    assert "== your turn (seat 0)" in out and "Cards left:" in out
    assert "----- Deal over:" in out and "Levels: your team" in out
    assert "Traceback" not in out
    rep = load(path)
    from agents.zoo import default_opponent

    # no agent named: the strongest shipped model partners and opposes
    assert default_opponent().startswith("pretrained:")
    assert rep.meta["human_seat"] == 0 and rep.meta["specs"]["2"] == default_opponent()
    game = replay_game(rep)  # verifies the recorded final state
    assert game.deal_over


def test_plays_a_match_with_tribute_returns(tmp_path):
    path = tmp_path / "match.json"
    argv = ["--seed", "4", "--seat", "1", "--mode", "match", "--max-deals", "3"]
    argv += ["--partner", "random", "--opponents", "random", "--save-replay", str(path)]
    code, out = run(argv, ONES * 5)
    assert code == 0, out
    assert out.count("----- Deal over:") == 3
    assert "Tribute" in out or "resisted" in out
    assert replay_game(load(path)).deal_number == 3


def test_module_runs_as_a_subprocess():
    r = subprocess.run(
        [sys.executable, "-m", "experiments.hosts.play", "--seed", "5", "--opponents", "random"],
        input=ONES,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "----- Deal over:" in r.stdout and not r.stderr


def test_bad_input_gets_messages_not_crashes():
    script = "\n".join(
        ["", "xyz", "999", "-4", "p", "l nonsense", "S3 S3 S3", "ZZ9", "h", "l", "l sf", "t", "log"]
    )
    code, out = run(["--seed", "6", "--partner", "random", "--opponents", "random"], script)
    assert code == 0
    assert "neither a command nor a card" in out
    assert "There is no choice 999" in out
    assert "you must play, passing is not allowed (R-5.1)" in out
    assert "Unknown kind 'nonsense'" in out
    assert "You do not hold" in out
    assert "Commands on your turn" in out
    assert "Game abandoned (end of input)" in out
    assert "Traceback" not in out


def test_quit_still_saves_the_replay(tmp_path):
    path = tmp_path / "q.json"
    code, out = run(["--seed", "2", "--save-replay", str(path)], "1\nq\n")
    assert code == 0 and "Game abandoned (quit)" in out and "Replay saved" in out
    replay_game(load(path))  # a partial game replays and verifies too


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--opponents", "nonsense"], "unknown agent spec 'nonsense'"),
        (["--partner", "checkpoint:/no/such/dir"], "cannot make the agent for seat 2"),
        (["--mode", "match", "--max-deals", "0"], "--max-deals must be at least 1"),
    ],
)
def test_bad_arguments(argv, message):
    code, out = run(argv, "")
    assert code == 2 and message in out


def test_each_wildcard_reading_is_a_separate_choice():
    level = parse_rank("2")
    hand = parse_hand("S3 S4 S5 S6 H2 DK")
    choices = play.list_choices(lead_mask(hand, level), hand, level)
    found = play.choices_for_cards(choices, [parse_card(c) for c in "S3 S4 S5 S6 H2".split()], 0)
    labels = {c.label for c in found}
    assert labels == {
        "straight 2-3-4-5-6 (H2 as 2)",
        "straight 3-4-5-6-7 (H2 as 7)",
        "straight flush S 2-3-4-5-6 (H2 as 2)",
        "straight flush S 3-4-5-6-7 (H2 as 7)",
    }
    assert len({c.number for c in found}) == 4
    assert all(c.cards == "S3 S4 S5 S6 H2*" for c in found)


def test_labels_and_order():
    level = parse_rank("2")
    hand = parse_hand("S3 C3 D4 S5 D5 H2 BJ BJ RJ RJ")
    choices = play.list_choices(lead_mask(hand, level), hand, level)
    labels = [c.label for c in choices]
    assert "three pairs 33-44-55 (H2 as 4)" in labels
    assert labels[-1] == "four jokers BJ-BJ-RJ-RJ"  # the highest bomb is listed last
    kinds = [c.kind for c in choices]
    assert kinds.index(T.SINGLE) < kinds.index(T.PAIR) < kinds.index(T.THREE_PAIRS)
    assert [c.number for c in choices] == list(range(1, len(choices) + 1))
    assert play.hand_text(hand, level) == "S3 C3  D4  S5 D5  H2*  BJ BJ  RJ RJ"


def test_hand_is_in_level_order():
    level = parse_rank("7")
    hand = parse_hand("S2 SA D7 H7 C8 BJ")
    assert play.hand_text(hand, level) == "S2  C8  SA  D7  H7*  BJ"
    assert np.array_equal(hand, parse_hand("S2 SA D7 H7 C8 BJ"))
