"""Shared helpers for the rules tests (RULES.md R-1 … R-8).

Test modules import these directly (``from helpers.rules import make_game, play``).

* ``make_game`` builds a ``Game`` for a crafted scenario: hands given as card text (partial
  hands allowed), team levels as rank text, leveling team, A-failures, previous finishing
  order (tribute is applied) and leader.
* ``play`` / ``pass_`` / ``give_back`` move the seat to act by card text, so scenarios read
  like a score sheet; ``play`` picks the action whose engine-chosen cards are exactly the
  given ones (and of the given kind, when several declarations fit).
* ``obs_parts`` splits an observation into its named ``OBS_SLICES``; ``card_bits`` is the
  108-bit encoding of a face-count vector used by every card-set slice.
"""

from __future__ import annotations

import numpy as np

from guandan_env.core import actions as T
from guandan_env.core.cards import NUM_FACES, parse_card, parse_hand, parse_rank
from guandan_env.core.choice import choose_cards
from guandan_env.core.engine import Game
from guandan_env.core.table_state import table_state
from guandan_env.encoding.observation import OBS_SLICES, encode


def hands_array(texts) -> np.ndarray:
    """``uint8 (4, 54)`` face counts of four card strings (R-1.4)."""
    assert len(texts) == 4
    return np.stack([parse_hand(t) for t in texts])


def make_game(
    hands,
    levels=("2", "2"),
    leveling_team=None,
    leader=None,
    previous_order=None,
    a_failures=(0, 0),
    seed=0,
    max_deals=None,
) -> Game:
    """A ``Game`` whose current deal starts from the given scenario."""
    g = Game.new(seed=seed, max_deals=max_deals)
    g.levels = [parse_rank(x) for x in levels]
    g.leveling_team = leveling_team
    g.a_failures = list(a_failures)
    g.start_deal(hands=hands_array(hands), previous_order=previous_order, leader=leader)
    return g


def faces_of(text: str) -> list[int]:
    return sorted(parse_card(t) for t in text.split())


def action_for(g: Game, cards: str, kind: str | None = None) -> int:
    """The legal action of the seat to act that plays exactly ``cards`` (and is ``kind``)."""
    want = faces_of(cards)
    mask = g.legal_mask()
    found = []
    for a in np.flatnonzero(mask):
        a = int(a)
        k = T.KIND_NAMES[T.KIND[a]]
        if k in ("pass", "return") or (kind is not None and k != kind):
            continue
        if sorted(choose_cards(g.hands[g.to_act], g.level, a)) == want:
            found.append(a)
    assert found, f"seat {g.to_act} has no legal {kind or 'play'} of {cards!r}"
    assert len(found) == 1, f"{cards!r} fits several declarations {found}: give the kind"
    return found[0]


def play(g: Game, cards: str, kind: str | None = None) -> int:
    """Seat to act plays ``cards``; returns the action id."""
    a = action_for(g, cards, kind)
    g.step(a)
    return a


def pass_(g: Game, times: int = 1) -> None:
    for _ in range(times):
        g.step(T.PASS_ACTION)


def give_back(g: Game, card: str) -> None:
    """The receiver to act returns ``card`` (R-7.1)."""
    g.step(T.return_action(parse_card(card)))


def legal_returns(g: Game) -> set[int]:
    """Faces the seat to act may return."""
    m = g.legal_mask()
    return {int(a) - T.RETURN_BASE for a in np.flatnonzero(m)}


def card_bits(counts) -> np.ndarray:
    """The 108-bit card-set encoding: per face, "holds >= 1" then "holds 2"."""
    c = np.asarray(counts).reshape(-1, NUM_FACES)
    out = np.stack([c >= 1, c >= 2], axis=-1).reshape(c.shape[0], -1)
    return out.astype(np.float32).reshape(-1)


def observation(g: Game, seat: int) -> np.ndarray:
    return encode(table_state([g]), np.array([seat]))[0]


def obs_parts(obs: np.ndarray) -> dict[str, np.ndarray]:
    return {name: obs[s] for name, s in OBS_SLICES.items()}


def one_hot(n: int, i: int) -> np.ndarray:
    v = np.zeros(n, dtype=np.float32)
    v[i] = 1
    return v


# ------------------------------------------------------------------ finishing-order scripts
def staircase_hands(order, level: str = "2") -> list[str]:
    """One spade each, rising in level order along ``order`` (level rank skipped): the seat
    ``order[i]`` holds the i-th lowest, so :func:`drive_to_order` can finish them in order."""
    ranks = [r for r in "3456789TJQK" if r != level][:4]
    hands = [""] * 4
    for i, s in enumerate(order):
        hands[s] = "S" + ranks[i]
    return hands


def drive_to_order(g: Game, order) -> None:
    """Play a staircase deal so seats empty their hands in ``order``: the next seat due to
    finish plays its one card, every other seat passes (R-5)."""
    while not g.deal_over:
        mask = g.legal_mask()
        if g.to_act == order[len(g.finish_order)]:
            plays = [int(a) for a in np.flatnonzero(mask) if a != T.PASS_ACTION]
            assert len(plays) == 1, plays
            g.step(plays[0])
        else:
            g.step(T.PASS_ACTION)


def deal_with_order(order, levels=("2", "2"), leveling_team=None, a_failures=(0, 0), **kw):
    """A finished deal whose seats emptied their hands in ``order`` (first two partners:
    the deal stops after them, R-6.2)."""
    lt_level = "2" if leveling_team is None else levels[leveling_team]
    g = make_game(
        staircase_hands(order, lt_level),
        levels=levels,
        leveling_team=leveling_team,
        a_failures=a_failures,
        leader=order[0],
        **kw,
    )
    drive_to_order(g, order)
    return g
