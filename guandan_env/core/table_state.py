"""Per-table deal state, batch-first: the one declaration of its fields.

``TableState`` holds ``B`` tables as numpy arrays (leading axis ``B``), as pgx's ``State``
does. The vector env keeps its tables in one; the observation encoder reads one directly;
``write_games`` / ``table_state(games)`` write ``engine.Game``s into one (the single-table
engine keeps its own Python fields for speed, and tests hold the two equal field by field).
Each field declares once, in its metadata, its per-table shape, dtype and meaning and how it
reads off a ``Game``; ``zeros`` allocates from them and ``write_games`` copies through them.
Seats are absolute; ``-1`` marks "none".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from .cards import NUM_FACES
from .phase import Phase

if TYPE_CHECKING:
    from .engine import Game


def _f(
    shape: tuple[int, ...],
    dtype: type,
    doc: str,
    of_game: Callable[[Game], Any],
    item: int | None = None,
):
    """A field: its per-table shape and dtype, its meaning, and its value for one
    ``engine.Game`` (what ``write_games`` writes): ``of_game(g)``, or ``of_game(g)[item]``
    where one function gives several fields (computed once per game)."""
    meta = {"shape": shape, "dtype": np.dtype(dtype), "doc": doc}
    return field(metadata={**meta, "of_game": of_game, "item": item})


def _playing(g: Game) -> bool:
    return g.phase == Phase.PLAY


_NO_TRIBUTE = ([-1] * 4, [False] * 4, [-1] * 4, [-1] * 4, [0, 0], [0, 0], 0, 0)


def _tribute_row(g: Game) -> tuple:
    """The tribute fields of a game: ``Game.tribute_facts()`` (4 per-seat lists), then the
    receivers and givers of the returns (made first, then due; R-7.2), how many are due in
    all and how many are made."""
    if not g.tributes:
        return _NO_TRIBUTE
    done = [k for k, t in enumerate(g.tributes) if t.returned >= 0]
    order = done + [k for k in g.pending_returns if k not in done]
    pad = [0] * (2 - len(order[:2]))
    receivers = [g.tributes[k].receiver for k in order[:2]] + pad
    givers = [g.tributes[k].giver for k in order[:2]] + pad
    return (*g.tribute_facts(), receivers, givers, len(order), len(done))


@dataclass(eq=False)
class TableState:
    """``B`` tables of one deal each (see the module docstring)."""

    hands: np.ndarray = _f(
        (4, NUM_FACES), np.uint8, "face counts held by each seat", lambda g: g.hands
    )
    played: np.ndarray = _f(
        (4, NUM_FACES), np.uint8, "faces each seat has played this deal", lambda g: g.played
    )
    last_cards: np.ndarray = _f(
        (4, NUM_FACES), np.uint8, "faces of each seat's latest play", lambda g: g.last_cards
    )
    cards_left: np.ndarray = _f((4,), np.int64, "cards each seat holds", lambda g: g.cards_left())
    level: np.ndarray = _f((), np.int64, "the deal's level rank index (R-2.1)", lambda g: g.level)
    levels: np.ndarray = _f((2,), np.int64, "each team's level", lambda g: g.levels)
    leveling_team: np.ndarray = _f(
        (),
        np.int64,
        "the team the deal is played for, -1: none",
        lambda g: -1 if g.leveling_team is None else g.leveling_team,
    )
    a_failures: np.ndarray = _f(
        (2,), np.int64, "failures at A per team (R-6.6)", lambda g: g.a_failures
    )
    to_act: np.ndarray = _f((), np.int64, "the seat to act", lambda g: g.to_act)
    deal_leader: np.ndarray = _f(
        (), np.int64, "who leads the deal's first trick (R-7.4)", lambda g: g.deal_leader
    )
    returning: np.ndarray = _f(
        (), bool, "the decision is a tribute return (R-7.1)", lambda g: g.phase == Phase.RETURN
    )
    table_action: np.ndarray = _f(
        (),
        np.int64,
        "the play to beat, -1 when leading",
        lambda g: g.table_action if _playing(g) else -1,
    )
    table_seat: np.ndarray = _f(
        (), np.int64, "who made it, -1 when leading", lambda g: g.table_seat if _playing(g) else -1
    )
    passes: np.ndarray = _f((), np.int64, "passes since the play to beat", lambda g: g.passes)
    move_in_trick: np.ndarray = _f(
        (4,), np.int64, "phase.TrickMove per seat, this trick", lambda g: g.move_in_trick
    )
    finish_place: np.ndarray = _f(
        (4,), np.int64, "0 playing, else 1..4", lambda g: g.finish_places()
    )
    finish_order: np.ndarray = _f(
        (4,),
        np.int64,
        "seats in finishing order, -1 padded",
        lambda g: [*g.finish_order, *[-1] * (4 - len(g.finish_order))],
    )
    num_finished: np.ndarray = _f((), np.int64, "seats out of cards", lambda g: len(g.finish_order))
    tribute_face: np.ndarray = _f(
        (4,), np.int64, "face given as tribute by seat, -1", _tribute_row, 0
    )
    tribute_received: np.ndarray = _f((4,), bool, "seat received a tribute", _tribute_row, 1)
    return_face: np.ndarray = _f((4,), np.int64, "face returned by seat, -1", _tribute_row, 2)
    return_to: np.ndarray = _f((4,), np.int64, "seat the return went to, -1", _tribute_row, 3)
    resisted: np.ndarray = _f((), bool, "the tribute was resisted (R-7.3)", lambda g: g.resisted)
    resist_jokers: np.ndarray = _f(
        (4,),
        np.int64,
        "big jokers shown per seat (R-8.2)",
        lambda g: [g.resist_jokers.count(s) for s in range(4)],
    )
    pending_receiver: np.ndarray = _f(
        (2,), np.int64, "tribute receivers, in return order", _tribute_row, 4
    )
    pending_giver: np.ndarray = _f((2,), np.int64, "their givers", _tribute_row, 5)
    num_pending: np.ndarray = _f((), np.int64, "returns due this deal", _tribute_row, 6)
    returns_done: np.ndarray = _f((), np.int64, "returns made so far", _tribute_row, 7)

    @classmethod
    def zeros(cls, b: int) -> TableState:
        """``b`` tables, every field zero."""
        return cls(
            **{
                f.name: np.zeros((b, *f.metadata["shape"]), dtype=f.metadata["dtype"])
                for f in fields(cls)
            }
        )

    @property
    def num_tables(self) -> int:
        return int(self.level.shape[0])


FIELD_NAMES = tuple(f.name for f in fields(TableState))


# (field name, of_game, item) of every field, read once
_SOURCES = tuple((f.name, f.metadata["of_game"], f.metadata["item"]) for f in fields(TableState))


def write_games(state: TableState, idx: np.ndarray, games: list[Game]) -> None:
    """Write the deals of ``games`` (``engine.Game``, at any point of play) into the tables
    ``idx`` of ``state``: each field's declared ``of_game`` value, one numpy assignment per
    field over all games. The vector env loads every new deal through this."""
    if not games:
        return
    rows: dict[Callable, list] = {}  # functions that give several fields: once per game
    for name, of_game, item in _SOURCES:
        if item is None:
            values = [of_game(g) for g in games]
        else:
            if of_game not in rows:
                rows[of_game] = [of_game(g) for g in games]
            values = [r[item] for r in rows[of_game]]
        getattr(state, name)[idx] = values


def table_state(games: list[Game]) -> TableState:
    """The deals of ``games`` as a new ``TableState`` (``write_games`` into zeros)."""
    s = TableState.zeros(len(games))
    write_games(s, np.arange(len(games)), games)
    return s
