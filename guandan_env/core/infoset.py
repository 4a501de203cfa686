"""Information sets: what one seat knows (R-8), and full deals sampled consistent with it.

``InfoSet`` is the public record of a deal plus one seat's own hand: levels, every play and
pass so far, cards left per seat, the finishing order, the tribute faces (public), the
return cards the seat exchanged itself (R-8.2), the big jokers shown for resistance. It
holds no other seat's cards: the sampler below reads nothing else, so it cannot leak them.
Build one with ``guandan_env.envs.infoset.infoset_of_view`` (from a ``SeatView``).

``Sampler(info)`` deals the unseen cards: the deck minus the own hand, minus every card
played, minus the cards known to be in a hand (a tribute card its receiver got, a return
card the seat saw, big jokers shown for resistance, each less the copies that seat has
played since), shuffled uniformly into the other seats' remaining slots (``cards_left``).
With full deals that is the exact posterior of a uniform deal given these facts; the
inferences from *how* seats played (voids, passes) and that a tribute was the giver's
highest card are not used. ``hands(n, rng)`` gives ``uint8 (n, 4, 54)`` current hands;
``games(n, rng)`` gives ``engine.Game`` states the deal continues from.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from .array_fields import fields_equal
from .cards import COPIES, NUM_FACES, RJ_FACE, level_key
from .engine import Game, Tribute
from .phase import Phase

NOT_RETURNED = -1  # ``InfoSet.tributes`` return field: no return made yet
UNSEEN = -2  # a return was made, but this seat did not see the card
_LOW_FACES = 36  # faces of natural rank 2..10 (R-7.1 return rule)


@dataclass(eq=False)
class InfoSet:
    """One seat's information set in a deal (see the module docstring)."""

    seat: int
    hand: np.ndarray  # uint8[54] the seat's own cards
    level: int
    levels: tuple[int, int]
    leveling_team: int | None
    a_failures: tuple[int, int]
    deal_number: int
    max_deals: int | None
    phase: Phase
    to_act: int
    leader: int
    deal_leader: int
    table_action: int  # -1 when leading
    table_seat: int
    passes: int
    move_in_trick: tuple[int, int, int, int]
    cards_left: tuple[int, int, int, int]
    finish_order: tuple[int, ...]
    history: tuple[tuple[int, int, tuple[int, ...]], ...]  # (seat, action, faces), passes too
    # (giver, receiver, face, returned): returned is a face, NOT_RETURNED or UNSEEN
    tributes: tuple[tuple[int, int, int, int], ...]
    pending_returns: tuple[int, ...]
    resisted: bool
    resist_jokers: tuple[int, ...]  # one entry per big joker shown
    deal_cards: int

    def __eq__(self, other: object) -> bool:
        return fields_equal(self, other) if isinstance(other, InfoSet) else NotImplemented

    def played(self) -> np.ndarray:
        """``int64 (4, 54)`` faces each seat has played this deal (from the history)."""
        out = np.zeros((4, NUM_FACES), dtype=np.int64)
        for seat, _, faces in self.history:
            for f in faces:
                out[seat, f] += 1
        return out

    def key(self) -> bytes:
        """Bytes that identify the information set (for seeding; no hidden card in it)."""
        parts = [self.hand.tobytes(), repr((self.seat, self.level, self.levels, self.to_act))]
        parts.append(repr((self.tributes, self.cards_left, self.history)))
        return b"|".join(p if isinstance(p, bytes) else p.encode() for p in parts)


def known_cards(info: InfoSet, played: np.ndarray | None = None) -> np.ndarray:
    """``int64 (4, 54)``: copies each seat is known to hold; the own row is the hand, the
    others' rows lower bounds from tribute, seen returns and resistance (R-7, R-8.2)."""
    played = info.played() if played is None else played
    got = np.zeros((4, NUM_FACES), dtype=np.int64)
    gave = np.zeros((4, NUM_FACES), dtype=np.int64)
    for giver, receiver, face, returned in info.tributes:
        got[receiver, face] += 1
        if returned >= 0:
            got[giver, returned] += 1
            gave[receiver, returned] += 1
        elif returned == UNSEEN and face < _LOW_FACES:
            gave[receiver, face] += 1  # a low tribute card may be what went back unseen
    for s in info.resist_jokers:
        got[s, RJ_FACE] = min(COPIES, got[s, RJ_FACE] + 1)
    known = np.maximum(got - gave - played, 0)
    known[info.seat] = info.hand
    return known


class Sampler:
    """Deals sampled uniformly over the placements of the unseen cards (module docstring)."""

    def __init__(self, info: InfoSet) -> None:
        self.info = info
        played = info.played()
        known = known_cards(info, played)
        left = np.asarray(info.cards_left, dtype=np.int64)
        me = info.seat
        if int(info.hand.sum()) != left[me]:
            raise ValueError(f"seat {me} holds {int(info.hand.sum())} cards, not {left[me]}")
        fixed = known.sum(1)
        free = left - fixed
        free[me] = 0
        if (free < 0).any():
            raise ValueError("inconsistent information set: known cards exceed cards left")
        unseen = COPIES - played.sum(0) - known.sum(0)
        if (unseen < 0).any():
            raise ValueError("inconsistent information set: a face is seen more than twice")
        self.base = known.astype(np.uint8)  # (4, 54)
        self.pool = np.repeat(np.arange(NUM_FACES, dtype=np.int64), unseen)  # (P,)
        self.slots = int(free.sum())
        if self.pool.size < self.slots:
            raise ValueError("inconsistent information set: fewer unseen cards than slots")
        # flat index base of the slot j: seat * 54
        self.slot_offset = np.repeat(np.arange(4, dtype=np.int64) * NUM_FACES, free)
        self.played = played.astype(np.uint8)
        self._template = _template_game(info, self.played)

    def hands(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``uint8 (n, 4, 54)`` current hands of ``n`` sampled deals."""
        p, k = self.pool.size, self.slots
        if k == 0:
            return np.broadcast_to(self.base, (n, 4, NUM_FACES)).copy()
        order = np.argsort(rng.random((n, p)), axis=1)[:, :k]
        flat = self.slot_offset[None, :] + self.pool[order]
        flat += (np.arange(n, dtype=np.int64) * (4 * NUM_FACES))[:, None]
        counts = np.bincount(flat.ravel(), minlength=n * 4 * NUM_FACES)
        out = counts.reshape(n, 4, NUM_FACES).astype(np.uint8)
        out += self.base
        return out

    def games(self, n: int, rng: np.random.Generator) -> list[Game]:
        """``n`` sampled deals as ``engine.Game`` states the deal continues from."""
        return [self.game(h, rng) for h in self.hands(n, rng)]

    def game(self, hands: np.ndarray, rng: np.random.Generator) -> Game:
        """The deal with current ``hands`` ``(4, 54)`` (a sampled one) as a ``Game``."""
        g = clone_game(self._template)
        g.rng = rng
        g.hands = hands
        for t in g.tributes:
            if t.returned == UNSEEN:  # a plausible card: one the giver got back
                t.returned = _plausible_return(hands[t.giver] + self.played[t.giver], g.level, rng)
        return g


def _plausible_return(held: np.ndarray, level: int, rng: np.random.Generator) -> int:
    faces = np.flatnonzero(held[:_LOW_FACES])
    if faces.size == 0:
        faces = np.flatnonzero(held)
        low = min(level_key(int(f), level) for f in faces)
        faces = np.array([f for f in faces if level_key(int(f), level) == low])
    return int(faces[rng.integers(faces.size)])


def _template_game(info: InfoSet, played: np.ndarray) -> Game:
    """A ``Game`` with the public record of ``info`` and no hidden hand filled in."""
    g = Game.new(seed=0, max_deals=info.max_deals)
    g.levels, g.leveling_team = list(info.levels), info.leveling_team
    g.a_failures, g.deal_number = list(info.a_failures), info.deal_number
    g.level, g.phase, g.to_act = info.level, info.phase, info.to_act
    g.leader, g.deal_leader = info.leader, info.deal_leader
    g.table_action, g.table_seat, g.passes = info.table_action, info.table_seat, info.passes
    g.move_in_trick = list(info.move_in_trick)
    g.finish_order = list(info.finish_order)
    g.history = list(info.history)
    g.tributes = [Tribute(gv, rc, f, r) for gv, rc, f, r in info.tributes]
    g.pending_returns = list(info.pending_returns)
    g.resisted, g.resist_jokers = info.resisted, list(info.resist_jokers)
    g.deal_cards = info.deal_cards
    g.played = played
    for seat, a, faces in info.history:
        if faces:
            g.last_play_of[seat] = a
            g.last_cards[seat] = np.bincount(np.asarray(faces, dtype=np.int64), minlength=NUM_FACES)
    return g


def clone_game(g: Game) -> Game:
    """A copy of ``g`` that shares nothing mutable with it (cheaper than ``deepcopy``)."""
    c = copy.copy(g)
    c.counts = g.counts.copy()
    c.levels, c.a_failures = list(g.levels), list(g.a_failures)
    c.finish_order, c.history = list(g.finish_order), list(g.history)
    c.tributes = [Tribute(t.giver, t.receiver, t.face, t.returned) for t in g.tributes]
    c.pending_returns, c.resist_jokers = list(g.pending_returns), list(g.resist_jokers)
    c.last_play_of, c.move_in_trick = list(g.last_play_of), list(g.move_in_trick)
    c._left_cache, c._words_cache, c._mask_memo = (b"", []), [None] * 4, None
    return c
