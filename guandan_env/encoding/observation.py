"""The one observation encoder, used by the AEC env and the batched engine.

Everything a seat may know (RULES.md R-8), relative to the observing seat: relative seat
``k`` is absolute seat ``(seat + k) % 4`` — 0 self, 1 the next seat (opponent), 2 the
partner, 3 the previous seat (opponent). Card sets are 108-wide: for each of the 54 faces
(``cards.py`` order) two bits, "holds ≥ 1 copy" and "holds 2 copies".

``encode`` works on a batch of ``B`` tables (a ``core.table_state.TableState``, arrays with a
leading batch axis): the vector env's path. ``encode_game`` encodes one ``engine.Game`` for
one seat with scalar Python and a handful of numpy calls: the AEC env's path, because at
``B = 1`` the ~45 numpy calls of ``encode`` cost ~75 µs against ~12 µs. Both fill the one
layout, declared field by field in ``obs_layout`` (``OBS_FIELDS``: kind, blocks, width,
meaning); every offset here is read off it at import. The tests check the two equal at every
decision of random matches, for every seat, and equal to observations frozen before the
declaration existed. Adding a field: ``docs/recipes/observation_feature.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core import actions as T
from ..core.cards import NUM_FACES
from ..core.phase import Phase
from ..core.strength import POWER_SCALE, strength_arrays
from ..core.table_state import TableState
from .obs_layout import (
    CARD_BITS,
    CARD_FIELDS,
    CARD_SETS,
    CARDS_END,
    HOT_COLUMNS,
    HOT_FIELDS,
    MAX_CARDS,
    NUM_CARD_SETS,
    NUM_HOT,
    NUM_KEYS,
    OBS_DIM,
    OBS_FIELD,
    OBS_FIELDS,
    OBS_SLICES,
    hot_base,
    spec_table,
)

if TYPE_CHECKING:
    from ..core.engine import Game

# the layout's names, re-exported: most readers import them from here
__all__ = [
    "CARD_BITS",
    "MAX_CARDS",
    "NUM_KEYS",
    "OBS_DIM",
    "OBS_FIELDS",
    "OBS_SLICES",
    "encode",
    "encode_game",
    "spec_table",
]

_VALUE = np.stack([strength_arrays(lv)[0] for lv in range(13)]).astype(np.int64)  # (13, A)
_POWER = np.stack([strength_arrays(lv)[1] for lv in range(13)])
_KIND = T.KIND.astype(np.int64)
_AR4 = np.arange(4)
_AR2 = np.arange(2)
_S = OBS_SLICES
_SET = CARD_SETS  # card-set field -> its sets among the NUM_CARD_SETS
_H = HOT_COLUMNS  # one-hot field -> its column(s) of ``encode``'s index matrix
_BASE = {f.name: hot_base(f.name) for f in HOT_FIELDS}  # ... and the offset(s) its value adds to
_TRASH = -1  # index used for "nothing to mark": an always-zero column dropped at the end
_BUF_WIDTH = OBS_DIM + 1 + (OBS_DIM + 1) % 2  # the trash column, and an even width (uint16 view)
_BOMB_POWER = OBS_FIELD["table_bomb_power"].start


def encode(x: TableState, seat: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Observations ``float32 (B, OBS_DIM)`` of table ``i`` seen from ``seat[i]`` (absolute);
    see ``OBS_FIELDS``. ``x`` is the tables' state (``core.table_state``), read as it is."""
    b = seat.shape[0]
    rows = np.arange(b)[:, None]
    rel = (seat[:, None] + _AR4) % 4  # (B, 4) absolute seat of relative k
    buf = np.zeros((b, _BUF_WIDTH), dtype=bool)  # last column(s): trash
    following = (x.table_action >= 0) & ~x.returning  # a play to beat
    table_cards = x.last_cards[rows[:, 0], np.maximum(x.table_seat, 0)]
    hands = x.hands[rows, rel]  # (B, 4, 54)
    played = x.played[rows, rel]
    counts = np.empty((b, NUM_CARD_SETS, NUM_FACES), dtype=np.uint8)
    counts[:, _SET["hand"]] = hands[:, :1]
    counts[:, _SET["played"]] = played
    unseen = 2 - hands[:, 0] - played[:, 0] - played[:, 1] - played[:, 2] - played[:, 3]
    counts[:, _SET["unseen"]] = unseen[:, None]
    counts[:, _SET["table_cards"]] = (table_cards * following[:, None])[:, None]
    counts[:, _SET["recent_cards"]] = x.last_cards[rows, rel[:, 1:]]
    # bit pair (>= 1 copy, 2 copies) of a count c in 0..2 as one little-endian uint16:
    # c + (c >> 1) * 255 (0 -> 0x0000, 1 -> 0x0001, 2 -> 0x0101); much faster in numpy than
    # comparisons broadcast over a length-2 axis or written with stride 2 (counts are 0..2)
    pairs = buf.view(np.uint16)[:, : CARDS_END // 2]
    flat = counts.reshape(b, NUM_CARD_SETS * NUM_FACES)
    np.copyto(pairs, flat)
    high = flat >> 1
    high *= 255
    pairs += high
    ta = np.where(following, x.table_action, 0)
    team = seat % 2
    # one column per one-hot block: the index of its entry to set (_TRASH: none)
    hot = np.full((b, NUM_HOT), _TRASH, dtype=np.int64)
    hot[:, _H["cards_left"]] = _BASE["cards_left"] + hands.sum(2, dtype=np.uint8)  # <= 28
    hot[:, _H["table_kind"]] = _BASE["table_kind"] + _KIND[ta]
    value = np.where(following, _VALUE[x.level, ta], NUM_KEYS)
    hot[:, _H["table_value"]] = _BASE["table_value"] + value
    hot[:, _H["table_seat"]] = _BASE["table_seat"] + np.where(
        following, (x.table_seat - seat) % 4, 4
    )
    hot[:, _H["recent_moves"]] = _BASE["recent_moves"] + x.move_in_trick[rows, rel[:, 1:]]
    hot[:, _H["deal_level"]] = _BASE["deal_level"] + x.level
    own_other = team[:, None] ^ _AR2  # (B, 2): own team, other team
    hot[:, _H["team_levels"]] = _BASE["team_levels"] + x.levels[rows, own_other]
    hot[:, _H["leveling_team"]] = _BASE["leveling_team"] + np.where(
        x.leveling_team < 0, 2, x.leveling_team != team
    )
    af = np.minimum(x.a_failures[rows, own_other], 2)
    hot[:, _H["a_failures"]] = _BASE["a_failures"] + af
    hot[:, _H["finish_place"]] = _BASE["finish_place"] + x.finish_place[rows, rel]
    hot[:, _H["phase"]] = _BASE["phase"] + np.where(x.returning, 2, following)
    tf = x.tribute_face[rows, rel]
    hot[:, _H["tribute_given"]] = np.where(tf >= 0, _BASE["tribute_given"] + tf, _TRASH)
    own_ret = x.return_face[rows[:, 0], seat]
    hot[:, _H["return_given"]] = np.where(own_ret >= 0, _BASE["return_given"] + own_ret, _TRASH)
    to_me = (x.return_to == seat[:, None]) & (x.return_face >= 0)
    # at most one return reaches a seat (it received at most one tribute)
    hot[:, _H["return_received"]] = np.where(
        to_me.any(1), _BASE["return_received"] + (x.return_face * to_me).sum(1), _TRASH
    )
    buf[rows, hot] = True
    buf[:, _S["tribute_received"]] = x.tribute_received[rows, rel]
    buf[:, _S["returns_made"]] = (x.return_face >= 0)[rows, rel]
    buf[:, _S["resisted"]] = x.resisted[:, None]
    shown = x.resist_jokers[rows, rel]  # (B, 4) rotated
    rj = buf[:, _S["resist_jokers"]].reshape(b, 4, 2)
    rj[..., 0] = shown >= 1
    rj[..., 1] = shown >= 2
    if out is None:
        out = np.empty((b, OBS_DIM), dtype=np.float32)
    out[:] = buf[:, :OBS_DIM].view(np.uint8)  # 0/1; faster than a bool cast
    out[:, _BOMB_POWER] = np.where(following, _POWER[x.level, ta], 0) / POWER_SCALE
    return out


# ---------------------------------------------------------------------------------------------
# One table, one seat (the AEC env's path; same layout as ``encode``)

_BIT_PAIRS = np.array([[0, 0], [1, 0], [1, 1]], dtype=np.float32)  # count 0..2 -> 2 bits
_ZERO_ROW = 12
_TWOS = np.full(NUM_FACES, 2, dtype=np.uint8)  # copies of each face in the two decks


def _card_rows(s: int, t: int) -> list[int]:
    """Rows of ``Game.counts`` (hands 0-3, played 4-7, latest plays 8-11, zeros 12) that form
    the card sets, in ``OBS_FIELDS`` order, for observer seat ``s`` and table row ``t`` (0..3:
    that seat's latest play is on the table; 4: leading, nothing to beat). The unseen set
    takes the zero row and is filled in afterwards."""
    rows = {
        "hand": [s],
        "played": [4 + (s + k) % 4 for k in range(4)],
        "unseen": [_ZERO_ROW],
        "table_cards": [8 + t if t < 4 else _ZERO_ROW],
        "recent_cards": [8 + (s + k) % 4 for k in (1, 2, 3)],
    }
    return [r for f in CARD_FIELDS for r in rows[f.name]]


_CARD_ROWS = np.array([[_card_rows(s, t) for t in range(5)] for s in range(4)], dtype=np.intp)
_UNSEEN_SET = _SET["unseen"].start
_SEEN = sorted({*range(NUM_CARD_SETS)[_SET["hand"]], *range(NUM_CARD_SETS)[_SET["played"]]})
if _SEEN != list(range(_SEEN[0], _SEEN[-1] + 1)):
    raise ValueError("encode_game sums the hand and played sets as one run: keep them adjacent")
_SEEN_SETS = slice(_SEEN[0], _SEEN[-1] + 1)  # own hand and the four played sets

# enum members as module constants: ``Phase.X`` costs ~180 ns a lookup in Python 3.11
_PLAY, _RETURN = Phase.PLAY, Phase.RETURN
_VALUE_L = _VALUE.tolist()
_POWER_L = _POWER.tolist()
_KIND_L = T.KIND.tolist()
_REL = [[(s + k) % 4 for k in range(4)] for s in range(4)]
# offsets as plain ints, read off the declaration once (scalar Python is the point of
# ``encode_game``: a global int is cheaper than a lookup per call)
_O = {f.name: f.start for f in OBS_FIELDS}
_G = {f.name: f.group_starts for f in OBS_FIELDS}
_CL0, _CL1, _CL2, _CL3 = _G["cards_left"]
_RM1, _RM2, _RM3 = _G["recent_moves"]
_FP0, _FP1, _FP2, _FP3 = _G["finish_place"]
_TL_OWN, _TL_OTHER = _G["team_levels"]
_AF_OWN, _AF_OTHER = _G["a_failures"]
_TRIB_GIVEN = _G["tribute_given"]
_TABLE_KIND, _TABLE_VALUE, _TABLE_SEAT = _O["table_kind"], _O["table_value"], _O["table_seat"]
_DEAL_LEVEL, _LEVELING, _PHASE = _O["deal_level"], _O["leveling_team"], _O["phase"]
_TRIB_RECV, _RETURNS_MADE = _O["tribute_received"], _O["returns_made"]
_RETURN_GIVEN, _RETURN_RECV = _O["return_given"], _O["return_received"]
_RESISTED, _RESIST_J = _O["resisted"], _G["resist_jokers"]


def encode_game(g: Game, seat: int) -> np.ndarray:
    """Observation ``float32 (OBS_DIM,)`` of ``seat`` at table ``g``: equal to
    ``encode(table_state([g]), np.array([seat]))[0]``, computed with scalar Python (see the
    module docstring)."""
    following = g.phase == _PLAY and g.table_action >= 0
    sets = g.counts.take(_CARD_ROWS[seat, g.table_seat if following else 4], axis=0)
    unseen = sets[_UNSEEN_SET]
    np.subtract(_TWOS, np.add.reduce(sets[_SEEN_SETS], 0, dtype=np.uint8), out=unseen)
    out = np.zeros(OBS_DIM, dtype=np.float32)
    cards = out[:CARDS_END].reshape(NUM_CARD_SETS, NUM_FACES, 2)
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
        _TL_OWN + g.levels[team],
        _TL_OTHER + g.levels[1 - team],
        _LEVELING + (2 if lt is None else int(lt != team)),
        _AF_OWN + min(af[team], 2),
        _AF_OTHER + min(af[1 - team], 2),
        _PHASE + (2 if g.phase == _RETURN else int(following)),
        *table,
    ]
    for t in g.tributes:  # tribute facts; at most two tributes
        hot.append(_TRIB_GIVEN[(t.giver - seat) % 4] + t.face)
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
            hot.append(_RESIST_J[k])  # ">= 1 shown", then "2 shown"
            if g.resist_jokers.count(s) >= 2:
                hot.append(_RESIST_J[k] + 1)
    out[hot] = 1.0
    return out
