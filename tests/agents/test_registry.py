"""Baseline agents: legality over many seeded deals, determinism, hand splitting, table rules."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from agents import HeuristicAgent, RandomAgent, make_agent
from agents.base import Agent
from agents.hand_split import best_split, component_action, rank_state, split_cost
from agents.registry import agent_identity, entries, parse_heuristic_params
from experiments.evaluation.duplicate import LazyObservation, play_game
from guandan_env.core import actions as T
from guandan_env.core import movegen
from guandan_env.core.cards import parse_hand, parse_rank
from guandan_env.core.text import action_text, declaration_text
from guandan_env.envs.aec import AGENTS, SeatView, raw_env


class CheckingAgent:
    """Wraps an agent and asserts every action it picks is in the mask."""

    def __init__(self, inner: Agent) -> None:
        self.inner, self.name, self.moves = inner, inner.name, 0

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    @property
    def table_observer(self):  # an agent that watches the table (remote seats) keeps doing so
        return getattr(self.inner, "table_observer", None)

    def act(self, observation, info) -> int:
        a = self.inner.act(observation, info)
        assert isinstance(a, int)
        assert observation["action_mask"][a] == 1, f"{self.name} chose illegal action {a}"
        self.moves += 1
        return a


@pytest.mark.parametrize(
    "config",
    [
        {"mode": "deal"},
        {"mode": "deal", "random_levels": True, "random_tribute": True},
        {"mode": "match", "max_deals": 3},
    ],
)
def test_agents_only_play_legal_actions(config):
    specs = ["heuristic", "random", "heuristic", "heuristic"]
    for seed in range(8):
        seats = [CheckingAgent(make_agent(specs[(s + seed) % 4], seed=s)) for s in range(4)]
        rec = play_game(seats, seed, config)
        assert rec["deals"], "a game must finish at least one deal"
        assert all(a.moves > 0 or a.name == "random" for a in seats)
        assert sum(rec["team_gain"]) == 0


def test_random_agent_is_seeded_and_uniform_over_legal():
    mask = np.zeros(T.NUM_ACTIONS, dtype=np.int8)
    mask[[3, 7, 11]] = 1
    obs = {"action_mask": mask}
    a, b = RandomAgent(seed=1), RandomAgent(seed=1)
    xs = [a.act(obs, {}) for _ in range(300)]
    assert xs == [b.act(obs, {}) for _ in range(300)]
    assert set(xs) == {3, 7, 11}
    a.reset(seed=1)
    assert [a.act(obs, {}) for _ in range(300)] == xs


def test_games_are_deterministic_given_the_seed():
    cfg = {"mode": "deal", "random_levels": True, "random_tribute": True}
    for spec in ("heuristic", "random"):
        runs = [play_game([make_agent(spec), make_agent("random")] * 2, 123, cfg) for _ in range(2)]
        assert runs[0] == runs[1]


def test_agents_follow_the_protocol():
    """Not just the methods' presence: reset and act on real decisions, legal ids back."""
    env = raw_env(mode="deal", random_levels=True, random_tribute=True)
    for spec in ("random", "heuristic", "heuristic:danger_cards=3,follow_threshold=-0.3"):
        agent = make_agent(spec, seed=0)
        assert isinstance(agent, Agent) and isinstance(agent.name, str) and agent.name
        agent.reset(seed=1)
        env.reset(seed=5)
        for _ in range(40):
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                break
            a = agent.act(obs, info)
            assert isinstance(a, int) and obs["action_mask"][a], (spec, a)
            env.step(a)


# --------------------------------------------------------------------- every registered kind
def _tiny_policy(tmp_path) -> str:
    from agents.candidate_net import CandidateNet
    from agents.policy_file import save_policy

    net = CandidateNet({"trunk": [16], "cand": [8]})
    return str(save_policy(tmp_path, net, net.model_config))


# specs of the kinds that cannot be built from their bare name (a new such kind must add one)
def _remote_clients(tmp_path, request) -> str:
    """``remote:PORT`` with four of our own clients (heuristic) connecting as it starts."""
    import os
    import signal
    import socket
    import subprocess
    import threading
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    clients: list[subprocess.Popen] = []

    def connect() -> None:
        for k in range(4):
            for _ in range(200):
                c = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "agents.remote",
                        "--agent",
                        "heuristic",
                        "--url",
                        f"ws://127.0.0.1:{port}/game/client{k}",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                try:
                    c.wait(timeout=0.5)  # left at once: the server is not up yet
                    time.sleep(0.1)
                except subprocess.TimeoutExpired:
                    clients.append(c)
                    break

    threading.Thread(target=connect, daemon=True).start()

    def stop() -> None:
        for c in clients:
            os.killpg(c.pid, signal.SIGKILL)
            c.wait()

    request.addfinalizer(stop)
    return f"remote:{port}"


EXAMPLES = {
    "checkpoint": lambda tmp_path, request: f"checkpoint:{_tiny_policy(tmp_path)}",
    "remote": _remote_clients,
}


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e.name)
def test_every_registered_agent_plays_legally_and_deterministically(entry, tmp_path, request):
    """Each agent kind in the registry, with no test of its own needed: it follows the
    protocol, plays only legal actions in whole deals (tribute included) and the same seeds
    give the same games."""
    spec = EXAMPLES[entry.name](tmp_path, request) if entry.name in EXAMPLES else entry.name
    assert entry.help.split()[0].split(":")[0].split("[")[0] == entry.name
    cfg = {"mode": "deal", "random_levels": True, "random_tribute": True}
    records = []
    for _ in range(2):
        seats = [CheckingAgent(make_agent(spec, seed=s)) for s in range(4)]
        assert all(isinstance(a.inner, Agent) and a.name for a in seats)
        records.append([play_game(seats, seed, cfg) for seed in (3, 4)])
        assert all(a.moves > 0 for a in seats)
    assert records[0] == records[1]
    assert hash(agent_identity(spec)) is not None


def test_a_registered_plug_in_is_listed_and_built():
    from agents import registry

    entry = registry.register(
        "always_random", lambda arg, seed: RandomAgent(seed=seed), "always_random  a test kind"
    )
    try:
        assert "always_random" in registry.agent_specs()
        assert isinstance(make_agent("always_random#2", seed=1), RandomAgent)
        with pytest.raises(ValueError, match="registered already"):
            registry.register("always_random", entry.factory, entry.help)
    finally:
        registry._REGISTRY.pop("always_random")


def test_registry_errors_are_clear(monkeypatch):
    with pytest.raises(ValueError, match="unknown agent spec"):
        make_agent("alphago")
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_heuristic_params("nonsense=1")
    with pytest.raises(ValueError, match="needs a int"):
        parse_heuristic_params("danger_cards=x")
    assert parse_heuristic_params("bomb_cards=3").bomb_cards == 3
    with pytest.raises(ValueError, match="needs an argument"):
        make_agent("checkpoint")
    with pytest.raises(ValueError, match="takes no"):
        make_agent("random:3")
    monkeypatch.setitem(sys.modules, "agents.checkpoint", None)
    with pytest.raises(ValueError, match="checkpoint loader"):
        make_agent("checkpoint:/no/such/file")


# ------------------------------------------------------------------------------ hand split
def _split(text: str, level: str = "2") -> list[str]:
    lv = parse_rank(level)
    _, comps = best_split(rank_state(parse_hand(text), lv), lv)
    return sorted(action_text(component_action(c), lv) for c in comps)


def test_split_finds_sequences_and_full_houses():
    assert _split("S3 H4 C5 D6 S7") == ["straight 3-4-5-6-7"]
    assert _split("S3 H3 C4 D4 S5 H5") == ["three_pairs 33-44-55"]
    assert _split("S9 H9 C9 SK HK") == ["full_house 999-KK"]
    assert _split("S8 H8 C8 D8") == ["bomb 8x4"]
    assert _split("BJ BJ RJ RJ") == ["four_jokers BJ-BJ-RJ-RJ"]


def test_split_uses_wildcards_where_they_save_plays():
    # at level 2 the two H2 are wildcards: 3-4-_-6-7 becomes one straight
    assert _split("S3 C4 D6 S7 H2") == ["straight 3-4-5-6-7 (1 wild)"]
    # a wildcard joins a lone card rather than stay a second play
    assert _split("S3 H2") == ["pair 33 (1 wild)"]
    # two wildcards turn a triple into a 5-card bomb
    assert _split("S3 D3 C3 S9 D9 H2 H2") == ["bomb 3x5 (2 wild)", "pair 99"]


def test_split_components_are_legal_leads():
    rng = np.random.default_rng(0)
    deck = np.repeat(np.arange(54), 2)
    for _ in range(30):
        cards = rng.permutation(deck)[: rng.integers(5, 28)]
        hand = np.bincount(cards, minlength=54).astype(np.uint8)
        level = int(rng.integers(13))
        cost, comps = best_split(rank_state(hand, level), level)
        mask = movegen.lead_mask(hand, level)
        used = np.zeros(15, dtype=np.int64)
        wilds = 0
        for c in comps:
            a = component_action(c)
            assert a > 0
            used += T.NAT[a]
            wilds += int(T.WILDS[a])
            if T.KIND[a] != T.STRAIGHT:  # a one-suit plain straight is illegal
                assert mask[a], action_text(a, level)
        c13, bj, rj, w = rank_state(hand, level)
        assert used.tolist() == [*c13, bj, rj] and wilds == w
        assert cost == pytest.approx(split_cost(rank_state(hand, level), level))


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
