"""``python -m experiments.hosts.web [--host 127.0.0.1] [--port 8765] [--out runs/web]``.

With ``--seat`` (0..3, or ``watch``) a table is set up from the command line too
(``--partner``, ``--opponents``, ``--mode``, ``--random-levels``, ``--random-tribute``) and its
address printed; otherwise choose everything on the page. The page may seat only
``heuristic``, ``random``, the specs of ``--agents`` (and ``--partner``/``--opponents``) and
the saved runs under ``--runs``; it answers only requests for loopback names, the address
bound and ``--allow-host`` names (``docs/security.md``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.hosts.web", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="interface (default: this machine only)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--out", default="runs/web", help="replays and human results go here")
    p.add_argument("--delay", type=float, default=0.4, help="seconds between agent moves")
    p.add_argument("--seat", default=None, help="set up a table: your seat 0..3, or 'watch'")
    p.add_argument(
        "--partner",
        default=None,
        help="agent spec of your partner (default: the strongest shipped model)",
    )
    p.add_argument(
        "--opponents", default=None, help="agent spec of both opponents (default: as --partner)"
    )
    p.add_argument("--mode", choices=("deal", "match"), default="deal")
    p.add_argument("--random-levels", action="store_true")
    p.add_argument("--random-tribute", action="store_true")
    p.add_argument(
        "--agents",
        default="",
        help="comma-separated agent specs the page may seat, e.g. "
        "checkpoint:runs/default (heuristic and random always)",
    )
    p.add_argument("--runs", default="runs", help="the page also offers each saved run here")
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        help="a host name the browser uses to reach a non-loopback --host (repeatable)",
    )
    args = p.parse_args(argv)
    if not 0 <= args.port < 65536 or args.delay < 0:
        p.error("--port must be in 0..65535 and --delay >= 0")
    import uvicorn

    from agents.zoo import default_opponent
    from experiments.hosts.loopback import warn_if_exposed

    from .app import create_app
    from .guard import allowed_hosts, server_config

    args.partner = args.partner or default_opponent()
    args.opponents = args.opponents or default_opponent()
    agents = [a.strip() for a in f"{args.agents},{args.partner},{args.opponents}".split(",")]
    hosts = allowed_hosts(args.host, args.allow_host)
    app = create_app(Path(args.out), args.delay, [a for a in agents if a], Path(args.runs), hosts)
    warn_if_exposed(
        args.host, "web table", "its tables, replays (all four hands) and human results"
    )
    print(f"web table: http://{args.host}:{args.port}/  (Ctrl-C stops)", flush=True)
    if args.seat is not None:
        if args.seat == "watch":
            seats = [args.partner, args.opponents, args.partner, args.opponents]
        elif args.seat in ("0", "1", "2", "3"):
            me = int(args.seat)
            seats = [
                "human" if s == me else (args.partner if s % 2 == me % 2 else args.opponents)
                for s in range(4)
            ]
        else:
            p.error(f"--seat must be 0..3 or 'watch', got {args.seat!r}")
        try:
            table = app.state.hub.open_table(
                seats, args.mode, args.random_levels, args.random_tribute
            )
        except ValueError as e:
            p.error(str(e))
        print(f"your table: http://{args.host}:{args.port}/table/{table.id}", flush=True)
    try:
        uvicorn.Server(server_config(app, args.host, args.port)).run()
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
