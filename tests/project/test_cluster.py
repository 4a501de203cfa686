"""A real two-node Ray cluster on this machine (issue 28, item 3): ``ray start --head`` and
``ray start --address``, each node with its own CPUs and a custom resource naming it. A
self-play run joins it with ``--address`` and two runners, which land on different nodes
(``runners.json``); a tournament joins it and plays on both nodes (``timing.json``), with
the same records as a local run of the same seeds. The cluster is killed (both process
groups) whatever happens."""

from __future__ import annotations

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

import pytest

from helpers import REPO

NODES = {"head": "node_a", "worker": "node_b"}  # role -> custom resource (1 unit each)


_PORTS_GIVEN: set[int] = set()


def _free_port() -> int:
    """A port free now and not handed out before by this module.

    The OS may give a just-closed port out again, and two Ray components on one port stop
    `ray start` ("metrics_export is trying to use a port number ... used by other components").
    """
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _PORTS_GIVEN:
            _PORTS_GIVEN.add(port)
            return port


def _env() -> dict[str, str]:
    # Ray's workers inherit the raylet's environment: this checkout's code on PYTHONPATH
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
    }


def _run_python(script: str, args: list[str], timeout: int) -> str:
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        cwd=REPO,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a hang is killed with everything it started
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"exceeded {timeout} s:\n{out[-3000:]}")
    assert proc.returncode == 0, out[-5000:]
    return out


def _start_node(role: str, ray_tmp: str, log: Path, head_address: str | None, port: int):
    args = [
        "ray",
        "start",
        "--block",
        "--num-cpus=1",
        f"--resources={json.dumps({NODES[role]: 1})}",
        "--disable-usage-stats",
        f"--dashboard-agent-listen-port={_free_port()}",
        f"--metrics-export-port={_free_port()}",
        f"--runtime-env-agent-port={_free_port()}",
        "--node-ip-address=127.0.0.1",
    ]
    if head_address is None:
        args += [
            "--head",
            f"--port={port}",
            f"--ray-client-server-port={_free_port()}",
            "--include-dashboard=false",
            f"--temp-dir={ray_tmp}",
        ]
    else:
        args += [f"--address={head_address}"]
    return subprocess.Popen(
        args,
        env=_env(),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: killed whole at the end
    )


# waits for both nodes, then reports each node's id and resources, and where a task on each
# imports guandan_env from (the workers must run this checkout's code)
NODES_SCRIPT = """
import json, sys, time
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
ray.init(address=sys.argv[1], log_to_driver=False)
deadline = time.monotonic() + 90
while True:
    alive = [n for n in ray.nodes() if n["Alive"]]
    if len(alive) >= 2 or time.monotonic() > deadline:
        break
    time.sleep(0.5)

@ray.remote(num_cpus=0)
def where():
    import guandan_env
    return ray.get_runtime_context().get_node_id(), guandan_env.__file__

out = {}
for n in alive:
    strategy = NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
    node, path = ray.get(where.options(scheduling_strategy=strategy).remote())
    out[n["NodeID"]] = {"resources": n["Resources"], "ran_on": node, "guandan_env": path}
print("NODES " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``(address, {custom resource: node id})`` of a running two-node cluster."""
    logs = tmp_path_factory.mktemp("cluster")
    ray_tmp = tempfile.mkdtemp(prefix="rc", dir="/tmp")  # Ray's socket paths are <= 107 bytes
    port = _free_port()
    address = f"127.0.0.1:{port}"
    procs = []
    try:
        procs.append(_start_node("head", ray_tmp, logs / "head.log", None, port))
        deadline = time.monotonic() + 90
        while "Ray runtime started" not in (logs / "head.log").read_text():
            if time.monotonic() > deadline or procs[0].poll() is not None:
                pytest.fail(f"ray head did not start:\n{(logs / 'head.log').read_text()[-3000:]}")
            time.sleep(0.5)
        procs.append(_start_node("worker", ray_tmp, logs / "worker.log", address, port))
        out = _run_python(NODES_SCRIPT, [address], 150)
        nodes = json.loads(out.split("NODES ", 1)[1].splitlines()[0])
        assert len(nodes) == 2, (out[-3000:], (logs / "worker.log").read_text()[-3000:])
        by_resource = {}
        for node_id, info in nodes.items():
            assert info["ran_on"] == node_id  # the task ran where it was sent
            assert info["guandan_env"].startswith(str(REPO)), info  # this checkout's code
            assert info["resources"]["CPU"] == 1.0
            (name,) = [r for r in NODES.values() if r in info["resources"]]
            by_resource[name] = node_id
        assert set(by_resource) == set(NODES.values())
        yield address, by_resource
    finally:
        for p in procs:  # the whole cluster is these process groups (a graceful stop drains)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in procs:
            p.wait(timeout=30)
        shutil.rmtree(ray_tmp, ignore_errors=True)


SELFPLAY_SCRIPT = """
import sys
from experiments.selfplay import main
runs, address = sys.argv[1], sys.argv[2]
over = [f"runs_dir={runs}", f"cache_dir={runs}/cache", "runners.num=2", "runners.idle=0",
        "runners.tables=16", "stop.iterations=2", "warm_start.decisions=0",
        "eval.every_s=0", "eval.final_pairs=0"]
assert main(["--config", "configs/smoke.yaml", "--address", address, *over]) == 0
"""


def test_selfplay_runners_run_on_two_nodes(cluster, tmp_path):
    """``--address`` with ``runners.num=2`` on two 1-CPU nodes: one runner per node, each
    runner's node recorded in ``runners.json``; the run trains and checkpoints."""
    address, node_of = cluster
    out = _run_python(SELFPLAY_SCRIPT, [str(tmp_path / "runs"), address], 240)
    run = tmp_path / "runs" / "smoke"
    placed = json.loads((run / "runners.json").read_text())
    assert placed["address"] == address
    assert [r["worker_index"] for r in placed["runners"]] == [1, 2]
    runner_nodes = {r["node_id"] for r in placed["runners"]}
    assert runner_nodes == set(node_of.values()), placed  # one runner on each node
    assert placed["nodes"] == sorted(runner_nodes)
    assert placed["driver"]["node_id"] in runner_nodes  # the driver joined the head node
    assert "runners on 2 node(s)" in out, out[-3000:]
    state = json.loads((run / "checkpoints" / "iter_000002" / "trainer_state.json").read_text())
    assert state["iteration"] == 2 and state["env_steps"] > 0


TOURNAMENT_SCRIPT = """
import sys
from experiments.evaluation.tournament.__main__ import main
out, address = sys.argv[1], sys.argv[2]
main(["random", "heuristic", "--pairs", "4", "--seed", "7", "--random-levels",
      "--random-tribute", "--address", address, "--out", out, "--no-plots", "--no-progress"])
"""


def _records(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["id"]: {k: v for k, v in r.items() if k != "seconds"} for r in rows}


def test_tournament_games_run_on_both_nodes_with_local_results(cluster, tmp_path):
    """A tournament with ``--address``: its chunks run on both nodes (``timing.json``) and
    its records equal a local, in-process run's for the same seeds."""
    from experiments.evaluation.tournament import run_tournament

    address, node_of = cluster
    _run_python(TOURNAMENT_SCRIPT, [str(tmp_path / "cluster"), address], 180)
    timing = json.loads((tmp_path / "cluster" / "timing.json").read_text())
    assert timing["address"] == address and timing["new_games"] == 8
    assert set(timing["nodes"]) == set(node_of.values()), timing  # both nodes played
    assert sum(timing["nodes"].values()) == 8 and len(timing["chunks"]) == 4
    run_tournament(
        ["random", "heuristic"],
        pairs=4,
        seed=7,
        out=tmp_path / "local",
        workers=1,
        config={"random_levels": True, "random_tribute": True},
        plots=False,
        progress=False,
    )
    cluster_rows = _records(tmp_path / "cluster" / "results.jsonl")
    local_rows = _records(tmp_path / "local" / "results.jsonl")
    assert len(local_rows) == 8 and cluster_rows == local_rows
