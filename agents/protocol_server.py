"""The server side of the competition protocol's connections (``docs/protocol.md``): a
WebSocket server on a background thread with one ``RemoteLink`` per remote seat path
(``/game/clientK``). It refuses browsers (any ``Origin``), unknown paths, a second client on
a taken path and, with tokens, a missing or wrong ``?token=``; it reads at most 64 KiB per
message and keeps at most 32 unread messages per seat (``docs/security.md``).
"""

from __future__ import annotations

import hmac
import json
import queue
import re
import secrets
import threading
import time
from urllib.parse import parse_qs, urlsplit

PATH_RE = re.compile(r"^/game/client([0-3])$")
MAX_MESSAGE = 1 << 16
MAX_REASON = 123  # bytes: the longest close reason a WebSocket close frame can carry


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
