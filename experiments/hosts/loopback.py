"""Which addresses a server of ours may bind to without a word: loopback only."""

from __future__ import annotations

import ipaddress
import sys

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost: it may resolve anywhere


def warn_if_exposed(host: str, server: str, exposed: str) -> bool:
    """Print a warning to stderr when ``host`` is not loopback; returns whether it warned."""
    if is_loopback(host):
        return False
    print(
        f"warning: the {server} listens on {host}, reachable from other machines: "
        f"{exposed}. Use it only on a network you trust (docs/security.md).",
        file=sys.stderr,
        flush=True,
    )
    return True
