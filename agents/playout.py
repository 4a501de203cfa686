"""Batched playouts: sampled deals played to their end by one policy in every seat.

``playouts(games, candidates, seat, policy)`` loads one table per (deal, candidate) into the
vector engine (``VectorGuandanEnv.load``), plays the candidate at each table, then lets the
policy act for whichever seat is to act at every table, each on its own observation, with
one batched forward pass per step; tables leave the batch as their deal ends. It returns,
per candidate, the mean level gain of ``seat``'s team (the deal's reward, R-6.3) and its
standard error over the deals.

A policy is anything with ``act(obs (N, OBS_DIM), mask (N, NUM_ACTIONS) bool) -> int64
(N,)`` and ``candidates(obs (OBS_DIM,), mask) -> (ids, probs)`` (most probable first);
``NetPolicy`` wraps a candidate network, torch or numpy (greedy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from guandan_env.core.engine import Game
from guandan_env.core.infoset import clone_game
from guandan_env.encoding.hand_plan import PlanCache
from guandan_env.encoding.packing import OBS_BITS, SCALAR_INDEX, pack_masks
from guandan_env.envs.vector import VectorGuandanEnv


class BatchPolicy(Protocol):
    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray: ...

    def candidates(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


class NetPolicy:
    """A candidate network as a batched greedy policy (the ``checkpoint:`` and
    ``pretrained:`` agents' choices): the torch ``CandidateNet`` or its numpy twin, both of
    which turn decisions into their ``inputs``, ``act_batch`` on them and give candidate
    ``probabilities``."""

    def __init__(self, net) -> None:
        self.net = net.eval() if hasattr(net, "eval") else net
        self.cache = PlanCache(16)  # playouts meet the same hands again (same answers)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs)
        d = self.net.inputs(
            obs[:, :OBS_BITS] != 0, obs[:, SCALAR_INDEX], pack_masks(mask), self.cache
        )
        return np.asarray(self.net.act_batch(d, None, greedy=True)[0])

    def candidates(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Legal ids of one decision and their probabilities, most probable first (ties:
        lower id first, as the greedy argmax)."""
        d = self.net.prepare(np.asarray(obs, np.float32)[None], np.asarray(mask)[None])
        ids, p = self.net.probabilities(d)
        ids, p = np.asarray(ids), np.asarray(p, dtype=np.float64)
        order = np.lexsort((ids, -p))
        return ids[order], p[order]


@dataclass
class PlayoutResult:
    """Level gains of the searching seat's team per (deal, candidate), and summaries."""

    gains: np.ndarray  # float64 (W, K)
    steps: int  # batched steps taken
    decisions: int  # policy decisions made (table-steps)
    actions: list[list[int]] = field(default_factory=list)  # per table, when recorded

    @property
    def mean(self) -> np.ndarray:
        return self.gains.mean(0)

    @property
    def stderr(self) -> np.ndarray:
        w = self.gains.shape[0]
        return self.gains.std(0, ddof=1) / np.sqrt(w) if w > 1 else np.zeros(self.gains.shape[1])


def playouts(
    games: Sequence[Game],
    candidates: Sequence[int],
    seat: int,
    policy: BatchPolicy,
    seed: int = 0,
    record: bool = False,
) -> PlayoutResult:
    """Play every (deal, candidate) to the deal's end (module docstring). ``games`` are not
    changed; ``record`` keeps each table's actions (table ``w * K + k``)."""
    cands = np.asarray(candidates, dtype=np.int64)
    w, k = len(games), cands.size
    tables = [clone_game(g) for g in games for _ in range(k)]
    env = VectorGuandanEnv(w * k, autoreset=False, mode="deal")
    obs, mask, _ = env.load(tables, seed)
    if not mask[np.arange(w * k), np.tile(cands, w)].all():
        raise ValueError("a candidate is not legal in every sampled deal")
    live = np.arange(w * k)
    gains = np.zeros(w * k, dtype=np.float64)
    trace: list[list[int]] = [[] for _ in range(w * k)] if record else []
    actions = np.tile(cands, w)
    steps = decisions = 0
    while True:
        if steps:
            actions = policy.act(obs, mask)
            decisions += live.size
        if record:
            for t, a in zip(live.tolist(), actions.tolist(), strict=True):
                trace[t].append(int(a))
        obs, mask, _, rewards, _, info = env.step(actions)
        steps += 1
        over = info["deal_over"]
        if over.any():
            gains[live[over]] = rewards[over, seat]
            going = np.flatnonzero(~over)
            if going.size == 0:
                break
            env.keep(going)
            obs, mask, live = obs[going], mask[going], live[going]
    return PlayoutResult(gains.reshape(w, k), steps, decisions, trace)
