"""Host tables over the competition platform's WebSocket protocol (``docs/protocol.md``).

    python -m experiments.hosts.serve --seats remote,heuristic,remote,heuristic --games 10

Participant ``k`` (0..3) of ``--seats`` is an agent spec (``heuristic``, ``random``,
``checkpoint:PATH`` …) or ``remote``: a client that connects to ``ws://HOST:PORT/game/clientK``
(the paths the public competition clients use). The server waits for every remote client,
then plays ``--games`` games (a deal each, or a whole match with ``--mode match``) with our
engine and rules; with ``--duplicate`` every seed is played twice, the second time with every
participant moved one seat on (so each team holds the other team's cards).

Clients get ``notify`` messages (deal start, tribute, every move, deal and game end) and an
``act`` message when their seat decides; they answer ``{"actIndex": i}``. The server is the
only authority: a bad index, a reply that is not JSON, a timeout (``--timeout``) or a
disconnect never stalls the table — that decision (after a disconnect: every decision until
the client reconnects to its path) is made by ``--fallback`` (default ``heuristic``), and the
fault is recorded with the game. Results go to ``--out`` as ``results.jsonl`` (one row per
game, the tournament's record plus seats and faults) and ``summary.json``; ``--save-replays``
writes each game's replay (``python -m experiments.hosts.replay FILE``).

The server binds to 127.0.0.1 unless ``--host`` says otherwise (and warns when it does),
refuses browsers (any ``Origin`` header), reads at most 64 KiB per message, checks every reply
before using it, and benches a seat for the rest of the game after ``--max-timeouts``
timeouts in a row. ``--token`` gives each remote seat a secret that its client must send in
its URL (``?token=…``). ``--duplicate`` with remote seats is refused unless
``--trust-remote``: the second game of a pair replays a deal the client has already seen in
full. See ``docs/security.md``.

Parts: ``agents.protocol_server`` (the connections), ``agents.protocol_seat`` (the table's
messages and remote seats), ``games`` (``run_games``), ``__main__`` (the command line).
"""

from __future__ import annotations

from agents.protocol_seat import ProtocolTable, RemoteSeat
from agents.protocol_server import ProtocolServer

from .games import REMOTE, check_duplicate, run_games


def main(argv: list[str] | None = None) -> int:
    """The command line (``python -m experiments.hosts.serve``)."""
    from .__main__ import main as cli_main

    return cli_main(argv)


__all__ = [
    "REMOTE",
    "ProtocolServer",
    "ProtocolTable",
    "RemoteSeat",
    "check_duplicate",
    "main",
    "run_games",
]
