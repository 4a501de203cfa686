"""The web table's HTTP and WebSocket routes (Starlette, served by uvicorn).

Routes: ``/`` the page (lobby, table, replays, results: one small page, plain JS modules);
``/static/*`` its assets (all local, no CDN); ``POST /api/tables`` creates a table;
``/ws/{table}`` attaches a browser to a table (a reload or a second tab re-attaches:
the state lives here); ``GET /api/replays`` lists saved replays; ``GET /api/replay?name=``
and ``POST /api/replay`` (a replay file's JSON) return its frames; ``GET /api/results`` the
human-vs-agent table. Every message from a browser is checked; a refused one gets an
``error`` message and changes nothing.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from agents.registry import make_agent

from .tables import HUMAN, TableRegistry, WebTable, human_results, replay_frames

STATIC = Path(__file__).parent / "static"
MAX_BODY = 4 << 20  # replay uploads
SPEEDS = (0.0, 0.15, 0.4, 0.8, 1.5)  # seconds between agent moves


class Viewer:
    """One attached browser: its socket, the seat it sees from, whether it shows all hands."""

    def __init__(self, ws: WebSocket, seat: int | None) -> None:
        self.ws, self.seat, self.show_hands = ws, seat, False


class Hub:
    """Tables, the browsers attached to each, and the task that plays each table's agents."""

    def __init__(self, out: Path | None, delay: float = 0.4) -> None:
        self.registry = TableRegistry(out)
        self.out = out
        self.delay = float(delay)
        self.viewers: dict[str, set[Viewer]] = {}
        self.tasks: dict[str, asyncio.Task] = {}
        self.settings: dict[str, dict] = {}  # per table: speed, paused (watch tables)

    def open_table(
        self, seats, mode="deal", random_levels=False, random_tribute=False, seed=None, options=None
    ) -> WebTable:
        """A new table (agent specs checked first), watch tables start paused."""
        for s in seats:
            if s != HUMAN:
                make_agent(s, 0)  # a bad spec is refused here, with the registry's words
        table = self.registry.create(
            seats=seats,
            mode=mode,
            random_levels=random_levels,
            random_tribute=random_tribute,
            seed=seed,
            options=options,
        )
        self.settings[table.id] = {"delay": self.delay, "paused": table.human is None}
        return table

    def view(self, table: WebTable, v: Viewer) -> dict:
        paused = bool(self.settings.get(table.id, {}).get("paused"))
        return {**table.view(v.seat, v.show_hands), "paused": paused}

    async def push(self, table: WebTable) -> None:
        for v in list(self.viewers.get(table.id, ())):
            try:
                await v.ws.send_json(self.view(table, v))
            except Exception:  # a closed tab: forget it
                self.viewers[table.id].discard(v)

    def kick(self, table: WebTable) -> None:
        """Make sure the agents of ``table`` are playing (one task per table)."""
        task = self.tasks.get(table.id)
        if task is None or task.done():
            self.tasks[table.id] = asyncio.get_running_loop().create_task(self._run(table))

    async def _run(self, table: WebTable) -> None:
        while True:
            s = self.settings.get(table.id, {})
            if s.get("paused"):
                return
            await asyncio.sleep(s.get("delay", self.delay))
            if table.hold is not None and table.human is None and not table.over:
                table.resume()  # watch tables go straight on to the next deal
            elif not table.agent_move():
                return  # a human's turn, or the game is over: the last move was pushed
            await self.push(table)


def _int(x: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {x!r}")
    return x


def create_app(out: Path | None = Path("runs/web"), delay: float = 0.4) -> Starlette:
    hub = Hub(out, delay)

    async def index(request: Request):
        return FileResponse(STATIC / "index.html")

    async def new_table(request: Request):
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
            seats = body.get("seats")
            if not (
                isinstance(seats, list)
                and len(seats) == 4
                and all(isinstance(s, str) for s in seats)
            ):
                raise ValueError("seats must be a list of 4 strings: 'human' or agent specs")
            seed = body.get("seed")
            if seed is not None:
                seed = _int(seed, "seed", 0, 2**62)
            table = hub.open_table(
                seats,
                body.get("mode", "deal"),
                bool(body.get("random_levels", False)),
                bool(body.get("random_tribute", False)),
                seed,
                body.get("options"),
            )
        except (ValueError, json.JSONDecodeError) as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        return JSONResponse({"table": table.id, "seat": table.human})

    async def replays(request: Request):
        d = (hub.out / "replays") if hub.out else None
        names = sorted(p.name for p in d.glob("*.json")) if d and d.exists() else []
        return JSONResponse({"replays": names})

    async def replay(request: Request):
        try:
            if request.method == "POST":
                raw = await request.body()
                if len(raw) > MAX_BODY:
                    raise ValueError("replay too large")
                data = json.loads(raw)
            else:
                name = request.query_params.get("name", "")
                if not name or "/" in name or "\\" in name or not name.endswith(".json"):
                    raise ValueError(f"not a replay name: {name!r}")
                path = (hub.out / "replays" / name) if hub.out else None
                if path is None or not path.is_file():
                    raise ValueError(f"no replay {name!r}")
                data = json.loads(path.read_text())
            frames = replay_frames(data)
        except (ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
            return JSONResponse({"error": f"cannot read the replay: {e}"}, status_code=400)
        return JSONResponse({"frames": frames})

    async def results(request: Request):
        return JSONResponse({"results": human_results(hub.out) if hub.out else []})

    async def ws_table(ws: WebSocket):
        table_id = ws.path_params["table"]
        await ws.accept()
        try:
            table = hub.registry.get(table_id)
        except KeyError as e:
            await ws.send_json({"type": "error", "error": str(e)})
            await ws.close()
            return
        viewer = Viewer(ws, table.human)
        hub.viewers.setdefault(table.id, set()).add(viewer)
        await ws.send_json(hub.view(table, viewer))
        if table.human is not None:
            hub.kick(table)
        try:
            while True:
                text = await ws.receive_text()
                if len(text) > 4096:
                    await ws.send_json({"type": "error", "error": "message too long"})
                    continue
                try:
                    await handle(table, viewer, json.loads(text))
                except (ValueError, json.JSONDecodeError) as e:
                    await ws.send_json({"type": "error", "error": str(e)})
                    await ws.send_json(hub.view(table, viewer))
        except WebSocketDisconnect:
            pass
        finally:
            hub.viewers.get(table.id, set()).discard(viewer)

    async def handle(table: WebTable, viewer: Viewer, msg: Any) -> None:
        if not isinstance(msg, dict):
            raise ValueError("expected a JSON object")
        kind = msg.get("type")
        s = hub.settings.setdefault(table.id, {"delay": hub.delay, "paused": False})
        if kind == "act":
            if table.human is None:
                raise ValueError("this is a watch table: nobody plays from the browser")
            version = msg.get("version")
            if version is not None:
                version = _int(version, "version", 0, 1 << 30)
            table.play(table.human, msg.get("action"), version)
        elif kind == "continue":
            table.resume()
        elif kind == "speed" and table.human is None:
            s["delay"] = SPEEDS[_int(msg.get("level"), "speed level", 0, len(SPEEDS) - 1)]
        elif kind == "pause" and table.human is None:
            s["paused"] = bool(msg.get("paused"))
        elif kind == "step" and table.human is None:
            s["paused"] = True
            if table.hold is not None and not table.over:
                table.resume()
            else:
                table.agent_move()
        elif kind == "show_hands" and table.human is None:
            viewer.show_hands = bool(msg.get("show"))
        else:
            raise ValueError(f"unknown or unavailable message type {kind!r}")
        await hub.push(table)
        if not s.get("paused"):
            hub.kick(table)

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/table/{table}", index),
            Route("/replays", index),
            Route("/results", index),
            Route("/api/tables", new_table, methods=["POST"]),
            Route("/api/replays", replays),
            Route("/api/replay", replay, methods=["GET", "POST"]),
            Route("/api/results", results),
            WebSocketRoute("/ws/{table}", ws_table),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]
    )
    app.state.hub = hub
    return app
