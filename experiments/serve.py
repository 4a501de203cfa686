"""Host tables over the competition platform's WebSocket protocol (``docs/protocol.md``).

    python -m experiments.serve --seats remote,heuristic,remote,heuristic --games 10

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
"""

from __future__ import annotations

import argparse
import hmac
import json
import queue
import re
import secrets
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np

from agents.registry import make_agent
from experiments.evaluation.duplicate import derive_seed, game_config, pair_seed, play_game
from experiments.loopback import warn_if_exposed
from guandan_env.core import actions as T
from guandan_env.core.phase import Phase
from guandan_env.encoding import protocol as P
from guandan_env.envs.aec import AGENTS

REMOTE = "remote"
PATH_RE = re.compile(r"^/game/client([0-3])$")
MAX_MESSAGE = 1 << 16
MAX_REASON = 123  # bytes: the longest close reason a WebSocket close frame can carry
MAX_TIMEOUTS = 3  # timeouts in a row before a seat is benched for the rest of the game


def _rank(level: int) -> str:
    return P.RANKS[int(level)]


class RemoteLink:
    """One remote participant: its current connection (or None) and its inbox."""

    def __init__(self, participant: int) -> None:
        self.participant = participant
        self.conn = None
        self.inbox: queue.Queue[str] = queue.Queue(maxsize=32)
        self.lock = threading.Lock()
        self.connected = threading.Event()

    def send(self, message: dict) -> bool:
        conn = self.conn
        if conn is None:
            return False
        try:
            conn.send(json.dumps(message))
            return True
        except Exception:  # closed under us: the handler clears the link
            return False

    def drain(self) -> int:
        n = 0
        while True:
            try:
                self.inbox.get_nowait()
                n += 1
            except queue.Empty:
                return n


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

    def __init__(self, table: ProtocolTable, participant: int, fallback) -> None:
        self.table = table
        self.participant = participant
        self.fallback = fallback
        self.name = f"remote:client{participant}"

    def reset(self, seed: int | None = None) -> None:
        self.fallback.reset(seed)

    def act(self, observation, info) -> int:
        table, p = self.table, self.participant
        seat = int(info["seat"])
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


def _close(conn, code: int, reason: str) -> None:
    """Close with ``reason`` cut to what a close frame can carry (123 bytes of UTF-8)."""
    conn.close(code, reason.encode()[:MAX_REASON].decode(errors="ignore"))


def _seat_of_request(target: str, links: dict[int, RemoteLink], tokens: dict[int, str]) -> int:
    """The participant a request target (``/game/clientK?token=…``) names; ``ValueError``
    (the close reason) for an unknown path or a missing or wrong token."""
    url = urlsplit(target)
    m = PATH_RE.match(url.path)
    if m is None or int(m.group(1)) not in links:
        open_paths = ", ".join(f"/game/client{p}" for p in sorted(links))
        raise ValueError(f"no remote seat at {url.path[:40]!r}; open: {open_paths}")
    p = int(m.group(1))
    if p in tokens:
        sent = parse_qs(url.query).get("token", [""])[0]
        if not hmac.compare_digest(sent.encode(), tokens[p].encode()):
            raise ValueError("missing or wrong token for this seat")
    return p


def _handler_factory(links: dict[int, RemoteLink], tokens: dict[int, str] | None = None):
    from websockets.exceptions import ConnectionClosed

    def handler(conn) -> None:
        target = conn.request.path if conn.request is not None else ""
        try:
            p = _seat_of_request(target, links, tokens or {})
        except ValueError as e:
            _close(conn, 1008, str(e))
            return
        link = links[p]
        with link.lock:
            if link.conn is not None:
                _close(conn, 1008, "this seat already has a client")
                return
            link.drain()
            link.conn = conn
            link.connected.set()
        try:
            for raw in conn:
                if not isinstance(raw, str):
                    raw = "<binary frame>"
                try:
                    link.inbox.put_nowait(raw)
                except queue.Full:  # a flooding client: keep the newest decision's room
                    link.drain()
        except ConnectionClosed:
            pass
        finally:
            with link.lock:
                if link.conn is conn:
                    link.conn = None
                    link.connected.clear()

    return handler


class ProtocolServer:
    """A WebSocket server (a background thread) with one ``RemoteLink`` per remote seat."""

    def __init__(
        self,
        remote: list[int],
        host: str = "127.0.0.1",
        port: int = 23456,
        tokens: bool = False,
    ) -> None:
        from websockets.sync.server import serve

        self.links = {p: RemoteLink(p) for p in remote}
        self.tokens = {p: secrets.token_urlsafe(16) for p in remote} if tokens else {}
        self._server = serve(
            _handler_factory(self.links, self.tokens),
            host,
            port,
            max_size=MAX_MESSAGE,
            max_queue=16,
            origins=[None],  # browsers always send Origin; competition clients send none
        )
        self.host, self.port = self._server.socket.getsockname()[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, participant: int) -> str:
        """The address a client of ``participant`` connects to (its token included)."""
        token = self.tokens.get(participant)
        query = f"?token={token}" if token else ""
        return f"ws://{self.host}:{self.port}/game/client{participant}{query}"

    def wait_for_clients(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for p, link in self.links.items():
            if not link.connected.wait(max(deadline - time.monotonic(), 0)):
                where = f"/game/client{p}"
                raise TimeoutError(f"no client connected to {where} within {timeout:g} s")

    def close(self) -> None:
        for link in self.links.values():
            conn = link.conn
            if conn is not None:
                conn.close(1000, "games over")
        self._server.shutdown()
        self._thread.join(timeout=5)


def check_duplicate(specs: list[str], duplicate: bool, trust_remote: bool) -> None:
    """Refuse duplicate games with remote seats unless the operator trusts the clients: after
    the first game of a pair every card is public, and the same client replays that deal."""
    if duplicate and REMOTE in specs and not trust_remote:
        raise ValueError(
            "--duplicate with remote seats lets a client replay a deal it has seen in full; "
            "pass --trust-remote if the remote clients are trusted (docs/security.md)"
        )


def seating(swap: int) -> dict[int, int]:
    """Participant -> seat: swap 1 moves everyone one seat on (teams change cards)."""
    return {p: (p + swap) % 4 for p in range(4)}


def run_games(
    specs: list[str],
    server: ProtocolServer | None,
    games: int,
    seed: int = 0,
    mode: str = "deal",
    duplicate: bool = False,
    config: dict | None = None,
    timeout: float = 30.0,
    fallback: str = "heuristic",
    out: Path | None = None,
    save_replays: bool = False,
    trust_remote: bool = False,
    max_timeouts: int = MAX_TIMEOUTS,
) -> list[dict[str, Any]]:
    """Play ``games`` games; returns (and, with ``out``, writes) one row per game."""
    check_duplicate(specs, duplicate, trust_remote)
    cfg = game_config(mode, **(config or {}))
    links = server.links if server is not None else {}
    table = ProtocolTable(links, timeout, fallback, max_timeouts)
    rows = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for i in range(games):
        pair, swap = (i // 2, i % 2) if duplicate else (i, 0)
        game_seed = pair_seed(seed, pair)
        seat_of = seating(swap)
        table.start_game(seat_of)
        by_seat: list[Any] = [None] * 4
        for p, spec in enumerate(specs):
            if spec == REMOTE:
                fb = make_agent(fallback, derive_seed(seed, pair, p, 7))
                by_seat[seat_of[p]] = RemoteSeat(table, p, fb)
            else:
                by_seat[seat_of[p]] = make_agent(spec, derive_seed(seed, pair, p))
        replay = out / "replays" / f"game_{i:05d}.json" if (out and save_replays) else None
        rec = play_game(
            by_seat,
            game_seed,
            cfg,
            agent_seed=derive_seed(game_seed, swap),
            replay_path=replay,
            observer=table,
        )
        table.broadcast(
            {"type": "notify", "stage": "gameOver", "curTimes": i + 1, "settingTimes": games}
        )
        row = {
            "game": i,
            "pair": pair,
            "swap": swap,
            "seed": game_seed,
            "seats": [specs[p] for p in sorted(seat_of, key=seat_of.get)],
            "participant_seat": [seat_of[p] for p in range(4)],
            "record": rec,
            "faults": table.faults,
        }
        rows.append(row)
        if out is not None:
            with open(out / "results.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")
    wins, draws = [0] * 4, [0] * 4
    for row in rows:
        for p in range(4):
            team = row["participant_seat"][p] % 2
            rec = row["record"]
            if rec["mode"] == "match":
                if rec["match_winner"] is None:
                    draws[p] += 1
                else:
                    wins[p] += int(rec["match_winner"] == team)
            else:
                g = rec["team_gain"][team]
                wins[p] += int(g > 0)
                draws[p] += int(g == 0)
    result = {"type": "notify", "stage": "gameResult", "victoryNum": wins, "draws": draws}
    for link in links.values():
        link.send(result)
    if out is not None:
        summary = {
            "specs": specs,
            "games": games,
            "victoryNum": wins,
            "draws": draws,
            "gain": [
                sum(r["record"]["team_gain"][r["participant_seat"][p] % 2] for r in rows)
                for p in range(4)
            ],
            "faults": sum(len(r["faults"]) for r in rows),
        }
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.serve", description=__doc__.split("\n")[0]
    )
    p.add_argument(
        "--seats",
        default="remote,heuristic,heuristic,heuristic",
        help="four comma-separated participants: agent specs or 'remote'",
    )
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--mode", choices=("deal", "match"), default="deal")
    p.add_argument(
        "--duplicate", action="store_true", help="play each seed twice, seats moved one on"
    )
    p.add_argument(
        "--trust-remote",
        action="store_true",
        help="allow --duplicate with remote seats (they see each deal twice: trusted clients)",
    )
    p.add_argument(
        "--token", action="store_true", help="a secret per remote seat, sent in the client's URL"
    )
    p.add_argument(
        "--max-timeouts",
        type=int,
        default=MAX_TIMEOUTS,
        help="timeouts in a row before --fallback plays a seat for the rest of the game (0: never)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--random-levels", action="store_true", help="deal mode: random team levels")
    p.add_argument(
        "--random-tribute", action="store_true", help="deal mode: a random previous order (tribute)"
    )
    p.add_argument("--max-deals", type=int, default=None, help="match mode: cap (a draw, R-6.8)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=23456)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds a client has per decision")
    p.add_argument("--wait", type=float, default=600.0, help="seconds to wait for the clients")
    p.add_argument("--fallback", default="heuristic", help="agent that decides for a faulty client")
    p.add_argument("--out", default="results/serve")
    p.add_argument("--save-replays", action="store_true")
    args = p.parse_args(argv)
    specs = [s.strip() for s in args.seats.split(",")]
    if len(specs) != 4:
        p.error(f"--seats needs four participants, got {len(specs)}: {args.seats!r}")
    if args.games < 1 or args.timeout <= 0 or not 0 <= args.port < 65536 or args.max_timeouts < 0:
        p.error("--games must be >= 1, --timeout > 0, --port in 0..65535, --max-timeouts >= 0")
    try:
        for s in specs + [args.fallback]:
            if s != REMOTE:
                make_agent(s, 0)
        if args.fallback == REMOTE:
            raise ValueError("--fallback must be an agent spec, not 'remote'")
        check_duplicate(specs, args.duplicate, args.trust_remote)
    except ValueError as e:
        p.error(str(e))
    remote = [i for i, s in enumerate(specs) if s == REMOTE]
    if remote:
        warn_if_exposed(args.host, "protocol server", "every remote seat (take it, or play it)")
    server = ProtocolServer(remote, args.host, args.port, args.token) if remote else None
    try:
        if server is not None:
            for i in remote:
                print(f"waiting for client {i}: {server.url(i)}", flush=True)
            server.wait_for_clients(args.wait)
        config = {
            "random_levels": args.random_levels or None,
            "random_tribute": args.random_tribute or None,
            "max_deals": args.max_deals,
        }
        rows = run_games(
            specs,
            server,
            args.games,
            args.seed,
            args.mode,
            args.duplicate,
            config,
            args.timeout,
            args.fallback,
            Path(args.out),
            args.save_replays,
            args.trust_remote,
            args.max_timeouts,
        )
    except TimeoutError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if server is not None:
            server.close()
    faults = sum(len(r["faults"]) for r in rows)
    print(f"{len(rows)} game(s) played, {faults} client fault(s); results in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
