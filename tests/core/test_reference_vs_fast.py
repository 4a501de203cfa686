"""Compare the fast, table-driven move generator with the slow reference (RULES.md R-2..R-5).

Only the public contract of ``guandan_env`` is used: ``NUM_ACTIONS``, ``legal_actions``,
``describe_action`` and ``cards_for_action``.  The reference (tests/helpers/reference_movegen.py)
is written from RULES.md alone, so any difference is a bug on one side.

Random hands are drawn (seeded, own RNG) from the 108-card deck with sizes 1..27 (a quarter
of them full 27-card hands), the number of ♥N wildcards forced to 0, 1 and 2 in equal shares,
at all 13 levels: 13 levels x 400 hands = 5,200 hands.  For each hand we compare the leading
move set and two following sets: after a random legal lead of another random hand, and
after a uniformly random play id from the action table.
"""

from __future__ import annotations

import functools
import random
from collections import Counter

import pytest

from helpers.reference_movegen import (
    PASS,
    PLAY_KINDS,
    RANKS,
    SUITS,
    canonical,
    parse_hand,
    reference_moves,
)

g = pytest.importorskip("guandan_env")
_CONTRACT = ("NUM_ACTIONS", "legal_actions", "describe_action", "cards_for_action")
if not all(hasattr(g, name) for name in _CONTRACT):
    pytest.skip(
        "guandan_env does not expose the move-generator contract yet", allow_module_level=True
    )

LEVELS = list(RANKS)
DECK = [s + r for s in SUITS for r in RANKS] * 2 + ["BJ", "RJ"] * 2
HANDS_PER_LEVEL = 400
MAX_REPORTED = 6


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
@functools.cache
def fast_canon(action: int, level: str) -> tuple:
    return canonical(g.describe_action(int(action), level))


@functools.cache
def play_ids() -> tuple:
    """All ids whose kind is a play kind (no pass, no tribute return), scanned once."""
    return tuple(a for a in range(g.NUM_ACTIONS) if g.describe_action(a, "2")["kind"] in PLAY_KINDS)


def random_hand(rng: random.Random, level: str, n_wild: int, size: int) -> str:
    """A hand of ``size`` cards from the 108-card deck holding exactly ``n_wild`` ♥N."""
    wild = "H" + level
    size = max(size, n_wild)
    rest = [c for c in DECK if c != wild]
    cards = rng.sample(rest, size - n_wild) + [wild] * n_wild
    rng.shuffle(cards)
    return " ".join(cards)


def random_size(rng: random.Random) -> int:
    return 27 if rng.random() < 0.25 else rng.randint(1, 26)


def fast_moves(hand: str, level: str, last: int | None) -> tuple[set, list]:
    ids = [int(a) for a in g.legal_actions(hand, level, last)]
    return {fast_canon(a, level) for a in ids}, ids


def compare(hand: str, level: str, last_id: int | None) -> str | None:
    """None when both generators agree, else a readable report."""
    last = None if last_id is None else fast_canon(last_id, level)
    ref = reference_moves(hand, level, last)
    fast, ids = fast_moves(hand, level, last_id)
    problems = []
    if len(ids) != len(set(ids)):
        problems.append(f"duplicate ids {sorted(a for a, n in Counter(ids).items() if n > 1)}")
    if len(fast) != len(set(ids)):
        dup = Counter(fast_canon(a, level) for a in set(ids))
        problems.append(f"ids sharing one canonical action {[m for m, n in dup.items() if n > 1]}")
    if ref != fast:
        only_ref = sorted(ref - fast, key=str)
        only_fast = sorted(fast - ref, key=str)
        problems.append(
            f"only in reference ({len(only_ref)}): {only_ref[:12]}\n"
            f"    only in fast ({len(only_fast)}): {only_fast[:12]}"
        )
    if not problems:
        return None
    return f"hand={hand!r} level={level!r} last={last!r} (id {last_id})\n    " + "\n    ".join(
        problems
    )


def _level_cases(level: str):
    """Deterministic hands for one level: (hand, lead-of-another-hand id, random table id)."""
    rng = random.Random(7919 * (LEVELS.index(level) + 1))
    ids = play_ids()
    cases = []
    for i in range(HANDS_PER_LEVEL):
        hand = random_hand(rng, level, i % 3, random_size(rng))
        other = random_hand(rng, level, rng.randrange(3), random_size(rng))
        other_leads = [int(a) for a in g.legal_actions(other, level, None)]
        lead_id = rng.choice(other_leads) if other_leads else None
        table_id = ids[rng.randrange(len(ids))]
        cases.append((hand, lead_id, table_id))
    return cases


def _fail(failures: list, total: int, what: str):
    if failures:
        shown = "\n".join(failures[:MAX_REPORTED])
        pytest.fail(
            f"{len(failures)} of {total} {what} differ; first {MAX_REPORTED}:\n{shown}",
            pytrace=False,
        )


# ---------------------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------------------
def test_action_table_play_ids_are_distinct_per_level():
    """One id is one declared combination: no two play ids describe the same tuple."""
    for level in LEVELS:
        seen = {}
        for a in play_ids():
            m = fast_canon(a, level)
            assert m not in seen, (level, m, seen.get(m), a)
            seen[m] = a
    assert PASS in {fast_canon(a, "2") for a in range(g.NUM_ACTIONS)}


@pytest.mark.parametrize("level", LEVELS)
def test_leading_and_following_sets_match_reference(level):
    """R-5.1 leading sets and R-5.2/R-4 following sets equal the reference's."""
    failures, total = [], 0
    for hand, lead_id, table_id in _level_cases(level):
        for last_id in (None, lead_id, table_id):
            total += 1
            report = compare(hand, level, last_id)
            if report:
                failures.append(report)
    _fail(failures, total, f"move sets at level {level}")


def _check_cards(hand: str, level: str, action: int) -> str | None:
    m = fast_canon(action, level)
    kind, key, size, suit, ranks, wilds = m
    try:
        cards = list(g.cards_for_action(hand, level, action))
    except Exception as exc:  # noqa: BLE001
        return f"cards_for_action raised {exc!r} for legal {m}"
    wild = "H" + level
    played = parse_hand(" ".join(cards)) if cards else Counter()
    held = parse_hand(hand)
    errs = []
    if any(played[f] > held[f] for f in played):
        errs.append("not a sub-multiset of the hand")
    if len(cards) != size:
        errs.append(f"{len(cards)} cards for size {size}")
    nat = Counter()
    for f, n in played.items():
        if f != wild:
            nat[f if f in ("BJ", "RJ") else f[1:]] += n
    if played[wild] != wilds:
        errs.append(f"{played[wild]} wildcards, declared {wilds}")
    if dict(nat) != dict(ranks):
        errs.append(f"natural ranks {dict(nat)} != declared {dict(ranks)}")
    naturals = [f for f in played.elements() if f != wild]
    if kind == "straight_flush" and any(f[0] != suit for f in naturals):
        errs.append(f"straight flush in {suit} uses {naturals}")
    if kind == "straight" and wilds == 0 and len({f[0] for f in naturals}) == 1:
        errs.append("plain straight of five natural cards of one suit (R-3.3)")
    if errs:
        return f"hand={hand!r} level={level!r} action {action} {m}: cards {cards}: " + "; ".join(
            errs
        )
    return None


@pytest.mark.parametrize("level", LEVELS)
def test_cards_for_action_consistent(level):
    """The physical cards of legal actions match their declaration (R-2.3, R-3.3)."""
    rng = random.Random(104729 + LEVELS.index(level))
    failures, total = [], 0
    ids = play_ids()
    for i in range(60):
        hand = random_hand(rng, level, i % 3, random_size(rng))
        legal = [int(a) for a in g.legal_actions(hand, level, None)]
        if not legal:
            continue
        # every sequence (where suits matter) plus a random sample of the rest
        seq = [a for a in legal if fast_canon(a, level)[0] in ("straight", "straight_flush")]
        sample = seq + rng.sample(legal, min(12, len(legal)))
        for a in sample:
            total += 1
            err = _check_cards(hand, level, a)
            if err:
                failures.append(err)
        # an action that is not legal for this hand must be refused
        legal_set = set(legal)
        for a in rng.sample(ids, 5):
            if a not in legal_set:
                total += 1
                try:
                    g.cards_for_action(hand, level, a)
                    failures.append(
                        f"hand={hand!r} level={level!r}: cards_for_action "
                        f"accepted illegal {a} {fast_canon(a, level)}"
                    )
                except ValueError:
                    pass
    _fail(failures, total, f"card checks at level {level}")


# ---------------------------------------------------------------------------------------
# structured hands: rule examples and dense hands (many sequences, bombs, jokers)
# ---------------------------------------------------------------------------------------
EDGE_HANDS = [
    ("S3 D4 C4 S5 D5 H2", "2"),  # example
    ("S4 D5 C5 S6 D6 H3", "3"),  # example
    ("HT HJ HQ HK HA", "A"),  # example
    ("HT HJ HQ HK HA", "2"),  # natural flush: SF only
    ("HT HJ HQ HK HA DA", "2"),
    ("S3 S4 S5 H5 S6 S7", "5"),  # ♥N in its natural place
    ("H3 H4 H5 H6 H7 H5", "5"),
    ("SK CK DK H2 H2", "2"),  # FH with wild pair / 5-card bomb
    ("SK CK DK HK H2", "2"),  # never a FH
    ("SK CK DK HK SK", "2"),
    ("S9 C9 D9 H9 H9 BJ BJ", "9"),
    ("BJ BJ RJ RJ", "7"),
    ("BJ RJ RJ H2 H2", "2"),  # wild never a joker
    ("BJ BJ RJ RJ H4 H4 S4 C4 D4 S4 C4 D4", "4"),  # 8-card level bomb, four jokers
    ("S7 H7 C7 D7 S7 H7 C7 D7 H2 H2", "2"),  # 10-card bomb
    ("SA DA CA S2 D2 C2 S3 D3 H3 H3", "3"),
    ("SQ DQ CQ SK DK CK SA DA CA S2 D2", "2"),
    ("SA D2 C3 S4 D5 S6 H6 H6", "6"),
    ("SQ DK CA S2 D3 H9", "9"),  # no wrap-around
    ("H9", "9"),
    ("H9 H9", "9"),
    ("S3 H2", "2"),
    ("BJ", "2"),
]


def _dense_hands(level: str, count: int):
    rng = random.Random(15485863 + LEVELS.index(level))
    out = []
    for i in range(count):
        lo = rng.randrange(-1, 9)  # a 5-rank window, ace low allowed
        window = [RANKS[j] for j in range(lo, lo + 5)]
        deck = [s + r for s in SUITS for r in window] * 2 + ["BJ", "RJ"] * 2
        deck = [c for c in deck if c != "H" + level]
        w = i % 3
        size = rng.randint(max(1, w), 16)
        out.append(" ".join(rng.sample(deck, min(size - w, len(deck))) + ["H" + level] * w))
    return out


@pytest.mark.parametrize("level", LEVELS)
def test_structured_hands_match_reference(level):
    """Rule-example and dense hands; following sets after several of the hand's own plays
    (so equal keys, bombs of every size, straight flushes and four jokers are on the table)."""
    rng = random.Random(2 + LEVELS.index(level))
    hands = [h for h, lv in EDGE_HANDS if lv == level] + _dense_hands(level, 25)
    four_jokers = [a for a in play_ids() if fast_canon(a, level)[0] == "four_jokers"]
    failures, total = [], 0
    for hand in hands:
        leads = sorted(int(a) for a in g.legal_actions(hand, level, None))
        lasts = [None] + rng.sample(leads, min(8, len(leads))) + four_jokers
        for last_id in lasts:
            total += 1
            report = compare(hand, level, last_id)
            if report:
                failures.append(report)
    # the rule examples at other levels are checked at their own level; here check them at
    # this level too (a hand's meaning changes with the wildcard)
    for hand, _ in EDGE_HANDS:
        total += 1
        report = compare(hand, level, None)
        if report:
            failures.append(report)
    _fail(failures, total, f"structured move sets at level {level}")
