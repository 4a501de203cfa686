"""The observation's one declaration: every field with its kind, size and meaning.

``OBS_FIELDS`` lists the fields in layout order; each ``ObsField`` knows its offset. Both
encoders (``observation.encode``, ``observation.encode_game``), the packing (``packing``), the
bounds check (``violations``) and the docs (``spec_table`` in the AEC env's docstring,
``markdown_table`` in ``docs/observation.md``, rewritten by ``python -m
guandan_env.encoding.obs_layout docs/observation.md``) read the layout from here; nothing else
numbers a column. Relative seat ``k`` is absolute seat ``(seat + k) % 4`` (0 self, 1 next, 2
partner, 3 previous). A field is ``groups`` equal blocks of ``width`` entries (one block per
relative seat, team or card set; ``groups=1`` when not repeated).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from ..core import actions as T
from ..core.cards import NUM_FACES

CARD_BITS = 2 * NUM_FACES  # 108: per face, "holds >= 1 copy" and "holds 2 copies"
MAX_CARDS = 28  # a tribute receiver holds 28 cards until it returns one
NUM_KEYS = 16  # level-order values 0..15 (sequences: natural highest rank)
NUM_KINDS = len(T.KIND_NAMES)


class Kind(Enum):
    """What a field's entries may hold (``violations`` checks it)."""

    CARDS = "cards"  # card sets of CARD_BITS: per face (cards.py order) ">= 1", "= 2"
    ONE_HOT = "one-hot"  # exactly one entry set per block
    ONE_HOT_OR_NONE = "one-hot or none"  # at most one per block: none when the fact is absent
    BITS = "bits"  # independent 0/1 flags
    SCALAR = "scalar"  # a fraction in [0, 1]


@dataclass(frozen=True)
class ObsField:
    """One field of the observation; ``start`` is set by the layout (``OBS_FIELDS``)."""

    name: str
    kind: Kind
    groups: int
    width: int
    doc: str
    start: int = -1

    @property
    def size(self) -> int:
        return self.groups * self.width

    @property
    def stop(self) -> int:
        return self.start + self.size

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)

    @property
    def group_starts(self) -> tuple[int, ...]:
        """The offset of each block."""
        return tuple(self.start + g * self.width for g in range(self.groups))


def _f(name: str, kind: Kind, groups: int, width: int, doc: str) -> ObsField:
    return ObsField(name, kind, groups, width, doc)


_C, _H, _N, _B, _S = Kind.CARDS, Kind.ONE_HOT, Kind.ONE_HOT_OR_NONE, Kind.BITS, Kind.SCALAR
_DECLARED = (
    # card sets first and contiguous: the batched encoder writes them all in one pass
    _f("hand", _C, 1, CARD_BITS, "own hand over the 108 physical cards"),
    _f("played", _C, 4, CARD_BITS, "cards played so far this deal by relative seats 0..3"),
    _f("unseen", _C, 1, CARD_BITS, "cards neither in own hand nor played (held by the others)"),
    _f("table_cards", _C, 1, CARD_BITS, "cards of the play to beat (all 0 when leading)"),
    _f("recent_cards", _C, 3, CARD_BITS, "cards of relative seats 1..3's latest play this deal"),
    _f("cards_left", _H, 4, MAX_CARDS + 1, "one-hot cards held (0..28) per relative seat"),
    _f("table_kind", _H, 1, NUM_KINDS, "kind of the play to beat; index 0 (pass) = leading"),
    _f(
        "table_value",
        _H,
        1,
        NUM_KEYS + 1,
        "comparison value of the play to beat (level order); 16 = none",
    ),
    _f("table_seat", _H, 1, 5, "relative seat that made the play to beat; index 4 = leading"),
    _f(
        "recent_moves",
        _H,
        3,
        3,
        "for relative seats 1..3: no move yet / passed / played, this trick",
    ),
    _f("deal_level", _H, 1, 13, "one-hot rank of the deal's level (2..A)"),
    _f("team_levels", _H, 2, 13, "own team's level, then the other team's (one-hot)"),
    _f("leveling_team", _H, 1, 3, "leveling team: own / other / none (a match's first deal)"),
    _f("a_failures", _H, 2, 3, "A-failures (0..2) of own team, then the other (one-hot)"),
    _f("finish_place", _H, 4, 5, "per relative seat: still playing / 1st / 2nd / 3rd / 4th"),
    _f("phase", _H, 1, 3, "this decision: lead / follow / tribute return"),
    # tribute
    _f(
        "tribute_given", _N, 4, NUM_FACES, "face each relative seat gave as tribute (public, R-8.2)"
    ),
    _f("tribute_received", _B, 1, 4, "relative seats that received a tribute"),
    _f("return_given", _N, 1, NUM_FACES, "face this seat returned (seen by the two seats, R-8.2)"),
    _f("return_received", _N, 1, NUM_FACES, "face returned to this seat"),
    _f("returns_made", _B, 1, 4, "relative seats that have returned a card (public)"),
    _f("resisted", _B, 1, 1, "tribute resisted this deal (R-7.3)"),
    _f("resist_jokers", _B, 4, 2, "big jokers shown to resist, per relative seat (>= 1, 2; R-8.2)"),
    _f("table_bomb_power", _S, 1, 1, "bomb power of the play to beat / 160 (0 if not a bomb)"),
)


def _laid_out(declared: tuple[ObsField, ...]) -> tuple[ObsField, ...]:
    out, at = [], 0
    for f in declared:
        out.append(replace(f, start=at))
        at += f.size
    return tuple(out)


OBS_FIELDS: tuple[ObsField, ...] = _laid_out(_DECLARED)
OBS_FIELD: dict[str, ObsField] = {f.name: f for f in OBS_FIELDS}
OBS_SLICES: dict[str, slice] = {f.name: f.slice for f in OBS_FIELDS}
OBS_DIM: int = OBS_FIELDS[-1].stop

# the columns that hold 0/1 and the fractions: what ``packing`` stores as bits and as floats
SCALAR_COLUMNS = np.array(
    [c for f in OBS_FIELDS if f.kind is Kind.SCALAR for c in range(f.start, f.stop)], np.intp
)
BINARY_COLUMNS = np.setdiff1d(np.arange(OBS_DIM), SCALAR_COLUMNS).astype(np.intp)

# card sets: index of each field's first set among them (the encoders fill them as one array)
CARD_FIELDS = tuple(f for f in OBS_FIELDS if f.kind is Kind.CARDS)
CARD_SETS: dict[str, slice] = {}
for _f_ in CARD_FIELDS:
    _k = _f_.start // CARD_BITS
    CARD_SETS[_f_.name] = slice(_k, _k + _f_.groups)
NUM_CARD_SETS = sum(f.groups for f in CARD_FIELDS)
CARDS_END = NUM_CARD_SETS * CARD_BITS
if any(f.start >= CARDS_END for f in CARD_FIELDS) or CARD_FIELDS[0].start != 0:
    raise ValueError("card-set fields must come first in OBS_FIELDS, one after another")

# one-hot fields: one column per block in the encoders' index matrix (``observation.encode``)
HOT_FIELDS = tuple(f for f in OBS_FIELDS if f.kind in (Kind.ONE_HOT, Kind.ONE_HOT_OR_NONE))
HOT_COLUMNS: dict[str, int | slice] = {}
_k = 0
for _f_ in HOT_FIELDS:
    HOT_COLUMNS[_f_.name] = _k if _f_.groups == 1 else slice(_k, _k + _f_.groups)
    _k += _f_.groups
NUM_HOT = _k
del _f_, _k


def hot_base(name: str) -> int | np.ndarray:
    """The offset of a one-hot field (one block) or of each of its blocks (``int64 (groups,)``):
    index ``base + value`` is the entry to set."""
    f = OBS_FIELD[name]
    return f.start if f.groups == 1 else np.array(f.group_starts, dtype=np.int64)


def violations(obs: np.ndarray) -> list[str]:
    """What in ``obs`` (``(OBS_DIM,)`` or ``(B, OBS_DIM)``) breaks its fields' kinds: values
    outside {0, 1} or [0, 1], a card's "2 copies" bit without its ">= 1" bit, one-hot blocks
    with no entry or several. Empty when the observations are well formed."""
    obs = np.atleast_2d(obs)
    b = obs.shape[0]
    found = []
    for f in OBS_FIELDS:
        part = obs[:, f.slice]
        if f.kind is Kind.SCALAR:
            if not ((part >= 0) & (part <= 1)).all():
                found.append(f"{f.name}: a value outside [0, 1]")
            continue
        if not ((part == 0) | (part == 1)).all():
            found.append(f"{f.name}: a value other than 0 and 1")
            continue
        blocks = part.reshape(b, f.groups, f.width)
        if f.kind is Kind.CARDS:
            pairs = blocks.reshape(b, f.groups, NUM_FACES, 2)
            if (pairs[..., 1] > pairs[..., 0]).any():
                found.append(f"{f.name}: a face with 2 copies but not >= 1")
        elif f.kind is Kind.ONE_HOT and not (blocks.sum(-1) == 1).all():
            found.append(f"{f.name}: a block without exactly one entry set")
        elif f.kind is Kind.ONE_HOT_OR_NONE and not (blocks.sum(-1) <= 1).all():
            found.append(f"{f.name}: a block with several entries set")
    return found


def _size_text(f: ObsField) -> str:
    return str(f.width) if f.groups == 1 else f"{f.groups} × {f.width}"


def spec_table() -> str:
    """The layout as a reStructuredText-style table (the AEC env's docstring shows it)."""
    rows = [(f.name, f"{f.start}:{f.stop}", _size_text(f), f.kind.value, f.doc) for f in OBS_FIELDS]
    head = ("field", "indices", "size", "kind", "meaning")
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(5)]
    rule = "  ".join("=" * w for w in widths)

    def line(r: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()

    return "\n".join([rule, line(head), rule, *map(line, rows), rule])


def markdown_table() -> str:
    """The layout as a Markdown table (``docs/observation.md`` holds it, checked by a test)."""
    lines = ["| field | indices | size | kind | meaning |", "|---|---|---|---|---|"]
    for f in OBS_FIELDS:
        lines.append(
            f"| `{f.name}` | {f.start}:{f.stop} | {_size_text(f)} | {f.kind.value} | {f.doc} |"
        )
    lines.append(f"| total | 0:{OBS_DIM} | {OBS_DIM} | | `OBS_DIM` |")
    return "\n".join(lines)


TABLE_BEGIN, TABLE_END = "<!-- observation table: begin -->", "<!-- observation table: end -->"


def with_table(text: str) -> str:
    """``text`` (Markdown) with ``markdown_table()`` between its two table markers."""
    head, rest = text.split(TABLE_BEGIN, 1)
    _, tail = rest.split(TABLE_END, 1)
    return f"{head}{TABLE_BEGIN}\n{markdown_table()}\n{TABLE_END}{tail}"


if __name__ == "__main__":  # python -m guandan_env.encoding.obs_layout docs/observation.md
    import sys
    from pathlib import Path

    for name in sys.argv[1:]:
        path = Path(name)
        path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
