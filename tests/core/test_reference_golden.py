"""Golden tests of the slow reference move generator alone (tests/helpers/reference_movegen.py).

Each test cites the RULES.md rule it checks (R-…).  The last group cross-checks the
reference against a second, brute-force derivation written here: enumerate every
sub-multiset of physical cards of a small hand, give every ♥N wildcard every possible
(suit, rank) face, and classify the resulting cards by the R-3 table.  That oracle knows
nothing of keys/windows/placements, so agreement on many small hands checks the
per-type enumeration of the reference.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from helpers.reference_movegen import (
    PASS,
    RANKS,
    SUITS,
    all_plays,
    beats,
    bomb_strength,
    canonical,
    parse_hand,
    reference_moves,
)


def T(kind, key, size, suit=None, ranks=None, wilds=0):
    """Build a canonical tuple from a readable rank dict/str (``"4455"`` -> {4:2, 5:2})."""
    if isinstance(ranks, str):
        ranks = Counter(ranks.split()) if " " in ranks else Counter(ranks)
    ranks = ranks or {}
    return canonical(
        {"kind": kind, "key": key, "size": size, "suit": suit, "ranks": dict(ranks), "wilds": wilds}
    )


def of_kind(moves, kind):
    return {m for m in moves if m[0] == kind}


# ---------------------------------------------------------------------------------------
# card notation
# ---------------------------------------------------------------------------------------
def test_R1_4_parse_hand_notation():
    assert parse_hand("S3 H10 ♥T ♠A BJ RJ rj") == Counter(
        {"S3": 1, "HT": 2, "SA": 1, "BJ": 1, "RJ": 2}
    )
    with pytest.raises(ValueError):
        parse_hand("X3")
    with pytest.raises(ValueError):
        parse_hand("S3 S3 S3")  # only two copies of each face


# ---------------------------------------------------------------------------------------
# Exact move lists of small hands
# ---------------------------------------------------------------------------------------
def test_R3_4_example_level2_exact_set():
    """R-3.4: `S3 D4 C4 S5 D5 H2` at level 2 can be declared three pairs 33-44-55."""
    got = reference_moves("S3 D4 C4 S5 D5 H2", "2")
    want = {
        T("single", "3", 1, ranks="3"),
        T("single", "4", 1, ranks="4"),
        T("single", "5", 1, ranks="5"),
        T("single", "2", 1, wilds=1),
        T("pair", "4", 2, ranks="44"),
        T("pair", "5", 2, ranks="55"),
        T("pair", "3", 2, ranks="3", wilds=1),
        T("pair", "4", 2, ranks="4", wilds=1),
        T("pair", "5", 2, ranks="5", wilds=1),
        T("triple", "4", 3, ranks="44", wilds=1),
        T("triple", "5", 3, ranks="55", wilds=1),
        T("full_house", "4", 5, ranks="4455", wilds=1),
        T("full_house", "5", 5, ranks="4455", wilds=1),
        T("three_pairs", "5", 6, ranks="34455", wilds=1),
    }
    assert got == want


def test_R3_4_example_level3_three_pairs():
    """R-3.4: at level 3, `S4 D5 C5 S6 D6 H3` declared as three pairs 44-55-66."""
    got = reference_moves("S4 D5 C5 S6 D6 H3", "3")
    assert of_kind(got, "three_pairs") == {T("three_pairs", "6", 6, ranks="45566", wilds=1)}


def test_R2_3_tiny_hands_exact():
    """R-2.3: ♥N alone is a plain level card; ♥N with a non-joker takes its rank."""
    assert reference_moves("S3 H2", "2") == {
        T("single", "3", 1, ranks="3"),
        T("single", "2", 1, wilds=1),
        T("pair", "3", 2, ranks="3", wilds=1),
    }
    # two ♥5 + a ♠5 at level 5
    assert reference_moves("H5 H5 S5", "5") == {
        T("single", "5", 1, ranks="5"),
        T("single", "5", 1, wilds=1),
        T("pair", "5", 2, ranks="5", wilds=1),
        T("pair", "5", 2, wilds=2),
        T("triple", "5", 3, ranks="5", wilds=2),
    }


def test_R2_3_two_wildcards_as_pair_are_level_pair_only():
    """R-2.3: two ♥N played as a pair are a plain pair of level cards (no other rank)."""
    got = reference_moves("H9 H9", "9")
    assert got == {T("single", "9", 1, wilds=1), T("pair", "9", 2, wilds=2)}


def test_R2_3_wildcard_never_a_joker():
    """R-2.3 / R-3 table: ♥N never stands for a joker; four jokers use no wildcard."""
    got = reference_moves("BJ RJ RJ H2 H2", "2")
    assert not of_kind(got, "four_jokers")
    assert T("pair", "BJ", 2, ranks={"BJ": 1}, wilds=1) not in got
    assert of_kind(got, "pair") == {T("pair", "RJ", 2, ranks={"RJ": 2}), T("pair", "2", 2, wilds=2)}
    # a 5-card play: triple from two wilds needs a non-joker natural
    assert not of_kind(got, "triple") and not of_kind(got, "full_house")


def test_R2_3_wild_in_three_card_combination():
    """R-2.3/R-3.4: inside 3+ cards each ♥N stands for any non-joker card."""
    got = reference_moves("S7 H2 H2", "2")
    assert T("triple", "7", 3, ranks="7", wilds=2) in got


def test_R3_jokers_pairs_and_four_jokers():
    """R-3 table: BJ BJ and RJ RJ are pairs, BJ+RJ is not; four jokers."""
    assert reference_moves("BJ BJ RJ RJ", "7") == {
        T("single", "BJ", 1, ranks={"BJ": 1}),
        T("single", "RJ", 1, ranks={"RJ": 1}),
        T("pair", "BJ", 2, ranks={"BJ": 2}),
        T("pair", "RJ", 2, ranks={"RJ": 2}),
        T("four_jokers", None, 4, ranks={"BJ": 2, "RJ": 2}),
    }
    assert not of_kind(reference_moves("BJ RJ", "7"), "pair")


# ---------------------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------------------
def test_R3_2_five_natural_of_a_rank_is_bomb_not_full_house():
    got = reference_moves("SK CK DK HK SK", "2")
    assert T("bomb", "K", 5, ranks="KKKKK") in got
    assert not of_kind(got, "full_house")


def test_R3_2_rules_example_level_9_bomb_or_full_house():
    """RULES.md R-3.2: at level 9, `S9 C9 D9 H9 H9` (the ♥9s are wildcards) may be declared as
    the bomb 99999 or as the full house 999 + a wildcard pair; both engines agree."""
    got = reference_moves("S9 C9 D9 H9 H9", "9")
    assert of_kind(got, "full_house") == {T("full_house", "9", 5, ranks="999", wilds=2)}
    assert T("bomb", "9", 5, ranks="999", wilds=2) in got
    from guandan_env import describe_action, legal_actions

    kinds = {
        (describe_action(a, "9")["kind"], describe_action(a, "9")["size"])
        for a in legal_actions("S9 C9 D9 H9 H9", "9")
    }
    assert ("full_house", 5) in kinds and ("bomb", 5) in kinds


def test_R3_2_wild_pair_allows_full_house_or_bomb():
    """Brief example: `SK CK DK H2 H2` at level 2 is one FH action and one 5-card bomb."""
    got = reference_moves("SK CK DK H2 H2", "2")
    assert of_kind(got, "full_house") == {T("full_house", "K", 5, ranks="KKK", wilds=2)}
    assert T("bomb", "K", 5, ranks="KKK", wilds=2) in got
    # four natural K + one wild: never a full house (the pair would be K too)
    got = reference_moves("SK CK DK HK H2", "2")
    assert not of_kind(got, "full_house")


def test_R3_full_house_with_joker_pair_and_level_triple():
    """R-3 table: the pair may be a joker pair; triple/pair of different ranks."""
    got = reference_moves("S4 C4 D4 BJ BJ", "9")
    assert of_kind(got, "full_house") == {T("full_house", "4", 5, ranks={"4": 3, "BJ": 2})}
    # triple of level cards + wild pair standing for some other rank
    got = reference_moves("S9 C9 D9 H9 H9", "9")
    assert T("full_house", "9", 5, ranks="999", wilds=2) in got
    assert T("bomb", "9", 5, ranks="999", wilds=2) in got


def test_R3_3_natural_five_of_one_suit_is_straight_flush_only():
    got = reference_moves("HT HJ HQ HK HA", "2")
    assert of_kind(got, "straight_flush") == {T("straight_flush", "A", 5, "H", ranks="TJQKA")}
    assert not of_kind(got, "straight")
    # with another suit's ace the same ranks can form a plain straight
    got = reference_moves("HT HJ HQ HK HA DA", "2")
    assert T("straight", "A", 5, ranks="TJQKA") in got


def test_R3_3_example_level_A():
    """R-3.3: at level A, `HT HJ HQ HK HA`: straight or straight flush, 10-to-A or 9-to-K."""
    got = reference_moves("HT HJ HQ HK HA", "A")
    seqs = of_kind(got, "straight") | of_kind(got, "straight_flush")
    assert seqs == {
        T("straight", "A", 5, ranks="TJQK", wilds=1),
        T("straight", "K", 5, ranks="TJQK", wilds=1),
        T("straight_flush", "A", 5, "H", ranks="TJQK", wilds=1),
        T("straight_flush", "K", 5, "H", ranks="TJQK", wilds=1),
    }


def test_R3_3_level_heart_is_a_wildcard_even_in_its_natural_place():
    """At level 5 the ♥5 is a wildcard, so S3 S4 H5 S6 S7 is a plain straight only with it
    counted as the wild; the spade-only reading (consuming the S5) is a straight flush."""
    got = reference_moves("S3 S4 S5 H5 S6 S7", "5")
    assert T("straight", "7", 5, ranks="3467", wilds=1) in got
    assert T("straight", "7", 5, ranks="34567") not in got
    assert T("straight_flush", "7", 5, "S", ranks="34567") in got
    assert T("straight_flush", "7", 5, "S", ranks="3467", wilds=1) in got
    # hearts straight flush through rank 5 at level 5 must use a wildcard for the 5
    got = reference_moves("H3 H4 H5 H6 H7", "5")
    assert of_kind(got, "straight_flush") >= {
        T("straight_flush", "7", 5, "H", ranks="3467", wilds=1)
    }
    assert T("straight_flush", "7", 5, "H", ranks="34567") not in got


def test_R3_4_wildcard_placements_are_distinct_actions():
    """DESIGN/R-3.4: wild standing for the 5 vs the 6 consumes different naturals."""
    got = reference_moves("S3 D4 S5 C6 D7 H2", "2")
    straights = of_kind(got, "straight")
    for r in "34567":
        kept = "34567".replace(r, "")
        assert T("straight", "7", 5, ranks=kept, wilds=1) in straights
    assert T("straight", "7", 5, ranks="34567") in straights
    assert T("straight", "6", 5, ranks="3456", wilds=1) in straights  # wild as 2
    assert T("straight", "8", 5, ranks="4567", wilds=1) in straights  # wild as 8


def test_R3_4_two_wildcards_fill_a_whole_pair():
    got = reference_moves("S3 D3 S4 D4 H2 H2", "2")
    tp = of_kind(got, "three_pairs")
    assert tp == {
        T("three_pairs", "4", 6, ranks="3344", wilds=2),  # wild pair as 22: 22-33-44
        T("three_pairs", "5", 6, ranks="3344", wilds=2),  # wild pair as 55: 33-44-55
    }


# ---------------------------------------------------------------------------------------
# sequences
# ---------------------------------------------------------------------------------------
def test_R2_5_no_wraparound_and_ace_low():
    assert not of_kind(reference_moves("SQ DK CA S2 D3", "4"), "straight")
    assert of_kind(reference_moves("SA D2 C3 S4 D5", "9"), "straight") == {
        T("straight", "5", 5, ranks="A2345")
    }
    assert of_kind(reference_moves("ST DJ CQ SK DA", "9"), "straight") == {
        T("straight", "A", 5, ranks="TJQKA")
    }
    assert not of_kind(reference_moves("SK DK SA DA S2 D2", "9"), "three_pairs")
    assert of_kind(reference_moves("SA DA S2 D2 S3 D3", "9"), "three_pairs") == {
        T("three_pairs", "3", 6, ranks="AA2233")
    }
    assert of_kind(reference_moves("SQ DQ SK DK SA DA", "9"), "three_pairs") == {
        T("three_pairs", "A", 6, ranks="QQKKAA")
    }
    assert of_kind(reference_moves("SA DA CA S2 D2 C2", "9"), "two_triples") == {
        T("two_triples", "2", 6, ranks="AAA222")
    }
    assert of_kind(reference_moves("SK DK CK SA DA CA", "9"), "two_triples") == {
        T("two_triples", "A", 6, ranks="KKKAAA")
    }
    assert not of_kind(reference_moves("SK DK CK SA DA CA", "9"), "three_pairs")


def test_R2_5_sequences_use_natural_order_for_level_cards():
    """At level 7 the 7s sit at their natural place in sequences."""
    got = reference_moves("S5 D6 C7 S8 D9", "7")
    assert of_kind(got, "straight") == {T("straight", "9", 5, ranks="56789")}


def test_R3_1_no_longer_sequences():
    got = reference_moves("S3 D4 C5 S6 D7 C8", "2")
    assert {m[2] for m in of_kind(got, "straight")} == {5}
    assert {m[1] for m in of_kind(got, "straight")} == {"7", "8"}
    got = reference_moves("S3 D3 S4 D4 S5 D5 S6 D6", "2")
    assert {m[1] for m in of_kind(got, "three_pairs")} == {"5", "6"}
    assert all(m[2] == 6 for m in of_kind(got, "three_pairs"))


# ---------------------------------------------------------------------------------------
# Bomb sizes (R-3 table)
# ---------------------------------------------------------------------------------------
def test_R3_bomb_sizes_and_ten_needs_both_wildcards():
    eight_sevens = " ".join(s + "7" for s in SUITS for _ in range(2))
    got = reference_moves(eight_sevens + " H2 H2", "2")
    sizes = {m[2] for m in of_kind(got, "bomb")}
    assert sizes == set(range(4, 11))
    assert T("bomb", "7", 10, ranks="77777777", wilds=2) in got
    got = reference_moves(eight_sevens + " H2", "2")
    assert max(m[2] for m in of_kind(got, "bomb")) == 9
    # at level 7 the two ♥7 are the wildcards: at most 6 naturals + 2 wilds
    got = reference_moves(eight_sevens, "7")
    assert max(m[2] for m in of_kind(got, "bomb")) == 8
    assert T("bomb", "7", 8, ranks="777777", wilds=2) in got
    # 2 naturals + 2 wildcards is a 4-card bomb
    assert T("bomb", "K", 4, ranks="KK", wilds=2) in reference_moves("SK DK H3 H3", "3")


# ---------------------------------------------------------------------------------------
# Orders: level order, R-4 bomb order, R-5.2 beating
# ---------------------------------------------------------------------------------------
def test_R2_4_level_order():
    single = lambda r: T("single", r, 1, ranks={r: 1})  # noqa: E731
    # at level 2, 2 is above A
    assert beats(single("2"), single("A"), "2")
    assert not beats(single("2"), single("3"), "5")  # non-level 2 lowest
    assert beats(single("5"), single("A"), "5")
    assert beats(single("BJ"), single("5"), "5")
    assert beats(single("RJ"), single("BJ"), "5")
    # ♥N is not higher than other level cards
    wild = T("single", "5", 1, wilds=1)
    assert not beats(wild, single("5"), "5") and not beats(single("5"), wild, "5")
    assert beats(wild, single("A"), "5")
    pair = lambda r: T("pair", r, 2, ranks={r: 2})  # noqa: E731
    assert beats(T("pair", "K", 2, wilds=2), pair("A"), "K")
    assert beats(pair("BJ"), pair("K"), "K") and beats(pair("RJ"), pair("BJ"), "K")
    fh = lambda t, p: T("full_house", t, 5, ranks={t: 3, p: 2})  # noqa: E731
    assert beats(fh("3", "A"), fh("A", "K"), "3")
    assert not beats(fh("A", "RJ"), fh("A", "3"), "9")  # same triple rank: equal


def test_R2_5_sequence_order():
    st = lambda k, r: T("straight", k, 5, ranks=r)  # noqa: E731
    assert beats(st("6", "23456"), st("5", "A2345"), "2")
    assert beats(st("A", "TJQKA"), st("K", "9TJQK"), "K")  # level K: natural order
    assert not beats(st("7", "34567"), st("7", "34567"), "2")
    tp = lambda k, r: T("three_pairs", k, 6, ranks=r)  # noqa: E731
    assert beats(tp("4", "223344"), tp("3", "AA2233"), "2")
    tt = lambda k, r: T("two_triples", k, 6, ranks=r)  # noqa: E731
    assert beats(tt("3", "222333"), tt("2", "AAA222"), "2")


def test_R4_bomb_order_chain():
    lvl = "8"
    chain = [
        T("bomb", "3", 4, ranks="3333"),
        T("bomb", "A", 4, ranks="AAAA"),
        T("bomb", "8", 4, ranks="88", wilds=2),  # level cards beat aces
        T("bomb", "2", 5, ranks="22222"),
        T("bomb", "8", 5, ranks="88888"),
        T("straight_flush", "5", 5, "S", ranks="A2345"),
        T("straight_flush", "A", 5, "D", ranks="TJQKA"),
        T("bomb", "2", 6, ranks="222222"),
        T("bomb", "8", 6, ranks="888888"),
        T("bomb", "2", 7, ranks="2222222"),
        T("bomb", "2", 8, ranks="22222222"),
        T("bomb", "2", 9, ranks="2222222", wilds=2),
        T("bomb", "A", 10, ranks="AAAAAAAA", wilds=2),
        T("four_jokers", None, 4, ranks={"BJ": 2, "RJ": 2}),
    ]
    for i, a in enumerate(chain):
        for j, b in enumerate(chain):
            assert beats(a, b, lvl) == (i > j), (a, b)
    strengths = [bomb_strength(m, lvl) for m in chain]
    assert strengths == sorted(strengths)
    # straight flushes: suits never break ties
    sf_s = T("straight_flush", "9", 5, "S", ranks="56789")
    sf_h = T("straight_flush", "9", 5, "H", ranks="5678", wilds=1)
    assert not beats(sf_s, sf_h, lvl) and not beats(sf_h, sf_s, lvl)
    # any bomb beats any non-bomb; a non-bomb never beats a bomb
    small = T("bomb", "2", 4, ranks="2222")
    for nb in [
        T("single", "RJ", 1, ranks={"RJ": 1}),
        T("straight", "A", 5, ranks="TJQKA"),
        T("two_triples", "A", 6, ranks="KKKAAA"),
    ]:
        assert beats(small, nb, lvl) and not beats(nb, small, lvl)


def test_R5_2_different_kinds_do_not_beat():
    a = T("pair", "A", 2, ranks="AA")
    b = T("single", "3", 1, ranks="3")
    assert not beats(a, b, "2") and not beats(b, a, "2")
    assert not beats(
        T("straight", "A", 5, ranks="TJQKA"), T("full_house", "3", 5, ranks="33344"), "2"
    )


def test_R5_1_R5_2_leading_and_following():
    hand = "S3 D3 SK DK SA BJ S9 C9 D9 H9"
    lead = reference_moves(hand, "2")
    assert PASS not in lead
    last = T("pair", "Q", 2, ranks="QQ")
    follow = reference_moves(hand, "2", last)
    assert PASS in follow
    # at level 2 the 9s are plain (H9 is natural): pairs above Q are KK only, plus bombs
    assert follow - {PASS} == {m for m in lead if m[0] == "bomb"} | {T("pair", "K", 2, ranks="KK")}
    assert T("bomb", "9", 4, ranks="9999") in follow
    # at level 9 (H9 is a wildcard) the 9s are level cards, above the ace
    follow9 = reference_moves(hand, "9", last)
    assert T("pair", "9", 2, ranks="99") in follow9
    assert T("pair", "3", 2, ranks="3", wilds=1) not in follow9
    # nothing beats four jokers: only pass
    assert reference_moves(hand, "2", T("four_jokers", None, 4, ranks={"BJ": 2, "RJ": 2})) == {PASS}


# ---------------------------------------------------------------------------------------
# Cross-check against an independent brute-force oracle on small hands
# ---------------------------------------------------------------------------------------
_SEQ_WINDOWS = {
    # length -> list of (key, ranks) with A low only in the lowest window
    n: [
        (RANKS[hi], [RANKS[i] for i in range(hi - n + 1, hi + 1)])
        for hi in range(n - 2, len(RANKS))
    ]
    for n in (5, 3, 2)
}


def _classify(faces, n_wild, level):
    """All declarations (kind, key, suit) of concrete faces (wilds already assigned)."""
    ranks = Counter(f[1:] if f not in ("BJ", "RJ") else f for f in faces)
    n = len(faces)
    out = set()
    if n == 1:
        out.add(("single", next(iter(ranks)), None))
    if n in (2, 3) and len(ranks) == 1:
        ((r, _),) = ranks.items()
        out.add(("pair" if n == 2 else "triple", r, None))
    if 4 <= n <= 10 and len(ranks) == 1:
        ((r, _),) = ranks.items()
        if r not in ("BJ", "RJ"):
            out.add(("bomb", r, None))
    if n == 4 and ranks == Counter({"BJ": 2, "RJ": 2}) and n_wild == 0:
        out.add(("four_jokers", None, None))
    if n == 5 and sorted(ranks.values()) == [2, 3]:
        t = next(r for r, c in ranks.items() if c == 3)
        out.add(("full_house", t, None))
    for length, per, kind in ((5, 1, "straight"), (3, 2, "three_pairs"), (2, 3, "two_triples")):
        if n != length * per:
            continue
        for key, window in _SEQ_WINDOWS[length]:
            if ranks == Counter({r: per for r in window}):
                if kind == "straight":
                    suits = {f[0] for f in faces}
                    if len(suits) == 1:
                        out.add(("straight_flush", key, next(iter(suits))))
                    if len(suits) > 1 or n_wild > 0:
                        out.add((kind, key, None))
                else:
                    out.add((kind, key, None))
    return out


def _wild_faces(sub):
    """Faces a wildcard may stand for (R-2.3: any non-joker card).  Only for speed, the
    suits tried are cut to those that can matter: a suit only decides a straight flush,
    which needs every card in one suit, so when the naturals are all of one suit s we try
    s and one other suit, otherwise any one suit; all 13 ranks are always tried."""
    suits = {f[0] for f in sub if f not in ("BJ", "RJ")}
    if len(suits) == 1:
        (s,) = suits
        try_suits = [s, next(x for x in SUITS if x != s)]
    else:
        try_suits = ["S"]
    return [s + r for s in try_suits for r in RANKS]


def brute_force_plays(hand: str, level: str) -> set:
    """Every sub-multiset x every wildcard face assignment, classified by the R-3 table."""
    faces = parse_hand(hand)
    wild = "H" + level
    naturals = sorted(f for f, c in faces.items() if f != wild for _ in range(c))
    n_w = faces.get(wild, 0)
    out = set()
    nat_items = sorted(Counter(naturals).items())
    for counts in itertools.product(*[range(c + 1) for _, c in nat_items]):
        sub = [f for (f, _), k in zip(nat_items, counts, strict=True) for _ in range(k)]
        nat_ranks = Counter(f if f in ("BJ", "RJ") else f[1:] for f in sub)
        rank_tuple = tuple(
            sorted(
                nat_ranks.items(),
                key=lambda rc: ("23456789TJQKA" + "XY").index(
                    {"BJ": "X", "RJ": "Y"}.get(rc[0], rc[0])
                ),
            )
        )
        for w in range(n_w + 1):
            size = len(sub) + w
            if size == 0:
                continue
            decls = set()
            if size == 1 and w == 1:
                decls.add(("single", level, None))  # plain level card
            elif size == 2 and w == 2:
                decls.add(("pair", level, None))  # plain level pair
            else:
                for assign in itertools.combinations_with_replacement(_wild_faces(sub), w):
                    decls |= _classify(sub + list(assign), w, level)
            for kind, key, suit in decls:
                out.add((kind, key, size, suit, rank_tuple, w))
    return out


def _narrow_hands(seed, count):
    rng = random.Random(seed)
    hands = []
    for i in range(count):
        level = RANKS[rng.randrange(13)]
        lo = rng.randrange(-1, 10)  # a 4-rank window, ace low allowed
        window = [RANKS[j] for j in range(lo, lo + 4)]
        deck = [s + r for s in SUITS for r in window] * 2 + ["BJ", "RJ"] * 2
        deck = [c for c in deck if c != "H" + level]
        w = i % 3
        size = rng.randint(max(1, w), 9)
        hand = rng.sample(deck, size - w) + ["H" + level] * w
        hands.append((" ".join(hand), level))
    return hands


@pytest.mark.parametrize("seed", range(8))
def test_R3_reference_matches_brute_force_oracle(seed):
    """R-2.3, R-3, R-3.1..R-3.4: reference == brute force over physical cards."""
    for hand, level in _narrow_hands(1000 + seed, 30):
        ref = set(all_plays(hand, level))
        bf = brute_force_plays(hand, level)
        assert ref == bf, (hand, level, sorted(ref - bf, key=str), sorted(bf - ref, key=str))


def test_R3_reference_matches_brute_force_fixed_hands():
    cases = [
        ("HT HJ HQ HK HA", "A"),
        ("S3 S4 S5 H5 S6 S7", "5"),
        ("SK CK DK H2 H2", "2"),
        ("S3 D4 C4 S5 D5 H2", "2"),
        ("SA D2 C3 S4 H6 H6", "6"),
        ("S9 C9 D9 H9 H9 BJ BJ", "9"),
        ("SA DA CA S2 H3 H3", "3"),
        ("SQ DQ SK DK H4 H4", "4"),
    ]
    for hand, level in cases:
        ref = set(all_plays(hand, level))
        bf = brute_force_plays(hand, level)
        assert ref == bf, (hand, level, sorted(ref - bf, key=str), sorted(bf - ref, key=str))
