"""The evaluations beside training run under ``SCHED_IDLE``, so they take only the CPU time
the runner and the learner leave idle (``experiments.common.priority``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux scheduling only")


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter (a process left under SCHED_IDLE must not be ours)."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip()


def test_idle_priority_holds_inside_the_block_and_is_undone_after():
    out = _run(
        "import os\n"
        "from experiments.common.priority import idle_priority\n"
        "before = os.sched_getscheduler(0)\n"
        "with idle_priority() as on:\n"
        "    inside = os.sched_getscheduler(0)\n"
        "after = os.sched_getscheduler(0)\n"
        "print(on, inside == os.SCHED_IDLE, before == os.SCHED_OTHER, after == before)\n"
    )
    on, inside, normal_before, restored = out.split()
    assert (on, inside, normal_before) == ("True", "True", "True")
    if os.geteuid() == 0:  # an unprivileged process may not leave SCHED_IDLE (documented)
        assert restored == "True"


@pytest.mark.parametrize("idle", [True, False])
def test_the_training_evaluation_task_plays_under_sched_idle_unless_told_not_to(idle):
    out = _run(
        f"IDLE = {idle}\n"
        "import os\n"
        "import experiments.evaluation.duplicate as dup\n"
        "import experiments.selfplay.trainer as tr\n"
        "seen = []\n"
        "def evaluate(agent, opp, **kw):\n"
        "    seen.append((opp, os.sched_getscheduler(0) == os.SCHED_IDLE))\n"
        "    return {'dup_win_rate': 0.5, 'pair_gains': [0.0]}\n"
        "dup.evaluate = evaluate\n"
        "tr._played_agent = lambda *a: object()\n"
        "out = tr._evaluate_task({}, {}, ['random', 'heuristic'], 2, 0, {'mode': 'deal'}, IDLE)\n"
        "print(seen == [('random', IDLE), ('heuristic', IDLE)], sorted(out), out['random'])\n"
        "print(os.sched_getscheduler(0) == os.SCHED_OTHER or os.geteuid() != 0)\n"
    )
    assert out.splitlines() == ["True ['heuristic', 'random'] {'dup_win_rate': 0.5}", "True"]


def test_the_config_runs_evaluations_on_idle_cpu_by_default():
    from experiments.selfplay.config import load_config

    assert load_config(None, []).eval.idle is True
    assert load_config(None, ["eval.idle=false"]).eval.idle is False
