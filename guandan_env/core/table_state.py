"""Per-table deal state, batch-first: the one declaration of its fields.

``TableState`` holds ``B`` tables as numpy arrays (leading axis ``B``), as pgx's ``State``
does. The vector env keeps its tables in one; the observation encoder reads one directly;
``table_state(games)`` writes ``engine.Game``s into one (the single-table engine keeps its
own Python fields for speed, and tests hold the two equal field by field). Each field
declares its per-table shape, dtype and meaning once, in its metadata; ``zeros`` allocates
from them. Seats are absolute; ``-1`` marks "none".
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

import numpy as np

from .cards import NUM_FACES
from .phase import Phase

if TYPE_CHECKING:
    from .engine import Game


def _f(shape: tuple[int, ...], dtype: type, doc: str):
    return field(metadata={"shape": shape, "dtype": np.dtype(dtype), "doc": doc})


@dataclass(eq=False)
class TableState:
    """``B`` tables of one deal each (see the module docstring)."""

    hands: np.ndarray = _f((4, NUM_FACES), np.uint8, "face counts held by each seat")
    played: np.ndarray = _f((4, NUM_FACES), np.uint8, "faces each seat has played this deal")
    last_cards: np.ndarray = _f((4, NUM_FACES), np.uint8, "faces of each seat's latest play")
    cards_left: np.ndarray = _f((4,), np.int64, "cards each seat holds")
    level: np.ndarray = _f((), np.int64, "the deal's level rank index (R-2.1)")
    levels: np.ndarray = _f((2,), np.int64, "each team's level")
    leveling_team: np.ndarray = _f((), np.int64, "the team the deal is played for, -1: none")
    a_failures: np.ndarray = _f((2,), np.int64, "failures at A per team (R-6.6)")
    to_act: np.ndarray = _f((), np.int64, "the seat to act")
    deal_leader: np.ndarray = _f((), np.int64, "who leads the deal's first trick (R-7.4)")
    returning: np.ndarray = _f((), bool, "the decision is a tribute return (R-7.1)")
    table_action: np.ndarray = _f((), np.int64, "the play to beat, -1 when leading")
    table_seat: np.ndarray = _f((), np.int64, "who made it, -1 when leading")
    passes: np.ndarray = _f((), np.int64, "passes since the play to beat")
    move_in_trick: np.ndarray = _f((4,), np.int64, "phase.TrickMove per seat, this trick")
    finish_place: np.ndarray = _f((4,), np.int64, "0 playing, else 1..4")
    finish_order: np.ndarray = _f((4,), np.int64, "seats in finishing order, -1 padded")
    num_finished: np.ndarray = _f((), np.int64, "seats out of cards")
    tribute_face: np.ndarray = _f((4,), np.int64, "face given as tribute by seat, -1")
    tribute_received: np.ndarray = _f((4,), bool, "seat received a tribute")
    return_face: np.ndarray = _f((4,), np.int64, "face returned by seat, -1")
    return_to: np.ndarray = _f((4,), np.int64, "seat the return went to, -1")
    resisted: np.ndarray = _f((), bool, "the tribute was resisted (R-7.3)")
    resist_jokers: np.ndarray = _f((4,), np.int64, "big jokers shown per seat (R-8.2)")
    pending_receiver: np.ndarray = _f((2,), np.int64, "tribute receivers, in return order")
    pending_giver: np.ndarray = _f((2,), np.int64, "their givers")
    num_pending: np.ndarray = _f((), np.int64, "returns due this deal")
    returns_done: np.ndarray = _f((), np.int64, "returns made so far")

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


def table_state(games: list[Game]) -> TableState:
    """The deals of ``games`` (``engine.Game``, at any point of play) as a ``TableState``.

    Field by field over all games (one numpy assignment each): the vector env loads every
    new deal through this."""
    s = TableState.zeros(len(games))
    if not games:
        return s
    counts = np.stack([g.counts for g in games])  # rows: hands 0-3, played 4-7, latest 8-11
    s.hands[:], s.played[:], s.last_cards[:] = counts[:, 0:4], counts[:, 4:8], counts[:, 8:12]
    s.cards_left[:] = s.hands.sum(2, dtype=np.int64)
    s.level[:] = [g.level for g in games]
    s.levels[:] = [g.levels for g in games]
    s.leveling_team[:] = [-1 if g.leveling_team is None else g.leveling_team for g in games]
    s.a_failures[:] = [g.a_failures for g in games]
    s.to_act[:] = [g.to_act for g in games]
    s.deal_leader[:] = [g.deal_leader for g in games]
    s.returning[:] = [g.phase == Phase.RETURN for g in games]
    playing = [g.phase == Phase.PLAY for g in games]
    s.table_action[:] = [g.table_action if p else -1 for g, p in zip(games, playing, strict=True)]
    s.table_seat[:] = [g.table_seat if p else -1 for g, p in zip(games, playing, strict=True)]
    s.passes[:] = [g.passes for g in games]
    s.move_in_trick[:] = [g.move_in_trick for g in games]
    s.finish_order[:] = [[*g.finish_order, *[-1] * (4 - len(g.finish_order))] for g in games]
    s.num_finished[:] = [len(g.finish_order) for g in games]
    s.resisted[:] = [g.resisted for g in games]
    s.resist_jokers[:] = [[g.resist_jokers.count(seat) for seat in range(4)] for g in games]
    s.tribute_face[:], s.return_face[:], s.return_to[:] = -1, -1, -1
    s.finish_place[:] = [g.finish_places() for g in games]
    for i, g in enumerate(games):
        if not g.tributes:
            continue
        done = [k for k, t in enumerate(g.tributes) if t.returned >= 0]
        order = done + [k for k in g.pending_returns if k not in done]
        s.tribute_face[i], s.tribute_received[i], s.return_face[i], s.return_to[i] = (
            g.tribute_facts()
        )
        for k, ti in enumerate(order[:2]):
            s.pending_receiver[i, k] = g.tributes[ti].receiver
            s.pending_giver[i, k] = g.tributes[ti].giver
        s.num_pending[i] = len(order)
        s.returns_done[i] = len(done)
    return s
