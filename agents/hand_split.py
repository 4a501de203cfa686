"""Split a hand into plays: the fewest, weakest-to-hold plays, using wildcards where they help.

The rule-based agent judges a hand by the plays it would take to empty it. ``best_split``
searches the decompositions of a hand in *rank space* (natural cards per rank, jokers, ♥N
wildcards; suits are ignored, so straight flushes are not planned — they remain legal bomb
actions the agent can choose directly). It minimises a *cost*:

* every non-bomb play costs 1 minus a bonus for strength (an ace play 0.7, a level card
  0.5, jokers 0.4/0.3): a hand of strong plays is closer to going out than one of weak plays;
* a bomb has a negative cost (it wins the lead back): -0.4 minus 0.05 per bomb tier;
* a triple and a pair merge into a full house (one play instead of two).

The search walks the ranks from low to high. At each rank it may start sequences (straights,
three pairs, two triples, each with up to the wildcards left), then plays what is left of the
rank as one group (single, pair, triple or bomb), optionally topped up with wildcards.
Sub-results are memoised on (rank, remaining counts, wildcards, open triples/pairs), so
evaluating the hand left after each candidate action mostly reuses earlier work; windows
the wildcards cannot fill and ranks with nothing left are passed over without a memo entry
(the heuristic plays ~1.6x faster for it, with the same splits: docs/benchmarks.md).
"""

from __future__ import annotations

import numpy as np

from guandan_env.core import actions as T
from guandan_env.core.cards import NUM_NATURAL_RANKS, wildcard_face
from guandan_env.core.strength import LEVEL_VALUE, bomb_tier

NR = NUM_NATURAL_RANKS  # 13
MERGE_REFUND = 0.9  # cost given back when a triple absorbs an earlier pending pair
MAX_MEMO = 200_000  # entries (≈ 100 MB) shared by all levels; cleared when full

# A component of a split: (kind, key, ((rank, count), ...) naturals, wildcards used).
Component = tuple[int, int, tuple[tuple[int, int], ...], int]


def _windows_by_start() -> list[list[tuple[int, int, tuple[int, ...], int]]]:
    """Sequence windows grouped by their lowest rank index (the low ace counts as rank 12,
    so A-2-3-4-5 starts at rank 0 and consumes an ace from the end of the suffix)."""
    out: list[list[tuple[int, int, tuple[int, ...], int]]] = [[] for _ in range(NR)]
    for kind in (T.STRAIGHT, T.THREE_PAIRS, T.TWO_TRIPLES):
        for key in T.seq_keys(kind):
            ranks = tuple(T.seq_ranks(kind, key))
            out[min(ranks)].append((kind, key, ranks, T.SEQ_WIDTH[kind]))
    return out


WINDOWS_AT = _windows_by_start()


def play_cost(kind: int, value: int, size: int = 0) -> float:
    """Cost of holding one play (see module docstring); ``value`` is the level-order value
    (natural highest rank for sequences)."""
    if kind == T.FOUR_JOKERS:
        return -1.0
    if kind == T.BOMB:
        return -0.4 - 0.05 * bomb_tier(kind, size)
    if kind == T.STRAIGHT_FLUSH:
        return -0.55
    if kind in (T.STRAIGHT, T.THREE_PAIRS, T.TWO_TRIPLES):
        return 1.0 - 0.3 * value / 12
    if value <= 11:
        return 1.0 - 0.3 * value / 11
    return {12: 0.5, 13: 0.4, 14: 0.3}[value]


BOMB_COST = [play_cost(T.BOMB, 0, size) if size >= 4 else 0.0 for size in range(11)]


class _Level:
    """Costs of the split search at one deal level (the memo is shared, keyed by level)."""

    def __init__(self, level: int) -> None:
        self.level = level
        self.val = [int(v) for v in LEVEL_VALUE[level]]
        self.single = [play_cost(T.SINGLE, v) for v in self.val]
        self.pair = [play_cost(T.PAIR, v) for v in self.val]
        self.triple = [play_cost(T.TRIPLE, v) for v in self.val]
        self.seq = {
            (kind, key): play_cost(kind, key)
            for kind in (T.STRAIGHT, T.THREE_PAIRS, T.TWO_TRIPLES)
            for key in T.seq_keys(kind)
        }
        self.wild_cost = play_cost(T.SINGLE, 12)

    # The plan is a linked list ``(component, rest)`` to share suffixes between states.
    def solve(
        self, i: int, j: int, c: tuple[int, ...], w: int, ot: int, pp: int, bj: int, rj: int
    ) -> tuple[float, tuple | None]:
        key = (self.level, i, j, c, w, ot, pp, bj, rj)
        hit = _MEMO.get(key)
        if hit is not None:
            return hit
        while True:
            if i == NR:
                res = self._terminal(w, bj, rj)
                break
            windows = WINDOWS_AT[i]
            n = len(windows)
            need = 0
            # skip the windows the wildcards cannot fill: they leave the best split as it is,
            # and skipping them here saves a memo entry each
            while j < n:
                _, _, ranks, width = windows[j]
                need = 0
                for r in ranks:
                    if c[r] < width:
                        need += width - c[r]
                if need <= w:
                    break
                j += 1
            if j < n:
                res = self._window(i, j, need, c, w, ot, pp, bj, rj)
                break
            if c[i]:
                res = self._group(i, c, w, ot, pp, bj, rj)
                break
            i, j = i + 1, 0  # nothing left at rank i (wildcards alone never form its group)
        if len(_MEMO) >= MAX_MEMO:
            _MEMO.clear()
        _MEMO[key] = res
        return res

    def _window(
        self,
        i: int,
        j: int,
        need: int,
        c: tuple[int, ...],
        w: int,
        ot: int,
        pp: int,
        bj: int,
        rj: int,
    ) -> tuple[float, tuple | None]:
        """The better of skipping window ``j`` at rank ``i`` and playing it (with ``need``
        wildcards)."""
        res = self.solve(i, j + 1, c, w, ot, pp, bj, rj)
        kind, seq_key, ranks, width = WINDOWS_AT[i][j]
        c2 = list(c)
        nat = []
        for r in ranks:
            take = c2[r] if c2[r] < width else width
            c2[r] -= take
            if take:
                nat.append((r, take))
        sub = self.solve(i, j, tuple(c2), w - need, ot, pp, bj, rj)
        cost = self.seq[(kind, seq_key)] + sub[0]
        if cost < res[0] - 1e-9:
            res = (cost, ((kind, seq_key, tuple(nat), need), sub[1]))
        return res

    def _group(
        self, i: int, c: tuple[int, ...], w: int, ot: int, pp: int, bj: int, rj: int
    ) -> tuple[float, tuple | None]:
        """Rank ``i``'s naturals (``c[i] > 0``) as one group, topped up with 0..``w``
        wildcards."""
        k = c[i]
        c2 = c[:i] + (0,) + c[i + 1 :]
        nat = ((i, k),)
        best: tuple[float, tuple | None] = (float("inf"), None)
        for x in range(w + 1):
            size = k + x
            ot2, pp2 = ot, pp
            if size == 1:
                kind, cost = T.SINGLE, self.single[i]
            elif size == 2:
                kind, cost = T.PAIR, self.pair[i]
                if ot > 0:
                    cost, ot2 = 0.0, ot - 1
                else:
                    pp2 = pp + 1 if pp < 3 else 3
            elif size == 3:
                kind, cost = T.TRIPLE, self.triple[i]
                if pp > 0:
                    cost, pp2 = cost - MERGE_REFUND, pp - 1
                else:
                    ot2 = ot + 1 if ot < 3 else 3
            else:
                kind, cost = T.BOMB, BOMB_COST[size]
            sub = self.solve(i + 1, 0, c2, w - x, ot2, pp2, bj, rj)
            total = cost + sub[0]
            if total < best[0] - 1e-9:
                best = (total, ((kind, i, nat, x), sub[1]))
        return best

    def _terminal(self, w: int, bj: int, rj: int) -> tuple[float, tuple | None]:
        cost, plan = 0.0, None
        if bj == 2 and rj == 2:
            cost += play_cost(T.FOUR_JOKERS, 0)
            plan = ((T.FOUR_JOKERS, -1, ((13, 2), (14, 2)), 0), plan)
        else:
            for r, n in ((13, bj), (14, rj)):
                if n:
                    kind = T.SINGLE if n == 1 else T.PAIR
                    cost += self.single[r] if n == 1 else self.pair[r]
                    plan = ((kind, r, ((r, n),), 0), plan)
        if w:
            cost += self.wild_cost
            plan = ((T.SINGLE if w == 1 else T.PAIR, T.LEVEL_KEY, (), w), plan)
        return cost, plan


_LEVELS: dict[int, _Level] = {}
_MEMO: dict[tuple, tuple[float, tuple | None]] = {}


def clear_memo() -> None:
    """Forget every memoised split (a benchmark's rounds then each start cold)."""
    _MEMO.clear()


def _level(level: int) -> _Level:
    lv = _LEVELS.get(level)
    if lv is None:
        lv = _LEVELS[level] = _Level(level)
    return lv


def rank_state(hand: np.ndarray, level: int) -> tuple[tuple[int, ...], int, int, int]:
    """``(naturals per rank 2..A, small jokers, big jokers, wildcards)`` of a face-count hand;
    the ♥N wildcards are not counted among the naturals."""
    h = np.asarray(hand, dtype=np.int64)
    wild_face = wildcard_face(level)
    w = int(h[wild_face])
    nat = h[:52].reshape(NR, 4).sum(1)
    nat[level] -= w
    return tuple(int(x) for x in nat), int(h[52]), int(h[53]), w


def after_action(state: tuple, action: int) -> tuple[tuple[int, ...], int, int, int]:
    """Rank state left after playing ``action`` (a play known to be legal)."""
    c, bj, rj, w = state
    nat = T.NAT[action]
    c2 = tuple(c[r] - int(nat[r]) for r in range(NR))
    return c2, bj - int(nat[13]), rj - int(nat[14]), w - int(T.WILDS[action])


def split_cost(state: tuple, level: int) -> float:
    """Cost of the best split of a rank state (lower is a better hand)."""
    c, bj, rj, w = state
    return _level(level).solve(0, 0, c, w, 0, 0, bj, rj)[0]


def quick_cost(state: tuple, level: int) -> float:
    """A cheap approximation of ``split_cost`` without sequences or wildcard placement: each
    rank is one group, triples absorb pairs, wildcards stay level cards. Used to rank many
    candidate actions before the exact search."""
    lv = _level(level)
    c, bj, rj, w = state
    cost, triples, pairs = 0.0, 0, 0
    for r in range(NR):
        k = c[r]
        if k == 1:
            cost += lv.single[r]
        elif k == 2:
            cost += lv.pair[r]
            pairs += 1
        elif k == 3:
            cost += lv.triple[r]
            triples += 1
        elif k >= 4:
            cost += play_cost(T.BOMB, 0, k)
    cost -= MERGE_REFUND * min(triples, pairs)
    if bj == 2 and rj == 2:
        cost += play_cost(T.FOUR_JOKERS, 0)
    else:
        cost += (lv.single[13] if bj == 1 else lv.pair[13] if bj == 2 else 0.0) + (
            lv.single[14] if rj == 1 else lv.pair[14] if rj == 2 else 0.0
        )
    return cost + (lv.wild_cost if w else 0.0)


def best_split(state: tuple, level: int) -> tuple[float, list[Component]]:
    """Cost and components of the best split; triples and pairs are merged into full houses
    (lowest pairs onto lowest triples), as the cost assumed."""
    c, bj, rj, w = state
    cost, plan = _level(level).solve(0, 0, c, w, 0, 0, bj, rj)
    comps: list[Component] = []
    while plan is not None:
        comps.append(plan[0])
        plan = plan[1]
    return cost, merge_full_houses(comps, level)


def merge_full_houses(comps: list[Component], level: int) -> list[Component]:
    val = _level(level).val
    triples = sorted((x for x in comps if x[0] == T.TRIPLE), key=lambda x: val[x[1]])
    pairs = sorted(
        (x for x in comps if x[0] == T.PAIR and x[1] < NR and x[2]), key=lambda x: val[x[1]]
    )
    n = min(len(triples), len(pairs))
    if n == 0:
        return comps
    used = {id(x) for x in triples[:n]} | {id(x) for x in pairs[:n]}
    out = [x for x in comps if id(x) not in used]
    for t, p in zip(triples[:n], pairs[:n], strict=True):
        out.append((T.FULL_HOUSE, t[1], t[2] + p[2], t[3] + p[3]))
    return out


def _component_index() -> dict[tuple, int]:
    idx: dict[tuple, int] = {}
    for a in range(1, T.RETURN_BASE):
        kind = int(T.KIND[a])
        if kind == T.STRAIGHT_FLUSH:
            continue
        nat = tuple(sorted((int(r), int(T.NAT[a, r])) for r in np.flatnonzero(T.NAT[a])))
        idx[(kind, int(T.KEY[a]), nat, int(T.WILDS[a]))] = a
    return idx


_COMPONENT_ACTION = _component_index()


def component_action(comp: Component) -> int:
    """Action id of a split component (-1 if the table has no such action)."""
    kind, key, nat, wilds = comp
    return _COMPONENT_ACTION.get((kind, key, tuple(sorted(nat)), wilds), -1)
