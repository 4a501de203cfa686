"""An in-run evaluation still running when training stops is cancelled before the final
evaluation (``SelfPlayTrainer.cancel_eval``)."""

from __future__ import annotations

import json
import textwrap

from helpers.selfplay import run_python

CANCEL_SCRIPT = textwrap.dedent(
    """
    import json, time, types
    import ray
    from experiments.selfplay.trainer import SelfPlayTrainer

    ray.init(num_cpus=1, include_dashboard=False)

    @ray.remote(num_cpus=0, max_calls=1)
    def long_eval():
        time.sleep(120)
        return {}

    ref = long_eval.remote()
    time.sleep(2)  # running
    trainer = types.SimpleNamespace(pending_eval=(ref, 1, 2, 3.0))
    t0 = time.perf_counter()
    SelfPlayTrainer.cancel_eval(trainer)
    try:
        ray.get(ref, timeout=60)
        error = None
    except Exception as e:
        error = type(e).__name__
    print("RESULT " + json.dumps({"pending": trainer.pending_eval is not None, "error": error,
                                  "seconds": time.perf_counter() - t0}))
    """
)


def test_an_evaluation_still_running_when_training_stops_is_cancelled():
    """The final evaluation supersedes an in-run one still running: its task is cancelled
    (with slower evaluations on idle CPU, one is often pending when the budget runs out)."""
    out = run_python(CANCEL_SCRIPT, [], 120)
    res = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
    assert not res["pending"] and res["seconds"] < 30, res
    assert res["error"] == "TaskCancelledError", res
