"""Hand plans: how many plays a hand needs, batched over hands with numpy (RULES.md R-3).

A *plan* splits a hand into legal combinations (R-3, the action table's kinds, straight
flushes counted as plain straights since suits are ignored): singles, pairs, triples, full
houses (a triple and any pair: natural, natural + wildcard, two wildcards, or a joker pair),
straights of 5, three consecutive pairs, two consecutive triples (A low or high, R-2.5),
bombs of 4..10 cards of one rank and four jokers. Wildcards (♥N, R-2.3/R-3.4) stand for any
natural card; alone they are a level single, two of them a level pair.

Everything works in *rank space* (naturals per rank 2..A, jokers, wildcards); suits are
ignored. Two methods, both returning the play count of a real split (so **never below the
true minimum**; accuracy against an exact search is measured by
``experiments/bench/hand_plan.py`` and checked in ``tests/encoding/test_hand_plan.py``):

``fast`` (default, ``fast_plays``): the group part (singles, pairs, triples, full houses,
bombs, four jokers, wildcards placed where they save most) is computed exactly from the
per-rank counts with two small lookup tables: plays = singles + pairs + bombs +
max(triples − pairs, 0), less one per bomb split into pairs/triples when that feeds
full houses, with the best wildcard placement. Sequences are then added greedily: up to
four times, the straight / two equal straights / three pairs / two triples that lowers the
count most (naturals first; wildcards fill gaps, which an exchange argument shows loses
nothing). Without sequences the answer is exact; the greedy choice of sequences is not.

``dp`` (``PlanModel``): a dynamic programme over the positions A(low), 2, …, K, A(high)
whose state is the set of open sequences (started, still owed cards), the wildcards left
and D = triples − pairs; at each rank the owed and newly started sequences take their cards
and the rest forms one group (a 4-bomb may split into two pairs, a 6-bomb into two
triples), optionally topped up with wildcards; unmatched triples max(D, 0) are charged at
the end. The state is bounded (open sequences, D kept in [-dw, dw]; leaving the window
charges excess triples at once and forgets surplus pairs, which only over-counts). Costs
are ``plays * 256 - bombs * 32 + singles``, so among the fewest-plays splits it keeps the
most bombs, then the fewest singles. Much closer to exact, but far slower.

numpy only (rules core); tables are built on first use per model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..core.cards import BJ_FACE, NUM_NATURAL_FACES, NUM_NATURAL_RANKS, RJ_FACE, wildcard_face

NR = NUM_NATURAL_RANKS  # 13
NPOS = NR + 1  # position 0 = ace played low, 1..13 = ranks 2..A
PW, BW = 256, 32  # cost of a play; bonus of a bomb (singles cost 1 on top of their play)
GREEDY_ROUNDS = 4  # sequences the fast method adds greedily, at most
INF = 15000  # int16 "impossible" (INF + INF + costs still fits int16)


@dataclass(frozen=True)
class PlanModel:
    """Bounds of the plan search (larger = more exact, slower)."""

    straights: int = 2  # straights open at the same time (at most one started per rank)
    pairs3: int = 1  # open three-pairs (0 or 1)
    triples2: int = 1  # open two-triples (0 or 1)
    active: int = 2  # open sequences of any kind at the same time
    dw: int = 2  # triples − pairs tracked exactly in [-dw, dw]
    low_aces: int = 2  # aces that may be played low (A-2-3-4-5, AA-22-33, AAA-222)


MODELS: dict[str, PlanModel] = {
    "accurate": PlanModel(straights=2, pairs3=1, triples2=1, active=2, dw=2, low_aces=2),
    "fast": PlanModel(straights=1, pairs3=1, triples2=0, active=1, dw=1, low_aces=1),
    "groups": PlanModel(straights=0, pairs3=0, triples2=0, active=0, dw=4, low_aces=0),
}
DEFAULT_MODEL = "accurate"

# Group options by group size g (cards of one rank incl. wildcards): (cost, D change).
_DELTAS = (-2, -1, 0, 1, 2)
_MAXG = 11  # g = 0..10; index 11 = impossible


def _group_lut() -> np.ndarray:
    """``int16[5 (D change -2..2), 12 (group size, 11 = invalid)]`` cheapest cost."""
    lut = np.full((len(_DELTAS), _MAXG + 1), INF, dtype=np.int16)

    def put(g: int, delta: int, cost: int) -> None:
        j = _DELTAS.index(delta)
        lut[j, g] = min(int(lut[j, g]), cost)

    put(0, 0, 0)
    put(1, 0, PW + 1)  # single
    put(2, -1, PW)  # pair (one play, may later be absorbed by a triple: D - 1)
    put(3, 1, 0)  # triple (charged at the end if no pair is left for it)
    for g in range(4, _MAXG):
        put(g, 0, PW - BW)  # bomb
    put(4, -2, 2 * PW)  # 4 = two pairs (both may go into full houses)
    put(6, 2, 0)  # 6 = two triples
    return lut


_LUT = _group_lut()


@dataclass
class _Tables:
    pend: list[tuple[int, ...]]
    zero: int
    # per position: transitions sorted by (next, need) pair
    t_src: list[np.ndarray]
    t_cost: list[np.ndarray]
    t_pair_start: list[np.ndarray]  # reduceat offsets of transitions per pair
    pair_next: list[np.ndarray]
    pair_need: list[np.ndarray]
    pair_next_start: list[np.ndarray]  # reduceat offsets of pairs per next state
    next_states: list[np.ndarray]
    max_need: int


@lru_cache(maxsize=8)
def _tables(model: PlanModel) -> _Tables:
    pend = []
    for s in np.ndindex(2, 2, 2, 2, 2, 2, 2):
        s1, s2, s3, s4, q1, q2, t1 = s
        if s1 + s2 + s3 + s4 > model.straights or q1 + q2 > model.pairs3 or t1 > model.triples2:
            continue
        if s1 + s2 + s3 + s4 + q1 + q2 + t1 > model.active:
            continue
        pend.append(tuple(int(x) for x in s))
    index = {p: i for i, p in enumerate(pend)}
    zero = index[(0,) * 7]
    out = _Tables(pend, zero, [], [], [], [], [], [], [], 0)
    for pos in range(NPOS):
        trans = []  # (next, need, src, cost)
        for i, (s1, s2, s3, s4, q1, q2, t1) in enumerate(pend):
            need0 = s1 + s2 + s3 + s4 + 2 * (q1 + q2) + 3 * t1
            for ns in range(2 if pos + 4 < NPOS else 1):
                for nq in range(2 if pos + 2 < NPOS else 1):
                    for nt in range(2 if pos + 1 < NPOS else 1):
                        nxt = (ns, s1, s2, s3, nq, q1, nt)
                        if nxt not in index:
                            continue
                        need = need0 + ns + 2 * nq + 3 * nt
                        trans.append((index[nxt], need, i, (ns + nq + nt) * PW))
        trans.sort()
        keys = sorted({(t[0], t[1]) for t in trans})
        kidx = {k: j for j, k in enumerate(keys)}
        t_pair = np.array([kidx[(t[0], t[1])] for t in trans])
        out.t_src.append(np.array([t[2] for t in trans], dtype=np.intp))
        out.t_cost.append(np.array([t[3] for t in trans], dtype=np.int16))
        out.t_pair_start.append(np.flatnonzero(np.r_[True, t_pair[1:] != t_pair[:-1]]))
        pn = np.array([k[0] for k in keys], dtype=np.intp)
        out.pair_next.append(pn)
        out.pair_need.append(np.array([k[1] for k in keys], dtype=np.intp))
        out.pair_next_start.append(np.flatnonzero(np.r_[True, pn[1:] != pn[:-1]]))
        out.next_states.append(pn[out.pair_next_start[-1]])
        out.max_need = max(out.max_need, max(k[1] for k in keys))
    return out


def _model(model: str | PlanModel) -> PlanModel:
    return MODELS[model] if isinstance(model, str) else model


def rank_states(
    hands: np.ndarray, level: np.ndarray | int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(nat uint8[N,13], bj uint8[N], rj uint8[N], wilds uint8[N])`` of face-count hands
    ``uint8[N,54]``; the ♥N wildcards (face ``level*4+1``, R-2.3) are not counted as naturals."""
    h = np.asarray(hands, dtype=np.uint8)
    if h.ndim == 1:
        h = h[None]
    n = h.shape[0]
    lv = np.broadcast_to(np.asarray(level, dtype=np.intp), (n,))
    rows = np.arange(n)
    wilds = h[rows, wildcard_face(lv)].astype(np.uint8)
    nat = h[:, :NUM_NATURAL_FACES].reshape(n, NR, 4).sum(2, dtype=np.uint8)
    nat[rows, lv] -= wilds
    return nat, h[:, BJ_FACE].copy(), h[:, RJ_FACE].copy(), wilds


def _solve(
    nat: np.ndarray, bj: np.ndarray, rj: np.ndarray, wilds: np.ndarray, model: PlanModel
) -> np.ndarray:
    """Best cost (``int32[N]``, units of ``PW``/``BW``/1) for one variant of ace use."""
    tb = _tables(model)
    n = nat.shape[0]
    W, ND = 3, 2 * model.dw + 1
    V = np.full((len(tb.pend), W, ND, n), INF, dtype=np.int16)
    rows = np.arange(n)
    V[tb.zero, wilds.astype(np.intp), model.dw, rows] = 0
    lut = _LUT
    needs = np.arange(tb.max_need + 1, dtype=np.int16)[:, None]
    for pos in range(NPOS):
        cnt = nat[:, pos].astype(np.int16)[None, :]  # nat is [N, NPOS]
        # per need value and wildcards used u: the group left at this rank, per hand
        used = np.minimum(cnt, needs)
        deficit = needs - used
        left = cnt - used
        C = np.empty((tb.max_need + 1, W, len(_DELTAS), n), dtype=np.int16)
        for u in range(W):
            g = left + (u - deficit)
            bad = (deficit > u) | (g > _MAXG - 1)
            if pos == 0:
                bad |= g > 0  # the low ace position only feeds sequences
            g = np.where(bad, _MAXG, g)
            C[:, u] = lut[:, g].transpose(1, 0, 2)
        src = tb.t_src[pos]
        agg = V[src] + tb.t_cost[pos][:, None, None, None]
        agg = np.minimum.reduceat(agg, tb.t_pair_start[pos], axis=0)
        Cp = C[tb.pair_need[pos]]  # [K, W(u), 5, N]
        out = np.full_like(agg, INF)
        for u in range(W):
            for j, d in enumerate(_DELTAS):
                c = Cp[:, u, j][:, None, None, :]
                c1 = c[:, :, 0]
                a = agg[:, u:]
                o = out[:, : W - u]
                if d >= 0:
                    np.minimum(o[:, :, d:], a[:, :, : ND - d] + c, out=o[:, :, d:])
                    for i in range(ND - d, ND):  # saturate: extra triples stay unmatched
                        extra = (i + d - (ND - 1)) * PW
                        np.minimum(o[:, :, ND - 1], a[:, :, i] + c1 + extra, out=o[:, :, ND - 1])
                else:
                    e = -d
                    np.minimum(o[:, :, : ND - e], a[:, :, e:] + c, out=o[:, :, : ND - e])
                    for i in range(e):  # saturate: forget surplus pairs
                        np.minimum(o[:, :, 0], a[:, :, i] + c1, out=o[:, :, 0])
        Vn = np.full_like(V, INF)
        Vn[tb.next_states[pos]] = np.minimum.reduceat(out, tb.pair_next_start[pos], axis=0)
        np.minimum(Vn, INF, out=Vn)
        V = Vn
    fin = V[tb.zero].astype(np.int32)  # [W, ND, N]
    # leftover wildcards: one is a single, two a pair (a pair lowers D by one)
    dvals = np.arange(-model.dw, model.dw + 1)[:, None]
    bj = bj.astype(np.int32)
    rj = rj.astype(np.int32)
    jp = (bj == 2).astype(np.int32) + (rj == 2)
    js = (bj == 1).astype(np.int32) + (rj == 1)
    best = np.full(n, INF * 4, dtype=np.int32)
    for wl in range(W):
        wp = 1 if wl == 2 else 0
        base = fin[wl] + (PW + 1 if wl == 1 else 0) + wp * PW + js * (PW + 1)
        for four in (False, True):
            if four:
                ok = jp == 2
                tot = base + PW - BW + np.maximum(dvals - wp, 0) * PW
            else:
                ok = np.ones(n, dtype=bool)
                tot = base + jp * PW + np.maximum(dvals - wp - jp, 0) * PW
            tot = np.where(ok & (fin[wl] < INF), tot, INF * 4).min(0)
            np.minimum(best, tot, out=best)
    return best


def _plan_costs(
    nat: np.ndarray, bj: np.ndarray, rj: np.ndarray, wilds: np.ndarray, model: PlanModel
) -> np.ndarray:
    nat = np.asarray(nat, dtype=np.uint8)
    n = nat.shape[0]
    bj = np.asarray(bj, dtype=np.uint8).reshape(n)
    rj = np.asarray(rj, dtype=np.uint8).reshape(n)
    wilds = np.asarray(wilds, dtype=np.uint8).reshape(n)
    best = np.full(n, INF * 4, dtype=np.int32)
    aces = nat[:, NR - 1]
    for a in range(min(model.low_aces, int(aces.max(initial=0))) + 1):
        idx = np.flatnonzero(aces >= a) if a else np.arange(n)
        if idx.size == 0:
            continue
        pos = np.zeros((idx.size, NPOS), dtype=np.uint8)
        pos[:, 0] = a
        pos[:, 1:] = nat[idx]
        pos[:, NPOS - 1] -= a
        cost = _solve(pos, bj[idx], rj[idx], wilds[idx], model)
        best[idx] = np.minimum(best[idx], cost)
    return best


def _decode(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    plays = (cost + 7 * BW) // PW
    r = cost - plays * PW
    bombs = (-r + BW - 1) // BW
    singles = r + bombs * BW
    return plays, bombs, singles


def plays_needed(
    nat: np.ndarray,
    bj: np.ndarray,
    rj: np.ndarray,
    wilds: np.ndarray,
    level: np.ndarray | int | None = None,
    method: str = "fast",
    model: str | PlanModel = DEFAULT_MODEL,
) -> np.ndarray:
    """Fewest plays (``int8[N]``) a split of each hand needs; never below the true minimum.

    ``method="fast"``: greedy sequences + exact group table (``fast_plays``);
    ``method="dp"``: the bounded dynamic programme (``model``), slower and closer to exact.
    ``level`` is accepted for symmetry: once ``rank_states`` has separated the wildcards the
    count does not depend on it."""
    if method == "fast":
        return fast_plays(nat, bj, rj, wilds)
    if method != "dp":
        raise ValueError(f"method must be 'fast' or 'dp', got {method!r}")
    plays, _, _ = _decode(_plan_costs(nat, bj, rj, wilds, _model(model)))
    return plays.astype(np.int8)


PLAN_FIELDS: list[tuple[str, str]] = [
    ("plays", "plays needed by the best split / 10"),
    (
        "bombs",
        "bombs (4+ of a rank, four jokers) in the split / 4 (dp: most bombs among the "
        "fewest-plays splits; fast: ranks left with 4+ cards after the greedy sequences)",
    ),
    ("singles", "single plays in the split / 10 (fast: before wildcards are placed)"),
    ("other_plays", "plays that are neither bombs nor singles / 10"),
    ("cards", "cards in hand / 27"),
    ("wilds", "♥N wildcards / 2"),
    ("jokers", "jokers / 4"),
    ("level_cards", "natural level-rank cards (wildcards excluded) / 6"),
    ("aces", "aces (not counting the level rank when it is A) / 8"),
    ("control", "jokers + wildcards + level cards + aces / 10"),
    ("max_rank_count", "largest natural count of one rank / 8"),
    ("ranks_present", "natural ranks held / 13"),
    ("plays_per_card", "plays / cards (0 for an empty hand)"),
]
PLAN_DIM = len(PLAN_FIELDS)


def plan_features(
    nat: np.ndarray,
    bj: np.ndarray,
    rj: np.ndarray,
    wilds: np.ndarray,
    level: np.ndarray | int,
    method: str = "fast",
    model: str | PlanModel = DEFAULT_MODEL,
    cache: PlanCache | None = None,
    rounds: int | None = None,
) -> np.ndarray:
    """``float32[N, PLAN_DIM]`` features of each hand's plan, scaled as ``PLAN_FIELDS`` says
    (roughly [0, 1]); ``cache``: a ``PlanCache`` memo for the fast method (same answers);
    ``rounds``: the fast method's greedy sequence rounds (``None``: ``GREEDY_ROUNDS``; 0 is
    the exact split without sequences, ~20x cheaper; the memo serves the default only)."""
    nat = np.asarray(nat, dtype=np.uint8)
    n = nat.shape[0]
    bj = np.asarray(bj, dtype=np.uint8).reshape(n)
    rj = np.asarray(rj, dtype=np.uint8).reshape(n)
    wilds = np.asarray(wilds, dtype=np.uint8).reshape(n)
    lv = np.broadcast_to(np.asarray(level, dtype=np.intp), (n,))
    if method == "fast":
        if rounds is None or rounds == GREEDY_ROUNDS:
            plays, code, _ = (cache.greedy if cache is not None else _greedy)(nat, bj, rj, wilds)
        else:
            plays, code, _ = _greedy(nat, bj, rj, wilds, rounds)
        bombs = sum(_field(code, f) for f in (_F_4, _F_6, _F_8, _F_O))
        singles = _field(code, _F_S)
    elif method == "dp":
        if rounds is not None:
            raise ValueError("rounds is a setting of the fast method; the dp has none")
        plays, bombs, singles = _decode(_plan_costs(nat, bj, rj, wilds, _model(model)))
    else:
        raise ValueError(f"method must be 'fast' or 'dp', got {method!r}")
    singles = np.minimum(singles, plays - bombs)
    rows = np.arange(n)
    cards = nat.sum(1, dtype=np.int32) + bj + rj + wilds
    jokers = bj.astype(np.int32) + rj
    lvl = nat[rows, lv].astype(np.int32)
    aces = np.where(lv == NR - 1, 0, nat[:, NR - 1]).astype(np.int32)
    out = np.empty((n, PLAN_DIM), dtype=np.float32)
    out[:, 0] = plays / 10
    out[:, 1] = bombs / 4
    out[:, 2] = singles / 10
    out[:, 3] = np.maximum(plays - bombs - singles, 0) / 10
    out[:, 4] = cards / 27
    out[:, 5] = wilds / 2
    out[:, 6] = jokers / 4
    out[:, 7] = lvl / 6
    out[:, 8] = aces / 8
    out[:, 9] = (jokers + wilds + lvl + aces) / 10
    out[:, 10] = nat.max(1) / 8
    out[:, 11] = (nat > 0).sum(1) / 13
    out[:, 12] = np.where(cards > 0, plays / np.maximum(cards, 1), 0)
    return out


def hand_plan_features(
    hands: np.ndarray, level: np.ndarray | int, method: str = "fast"
) -> np.ndarray:
    """``plan_features`` of face-count hands ``uint8[N,54]``."""
    nat, bj, rj, w = rank_states(hands, level)
    n = nat.shape[0]
    return plan_features(nat, bj, rj, w, np.broadcast_to(np.asarray(level), (n,)), method)


# ---------------------------------------------------------------------------------------------
# Fast path: greedy sequences + a table for the group part
# ---------------------------------------------------------------------------------------------
# Rank classes packed in one int32 per hand (bit offset, width): a rank holding k cards left
# after sequences counts as a single (k=1), pair (2), triple (3), 4-, 6- or 8-bomb, or other
# bomb (5, 7, 9, 10); DEF counts wildcards a sequence needs to fill gaps.
_F_S = (0, 5)  # natural singles
_F_P = (5, 5)  # natural pairs
_F_T = (10, 4)  # triples
_F_JP = (14, 2)  # joker pairs (pairs for full houses, but no wildcard can join them)
_F_4 = (16, 3)
_F_6 = (19, 3)
_F_8 = (22, 2)
_F_O = (24, 3)  # other bombs: 5, 7, 9, 10 cards
_F_DEF = (27, 4)  # wildcards a sequence needs
_D_CAP = 6  # triples - pairs kept exact in the group table within [-6, 6]


def _code(k: int) -> int:
    field = {1: _F_S, 2: _F_P, 3: _F_T, 4: _F_4, 6: _F_6, 8: _F_8}.get(k)
    if k == 0:
        return 0
    if field is None:
        field = _F_O
    return 1 << field[0]


_CODE = np.array([_code(k) for k in range(11)], dtype=np.int32)
# _DCODE[t, k]: change of the packed classes when a sequence takes t cards of a rank holding
# k (naturals first, the rest from wildcards, counted in DEF)
_DCODE = np.array(
    [
        [_CODE[max(k - t, 0)] - _CODE[k] + (max(t - k, 0) << _F_DEF[0]) for k in range(11)]
        for t in range(4)
    ],
    dtype=np.int32,
)


def _field(x: np.ndarray, f: tuple[int, int]) -> np.ndarray:
    return (x >> f[0]) & ((1 << f[1]) - 1)


def _splits(d: np.ndarray, n4: np.ndarray, n6: np.ndarray, n8: np.ndarray) -> np.ndarray:
    """Plays saved by splitting bombs for full houses, given D = triples - pairs: with spare
    triples a 4-bomb becomes two pairs (D-2), a 6-bomb three pairs (D-3), an 8-bomb four
    (D-4); with spare pairs a 6-bomb becomes two triples (D+2). Each split saves one play."""
    pos = np.maximum(d, 0)
    s4 = np.minimum(n4, pos // 2)
    pos = pos - 2 * s4
    s6 = np.minimum(n6, pos // 3)
    pos = pos - 3 * s6
    s8 = np.minimum(n8, pos // 4)
    neg = np.minimum(n6, np.maximum(-d, 0) // 2)
    return s4 + s6 + s8 + neg


@lru_cache(maxsize=1)
def _group_table() -> np.ndarray:
    """``int8`` extra plays of the group part over ``singles + pairs + bombs``, indexed by
    (D, 4-bombs, 6-bombs, 8-bombs, other bomb?, singles, pairs, triples (each capped at 2),
    wildcards); the wildcards are placed in the best of all their uses (alone, joining a
    single, pair, triple or bomb, one or both together)."""
    D, N4, N6, N8, BO, SC, PC, TC, WL = np.meshgrid(
        np.arange(-_D_CAP, _D_CAP + 1),
        np.arange(4),
        np.arange(3),
        np.arange(2),
        np.arange(2),
        np.arange(3),
        np.arange(3),
        np.arange(3),
        np.arange(3),
        indexing="ij",
    )
    # representative counts with the given caps and D = triples - natural pairs - joker
    # pairs (the extra plays depend only on D and on which classes are present)
    P = np.where(PC < 2, PC, np.where(TC < 2, TC - D, np.maximum(2, 2 - D)))
    JP = np.where(
        TC < 2, np.where(PC < 2, TC - PC - D, 0), np.where(PC < 2, np.maximum(0, 2 - PC - D), 0)
    )
    T = P + JP + D
    valid = (JP >= 0) & (T >= 0) & (np.minimum(T, 2) == TC) & (np.minimum(P, 2) == PC)
    S = SC

    def f(s, p, t, n4, n6, n8, bo):
        pairs = p + JP
        return s + n4 + n6 + n8 + bo + np.maximum(t, pairs) - _splits(t - pairs, n4, n6, n8)

    base = S + P + JP + N4 + N6 + N8 + BO
    best = np.where(WL == 0, f(S, P, T, N4, N6, N8, BO), 99)
    # (change, index of the class the wildcard joins, which must be present; -1: alone)
    one = [
        ((1, 0, 0, 0, 0, 0, 0), -1),  # alone: a level single
        ((-1, 1, 0, 0, 0, 0, 0), 0),  # single -> pair
        ((0, -1, 1, 0, 0, 0, 0), 1),  # pair -> triple
        ((0, 0, -1, 1, 0, 0, 0), 2),  # triple -> 4-bomb
        ((0, 0, 0, -1, 0, 0, 1), 3),  # 4 -> 5
        ((0, 0, 0, 0, -1, 0, 1), 4),  # 6 -> 7
        ((0, 0, 0, 0, 0, -1, 1), 5),  # 8 -> 9
        ((0, 0, 0, 0, 0, 0, 0), 6),  # 5, 7, 9 -> one more (free)
    ]
    two = [
        ((0, 1, 0, 0, 0, 0, 0), -1),  # both alone: a level pair
        ((-1, 0, 1, 0, 0, 0, 0), 0),  # single -> triple
        ((0, -1, 0, 1, 0, 0, 0), 1),  # pair -> 4-bomb
        ((0, 0, -1, 0, 0, 0, 1), 2),  # triple -> 5-bomb
        ((0, 0, 0, -1, 1, 0, 0), 3),  # 4 -> 6
        ((0, 0, 0, 0, -1, 1, 0), 4),  # 6 -> 8
        ((0, 0, 0, 0, 0, 0, 0), 6),  # into a 5/7/9 bomb (free)
    ]
    cur = (S, P, T, N4, N6, N8, BO)

    def apply(state, move):
        delta, need = move
        new = tuple(a + b for a, b in zip(state, delta, strict=True))
        ok = np.all([x >= 0 for x in new], axis=0)
        if need >= 0:
            ok &= state[need] >= 1
        return new, ok

    for mv in one:
        st, ok1 = apply(cur, mv)
        best = np.where((WL == 1) & ok1, np.minimum(best, f(*st)), best)
        for mv2 in one:
            st2, ok2 = apply(st, mv2)
            best = np.where((WL == 2) & ok1 & ok2, np.minimum(best, f(*st2)), best)
    for mv in two:
        st, ok1 = apply(cur, mv)
        best = np.where((WL == 2) & ok1, np.minimum(best, f(*st)), best)
    extra = np.where(valid, best - base, 0)
    return extra.astype(np.int8).ravel()


_G_DIMS = (2 * _D_CAP + 1, 4, 3, 2, 2, 3, 3, 3, 3)  # D, n4, n6, n8, bo, s, p, t, wl
_G_STRIDE = [int(np.prod(_G_DIMS[i + 1 :])) for i in range(len(_G_DIMS))]
_LO_BITS = _F_JP[0] + _F_JP[1]  # singles, pairs, triples, joker pairs: bits 0..15
_MID_BITS = _F_O[0] + _F_O[1] - _LO_BITS  # 4-, 6-, 8-, other bombs: bits 16..26


@lru_cache(maxsize=1)
def _split_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two small tables turn the packed classes into (table key, base plays) with two
    gathers: ``lo`` covers singles/pairs/triples, ``mid`` the bombs; each entry is
    ``key_part + (base_part << 16)``."""
    lo = np.arange(1 << _LO_BITS, dtype=np.int64)
    s, p, t, jp = (_field(lo, f) for f in (_F_S, _F_P, _F_T, _F_JP))
    d = t - p - jp
    over = np.maximum(d - _D_CAP, 0)
    st = _G_STRIDE
    key = (
        (np.clip(d, -_D_CAP, _D_CAP) + _D_CAP) * st[0]
        + np.minimum(s, 2) * st[5]
        + np.minimum(p, 2) * st[6]
        + np.minimum(t, 2) * st[7]
    )
    ta = (key + ((s + p + jp + over) << 16)).astype(np.int32)
    mid = np.arange(1 << _MID_BITS, dtype=np.int64) << _LO_BITS
    n4, n6, n8, bo = (_field(mid, f) for f in (_F_4, _F_6, _F_8, _F_O))
    key = (
        np.minimum(n4, 3) * st[1]
        + np.minimum(n6, 2) * st[2]
        + np.minimum(n8, 1) * st[3]
        + np.minimum(bo, 1) * st[4]
    )
    tb = (key + ((n4 + n6 + n8 + bo) << 16)).astype(np.int32)
    return ta, tb, _group_table().astype(np.int32)


def _group_cost(code: np.ndarray, wl: np.ndarray) -> np.ndarray:
    """Plays of the group part of packed classes ``code`` with ``wl`` wildcards left."""
    ta, tb, tab = _split_tables()
    x = ta[code & ((1 << _LO_BITS) - 1)]
    x += tb[(code >> _LO_BITS) & ((1 << _MID_BITS) - 1)]
    return (x >> 16) + tab[(x & 0xFFFF) + wl]


def _windows() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Greedy candidates over the 14 positions (A low, 2..A): (take t, first, last, cost)."""
    rows = []
    for t, length, cost in ((1, 5, 1), (2, 3, 1), (3, 2, 1), (2, 5, 2)):
        for lo in range(NPOS - length + 1):
            rows.append((t, lo, lo + length - 1, cost))
    a = np.array(rows, dtype=np.intp)
    return a[:, 0], a[:, 1], a[:, 2], a[:, 3]


_WT, _WLO, _WHI, _WCOST = _windows()
_WCOST32 = _WCOST.astype(np.int32)
# column of a window's ends in the stacked prefix sums ((t - 1) * (NPOS + 1) + position)
_WEND = ((_WT - 1) * (NPOS + 1) + _WHI + 1).astype(np.intp)
_WSTART = ((_WT - 1) * (NPOS + 1) + _WLO).astype(np.intp)
_DCODE123 = np.ascontiguousarray(_DCODE[1:4])  # [t - 1, k]: change for t = 1, 2, 3
_WTAKE = np.zeros((len(_WT), NPOS), dtype=np.int16)
for _i, (_t, _lo, _hi) in enumerate(zip(_WT, _WLO, _WHI, strict=True)):
    _WTAKE[_i, _lo : _hi + 1] = _t


def _greedy(
    nat: np.ndarray, bj: np.ndarray, rj: np.ndarray, wilds: np.ndarray, rounds: int = GREEDY_ROUNDS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(plays int32[N], packed classes left int32[N], wildcards left int32[N])`` of the
    greedy split (see ``fast_plays``)."""
    nat = np.asarray(nat, dtype=np.uint8)
    n = nat.shape[0]
    c = np.zeros((n, NPOS), dtype=np.int16)  # position 0 (ace low) starts empty
    c[:, 1:] = nat
    wl = np.asarray(wilds, dtype=np.int32).reshape(n).copy()
    bj = np.asarray(bj, dtype=np.int32).reshape(n)
    rj = np.asarray(rj, dtype=np.int32).reshape(n)
    four = (bj == 2) & (rj == 2)
    # jokers: singles and pairs (a joker pair can be a full house's pair); four jokers as a
    # bomb are tried at the end (a wildcard can never join them, so they are not a 4-bomb)
    js = (bj == 1).astype(np.int32) + (rj == 1)  # single jokers: one play each, always
    jcode = ((bj == 2).astype(np.int32) + (rj == 2)) << _F_JP[0]
    q = np.zeros(n, dtype=np.int32)
    nc = len(_WT)
    act = np.arange(n)  # hands whose split changed in the last round
    for _ in range(rounds):
        if act.size == 0:
            break
        m = act.size
        ca, wa, qa = c[act], wl[act], q[act]
        # windows see the aces at both ends: low position 0 is fed from the ace count.
        # Position-major [NPOS, m] (and window-major below): every step is a contiguous
        # vector op over the hands, 2-4x faster than short rows per hand
        ext = np.minimum(ca, 10)
        ext[:, 0] = ext[:, NPOS - 1]
        ext = np.ascontiguousarray(ext.T)
        code = _CODE[ext[1:]].sum(0, dtype=np.int32) + jcode[act]
        cur = qa + _group_cost(code, wa)
        # prefix sums over the positions of the class changes, t = 1, 2, 3
        x = np.take(_DCODE123, ext, axis=1)  # [3, NPOS, m]
        cs = np.empty((3, NPOS + 1, m), dtype=np.int32)
        cs[:, 0] = 0
        for j in range(NPOS):
            np.add(cs[:, j], x[:, j], out=cs[:, j + 1])
        cs = cs.reshape(3 * (NPOS + 1), m)
        after = code + (cs[_WEND] - cs[_WSTART])  # [nc, m]
        left = wa - _field(after, _F_DEF)
        # only ~1 window in 9 is feasible (enough wildcards for its gaps): cost those alone
        flat = np.flatnonzero(left >= 0)  # flat: 2x faster than a 2-D nonzero
        val = np.full(nc * m, 99, dtype=np.int32)
        val[flat] = _WCOST32[flat // m] + _group_cost(
            after.ravel()[flat] & ((1 << _F_DEF[0]) - 1), left.ravel()[flat]
        )
        val = val.reshape(nc, m)
        best = val.argmin(0)  # the first best window, as over [m, nc]
        take = val[best, np.arange(m)] + qa < cur
        if not take.any():
            break
        sub = np.flatnonzero(take)
        idx = act[sub]
        b = best[sub]
        tk = _WTAKE[b]  # [M, 14]
        used = np.minimum(ext[:, sub].T, tk)
        wl[idx] -= (tk - used).sum(1)
        # the low-ace position takes from the ace count
        used[:, NPOS - 1] += used[:, 0]
        used[:, 0] = 0
        c[idx] -= used
        q[idx] += _WCOST32[b]
        act = idx
    code = _CODE[np.minimum(c[:, 1:], 10)].sum(1, dtype=np.int32) + jcode
    plays = q + js + _group_cost(code, wl)
    if four.any():
        code4 = code - (2 << _F_JP[0])
        alt = q + js + 1 + _group_cost(code4, wl)
        use = four & (alt < plays)
        plays = np.where(use, alt, plays)
        code = np.where(use, code4 + (1 << _F_O[0]), code)  # report four jokers as a bomb
    return plays, code, wl


def fast_plays(
    nat: np.ndarray, bj: np.ndarray, rj: np.ndarray, wilds: np.ndarray, rounds: int = GREEDY_ROUNDS
) -> np.ndarray:
    """Greedy approximation of the fewest plays (``int8[N]``): start from the best split
    without sequences (exact, table driven), then up to ``rounds`` times take the sequence
    (straight, two equal straights, three pairs, two triples; naturals first, wildcards fill
    gaps) that lowers the count most. Every answer is the count of a real split, so it is
    never below the true minimum. ``rounds=0``: the exact minimum *without* sequences."""
    return _greedy(nat, bj, rj, wilds, rounds)[0].astype(np.int8)


class PlanCache:
    """A fixed-size, direct-mapped memo of the fast greedy split, keyed by the rank state
    (naturals per rank, jokers, wildcards: 58 bits packed in one ``int64``; the level does not
    change the split). Self-play meets the same hands again and again (a seat that passed
    faces its own hand again; passing leaves the hand as it is), so a sampler passes one to
    ``plan_features``; answers are identical with or without it. Colliding hands overwrite
    each other, so memory stays ``20 * 2**bits`` bytes."""

    _MUL = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing

    def __init__(self, bits: int = 18) -> None:
        if not 4 <= int(bits) <= 26:
            raise ValueError(f"PlanCache bits must be in [4, 26], got {bits!r}")
        self.bits = int(bits)
        size = 1 << self.bits
        self.keys = np.full(size, -1, dtype=np.int64)  # no real key is negative
        self.values = np.zeros((size, 3), dtype=np.int32)  # plays, packed classes, wilds left
        self.hits = 0
        self.lookups = 0

    @staticmethod
    def key(nat: np.ndarray, bj: np.ndarray, rj: np.ndarray, wilds: np.ndarray) -> np.ndarray:
        """``int64[N]`` packed rank states (4 bits per natural rank, 2 per joker and wilds)."""
        k = np.zeros(nat.shape[0], dtype=np.int64)
        for r in range(NR):
            k |= nat[:, r].astype(np.int64) << (4 * r)
        return (
            k
            | (bj.astype(np.int64) << 52)
            | (rj.astype(np.int64) << 54)
            | (wilds.astype(np.int64) << 56)
        )

    def greedy(self, nat, bj, rj, wilds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``_greedy`` through the memo."""
        keys = self.key(nat, bj, rj, wilds)
        slot = ((keys.astype(np.uint64) * self._MUL) >> np.uint64(64 - self.bits)).astype(np.intp)
        hit = self.keys[slot] == keys
        out = self.values[slot]
        miss = np.flatnonzero(~hit)
        if miss.size:
            # one split per distinct missed hand (~13% of a self-play batch's misses repeat)
            _, first, back = np.unique(keys[miss], return_index=True, return_inverse=True)
            todo = miss[first]
            plays, code, wl = _greedy(nat[todo], bj[todo], rj[todo], wilds[todo])
            fresh = np.stack([plays, code, wl], axis=1).astype(np.int32)
            out[miss] = fresh[back]
            self.keys[slot[todo]] = keys[todo]
            self.values[slot[todo]] = fresh
        self.lookups += keys.size
        self.hits += keys.size - miss.size
        return out[:, 0], out[:, 1], out[:, 2]

    @property
    def hit_rate(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0
