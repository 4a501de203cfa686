"""A competition-protocol client as a tournament entrant (``remote:PORT``): the tournament
serves the four seat paths and our own client (``python -m agents.remote``) plays, over real
sockets."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from experiments.evaluation.tournament import run_tournament
from helpers import REPO


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _stop(*procs: subprocess.Popen) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.communicate()


def test_a_protocol_client_enters_a_tournament(tmp_path):
    port = _free_port()
    out = tmp_path / "t"
    cmd = ["experiments.evaluation.tournament", f"remote:{port}", "random", "--pairs", "2"]
    tour = _start([*cmd, "--workers", "1", "--out", str(out), "--no-plots", "--no-progress"])
    clients = []
    try:
        time.sleep(1.0)
        url = f"ws://127.0.0.1:{port}/game/client"
        for k in range(4):
            for _ in range(100):  # the server starts after the tournament's imports
                c = _start(["agents.remote", "--url", f"{url}{k}", "--agent", "heuristic"])
                try:
                    c.wait(timeout=0.3)  # exited at once: not listening yet
                    c.communicate()
                    time.sleep(0.2)
                except subprocess.TimeoutExpired:
                    clients.append(c)
                    break
        assert len(clients) == 4, "the clients could not connect"
        text, _ = tour.communicate(timeout=240)
        assert tour.returncode == 0, text[-3000:]
    finally:
        _stop(tour, *clients)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and {(r["pair"], r["swap"]) for r in rows} == {
        (p, s) for p in range(2) for s in range(2)
    }
    assert "fault" not in text and "disconnected" not in text, text[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary, "no summary"
    # the clients play heuristic: the same games as a heuristic entrant in this process
    local = tmp_path / "local"
    run_tournament(["heuristic", "random"], pairs=2, workers=1, out=local, plots=False)
    local_rows = [json.loads(x) for x in (local / "results.jsonl").read_text().splitlines()]
    by_id = {(r["pair"], r["swap"]): r["record"] for r in local_rows}
    assert all(r["record"] == by_id[(r["pair"], r["swap"])] for r in rows)


def test_a_remote_entrant_cannot_go_to_workers_or_a_cluster(tmp_path):
    with pytest.raises(ValueError, match="must play in this process"):
        run_tournament([f"remote:{_free_port()}", "random"], pairs=1, workers=2, out=tmp_path)
