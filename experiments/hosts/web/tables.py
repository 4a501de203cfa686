"""Game sessions of the web table: one ``WebTable`` per game, the engine as the only authority.

A table holds the AEC env (recorded for a replay), the agents of the seats no human plays,
and what each browser may see. ``view(seat)`` is the single place that decides what leaves
the server: the seat's own hand, public plays, counts, levels (R-8.1), tribute cards
(public) and return cards only for the two seats that exchanged them (R-8.2). Other hands go
out only for a watch table (no human seat) whose viewer asked to see them.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.registry import make_agent
from experiments.evaluation.duplicate import LazyObservation, derive_seed
from guandan_env.core import actions as T
from guandan_env.core.cards import (
    NUM_FACES,
    face_text,
    is_wild,
    sort_key,
    wildcard_face,
)
from guandan_env.core.phase import Phase
from guandan_env.core.text import action_text
from guandan_env.encoding import protocol as P
from guandan_env.encoding.events import Played, Returned
from guandan_env.envs.aec import AGENTS, raw_env, seat_view
from guandan_env.envs.replay import ReplayRecorder

from . import advice
from .tracker import tracker
from .words import declaration, rank

HUMAN = "human"
MAX_TABLES = 64
MAX_REPLAY_ACTIONS = 10_000  # a replay shown on the page (a long match is ~3,000)


def card(face: int, level: int) -> dict[str, Any]:
    return {"card": face_text(int(face)), "wild": bool(is_wild(int(face), level))}


def cards_of(counts: np.ndarray, level: int) -> list[dict[str, Any]]:
    """A hand in level order (R-2.4), wildcards marked."""
    return faces_list(np.repeat(np.arange(NUM_FACES), counts), level)


def faces_list(faces, level: int) -> list[dict[str, Any]]:
    fl = sorted((int(f) for f in faces), key=lambda f: sort_key(f, level))
    return [card(f, level) for f in fl]


class WebTable:
    """One game: a deal or a match. ``seats[s]`` is ``"human"`` or an agent spec."""

    def __init__(
        self,
        seats: list[str],
        mode: str = "deal",
        random_levels: bool = False,
        random_tribute: bool = False,
        seed: int | None = None,
        out: Path | None = None,
        options: dict | None = None,
    ) -> None:
        if len(seats) != 4:
            raise ValueError(f"a table needs 4 seats, got {len(seats)}")
        if mode not in ("deal", "match"):
            raise ValueError(f"mode must be 'deal' or 'match', got {mode!r}")
        if sum(s == HUMAN for s in seats) > 1:
            raise ValueError("at most one human seat per table")
        self.id = secrets.token_urlsafe(9)
        self.seats = list(seats)
        self.human = seats.index(HUMAN) if HUMAN in seats else None
        self.mode = mode
        self.seed = int(seed if seed is not None else secrets.randbits(62))
        self.out = out
        self.agents: dict[int, Any] = {}
        for s, spec in enumerate(seats):
            if spec != HUMAN:
                agent = make_agent(spec, derive_seed(self.seed, s))
                agent.reset(derive_seed(self.seed, s))
                self.agents[s] = agent
        cfg: dict[str, Any] = {"mode": mode}
        if mode == "deal":
            cfg.update(random_levels=bool(random_levels), random_tribute=bool(random_tribute))
        self.env = ReplayRecorder(raw_env(**cfg))
        # scenario options (hands, levels, previous_order, leader …) are the env's, checked
        # there (guandan_env.envs.scenario): a table can be set up for a lesson or a test
        self.env.reset(seed=self.seed, options=options)
        # this deal's moves as the env's events, with the deal's level (private: a return
        # card is shown only to the two seats of the exchange, ``Returned.visible_to``)
        self.log: list[tuple[Played | Returned, int]] = []
        self.results: list[dict[str, Any]] = []  # finished deals
        self.hold: dict[str, Any] | None = None  # a finished deal shown until "continue"
        self.thinking: int | None = None  # the seat of an agent deciding for a while
        self.over = False
        self.created = time.time()
        self.active = self.created  # last time a browser attached, left or sent a message
        self.attached = 0  # browsers attached now
        self.saved: Path | None = None
        self.version = 0  # moves made and results left: a browser acts on the version it saw
        # hints the human asked for: deal, replay index of the decision, agent, action, and
        # whether the human then played it (written to the human-results file)
        self.hints: list[dict[str, Any]] = []

    def attach(self, change: int) -> None:
        """A browser attached (+1), left (-1) or sent a message (0)."""
        self.attached = max(0, self.attached + change)
        self.active = time.time()

    # ------------------------------------------------------------------ moves
    @property
    def game(self):
        return self.env.unwrapped.game

    def to_act(self) -> int | None:
        if self.over or self.hold is not None:
            return None
        return int(self.game.to_act)

    def human_turn(self) -> bool:
        return self.human is not None and self.to_act() == self.human

    def legal_ids(self) -> list[int]:
        return np.flatnonzero(self.env.unwrapped.action_mask()).tolist()

    def play(self, seat: int, action: int, version: int | None = None) -> None:
        """Apply ``action`` for ``seat``; ``ValueError`` (state unchanged) if it is not that
        seat's turn, the browser acted on an older state (``version``, e.g. a double click),
        or the action is illegal (the engine's words)."""
        if version is not None and version != self.version:
            raise ValueError("the table has moved on since that click: nothing was played")
        if self.to_act() != seat:
            raise ValueError(f"it is not seat {seat}'s turn")
        if isinstance(action, bool) or not isinstance(action, int):
            raise ValueError(f"an action is an integer id, got {action!r}")
        env = self.env.unwrapped
        level, seen, index = self.game.level, len(env.events), len(self.env.actions)
        self.env.step(action)
        for h in self.hints:
            if h["index"] == index:
                h["followed"] = (
                    h["action"] == action
                )  # raises with the rule if illegal; nothing changes then
        res = env.infos[AGENTS[0]].get("deal_result")
        move = next(e for e in env.events[seen:] if isinstance(e, Played | Returned))
        self.log.append((move, level))
        self.version += 1
        if res is not None:
            self._deal_over(res)

    def _deal_over(self, res: dict) -> None:
        env = self.env.unwrapped
        done = env.terminations[AGENTS[0]] or env.truncations[AGENTS[0]]
        order = [int(s) for s in res["order"]]
        result = {
            "order": order,
            "winner_team": int(res["winner_team"]),
            "gain": int(res["gain"]),
            "double_down": bool(res["double_down"]),
            "deal_level": rank(res["deal_level"]),
            "levels": [rank(lv) for lv in res["levels"]],
            "match_winner": res["match_winner"],
            "tribute_next": None if done else self._tribute_next(order, bool(res["double_down"])),
        }
        self.results.append(result)
        self.hold = result
        if done:
            self.over = True
            self.save()

    @staticmethod
    def _tribute_next(order: list[int], double_down: bool) -> dict[str, Any]:
        """Who pays tribute next deal (R-7.1, double tribute R-7.2), for the page to word."""
        if double_down:
            return {"double": True, "givers": [order[2], order[3]], "receivers": order[:2]}
        return {"double": False, "givers": [order[3]], "receivers": [order[0]]}

    def hint(self, spec: str, agent: Any) -> dict[str, Any]:
        """What ``agent`` (built from ``spec``) would play for the human now, recorded."""
        if not self.human_turn():
            raise ValueError("a hint is for your own turn")
        h = advice.hint(agent, self.env.unwrapped, self.human)
        self.hints.append(
            {
                "deal": int(self.game.deal_number),
                "index": len(self.env.actions),
                "agent": spec,
                "action": h["action"],
                "prob": h["prob"],
                "followed": None,
            }
        )
        return {**h, "agent": spec, "version": self.version}

    def resume(self) -> None:
        """Leave the finished deal's result (the next deal has already been dealt)."""
        if self.hold is not None and not self.over:
            self.hold = None
            self.log.clear()
            self.version += 1

    def agent_to_act(self) -> int | None:
        """The seat of the agent to act now, or None (a human's turn, or nobody's)."""
        seat = self.to_act()
        return seat if seat is not None and seat in self.agents else None

    def decide(self, seat: int) -> int:
        """The agent's choice at ``seat`` (reads the table, changes nothing: it may run off
        the server's event loop while the table is shown)."""
        env = self.env.unwrapped
        agent = self.agents[seat]
        return int(agent.act(LazyObservation(env, AGENTS[seat]), env.infos[AGENTS[seat]]))

    def agent_move(self) -> bool:
        """One agent decision if an agent is to act; False if a human or nobody is."""
        seat = self.agent_to_act()
        if seat is None:
            return False
        self.play(seat, self.decide(seat))
        return True

    # ------------------------------------------------------------------ what a browser sees
    def view(self, viewer: int | None, show_hands: bool = False) -> dict[str, Any]:
        g = self.game
        level = g.level
        me = viewer
        # what the viewer's seat may know: its hand and the card tracker come from it
        sv = seat_view(g, me) if me is not None and self.hold is None else None
        left = g.cards_left()
        last_of: dict[int, dict] = {}
        for move, lv in self.log:
            if isinstance(move, Played):
                last_of[move.seat] = self._entry(move, lv, me)
        log = [self._entry(move, lv, me) for move, lv in self.log[-12:]]
        table_play = None
        if g.phase == Phase.PLAY and g.table_action >= 0 and self.hold is None:
            lp = last_of.get(int(g.table_seat))
            table_play = {
                "seat": int(g.table_seat),
                "text": action_text(g.table_action, level),
                "decl": declaration(g.table_action, level),
                "cards": lp["cards"] if lp else [],
            }
        seats = []
        for s in range(4):
            name = "you" if s == me else ("human" if self.seats[s] == HUMAN else self.seats[s])
            e = last_of.get(s)
            role = (
                None
                if me is None
                else ("you" if s == me else ("partner" if s % 2 == me % 2 else "opponent"))
            )
            seats.append(
                {
                    "seat": s,
                    "name": name,
                    "spec": self.seats[s],
                    "role": role,
                    "team": s % 2,
                    "left": int(left[s]),
                    "last": None
                    if e is None
                    else {"text": e["text"], "decl": e["decl"], "cards": e["cards"]},
                    "place": int(g.finish_places()[s]),
                    "hand": cards_of(g.hands[s], level)
                    if (show_hands and self.human is None)
                    else None,
                }
            )
        out: dict[str, Any] = {
            "type": "state",
            "table": self.id,
            "version": self.version,
            "mode": self.mode,
            "viewer": me,
            "watch": self.human is None,
            "deal": int(g.deal_number),
            "level": rank(level),
            "levels": [rank(lv) for lv in g.levels],
            "leveling_team": g.leveling_team,
            "phase": "over" if self.over else ("result" if self.hold else g.phase),
            "to_act": self.to_act(),
            "thinking": self.thinking,  # an agent's seat while its decision takes a while
            "your_turn": me is not None and self.to_act() == me,
            # while a finished deal is shown, the next one is already dealt: its hand waits
            "hand": cards_of(sv.hand, level) if sv is not None else None,
            "tracker": tracker(sv) if sv is not None else None,
            "seats": seats,
            "table_play": table_play,
            "tributes": [
                {"giver": t.giver, "receiver": t.receiver, "card": face_text(t.face)}
                for t in g.tributes
            ]
            if self.hold is None
            else [],
            "resisted": bool(g.resisted),
            "log": log,
            "result": self.hold,
            "results": self.results,
            "legal": self._legal(me) if me is not None and self.to_act() == me else [],
        }
        return out

    @staticmethod
    def _entry(move: Played | Returned, level: int, me: int | None) -> dict[str, Any]:
        """A move as the browser of seat ``me`` may see it (R-8.2 for returns)."""
        if isinstance(move, Returned):
            shown = move.visible_to(me)
            return {
                "seat": move.seat,
                "text": action_text(T.return_action(move.face), level) if shown else "return",
                "decl": declaration(T.return_action(move.face), level)
                if shown
                else {"kind": "return", "body": "", "suit": None, "wilds": 0},
                "cards": faces_list([move.face], level) if shown else [],
                "kind": "return",
                "return_to": move.to,
            }
        return {
            "seat": move.seat,
            "text": "pass" if move.is_pass else action_text(move.action, level),
            "decl": declaration(move.action, level),
            "cards": faces_list(move.faces, level),
            "kind": T.KIND_NAMES[int(T.KIND[move.action])],
            "return_to": None,
        }

    def _legal(self, seat: int) -> list[dict[str, Any]]:
        """Every legal declaration with each card choice the hand allows (the engine's first)."""
        g = self.game
        level = g.level
        out = []
        for a in self.legal_ids():
            kind = T.KIND_NAMES[int(T.KIND[a])]
            if kind == "pass":
                variants = [[]]
            else:
                variants = [
                    [c["card"] for c in faces_list(v, level)]
                    for v in P.variants(g.hands[seat], level, a, limit=64)
                ]
            out.append(
                {
                    "id": int(a),
                    "kind": kind,
                    "label": kind.replace("_", " "),
                    "text": "pass" if kind == "pass" else action_text(a, level),
                    "decl": declaration(a, level),
                    "variants": variants,
                }
            )
        return out

    # ------------------------------------------------------------------ records
    def save(self) -> Path | None:
        """The game's replay and, for a human game, a row of the results file."""
        if self.out is None or self.saved is not None:
            return self.saved
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / "replays" / f"web_{self.id}.json"
        meta = {"agents": self.seats, "source": "web", "table": self.id, "hints": self.hints}
        self.env.save(path, meta=meta)
        self.saved = path
        if self.human is not None:
            team = self.human % 2
            row = {
                "table": self.id,
                "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "mode": self.mode,
                "human_seat": self.human,
                "partner": self.seats[(self.human + 2) % 4],
                "opponents": [self.seats[(self.human + 1) % 4], self.seats[(self.human + 3) % 4]],
                "deals": len(self.results),
                "human_gain": sum(
                    r["gain"] if r["winner_team"] == team else -r["gain"] for r in self.results
                ),
                "deals_won": sum(r["winner_team"] == team for r in self.results),
                "replay": str(path),
                "hints": len(self.hints),  # a study may exclude or count games with hints
                "hints_followed": sum(bool(h["followed"]) for h in self.hints),
                "hint_log": self.hints,
            }
            with open(self.out / "human_results.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")
        return path


def replay_frames(data: dict) -> list[dict[str, Any]]:
    """Every state of a saved replay, all hands shown, for stepping back and forth; at most
    ``MAX_REPLAY_ACTIONS``. Compact: a hand is one text (``"S2 H3 …"``, the wildcard named
    once per frame as ``wild``) and ``None`` where it is the previous frame's (the page fills
    it in)."""
    from guandan_env.envs.replay import Replay, replay_steps, start_game

    actions = data.get("actions") if isinstance(data, dict) else None
    if isinstance(actions, list) and len(actions) > MAX_REPLAY_ACTIONS:
        raise ValueError(f"{len(actions)} actions: the page shows at most {MAX_REPLAY_ACTIONS}")
    r = Replay.from_dict(data)
    g = start_game(r)
    frames = [_frame(g, None, None)]
    last = list(frames[0]["hands"])
    for st in replay_steps(r):
        f = _frame(st.game, st, st.deal_result)
        hands = f["hands"]
        f["hands"] = [None if h == last[s] else h for s, h in enumerate(hands)]
        last = hands
        frames.append(f)
    return frames


def _frame(g, st, result) -> dict[str, Any]:
    level = g.level
    move = None
    if st is not None:
        lv = level if result is None else int(result["deal_level"])
        move = {
            "seat": st.seat,
            "text": "pass" if st.action == T.PASS_ACTION else action_text(st.action, lv),
            "decl": declaration(st.action, lv),
            "cards": faces_list(st.faces, lv),
        }
    return {
        "deal": int(g.deal_number),
        "level": rank(level),
        "levels": [rank(x) for x in g.levels],
        "wild": face_text(wildcard_face(level)),
        "hands": [" ".join(c["card"] for c in cards_of(g.hands[s], level)) for s in range(4)],
        "left": g.cards_left(),
        "move": move,
        "table": action_text(g.table_action, level)
        if g.phase == Phase.PLAY and g.table_action >= 0
        else None,
        "table_decl": declaration(g.table_action, level)
        if g.phase == Phase.PLAY and g.table_action >= 0
        else None,
        "result": None
        if result is None
        else {
            **result,
            "deal_level": rank(int(result["deal_level"])),
            "levels": [rank(x) for x in result["levels"]],
        },
    }


def human_results(out: Path) -> list[dict[str, Any]]:
    """Per agent spec the human played against: deals, the human's mean level gain per deal
    and deal win rate, with 95% bootstrap intervals (``experiments.evaluation.ratings``)."""
    from experiments.evaluation.ratings import bootstrap_ci

    path = out / "human_results.jsonl"
    rows = (
        [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []
    )
    by: dict[str, list[dict]] = {}
    for r in rows:
        key = " / ".join(sorted(set(r["opponents"])))
        by.setdefault(key, []).append(r)
    table = []
    for opp, rs in sorted(by.items()):
        gains = [r["human_gain"] for r in rs]
        deals = [r["deals"] for r in rs]
        won = [r["deals_won"] for r in rs]
        g = bootstrap_ci(gains, deals)
        w = bootstrap_ci(won, deals)
        table.append(
            {
                "opponents": opp,
                "games": len(rs),
                "deals": int(sum(deals)),
                "human_gain_per_deal": [round(x, 3) for x in g],
                "human_deal_win_rate": [round(x, 3) for x in w],
            }
        )
    return table


class TableRegistry:
    """The tables of one server. Beyond ``MAX_TABLES`` one goes: the oldest finished one,
    else the one idle longest with no browser attached (tables nobody opened included)."""

    def __init__(self, out: Path | None, on_evict=None) -> None:
        self.out = out
        self.tables: dict[str, WebTable] = {}
        self.on_evict = on_evict

    def create(self, **kw) -> WebTable:
        t = WebTable(out=self.out, **kw)  # a refused table evicts nothing
        if len(self.tables) >= MAX_TABLES:
            self.evict()
        self.tables[t.id] = t
        return t

    def evict(self) -> None:
        """Drop one table (see the class doc); ``ValueError`` if every one is in use."""
        done = sorted((t for t in self.tables.values() if t.over), key=lambda t: t.created)
        idle = sorted((t for t in self.tables.values() if not t.attached), key=lambda t: t.active)
        gone = (done or idle or [None])[0]
        if gone is None:
            raise ValueError(f"{MAX_TABLES} tables are open and in use; finish one first")
        del self.tables[gone.id]
        if self.on_evict is not None:
            self.on_evict(gone.id)

    def get(self, table_id: str) -> WebTable:
        t = self.tables.get(table_id)
        if t is None:
            raise KeyError(f"no table {table_id!r}")
        return t
