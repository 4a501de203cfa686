"""Why an action is illegal: one decision procedure and one error type for every engine.

``why_illegal`` reads only the facts legality depends on (phase, the acting hand, the level;
a play the hand could lead but may not make now fails to beat the table), so ``Game``, the
vector env and the AEC env share it. ``IllegalActionError`` (a ``ValueError``) carries the
answer as data — ``action``, ``seat``, ``reason``, ``rule`` and, in the vector env,
``table`` — and a sentence built from it by ``illegal_action_error``.
"""

from __future__ import annotations

import numpy as np

from . import actions as T
from . import vector_mask
from .phase import Phase
from .text import action_text

# reason -> (rule, why, in words)
REASONS: dict[str, tuple[str, str]] = {
    "unknown_id": ("R-3", "ids are 0..{max_id}"),
    "deal_over": ("R-6.2", "the deal is over: no action is legal"),
    "return_due": ("R-7.1", "seat {seat} must choose a tribute return card"),
    "bad_return": (
        "R-7.1",
        "a return must be a held card of rank 2..10, or the lowest card if none is held",
    ),
    "no_return_due": ("R-7", "no tribute return is due now"),
    "leader_must_play": ("R-5.1", "the leader of a trick must play, never pass"),
    "cards_not_held": ("R-3", "the hand does not hold the cards for it"),
    "does_not_beat": ("R-5.2, R-4", "it does not beat {table} on the table"),
}


class IllegalActionError(ValueError):
    """An action the rules forbid in this state; the state is unchanged."""

    def __init__(
        self,
        message: str,
        *,
        action: int,
        seat: int,
        reason: str,
        rule: str,
        table: int | None = None,
    ) -> None:
        super().__init__(message)
        self.action, self.seat, self.reason, self.rule, self.table = (
            action,
            seat,
            reason,
            rule,
            table,
        )


def why_illegal(action: int, phase: Phase, hand: np.ndarray, level: int) -> str:
    """The reason code (a key of ``REASONS``) why ``action`` is not legal now; call it only
    for an action the legal mask refuses."""
    if not 0 <= action < T.NUM_ACTIONS:
        return "unknown_id"
    if phase in (Phase.DEAL_OVER, Phase.MATCH_OVER):
        return "deal_over"
    kind = int(T.KIND[action])
    if phase == Phase.RETURN:
        return "bad_return" if kind == T.RETURN else "return_due"
    if kind == T.RETURN:
        return "no_return_due"
    if kind == T.PASS:
        return "leader_must_play"
    if not vector_mask.play_mask_one(hand, level, -1)[action]:
        return "cards_not_held"
    return "does_not_beat"


def illegal_action_error(
    action: int,
    seat: int,
    phase: Phase,
    hand: np.ndarray,
    level: int,
    table_action: int,
    table: int | None = None,
) -> IllegalActionError:
    """The error for an illegal ``action`` by ``seat``, worded for people."""
    reason = why_illegal(action, phase, hand, level)
    rule, why = REASONS[reason]
    table_text = action_text(table_action, level) if table_action >= 0 else ""
    why = why.format(max_id=T.NUM_ACTIONS - 1, seat=seat, table=table_text)
    what = (
        f"action {action}"
        if reason == "unknown_id"
        else f"action {action} ({action_text(action, level)})"
    )
    prefix = f"table {table}: " if table is not None else ""
    message = f"{prefix}illegal {what} by seat {seat}: {why} ({rule})"
    return IllegalActionError(
        message, action=action, seat=seat, reason=reason, rule=rule, table=table
    )
