"""The training env of the self-play run: Guandan as an RLlib ``MultiAgentEnv`` with a league.

Why a wrapper and not ``PettingZooEnv(guandan_env.env())``: the opposing team of each episode
is drawn from the current policy, frozen snapshots and the baselines, and the baselines
(``random``, ``heuristic``) need the seat's ``view`` from ``infos``, not only the observation
vector. So the wrapper plays every opponent that is not the trainable policy *inside the
env*, and exposes to RLlib only the seats the trainable policy controls:

* ``self`` episodes: all four seats are exposed (all map to the one module ``main``), so
  every decision of the deal is a training sample;
* ``snapshot`` / ``random`` / ``heuristic`` episodes: the learner team's two seats are
  exposed; the other team is played in here by a frozen ``GuandanNet`` snapshot (sampling
  from its masked softmax) or by the baseline agent.

The learner team (0 or 1) is drawn per episode, so both team positions are learned. RLlib
sees a turn-based multi-agent env (one agent acts per step, like ``PettingZooEnv``); at the
end of the deal every exposed seat gets its final observation and the team reward (±3/2/1,
shared within the team), so the reward reaches each seat's last action.

League snapshots are pushed into the envs with ``set_league`` (see ``experiments.selfplay``);
while the league is empty, ``snapshot`` draws fall back to ``self``. RLlib counts one env
step per learner decision; ``game_steps`` in the final infos counts all decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from agents.rllib_module import GuandanNet
from guandan_env.aec import AGENTS, raw_env
from guandan_env.config_keys import merge_known

OPPONENT_KINDS = ("self", "snapshot", "random", "heuristic")
DEFAULT_ENV_CONFIG: dict[str, Any] = {
    # guandan_env.env(**game) config; deal mode with random levels and previous finishing
    # orders, so every phase (tribute and returns included) is trained
    "game": {"mode": "deal", "random_levels": True, "random_tribute": True},
    # probabilities of the opposing team's kind per episode (normalised)
    "opponents": {"self": 0.6, "snapshot": 0.2, "random": 0.05, "heuristic": 0.15},
    "seed": None,
}


def check_env_config(config: Mapping | None) -> dict:
    """Merge over the defaults; unknown keys or bad probabilities raise ``ValueError``."""
    # RLlib passes an EnvContext (a dict subclass with worker_index etc. as attributes)
    cfg = merge_known(DEFAULT_ENV_CONFIG, dict(config or {}), "self-play env config")
    probs = dict(cfg["opponents"])
    bad = sorted(set(probs) - set(OPPONENT_KINDS))
    if bad:
        raise ValueError(f"unknown opponent kind(s) {bad}; valid: {list(OPPONENT_KINDS)}")
    p = np.array([float(probs.get(k, 0.0)) for k in OPPONENT_KINDS])
    if (p < 0).any() or p.sum() <= 0:
        raise ValueError(f"opponent probabilities must be >= 0 and not all 0, got {probs}")
    cfg["opponents"] = dict(zip(OPPONENT_KINDS, (p / p.sum()).tolist(), strict=True))
    cfg["game"] = {**DEFAULT_ENV_CONFIG["game"], **dict(cfg["game"])}
    return cfg


def make_baseline(kind: str, seed: int | None):
    """A baseline agent (``random`` or ``heuristic``) from the agent registry."""
    from agents.registry import make_agent

    return make_agent(kind, seed)


class SnapshotPolicy:
    """A frozen league member: a ``GuandanNet`` sampling from its masked softmax."""

    def __init__(self, name: str, net: GuandanNet) -> None:
        self.name = name
        self.net = net

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        return self.net.act(observation["observation"], observation["action_mask"], rng, False)


def nets_from_states(states: Mapping[str, dict], obs_dim: int, num_actions: int, model_config):
    """``{name: GuandanNet}`` from ``{name: state_dict}`` (built once per process)."""
    out = {}
    for name, sd in states.items():
        net = GuandanNet(obs_dim, num_actions, model_config)
        net.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in sd.items()})
        net.eval()
        out[name] = net
    return out


class GuandanSelfPlayEnv(MultiAgentEnv):
    """Turn-based multi-agent env over ``guandan_env.raw_env`` with in-env opponents."""

    def __init__(self, config: Mapping | None = None) -> None:
        super().__init__()
        self.cfg = check_env_config(config)
        self.game = raw_env(**self.cfg["game"])
        self.possible_agents = list(AGENTS)
        self.agents = []
        space = self.game.observation_space(AGENTS[0])
        self.observation_spaces = dict.fromkeys(AGENTS, space)
        self.action_spaces = dict.fromkeys(AGENTS, self.game.action_space(AGENTS[0]))
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        self._kinds = list(OPPONENT_KINDS)
        self._probs = np.array([self.cfg["opponents"][k] for k in self._kinds])
        self.rng = np.random.default_rng(self.cfg["seed"])
        self._seeded = False
        self._baselines: dict[str, Any] = {}
        self.league: dict[str, SnapshotPolicy] = {}
        self.opponent = "self"
        self.opponent_name = "self"
        self.learner_team = 0
        self.exposed: list[str] = []
        self._internal: Any = None
        self.game_steps = 0

    # ------------------------------------------------------------------ league
    def set_league(self, nets: Mapping[str, GuandanNet]) -> None:
        """Replace the frozen snapshots this env may draw (``{name: GuandanNet}``)."""
        self.league = {name: SnapshotPolicy(name, net) for name, net in nets.items()}

    def _baseline(self, kind: str):
        if kind not in self._baselines:
            self._baselines[kind] = make_baseline(kind, int(self.rng.integers(2**31)))
        return self._baselines[kind]

    # ------------------------------------------------------------------ episode
    def _draw_matchup(self) -> None:
        kind = self._kinds[int(self.rng.choice(len(self._kinds), p=self._probs))]
        if kind == "snapshot" and not self.league:
            kind = "self"
        self.opponent = kind
        self.learner_team = int(self.rng.integers(2))
        if kind == "self":
            self.exposed = list(AGENTS)
            self._internal, self.opponent_name = None, "self"
        else:
            self.exposed = [a for i, a in enumerate(AGENTS) if i % 2 == self.learner_team]
            if kind == "snapshot":
                names = sorted(self.league)
                name = names[int(self.rng.integers(len(names)))]
                self._internal, self.opponent_name = self.league[name], name
            else:
                self._internal, self.opponent_name = self._baseline(kind), kind
                self._internal.reset(int(self.rng.integers(2**31)))
        self.agents = list(self.exposed)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            game_seed = seed
        elif not self._seeded and self.cfg["seed"] is not None:
            game_seed = int(self.rng.integers(2**63))
        else:
            game_seed = None
        self._seeded = True
        self._draw_matchup()
        self.game.reset(seed=game_seed, options=options)
        self.game_steps = 0
        self._pending = dict.fromkeys(self.exposed, 0.0)
        self._team_return = 0.0
        self._play_internal()
        agent = self.game.agent_selection
        return {agent: self.game.observe(agent)}, {}

    def _play_internal(self) -> None:
        """Let the in-env opponents move until an exposed seat must act or the deal ends."""
        g = self.game
        while not g.terminations[g.agent_selection] and g.agent_selection not in self.exposed:
            agent = g.agent_selection
            obs = g.observe(agent)
            if isinstance(self._internal, SnapshotPolicy):
                action = self._internal.act(obs, self.rng)
            else:
                action = self._internal.act(obs, g.infos[agent])
            self._game_step(action)

    def _game_step(self, action: int) -> None:
        g = self.game
        g.step(action)
        self.game_steps += 1
        for a in self.exposed:  # rewards may come on any seat's step (deal ends)
            self._pending[a] += g.rewards[a]
        self._team_return += g.rewards[AGENTS[self.learner_team]]

    def step(self, action_dict: Mapping[str, Any]):
        g = self.game
        agent = g.agent_selection
        if agent not in action_dict:
            raise ValueError(f"expected an action for {agent}, got {sorted(action_dict)}")
        self._game_step(int(action_dict[agent]))
        self._play_internal()
        done = g.terminations[g.agent_selection] or g.truncations[g.agent_selection]
        # RLlib wants a reward (maybe 0) for each agent that gets an observation; other
        # agents' rewards are held by the episode until they act again
        rewards = {a: float(r) for a, r in self._pending.items() if r != 0.0}
        self._pending = dict.fromkeys(self.exposed, 0.0)
        if not done:
            nxt = g.agent_selection
            rewards.setdefault(nxt, 0.0)
            return {nxt: g.observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}
        # deal (or match) over: every exposed seat gets its last observation and its reward
        obs = {a: g.observe(a) for a in self.exposed}
        rewards = {a: rewards.get(a, 0.0) for a in self.exposed}
        terminated = bool(g.terminations[g.agent_selection])
        terms = {a: terminated for a in self.exposed}
        truncs = {a: not terminated for a in self.exposed}
        terms["__all__"], truncs["__all__"] = terminated, not terminated
        info = {
            "opponent": self.opponent,
            "learner_team": self.learner_team,
            "team_reward": self._team_return,
            "game_steps": self.game_steps,
        }
        infos = {a: dict(info) for a in self.exposed}
        return obs, rewards, terms, truncs, infos
