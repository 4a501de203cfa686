"""Search at decision time (``search:`` agent spec): sample the deals a seat cannot see,
play the policy's top moves out in each with the policy in every seat, switch from the
policy's choice only when another move is better by a margin.

Spec: ``search:[OPTIONS:]INNER``, ``INNER`` any agent spec whose agent exposes a batched
policy (``checkpoint:PATH``; an agent with a ``batch_policy()`` method or a ``CandidateNet``
``net``), ``OPTIONS`` ``name=value`` pairs separated by commas (``SearchParams``)::

    search:checkpoint:runs/default
    search:worlds=32,candidates=8,margin=0.5,unsure=0.6,close=10:checkpoint:runs/default
    search:worlds=32,candidates=8,horizon=24:pretrained:default

At a play decision (tribute returns play the policy) with at least two legal moves, it
searches when it pays: the policy's top probability is below ``unsure``, or a seat still
playing holds at most ``close`` cards. Then ``worlds`` deals are sampled from the seat's
information set (``guandan_env.core.infoset``: only its view is read), the ``candidates``
most probable moves are played out in each (``agents.playout``, common deals for every
move), and the best mean level gain replaces the policy's choice only if it beats the
choice's mean by ``margin``. Otherwise, and when it does not search, it plays the policy's
greedy move. Its RNG for a decision is derived from the agent seed and the information set,
so a seed gives the same games, and the hidden cards cannot change a decision. With a
``horizon`` the playouts stop after that many policy moves and the network's value head scores
the deals still going (``agents.playout``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass, field

import numpy as np

from agents.base import Agent
from agents.playout import BatchPolicy, PlayoutResult, playouts
from agents.zoo.blas import one_blas_thread
from guandan_env.core.infoset import Sampler
from guandan_env.core.phase import Phase
from guandan_env.envs.infoset import infoset_of_view


@dataclass(frozen=True)
class SearchParams:
    """How much to search and when (the spec's options)."""

    worlds: int = 32  # sampled deals per searched decision
    candidates: int = 8  # the policy's top moves tried
    margin: float = 0.5  # levels a move must gain over the policy's choice to replace it
    unsure: float = 0.6  # search when the policy's top probability is below this
    close: int = 10  # ... or when a seat still playing holds at most this many cards
    horizon: int = 0  # policy moves per playout before the value head scores it (0: to the end)

    def __post_init__(self) -> None:
        if self.worlds < 1 or self.candidates < 1:
            raise ValueError("search: worlds and candidates must be >= 1")
        if self.horizon < 0:
            raise ValueError("search: horizon must be >= 0 (0: play to the deal's end)")
        if self.margin < 0:
            raise ValueError("search: margin must be >= 0")


def parse_search_spec(arg: str | None) -> tuple[SearchParams, str]:
    """``(params, inner spec)`` of a ``search:`` argument (module docstring)."""
    if not arg:
        raise ValueError("search needs an inner policy: search:[OPTIONS:]checkpoint:PATH")
    head, sep, rest = arg.partition(":")
    if "=" not in head:
        return SearchParams(), arg
    if not sep or not rest:
        raise ValueError(f"search:{arg}: the options need an inner spec after ':'")
    kinds = {
        f.name: type(getattr(SearchParams(), f.name)) for f in dataclasses.fields(SearchParams)
    }
    values: dict[str, float | int] = {}
    for item in filter(None, (x.strip() for x in head.split(","))):
        name, eq, raw = item.partition("=")
        name = name.strip()
        if not eq or name not in kinds:
            raise ValueError(f"bad search option {item!r}: NAME=VALUE, NAME one of {sorted(kinds)}")
        try:
            values[name] = kinds[name](raw.strip())
        except ValueError:
            raise ValueError(
                f"search option {name} needs a {kinds[name].__name__}: {raw!r}"
            ) from None
    return SearchParams(**values), rest


def batch_policy(agent: Agent) -> BatchPolicy:
    """The batched policy an agent exposes, or a ``ValueError`` saying what is needed."""
    make = getattr(agent, "batch_policy", None)
    if callable(make):
        return make()
    raise ValueError(
        f"search: the inner agent {getattr(agent, 'name', agent)!r} exposes no batched policy "
        "(use a checkpoint:PATH policy)"
    )


@dataclass
class SearchStats:
    """What the agent did: decisions, searches, overrides, seconds per search."""

    decisions: int = 0
    searched: int = 0
    overrides: int = 0
    seconds: list[float] = field(default_factory=list)


@dataclass
class SearchRecord:
    """The last search: the moves tried, their mean gains and standard errors, the pick."""

    candidates: np.ndarray
    probs: np.ndarray
    result: PlayoutResult
    choice: int
    seconds: float


class SearchAgent:
    """The search agent (module docstring); one instance may play several seats."""

    def __init__(
        self, inner: Agent, params: SearchParams, seed: int | None = None, name: str = "search"
    ) -> None:
        self.inner, self.params, self.name = inner, params, name
        self.policy = batch_policy(inner)
        self.seed = 0 if seed is None else int(seed)
        self.stats = SearchStats()
        self.last: SearchRecord | None = None

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.seed = int(seed)
        self.inner.reset(seed)

    def act(self, observation, info: dict) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask: it is not this agent's turn")
        if legal.size == 1:
            return int(legal[0])
        self.stats.decisions += 1
        with one_blas_thread():  # a search is one core's work (agents.zoo.blas)
            ids, probs = self.policy.candidates(np.asarray(observation["observation"]), mask)
            view = info.get("view") if isinstance(info, dict) else None
            if view is None or view.phase != Phase.PLAY or not self.pays(view, float(probs[0])):
                return int(ids[0])
            return self.search(view, ids, probs)

    def pays(self, view, top_prob: float) -> bool:
        """Whether this decision is searched (the policy unsure, or a seat close to out)."""
        if top_prob < self.params.unsure:
            return True
        left = [c for c in view.cards_left if c > 0]
        return bool(left) and min(left) <= self.params.close

    def search(self, view, ids: np.ndarray, probs: np.ndarray) -> int:
        """Search the decision of ``view`` over the policy's top moves ``ids``."""
        t0 = time.perf_counter()
        info_set = infoset_of_view(view)
        rng = np.random.default_rng(self.decision_seed(info_set.key()))
        cands = ids[: self.params.candidates]
        worlds = Sampler(info_set).games(self.params.worlds, rng)
        res = playouts(
            worlds,
            cands,
            view.seat,
            self.policy,
            seed=int(rng.integers(2**63)),
            horizon=self.params.horizon,
        )
        mean = res.mean
        best = int(np.argmax(mean))  # ties: the more probable move
        choice = (
            int(cands[best])
            if mean[best] - mean[0] >= self.params.margin and best
            else int(cands[0])
        )
        secs = time.perf_counter() - t0
        self.stats.searched += 1
        self.stats.overrides += int(choice != int(cands[0]))
        self.stats.seconds.append(secs)
        self.last = SearchRecord(cands, probs[: cands.size], res, choice, secs)
        return choice

    def decision_seed(self, key: bytes) -> int:
        """The RNG seed of one decision: the agent seed and the information set's bytes."""
        h = hashlib.blake2b(key, digest_size=8, key=self.seed.to_bytes(16, "little", signed=True))
        return int.from_bytes(h.digest(), "little") >> 1
