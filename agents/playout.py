"""Batched playouts: sampled deals played to their end by one policy in every seat.

``playouts(games, candidates, seat, policy)`` loads one table per (deal, candidate) into the
vector engine (``VectorGuandanEnv.load``), plays the candidate at each table, then lets the
policy act for whichever seat is to act at every table, each on its own observation, with
one batched forward pass per step; tables leave the batch as their deal ends. It returns,
per candidate, the mean level gain of ``seat``'s team (the deal's reward, R-6.3) and its
standard error over the deals.

With a ``horizon`` the playouts stop after that many policy moves: a table still playing is
scored by the network's value head, read from the observation of the seat to act there (its
estimate of its own team's level gain, the sign flipped for the other team, clipped to the
R-6.3 range). That bounds a playout's cost by the horizon instead of the deal's length.

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

    def values(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray: ...

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
        return self._act_batch(obs, mask)[0]

    def values(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The value head's estimate of each acting seat's team's level gain, float64 (N,)."""
        return self._act_batch(obs, mask)[1]

    def _act_batch(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        obs = np.asarray(obs)
        d = self.net.inputs(
            obs[:, :OBS_BITS] != 0, obs[:, SCALAR_INDEX], pack_masks(mask), self.cache
        )
        actions, _, values = self.net.act_batch(d, None, greedy=True)
        return np.asarray(actions), np.asarray(values, dtype=np.float64)

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
    scored: int = 0  # tables scored by the value head at the horizon
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
    horizon: int = 0,
) -> PlayoutResult:
    """Play every (deal, candidate) to the deal's end, or for ``horizon`` policy moves when
    positive (module docstring). ``games`` are not changed; ``record`` keeps each table's
    actions (table ``w * K + k``)."""
    if horizon < 0:
        raise ValueError(f"playouts: horizon must be >= 0 (0: to the deal's end), got {horizon}")
    cands = np.asarray(candidates, dtype=np.int64)
    w, k = len(games), cands.size
    tables = [clone_game(g) for g in games for _ in range(k)]
    env = VectorGuandanEnv(w * k, autoreset=False, mode="deal")
    obs, mask, to_act = env.load(tables, seed)
    if not mask[np.arange(w * k), np.tile(cands, w)].all():
        raise ValueError("a candidate is not legal in every sampled deal")
    live = np.arange(w * k)
    gains = np.zeros(w * k, dtype=np.float64)
    trace: list[list[int]] = [[] for _ in range(w * k)] if record else []
    actions = np.tile(cands, w)
    steps = decisions = scored = 0
    while True:
        if horizon and steps > horizon:
            sign = np.where(to_act % 2 == seat % 2, 1.0, -1.0)
            gains[live] = sign * np.clip(policy.values(obs, mask), -3.0, 3.0)
            scored = live.size
            break
        if steps:
            actions = policy.act(obs, mask)
            decisions += live.size
        if record:
            for t, a in zip(live.tolist(), actions.tolist(), strict=True):
                trace[t].append(int(a))
        obs, mask, to_act, rewards, _, info = env.step(actions)
        steps += 1
        over = info["deal_over"]
        if over.any():
            gains[live[over]] = rewards[over, seat]
            going = np.flatnonzero(~over)
            if going.size == 0:
                break
            env.keep(going)
            obs, mask, live, to_act = obs[going], mask[going], live[going], to_act[going]
    return PlayoutResult(gains.reshape(w, k), steps, decisions, scored, trace)
