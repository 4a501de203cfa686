"""DESIGN.md: the rules core imports only numpy; the PettingZoo env loads on first use."""

import subprocess
import sys

from helpers.extras import BLOCKER

HEAVY = ("gymnasium", "pettingzoo", "torch", "ray")


def _loaded_after(stmt: str) -> list[str]:
    code = f"import sys; {stmt}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_rules_core_imports_only_numpy():
    stmt = (
        "import guandan_env, guandan_env.core.engine, guandan_env.core.movegen, "
        "guandan_env.envs.vector, guandan_env.envs.replay, guandan_env.envs.scenario, "
        "guandan_env.encoding.features, guandan_env.envs.dataset"
    )
    assert _loaded_after(stmt) == []


def test_env_is_loaded_lazily():
    assert "pettingzoo" in _loaded_after("import guandan_env; guandan_env.env")


def test_package_import_builds_no_big_table():
    """``import guandan_env`` stays cheap (issue 13: ≤ 0.1 s over numpy): the packed mask
    tables (``vector_mask``, ~50 ms to build) load with the first legal-action query, and
    the plain-straight table is built by outer products (~1 ms, was ~0.3 s)."""
    code = (
        "import sys; import guandan_env; from guandan_env.core import movegen; "
        "print('guandan_env.core.vector_mask' in sys.modules, movegen._PS_LUT.sum())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, plain = out.stdout.split()
    assert loaded == "False"
    # 16**5 suit-mask codes: every rank held (15**5) minus the 4 single-suit flushes
    assert int(plain) == 15**5 - 4
    stmt = "import guandan_env; assert guandan_env.legal_actions('H3 S3', '2')"
    assert _loaded_after(stmt) == []


def test_the_core_plays_whole_games_without_any_extra():
    """``pip install guandan-env`` (no extra) is a working env: the AEC env, the vector env
    and the rule-based agents play without importing torch, Ray or any other extra."""
    code = (
        BLOCKER
        + """
import numpy as np
import guandan_env
from agents.registry import make_agent
from guandan_env import VectorGuandanEnv
env = guandan_env.env(mode="deal", random_tribute=True)
env.reset(seed=0)
agents = [make_agent("heuristic", seed=s) for s in range(2)] + [make_agent("random", seed=2)] * 2
for name in env.agent_iter():
    obs, _, term, trunc, info = env.last()
    seat = int(name[-1])
    env.step(None if term or trunc else agents[seat].act(obs, info))
vec = VectorGuandanEnv(8)
vec.reset(seed=1)
for _ in range(50):
    vec.step(vec.sample_actions(np.random.default_rng(0)))
try:
    make_agent("checkpoint:runs/x")
except ValueError as e:
    assert "guandan-env[train]" in str(e), e
print("ok")
"""
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
