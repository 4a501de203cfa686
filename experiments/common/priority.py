"""Run work only on CPU time nothing else wants (Linux ``SCHED_IDLE``).

The evaluations beside training are Ray tasks. Ray starts its workers at niceness 15, the
runner actor included, so at the same priority an evaluation took half of the runner's core
whenever the two met: in a 27-minute default run the evaluations were running 24% of the
time and cut the samples per second by 27% meanwhile (docs/selfplay.md). Under
``SCHED_IDLE`` they run on what the learner leaves idle while it waits for samples.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


def enter_idle_priority() -> bool:
    """From now on this thread runs under ``SCHED_IDLE`` (whether it does): for a process
    that does nothing else, such as an idle env runner's actor. Threads it starts later
    inherit the policy. A no-op where the OS has no ``SCHED_IDLE`` or refuses the change."""
    if not hasattr(os, "SCHED_IDLE"):
        return False
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except OSError:
        return False
    return True


@contextmanager
def idle_priority() -> Iterator[bool]:
    """Within the block this process runs under ``SCHED_IDLE`` (yields whether it does). The
    policy before is restored afterwards where the OS allows it: an unprivileged process
    may not leave ``SCHED_IDLE`` (Linux, ``RLIMIT_NICE`` 0), so run the block in a process of
    its own (the trainer's evaluation task has ``max_calls=1``). A no-op where the OS has
    no ``SCHED_IDLE`` or refuses the change."""
    try:
        before = os.sched_getscheduler(0)
        params = os.sched_getparam(0)
    except (AttributeError, OSError):
        yield False
        return
    if not enter_idle_priority():
        yield False
        return
    try:
        yield True
    finally:
        try:
            os.sched_setscheduler(0, before, params)
        except OSError:  # leaving SCHED_IDLE may need a privilege on some kernels
            pass
