"""A human player at the terminal, following the agent protocol (``agents.base``).

``HumanPlayer`` shows the seat's hand in level order (``*`` marks the ♥ wildcards), the play to
beat, the cards left per seat and the legal plays, numbered (each wildcard reading of the same
cards is a separate choice), and reads the choice from a ``Console``. Used by
``python -m experiments.hosts.play``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from guandan_env.core import actions as T
from guandan_env.core.cards import (
    RANK_TEXT,
    face_text,
    is_wild,
    level_key,
    parse_card,
    sort_key,
    wildcard_face,
)
from guandan_env.core.choice import choose_cards
from guandan_env.core.phase import Phase
from guandan_env.core.strength import action_sort_key
from guandan_env.core.text import action_text
from guandan_env.encoding.events import DealStarted, current_deal

ANNOUNCE_AT = 10  # a seat with this many cards or fewer is announced
KIND_LABEL = {
    "single": "single",
    "pair": "pair",
    "triple": "triple",
    "full_house": "full house",
    "straight": "straight",
    "three_pairs": "three pairs",
    "two_triples": "two triples",
    "bomb": "bomb",
    "straight_flush": "straight flush",
    "four_jokers": "four jokers",
    "return": "return",
}
KIND_ALIASES = {
    "sf": "straight_flush",
    "flush": "straight_flush",
    "fh": "full_house",
    "full": "full_house",
    "tp": "three_pairs",
    "plate": "two_triples",
}
LIST_HINT = {"straight_flush": "sf", "full_house": "full"}
HELP = """\
Commands on your turn:
  N             play choice number N from the list
  0, p, pass    pass (only when following; the leader of a trick must play, R-5.1)
  S3 C3 H2 ...  show the choices that play exactly these cards (each reading separately)
  l [kind]      list all choices, or one kind: l pair, l full, l straight, l sf (straight
                flush), l bomb (all bombs) ...
  t             show the table again
  log           show this deal's moves so far
  h, ?          this help
  q             quit (the replay is still saved with --save-replay)
Cards: suit S H C D then rank 2-9 T J Q K A (10 accepted), jokers BJ (small) and RJ (big).
A card marked * is a wildcard (the heart of the level rank, R-2.3): it can stand for any
non-joker card in a pair with one other card or in a combination of 3 or more cards."""


class QuitGame(Exception):
    """The human quit (``q``, end of input or Ctrl-C)."""


class Console:
    """Line input and text output; ``stdin=None`` uses ``input()`` (with line editing)."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin
        self.stdout = stdout or sys.stdout

    def say(self, text: str = "") -> None:
        print(text, file=self.stdout, flush=True)

    def ask(self, prompt: str) -> str:
        """One line of input; raises ``QuitGame`` at end of input or on Ctrl-C."""
        try:
            if self.stdin is None:
                return input(prompt)
            print(prompt, end="", file=self.stdout, flush=True)
            line = self.stdin.readline()
        except EOFError:
            self.say()
            raise QuitGame("end of input") from None
        except KeyboardInterrupt:
            self.say()
            raise QuitGame("interrupted") from None
        if line == "":
            self.say()
            raise QuitGame("end of input")
        return line.rstrip("\r\n")


# ---------------------------------------------------------------------- choices
@dataclass
class Choice:
    number: int
    action: int
    cards: str  # physical cards, level order, wildcards marked *
    label: str  # "as three pairs 33-44-55 (H2 as 4)"
    kind: int


def _cards_text(faces: list[int], level: int) -> str:
    out = []
    for f in sorted(faces, key=lambda f: sort_key(f, level)):
        out.append(face_text(f) + ("*" if is_wild(f, level) else ""))
    return " ".join(out)


def hand_text(counts: np.ndarray, level: int) -> str:
    """A hand in level order, ranks separated by two spaces, wildcards marked ``*``."""
    faces = sorted(
        (int(f) for f in np.repeat(np.arange(54), counts)), key=lambda f: sort_key(f, level)
    )
    groups: list[list[str]] = []
    last = None
    for f in faces:
        k = (level_key(f, level), is_wild(f, level))
        if k != last:
            groups.append([])
            last = k
        groups[-1].append(face_text(f) + ("*" if is_wild(f, level) else ""))
    return "  ".join(" ".join(g) for g in groups)


def play_label(action: int, level: int) -> str:
    """Readable declaration: ``three pairs 33-44-55 (H2 as 4)``, ``bomb 5555 (4 cards)``."""
    kind = int(T.KIND[action])
    name = T.KIND_NAMES[kind]
    if kind == T.PASS:
        return "pass"
    if kind == T.RETURN:
        return f"return {face_text(int(T.RETURN_FACE[action]))}"
    text = action_text(action, level)
    body = text[len(name) + 1 :].split(" (")[0]
    wild = face_text(wildcard_face(level))
    if kind == T.BOMB:
        k = RANK_TEXT[level] if int(T.KEY[action]) == T.LEVEL_KEY else RANK_TEXT[int(T.KEY[action])]
        body = f"{k * int(T.SIZE[action])} ({int(T.SIZE[action])} cards)"
    label = f"{KIND_LABEL[name]} {body}"
    stands = [int(r) for r in T.WILD_AT[action] if r >= 0]
    if kind == T.FULL_HOUSE and int(T.PAIR_RANK[action]) < 0:
        label += f" (the two wildcards {wild} {wild} as the pair)"
    elif stands and all(r != T.LEVEL_KEY for r in stands):
        parts = [
            f"{' '.join([wild] * stands.count(r))} as {RANK_TEXT[r]}" for r in dict.fromkeys(stands)
        ]
        label += " (" + ", ".join(parts) + ")"
    return label


def list_choices(mask: np.ndarray, hand: np.ndarray, level: int) -> list[Choice]:
    """The legal actions except pass, sorted by kind and strength, numbered from 1."""
    acts = [int(a) for a in np.flatnonzero(mask) if a != T.PASS_ACTION]
    acts.sort(key=lambda a: action_sort_key(a, level))
    out = []
    for i, a in enumerate(acts, 1):
        faces = choose_cards(hand, level, a)
        out.append(Choice(i, a, _cards_text(faces, level), play_label(a, level), int(T.KIND[a])))
    return out


def choices_for_cards(choices: list[Choice], faces: list[int], level: int) -> list[Choice]:
    """Choices that play exactly these cards (by rank; wildcards count as wildcards; straight
    flushes must match the suit). The engine picks which copy of a face is played."""
    nat = np.zeros(T.NAT.shape[1], dtype=np.int64)
    wilds = 0
    suits = set()
    for f in faces:
        if is_wild(f, level):
            wilds += 1
            continue
        nat[f // 4 if f < 52 else 13 + (f - 52)] += 1
        if f < 52:
            suits.add(f % 4)
    out = []
    for c in choices:
        a = c.action
        if c.kind == T.RETURN:
            if len(faces) == 1 and int(T.RETURN_FACE[a]) == faces[0]:
                out.append(c)
            continue
        if int(T.WILDS[a]) != wilds or not np.array_equal(T.NAT[a].astype(np.int64), nat):
            continue
        if c.kind == T.STRAIGHT_FLUSH and suits != {int(T.SUIT[a])}:
            continue
        out.append(c)
    return out


# ---------------------------------------------------------------------- the human seat
class HumanPlayer:
    """The terminal player; follows the agent protocol (``act(observation, info)``)."""

    name = "human"

    def __init__(self, console: Console, seat: int, labels: list[str], raw_env, list_limit: int):
        self.console = console
        self.seat = seat
        self.labels = labels
        self.raw = raw_env
        self.list_limit = list_limit

    def reset(self, seed: int | None = None) -> None:
        pass

    # ------------------------------------------------------------------ display
    def _table_lines(self, view) -> list[str]:
        g = self.raw.game
        lv = view.level
        mine, theirs = view.levels[self.seat % 2], view.levels[1 - self.seat % 2]
        lt = view.leveling_team
        lt_text = (
            "none yet" if lt is None else ("your team" if lt == self.seat % 2 else "opponents")
        )
        lines = [
            f"== your turn (seat {self.seat}) | deal {g.deal_number} | level {RANK_TEXT[lv]} "
            f"(leveling: {lt_text}) | levels: your team {RANK_TEXT[mine]}, opponents "
            f"{RANK_TEXT[theirs]} ==",
        ]
        counts = []
        for s in range(4):
            n = view.cards_left[s]
            mark = "!" if 0 < n <= ANNOUNCE_AT else ""
            who = f"seat {s} " + relation_text(s, self.seat)
            if s in view.finish_order:
                counts.append(f"{who} out ({place_text(view.finish_order.index(s))})")
            else:
                counts.append(f"{who} {n}{mark}")
        lines.append("Cards left: " + " | ".join(counts))
        if view.phase == Phase.RETURN:
            t = next(t for t in g.tributes if t.receiver == self.seat and t.returned < 0)
            lines.append(
                f"You received {face_text(t.face)} from {self.labels[t.giver]} as tribute: "
                "choose the card to return (rank 2..10 if you hold one, R-7.1)."
            )
        elif view.table_action >= 0:
            cards = _cards_text(
                [int(f) for f in np.repeat(np.arange(54), g.last_cards[view.table_seat])], lv
            )
            lines.append(
                f"Table: {self.labels[view.table_seat]} played "
                f"{play_label(view.table_action, lv)} [{cards}]: beat it or pass."
            )
        else:
            lines.append("You lead: play any combination.")
        lines.append(
            f"Your hand ({int(view.hand.sum())}): {hand_text(view.hand, lv)}"
            f"    (* = wildcard {face_text(wildcard_face(lv))})"
        )
        return lines

    def _choice_lines(self, choices: list[Choice], kinds: set[int] | None = None) -> list[str]:
        shown = [c for c in choices if kinds is None or c.kind in kinds]
        width = max((len(c.cards) for c in shown), default=0)
        return [
            f"  {c.number:3d}) {c.cards}"
            if c.kind == T.RETURN
            else f"  {c.number:3d}) {c.cards:<{width}}  as {c.label}"
            for c in shown
        ]

    def _summary_lines(self, choices: list[Choice]) -> list[str]:
        """Short list: kinds with few choices in full, the others as a count."""
        lines = []
        by_kind: dict[int, list[Choice]] = {}
        for c in choices:
            by_kind.setdefault(c.kind, []).append(c)
        for kind, cs in by_kind.items():
            if len(cs) <= 12:
                lines += self._choice_lines(cs)
            else:
                name = T.KIND_NAMES[kind]
                lines.append(
                    f"  {cs[0].number:3d}-{cs[-1].number}) {len(cs)} {KIND_LABEL[name]} plays: "
                    f"type 'l {LIST_HINT.get(name, name)}' to list them"
                )
        return lines

    def show(self, view, choices: list[Choice], can_pass: bool) -> None:
        lines = self._table_lines(view)
        if len(choices) <= self.list_limit:
            lines += self._choice_lines(choices)
        else:
            lines += self._summary_lines(choices)
        if can_pass:
            lines.append("    0) pass")
        self.console.say("\n".join(lines))

    # ------------------------------------------------------------------ input
    def act(self, observation: dict, info: dict) -> int:
        view = info["view"]
        mask = np.asarray(observation["action_mask"]).astype(bool)
        choices = list_choices(mask, view.hand, view.level)
        can_pass = bool(mask[T.PASS_ACTION])
        say = self.console.say
        if can_pass and not choices:
            table = play_label(view.table_action, view.level)
            say(f"You cannot beat {table} by {self.labels[view.table_seat]}: you pass.")
            return T.PASS_ACTION
        self.show(view, choices, can_pass)
        hint = "number" + (", p = pass" if can_pass else "") + ", cards, l, h = help, q = quit"
        while True:
            text = self.console.ask(f"Your move ({hint}): ").strip()
            low = text.lower()
            if not text:
                continue
            if low in ("q", "quit", "exit"):
                raise QuitGame("quit")
            if low in ("h", "help", "?"):
                say(HELP)
                continue
            if low in ("t", "table"):
                self.show(view, choices, can_pass)
                continue
            if low == "log":
                say("\n".join(self.raw_deal_log()) or "(no moves yet)")
                continue
            if low in ("p", "pass") or low == "0":
                if can_pass:
                    return T.PASS_ACTION
                if view.phase == Phase.RETURN:
                    say("You must return a card now: choose one of the numbers above (R-7.1).")
                else:
                    say("You lead this trick: you must play, passing is not allowed (R-5.1).")
                continue
            if low == "l" or low.startswith("l ") or low.startswith("list"):
                self._list(low.split()[1:], choices)
                continue
            if low.lstrip("-").isdigit():
                n = int(low)
                if 1 <= n <= len(choices):
                    return choices[n - 1].action
                zero = " or 0 to pass" if can_pass else ""
                say(f"There is no choice {n}: type a number from 1 to {len(choices)}{zero}.")
                continue
            self._cards(text, choices, view)

    def raw_deal_log(self) -> list[str]:
        """This deal's moves as the env logs them, as this seat may see them (R-8.2)."""
        deal = current_deal(self.raw.events)
        return [e.text(viewer=self.seat) for e in deal if not isinstance(e, DealStarted)]

    def _list(self, words: list[str], choices: list[Choice]) -> None:
        if not words:
            self.console.say("\n".join(self._choice_lines(choices)))
            return
        want = "".join(words).replace("_", "").replace("-", "")
        want = KIND_ALIASES.get(want, want)
        names = {k: n.replace("_", "") for k, n in enumerate(T.KIND_NAMES)}
        kinds = {k for k, n in names.items() if n == want.replace("_", "")}
        if want in ("bomb", "bombs"):
            kinds = {T.BOMB, T.STRAIGHT_FLUSH, T.FOUR_JOKERS}
        if not kinds:
            kinds = {k for k, n in names.items() if n.startswith(want)}
        if not kinds:
            names = ", ".join(KIND_LABEL[n] for n in T.KIND_NAMES[1:-1])
            self.console.say(f"Unknown kind {' '.join(words)!r}: try one of {names} (or sf, fh).")
            return
        lines = self._choice_lines(choices, kinds)
        self.console.say("\n".join(lines) if lines else "No legal play of that kind.")

    def _cards(self, text: str, choices: list[Choice], view) -> None:
        say = self.console.say
        tokens = text.replace(",", " ").split()
        faces = []
        for tok in tokens:
            try:
                faces.append(parse_card(tok))
            except ValueError:
                say(
                    f"Not understood: {tok!r} is neither a command nor a card. Type a number "
                    "from the list, p to pass, cards such as 'S3 C3', or h for help."
                )
                return
        held = np.zeros(54, dtype=np.int64)
        for f in faces:
            held[f] += 1
        missing = [face_text(int(f)) for f in np.flatnonzero(held > view.hand)]
        if missing:
            say(f"You do not hold {' '.join(missing)} (as many times as typed).")
            return
        found = choices_for_cards(choices, faces, view.level)
        if not found:
            what = "return" if view.phase == Phase.RETURN else "legal play"
            say(f"No {what} uses exactly {' '.join(tokens)} here.")
            return
        say("Plays with exactly these cards (type the number):")
        say("\n".join(self._choice_lines(found)))


def relation_text(seat: int, human: int) -> str:
    if seat == human:
        return "you"
    return "partner" if seat == (human + 2) % 4 else "opponent"


def place_text(i: int) -> str:
    return ("1st", "2nd", "3rd", "last")[i]
