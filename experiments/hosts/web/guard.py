"""The web table's one request guard and the limits of its server (``docs/security.md``).

``RequestGuard`` (ASGI middleware) stands before every route: the ``Host`` header must name a
host the server was started for (DNS rebinding), an ``Origin`` header must be the page's own
(cross-site requests, cross-site WebSocket hijacking), a state-changing request must say
``Content-Type: application/json`` (no "simple" cross-site POST) and its body is read with a
running cap (413) and a time limit (408) before the app sees it. ``parse_json`` is the one
JSON reader of browser input: anything unreadable, nested JSON included, is a ``ValueError``.
``server_config`` sets uvicorn's limits: WebSocket message size, concurrency, connections, and
a deadline for a request's headers (uvicorn has none: half-sent requests were held forever).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_BODY = 64 << 10  # bytes of a state-changing request's body, unless a route says more
BODY_TIMEOUT = 10.0  # seconds to send a body
HEADER_TIMEOUT = 10.0  # seconds to send a request's headers
MAX_CONNECTIONS = 128  # open connections, half-sent ones included
LIMIT_CONCURRENCY = 64  # uvicorn answers 503 beyond this many connections or tasks
WS_MAX_SIZE = 16 << 10  # bytes of one WebSocket message (browser messages are <= 4,096 chars)


def parse_json(raw: bytes | str) -> Any:
    """JSON from a browser; ``ValueError`` for anything unreadable (bad UTF-8, nesting …)."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"not JSON ({type(e).__name__})") from None


def host_name(value: str) -> str:
    """The host of a ``Host`` header or an origin's netloc, without port, lower case."""
    value = value.strip().lower()
    if value.startswith("["):  # [::1]:8765
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> set[str]:
    """Loopback names, the address bound (unless a wildcard) and the names given."""
    hosts = set(LOCAL_HOSTS) | {host_name(h) for h in extra}
    if bind not in ("0.0.0.0", "::", ""):
        hosts.add(host_name(bind))
    return hosts


class RequestGuard:
    """ASGI middleware: refuses what a hostile page or local process may send (module doc)."""

    def __init__(
        self,
        app,
        hosts: Iterable[str] = LOCAL_HOSTS,
        max_body: int = MAX_BODY,
        body_limits: dict[str, int] | None = None,
    ) -> None:
        self.app = app
        self.hosts = {host_name(h) for h in hosts}
        self.max_body = int(max_body)
        self.body_limits = dict(body_limits or {})

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self.refusal(scope, headers)
        if refusal is None and scope["type"] == "http" and scope["method"] in STATE_CHANGING:
            refusal, body = await self.read_body(scope, receive, headers)
            if refusal is None:
                receive = _replay(body, receive)
        if refusal is not None:
            await _refuse(scope, receive, send, *refusal)
            return
        await self.app(scope, receive, send)

    def refusal(self, scope, headers: Headers) -> tuple[int, str] | None:
        """``(status, why)`` if the request's host, origin or content type is refused."""
        host = headers.get("host", "")
        if host_name(host) not in self.hosts:
            return 400, "unknown Host header: this server answers only for the hosts it serves"
        origin = headers.get("origin")
        if origin is not None and not _same_origin(origin, host):
            return 403, "cross-origin request refused"
        if scope["type"] == "http" and scope["method"] in STATE_CHANGING:
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return 415, "Content-Type must be application/json"
        return None

    async def read_body(self, scope, receive, headers: Headers) -> tuple[Any, bytes]:
        """The whole body, read with a running cap: ``(refusal or None, body)``."""
        cap = self.body_limits.get(scope["path"], self.max_body)
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > cap):
            return (413, f"request body over {cap} bytes"), b""
        chunks, size = [], 0
        try:
            async with asyncio.timeout(BODY_TIMEOUT):
                more = True
                while more:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return (400, "client disconnected"), b""
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > cap:
                        return (413, f"request body over {cap} bytes"), b""
                    chunks.append(chunk)
                    more = message.get("more_body", False)
        except TimeoutError:
            return (408, "request body too slow"), b""
        return None, b"".join(chunks)


def _same_origin(origin: str, host: str) -> bool:
    url = urlsplit(origin)
    return url.scheme in ("http", "https") and url.netloc.lower() == host.strip().lower()


def _replay(body: bytes, receive):
    """A ``receive`` that gives the app the body already read, then the client's messages."""
    sent = False

    async def replayed():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # the body is over: only a disconnect can follow

    return replayed


async def _refuse(scope, receive, send, status: int, why: str) -> None:
    if scope["type"] == "websocket":  # before accept: the handshake gets HTTP 403
        await send({"type": "websocket.close", "code": 1008, "reason": why[:120]})
        return
    await JSONResponse({"error": why}, status_code=status)(scope, receive, send)


def server_config(app, host: str = "127.0.0.1", port: int = 8765, **kw):
    """A ``uvicorn.Config`` with the limits above (``python -m experiments.hosts.web``, tests)."""
    import uvicorn

    opts: dict[str, Any] = {
        "log_level": "warning",
        "http": _guarded_h11(),
        "ws_max_size": WS_MAX_SIZE,
        "limit_concurrency": LIMIT_CONCURRENCY,
        "timeout_keep_alive": 5,
    }
    opts.update(kw)
    return uvicorn.Config(app, host=host, port=port, **opts)


def _guarded_h11():
    """uvicorn's h11 protocol with a header deadline and a cap on open connections."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if len(self.connections) > MAX_CONNECTIONS:
                transport.close()
                return
            self._arm_header_deadline()

        def _arm_header_deadline(self) -> None:
            old = getattr(self, "_header_deadline", None)
            if old is not None:
                old.cancel()
            self._header_deadline = self.loop.call_later(HEADER_TIMEOUT, self._headers_late)

        def _headers_late(self) -> None:
            """No complete request line and headers in time: drop the connection."""
            upgraded = self.transport.get_protocol() is not self
            if not upgraded and self.conn.their_state is h11.IDLE:
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm_header_deadline()  # the next request on this connection

        def connection_lost(self, exc) -> None:
            deadline = getattr(self, "_header_deadline", None)
            if deadline is not None:
                deadline.cancel()
            super().connection_lost(exc)

    return GuardedH11
