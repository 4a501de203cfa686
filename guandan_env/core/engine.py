"""The Guandan engine: deal, tribute, tricks, deal end, levels, match (RULES.md R-1, R-5..R-7;
the deal's end and the levels it settles, R-6, are the pure functions of ``outcome``).

``Game`` is plain state (numpy arrays and Python scalars) plus the rules functions that move
it: copyable with ``copy.deepcopy``, picklable, and read directly by the observation encoder.
It owns its RNG (``numpy.random.Generator`` from the match seed); nothing uses the global RNG.

Phases of a deal (``phase.Phase``): ``RETURN`` (a tribute receiver chooses the card to hand
back, R-7), ``PLAY`` (tricks, R-5), ``DEAL_OVER``; after a match is decided, ``MATCH_OVER``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import actions as T
from . import validate, vector_mask
from .cards import (
    COPIES,
    HAND_SIZE,
    NUM_FACES,
    RANK_TEXT,
    RJ_FACE,
    face_text,
    full_deck,
    level_key,
    wildcard_face,
)
from .choice import choose_cards, sf_loss
from .illegal import IllegalActionError, illegal_action_error
from .outcome import (  # noqa: F401  (DealResult, team_of, partner_of: re-exported)
    DealResult,
    MatchLevels,
    deal_result,
    partner_of,
    settle,
    team_of,
)
from .phase import Phase, TrickMove

# enum members as module constants: ``Phase.X`` costs ~180 ns a lookup in Python 3.11
_DEAL_OVER, _MATCH_OVER, _PLAY, _RETURN, _NONE, _PASSED, _PLAYED = (
    Phase.DEAL_OVER,
    Phase.MATCH_OVER,
    Phase.PLAY,
    Phase.RETURN,
    TrickMove.NONE,
    TrickMove.PASSED,
    TrickMove.PLAYED,
)

_ONES = np.ones(NUM_FACES, dtype=np.uint8)


@dataclass
class Tribute:
    """One tribute (R-7): ``giver`` hands ``face`` to ``receiver``, who returns ``returned``."""

    giver: int
    receiver: int
    face: int
    returned: int = -1


class _CountRows:
    """Four rows of ``Game.counts`` as an attribute: reading gives a view, assigning copies in."""

    def __init__(self, first: int, doc: str) -> None:
        self.rows = slice(first, first + 4)
        self.__doc__ = doc + " (a view of ``counts``)"

    def __get__(self, game, owner=None):
        return self if game is None else game.counts[self.rows]

    def __set__(self, game, value) -> None:
        game.counts[self.rows] = value


@dataclass
class Game:
    """State of a match and of its current deal. Build with :meth:`new`."""

    seed: int | None
    rng: np.random.Generator
    levels: list[int] = field(default_factory=lambda: [0, 0])  # rank index per team
    leveling_team: int | None = None  # None in a match's first deal (both at 2)
    a_failures: list[int] = field(default_factory=lambda: [0, 0])
    max_deals: int | None = None
    deal_number: int = 0
    match_winner: int | None = None
    match_over: bool = False
    # deal state
    level: int = 0
    # face counts: hands (rows 0-3), cards played this deal (4-7) and each seat's latest play
    # (8-11); row 12 stays zero. One array so the observation encoder gathers from it in one
    # call; ``hands``, ``played`` and ``last_cards`` are views of it (assigning copies in).
    counts: np.ndarray = field(
        default_factory=lambda: np.zeros((13, NUM_FACES), dtype=np.uint8), repr=False
    )
    phase: Phase = _PLAY
    to_act: int = 0
    leader: int = 0
    table_action: int = -1  # -1: leading a new trick
    table_seat: int = -1
    passes: int = 0
    finish_order: list[int] = field(default_factory=list)
    tributes: list[Tribute] = field(default_factory=list)
    pending_returns: list[int] = field(default_factory=list)  # indices into tributes
    resisted: bool = False
    resist_jokers: list[int] = field(default_factory=list)  # seats that showed big jokers
    deal_leader: int = 0  # who led the first trick
    history: list[tuple[int, int, tuple[int, ...]]] = field(default_factory=list)
    last_play_of: list[int] = field(default_factory=lambda: [-1, -1, -1, -1])
    move_in_trick: list[int] = field(default_factory=lambda: [_NONE] * 4)
    result: DealResult | None = None
    deal_cards: int = 0  # cards in play this deal (108 for a full deal)
    _left_cache: tuple = field(default=(b"", []), repr=False)  # (hands bytes, cards per seat)
    # per seat: (hand bytes, level, vector_mask.hand_words), rebuilt when that hand changes
    _words_cache: list = field(default_factory=lambda: [None] * 4, repr=False)
    _moves: int = field(default=0, repr=False)  # bumped by every state change through methods
    _mask_memo: tuple | None = field(default=None, repr=False)  # (moves, read-only mask)

    hands = _CountRows(0, "``uint8 (4, 54)`` face counts held by each seat")
    played = _CountRows(4, "``uint8 (4, 54)`` faces each seat has played this deal")
    last_cards = _CountRows(8, "``uint8 (4, 54)`` faces of each seat's latest play this deal")

    # ------------------------------------------------------------------ construction
    @classmethod
    def new(cls, seed: int | None = None, max_deals: int | None = None) -> Game:
        """A fresh match: both teams at 2, no leveling team yet, nothing dealt."""
        if max_deals is not None and max_deals < 1:
            raise ValueError(f"max_deals must be >= 1, got {max_deals} (R-6.8)")
        return cls(seed=seed, rng=np.random.default_rng(seed), max_deals=max_deals)

    def start_deal(
        self,
        hands: np.ndarray | None = None,
        previous_order: list[int] | None = None,
        leader: int | None = None,
    ) -> None:
        """Deal (or take the given ``hands``), apply tribute for ``previous_order`` (R-7),
        and set the first leader. The deal's level is the leveling team's level (R-2.1)."""
        if self.match_over:
            raise ValueError("the match is over: no further deal (R-6.6/R-6.8)")
        self.deal_number += 1
        self.level = 0 if self.leveling_team is None else self.levels[self.leveling_team]
        if hands is None:
            deck = self.rng.permutation(full_deck())
            seat_of_card = np.repeat(np.arange(4), HAND_SIZE)  # cards 27s..27s+26 to seat s
            hands = (
                np.bincount(seat_of_card * NUM_FACES + deck, minlength=4 * NUM_FACES)
                .reshape(4, NUM_FACES)
                .astype(np.uint8)
            )
        self.hands = check_deal(hands).copy()
        self.played = np.zeros((4, NUM_FACES), dtype=np.uint8)
        self.deal_cards = int(hands.sum())
        self.finish_order = [s for s in range(4) if self.hands[s].sum() == 0]
        self.history = []
        self._moves += 1
        self.last_play_of = [-1, -1, -1, -1]
        self.last_cards = np.zeros((4, NUM_FACES), dtype=np.uint8)
        self.move_in_trick = [_NONE] * 4
        self.tributes = []
        self.pending_returns = []
        self.resisted = False
        self.resist_jokers = []
        self.result = None
        self.table_action, self.table_seat, self.passes = -1, -1, 0
        if previous_order is not None:
            first_leader = self._apply_tribute(_check_order(previous_order))
        else:
            first_leader = int(self.rng.integers(4))
        if leader is not None:
            if not 0 <= int(leader) < 4:
                raise ValueError(f"leader must be a seat 0..3, got {leader}")
            first_leader = int(leader)
        if self.hands[first_leader].sum() == 0:
            first_leader = self._next_active(first_leader)
        self.leader = self.deal_leader = first_leader
        if self.pending_returns:
            self.phase = _RETURN
            self.to_act = self.tributes[self.pending_returns[0]].receiver
        else:
            self.phase = _PLAY
            self.to_act = first_leader

    # ------------------------------------------------------------------ tribute
    def highest_tribute_face(self, seat: int) -> int:
        """The card ``seat`` must give: highest in level order, never ♥N (R-7.1); among
        equal faces the one least useful to its straight flushes (R-7.6)."""
        wild = wildcard_face(self.level)
        faces = [f for f in np.flatnonzero(self.hands[seat]).tolist() if f != wild]
        if not faces:
            raise ValueError(f"seat {seat} holds no card it may give as tribute (R-7.1)")
        top = max(level_key(f, self.level) for f in faces)
        cands = [f for f in faces if level_key(f, self.level) == top]
        hand = self.hands[seat].tolist()
        wilds = hand[wild]
        return min(cands, key=lambda f: (sf_loss(hand, f, wilds, wild), f % 4))

    def _apply_tribute(self, order: list[int]) -> int:
        first, second = order[0], order[1]
        double = team_of(first) == team_of(second)
        givers = [order[2], order[3]] if double else [order[3]]
        if sum(int(self.hands[g][RJ_FACE]) for g in givers) >= 2:
            self.resisted = True
            self.resist_jokers = [g for g in givers for _ in range(int(self.hands[g][RJ_FACE]))]
            return first
        gifts = {g: self.highest_tribute_face(g) for g in givers}
        if not double:
            g = givers[0]
            self._give(g, first, gifts[g])
            self.pending_returns = [0]
            return g
        a, b = givers
        ka, kb = level_key(gifts[a], self.level), level_key(gifts[b], self.level)
        if ka == kb:  # equal: first place receives from the seat after it
            to_first = (first + 1) % 4
        else:
            to_first = a if ka > kb else b
        to_second = b if to_first == a else a
        self._give(to_first, first, gifts[to_first])
        self._give(to_second, second, gifts[to_second])
        self.pending_returns = [0, 1]  # first place returns first
        return to_first

    def _give(self, giver: int, receiver: int, face: int) -> None:
        self.hands[giver, face] -= 1
        self.hands[receiver, face] += 1
        self.tributes.append(Tribute(giver, receiver, face))

    # ------------------------------------------------------------------ queries
    def active(self, seat: int) -> bool:
        return seat not in self.finish_order

    def _next_active(self, seat: int) -> int:
        for k in range(1, 5):
            s = (seat + k) % 4
            if self.active(s):
                return s
        raise RuntimeError("no seat holds cards")

    def legal_mask(self) -> np.ndarray:
        """``bool[NUM_ACTIONS]`` for the seat to act; all False once the deal is over.

        Play: the plays the hand's cards allow (cached per hand) AND the table row — every
        play when leading (R-5.1), pass and what beats the table play when following (R-5.2,
        R-4); both bit-packed (``vector_mask``), the same rows as the batched engine.
        """
        if self.phase == _PLAY:
            table = vector_mask.table_words(self.level, self.table_action)
            mask = vector_mask.unpack_one(self._hand_words(self.to_act) & table)
        elif self.phase == _RETURN:
            mask = vector_mask.return_masks(self.hands[self.to_act][None], [self.level])[0]
        else:
            mask = np.zeros(T.NUM_ACTIONS, dtype=bool)
        mask.flags.writeable = False  # step() may reuse it: nobody may edit it in between
        self._mask_memo = (self._moves, mask)
        return mask

    def _hand_words(self, seat: int) -> np.ndarray:
        """``vector_mask.hand_words`` of a seat, cached until its hand (or the level) changes."""
        hand = self.counts[seat]
        key = hand.tobytes()
        cached = self._words_cache[seat]
        if cached is None or cached[0] != key or cached[1] != self.level:
            cached = (key, self.level, vector_mask.hand_words(hand, self.level))
            self._words_cache[seat] = cached
        return cached[2]

    @property
    def deal_over(self) -> bool:
        return self.phase in (_DEAL_OVER, _MATCH_OVER)

    # ------------------------------------------------------------------ moves
    def step(self, action: int, mask: np.ndarray | None = None) -> tuple[int, ...]:
        """Apply ``action`` for the seat to act; returns the faces it moved.

        Raises ``IllegalActionError`` (a ``ValueError``; ``guandan_env.core.illegal``) naming the
        action, the seat, the reason and the rule if it is illegal; the state is unchanged
        then. ``mask`` may pass the ``legal_mask()`` of this very state (read-only); any
        other array is ignored and the mask recomputed, so a caller can never widen what is
        legal.
        """
        a = int(action)
        seat = self.to_act
        if self.deal_over or not 0 <= a < T.NUM_ACTIONS:
            raise self.illegal_error(a)
        memo = self._mask_memo
        if mask is None or memo is None or mask is not memo[1] or memo[0] != self._moves:
            mask = self.legal_mask()
        if not mask[a]:
            raise self.illegal_error(a)
        faces = tuple(choose_cards(self.hands[seat], self.level, a))
        if self.phase == _RETURN:
            self._do_return(seat, faces[0])
            return faces
        self._apply(seat, a, faces)
        return faces

    def apply_move(self, seat: int, action: int, faces) -> None:
        """Apply a play or pass made at another table whose cards are known (a mirror kept
        from a remote server's messages, ``agents.remote``): the trick, wind and deal-end
        rules of ``step`` (R-5, R-6), without its legality check; ``seat`` must hold
        ``faces``."""
        if self.phase != _PLAY:
            raise ValueError(f"no play is due in phase '{self.phase}' (R-5)")
        a = validate.action_id(action)
        faces = tuple(int(f) for f in faces)
        need = np.bincount(np.asarray(faces, dtype=np.int64), minlength=NUM_FACES)
        if (need > self.hands[seat]).any():
            raise ValueError(f"seat {seat} does not hold the cards {list(faces)} it played")
        self.to_act = int(seat)
        self._apply(int(seat), a, faces)

    def _apply(self, seat: int, a: int, faces: tuple[int, ...]) -> None:
        self._moves += 1
        self.history.append((seat, a, faces))
        if a == T.PASS_ACTION:
            self._do_pass()
        else:
            self._do_play(seat, a, faces)

    def illegal_error(self, a: int) -> IllegalActionError:
        """The error for action ``a`` by the seat to act, if the legal mask refuses it."""
        seat = self.to_act
        return illegal_action_error(
            a, seat, self.phase, self.hands[seat], self.level, self.table_action
        )

    def _do_return(self, seat: int, face: int) -> None:
        self._moves += 1
        t = self.tributes[self.pending_returns.pop(0)]
        self.hands[seat, face] -= 1
        self.hands[t.giver, face] += 1
        t.returned = face
        if self.pending_returns:
            self.to_act = self.tributes[self.pending_returns[0]].receiver
        else:
            self.phase = _PLAY
            self.to_act = self.leader

    def _do_pass(self) -> None:
        self.move_in_trick[self.to_act] = _PASSED
        self.passes += 1
        # seats still playing other than the one whose play stands
        others = 4 - len(self.finish_order) - (self.table_seat not in self.finish_order)
        if self.passes >= others:  # trick over, wind if the winner is out
            winner = self.table_seat
            self.leader = winner if self.active(winner) else partner_of(winner)
            self.table_action, self.table_seat, self.passes = -1, -1, 0
            self.move_in_trick = [_NONE] * 4
            self.to_act = self.leader
        else:
            self.to_act = self._next_active(self.to_act)

    def _do_play(self, seat: int, a: int, faces: tuple[int, ...]) -> None:
        counts = self.counts
        hand, played, lc = counts[seat], counts[4 + seat], counts[8 + seat]
        lc[:] = 0
        for f in faces:
            hand[f] -= 1
            played[f] += 1
            lc[f] += 1
        self.move_in_trick[seat] = _PLAYED
        self.table_action, self.table_seat, self.passes = a, seat, 0
        self.last_play_of[seat] = a
        if not np.count_nonzero(hand):  # ~5x cheaper than hand.sum() at this size
            self.finish_order.append(seat)
            if self.finish_deal():
                return
        self.to_act = self._next_active(seat)

    # ------------------------------------------------------------------ end of deal
    def finish_deal(self) -> bool:
        """End the deal if its finish order decides it (R-6.2): record ``result``, settle the
        levels (R-6.4–R-6.8, ``outcome.settle``) and move to ``DEAL_OVER`` / ``MATCH_OVER``.
        Returns whether it ended; the vector env calls it with the finish order its arrays
        reached."""
        result = deal_result(self.finish_order, self.level)
        if result is None:
            return False
        lt = self.leveling_team
        before = MatchLevels(
            levels=(int(self.levels[0]), int(self.levels[1])),
            leveling_team=None if lt is None else int(lt),
            a_failures=(int(self.a_failures[0]), int(self.a_failures[1])),
        )
        match, self.result = settle(before, result, self.deal_number, self.max_deals)
        self.levels, self.a_failures = list(match.levels), list(match.a_failures)
        self.leveling_team = match.leveling_team
        self.match_over = self.match_over or match.match_over
        if match.match_winner is not None:
            self.match_winner = match.match_winner
        self.phase = _MATCH_OVER if self.match_over else _DEAL_OVER
        return True

    def next_deal(self) -> None:
        """Start the following deal of the match, tribute from the last order (R-7)."""
        if self.result is None:
            raise ValueError("the current deal is not over")
        self.start_deal(previous_order=self.result.order)

    # ------------------------------------------------------------------ observation
    def cards_left(self) -> list[int]:
        """Cards held per seat (public, R-8.1); cached until a hand changes (a fresh list)."""
        key = self.counts[0:4].tobytes()
        if self._left_cache[0] != key:
            self._left_cache = (key, (self.counts[0:4] @ _ONES).tolist())  # < 256 per hand
        return list(self._left_cache[1])

    def finish_places(self) -> list[int]:
        """Per seat: 0 still playing, else its place 1..4; in a 双下 both losers are 4th (R-6.2)."""
        place = [0, 0, 0, 0]
        if self.result is not None:
            for i, s in enumerate(self.result.order):
                place[s] = i + 1
            if self.result.double_down:  # both losers count last
                place[self.result.order[2]] = place[self.result.order[3]] = 4
        else:
            for i, s in enumerate(self.finish_order):
                place[s] = i + 1
        return place

    def tribute_facts(self) -> tuple[list[int], list[bool], list[int], list[int]]:
        """Per seat: face given as tribute (-1), received a tribute, face returned (-1) and
        the seat it was returned to (-1)."""
        tface, trecv, tret, tto = [-1] * 4, [False] * 4, [-1] * 4, [-1] * 4
        for t in self.tributes:
            tface[t.giver] = t.face
            trecv[t.receiver] = True
            if t.returned >= 0:
                tret[t.receiver] = t.returned
                tto[t.receiver] = t.giver
        return tface, trecv, tret, tto

    # ------------------------------------------------------------------ summaries
    def cards_total(self) -> int:
        return int(self.hands.sum() + self.played.sum())

    def describe(self) -> str:
        lt = "-" if self.leveling_team is None else str(self.leveling_team)
        return (
            f"deal {self.deal_number} level {RANK_TEXT[self.level]} leveling team {lt} "
            f"levels {RANK_TEXT[self.levels[0]]}/{RANK_TEXT[self.levels[1]]} phase {self.phase}"
        )


def check_deal(hands: np.ndarray) -> np.ndarray:
    """``uint8 (4, 54)`` face counts of a possible deal (R-1.2), or a ``ValueError``."""
    hands = np.asarray(hands)
    if hands.shape != (4, NUM_FACES):
        raise ValueError(f"hands must have shape (4, {NUM_FACES}), got {hands.shape}")
    if not np.issubdtype(hands.dtype, np.integer) or hands.min() < 0:
        raise ValueError("hands must be non-negative integer face counts")
    total = hands.sum(0)
    if (total > COPIES).any():
        f = int(np.flatnonzero(total > COPIES)[0])
        raise ValueError(
            f"impossible deal: {face_text(f)} appears {int(total[f])} times across the "
            f"hands, the deck has {COPIES} (R-1.2)"
        )
    if (hands.sum(1) > HAND_SIZE).any():
        raise ValueError(f"impossible deal: a seat holds more than {HAND_SIZE} cards (R-1.2)")
    if (hands.sum(1) == 0).all():
        raise ValueError("impossible deal: every hand is empty")
    return hands.astype(np.uint8)


def _check_order(order: list[int]) -> list[int]:
    o = [int(s) for s in order]
    if sorted(o) != [0, 1, 2, 3]:
        raise ValueError(
            f"previous_order must list the four seats 0..3 in finishing order, got {order} (R-6.1)"
        )
    return o
