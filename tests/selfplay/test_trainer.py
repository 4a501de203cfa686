"""The self-play trainer end to end (``experiments.selfplay.trainer``): the smoke run (train,
checkpoint, resume, schedules, play), the weight average, two learners, joining a Ray
cluster, Ctrl-C.

Runs that start Ray go through subprocesses with hard timeouts, so a Ray hang cannot stall CI.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from agents.candidate_net import CandidateNet
from agents.policy_file import save_policy
from experiments.selfplay.config import load_config
from helpers import REPO
from helpers.selfplay import SMALL_MODEL
from helpers.selfplay import run_python as _run_python

SMOKE_TIMEOUT_S = 240


def test_the_weight_average_starts_at_the_weights_moves_towards_them_and_is_played(tmp_path):
    """``ema.half_life_samples``: the average starts equal to the learner's weights, moves
    halfway towards them per half-life of samples, is saved in policy.pt beside the raw
    weights and is what a checkpoint agent plays by default (``weights="raw"``: the raw)."""
    from agents.checkpoint import load_policy_net
    from agents.policy_file import load_ema_state
    from experiments.selfplay.trainer import SelfPlayTrainer

    trainer = SelfPlayTrainer.__new__(SelfPlayTrainer)
    trainer.cfg = load_config(None, ["ema.half_life_samples=1000"])
    net = CandidateNet(SMALL_MODEL)
    raw = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    trainer.main_state = lambda: raw
    trainer.ema = None
    trainer._average_weights(0)
    assert all(np.array_equal(trainer.ema[k], raw[k]) for k in raw)
    start = {k: v.copy() for k, v in raw.items()}
    raw = {k: v + 1.0 for k, v in raw.items()}  # the learner moved
    trainer._average_weights(1000)  # one half-life
    assert all(np.allclose(trainer.ema[k], start[k] + 0.5) for k in raw)
    trainer._average_weights(1000)
    assert all(np.allclose(trainer.ema[k], start[k] + 0.75) for k in raw)
    path = save_policy(tmp_path, raw, net.model_config, ema_state=trainer.ema)
    ema = load_ema_state(path)
    assert all(np.array_equal(ema[k], trainer.ema[k]) for k in raw)
    played, _ = load_policy_net(path)
    trained, _ = load_policy_net(path, weights="raw")
    for k in raw:
        assert np.allclose(played.state_dict()[k].numpy(), trainer.ema[k])
        assert np.allclose(trained.state_dict()[k].numpy(), raw[k])


# ---------------------------------------------------------------------- the smoke run
SMOKE_SCRIPT = textwrap.dedent(
    """
    import sys
    from experiments.selfplay import main
    runs = sys.argv[1]
    rc = main(["--config", "configs/smoke.yaml", f"runs_dir={runs}", f"cache_dir={runs}/cache",
               *sys.argv[2:]])
    assert rc == 0, rc
    rc = main(["--resume", f"{runs}/smoke", "stop.iterations=4"])
    assert rc == 0, rc
    """
)


# schedules of the smoke run (about 600 samples per iteration): each must move what it
# schedules, and continue where it was after the resume (in the style of RLlib's LRChecker)
SMOKE_SCHEDULES = [
    "ppo.lr=[[0, 1.0e-3], [3000, 1.0e-4]]",
    "ppo.entropy_coeff=[[0, 0.02], [2000, 0.0]]",
    "anchor.coeff=[[0, 0.5], [1000, 0.2], [4000, 0.0]]",
]


# confident decisions kept out of the samples: the schedules still run on every choice played
SMOKE_OVERRIDES = ["runners.skip_confident=0.5"]


def _check_schedules_moved(run: Path) -> None:
    """Every progress row's optimizer lr (read off the optimizer by RLlib), entropy and
    anchor coefficients (the values the loss used) equal their schedules at that row's
    decisions with a choice (learner samples plus the confident ones kept out: ``choices``),
    and they changed from row to row."""
    from experiments.common.typed_config import Schedule

    rows = list(csv.DictReader((run / "progress.csv").open()))
    for override in SMOKE_SCHEDULES:
        key, raw = override.split("=", 1)
        column = {"anchor.coeff": "anchor_coeff"}.get(key, key.split(".")[-1])
        sched = Schedule.parse(key, yaml.safe_load(raw))
        got = [float(r[column]) for r in rows]
        want = [sched.value_at(int(r["choices"])) for r in rows]  # the schedules' clock
        assert np.allclose(got, want, rtol=1e-5, atol=1e-9), (key, got, want)
        assert len(set(np.round(got, 9))) > 1, (key, got)


def test_smoke_run_trains_checkpoints_resumes_and_plays(tmp_path):
    runs = tmp_path / "runs"
    t0 = time.perf_counter()
    out = _run_python(
        SMOKE_SCRIPT, [str(runs), *SMOKE_SCHEDULES, *SMOKE_OVERRIDES], SMOKE_TIMEOUT_S
    )
    run = runs / "smoke"
    assert "warm start done" in out and "resumed" in out, out[-3000:]
    for it in (1, 2, 3, 4):
        assert f"it    {it}" in out, out[-3000:]
    assert list(run.glob("events.out.tfevents.*")), "no TensorBoard events"
    assert (run / "bc" / "policy.pt").exists()
    placed = json.loads((run / "runners.json").read_text())  # runners.num=0: the driver samples
    assert [r["node_id"] for r in placed["runners"]] == [placed["driver"]["node_id"]]
    ckpts = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert ckpts == ["iter_000003", "iter_000004"], ckpts
    state = json.loads((run / "checkpoints" / "iter_000004" / "trainer_state.json").read_text())
    assert state["iteration"] == 4 and state["env_steps"] > 0 and state["bc"]
    # some confident decisions were kept out, and the clock counted them through the resume
    kept_out = [float(r["confident_share"]) for r in csv.DictReader((run / "progress.csv").open())]
    assert min(kept_out) >= 0 and max(kept_out) > 0
    assert state["choices"] > state["env_steps"]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["env_steps"] == state["env_steps"] and summary["train_seconds"] > 0
    assert set(summary["final_eval"]) == {"random", "heuristic"}
    assert all(e["pairs"] == 2 for e in summary["final_eval"].values())
    from experiments.selfplay.throughput import fmt_throughput, read_progress, throughput

    assert summary["throughput"] == throughput(read_progress(run))  # the whole run's rows
    assert fmt_throughput(summary["throughput"]) in out, out[-3000:]
    assert "final evaluation: 2/2 chunks" in out, out[-3000:]  # one task per opponent
    progress = (run / "progress.csv").read_text().splitlines()[1:]
    assert [int(r.split(",")[0]) for r in progress] == [1, 2, 3, 4]
    assert len((run / "eval.csv").read_text().splitlines()) >= 3  # header + final rows
    # eval.final_only (random by default): played by the two final evaluations, never beside
    opponents = [r["opponent"] for r in csv.DictReader((run / "eval.csv").open())]
    assert opponents.count("random") == 2, opponents
    _check_schedules_moved(run)
    from agents.policy_file import load_ema_state

    ema = load_ema_state(run / "checkpoints" / "iter_000004" / "policy.pt")
    assert ema is not None, "policy.pt keeps the weight average (ema.half_life_samples > 0)"
    print(f"smoke run took {time.perf_counter() - t0:.0f} s")

    # loading the trained policy as an agent imports no Ray
    code = (
        "import sys; from agents.registry import make_agent; "
        f"a = make_agent('checkpoint:{run}', seed=0); print('ray' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "False", res.stderr

    from experiments.evaluation.tournament import run_tournament

    tour = run_tournament(
        [f"checkpoint:{run}", "random"],
        pairs=1,
        out=tmp_path / "tour",
        workers=1,
        plots=False,
        progress=False,
    )
    assert tour["matchups"][0]["games"] == 2


LEARNERS_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import numpy as np
    from experiments.selfplay import SelfPlayTrainer
    from experiments.selfplay.config import load_config

    run = Path(sys.argv[1])
    over = ["learners.num=2", "runners.num=1", "runners.idle=0", "ray.num_cpus=3",
            "warm_start.decisions=0",
            "runners.tables=16", "runners.steps_per_call=16", "ppo.minibatch_size=128",
            "eval.every_s=0", "league.self_share=1.0", "league.snapshot_every=0"]
    cfg = load_config("configs/smoke.yaml", over)
    trainer = SelfPlayTrainer(cfg, run)
    trainer.setup()
    def weights(learner):
        from ray.rllib.core import DEFAULT_MODULE_ID
        m = learner.module[DEFAULT_MODULE_ID]
        return {"ddp": type(m).__name__, "w": {k: v.detach().numpy().copy()
                for k, v in m.unwrapped().state_dict().items()}}
    before = trainer._on_learners(weights)
    rows = [trainer.train_once() for _ in range(2)]
    after = trainer._on_learners(weights)
    out = {"learners": len(after), "ddp": [a["ddp"] for a in after]}
    w0, w1 = after[0]["w"], after[1]["w"]
    out["same"] = all(np.array_equal(w0[k], w1[k]) for k in w0)
    out["moved"] = any(not np.array_equal(w0[k], before[0]["w"][k]) for k in w0)
    out["start_same"] = all(np.array_equal(before[0]["w"][k], before[1]["w"][k]) for k in w0)
    out["finite"] = all(np.isfinite(r["policy_loss"]) for r in rows)
    out["steps"] = trainer.env_steps
    trainer.save_checkpoint()
    saved = trainer.main_state()
    trainer.close()
    import ray; ray.shutdown()
    # resume: both learners get the checkpoint's weights back
    cfg = load_config(run / "config.yaml") if (run / "config.yaml").exists() else cfg
    again = SelfPlayTrainer(cfg, run, resume=True)
    again.setup()
    back = again._on_learners(weights)
    out["resumed"] = all(np.array_equal(b["w"][k], saved[k.removeprefix("net.")])
                         for b in back for k in b["w"])
    again.train_once()
    out["resumed_steps"] = again.env_steps
    again.close()
    print("RESULT " + json.dumps(out))
    """
)


def test_two_learners_train_in_step_and_resume(tmp_path):
    """learners.num=2: two Learner actors (DDP) get one shard of each minibatch, stay equal,
    move, checkpoint and resume."""
    out = _run_python(LEARNERS_SCRIPT, [str(tmp_path / "run")], 300)
    res = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
    assert res["learners"] == 2 and res["start_same"], res
    assert all("DDP" in name for name in res["ddp"]), res
    assert res["same"] and res["moved"] and res["finite"], res
    assert res["steps"] > 0 and res["resumed"] and res["resumed_steps"] > res["steps"], res


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_run_joins_an_existing_ray_cluster_with_two_runners(tmp_path):
    """--address: a separately started Ray cluster (``ray start --head``) takes the run's
    runners; the run trains, checkpoints and leaves the cluster running."""
    port = _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    log = tmp_path / "head.log"
    ray_tmp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # Ray's socket paths are <= 107 bytes
    head = subprocess.Popen(
        [
            "ray",
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=3",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={ray_tmp}",
        ],
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        script = textwrap.dedent(
            """
            import sys
            from experiments.selfplay import main
            runs, address = sys.argv[1], sys.argv[2]
            over = [f"runs_dir={runs}", f"cache_dir={runs}/cache", "runners.num=2",
                    "runners.idle=0",
                    "runners.tables=16", "stop.iterations=2", "warm_start.decisions=0",
                    "eval.every_s=0", "eval.final_pairs=0"]
            assert main(["--config", "configs/smoke.yaml", "--address", address, *over]) == 0
            import ray
            print("CLUSTER_CPUS", ray.cluster_resources().get("CPU") if ray.is_initialized()
                  else None)
            """
        )
        deadline = time.monotonic() + 90
        while "Ray runtime started" not in log.read_text():
            if time.monotonic() > deadline or head.poll() is not None:
                pytest.fail(f"ray head did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        out = _run_python(script, [str(tmp_path / "runs"), f"127.0.0.1:{port}"], 240)
        run = tmp_path / "runs" / "smoke"
        assert "2 runner(s)" in out, out[-3000:]
        state = json.loads((run / "checkpoints" / "iter_000002" / "trainer_state.json").read_text())
        assert state["iteration"] == 2 and state["env_steps"] > 0
        assert head.poll() is None, "the run stopped the cluster it joined"
    finally:  # the whole cluster is the head's process group (a graceful stop drains 30 s)
        try:
            os.killpg(head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        head.wait(timeout=30)
        shutil.rmtree(ray_tmp, ignore_errors=True)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell leaves a job started with &


@pytest.mark.parametrize(
    "stop",
    [
        "ctrl-c",  # what a terminal's Ctrl-C sends: SIGINT to the whole group
        "kill",  # SIGTERM to the driver alone: `kill PID`, a job scheduler, `timeout`
        "kill -INT in the background",  # SIGINT to a driver whose shell ignored it
    ],
)
def test_ctrl_c_or_kill_saves_a_checkpoint_and_exits_cleanly(tmp_path, stop):
    runs = tmp_path / "runs"
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    cmd = [
        sys.executable,
        "-m",
        "experiments.selfplay",
        "--config",
        "configs/smoke.yaml",
        f"runs_dir={runs}",
        f"cache_dir={runs}/cache",
        "stop.iterations=100000",
        "checkpoint.every=0",
        "eval.every_s=0",
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=_ignore_sigint if stop == "kill -INT in the background" else None,
    )
    lines = []
    deadline = time.time() + 150
    while time.time() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if line.startswith("it    2"):
            break
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("no second iteration:\n" + "".join(lines[-50:]))
    if stop == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM if stop == "kill" else signal.SIGINT)
    try:
        rest, _ = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"{stop} did not stop the run")
    out = "".join(lines) + rest
    assert proc.returncode == 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    assert "--resume" in out
    summary = json.loads((runs / "smoke" / "summary.json").read_text())
    assert summary["stopped_by"] == "interrupted"
    assert (Path(summary["checkpoint"]) / "trainer_state.json").exists()
