"""Build agents from short text specs, as every CLI, tournament and host takes them.

A spec is ``NAME`` or ``NAME:ARGUMENT`` (``random``, ``heuristic``,
``heuristic:danger_cards=3``, ``checkpoint:runs/default``). A ``#label`` suffix names another
copy of the same agent (``random#2``), so an agent can meet itself in a tournament.

Agents are plug-ins: ``register(name, factory, help, identity)`` adds one, and every CLI's
help, the tournament's agent cache and the agent tests (``tests/agents/test_registry.py``
parametrises over ``entries()``) read this table. A factory takes the argument (``None``
without one) and a seed; ``identity`` (optional) tells two versions of the same spec apart,
e.g. a checkpoint rewritten on disk, so long-lived processes rebuild the agent.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from .base import Agent
from .heuristic import HeuristicAgent, HeuristicParams
from .random_agent import RandomAgent

Factory = Callable[[str | None, int | None], Agent]


@dataclass(frozen=True)
class AgentEntry:
    """One kind of agent: ``name`` (the spec up to ``:``), how to build it, its help."""

    name: str
    factory: Factory
    help: str  # the spec's form and meaning, e.g. "checkpoint:PATH  a trained policy"
    identity: Callable[[str | None], Hashable] | None = None
    takes_argument: bool | None = None  # None: optional, True: required, False: none
    # the agent holds something of this process (a server socket): it can't be built in
    # worker processes or on a Ray cluster
    in_process: bool = False


_REGISTRY: dict[str, AgentEntry] = {}


def register(
    name: str,
    factory: Factory,
    help: str,
    identity: Callable[[str | None], Hashable] | None = None,
    takes_argument: bool | None = None,
    in_process: bool = False,
) -> AgentEntry:
    """Add an agent kind (an existing ``name`` is an error: one place per kind)."""
    if not name or ":" in name or "#" in name:
        raise ValueError(f"an agent name is a word without ':' or '#', got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"agent {name!r} is registered already")
    entry = AgentEntry(name, factory, help, identity, takes_argument, in_process)
    _REGISTRY[name] = entry
    return entry


def entries() -> list[AgentEntry]:
    """The registered kinds, in registration order."""
    return list(_REGISTRY.values())


def split_spec(spec: str) -> tuple[AgentEntry, str | None]:
    """The entry a spec names and its argument (``#label`` dropped); ``ValueError`` else."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'random', got {spec!r}")
    s = spec.split("#", 1)[0].strip()
    name, sep, arg = s.partition(":")
    entry = _REGISTRY.get(name)
    if entry is None:
        raise ValueError(f"unknown agent spec {spec!r}; known: {', '.join(agent_specs())}")
    if entry.takes_argument is False and sep:
        raise ValueError(f"agent spec {name!r} takes no ':' argument, got {spec!r}")
    if entry.takes_argument and not arg:
        raise ValueError(f"agent spec {spec!r} needs an argument: {entry.help.split()[0]}")
    return entry, (arg if sep else None)


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """The agent a spec names, seeded. Raises ``ValueError`` for an unknown or bad spec."""
    entry, arg = split_spec(spec)
    return entry.factory(arg, seed)


def agent_identity(spec: str) -> Hashable:
    """What makes two builds of ``spec`` the same agent (a cache key)."""
    entry, arg = split_spec(spec)
    return (spec, entry.identity(arg) if entry.identity else None)


def agent_specs() -> list[str]:
    """The spec forms, for CLI help (``random``, ``checkpoint:PATH`` …)."""
    return [e.help.split()[0] for e in _REGISTRY.values()]


def specs_help() -> str:
    """One line: every spec form (for an argument's ``help=``)."""
    return "agent specs: " + ", ".join(agent_specs())


def parse_heuristic_params(text: str) -> HeuristicParams:
    """``HeuristicParams`` from ``name=value,name=value`` (names of its fields)."""
    fields = {f.name: f for f in dataclasses.fields(HeuristicParams)}
    values = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise ValueError(
                f"bad heuristic parameter {item!r}: expected NAME=VALUE with NAME one of "
                f"{sorted(fields)}"
            )
        kind = type(getattr(HeuristicParams(), name))
        try:
            values[name] = kind(raw.strip())
        except ValueError as e:
            raise ValueError(f"heuristic parameter {name} needs a {kind.__name__}: {raw!r}") from e
    return HeuristicParams(**values)


def _heuristic(arg: str | None, seed: int | None) -> Agent:
    params = parse_heuristic_params(arg) if arg else None
    return HeuristicAgent(seed=seed, params=params) if params else HeuristicAgent(seed=seed)


def _checkpoint_module():
    try:
        return importlib.import_module("agents.checkpoint")
    except ModuleNotFoundError as e:
        if e.name not in ("agents.checkpoint", "torch"):
            raise
        raise ValueError(
            "cannot load a checkpoint: the checkpoint loader (agents.checkpoint) needs torch, "
            "which this install lacks (pip install 'guandan-env[train]')"
        ) from e


def parse_checkpoint_spec(arg: str | None) -> tuple[str, str]:
    """``[weights=ema|raw:]PATH`` (the argument of ``checkpoint:``) as ``(path, weights)``;
    the weights' names are the policy file's own (``agents.policy_file.WEIGHTS``)."""
    known = _checkpoint_module().WEIGHTS
    path, weights = arg or "", "ema"
    if path.startswith("weights="):
        option, sep, path = path.partition(":")
        weights = option.removeprefix("weights=")
        if not sep or not path or weights not in known:
            raise ValueError(
                f"checkpoint:{arg}: the form is checkpoint:[weights=ema|raw:]PATH "
                f"(weights one of {list(known)}, then a path)"
            )
    return path, weights


def _checkpoint(arg: str | None, seed: int | None) -> Agent:
    path, weights = parse_checkpoint_spec(arg)
    try:
        agent = _checkpoint_module().load_checkpoint_agent(path, seed, weights=weights)
    except OSError as e:  # no such file, unreadable: a bad spec, said in one line
        raise ValueError(f"cannot load 'checkpoint:{arg}': {e}") from None
    agent.name = f"checkpoint:{arg}"
    return agent


def _checkpoint_identity(arg: str | None) -> Hashable:
    """The policy file a checkpoint spec resolves to now, its version on disk (a run
    directory names its newest checkpoint) and which of its weights play."""
    path, weights = parse_checkpoint_spec(arg)
    policy = _checkpoint_module().resolve_policy(path)
    return str(policy.resolve()), policy.stat().st_mtime_ns, weights


register(
    "random",
    lambda arg, seed: RandomAgent(seed=seed),
    "random  uniform over legal plays",
    takes_argument=False,
)
register(
    "heuristic",
    _heuristic,
    "heuristic[:NAME=VALUE,...]  the rule-based agent (changed HeuristicParams: ablations)",
)
register(
    "checkpoint",
    _checkpoint,
    "checkpoint:[weights=raw:]PATH  a trained policy (policy.pt, a checkpoint or a run "
    "directory); its weights' moving average, or with weights=raw the trained weights",
    identity=_checkpoint_identity,
    takes_argument=True,
)


def _pretrained(arg: str | None, seed: int | None) -> Agent:
    from agents.zoo import load_pretrained_agent

    return load_pretrained_agent(arg or "", seed)


def _pretrained_identity(arg: str | None) -> Hashable:
    """The model a name means and the hash of its weights file."""
    from agents.zoo import resolve, weights_sha256

    name = resolve(arg or "")
    return name, weights_sha256(name)


register(
    "pretrained",
    _pretrained,
    "pretrained:NAME  a model the project trained, shipped in the package and played in numpy "
    "(python -m agents.zoo list)",
    identity=_pretrained_identity,
    takes_argument=True,
)


def _search(arg: str | None, seed: int | None) -> Agent:
    try:
        from agents.search_agent import SearchAgent, parse_search_spec
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        raise ValueError("the search agent needs torch (pip install 'guandan-env[train]')") from e
    params, inner_spec = parse_search_spec(arg)
    if split_spec(inner_spec)[0].name == "search":
        raise ValueError("search: the inner agent cannot itself be a search agent")
    return SearchAgent(make_agent(inner_spec, seed), params, seed, name=f"search:{arg}")


def _search_identity(arg: str | None) -> Hashable:
    """The options and the inner agent's identity (its checkpoint's version on disk)."""
    from agents.search_agent import parse_search_spec

    params, inner = parse_search_spec(arg)
    return params, agent_identity(inner)


register(
    "search",
    _search,
    "search:[OPTIONS:]SPEC  decision-time search over a policy, e.g. search:checkpoint:PATH, "
    "search:worlds=32,candidates=8,margin=0.5,unsure=0.6,close=10:checkpoint:PATH (docs/search.md)",
    identity=_search_identity,
    takes_argument=True,
)


REMOTE_WAIT_S = 600.0  # how long a remote entrant waits for its four clients
_REMOTE_TABLES: dict[int, object] = {}  # port -> the ProtocolTable of this process's server


def _remote(arg: str | None, seed: int | None) -> Agent:
    """A seat played by a competition-protocol client (``docs/protocol.md``): this process
    serves ``ws://127.0.0.1:PORT/game/client0..3`` (started with the first such agent, then
    shared) and the client on a seat's path plays that seat; ``heuristic`` decides when a
    client fails (the fault is logged)."""
    try:
        port = int(arg or "")
    except ValueError:
        raise ValueError(f"remote:PORT needs a port number, got {arg!r}") from None
    if not 0 < port < 65536:
        raise ValueError(f"remote:PORT needs a port in 1..65535, got {port}")
    from agents.protocol_seat import ProtocolTable, RemoteSeat
    from agents.protocol_server import ProtocolServer

    if port not in _REMOTE_TABLES:
        server = ProtocolServer([0, 1, 2, 3], "127.0.0.1", port)
        print(
            f"remote:{port}: waiting for four clients at "
            f"ws://127.0.0.1:{port}/game/client0 … client3",
            flush=True,
        )
        server.wait_for_clients(REMOTE_WAIT_S)
        _REMOTE_TABLES[port] = ProtocolTable(server.links, timeout=30.0, fallback="heuristic")
    return RemoteSeat(_REMOTE_TABLES[port], None, HeuristicAgent(seed=seed))


register(
    "remote",
    _remote,
    "remote:PORT  a competition-protocol client on each seat path of ws://127.0.0.1:PORT",
    takes_argument=True,
    in_process=True,
)
