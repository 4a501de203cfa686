"""The one observation encoder, used by the AEC env and the batched engine.

Everything a seat may know (RULES.md R-8), relative to the observing seat: relative seat
``k`` is absolute seat ``(seat + k) % 4`` — 0 self, 1 the next seat (opponent), 2 the
partner, 3 the previous seat (opponent). Card sets are 108-wide: for each of the 54 faces
(``cards.py`` order) two bits, "holds ≥ 1 copy" and "holds 2 copies".

``encode`` works on a batch of ``B`` tables (a ``core.table_state.TableState``, arrays with a
leading batch axis): the vector env's path. ``encode_game`` encodes one ``engine.Game`` for
one seat with scalar Python and a handful of numpy calls: the AEC env's path, because at
``B = 1`` the ~45 numpy calls of ``encode`` cost ~75 µs against ~12 µs. Both fill the one
layout below; the tests check them equal at every decision of random matches, for every
seat.
``OBS_SLICES`` names every slice; ``OBS_DIM`` is the total. The table in ``spec_table()`` is
what the env docstring shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core import actions as T
from ..core.cards import NUM_FACES
from ..core.phase import Phase
from ..core.strength import POWER_SCALE, strength_arrays
from ..core.table_state import TableState

if TYPE_CHECKING:
    from ..core.engine import Game

CARD_BITS = 2 * NUM_FACES  # 108
MAX_CARDS = 28  # a tribute receiver holds 28 cards until it returns one
NUM_KEYS = 16  # level-order values 0..15 (sequences: natural highest rank)

OBS_FIELDS: list[tuple[str, int, str]] = [
    # card sets (108 bits each), contiguous so one comparison writes them all
    ("hand", CARD_BITS, "own hand over the 108 physical cards"),
    ("played", 4 * CARD_BITS, "cards played so far this deal by relative seats 0..3"),
    ("unseen", CARD_BITS, "cards neither in own hand nor played (held by the others)"),
    ("table_cards", CARD_BITS, "cards of the play to beat (all 0 when leading)"),
    ("recent_cards", 3 * CARD_BITS, "cards of relative seats 1..3's latest play this deal"),
    # one-hot categorical facts
    ("cards_left", 4 * (MAX_CARDS + 1), "one-hot cards held (0..28) per relative seat"),
    ("table_kind", len(T.KIND_NAMES), "kind of the play to beat; index 0 (pass) = leading"),
    ("table_value", NUM_KEYS + 1, "comparison value of the play to beat (level order); 16 = none"),
    ("table_seat", 5, "relative seat that made the play to beat; index 4 = leading"),
    ("recent_moves", 3 * 3, "for relative seats 1..3: no move yet / passed / played, this trick"),
    ("deal_level", 13, "one-hot rank of the deal's level (2..A)"),
    ("team_levels", 2 * 13, "own team's level, then the other team's (one-hot)"),
    ("leveling_team", 3, "leveling team: own / other / none (a match's first deal)"),
    ("a_failures", 2 * 3, "A-failures (0..2) of own team, then the other (one-hot)"),
    ("finish_place", 4 * 5, "per relative seat: still playing / 1st / 2nd / 3rd / 4th"),
    ("phase", 3, "this decision: lead / follow / tribute return"),
    # tribute
    ("tribute_given", 4 * NUM_FACES, "face each relative seat gave as tribute (public, R-8.2)"),
    ("tribute_received", 4, "relative seats that received a tribute"),
    ("return_given", NUM_FACES, "face this seat returned (seen by the two seats, R-8.2)"),
    ("return_received", NUM_FACES, "face returned to this seat"),
    ("returns_made", 4, "relative seats that have returned a card (public)"),
    ("resisted", 1, "tribute resisted this deal (R-7.3)"),
    ("resist_jokers", 4 * 2, "big jokers shown to resist, per relative seat (>= 1, 2; R-8.2)"),
    # scalar
    ("table_bomb_power", 1, "bomb power of the play to beat / 160 (0 if not a bomb)"),
]
OBS_SLICES: dict[str, slice] = {}
_o = 0
for _name, _size, _ in OBS_FIELDS:
    OBS_SLICES[_name] = slice(_o, _o + _size)
    _o += _size
OBS_DIM: int = _o
del _o


def spec_table() -> str:
    """The observation layout as a reStructuredText-style table."""
    lines = ["=====================  ===========  ============================================"]
    lines.append("slice                  indices      meaning")
    lines.append(lines[0])
    for name, _, desc in OBS_FIELDS:
        s = OBS_SLICES[name]
        lines.append(f"{name:<22} {f'{s.start}:{s.stop}':<12} {desc}")
    lines.append(lines[0])
    return "\n".join(lines)


_VALUE = np.stack([strength_arrays(lv)[0] for lv in range(13)]).astype(np.int64)  # (13, A)
_POWER = np.stack([strength_arrays(lv)[1] for lv in range(13)])
_KIND = T.KIND.astype(np.int64)
_CARD_SETS = 10  # hand, played x4, unseen, table, recent x3
_CARDS_END = OBS_SLICES["recent_cards"].stop
_AR4 = np.arange(4)
_AR2 = np.arange(2)
_S = OBS_SLICES
# fixed offsets of the one-hot groups, relative seats expanded
_CL_OFF = _S["cards_left"].start + (MAX_CARDS + 1) * _AR4
_RM_OFF = _S["recent_moves"].start + 3 * np.arange(3)
_FP_OFF = _S["finish_place"].start + 5 * _AR4
_TG_OFF = _S["tribute_given"].start + NUM_FACES * _AR4
_TRASH = -1  # index used for "nothing to mark": an always-zero column dropped at the end


def encode(x: TableState, seat: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Observations ``float32 (B, OBS_DIM)`` of table ``i`` seen from ``seat[i]`` (absolute);
    see ``OBS_FIELDS``. ``x`` is the tables' state (``core.table_state``), read as it is."""
    b = seat.shape[0]
    rows = np.arange(b)[:, None]
    rel = (seat[:, None] + _AR4) % 4  # (B, 4) absolute seat of relative k
    buf = np.zeros((b, OBS_DIM + 2), dtype=bool)  # last column: trash; even width (uint16 view)
    following = (x.table_action >= 0) & ~x.returning  # a play to beat
    table_cards = x.last_cards[rows[:, 0], np.maximum(x.table_seat, 0)]
    hands = x.hands[rows, rel]  # (B, 4, 54)
    played = x.played[rows, rel]
    counts = np.empty((b, _CARD_SETS, NUM_FACES), dtype=np.uint8)
    counts[:, 0] = hands[:, 0]
    counts[:, 1:5] = played
    counts[:, 5] = 2 - hands[:, 0] - played[:, 0] - played[:, 1] - played[:, 2] - played[:, 3]
    counts[:, 6] = table_cards * following[:, None]
    counts[:, 7:10] = x.last_cards[rows, rel[:, 1:]]
    # bit pair (>= 1 copy, 2 copies) of a count c in 0..2 as one little-endian uint16:
    # c + (c >> 1) * 255 (0 -> 0x0000, 1 -> 0x0001, 2 -> 0x0101); much faster in numpy than
    # comparisons broadcast over a length-2 axis or written with stride 2 (counts are 0..2)
    pairs = buf.view(np.uint16)[:, : _CARDS_END // 2]
    flat = counts.reshape(b, _CARD_SETS * NUM_FACES)
    np.copyto(pairs, flat)
    high = flat >> 1
    high *= 255
    pairs += high
    ta = np.where(following, x.table_action, 0)
    team = seat % 2
    hot = np.empty((b, 28), dtype=np.int64)
    hot[:, 0:4] = _CL_OFF + hands.sum(2, dtype=np.uint8)  # at most 28 cards
    hot[:, 4] = _S["table_kind"].start + _KIND[ta]
    hot[:, 5] = _S["table_value"].start + np.where(following, _VALUE[x.level, ta], NUM_KEYS)
    hot[:, 6] = _S["table_seat"].start + np.where(following, (x.table_seat - seat) % 4, 4)
    hot[:, 7:10] = _RM_OFF + x.move_in_trick[rows, rel[:, 1:]]
    hot[:, 10] = _S["deal_level"].start + x.level
    own_other = team[:, None] ^ _AR2  # (B, 2): own team, other team
    lv = x.levels[rows, own_other]
    hot[:, 11:13] = _S["team_levels"].start + 13 * np.arange(2) + lv
    hot[:, 13] = _S["leveling_team"].start + np.where(
        x.leveling_team < 0, 2, x.leveling_team != team
    )
    af = np.minimum(x.a_failures[rows, own_other], 2)
    hot[:, 14:16] = _S["a_failures"].start + 3 * np.arange(2) + af
    hot[:, 16:20] = _FP_OFF + x.finish_place[rows, rel]
    hot[:, 20] = _S["phase"].start + np.where(x.returning, 2, following)
    tf = x.tribute_face[rows, rel]
    hot[:, 21:25] = np.where(tf >= 0, _TG_OFF + tf, _TRASH)
    own_ret = x.return_face[rows[:, 0], seat]
    hot[:, 25] = np.where(own_ret >= 0, _S["return_given"].start + own_ret, _TRASH)
    to_me = (x.return_to == seat[:, None]) & (x.return_face >= 0)
    # at most one return reaches a seat (it received at most one tribute)
    hot[:, 26] = np.where(
        to_me.any(1),
        _S["return_received"].start + (x.return_face * to_me).sum(1),
        _TRASH,
    )
    hot[:, 27] = np.where(x.resisted, _S["resisted"].start, _TRASH)
    buf[rows, hot] = True
    buf[:, _S["tribute_received"]] = x.tribute_received[rows, rel]
    buf[:, _S["returns_made"]] = (x.return_face >= 0)[rows, rel]
    shown = x.resist_jokers[rows, rel]  # (B, 4) rotated
    rj = buf[:, _S["resist_jokers"]].reshape(b, 4, 2)
    rj[..., 0] = shown >= 1
    rj[..., 1] = shown >= 2
    if out is None:
        out = np.empty((b, OBS_DIM), dtype=np.float32)
    out[:] = buf[:, :OBS_DIM].view(np.uint8)  # 0/1; faster than a bool cast
    out[:, _S["table_bomb_power"].start] = np.where(following, _POWER[x.level, ta], 0) / POWER_SCALE
    return out


# ---------------------------------------------------------------------------------------------
# One table, one seat (the AEC env's path; same layout as ``encode``)

_BIT_PAIRS = np.array([[0, 0], [1, 0], [1, 1]], dtype=np.float32)  # count 0..2 -> 2 bits
_ZERO_ROW = 12
_TWOS = np.full(NUM_FACES, 2, dtype=np.uint8)  # copies of each face in the two decks
_UNSEEN_SET = 5  # card sets 0..4 are own hand and the four played sets: unseen = 2 - their sum
# rows of ``Game.counts`` (hands 0-3, played 4-7, latest plays 8-11, zeros 12) that form
# the card-set slices, in OBS_FIELDS order, per observer seat and per table row (index 0..3:
# the latest play of that seat is on the table; 4: leading, nothing to beat); the unseen set
# takes the zero row and is filled in afterwards
_CARD_ROWS = np.array(
    [
        [
            [s, 4 + s, 4 + (s + 1) % 4, 4 + (s + 2) % 4, 4 + (s + 3) % 4, _ZERO_ROW]
            + [8 + t if t < 4 else _ZERO_ROW]
            + [8 + (s + k) % 4 for k in (1, 2, 3)]
            for t in range(5)
        ]
        for s in range(4)
    ],
    dtype=np.intp,
)

# enum members as module constants: ``Phase.X`` costs ~180 ns a lookup in Python 3.11
_PLAY, _RETURN = Phase.PLAY, Phase.RETURN
_VALUE_L = _VALUE.tolist()
_POWER_L = _POWER.tolist()
_KIND_L = T.KIND.tolist()
_REL = [[(s + k) % 4 for k in range(4)] for s in range(4)]
# offsets as plain ints (scalar Python is the point of ``encode_game``)
(_CL0, _CL1, _CL2, _CL3) = _CL_OFF.tolist()
(_RM1, _RM2, _RM3) = _RM_OFF.tolist()
(_FP0, _FP1, _FP2, _FP3) = _FP_OFF.tolist()
_TG_L = _TG_OFF.tolist()
_TABLE_KIND = _S["table_kind"].start
_TABLE_VALUE = _S["table_value"].start
_TABLE_SEAT = _S["table_seat"].start
_DEAL_LEVEL = _S["deal_level"].start
_TEAM_LEVELS = _S["team_levels"].start
_LEVELING = _S["leveling_team"].start
_A_FAIL = _S["a_failures"].start
_PHASE = _S["phase"].start
_TRIB_RECV = _S["tribute_received"].start
_RETURNS_MADE = _S["returns_made"].start
_RESIST_J = _S["resist_jokers"].start
_RETURN_GIVEN = _S["return_given"].start
_RETURN_RECV = _S["return_received"].start
_RESISTED = _S["resisted"].start
_BOMB_POWER = _S["table_bomb_power"].start


def encode_game(g: Game, seat: int) -> np.ndarray:
    """Observation ``float32 (OBS_DIM,)`` of ``seat`` at table ``g``: equal to
    ``encode(table_state([g]), np.array([seat]))[0]``, computed with scalar Python (see the
    module docstring)."""
    following = g.phase == _PLAY and g.table_action >= 0
    sets = g.counts.take(_CARD_ROWS[seat, g.table_seat if following else 4], axis=0)
    unseen = sets[_UNSEEN_SET]
    np.subtract(_TWOS, np.add.reduce(sets[:_UNSEEN_SET], 0, dtype=np.uint8), out=unseen)
    out = np.zeros(OBS_DIM, dtype=np.float32)
    cards = out[:_CARDS_END].reshape(_CARD_SETS, NUM_FACES, 2)
    _BIT_PAIRS.take(sets, axis=0, out=cards)
    r0, r1, r2, r3 = _REL[seat]
    left = g.cards_left()
    place = g.finish_places()
    mit = g.move_in_trick
    team = seat & 1
    lt = g.leveling_team
    af = g.a_failures
    if following:
        ta = g.table_action
        table = [
            _TABLE_KIND + _KIND_L[ta],
            _TABLE_VALUE + _VALUE_L[g.level][ta],
            _TABLE_SEAT + (g.table_seat - seat) % 4,
        ]
        out[_BOMB_POWER] = _POWER_L[g.level][ta] / POWER_SCALE
    else:
        table = [_TABLE_KIND, _TABLE_VALUE + NUM_KEYS, _TABLE_SEAT + 4]
    hot = [
        _CL0 + left[r0],
        _CL1 + left[r1],
        _CL2 + left[r2],
        _CL3 + left[r3],
        _RM1 + mit[r1],
        _RM2 + mit[r2],
        _RM3 + mit[r3],
        _FP0 + place[r0],
        _FP1 + place[r1],
        _FP2 + place[r2],
        _FP3 + place[r3],
        _DEAL_LEVEL + g.level,
        _TEAM_LEVELS + g.levels[team],
        _TEAM_LEVELS + 13 + g.levels[1 - team],
        _LEVELING + (2 if lt is None else int(lt != team)),
        _A_FAIL + min(af[team], 2),
        _A_FAIL + 3 + min(af[1 - team], 2),
        _PHASE + (2 if g.phase == _RETURN else int(following)),
        *table,
    ]
    for t in g.tributes:  # tribute facts; at most two tributes
        hot.append(_TG_L[(t.giver - seat) % 4] + t.face)
        hot.append(_TRIB_RECV + (t.receiver - seat) % 4)
        if t.returned >= 0:
            hot.append(_RETURNS_MADE + (t.receiver - seat) % 4)
            if t.receiver == seat:
                hot.append(_RETURN_GIVEN + t.returned)
            elif t.giver == seat:
                hot.append(_RETURN_RECV + t.returned)
    if g.resisted:
        hot.append(_RESISTED)
        for s in set(g.resist_jokers):
            k = (s - seat) % 4
            hot.append(_RESIST_J + 2 * k)
            if g.resist_jokers.count(s) >= 2:
                hot.append(_RESIST_J + 2 * k + 1)
    out[hot] = 1.0
    return out
