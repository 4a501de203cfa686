"""Every agent (``agents.registry``): legality over many seeded deals, determinism, the
protocol, plug-ins and registry errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from agents import RandomAgent, make_agent
from agents.base import Agent
from agents.registry import agent_identity, entries, parse_heuristic_params
from experiments.evaluation.duplicate import play_game
from guandan_env.core import actions as T
from guandan_env.envs.aec import raw_env


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
    "pretrained": lambda tmp_path, request: "pretrained:default",
    "remote": _remote_clients,
    # searches only near the end of a deal, with few worlds: whole deals stay cheap
    "search": lambda tmp_path, request: (
        f"search:worlds=2,candidates=2,unsure=0,close=2:checkpoint:{_tiny_policy(tmp_path)}"
    ),
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


def test_checkpoint_spec_plays_the_average_or_with_weights_raw_the_trained_weights(tmp_path):
    """``checkpoint:PATH`` plays the run's moving average of the weights;
    ``checkpoint:weights=raw:PATH`` the trained weights (e.g. to measure what averaging
    buys); the two are different agents to a tournament's cache; a bad option is named."""
    import torch

    from agents.candidate_net import CandidateNet
    from agents.policy_file import save_policy
    from agents.registry import parse_checkpoint_spec

    net = CandidateNet({"trunk": [16], "cand": [8]})
    raw = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    ema = {k: v + np.float32(0.25) for k, v in raw.items()}
    path = str(save_policy(tmp_path, raw, net.model_config, ema_state=ema))
    played = {
        spec: make_agent(spec, seed=0).net.state_dict()
        for spec in (
            f"checkpoint:{path}",
            f"checkpoint:weights=ema:{path}",
            f"checkpoint:weights=raw:{path}",
        )
    }
    for k in raw:
        assert torch.equal(played[f"checkpoint:{path}"][k], torch.from_numpy(ema[k]))
        assert torch.equal(played[f"checkpoint:weights=ema:{path}"][k], torch.from_numpy(ema[k]))
        assert torch.equal(played[f"checkpoint:weights=raw:{path}"][k], torch.from_numpy(raw[k]))
    assert make_agent(f"checkpoint:weights=raw:{path}").name == f"checkpoint:weights=raw:{path}"
    assert agent_identity(f"checkpoint:{path}") != agent_identity(f"checkpoint:weights=raw:{path}")
    assert parse_checkpoint_spec("runs/a") == ("runs/a", "ema")
    for bad in ("weights=best:runs/a", "weights=raw", "weights=raw:"):
        with pytest.raises(ValueError, match=r"checkpoint:\[weights=ema\|raw:\]PATH"):
            make_agent(f"checkpoint:{bad}")
