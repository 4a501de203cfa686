"""End of a deal and the levels it settles (RULES.md R-6), as pure functions.

``deal_result(finish_order, level)`` decides whether a finishing order ends the deal (R-6.2)
and what it is worth (R-6.3); ``settle(match, result)`` applies a result to the match's
levels (R-6.4–R-6.8) and returns the new ``MatchLevels``. ``engine.Game.finish_deal`` is
their one caller; the batched env reaches them through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

ACE = 12  # rank index of A: the top level
GAIN_BY_PARTNER_PLACE = {1: 3, 2: 2, 3: 1}  # partner second/third/last
MAX_A_FAILURES = 3


def team_of(seat: int) -> int:
    return seat % 2


def partner_of(seat: int) -> int:
    return (seat + 2) % 4


@dataclass(slots=True)
class DealResult:
    order: list[int]  # full finishing order; in a 双下 the two losers follow in seat order
    winner_team: int
    gain: int  # levels the winning team earns (3/2/1), R-6.3
    double_down: bool  # 双下
    deal_level: int
    match_winner: int | None = None
    a_failure_team: int | None = None
    levels: tuple[int, int] = (0, 0)  # both teams' levels after this deal settled them

    def info(self) -> dict:
        """The AEC env's ``infos[agent]["deal_result"]``, JSON-ready; levels are rank indices
        (0 = 2 .. 12 = A, R-2.1), as everywhere else (``cards.RANK_TEXT`` words them)."""
        return {
            "order": [int(s) for s in self.order],
            "winner_team": int(self.winner_team),
            "gain": int(self.gain),
            "double_down": bool(self.double_down),
            "levels": [int(x) for x in self.levels],
            "deal_level": int(self.deal_level),
            "match_winner": self.match_winner,
        }

    def rewards(self, match_win_bonus: float = 0.0) -> np.ndarray:
        """Per-seat deal reward: ±gain, zero-sum between teams (DESIGN.md), plus
        ±``match_win_bonus`` when this deal decided the match (the envs' config key)."""
        r = np.full(4, -self.gain, dtype=np.float32)
        r[self.winner_team :: 2] = self.gain
        if self.match_winner is not None and match_win_bonus:
            r += np.where(np.arange(4) % 2 == self.match_winner, 1, -1) * np.float32(
                match_win_bonus
            )
        return r


class MatchLevels(NamedTuple):
    """What a deal's result changes in a match: both teams' levels (rank indices, R-2.1),
    the leveling team (``None`` before the first deal), failures at A per team, and
    whether (and by whom) the match is decided. Immutable (a named tuple: cheap to build
    once per deal in the batched env)."""

    levels: tuple[int, int] = (0, 0)
    leveling_team: int | None = None
    a_failures: tuple[int, int] = (0, 0)
    match_over: bool = False
    match_winner: int | None = None


def deal_result(finish_order: list[int], level: int) -> DealResult | None:
    """The result once ``finish_order`` (seats out of cards, in order) decides the deal:
    a 双下 after two, otherwise after three (R-6.2); ``None`` while it is open. The gain is
    3/2/1 by the winner's partner's place (R-6.3)."""
    fo = list(finish_order)
    double = len(fo) >= 2 and team_of(fo[0]) == team_of(fo[1])
    if not (double or len(fo) >= 3):
        return None
    order = fo + [s for s in range(4) if s not in fo]
    partner_place = order.index(partner_of(order[0]))
    return DealResult(
        order=order,
        winner_team=team_of(order[0]),
        gain=GAIN_BY_PARTNER_PLACE[partner_place],
        double_down=double,
        deal_level=level,
    )


def settle(
    match: MatchLevels, result: DealResult, deal_number: int, max_deals: int | None
) -> tuple[MatchLevels, DealResult]:
    """The match after ``result`` (of deal ``deal_number``, played at ``result.deal_level``),
    in the order of R-6.7: passing A wins the match (R-6.6), else a deal at A counts a failure
    for the leveling team, the winner gains (capped at A, R-6.5), a third failure resets that
    team to 2 (R-6.7), the winner levels next (R-6.4), and a match capped at ``max_deals``
    ends drawn (R-6.8). Returns the new match state and the result with ``match_winner``,
    ``a_failure_team`` and the settled ``levels`` filled in."""
    lt = match.leveling_team
    at_a = lt is not None and result.deal_level == ACE
    out = DealResult(
        result.order, result.winner_team, result.gain, result.double_down, result.deal_level
    )
    if at_a and result.winner_team == lt and result.gain >= 2:
        out.match_winner, out.levels = lt, match.levels
        return match._replace(match_over=True, match_winner=lt), out
    levels, fails = list(match.levels), list(match.a_failures)
    failed = lt if at_a else None
    if failed is not None:
        fails[failed] += 1
    w = result.winner_team
    levels[w] = min(ACE, levels[w] + result.gain)
    if failed is not None and fails[failed] >= MAX_A_FAILURES:
        levels[failed], fails[failed] = 0, 0
    capped = max_deals is not None and deal_number >= max_deals  # a draw
    new = MatchLevels((levels[0], levels[1]), w, (fails[0], fails[1]), capped)
    out.a_failure_team, out.levels = failed, new.levels
    return new, out
