"""Remote clients of the competition protocol as agents (``docs/protocol.md``).

``ProtocolTable`` watches one game (``before_act`` / ``after_step``, the observer hooks of
``experiments.evaluation.duplicate.play_game``) and turns its moves into the protocol's
``notify`` messages; ``RemoteSeat`` is an ``Agent`` whose decisions come from the client on
its seat's path (an ``act`` message, a ``{"actIndex": i}`` reply). A reply that can't be
read, a bad index, a timeout or a disconnect never stalls the table: the seat's fallback
agent decides and the fault is recorded; after ``max_timeouts`` timeouts in a row the seat
is benched for the rest of the game.
"""

from __future__ import annotations

import json
import queue
import sys
from typing import Any

import numpy as np

from agents.protocol_server import RemoteLink
from guandan_env.core import actions as T
from guandan_env.core.phase import Phase
from guandan_env.encoding import protocol as P
from guandan_env.envs.aec import AGENTS

MAX_TIMEOUTS = 3  # timeouts in a row before a seat is benched for the rest of the game


def _rank(level: int) -> str:
    return P.RANKS[int(level)]


class ProtocolTable:
    """Turns the moves of one game into protocol messages and asks remote seats to act."""

    def __init__(
        self,
        links: dict[int, RemoteLink],
        timeout: float,
        fallback: str,
        max_timeouts: int = MAX_TIMEOUTS,
    ) -> None:
        self.links = links
        self.timeout = float(timeout)
        self.fallback_spec = fallback
        self.max_timeouts = int(max_timeouts)
        self.timeouts: dict[int, int] = {}  # participant -> timeouts in a row, this game
        self.benched: set[int] = set()  # participants played by the fallback until game end
        self.seat_of: dict[int, int] = {}  # participant -> seat, this game
        self.env = None
        self.deal_seen = 0
        self.faults: list[dict[str, Any]] = []
        self.steps = 0

    # ------------------------------------------------------------------ game lifecycle
    def start_game(self, seat_of: dict[int, int]) -> None:
        self.seat_of = dict(seat_of)
        self.env = None
        self.deal_seen = 0
        self.faults = []
        self.steps = 0
        self.timeouts = {}
        self.benched = set()

    def join_game(self, agents_by_seat: list) -> None:
        """Start a game whose remote seats are this table's ``RemoteSeat``s sitting in
        ``agents_by_seat``; each is played by the client on its seat's path."""
        self.start_game(
            {
                s: s
                for s, a in enumerate(agents_by_seat)
                if getattr(a, "table_observer", None) is self
            }
        )

    def timed_out(self, seat: int, participant: int) -> None:
        """Record a timeout; after ``max_timeouts`` in a row the seat is benched."""
        n = self.timeouts.get(participant, 0) + 1
        self.timeouts[participant] = n
        self.fault(seat, participant, "timeout", f"no reply within {self.timeout:g} s")
        if self.max_timeouts > 0 and n >= self.max_timeouts:
            self.benched.add(participant)
            why = f"{n} timeouts in a row: --fallback plays this seat for the rest of the game"
            self.fault(seat, participant, "benched", why)

    def link_at(self, seat: int) -> RemoteLink | None:
        for p, s in self.seat_of.items():
            if s == seat and p in self.links:
                return self.links[p]
        return None

    def broadcast(self, message: dict, seats=range(4)) -> None:
        for s in seats:
            link = self.link_at(s)
            if link is not None:
                link.send({**message, "myPos": s} if "myPos" in message else message)

    # ------------------------------------------------------------------ observer hooks
    def before_act(self, env) -> None:
        self.env = env
        g = env.game
        if g.deal_number != self.deal_seen:
            self.deal_seen = g.deal_number
            self._deal_start(g)

    def after_step(self, env, seat: int, action: int, hands_before: np.ndarray) -> None:
        self.steps += 1
        g = env.game
        result = env.infos[AGENTS[0]].get("deal_result")
        if T.KIND[action] == T.RETURN:
            t = next(t for t in g.tributes if t.receiver == seat and t.returned >= 0)
            back = {
                "type": "notify",
                "stage": "back",
                "result": [[seat, t.giver, P.card_text(t.returned)]],
            }
            self.broadcast(back, seats=(seat, t.giver))  # a return is private
            return
        if result is not None:  # the deal ended on this play: it emptied the mover's hand
            faces = np.repeat(np.arange(54), hands_before[seat])
        else:
            faces = g.history[-1][2]
        level = int(self._deal_level)
        move = P.entry(action, level, faces)
        if action != T.PASS_ACTION:
            self._greater = (seat, move)
        gpos, gact = self._greater
        self.broadcast(
            {
                "type": "notify",
                "stage": "play",
                "curPos": seat,
                "curAction": move,
                "greaterPos": gpos,
                "greaterAction": gact,
            }
        )
        if action != T.PASS_ACTION:
            self._area[seat] = move
        else:
            self._area[seat] = list(P.PASS_ENTRY)
        self._last_move = (seat, move)
        if result is not None:
            rest = hands_before.copy()
            rest[seat] = 0
            self.broadcast(
                {
                    "type": "notify",
                    "stage": "episodeOver",
                    "order": [int(s) for s in result["order"]],
                    "curRank": result["deal_level"],
                    "restCards": [[s, P.hand_cards(rest[s])] for s in range(4) if rest[s].any()],
                }
            )
        elif g.phase == Phase.PLAY and g.table_action < 0:  # the trick ended: a new one starts
            self._area = [None] * 4
            self._greater = (-1, None)
            self._last_move = (-1, None)

    def _deal_start(self, g) -> None:
        self._deal_level = g.level
        self._greater = (-1, None)
        self._last_move = (-1, None)
        self._area: list[Any] = [None] * 4
        dealt = g.hands.copy()  # the hands as dealt: tribute undone
        for t in g.tributes:
            dealt[t.receiver, t.face] -= 1
            dealt[t.giver, t.face] += 1
        for s in range(4):
            link = self.link_at(s)
            if link is not None:
                link.send(
                    {
                        "type": "notify",
                        "stage": "beginning",
                        "handCards": P.hand_cards(dealt[s]),
                        "myPos": s,
                        **self._ranks(g, s),
                    }
                )
        if g.resisted:
            anti = sorted(set(g.resist_jokers))
            self.broadcast(
                {"type": "notify", "stage": "anti-tribute", "antiNums": len(anti), "antiPos": anti}
            )
        elif g.tributes:
            result = [[t.giver, t.receiver, P.card_text(t.face)] for t in g.tributes]
            self.broadcast({"type": "notify", "stage": "tribute", "result": result})

    @staticmethod
    def _ranks(g, seat: int) -> dict[str, str]:
        return {
            "selfRank": _rank(g.levels[seat % 2]),
            "oppoRank": _rank(g.levels[1 - seat % 2]),
            "curRank": _rank(g.level),
        }

    # ------------------------------------------------------------------ act messages
    def act_message(self, seat: int) -> tuple[dict, list[int]]:
        """The ``act`` message for ``seat`` (only what R-8 lets it see) and the action id of
        each ``actionList`` entry."""
        g = self.env.game
        mask = g.legal_mask()
        hand = g.hands[seat]
        if g.phase == Phase.RETURN:
            faces = [int(T.RETURN_FACE[a]) for a in np.flatnonzero(mask)]
            entries = [["back", "back", [P.card_text(f)]] for f in faces]
            owners = [T.return_action(f) for f in faces]
            stage = "back"
        else:
            entries, owners = P.action_list(hand, g.level, mask)
            stage = "play"
        left = g.cards_left()
        leading = g.phase != Phase.PLAY or g.table_action < 0
        cur_pos, cur_act = (-1, None) if leading else self._last_move
        g_pos, g_act = (-1, None) if leading else self._greater
        msg = {
            "type": "act",
            "stage": stage,
            "handCards": P.hand_cards(hand),
            "myPos": seat,
            **self._ranks(g, seat),
            "publicInfo": [{"rest": int(left[s]), "playArea": self._area[s]} for s in range(4)],
            "curPos": cur_pos,
            "curAction": cur_act,
            "greaterPos": g_pos,
            "greaterAction": g_act,
            "actionList": entries,
            "indexRange": len(entries) - 1,
        }
        return msg, owners

    def fault(self, seat: int, participant: int, kind: str, detail: str) -> None:
        self.faults.append(
            {
                "seat": seat,
                "participant": participant,
                "kind": kind,
                "detail": detail[:200],
                "deal": int(self.env.game.deal_number) if self.env is not None else 0,
                "step": self.steps,
            }
        )
        print(f"seat {seat} (client {participant}): {kind}: {detail[:200]}", file=sys.stderr)


class RemoteSeat:
    """An ``Agent`` whose decisions come from a protocol client (``ProtocolTable.act_message``)."""

    def __init__(self, table: ProtocolTable, participant: int | None, fallback) -> None:
        """``participant``: the client (path ``/game/clientK``) that plays this seat; ``None``:
        the client on the path of whichever seat it sits at (a tournament entrant)."""
        self.table = table
        self.table_observer = table
        self.participant = participant
        self.fallback = fallback
        self.name = "remote" if participant is None else f"remote:client{participant}"

    def reset(self, seed: int | None = None) -> None:
        self.fallback.reset(seed)

    def act(self, observation, info) -> int:
        table, seat = self.table, int(info["seat"])
        p = seat if self.participant is None else self.participant
        link = table.links[p]
        msg, owners = table.act_message(seat)
        late = link.drain()
        if late:
            table.fault(seat, p, "late", f"{late} message(s) arrived while no decision was open")
        if p in table.benched:
            return int(self.fallback.act(observation, info))
        if not link.send(msg):
            table.fault(seat, p, "disconnected", "no client on this seat's path")
            return int(self.fallback.act(observation, info))
        try:
            raw = link.inbox.get(timeout=table.timeout)
        except queue.Empty:
            table.timed_out(seat, p)
            return int(self.fallback.act(observation, info))
        table.timeouts[p] = 0
        index = _reply_index(raw, len(owners))
        if isinstance(index, tuple):
            table.fault(seat, p, index[0], f"{index[1]}; reply {raw[:80]!r}")
            return int(self.fallback.act(observation, info))
        return int(owners[index])


def _reply_index(raw: str, n: int) -> int | tuple[str, str]:
    """The ``actIndex`` of a reply, or ``(fault kind, why)``: the one parser of client replies,
    so anything unreadable (not JSON, nested too deep, …) is a ``malformed`` fault."""
    try:
        reply = json.loads(raw)
    except (ValueError, RecursionError, MemoryError) as e:
        return "malformed", f"not JSON ({type(e).__name__}: {str(e)[:60]})"
    if not isinstance(reply, dict) or "actIndex" not in reply:
        return "malformed", 'expected {"actIndex": i}'
    index = reply["actIndex"]
    if isinstance(index, bool) or not isinstance(index, int):
        return "bad_index", f"actIndex must be an integer, got {index!r}"
    if not 0 <= index < n:
        return "bad_index", f"actIndex {index} outside 0..{n - 1}"
    return index
