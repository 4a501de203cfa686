"""``python -m experiments.web [--host 127.0.0.1] [--port 8765] [--out runs/web]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.web", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="interface (default: this machine only)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--out", default="runs/web", help="replays and human results go here")
    p.add_argument("--delay", type=float, default=0.4, help="seconds between agent moves")
    args = p.parse_args(argv)
    if not 0 <= args.port < 65536 or args.delay < 0:
        p.error("--port must be in 0..65535 and --delay >= 0")
    import uvicorn

    from .app import create_app

    app = create_app(Path(args.out), args.delay)
    print(f"web table: http://{args.host}:{args.port}/  (Ctrl-C stops)", flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
