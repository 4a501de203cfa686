"""Idle runners (``runners.idle``): extra env runners that sample only on CPU time nothing
else wants (Linux ``SCHED_IDLE``), with their own table count; the learner never waits for
them, and their samples and CPU time are reported apart from the main runner's. And
``ray.worker_niceness``, the niceness the local Ray instance starts its workers with.

Runs that start Ray go through subprocesses with hard timeouts, so a Ray hang cannot stall CI.
"""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from experiments.selfplay.config import load_config, runner_config
from helpers.selfplay import run_python

IDLE_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from experiments.selfplay import SelfPlayTrainer
    from experiments.selfplay.config import load_config

    run = Path(sys.argv[1])
    over = ["runners.num=1", "runners.idle=1", "runners.tables=16", "runners.idle_tables=8",
            "runners.steps_per_call=16", "ppo.minibatch_size=128", "warm_start.decisions=0",
            "eval.every_s=0", "league.self_share=1.0", "league.snapshot_every=0",
            "ray.worker_niceness=0"]  # the default, as the test asserts below
    cfg = load_config("configs/smoke.yaml", over)
    trainer = SelfPlayTrainer(cfg, run)
    trainer.setup()
    rows = []
    deadline = time.monotonic() + 120
    # until the idle runner has delivered twice (it samples on the learner's waits only) and
    # the main runner alone at least once (at start, with the learner not yet busy, the idle
    # runner's first batches can come first)
    def enough():
        return sum(r["idle_share"] > 0 for r in rows) >= 2 and any(
            r["idle_share"] == 0 for r in rows)
    while not enough() and time.monotonic() < deadline:
        rows.append(trainer.train_once())
    # held (an overdue evaluation, eval.overdue_holds_idle): the idle runner gets no new
    # requests, so once its queued ones are in it delivers nothing more
    algo = trainer.algo
    idle_id = max(algo._queued)
    algo.hold_idle_runners = True
    while algo._queued[idle_id] and time.monotonic() < deadline:
        trainer.train_once()
    held = [trainer.train_once() for _ in range(6)]
    held_queue = algo._queued[idle_id]
    # released: it samples again
    algo.hold_idle_runners = False
    released = []
    while not any(r["idle_share"] > 0 for r in released) and time.monotonic() < deadline:
        released.append(trainer.train_once())
    group = trainer.algo.env_runner_group
    runners = group.foreach_env_runner(
        lambda r: {"index": r.worker_index, "idle": r.idle, "tables": r.env.num_tables,
                   "policy": os.sched_getscheduler(0), "nice": os.nice(0)},
        local_env_runner=False)
    trainer.algo.stop_sampling()
    trainer.close()
    print("RESULT " + json.dumps({"rows": rows, "runners": runners, "held": held,
                                  "held_queue": held_queue, "released": released,
                                  "sched_idle": getattr(os, "SCHED_IDLE", -1)}))
    """
)


@pytest.mark.alone  # the idle runner samples only on CPU time nothing else wants
@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux-only")
def test_an_idle_runner_samples_under_sched_idle_beside_the_main_runner(tmp_path):
    out = run_python(IDLE_SCRIPT, [str(tmp_path / "run")], 300)
    res = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
    runners = sorted(res["runners"], key=lambda r: r["index"])
    main, idle = runners
    # the main runner at normal priority with runners.tables, the idle one as configured
    assert (main["idle"], main["tables"]) == (False, 16)
    assert main["policy"] != res["sched_idle"]
    assert main["nice"] == 0  # ray.worker_niceness reached the workers (Ray's own: 15)
    assert (idle["idle"], idle["tables"], idle["policy"]) == (True, 8, res["sched_idle"])
    rows = res["rows"]
    # the learner got the idle runner's samples, reported apart from the main runner's
    delivered = [r for r in rows if r["idle_share"] > 0]
    assert len(delivered) >= 2, rows
    assert all(0 < r["idle_share"] <= 1 and r["idle_runner_cpu_s"] > 0 for r in delivered)
    # ... and never waited for them: most iterations go ahead on the main runner alone
    assert any(r["idle_share"] == 0 for r in rows), rows
    assert all(r["runner_sample_cpu_s"] >= 0 for r in rows)
    # every sample is dated: iterations of updates its runner's weights lacked
    assert all(r["policy_lag"] >= 0 for r in rows if r["idle_share"] < 1), rows
    assert all(r["idle_policy_lag"] >= 0 for r in delivered), delivered
    assert all(r["idle_policy_lag"] is None for r in rows if r["idle_share"] == 0)
    # held, the idle runner had nothing queued and delivered nothing; released, it did again
    assert res["held_queue"] == 0
    assert all(r["idle_held"] == 1 and r["idle_share"] == 0 for r in res["held"]), res["held"]
    assert res["released"][-1]["idle_share"] > 0, res["released"]
    assert all(r["idle_held"] == 0 for r in res["released"])


def test_idle_runners_and_worker_niceness_are_checked():
    with pytest.raises(ValueError, match="runners.idle"):
        load_config(None, ["runners.idle=-1"])
    with pytest.raises(ValueError, match="runners.idle=1 needs runners.num >= 1"):
        load_config(None, ["runners.num=0"])  # the default's idle runner needs a main one
    with pytest.raises(ValueError, match="idle_tables"):
        load_config(None, ["runners.idle_tables=0"])
    # remote runners' worker indices are 1..num+idle: the idle ones come after runners.num
    cfg = load_config(None, ["runners.num=3", "runners.idle=1", "runners.idle_tables=64"])
    rc = runner_config(cfg)
    assert (rc["idle_from"], rc["idle_tables"]) == (4, 64)
    assert runner_config(load_config(None, ["runners.idle=0"]))["idle_from"] == 0
    for bad in ("-1", "20"):
        with pytest.raises(ValueError, match="ray.worker_niceness"):
            load_config(None, [f"ray.worker_niceness={bad}"])


def test_an_evaluation_is_overdue_once_the_next_one_is_due(tmp_path):
    from experiments.selfplay import SelfPlayTrainer

    trainer = SelfPlayTrainer(load_config(None, ["eval.every_s=300"]), tmp_path / "run")
    trainer._session_start, trainer.elapsed = 0.0, 0.0
    clock = {"now": 1000.0}
    trainer.now = lambda: clock["now"]
    assert not trainer.eval_overdue()  # none running
    trainer.pending_eval = (None, 10, 5000, 900.0)  # started at 900 s
    assert not trainer.eval_overdue()  # 100 s in: on schedule
    clock["now"] = 1200.0
    assert trainer.eval_overdue()  # 300 s in: the next one is due
    trainer.cfg.eval.every_s = 0.0  # no schedule, never overdue
    assert not trainer.eval_overdue()
