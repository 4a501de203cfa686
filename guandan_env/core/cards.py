"""Cards, faces and hands (RULES.md R-1).

A *face* is one of the 54 distinct cards; the 108-card deck holds two copies of each
(R-1.2, R-1.3). Faces are numbered rank-major:

    face = rank * 4 + suit      for rank 0..12 (2..A) and suit 0..3 (S H C D)
    52 = BJ (small joker), 53 = RJ (big joker)

*Rank indices* 0..12 are the natural ranks 2..A; 13 and 14 stand for BJ and RJ.
A hand is a ``uint8`` vector of 54 face counts, each 0..2.
"""

from __future__ import annotations

import numpy as np

RANK_TEXT = ("2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "BJ", "RJ")
SUIT_TEXT = ("S", "H", "C", "D")
NUM_FACES = 54
NUM_RANKS = 15  # 13 natural ranks + BJ + RJ
NUM_NATURAL_RANKS = 13
HEARTS = 1
BJ_FACE, RJ_FACE = 52, 53
NUM_NATURAL_FACES = 52  # faces 0..51: 13 natural ranks x 4 suits; the jokers follow
BJ_RANK, RJ_RANK = 13, 14
COPIES = 2
DECK_SIZE = NUM_FACES * COPIES
HAND_SIZE = 27

_SUIT_ALIASES = {"S": 0, "H": 1, "C": 2, "D": 3, "♠": 0, "♥": 1, "♣": 2, "♦": 3}
_RANK_ALIASES = {r: i for i, r in enumerate(RANK_TEXT[:13])}
_RANK_ALIASES["10"] = 8

FACE_RANK = np.array([f // 4 for f in range(NUM_NATURAL_FACES)] + [BJ_RANK, RJ_RANK], dtype=np.int8)
FACE_SUIT = np.array([f % 4 for f in range(NUM_NATURAL_FACES)] + [-1, -1], dtype=np.int8)


def face_text(face: int) -> str:
    """Text of one face, e.g. ``H5``, ``ST``, ``BJ``."""
    if face == BJ_FACE:
        return "BJ"
    if face == RJ_FACE:
        return "RJ"
    if not 0 <= face < NUM_NATURAL_FACES:
        raise ValueError(f"face id {face} out of range 0..53 (R-1.4)")
    return SUIT_TEXT[face % 4] + RANK_TEXT[face // 4]


def parse_card(text: str) -> int:
    """Face id of one card written per R-1.4 (``H5``, ``S10``, ``♥5``, ``BJ``, ``RJ``)."""
    if not isinstance(text, str):
        raise ValueError(
            f"a card must be text like 'H5' or 'BJ', got {text!r} ({type(text).__name__}) (R-1.4)"
        )
    t = text.strip().upper()
    if t in ("BJ", "RJ"):
        return BJ_FACE if t == "BJ" else RJ_FACE
    if len(t) >= 2 and t[0] in _SUIT_ALIASES and t[1:] in _RANK_ALIASES:
        return _RANK_ALIASES[t[1:]] * 4 + _SUIT_ALIASES[t[0]]
    raise ValueError(
        f"malformed card {text!r}: expected suit S/H/C/D (or ♠♥♣♦) then rank 2-9/T/10/J/Q/K/A, "
        "or BJ/RJ (R-1.4)"
    )


def parse_rank(text: str) -> int:
    """Rank index 0..12 of a level rank written ``2``…``A`` (``10`` accepted)."""
    if not isinstance(text, str):
        raise ValueError(
            f"a level must be text '2'..'9', 'T' (or '10'), 'J', 'Q', 'K' or 'A', got {text!r} "
            f"({type(text).__name__}) (R-2.1)"
        )
    t = text.strip().upper()
    if t in _RANK_ALIASES:
        return _RANK_ALIASES[t]
    raise ValueError(
        f"malformed level rank {text!r}: expected one of 2-9, T/10, J, Q, K, A (R-2.1)"
    )


def parse_hand(text: str | list[str] | tuple[str, ...], max_cards: int = HAND_SIZE) -> np.ndarray:
    """Face counts (``uint8[54]``) of a hand given as card text or a list of card strings.

    Raises ``ValueError`` for malformed cards, a third copy of a face (R-1.2/R-1.3) or more
    than ``max_cards`` cards (R-1.2: 27 per seat).
    """
    if isinstance(text, str):
        tokens = text.replace(",", " ").split()
    elif isinstance(text, list | tuple):
        tokens = list(text)
    else:
        raise ValueError(
            "a hand must be card text ('S3 H5 BJ') or a list of card strings, got "
            f"{type(text).__name__} (R-1.4)"
        )
    counts = np.zeros(NUM_FACES, dtype=np.uint8)
    for tok in tokens:
        counts[parse_card(tok)] += 1
    over = np.flatnonzero(counts > COPIES)
    if over.size:
        raise ValueError(
            f"impossible hand: {face_text(int(over[0]))} appears {int(counts[over[0]])} times, "
            f"the deck has {COPIES} copies of each face (R-1.2)"
        )
    if int(counts.sum()) > max_cards:
        raise ValueError(
            f"impossible hand: {int(counts.sum())} cards, a seat holds at most {max_cards} (R-1.2)"
        )
    return counts


def hand_faces(counts: np.ndarray) -> list[int]:
    """Faces of a hand, one entry per physical card, in face order."""
    return [int(f) for f in np.repeat(np.arange(NUM_FACES), counts)]


def level_key(face: int, level: int) -> int:
    """Strength of a face in level order (R-2.4): 2..A (level rank removed), N, BJ, RJ."""
    return _LEVEL_KEYS[level][face]


def level_rank_value(rank: int, level: int) -> int:
    """Level-order value of a rank index (0..14): natural ranks below the level keep their
    index, ranks above shift down by one, the level rank is 12, BJ 13, RJ 14."""
    if rank >= NUM_NATURAL_RANKS:
        return rank
    if rank == level:
        return 12
    return rank - 1 if rank > level else rank


# level_key as a table, level x face (a list of lists: scalar lookups are the common use)
_LEVEL_KEYS: list[list[int]] = [
    [level_rank_value(int(FACE_RANK[f]), lv) for f in range(NUM_FACES)]
    for lv in range(NUM_NATURAL_RANKS)
]


def wildcard_face(level):
    """Face id of ♥N, the wildcard at ``level`` (R-2.3); ``level`` may be an int or an
    integer array (faces are ``rank * 4 + suit``)."""
    return level * 4 + HEARTS


def is_wild(face: int, level: int) -> bool:
    """True for ♥N, the wildcard of the deal (R-2.3)."""
    return face == wildcard_face(level)


def sort_key(face: int, level: int) -> tuple[int, int]:
    """Sort key for displaying a hand in level order, wildcards last among level cards."""
    return (level_key(face, level), 1 if is_wild(face, level) else 0, int(FACE_SUIT[face]))


def format_cards(faces: list[int] | np.ndarray, level: int | None = None) -> str:
    """Card text of faces (a list of face ids), sorted by level order when ``level`` is given."""
    fl = [int(f) for f in faces]
    if level is not None:
        fl.sort(key=lambda f: sort_key(f, level))
    return " ".join(face_text(f) for f in fl)


def format_hand(counts: np.ndarray, level: int | None = None, mark_wild: bool = False) -> str:
    """Text of a hand; with ``mark_wild`` the ♥N wildcards carry a ``*``."""
    faces = hand_faces(counts)
    if level is not None:
        faces.sort(key=lambda f: sort_key(f, level))
    out = []
    for f in faces:
        t = face_text(f)
        if mark_wild and level is not None and is_wild(f, level):
            t += "*"
        out.append(t)
    return " ".join(out)


def full_deck() -> np.ndarray:
    """The 108-card deck as face ids (each face twice)."""
    return np.repeat(np.arange(NUM_FACES, dtype=np.int16), COPIES)
