"""Let any of our agents join a table that speaks the competition platform's protocol.

    python -m agents.remote --url ws://127.0.0.1:23456/game/client0 --agent heuristic

The client keeps a mirror of the deal from the server's messages (``ProtocolMirror``): its own
hand exactly (every ``act`` carries it), every announced play, tribute and return it is told
of, levels and cards left. The other hands are unknown; the mirror fills them with unseen
cards of the right counts, which the observation never reads (it sees only counts, R-8.1).
From the mirror it builds the observation, mask and ``info`` our env would give, asks the
agent, and answers with the index of the first ``actionList`` entry of the chosen action.
The mask is what the server offers: entries are matched to our action ids by their cards.

Works against ``experiments.hosts.serve`` and any server that follows ``docs/protocol.md``;
where the other server's rules differ from ours (RULES.md), its word wins: the mirror follows
its announcements and offers. A message the client cannot read (not a JSON object, nested
too deep, missing or wrong fields) is logged and skipped (an unreadable ``act`` is answered
with index 0); after ``MAX_UNREADABLE`` of them in a row the client leaves with a
``ProtocolError``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from agents.registry import make_agent
from guandan_env.core import actions as T
from guandan_env.core.cards import NUM_FACES, RANK_TEXT
from guandan_env.core.engine import Game, Tribute
from guandan_env.core.phase import Phase
from guandan_env.core.text import action_text
from guandan_env.encoding import protocol as P
from guandan_env.encoding.observation import encode_game
from guandan_env.envs.aec import seat_view

MAX_UNREADABLE = 50  # unreadable server messages in a row before the client gives up
# the closing handshake's wait: leaving with messages unread, the connection's reader may be
# paused (websockets' max_queue) and never see the server's close frame, so close() waited
# the library's full 10 s
CLOSE_TIMEOUT_S = 1.0
UNREADABLE = (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError)


class ProtocolError(ValueError):
    """A server message the mirror cannot follow (names the message)."""


def read_message(raw: Any) -> dict:
    """A server message as a dict; ``ProtocolError`` for anything else (the one parser)."""
    if not isinstance(raw, str):
        raise ProtocolError("a binary frame, expected JSON text")
    try:
        msg = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise ProtocolError(f"not JSON ({type(e).__name__})") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"expected a JSON object, got {type(msg).__name__}")
    return msg


def _faces(cards: Any, what: str) -> np.ndarray:
    if not isinstance(cards, list):
        raise ProtocolError(f"{what}: expected a list of cards, got {cards!r}")
    counts = np.zeros(NUM_FACES, dtype=np.uint8)
    for c in cards:
        counts[P.parse_card(c)] += 1
    if counts.max(initial=0) > 2:
        raise ProtocolError(f"{what}: more than two copies of a card in {cards!r} (R-1.2)")
    return counts


def _rank(text: Any, what: str) -> int:
    if not isinstance(text, str) or text not in P.RANKS:
        raise ProtocolError(f"{what}: expected a rank 2..A, got {text!r}")
    return P.RANKS.index(text)


class ProtocolMirror:
    """What one seat knows of the table, as an engine ``Game`` (see module docstring)."""

    def __init__(self) -> None:
        self.game: Game | None = None
        self.me = -1
        self.leveling_team: int | None = None  # from the last episodeOver
        self.deals = 0

    # ------------------------------------------------------------------ notify messages
    def handle(self, msg: dict) -> None:
        stage = msg.get("stage")
        if msg.get("type") == "notify":
            fn = {
                "beginning": self._beginning,
                "tribute": self._tribute,
                "anti-tribute": self._anti,
                "back": self._back,
                "play": self._play,
                "episodeOver": self._episode_over,
            }.get(stage)
            if fn is not None:
                fn(msg)

    def _beginning(self, msg: dict) -> None:
        self.me = int(msg["myPos"])
        if not 0 <= self.me < 4:
            raise ProtocolError(f"beginning: myPos {self.me} is not a seat 0..3")
        g = Game.new(seed=0)
        mine, theirs = _rank(msg["selfRank"], "selfRank"), _rank(msg["oppoRank"], "oppoRank")
        g.levels = [mine, theirs] if self.me % 2 == 0 else [theirs, mine]
        g.level = _rank(msg["curRank"], "curRank")
        lt = self.leveling_team
        if lt is None or g.levels[lt] != g.level:
            owners = [t for t in (0, 1) if g.levels[t] == g.level]
            lt = owners[0] if len(owners) == 1 else None
        g.leveling_team = lt
        self.deals += 1
        g.deal_number = self.deals
        hand = _faces(msg["handCards"], "beginning handCards")
        g.hands = self._dummy_hands(hand, [int(hand.sum())] * 4, np.zeros((4, NUM_FACES), np.uint8))
        g.played = np.zeros((4, NUM_FACES), dtype=np.uint8)
        g.deal_cards = 108
        g.phase, g.to_act = Phase.PLAY, self.me
        self.game = g

    def _dummy_hands(self, mine: np.ndarray, left: list[int], played: np.ndarray) -> np.ndarray:
        """Own hand exact; the unseen cards dealt to the others by their counts."""
        pool = 2 - mine.astype(np.int64) - played.sum(0, dtype=np.int64)
        others = [s for s in range(4) if s != self.me]
        want = sum(left[s] for s in others)
        if (pool < 0).any() or int(pool.sum()) != want:
            raise ProtocolError(
                f"the server's card counts {left} do not fit the cards seen "
                f"({int(pool.sum())} unseen for {want} in other hands)"
            )
        hands = np.zeros((4, NUM_FACES), dtype=np.uint8)
        hands[self.me] = mine
        cards = np.repeat(np.arange(NUM_FACES), pool)
        start = 0
        for s in others:
            hands[s] = np.bincount(cards[start : start + left[s]], minlength=NUM_FACES)
            start += left[s]
        return hands

    def _hold(self, seat: int, faces) -> None:
        """Make ``seat``'s (unknown) hand hold ``faces`` by swapping with another unknown hand."""
        g = self.game
        need = np.bincount(np.asarray(faces, np.int64), minlength=NUM_FACES)
        for f in np.flatnonzero(need > g.hands[seat]).tolist():
            while g.hands[seat, f] < need[f]:
                if seat == self.me:
                    raise ProtocolError(
                        f"the server says seat {seat} played {P.card_text(f)}, not in its hand"
                    )
                donor = next(
                    (t for t in range(4) if t not in (seat, self.me) and g.hands[t, f] > 0), None
                )
                spare = np.flatnonzero(g.hands[seat] > need)
                if donor is None or spare.size == 0:
                    raise ProtocolError(
                        f"seat {seat} cannot have played {P.card_text(f)}: it is accounted for"
                    )
                g.hands[donor, f] -= 1
                g.hands[donor, spare[0]] += 1
                g.hands[seat, spare[0]] -= 1
                g.hands[seat, f] += 1

    def _move_card(self, giver: int, receiver: int, face: int) -> None:
        self._hold(giver, [face])
        self.game.hands[giver, face] -= 1
        self.game.hands[receiver, face] += 1

    def _tribute(self, msg: dict) -> None:
        for giver, receiver, card in msg["result"]:
            face = P.parse_card(card)
            self._move_card(int(giver), int(receiver), face)
            self.game.tributes.append(Tribute(int(giver), int(receiver), face))

    def _anti(self, msg: dict) -> None:
        seats = [int(s) for s in msg.get("antiPos", [])]
        self.game.resisted = True
        # both big jokers are shown: one seat shows two, or two seats one each
        self.game.resist_jokers = seats * 2 if len(seats) == 1 else seats

    def _back(self, msg: dict) -> None:
        for returner, receiver, card in msg["result"]:
            face = P.parse_card(card)
            self._move_card(int(returner), int(receiver), face)
            for t in self.game.tributes:
                if t.receiver == int(returner) and t.giver == int(receiver):
                    t.returned = face

    def _play(self, msg: dict) -> None:
        g = self.game
        if g is None or g.deal_over:
            return
        seat = int(msg["curPos"])
        action, faces = P.action_of_entry(msg["curAction"], g.level)
        g.phase = Phase.PLAY
        self._settle_returns()
        self._hold(seat, faces)
        g.apply_move(seat, action, faces)

    def _settle_returns(self) -> None:
        """Returns between two other seats are not announced to us (R-8.2), but they happen
        before the first play (R-7.1): move an unknown card back so the counts stay right."""
        for t in self.game.tributes:
            if t.returned < 0 and t.giver >= 0 and self.me not in (t.giver, t.receiver):
                face = int(np.flatnonzero(self.game.hands[t.receiver])[0])
                self._move_card(t.receiver, t.giver, face)
                t.returned = face  # a stand-in: the observation hides it from us

    def _episode_over(self, msg: dict) -> None:
        order = msg.get("order") or []
        if order:
            self.leveling_team = int(order[0]) % 2  # the winner levels next

    # ------------------------------------------------------------------ act messages
    def decision(self, msg: dict) -> tuple[dict, dict, dict[int, int]]:
        """``(observation, info, first entry index per legal action id)`` for an ``act``."""
        g = self.game
        if g is None:
            raise ProtocolError("an act message arrived before the deal's beginning message")
        me = self.me = int(msg.get("myPos", self.me))
        hand = _faces(msg["handCards"], "act handCards")
        left = (
            [int(p["rest"]) for p in msg["publicInfo"]] if "publicInfo" in msg else g.cards_left()
        )
        left[me] = int(hand.sum())
        g.hands = self._dummy_hands(hand, left, g.played)
        stage = msg.get("stage")
        entries = msg.get("actionList")
        if not isinstance(entries, list) or not entries:
            raise ProtocolError(f"act: actionList must be a non-empty list, got {entries!r}")
        g.to_act = me
        if stage == "back":
            g.phase = Phase.RETURN
            g.pending_returns = [
                i for i, t in enumerate(g.tributes) if t.receiver == me and t.returned < 0
            ]
            if not g.pending_returns:  # a return nobody announced to us: keep the rule's shape
                g.tributes.append(Tribute(-1, me, -1))
                g.pending_returns = [len(g.tributes) - 1]
        else:
            g.phase = Phase.PLAY
            self._settle_returns()
            gpos = msg.get("greaterPos", -1)
            if gpos is None or int(gpos) < 0 or msg.get("greaterAction") is None:
                g.table_action, g.table_seat = -1, -1
            else:
                g.table_action, _ = P.action_of_entry(msg["greaterAction"], g.level)
                g.table_seat = int(gpos)
        index_of = self._match(entries, stage)
        mask = np.zeros(T.NUM_ACTIONS, dtype=np.int8)
        mask[list(index_of)] = 1
        view = seat_view(g, me)
        info = {
            "seat": me,
            "level": RANK_TEXT[g.level],
            "table": action_text(g.table_action, g.level)
            if g.phase == Phase.PLAY and g.table_action >= 0
            else None,
            "view": view,
            "last_play": None,
        }
        obs = {"observation": encode_game(g, me), "action_mask": mask}
        return obs, info, index_of

    def _match(self, entries: list, stage: str | None) -> dict[int, int]:
        """Action id -> index of its first entry, for every entry we can read."""
        g = self.game
        ours: dict[tuple, int] = {}
        if stage == "play":
            mine, owners = P.action_list(g.hands[self.me], g.level, g.legal_mask())
            ours = {P.entry_key(e): a for e, a in zip(mine, owners, strict=True)}
        index_of: dict[int, int] = {}
        for i, e in enumerate(entries):
            try:
                a = ours.get(P.entry_key(e))
                if a is None:
                    a, _ = P.action_of_entry(e, g.level)
            except ValueError:
                continue  # a play we cannot read is never chosen
            index_of.setdefault(a, i)
        if not index_of:
            raise ProtocolError(
                f"none of the {len(entries)} offered plays could be read, e.g. {entries[0]!r}"
            )
        return index_of


def play(url: str, agent, timeout: float = 600.0, quiet: bool = False) -> dict:
    """Join the table at ``url`` with ``agent`` until the server sends ``gameResult`` or
    closes; returns ``{"decisions", "games", "result"}``."""
    from websockets.sync.client import connect

    mirror = ProtocolMirror()
    decisions, games, result, unreadable = 0, 0, None, 0
    with connect(url, max_size=1 << 22, open_timeout=timeout, close_timeout=CLOSE_TIMEOUT_S) as ws:
        for raw in ws:
            msg: dict | None = None
            try:
                msg = read_message(raw)
                index = _answer(mirror, agent, msg)
                unreadable = 0
            except UNREADABLE as e:
                unreadable += 1
                if not quiet:
                    print(f"skipped a server message: {str(e)[:200]}", file=sys.stderr)
                if unreadable >= MAX_UNREADABLE:
                    raise ProtocolError(
                        f"{unreadable} server messages in a row could not be read; leaving"
                    ) from None
                index = 0 if msg is not None and msg.get("type") == "act" else None
            if index is not None:
                ws.send(json.dumps({"actIndex": int(index)}))
                decisions += 1
                continue
            stage = msg.get("stage") if msg is not None else None
            if stage == "gameOver":
                games += 1
                if not quiet:
                    print(f"game {games} over", file=sys.stderr)
            elif stage == "gameResult":
                result = msg
                break
    return {"decisions": decisions, "games": games, "result": result}


def _answer(mirror: ProtocolMirror, agent, msg: dict) -> int | None:
    """The index to answer an ``act`` with; a notify updates the mirror (None)."""
    if msg.get("type") != "act":
        mirror.handle(msg)
        return None
    if msg.get("stage") == "tribute":  # we give the highest card
        return _tribute_index(mirror, msg)
    obs, info, index_of = mirror.decision(msg)
    a = int(agent.act(obs, info))
    return index_of.get(a, 0)


def _tribute_index(mirror: ProtocolMirror, msg: dict) -> int:
    g = mirror.game
    g.hands[mirror.me] = _faces(msg["handCards"], "act handCards")
    want = g.highest_tribute_face(mirror.me)
    for i, e in enumerate(msg.get("actionList") or []):
        try:
            if isinstance(e, list) and len(e) == 3 and [P.parse_card(c) for c in e[2]] == [want]:
                return i
        except ValueError:
            continue
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.remote", description=__doc__.split("\n")[0])
    p.add_argument("--url", default="ws://127.0.0.1:23456/game/client0")
    p.add_argument(
        "--agent", default="heuristic", help="agent spec (heuristic, checkpoint:PATH, …)"
    )
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    try:
        agent = make_agent(args.agent, args.seed)
    except ValueError as e:
        p.error(str(e))
    agent.reset(args.seed)
    try:
        out = play(args.url, agent)
    except OSError as e:
        print(f"error: cannot reach {args.url}: {e}", file=sys.stderr)
        return 2
    except ProtocolError as e:
        print(f"error: {args.url}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(
        json.dumps({"decisions": out["decisions"], "games": out["games"], "result": out["result"]})
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
