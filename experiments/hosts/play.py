"""Play Guandan in the terminal against agents.

    python -m experiments.hosts.play --seat 0 --partner heuristic --opponents checkpoint:PATH

You play one seat; the partner and the two opponents are agents built from specs
(``agents.registry.make_agent``: ``random``, ``heuristic``, ``checkpoint:PATH``). On your turn
you see your hand in level order (``*`` marks the ♥ wildcards), the play to beat, the cards
left per seat and your legal plays, numbered; each wildcard reading of the same cards is a
separate numbered choice. Type a number, ``p`` to pass, cards (``S3 C3 H2``) to see the plays
made of exactly those cards, ``l [kind]`` to list plays, ``h`` for help, ``q`` to quit.

Only what your seat may know is shown (RULES.md R-8): other seats' tribute returns are hidden
unless you gave or received them. Card counts are public (R-8.1); a seat down to 10 cards or
fewer is announced.

``--save-replay FILE`` writes the game as a JSON replay (``python -m experiments.hosts.replay FILE``
shows it), also when you quit early.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import guandan_env
from agents.human import (  # noqa: F401  (re-exported for callers of experiments.hosts.play)
    ANNOUNCE_AT,
    HELP,
    KIND_LABEL,
    Choice,
    Console,
    HumanPlayer,
    QuitGame,
    choices_for_cards,
    hand_text,
    list_choices,
    place_text,
    play_label,
    relation_text,
)
from agents.registry import make_agent, specs_help
from guandan_env.core import actions as T
from guandan_env.core.cards import RANK_TEXT, face_text, format_cards
from guandan_env.encoding.events import DealEnded, DealStarted, Played, Returned
from guandan_env.envs.aec import AGENTS
from guandan_env.envs.replay import ReplayRecorder


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
        self, seat: int, action: int, level: int, cards_before: int, events_before: int
    ) -> None:
        """Narrate the events the step added (the move, then maybe the deal's end and the
        next deal's start: in a match the env starts the next deal within the same step)."""
        raw = self.rec.unwrapped
        for event in raw.events[events_before:]:
            if isinstance(event, DealEnded):
                self._deal_end(self.rec.deals[-1])
            elif isinstance(event, DealStarted):
                self.deal_start()
            else:
                self.console.say(f"  {self.labels[seat]}: {self._move(event)}")
                kind = int(T.KIND[action])
                if kind not in (T.PASS, T.RETURN) and cards_before == int(T.SIZE[action]):
                    who = "You are" if seat == self.seat else f"{self.labels[seat]} is"
                    self.console.say(f"  ** {who} out of cards **")
        if not raw.game.deal_over:
            self._announce()

    def _move(self, event: Played | Returned) -> str:
        if isinstance(event, Played):
            cards = f"[{format_cards(event.faces)}]" if event.faces else ""
            return f"{play_label(event.action, event.level)} {cards}".strip()
        to = f" to {self.labels[event.to]}"
        if event.visible_to(self.seat):
            return f"returns {format_cards([event.face])}{to}"
        return f"returns a card{to} (hidden, R-8.2)"

    def _deal_end(self, d: dict) -> None:
        o = d["order"]
        if d["double_down"]:  # the two losers are both last
            order = (
                f"1st {self.labels[o[0]]}, 2nd {self.labels[o[1]]}, both last "
                f"{self.labels[o[2]]} and {self.labels[o[3]]}"
            )
        else:
            order = ", ".join(f"{place_text(i)} {self.labels[s]}" for i, s in enumerate(o))
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


# ---------------------------------------------------------------------- main
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m experiments.hosts.play",
        description="Play Guandan in the terminal against agents.",
        epilog=specs_help(),
    )
    p.add_argument("--seat", type=int, default=0, choices=range(4), help="your seat (0-3)")
    p.add_argument(
        "--partner",
        default=None,
        metavar="SPEC",
        help="partner agent spec (default: the strongest shipped model, python -m agents.zoo list)",
    )
    p.add_argument(
        "--opponents", default=None, metavar="SPEC", help="opponents' spec (default: as --partner)"
    )
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
    from agents.zoo import default_opponent

    args.partner = args.partner or default_opponent()
    args.opponents = args.opponents or default_opponent()
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
            labels.append(f"seat {s} ({relation_text(s, human)}, {name})")
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
            events_before = len(rec.unwrapped.events)
            cards_before = int(rec.unwrapped.game.hands[s].sum())
            level = rec.unwrapped.game.level
            try:
                rec.step(a)
            except (ValueError, AssertionError) as e:
                console.say(f"error: {labels[s]} chose an illegal action {a!r}: {e}")
                code = 1
                break
            narrator.after_step(s, int(a), level, cards_before, events_before)
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
                    f"Replay saved to {path} (show it: python -m experiments.hosts.replay {path})."
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
