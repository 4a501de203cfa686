"""Play Guandan in the terminal against agents.

    python -m experiments.play --seat 0 --partner heuristic --opponents checkpoint:PATH

You play one seat; the partner and the two opponents are agents built from specs
(``agents.registry.make_agent``: ``random``, ``heuristic``, ``checkpoint:PATH``). On your turn
you see your hand in level order (``*`` marks the ♥ wildcards), the play to beat, the cards
left per seat and your legal plays, numbered; each wildcard reading of the same cards is a
separate numbered choice. Type a number, ``p`` to pass, cards (``S3 C3 H2``) to see the plays
made of exactly those cards, ``l [kind]`` to list plays, ``h`` for help, ``q`` to quit.

Only what your seat may know is shown (RULES.md R-8): other seats' tribute returns are hidden
unless you gave or received them. Card counts are public (R-8.1); a seat down to 10 cards or
fewer is announced.

``--save-replay FILE`` writes the game as a JSON replay (``python -m experiments.replay FILE``
shows it), also when you quit early.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import guandan_env
from guandan_env import actions as T
from guandan_env.aec import AGENTS
from guandan_env.api import declaration_text
from guandan_env.cards import (
    RANK_TEXT,
    face_text,
    is_wild,
    level_key,
    level_rank_value,
    parse_card,
    sort_key,
)
from guandan_env.choice import choose_cards
from guandan_env.replay import ReplayRecorder

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
# Listing order: non-bombs by kind, then bombs in bomb order.
_NONBOMB_ORDER = [
    T.SINGLE,
    T.PAIR,
    T.TRIPLE,
    T.FULL_HOUSE,
    T.STRAIGHT,
    T.THREE_PAIRS,
    T.TWO_TRIPLES,
]
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
    text = declaration_text(action, level)
    body = text[len(name) + 1 :].split(" (")[0]
    wild = face_text(level * 4 + 1)
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


def _strength(action: int, level: int) -> tuple:
    kind = int(T.KIND[action])
    key = int(T.KEY[action])
    if kind == T.RETURN:
        f = int(T.RETURN_FACE[action])
        return (0, level_key(f, level), f)
    lv = 12 if key == T.LEVEL_KEY else (key if key < 0 else level_rank_value(key, level))
    seq = kind in T.SEQUENCE_KINDS
    k = key if seq else lv
    if kind in _NONBOMB_ORDER:
        group = _NONBOMB_ORDER.index(kind)
    else:  # bombs in bomb order: 4, 5, straight flush, 6..10, four jokers
        size = int(T.SIZE[action])
        rank = {T.STRAIGHT_FLUSH: 5.5, T.FOUR_JOKERS: 11}.get(kind, size)
        group = 10 + rank
    pr = int(T.PAIR_RANK[action])
    pair = level_rank_value(pr, level) if pr >= 0 else 99  # the two-wildcard pair last
    return (group, k, int(T.WILDS[action]), pair, int(T.SUIT[action]), action)


def list_choices(mask: np.ndarray, hand: np.ndarray, level: int) -> list[Choice]:
    """The legal actions except pass, sorted by kind and strength, numbered from 1."""
    acts = [int(a) for a in np.flatnonzero(mask) if a != T.PASS_ACTION]
    acts.sort(key=lambda a: _strength(a, level))
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
            who = f"seat {s} " + _relation(s, self.seat)
            if s in view.finish_order:
                counts.append(f"{who} out ({_place(view.finish_order.index(s))})")
            else:
                counts.append(f"{who} {n}{mark}")
        lines.append("Cards left: " + " | ".join(counts))
        if view.phase == "return":
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
            f"    (* = wildcard {face_text(lv * 4 + 1)})"
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
                if view.phase == "return":
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
        """This deal's moves as the env logged them, with hidden returns masked (R-8.2)."""
        lines = []
        for line in self.raw.log:
            if line.startswith("deal ") and not line.startswith("deal over"):
                lines = []
                continue
            lines.append(_mask_return(line, self.seat, self.raw.game))
        return lines

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
            what = "return" if view.phase == "return" else "legal play"
            say(f"No {what} uses exactly {' '.join(tokens)} here.")
            return
        say("Plays with exactly these cards (type the number):")
        say("\n".join(self._choice_lines(found)))


def _relation(seat: int, human: int) -> str:
    if seat == human:
        return "you"
    return "partner" if seat == (human + 2) % 4 else "opponent"


def _place(i: int) -> str:
    return ("1st", "2nd", "3rd", "last")[i]


def _mask_return(line: str, seat: int, game) -> str:
    """Hide a return card from seats that neither gave nor received it (R-8.2)."""
    if ": returns " not in line:
        return line
    who = int(line.split(":")[0].split()[1])
    t = next((t for t in game.tributes if t.receiver == who), None)
    if seat == who or (t is not None and t.giver == seat):
        return line
    to = f" to seat {t.giver}" if t is not None else ""
    return f"seat {who}: returns a card{to}"


# ---------------------------------------------------------------------- narration
class Narrator:
    """Prints what the human's seat may see of each move, deal start and deal end."""

    def __init__(self, console: Console, seat: int, labels: list[str], rec: ReplayRecorder):
        self.console = console
        self.seat = seat
        self.labels = labels
        self.rec = rec
        self.announced: set[int] = set()

    def _team(self, team: int | None) -> str:
        if team is None:
            return "none yet"
        return "your team" if team == self.seat % 2 else "the opponents"

    def deal_start(self) -> None:
        g = self.rec.unwrapped.game
        mine, theirs = g.levels[self.seat % 2], g.levels[1 - self.seat % 2]
        lines = [
            "",
            f"===== Deal {g.deal_number} at level {RANK_TEXT[g.level]} (leveling: "
            f"{self._team(g.leveling_team)}); levels: your team {RANK_TEXT[mine]}, opponents "
            f"{RANK_TEXT[theirs]} =====",
        ]
        for t in g.tributes:
            giver, receiver = self.labels[t.giver], self.labels[t.receiver]
            lines.append(f"Tribute: {giver} gives {face_text(t.face)} to {receiver}.")
        if g.resisted:
            who = ", ".join(self.labels[s] for s in sorted(set(g.resist_jokers)))
            lines.append(f"Tribute resisted (R-7.3): {who} show(s) both big jokers.")
        lines.append(f"{self.labels[g.leader]} leads the first trick.")
        lines.append(
            f"Your hand ({int(g.hands[self.seat].sum())}): {hand_text(g.hands[self.seat], g.level)}"
        )
        self.console.say("\n".join(lines))
        self.announced = set()
        self._announce()

    def _announce(self) -> None:
        g = self.rec.unwrapped.game
        for s in range(4):
            n = int(g.hands[s].sum())
            if 0 < n <= ANNOUNCE_AT and s not in self.announced and s != self.seat:
                self.announced.add(s)
                self.console.say(f"  ** {self.labels[s]} announces: {n} cards left **")

    def after_step(
        self, seat: int, action: int, level: int, cards_before: int, log_before: int
    ) -> None:
        """Narrate the log lines the step added (the move, then maybe the deal's end and the
        next deal's start: in a match the env starts the next deal within the same step)."""
        raw = self.rec.unwrapped
        for line in raw.log[log_before:]:
            if line.startswith("deal over"):
                self._deal_end(self.rec.deals[-1])
            elif line.startswith("deal "):
                self.deal_start()
            elif line.startswith("seat "):
                self.console.say(f"  {self.labels[seat]}: {self._move(line, seat, action, level)}")
                kind = int(T.KIND[action])
                if kind not in (T.PASS, T.RETURN) and cards_before == int(T.SIZE[action]):
                    who = "You are" if seat == self.seat else f"{self.labels[seat]} is"
                    self.console.say(f"  ** {who} out of cards **")
        if not raw.game.deal_over:
            self._announce()

    def _move(self, line: str, seat: int, action: int, level: int) -> str:
        rest = line.split(": ", 1)[1]
        if not rest.startswith("returns"):
            cards = rest[rest.index("[") :] if "[" in rest else ""
            return f"{play_label(action, level)} {cards}".strip()
        t = next((t for t in self.rec.unwrapped.game.tributes if t.receiver == seat), None)
        to = f" to {self.labels[t.giver]}" if t is not None else ""
        if self.seat == seat or (t is not None and t.giver == self.seat):
            return f"{rest}{to}"
        return f"returns a card{to} (hidden, R-8.2)"

    def _deal_end(self, d: dict) -> None:
        o = d["order"]
        if d["double_down"]:  # the two losers are both last
            order = (
                f"1st {self.labels[o[0]]}, 2nd {self.labels[o[1]]}, both last "
                f"{self.labels[o[2]]} and {self.labels[o[3]]}"
            )
        else:
            order = ", ".join(f"{_place(i)} {self.labels[s]}" for i, s in enumerate(o))
        mine = RANK_TEXT[d["levels"][self.seat % 2]]
        theirs = RANK_TEXT[d["levels"][1 - self.seat % 2]]
        won = "Your team wins" if d["winner_team"] == self.seat % 2 else "The opponents win"
        dd = " (double down, R-6.2)" if d["double_down"] else ""
        lines = [
            f"----- Deal over: {order}.",
            f"{won} the deal: +{d['gain']} level(s){dd}. Levels: your team {mine}, "
            f"opponents {theirs}.",
        ]
        if d.get("match_winner") is not None:
            who = "Your team" if d["match_winner"] == self.seat % 2 else "The opponents"
            lines.append(f"{who} passed A and won the match!")
        self.console.say("\n".join(lines))


# ---------------------------------------------------------------------- agents
def _builtin_random(seed: int | None):
    from guandan_env.wrappers import UniformRandomPolicy

    return UniformRandomPolicy(seed)


def make_agent(spec: str, seed: int | None):
    """An agent from a spec via ``agents.registry.make_agent``; only if that module does not
    exist (early development) a built-in uniform random agent serves ``random``."""
    try:
        from agents.registry import make_agent as registry_make
    except ModuleNotFoundError as e:
        if e.name not in ("agents.registry", "agents"):
            raise
        if spec != "random":
            raise ValueError(
                f"agent spec {spec!r} needs agents.registry, which is not installed; "
                "only 'random' is available"
            ) from None
        return _builtin_random(seed)
    return registry_make(spec, seed)


# ---------------------------------------------------------------------- main
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m experiments.play",
        description="Play Guandan in the terminal against agents (random, heuristic, "
        "checkpoint:PATH).",
    )
    p.add_argument("--seat", type=int, default=0, choices=range(4), help="your seat (0-3)")
    p.add_argument("--partner", default="heuristic", metavar="SPEC", help="partner agent spec")
    p.add_argument("--opponents", default="heuristic", metavar="SPEC", help="opponents' spec")
    p.add_argument("--seed", type=int, default=None, help="game seed (random when omitted)")
    p.add_argument("--mode", choices=("deal", "match"), default="deal", help="one deal or a match")
    p.add_argument("--max-deals", type=int, default=None, help="cap a match at N deals (R-6.8)")
    p.add_argument(
        "--tribute", action="store_true", help="single deal: draw a previous order (tribute)"
    )
    p.add_argument("--random-levels", action="store_true", help="single deal: random levels")
    p.add_argument("--save-replay", metavar="FILE", help="save the game as a JSON replay")
    p.add_argument(
        "--list-limit",
        type=int,
        default=40,
        help="list every choice when there are at most this many (default 40)",
    )
    return p


def run(args: argparse.Namespace, console: Console) -> int:
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**31)
    config: dict[str, Any] = {"mode": args.mode}
    if args.mode == "match" and args.max_deals is not None:
        config["max_deals"] = args.max_deals
    if args.tribute:
        config["random_tribute"] = True
    if args.random_levels:
        config["random_levels"] = True
    try:
        rec = ReplayRecorder(guandan_env.env(**config))
    except ValueError as e:
        console.say(f"error: {e}")
        return 2
    human = args.seat
    specs = {s: (args.partner if s == (human + 2) % 4 else args.opponents) for s in range(4)}
    agents: dict[int, Any] = {}
    for s in range(4):
        if s == human:
            continue
        try:
            agents[s] = make_agent(specs[s], seed * 4 + s)
        except Exception as e:  # bad spec, missing checkpoint …: a message, not a traceback
            console.say(f"error: cannot make the agent for seat {s} from {specs[s]!r}: {e}")
            return 2
        if hasattr(agents[s], "reset"):
            agents[s].reset(seed * 4 + s)
    labels = []
    for s in range(4):
        if s == human:
            labels.append(f"seat {s} (you)")
        else:
            name = getattr(agents[s], "name", specs[s])
            labels.append(f"seat {s} ({_relation(s, human)}, {name})")
    rec.reset(seed=seed)
    player = HumanPlayer(console, human, labels, rec.unwrapped, args.list_limit)
    narrator = Narrator(console, human, labels, rec)
    console.say(
        f"Guandan: you are seat {human} (team {human % 2}); partner {labels[(human + 2) % 4]}; "
        f"seed {seed}; mode {args.mode}. Type h for help."
    )
    narrator.deal_start()
    code = 0
    try:
        for name in rec.agent_iter():
            obs, _, term, trunc, info = rec.last()
            if term or trunc:
                rec.step(None)
                continue
            s = AGENTS.index(name)
            if s == human:
                a = player.act(obs, info)
            else:
                try:
                    a = agents[s].act(obs, info)
                except Exception as e:  # a broken agent ends the game with a message
                    console.say(f"error: the agent of {labels[s]} failed: {e!r}")
                    code = 1
                    break
            log_before = len(rec.unwrapped.log)
            cards_before = int(rec.unwrapped.game.hands[s].sum())
            level = rec.unwrapped.game.level
            try:
                rec.step(a)
            except (ValueError, AssertionError) as e:
                console.say(f"error: {labels[s]} chose an illegal action {a!r}: {e}")
                code = 1
                break
            narrator.after_step(s, int(a), level, cards_before, log_before)
        else:
            g = rec.unwrapped.game
            if args.mode == "match":
                if g.match_winner is None:
                    console.say(
                        "The match reached its deal cap without a pass of A: a draw (R-6.8)."
                    )
    except QuitGame as e:
        console.say(f"Game abandoned ({e}).")
    except KeyboardInterrupt:
        console.say("\nGame abandoned (interrupted).")
    finally:
        if args.save_replay:
            try:
                path = rec.save(
                    Path(args.save_replay),
                    meta={"human_seat": human, "specs": {**specs, human: "human"}},
                )
                console.say(
                    f"Replay saved to {path} (show it: python -m experiments.replay {path})."
                )
            except OSError as e:
                console.say(f"error: cannot save the replay: {e}")
                code = code or 1
    return code


def main(
    argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    console = Console(stdin, stdout)
    args = _parser().parse_args(argv)
    if args.max_deals is not None and args.max_deals < 1:
        console.say("error: --max-deals must be at least 1")
        return 2
    if args.max_deals is not None and args.mode != "match":
        console.say("note: --max-deals applies to --mode match; playing one deal")
    return run(args, console)


if __name__ == "__main__":
    sys.exit(main())
