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
        "import guandan_env, guandan_env.core.engine, guandan_env.core.movegen, "
        "guandan_env.envs.vector, guandan_env.envs.replay, guandan_env.envs.scenario, "
        "guandan_env.encoding.features"
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
