"""The web table's HTTP and WebSocket routes (Starlette, served by uvicorn).

Routes: ``/`` the page (lobby, table, replays, results: one small page, plain JS modules);
``/static/*`` its assets (all local, no CDN); ``GET /api/agents`` the agent specs a table may
seat (the server's own list: never a path from a request); ``POST /api/tables`` creates a table;
``/ws/{table}`` attaches a browser to a table (a reload or a second tab re-attaches:
the state lives here; a ``hint`` message asks an offered agent what it would play for the
human, answered to that browser only); ``GET /api/replays`` lists saved replays;
``GET /api/replay?name=`` and ``POST /api/replay`` (a replay file's JSON) return its frames;
``GET /api/review?name=|table=&agent=`` and ``POST /api/review?agent=`` the post-deal review
of a human game (``advice.review``); ``GET /api/results`` the human-vs-agent table. Every
message from a browser is checked; a refused one gets an ``error`` message and changes
nothing. ``guard.RequestGuard`` stands before all routes (host,
origin, content type, body cap; ``docs/security.md``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from agents.checkpoint import latest_checkpoint
from agents.registry import make_agent
from agents.zoo import pretrained_specs

from . import advice
from .guard import LOCAL_HOSTS, RequestGuard, parse_json
from .tables import HUMAN, TableRegistry, WebTable, human_results, replay_frames

STATIC = Path(__file__).parent / "static"
MAX_BODY = 1 << 20  # replay uploads (a replay of 10,000 actions is about 50 KiB)
MAX_MESSAGE = 4096  # characters of one browser message on a table's WebSocket
MAX_VIEWERS = 8  # browsers attached to one table
MAX_SOCKETS = 64  # table WebSockets open at once
BUILTIN_AGENTS = ("heuristic", "random")
SPEEDS = (0.0, 0.15, 0.4, 0.8, 1.5)  # seconds between agent moves
THINKING_AFTER_S = 0.3  # an agent deciding for longer is shown as thinking


class Viewer:
    """One attached browser: its socket, the seat it sees from, whether it shows all hands."""

    def __init__(self, ws: WebSocket, seat: int | None) -> None:
        self.ws, self.seat, self.show_hands = ws, seat, False


class Hub:
    """Tables, the browsers attached to each, and the task that plays each table's agents."""

    def __init__(
        self,
        out: Path | None,
        delay: float = 0.4,
        agents: Iterable[str] = (),
        runs: Path | None = None,
        pretrained: bool = True,
    ) -> None:
        self.registry = TableRegistry(out, on_evict=self.forget)
        self.out = out
        self.delay = float(delay)
        self.named_agents = [a for a in agents if a not in BUILTIN_AGENTS]
        # the command line's agents, then the shipped models (strongest first), then the
        # rule-based ones
        self.fixed_agents = list(
            dict.fromkeys(
                [*self.named_agents, *(pretrained_specs() if pretrained else []), *BUILTIN_AGENTS]
            )
        )
        self.runs = runs
        self.viewers: dict[str, set[Viewer]] = {}
        self.tasks: dict[str, asyncio.Task] = {}
        self.settings: dict[str, dict] = {}  # per table: speed, paused (watch tables)
        # replays built at once (off the event loop, in a thread): one, since a second
        # CPU-bound builder thread starves the loop of the GIL (requests beside two builds
        # waited 0.3-1.1 s, beside one they stay well under 0.3 s; tests/hosts/test_web_server.py)
        self.replay_slots = asyncio.Semaphore(1)
        self.advisers: dict[str, dict[str, Any]] = {}  # per table: hint agents by spec
        self.locks: dict[str, asyncio.Lock] = {}  # per table: one agent decision at a time

    def agent_specs(self) -> list[str]:
        """What a table may seat: built-ins, the command line's specs, and the saved runs
        under ``runs`` (``checkpoint:RUN`` for each run with a finished checkpoint)."""
        found = []
        if self.runs is not None and self.runs.is_dir():
            for d in sorted(self.runs.iterdir()):
                if d.is_dir() and latest_checkpoint(d) is not None:
                    found.append(f"checkpoint:{d}")
        return list(dict.fromkeys([*self.fixed_agents, *found]))

    def strongest(self) -> str:
        """The default opponent and adviser: a trained agent the command line named, else
        the strongest shipped model, else a saved run's checkpoint, else the heuristic."""
        named = [s for s in self.named_agents if s.split(":")[0] in ("checkpoint", "pretrained")]
        if named:
            return named[0]
        offered = self.agent_specs()
        return next(
            (s for s in offered if s.startswith("pretrained:")),
            next((s for s in offered if s.startswith("checkpoint:")), "heuristic"),
        )

    def adviser(self, table: WebTable, spec: Any) -> tuple[str, Any]:
        """The agent that gives ``table``'s human hints: ``spec`` if the server offers it
        (None: the strongest), built once per table."""
        spec = self.strongest() if spec is None else spec
        if not isinstance(spec, str) or spec == HUMAN or spec not in self.agent_specs():
            raise ValueError("hints come only from an agent the server offers")
        cache = self.advisers.setdefault(table.id, {})
        if spec not in cache:
            self.check_seats([spec])
            cache[spec] = make_agent(spec, 0)
        return spec, cache[spec]

    def check_seats(self, seats: list[str]) -> None:
        """Only specs the server offers; the same words for every other string (no path is
        looked at), and a listed agent that fails to load says only that."""
        offered = self.agent_specs()
        for s in seats:
            if s != HUMAN and s not in offered:
                raise ValueError(f"unknown agent {s[:60]!r}: choose one of {offered}")
        for s in set(seats) - {HUMAN}:
            try:
                make_agent(s, 0)
            except Exception as e:  # a broken file of a listed run: no traceback to the page
                print(f"web table: agent {s!r} failed to load: {e!r}", file=sys.stderr)
                raise ValueError(f"agent {s!r} could not be loaded") from None

    def forget(self, table_id: str) -> None:
        """Drop what the hub holds for an evicted table."""
        task = self.tasks.pop(table_id, None)
        if task is not None:
            task.cancel()
        self.settings.pop(table_id, None)
        self.viewers.pop(table_id, None)
        self.advisers.pop(table_id, None)
        self.locks.pop(table_id, None)

    def open_table(
        self, seats, mode="deal", random_levels=False, random_tribute=False, seed=None, options=None
    ) -> WebTable:
        """A new table (agent specs checked first), watch tables start paused."""
        self.check_seats(seats)
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
            elif table.agent_to_act() is None:
                return  # a human's turn, or the game is over: the last move was pushed
            elif not await self.agent_move(table, stop_if_paused=True):
                if self.settings.get(table.id, {}).get("paused"):
                    return
                continue  # the table moved on meanwhile (a step of a paused watch table)
            await self.push(table)

    async def agent_move(self, table: WebTable, stop_if_paused: bool = False) -> bool:
        """Play the agent to act: its move is decided in a worker thread so the server keeps
        answering (a search agent thinks for a second), one decision per table at a time;
        past ``THINKING_AFTER_S`` the table shows the seat as thinking. False (nothing
        played) if no agent is to act, the table changed while it thought, or (with
        ``stop_if_paused``) the table was paused meanwhile."""
        lock = self.locks.setdefault(table.id, asyncio.Lock())
        async with lock:
            seat = table.agent_to_act()
            if seat is None:
                return False
            expected = table.version
            job = asyncio.ensure_future(asyncio.to_thread(table.decide, seat))
            done, _ = await asyncio.wait({job}, timeout=THINKING_AFTER_S)
            if not done:
                table.thinking = seat
                table.version += 1
                expected += 1
                await self.push(table)
                try:
                    await job
                finally:
                    table.thinking = None
            paused = stop_if_paused and self.settings.get(table.id, {}).get("paused")
            if paused or table.version != expected or table.agent_to_act() != seat:
                if table.version == expected:
                    table.version += 1  # the thinking mark is gone: say so
                await self.push(table)
                return False
            table.play(seat, job.result())
            return True


def _int(x: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {x!r}")
    return x


def create_app(
    out: Path | None = Path("runs/web"),
    delay: float = 0.4,
    agents: Iterable[str] = (),
    runs: Path | None = None,
    hosts: Iterable[str] = LOCAL_HOSTS,
    pretrained: bool = True,
) -> Starlette:
    """The app: tables may seat ``agents`` (specs), the shipped models (unless not
    ``pretrained``) and the runs under ``runs``; requests must name one of ``hosts``
    (``guard.allowed_hosts``)."""
    hub = Hub(out, delay, agents, runs, pretrained)

    async def index(request: Request):
        return FileResponse(STATIC / "index.html")

    async def agent_list(request: Request):
        return JSONResponse({"agents": hub.agent_specs(), "strongest": hub.strongest()})

    async def new_table(request: Request):
        try:
            body = parse_json(await request.body())
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
        except (ValueError, TypeError, KeyError) as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        return JSONResponse({"table": table.id, "seat": table.human})

    async def replays(request: Request):
        d = (hub.out / "replays") if hub.out else None
        names = sorted(p.name for p in d.glob("*.json")) if d and d.exists() else []
        return JSONResponse({"replays": names})

    async def replay(request: Request):
        try:
            if request.method == "POST":
                data = parse_json(await request.body())  # capped by the guard
            else:
                data = parse_json(_replay_path(request.query_params.get("name", "")).read_bytes())
            async with hub.replay_slots:  # built off the event loop, one at a time
                frames = await run_in_threadpool(replay_frames, data)
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            return JSONResponse({"error": f"cannot read the replay: {e}"}, status_code=400)
        return JSONResponse({"frames": frames})

    async def review(request: Request):
        """The review of a human game: a saved replay (``name``), an uploaded one (POST) or
        the finished deals of a live table (``table``); ``agent`` an offered spec."""
        try:
            q = request.query_params
            spec = q.get("agent") or hub.strongest()
            if spec == HUMAN or spec not in hub.agent_specs():
                raise ValueError("a review comes only from an agent the server offers")
            upto, seat = None, None
            if request.method == "POST":
                data = parse_json(await request.body())  # capped by the guard
            elif q.get("table"):
                table = hub.registry.get(q["table"])
                if table.human is None:
                    raise ValueError("a watch table has no human decisions to review")
                data, seat, upto = table.env.replay().to_dict(), table.human, len(table.results)
            else:
                data = parse_json(_replay_path(q.get("name", "")).read_bytes())
            seat = advice.human_seat(data) if seat is None else seat
            if seat is None:
                raise ValueError("not a human game: no seat is 'human' in its meta.agents")
            hub.check_seats([spec])
            agent = make_agent(spec, 0)
            async with hub.replay_slots:
                out = await run_in_threadpool(advice.review, data, agent, seat, upto)
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            return JSONResponse({"error": f"cannot review: {e}"}, status_code=400)
        return JSONResponse({**out, "agent": spec})

    def _replay_path(name: str) -> Path:
        if not name or "/" in name or "\\" in name or not name.endswith(".json"):
            raise ValueError(f"not a replay name: {name!r}")
        path = (hub.out / "replays" / name) if hub.out else None
        if path is None or not path.is_file():
            raise ValueError(f"no replay {name!r}")
        return path

    async def results(request: Request):
        return JSONResponse({"results": human_results(hub.out) if hub.out else []})

    async def ws_table(ws: WebSocket):
        table_id = ws.path_params["table"]
        busy = hub.viewers.get(table_id, ())
        if len(busy) >= MAX_VIEWERS or sum(map(len, hub.viewers.values())) >= MAX_SOCKETS:
            await ws.close(1013, "too many browsers attached")  # before accept: HTTP 403
            return
        await ws.accept()
        try:
            table = hub.registry.get(table_id)
        except KeyError as e:
            await ws.send_json({"type": "error", "error": str(e)})
            await ws.close()
            return
        viewer = Viewer(ws, table.human)
        hub.viewers.setdefault(table.id, set()).add(viewer)
        table.attach(+1)
        await ws.send_json(hub.view(table, viewer))
        if table.human is not None:
            hub.kick(table)
        try:
            while True:
                text = await ws.receive_text()
                table.attach(0)
                if len(text) > MAX_MESSAGE:
                    await ws.send_json({"type": "error", "error": "message too long"})
                    continue
                try:
                    await handle(table, viewer, parse_json(text))
                except ValueError as e:
                    await ws.send_json({"type": "error", "error": str(e)})
                    await ws.send_json(hub.view(table, viewer))
        except WebSocketDisconnect:
            pass
        finally:
            hub.viewers.get(table.id, set()).discard(viewer)
            table.attach(-1)

    async def handle(table: WebTable, viewer: Viewer, msg: Any) -> None:
        if not isinstance(msg, dict):
            raise ValueError("expected a JSON object")
        kind = msg.get("type")
        s = hub.settings.setdefault(table.id, {"delay": hub.delay, "paused": False})
        if kind == "hint":
            if table.human is None or viewer.seat != table.human:
                raise ValueError("hints are for the human's seat")
            spec, agent = hub.adviser(table, msg.get("agent"))
            await viewer.ws.send_json({"type": "hint", **table.hint(spec, agent)})
            return
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
                await hub.agent_move(table)  # off the event loop, one decision at a time
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
            Route("/review", index),
            Route("/api/agents", agent_list),
            Route("/api/tables", new_table, methods=["POST"]),
            Route("/api/replays", replays),
            Route("/api/replay", replay, methods=["GET", "POST"]),
            Route("/api/review", review, methods=["GET", "POST"]),
            Route("/api/results", results),
            WebSocketRoute("/ws/{table}", ws_table),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=[
            Middleware(
                RequestGuard,
                hosts=hosts,
                body_limits={"/api/replay": MAX_BODY, "/api/review": MAX_BODY},
            ),
        ],
    )
    app.state.hub = hub
    return app
