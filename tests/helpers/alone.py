"""A pytest plugin, registered by tests/conftest.py.

The suite runs in two xdist workers (pyproject's addopts: ``-n 2 --dist loadfile``, each
test file whole on one worker). A test marked ``alone`` depends on how its processes share
the CPU (an idle runner under SCHED_IDLE, a latency bound): it waits until the other worker's
current test has ended and holds the other worker off until it has ended itself.

Two file locks shared by the workers of one run: every test passes the ``gate`` and holds
``room`` shared; an ``alone`` test keeps the gate and holds the room exclusively, so the
other worker stops at the gate and an alone test never waits behind a stream of others."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_LOCKS: dict[str, int] = {}


def _lock(name: str) -> int | None:
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # shared by the workers of one run
    if run is None:
        return None  # one process: nothing runs beside a test
    if name not in _LOCKS:
        path = Path(tempfile.gettempdir()) / f"guandan-tests-{run}-{name}.lock"
        _LOCKS[name] = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    return _LOCKS[name]


@contextmanager
def _turn(alone: bool) -> Iterator[None]:
    gate, room = _lock("gate"), _lock("room")
    if gate is None or room is None:
        yield
        return
    fcntl.flock(gate, fcntl.LOCK_EX)
    try:
        fcntl.flock(room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
    finally:
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
    try:
        yield
    finally:
        fcntl.flock(room, fcntl.LOCK_UN)
        if alone:
            fcntl.flock(gate, fcntl.LOCK_UN)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Setup, call and teardown of each test inside its turn (module fixtures included)."""
    with _turn(item.get_closest_marker("alone") is not None):
        return (yield)
