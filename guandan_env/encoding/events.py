"""What happened in a game, as typed events: the AEC env's record (``env.unwrapped.events``).

Readers (the env's text ``log`` and ``render``, the terminal player, the narrator of
``experiments.hosts.play``, the replay viewer, the web table) take these instead of parsing text.
Events are plain slotted records, to be treated as read-only (a frozen dataclass costs more
to build, on every step).
``text(viewer)`` words an event as the env's log line; the one rule about who may see a
returned card (R-8.2) lives in ``Returned.visible_to``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import actions as T
from ..core.cards import RANK_TEXT, format_cards
from ..core.engine import DealResult
from ..core.text import action_text


@dataclass(slots=True)
class Tributed:
    """One tribute card handed over at a deal's start (R-7.1)."""

    giver: int
    receiver: int
    face: int


@dataclass(slots=True)
class DealStarted:
    """A deal was dealt (and its tribute paid or resisted)."""

    deal_number: int
    level: int
    levels: tuple[int, int]
    leveling_team: int | None
    tributes: tuple[Tributed, ...]
    resisted: bool
    resist_jokers: tuple[int, ...]  # seats that showed big jokers to resist
    returning: bool  # the deal opens with tribute returns

    def detail_lines(self) -> list[str]:
        """The tribute lines under the header (none without tribute)."""
        out = [
            f"tribute: seat {t.giver} gives {format_cards([t.face])} to seat {t.receiver}"
            for t in self.tributes
        ]
        if self.resisted:
            out.append(
                f"tribute resisted (R-7.3): big jokers shown by seats {list(self.resist_jokers)}"
            )
        return out

    def text(self, viewer: int | None = None) -> str:
        lt = "-" if self.leveling_team is None else str(self.leveling_team)
        phase = "return" if self.returning else "play"
        head = (
            f"deal {self.deal_number} level {RANK_TEXT[self.level]} leveling team {lt} "
            f"levels {RANK_TEXT[self.levels[0]]}/{RANK_TEXT[self.levels[1]]} phase {phase}"
        )
        return "\n".join([head, *self.detail_lines()])


@dataclass(slots=True)
class Played:
    """A play or a pass (R-5); ``faces`` are the cards it spent (none for a pass)."""

    seat: int
    action: int
    faces: tuple[int, ...]
    level: int

    @property
    def is_pass(self) -> bool:
        return self.action == T.PASS_ACTION

    def text(self, viewer: int | None = None) -> str:
        if self.is_pass:
            return f"seat {self.seat}: pass"
        return f"seat {self.seat}: {action_text(self.action, self.level)} [{_cards(self.faces)}]"


@dataclass(slots=True)
class Returned:
    """A tribute receiver handed a card back to its giver (R-7.1)."""

    seat: int
    to: int
    face: int

    def visible_to(self, viewer: int | None) -> bool:
        """R-8.2: only the two seats of the exchange see the card (``None``: everything)."""
        return viewer is None or viewer in (self.seat, self.to)

    def text(self, viewer: int | None = None) -> str:
        if not self.visible_to(viewer):
            return f"seat {self.seat}: returns a card to seat {self.to}"
        return f"seat {self.seat}: returns {format_cards([self.face])} to seat {self.to}"


@dataclass(slots=True)
class DealEnded:
    """The deal was decided (R-6.2): its ``engine.DealResult`` (order, winner, gain, the
    levels after settling, the match winner)."""

    result: DealResult

    def text(self, viewer: int | None = None) -> str:
        r = self.result
        return (
            f"deal over: order {list(r.order)}, team {r.winner_team} +{r.gain}; levels "
            f"{RANK_TEXT[r.levels[0]]}/{RANK_TEXT[r.levels[1]]}"
        )


Event = DealStarted | Played | Returned | DealEnded


def deal_started(game) -> DealStarted:
    """The event of ``game``'s current deal start (an ``engine.Game``)."""
    return DealStarted(
        deal_number=int(game.deal_number),
        level=int(game.level),
        levels=(int(game.levels[0]), int(game.levels[1])),
        leveling_team=game.leveling_team,
        tributes=tuple(Tributed(t.giver, t.receiver, t.face) for t in game.tributes),
        resisted=bool(game.resisted),
        resist_jokers=tuple(int(s) for s in game.resist_jokers),
        returning=str(game.phase) == "return",
    )


def current_deal(events: list[Event]) -> list[Event]:
    """The events of the latest deal, from its ``DealStarted`` on."""
    for i in range(len(events) - 1, -1, -1):
        if isinstance(events[i], DealStarted):
            return events[i:]
    return list(events)


_CARDS_MEMO: dict[tuple[int, ...], str] = {}


def _cards(faces: tuple[int, ...]) -> str:
    text = _CARDS_MEMO.get(faces)
    if text is None:
        if len(_CARDS_MEMO) > 1 << 16:
            _CARDS_MEMO.clear()
        text = _CARDS_MEMO[faces] = format_cards(faces)
    return text
