"""Information sets from what a seat sees: ``infoset_of_view(view)`` turns a ``SeatView``
(the public record and the seat's own hand, R-8) into a ``core.infoset.InfoSet``;
``infoset(game, seat)`` goes through the seat's view, so nothing hidden reaches the sampler.

    from guandan_env.envs.infoset import infoset
    from guandan_env.core.infoset import Sampler
    worlds = Sampler(infoset(game, seat)).games(32, rng)   # engine states to play on
"""

from __future__ import annotations

import numpy as np

from ..core.engine import Game
from ..core.infoset import InfoSet, Sampler
from .aec import SeatView, seat_view

__all__ = ["InfoSet", "Sampler", "infoset", "infoset_of_view"]


def infoset_of_view(view: SeatView) -> InfoSet:
    """The information set of the seat whose view this is."""
    return InfoSet(
        seat=int(view.seat),
        hand=np.asarray(view.hand, dtype=np.uint8).copy(),
        level=int(view.level),
        levels=(int(view.levels[0]), int(view.levels[1])),
        leveling_team=view.leveling_team,
        a_failures=(int(view.a_failures[0]), int(view.a_failures[1])),
        deal_number=int(view.deal_number),
        max_deals=view.max_deals,
        phase=view.phase,
        to_act=int(view.to_act if view.to_act >= 0 else view.seat),
        leader=int(view.leader),
        deal_leader=int(view.deal_leader),
        table_action=int(view.table_action),
        table_seat=int(view.table_seat),
        passes=int(view.passes),
        move_in_trick=tuple(int(m) for m in view.move_in_trick),
        cards_left=tuple(int(c) for c in view.cards_left),
        finish_order=tuple(int(s) for s in view.finish_order),
        history=tuple(view.history),
        tributes=tuple(tuple(int(x) for x in t) for t in view.tributes),
        pending_returns=tuple(int(k) for k in view.pending_returns),
        resisted=bool(view.resisted),
        resist_jokers=tuple(int(s) for s in view.resist_jokers),
        deal_cards=int(view.deal_cards),
    )


def infoset(game: Game, seat: int) -> InfoSet:
    """``seat``'s information set in ``game``, through its ``SeatView``."""
    return infoset_of_view(seat_view(game, seat))
