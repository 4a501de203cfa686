"""DESIGN.md: the rules core imports only numpy; the PettingZoo env loads on first use."""

import subprocess
import sys

HEAVY = ("gymnasium", "pettingzoo", "torch", "ray")


def _loaded_after(stmt: str) -> list[str]:
    code = f"import sys; {stmt}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_rules_core_imports_only_numpy():
    stmt = (
        "import guandan_env, guandan_env.engine, guandan_env.movegen, guandan_env.vector, "
        "guandan_env.replay, guandan_env.scenario, guandan_env.features"
    )
    assert _loaded_after(stmt) == []


def test_env_is_loaded_lazily():
    assert "pettingzoo" in _loaded_after("import guandan_env; guandan_env.env")
