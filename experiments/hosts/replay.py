"""Show a saved replay step by step: ``python -m experiments.hosts.replay FILE``.

Every move is printed as the env logs it (``seat 2: three_pairs 33-44-55 (1 wild) [...]``);
each deal starts with the four hands (a replay shows everything). At the end the replayed
state is checked against the values recorded in the file.

Options: ``--board`` prints the whole table after every move, ``--step`` waits for Enter
after each move (``q`` stops), ``--from N`` starts printing at action N, ``--summary`` prints
only the deal results, ``--no-verify`` skips the final check.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from guandan_env.core.cards import RANK_TEXT
from guandan_env.encoding.events import DealStarted
from guandan_env.envs.replay import (
    Replay,
    ReplayRecorder,
    check_final,
    final_summary,
    load,
    make_replay_env,
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m experiments.hosts.replay",
        description="Show a Guandan JSON replay step by step and check that it reproduces.",
    )
    p.add_argument("file", help="replay file (JSON, from --save-replay or ReplayRecorder)")
    p.add_argument("--board", action="store_true", help="print the full table after each move")
    p.add_argument("--step", action="store_true", help="wait for Enter after each move (q quits)")
    p.add_argument(
        "--from",
        dest="start",
        type=int,
        default=0,
        metavar="N",
        help="print moves from action N on (earlier ones are replayed silently)",
    )
    p.add_argument("--summary", action="store_true", help="print only the deal results")
    p.add_argument("--no-verify", action="store_true", help="do not check the recorded final state")
    return p


def _header(rep: Replay) -> str:
    cfg = rep.config
    mode = cfg.get("mode", "deal")
    extra = f", max_deals {cfg['max_deals']}" if cfg.get("max_deals") else ""
    lines = [
        f"replay: mode {mode}{extra}, seed {rep.seed}, engine seed {rep.game_seed}, "
        f"{len(rep.actions)} actions"
    ]
    if rep.options:
        lines.append(f"scenario: {rep.options}")
    if rep.meta:
        lines.append("meta: " + ", ".join(f"{k}={v}" for k, v in rep.meta.items()))
    return "\n".join(lines)


def _deal_line(d: dict) -> str:
    lv = "/".join(RANK_TEXT[x] for x in d["levels"])
    won = f"; match won by team {d['match_winner']}" if d.get("match_winner") is not None else ""
    dd = " (double down)" if d["double_down"] else ""
    return (
        f"deal at level {RANK_TEXT[d['deal_level']]}: order {d['order']}, team "
        f"{d['winner_team']} +{d['gain']}{dd}; levels {lv}{won}"
    )


def _board(raw) -> str:
    """The env's table rendering without its "recent moves" tail."""
    return raw.render_text().split("\nrecent:")[0]


def _deal_start(raw, event: DealStarted) -> str:
    """A new deal: its tribute lines, then every hand."""
    return "\n".join(["", *event.detail_lines(), _board(raw)])


def show(rep: Replay, args: argparse.Namespace, out: TextIO, inp: TextIO) -> int:
    """Replay ``rep`` printing to ``out``; returns the exit code (0 ok, 1 mismatch)."""
    rec = ReplayRecorder(make_replay_env(rep))
    rec.start(rep.seed, rep.options)
    raw = rec.unwrapped
    print(_header(rep), file=out)
    printed = 0  # events already shown
    if not args.summary and args.start <= 0:
        print(_deal_start(raw, raw.events[0]), file=out)
        printed = len(raw.events)
    for i, a in enumerate(rep.actions):
        if all(rec.terminations.values()) or all(rec.truncations.values()):
            print(f"error: action #{i} ({a}) comes after the game ended", file=out)
            return 1
        deals_before = len(rec.deals)
        try:
            rec.step(a)
        except ValueError as e:
            print(f"error: action #{i} does not reproduce: {e}", file=out)
            return 1
        if args.summary:
            if len(rec.deals) > deals_before:
                print(_deal_line(rec.deals[-1]), file=out)
            continue
        if i < args.start:
            printed = len(raw.events)
            continue
        new = raw.events[printed:]
        printed = len(raw.events)
        for event in new:
            if isinstance(event, DealStarted):  # a new deal began: show its hands
                print(_deal_start(raw, event), file=out)
            else:
                print(f"{i:4d}  {event.text()}", file=out)
        if args.board:
            print(_board(raw), file=out)
        if args.step:
            print("[Enter: next, q: quit] ", end="", file=out, flush=True)
            answer = inp.readline()
            if answer == "" or answer.strip().lower() in ("q", "quit"):
                print("\nstopped", file=out)
                return 0
    if args.no_verify:
        return 0
    try:
        check_final(rep, final_summary(raw.game, rec.deals))
    except ValueError as e:
        print(f"MISMATCH: {e}", file=out)
        return 1
    if rep.final is None:
        print("replay NOT verified: it records no check values", file=out)
    else:
        print("replay verified: final state and inputs match", file=out)
    return 0


def main(
    argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    out = stdout or sys.stdout
    args = _parser().parse_args(argv)
    try:
        rep = load(args.file)
    except (OSError, ValueError) as e:
        print(f"error: cannot read replay: {e}", file=out)
        return 2
    try:
        return show(rep, args, out, stdin or sys.stdin)
    except KeyboardInterrupt:
        print("\ninterrupted", file=out)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
