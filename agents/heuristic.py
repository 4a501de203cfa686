"""A rule-based Guandan player worth beating, in the spirit of the competition bots.

It judges a hand by its best split into plays (``agents.hand_split``: fewest plays, wildcards
used where they save plays, bombs and strong cards valued) and scores each legal action by
the cost of the hand it leaves. On top of that, table rules:

* Leading: go out if one play empties the hand; with two plays left lead the stronger one
  first; feed a partner who is about to go out (lowest single, or pair); otherwise lead the
  split's cheapest non-bomb play (low and large first, strong cards last), avoiding the
  play size an opponent about to finish could go out on.
* Following an opponent: play the legal action that leaves the cheapest hand if it sheds a
  play; when an opponent is close to finishing, also break combinations to stop it. Bombs
  only when they matter: an opponent close to going out, or the bomb wins the lead back for a
  hand that is then at most ``finish_plays`` plays from going out. The smallest bomb that
  beats the table is used.
* Following the partner: pass, unless this play leaves at most one play (take the lead and
  go out) or the next opponent is close to finishing and the partner's play is weak.
* Tribute return: the card whose loss hurts the split least (lowest among equals).

Only the ``view`` in ``info`` (``guandan_env.envs.aec.SeatView``) and the action mask are used.
Decisions are deterministic (the seed is accepted for the protocol).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from guandan_env.core import actions as T
from guandan_env.core.cards import level_key, wildcard_face
from guandan_env.core.choice import pick_face
from guandan_env.core.phase import Phase
from guandan_env.core.strength import strength_arrays

from .hand_split import (
    after_action,
    best_split,
    component_action,
    quick_cost,
    rank_state,
    split_cost,
)


@dataclass(frozen=True)
class HeuristicParams:
    """Tunable thresholds. The defaults won duplicate runs of variants against each other
    (200 pairs each, random levels and tribute); ``heuristic:NAME=VALUE`` specs change them."""

    follow_threshold: float = 0.0  # follow an opponent only if the split cost rises at most this
    urgent_threshold: float = 1.5  # … or rises at most this much when an opponent is close
    danger_cards: int = 6  # an opponent holding this many cards or fewer is about to finish
    bomb_cards: int = 6  # bomb a play by an opponent holding this many cards or fewer
    feed_cards: int = 2  # lead low to a partner holding this many cards or fewer
    finish_plays: int = 2  # bomb to win the lead when the rest is at most this many plays
    weak_partner_value: int = 9  # a partner play below this level value may be covered
    lead_size_weight: float = 0.6  # leading: prefer plays with low value - weight * size
    max_exact: int = 64  # follow candidates scored by the exact split search (speed cap)


class HeuristicAgent:
    """Rule-based player (see module docstring)."""

    name = "heuristic"

    def __init__(self, seed: int | None = None, params: HeuristicParams | None = None) -> None:
        self.params = params or HeuristicParams()
        self.seed = seed

    def reset(self, seed: int | None = None) -> None:
        self.seed = seed

    # ------------------------------------------------------------------ entry point
    def act(self, observation: dict[str, np.ndarray], info: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in the mask: it is not this agent's turn")
        if legal.size == 1:
            return int(legal[0])
        view = info.get("view")
        if view is None:
            raise ValueError(
                "the heuristic agent needs info['view'] (a guandan_env.envs.aec.SeatView), "
                "as the AEC env provides for the agent to act"
            )
        if view.phase == Phase.RETURN:
            a = self._return(view, legal)
        elif view.table_action < 0:
            a = self._lead(view, legal)
        else:
            a = self._follow(view, legal)
        if not observation["action_mask"][a]:  # defensive: never play an illegal action
            a = int(legal[0])
        return int(a)

    # ------------------------------------------------------------------ tribute return
    def _return(self, view, legal: np.ndarray) -> int:
        level = view.level
        state = rank_state(view.hand, level)
        wild_face = wildcard_face(level)
        best, best_key = int(legal[0]), None
        cache: dict[int, float] = {}
        for a in legal:
            face = int(T.RETURN_FACE[a])
            c, bj, rj, w = state
            if face == wild_face:
                rank, after = 99, (c, bj, rj, w - 1)
            elif face >= 52:
                rank = 13 if face == 52 else 14
                after = (c, bj - (face == 52), rj - (face == 53), w)
            else:
                rank = face // 4
                c2 = list(c)
                c2[rank] -= 1
                after = (tuple(c2), bj, rj, w)
            if rank not in cache:
                cache[rank] = split_cost(after, level)
            key = (round(cache[rank], 6), level_key(face, level), face == wild_face)
            if best_key is None or key < best_key:
                best, best_key = int(a), key
        face = int(T.RETURN_FACE[best])
        if face < 52 and face != wild_face:  # among the suits of that rank, keep straight flushes
            hand = [int(x) for x in view.hand]
            f = pick_face(hand, face // 4, hand[wild_face], wild_face)
            if f >= 0 and T.return_action(f) in set(legal.tolist()):
                best = T.return_action(f)
        return best

    # ------------------------------------------------------------------ leading
    def _lead(self, view, legal: np.ndarray) -> int:
        p = self.params
        level = view.level
        value, power = strength_arrays(level)
        n_cards = int(view.hand.sum())
        out = legal[T.SIZE[legal] == n_cards]
        if out.size:
            return int(out[0])
        legal_set = set(legal.tolist())
        state = rank_state(view.hand, level)
        _, comps = best_split(state, level)
        plan = [a for a in (component_action(c) for c in comps) if a in legal_set]
        if not plan:
            nonbomb = [int(a) for a in legal if not T.IS_BOMB[a]]
            return min(nonbomb or legal.tolist(), key=lambda a: (value[a], -T.SIZE[a]))
        nonbomb = [a for a in plan if not T.IS_BOMB[a]]
        bombs = [a for a in plan if T.IS_BOMB[a]]
        partner = (view.seat + 2) % 4
        opp_cards = [view.cards_left[o] for o in view.opponents if view.cards_left[o] > 0]
        partner_cards = view.cards_left[partner]

        if len(plan) == 2 and nonbomb:  # lead the stronger play, keep the last one to go out
            return max(nonbomb, key=lambda a: (value[a], T.SIZE[a]))
        if 0 < partner_cards <= p.feed_cards and min(opp_cards, default=99) > 1:
            fed = self._feed(view, legal, state, partner_cards)
            if fed >= 0:
                return fed
        danger = {n for n in opp_cards if n <= p.danger_cards}
        if danger and nonbomb:
            safe = [a for a in nonbomb if T.SIZE[a] not in danger and T.SIZE[a] > min(danger)]
            if not safe:
                safe = [a for a in nonbomb if T.SIZE[a] not in danger]
            if safe:
                nonbomb = safe
            else:  # every play is a size they could go out on: make it as hard as possible
                return max(nonbomb, key=lambda a: (value[a], T.SIZE[a]))
        if not nonbomb:
            return min(bombs, key=lambda a: power[a])
        w = p.lead_size_weight
        return min(nonbomb, key=lambda a: (value[a] - w * T.SIZE[a], a))

    def _feed(self, view, legal: np.ndarray, state, partner_cards: int) -> int:
        """Lowest natural single (or pair for a partner holding two) to let the partner out."""
        value, _ = strength_arrays(view.level)
        kinds = (T.PAIR, T.SINGLE) if partner_cards == 2 else (T.SINGLE,)
        for kind in kinds:
            cands = legal[(T.KIND[legal] == kind) & (T.WILDS[legal] == 0)]
            if cands.size:
                level = view.level
                return int(
                    min(
                        cands,
                        key=lambda a: (value[a], split_cost(after_action(state, a), level)),
                    )
                )
        return -1

    # ------------------------------------------------------------------ following
    def _shortlist(self, state, level: int, cands: list[int]) -> list[int]:
        """The candidates worth an exact split search: the current split's own plays plus the
        best ``max_exact`` by ``quick_cost`` (a 27-card hand can face 300 full houses)."""
        k = self.params.max_exact
        if len(cands) <= k:
            return cands
        _, comps = best_split(state, level)
        own = {component_action(c) for c in comps}
        ranked = sorted(cands, key=lambda a: (quick_cost(after_action(state, a), level), a))
        return list(dict.fromkeys([a for a in cands if a in own] + ranked[:k]))

    def _follow(self, view, legal: np.ndarray) -> int:
        p = self.params
        level = view.level
        value, power = strength_arrays(level)
        cands = legal[legal != T.PASS_ACTION]
        if cands.size == 0:
            return T.PASS_ACTION
        n_cards = int(view.hand.sum())
        out = cands[T.SIZE[cands] == n_cards]
        if out.size:
            return int(out[0])
        state = rank_state(view.hand, level)
        nonbomb = self._shortlist(state, level, [int(a) for a in cands if not T.IS_BOMB[a]])
        bombs = [int(a) for a in cands if T.IS_BOMB[a]]
        if bombs:  # only the weakest bombs are ever used
            low = min(power[a] for a in bombs)
            bombs = [a for a in bombs if power[a] == low]
        now = split_cost(state, level)
        delta = {a: split_cost(after_action(state, a), level) - now for a in nonbomb + bombs}
        best_nb = min(nonbomb, key=lambda a: (delta[a] + 0.02 * value[a], a)) if nonbomb else -1
        partner = (view.seat + 2) % 4
        opp_cards = [view.cards_left[o] for o in view.opponents if view.cards_left[o] > 0]
        close = min(opp_cards, default=99) <= p.danger_cards

        if view.table_seat == partner:
            if best_nb < 0:
                return T.PASS_ACTION
            after_plays = len(best_split(after_action(state, best_nb), level)[1])
            if after_plays <= 1:
                return best_nb
            nxt = (view.seat + 1) % 4
            nxt_cards = view.cards_left[nxt]
            if (
                0 < nxt_cards <= p.danger_cards
                and value[view.table_action] < p.weak_partner_value
                and delta[best_nb] <= 0.5
            ):
                return best_nb
            return T.PASS_ACTION

        threshold = p.urgent_threshold if close else p.follow_threshold
        if best_nb >= 0 and delta[best_nb] <= threshold:
            return best_nb
        if bombs:
            bomb = min(bombs, key=lambda a: (power[a], delta[a], a))
            use = close or view.cards_left[view.table_seat] <= p.bomb_cards
            if not use:
                rest = best_split(after_action(state, bomb), level)[1]
                plays = [c for c in rest if c[0] not in T.BOMB_KINDS]
                use = len(plays) <= p.finish_plays
            if use:
                return bomb
        return T.PASS_ACTION
