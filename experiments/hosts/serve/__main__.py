"""``python -m experiments.hosts.serve`` (the package docstring tells what it does)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.protocol_seat import MAX_TIMEOUTS
from agents.protocol_server import ProtocolServer
from agents.registry import make_agent
from experiments.hosts.loopback import warn_if_exposed
from experiments.hosts.serve import __doc__ as SERVE_DOC
from experiments.hosts.serve.games import REMOTE, check_duplicate, run_games


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.hosts.serve", description=SERVE_DOC.split("\n")[0]
    )
    p.add_argument(
        "--seats",
        default=None,
        help="four comma-separated participants: agent specs or 'remote' (default: remote, then "
        "the strongest shipped model on the other three seats)",
    )
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--mode", choices=("deal", "match"), default="deal")
    p.add_argument(
        "--duplicate", action="store_true", help="play each seed twice, seats moved one on"
    )
    p.add_argument(
        "--trust-remote",
        action="store_true",
        help="allow --duplicate with remote seats (they see each deal twice: trusted clients)",
    )
    p.add_argument(
        "--token", action="store_true", help="a secret per remote seat, sent in the client's URL"
    )
    p.add_argument(
        "--max-timeouts",
        type=int,
        default=MAX_TIMEOUTS,
        help="timeouts in a row before --fallback plays a seat for the rest of the game (0: never)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--random-levels", action="store_true", help="deal mode: random team levels")
    p.add_argument(
        "--random-tribute", action="store_true", help="deal mode: a random previous order (tribute)"
    )
    p.add_argument("--max-deals", type=int, default=None, help="match mode: cap (a draw, R-6.8)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=23456)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds a client has per decision")
    p.add_argument("--wait", type=float, default=600.0, help="seconds to wait for the clients")
    p.add_argument("--fallback", default="heuristic", help="agent that decides for a faulty client")
    p.add_argument("--out", default="results/serve")
    p.add_argument("--save-replays", action="store_true")
    args = p.parse_args(argv)
    if args.seats is None:
        from agents.zoo import default_opponent

        args.seats = ",".join(["remote"] + [default_opponent()] * 3)
    specs = [s.strip() for s in args.seats.split(",")]
    if len(specs) != 4:
        p.error(f"--seats needs four participants, got {len(specs)}: {args.seats!r}")
    if args.games < 1 or args.timeout <= 0 or not 0 <= args.port < 65536 or args.max_timeouts < 0:
        p.error("--games must be >= 1, --timeout > 0, --port in 0..65535, --max-timeouts >= 0")
    try:
        for s in specs + [args.fallback]:
            if s != REMOTE:
                make_agent(s, 0)
        if args.fallback == REMOTE:
            raise ValueError("--fallback must be an agent spec, not 'remote'")
        check_duplicate(specs, args.duplicate, args.trust_remote)
    except ValueError as e:
        p.error(str(e))
    remote = [i for i, s in enumerate(specs) if s == REMOTE]
    if remote:
        warn_if_exposed(args.host, "protocol server", "every remote seat (take it, or play it)")
    server = ProtocolServer(remote, args.host, args.port, args.token) if remote else None
    try:
        if server is not None:
            for i in remote:
                print(f"waiting for client {i}: {server.url(i)}", flush=True)
            server.wait_for_clients(args.wait)
        config = {
            "random_levels": args.random_levels or None,
            "random_tribute": args.random_tribute or None,
            "max_deals": args.max_deals,
        }
        rows = run_games(
            specs,
            server,
            args.games,
            args.seed,
            args.mode,
            args.duplicate,
            config,
            args.timeout,
            args.fallback,
            Path(args.out),
            args.save_replays,
            args.trust_remote,
            args.max_timeouts,
        )
    except TimeoutError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if server is not None:
            server.close()
    faults = sum(len(r["faults"]) for r in rows)
    print(f"{len(rows)} game(s) played, {faults} client fault(s); results in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
