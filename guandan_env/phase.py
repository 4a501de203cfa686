"""The phases of a deal (one declaration for the engine, the vector env and encoders)."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """What the seat to act does now; a text value (``Phase.PLAY == "play"``)."""

    PLAY = "play"  # lead or follow a trick
    RETURN = "return"  # give a card back after tribute
    DEAL_OVER = "deal_over"  # the deal ended; ``next_deal`` starts the next one
    MATCH_OVER = "match_over"  # no deal follows (R-6.4, or the deal limit)
